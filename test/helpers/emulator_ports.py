"""The UR controller's ports that `spatial-manip ur-emulator` serves on loopback (RTDE, script,
dashboard, Robotiq socket): tests that start an emulator wait until all of them are free, and
talk to its dashboard (its test hooks: `emulator drop 0.5`, `emulator state`, ...)."""
import socket

from spatial_manip.devtools.ur_emulator import dashboard_line as dashboard  # noqa: F401  (the tests' name)

PORTS = (30004, 30003, 29999, 63352)


def ports_free() -> bool:
    for port in PORTS:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return False
    return True
