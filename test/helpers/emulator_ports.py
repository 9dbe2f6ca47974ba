"""The UR controller's ports that `spatial-manip ur-emulator` serves on loopback (RTDE, script,
dashboard, Robotiq socket): tests that start an emulator wait until all of them are free, and
talk to its dashboard (its test hooks: `emulator drop 0.5`, `emulator state`, ...)."""
import json
import socket
import subprocess
import sys

from spatial_manip.devtools.ur_emulator import dashboard_line as dashboard  # noqa: F401  (the tests' name)

PORTS = (30004, 30003, 29999, 63352)


def emu_state() -> dict:
    """The emulator's `emulator state` line: q, tcp pose, moving, protective_stop, script_running."""
    return json.loads(dashboard("emulator state"))


def ports_free() -> bool:
    for port in PORTS:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return False
    return True


def start_emulator(*flags: str) -> subprocess.Popen:
    """`spatial-manip ur-emulator --quiet FLAGS` in a process of its own, returned once it is ready
    (its output stays on a pipe: read it to show why it ended)."""
    emu = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "ur-emulator", "--quiet", *flags],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert emu.stdout.readline().strip() == "[ur-emulator] ready"
    return emu
