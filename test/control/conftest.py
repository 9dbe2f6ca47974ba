"""The bare ur_rtde backend against `spatial-manip ur-emulator` in its own process, for the
modules of this folder that test the backend without a node (one module at a time: the ports
are fixed)."""
import subprocess
import sys

import pytest

from emulator_ports import ports_free


@pytest.fixture(scope="module")
def ur_arm():
    pytest.importorskip("rtde_control")
    if not ports_free():
        pytest.skip("a UR controller or emulator already serves 30004/30003/29999/63352 here")
    from spatial_manip.control.ur_rtde_arm import URRtdeArm, URRtdeConfig

    emu = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "ur-emulator", "--quiet", "--no-gripper"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert emu.stdout.readline().strip() == "[ur-emulator] ready"
        # a re-uploaded control script starts within a second here when the machine is quiet, and
        # took over 5 s (the default limit) with a benchmark beside the suite: the tests' margin
        arm = URRtdeArm(URRtdeConfig(host="127.0.0.1", path_upload_timeout_s=15.0))
        arm.connect()
        try:
            yield arm
        finally:
            arm.close()
    finally:
        emu.terminate()
        emu.wait(10)
