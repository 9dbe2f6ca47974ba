"""The UR controller's ports that `spatial-manip ur-emulator` serves on loopback (RTDE, script,
dashboard, Robotiq socket): tests that start an emulator wait until all of them are free, and
talk to its dashboard (its test hooks: `emulator drop 0.5`, `emulator state`, ...)."""
import socket

PORTS = (30004, 30003, 29999, 63352)


def ports_free() -> bool:
    for port in PORTS:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return False
    return True


def dashboard(cmd: str) -> str:
    """One line to the emulator's dashboard port; its one-line reply."""
    with socket.create_connection(("127.0.0.1", 29999), timeout=3) as s:
        f = s.makefile("rwb", buffering=0)
        f.readline()  # the greeting
        f.write((cmd + "\n").encode())
        return f.readline().decode().strip()
