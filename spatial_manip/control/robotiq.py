"""Robotiq 2F gripper through the Robotiq URCap socket (port 63352, one ASCII line each way).

Commands: `SET ACT 1` activates, `SET GTO 1` lets it move, `SET POS|SPE|FOR n` (0-255) set the
target, speed and force; `GET POS|OBJ|STA` read back (`POS 123`). OBJ: 0 moving, 1 stopped on
an object while opening, 2 stopped on an object while closing, 3 at the requested position.
Position 0 is fully open, 255 fully closed; width maps linearly onto `max_width_m`.
"""
from __future__ import annotations

import dataclasses
import socket
import threading
import time

from spatial_manip.errors import GraspFailedError, InvalidGoalError, MotionFailedError


@dataclasses.dataclass(frozen=True, kw_only=True)
class RobotiqConfig:
    host: str = "127.0.0.1"
    port: int = 63352
    max_width_m: float = 0.085
    timeout_s: float = 5.0
    connect_retries: int = 3
    retry_delay_s: float = 0.5

    def __post_init__(self):
        if not (0.0 < self.max_width_m <= 0.3) or self.timeout_s <= 0 or self.connect_retries < 1:
            raise InvalidGoalError(f"invalid Robotiq settings: {self}; max_width_m in (0, 0.3], timeout_s > 0, "
                                   "connect_retries >= 1")


class RobotiqGripper:
    def __init__(self, config: RobotiqConfig):
        self.config = config
        self._sock: socket.socket | None = None
        self._file = None
        self._lock = threading.Lock()

    # ---- lifecycle -----------------------------------------------------------------------
    def connect(self) -> None:
        last = None
        for _ in range(self.config.connect_retries):
            try:
                self._sock = socket.create_connection((self.config.host, self.config.port), timeout=self.config.timeout_s)
                self._file = self._sock.makefile("rwb", buffering=0)
                return
            except OSError as e:
                last = e
                time.sleep(self.config.retry_delay_s)
        raise MotionFailedError(f"cannot reach the Robotiq URCap socket at {self.config.host}:{self.config.port} "
                                f"after {self.config.connect_retries} attempts ({last}); is the URCap installed and "
                                "the gripper powered?") from last

    def disconnect(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = self._file = None

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc):
        self.disconnect()

    # ---- protocol ------------------------------------------------------------------------
    def _ask(self, line: str) -> str:
        if self._file is None:
            raise MotionFailedError("the gripper is not connected; call connect() first")
        with self._lock:
            try:
                self._file.write((line + "\n").encode())
                reply = self._file.readline().decode().strip()
            except OSError as e:
                raise MotionFailedError(f"gripper socket error on {line!r}: {e}") from e
        if not reply:
            raise MotionFailedError(f"the gripper closed the connection after {line!r}")
        return reply

    def _set(self, **values: int) -> None:
        for name, v in values.items():
            reply = self._ask(f"SET {name} {int(v)}")
            if reply != "ack":
                raise MotionFailedError(f"gripper refused SET {name} {v}: {reply!r}")

    def _get(self, name: str) -> int:
        reply = self._ask(f"GET {name}")
        parts = reply.split()
        if len(parts) != 2 or parts[0] != name:
            raise MotionFailedError(f"unexpected gripper reply to GET {name}: {reply!r}")
        return int(parts[1])

    # ---- Gripper protocol ----------------------------------------------------------------
    def activate(self) -> None:
        if self._get("STA") == 3:
            return
        self._set(ACT=1)
        self._wait(lambda: self._get("STA") == 3, "activation")
        self._set(GTO=1)

    def move(self, width_m: float, speed: float, force: float) -> bool:
        self.start_move(width_m, speed, force)
        return self.wait_moved()

    def start_move(self, width_m: float | None, speed: float, force: float) -> None:
        """Send the fingers towards width_m (None: fully open) and return once the gripper has
        taken the request, not when they arrive (`wait_moved`)."""
        width_m = self.config.max_width_m if width_m is None else width_m
        if not (0.0 <= width_m <= self.config.max_width_m + 1e-9):
            raise InvalidGoalError(f"gripper width must be within 0..{self.config.max_width_m} m, got {width_m}")
        for name, v in (("speed", speed), ("force", force)):
            if not (0.0 <= v <= 1.0):
                raise InvalidGoalError(f"gripper {name} must be within 0..1, got {v}")
        pos = round((1.0 - width_m / self.config.max_width_m) * 255)
        self._set(SPE=round(speed * 255), FOR=round(force * 255), POS=pos, GTO=1)
        self._wait(lambda: self._get("PRE") == pos, "position request")  # the request was taken

    def wait_moved(self) -> bool:
        obj = self._wait(lambda: self._get("OBJ") or None, "motion")  # 0 = still moving
        return obj in (1, 2)

    def open(self) -> None:
        self.move(self.config.max_width_m, 1.0, 0.5)

    def close(self) -> bool:
        return self.move(0.0, 1.0, 0.5)

    def width_m(self) -> float:
        return (1.0 - self._get("POS") / 255.0) * self.config.max_width_m

    def holding(self) -> bool:
        """OBJ 2: the fingers stopped on an object while closing; once it slips out they close
        on to the requested position (OBJ 3)."""
        return self._get("OBJ") == 2

    def _wait(self, fn, what: str):
        deadline = time.monotonic() + self.config.timeout_s
        while time.monotonic() < deadline:
            value = fn()
            if value:
                return value
            time.sleep(0.01)
        raise GraspFailedError(f"gripper {what} did not finish within {self.config.timeout_s} s; check for faults (GET FLT)")


def make_gripper(**cfg) -> RobotiqGripper:
    fields = {f.name for f in dataclasses.fields(RobotiqConfig)}
    return RobotiqGripper(RobotiqConfig(**{k: v for k, v in cfg.items() if k in fields}))
