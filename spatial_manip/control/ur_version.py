"""Which UR controller generation answers at an address, from the RTDE handshake (port 30004:
'V' protocol version 2, then 'v' get controller version: major.minor.bugfix.build). A major
version above 3 is an e-series controller (UR5e); 3 and below a CB3 (UR5). ur_rtde reads the
same reply but its Python bindings do not expose it."""
from __future__ import annotations

import socket
import struct

from spatial_manip.errors import ConfigError

RTDE_PORT = 30004
MODEL_OF_GENERATION = {"cb3": "ur5", "e-series": "ur5e"}


def controller_version(host: str, timeout_s: float = 2.0, port: int = RTDE_PORT) -> tuple[int, int, int, int]:
    """(major, minor, bugfix, build) the controller at `host` reports; OSError when it cannot be
    reached or answers something else."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.settimeout(timeout_s)
        send_message(sock, b"V", struct.pack(">H", 2))
        send_message(sock, b"v")
        body = _reply(sock, b"v")
    if len(body) < 16:
        raise OSError(f"RTDE controller version reply of {len(body)} bytes from {host}")
    return struct.unpack(">IIII", body[:16])


def send_message(sock: socket.socket, kind: bytes, payload: bytes = b"") -> None:
    """One RTDE message: its size (header included), its kind's letter, its payload."""
    sock.sendall(struct.pack(">HB", 3 + len(payload), kind[0]) + payload)


def _reply(sock: socket.socket, kind: bytes) -> bytes:
    """The body of the next message of `kind` (the protocol-version answer comes first)."""
    for _ in range(4):
        size, got = struct.unpack(">HB", recv_exact(sock, 3))
        body = recv_exact(sock, size - 3)
        if got == kind[0]:
            return body
    raise OSError(f"no RTDE {kind!r} reply")


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """`n` bytes from `sock` (TCP hands a message over in pieces); ConnectionError when the other
    end closes first."""
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the other end closed the RTDE connection")
        buf += chunk
    return buf


def model_for_version(version: tuple[int, ...]) -> str:
    return MODEL_OF_GENERATION["e-series" if version[0] > 3 else "cb3"]


def check_model(model: str, host: str, version: tuple[int, ...]) -> None:
    """A ConfigError when the configured model is not the one the controller's generation runs."""
    expected = model_for_version(version)
    if model != expected:
        v = ".".join(str(x) for x in version)
        kind = "an e-series" if version[0] > 3 else "a CB3"
        raise ConfigError(f"arm model {model!r} configured, but the controller at {host} reports version {v} "
                          f"({kind} controller: {expected}); launch with ur_type:={expected} (arm_node -p "
                          f"ur_type:={expected}) or set arm.model in arm.yaml")
