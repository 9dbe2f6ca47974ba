"""The Robotiq 2F URCap socket (port 63352) on loopback: `SET ACT 1`, `SET GTO 1`, `SET POS n`,
`SET SPE n`, `SET FOR n` (answered `ack`), `GET POS|OBJ|STA|ACT|GTO|FLT|PRE` (answered `POS 123`).

The fingers move toward the requested position at a speed set by SPE; an object of
`object_width_m` (0: none) stops them while closing (OBJ 2). Emulator-only command:
`EMU OBJW 0.04` sets the object width in metres.
"""
from __future__ import annotations

import socketserver
import threading
import time

FULL_STROKE_S = 0.7  # open -> closed at SPE 255 (the 2F-85 takes about 0.7 s)


class RobotiqEmulator:
    def __init__(self, *, max_width_m: float = 0.085, object_width_m: float = 0.04):
        self.max_width_m, self.object_width_m = max_width_m, object_width_m
        self.reg = {"ACT": 0, "GTO": 0, "POS": 0, "SPE": 255, "FOR": 128, "PRE": 0, "STA": 0, "OBJ": 3, "FLT": 0}
        self._pos = 0.0
        self._t = time.monotonic()
        self._lock = threading.Lock()
        self._server = None

    def _update(self):
        now = time.monotonic()
        dt, self._t = now - self._t, now
        r = self.reg
        if not (r["ACT"] and r["GTO"]):
            return
        target = float(r["PRE"])
        # the object blocks the fingers at its width while closing
        obj_pos = 255.0 * (1 - self.object_width_m / self.max_width_m) if self.object_width_m > 0 else None
        step = 255.0 / FULL_STROKE_S * max(r["SPE"], 10) / 255.0 * dt
        if self._pos < target:
            limit = min(target, obj_pos) if obj_pos is not None and self._pos <= obj_pos else target
            self._pos = min(self._pos + step, limit)
            blocked = obj_pos is not None and limit == obj_pos and obj_pos < target
        else:
            self._pos = max(self._pos - step, target)
            blocked = False
        if blocked and self._pos >= obj_pos:
            r["OBJ"] = 2
        elif abs(self._pos - target) < 1e-6:
            r["OBJ"] = 3
        else:
            r["OBJ"] = 0
        r["POS"] = int(round(self._pos))

    def handle(self, line: str) -> str:
        parts = line.strip().split()
        with self._lock:
            self._update()
            if len(parts) == 3 and parts[0] == "EMU" and parts[1] == "OBJW":
                self.object_width_m = float(parts[2])
                return "ack"
            if len(parts) >= 3 and parts[0] == "SET":
                for name, val in zip(parts[1::2], parts[2::2]):
                    v = max(0, min(255, int(val)))
                    self.reg[name] = v
                    if name == "POS":
                        self.reg["PRE"] = v
                    if name == "ACT":
                        self.reg["STA"] = 3 if v else 0
                return "ack"
            if len(parts) == 2 and parts[0] == "GET" and parts[1] in self.reg:
                return f"{parts[1]} {self.reg[parts[1]]}"
        return "?"

    def start(self, host: str = "127.0.0.1", port: int = 63352):
        emu = self

        class H(socketserver.StreamRequestHandler):
            def handle(self):
                for raw in self.rfile:
                    try:
                        self.wfile.write((emu.handle(raw.decode(errors="replace")) + "\n").encode())
                    except OSError:
                        return

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer((host, port), H)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True, name="robotiq-emu").start()

    def shutdown(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
