"""The bare ur_rtde backend against `spatial-manip ur-emulator` in its own process, for the
modules of this folder that test the backend without a node (one module at a time: the ports
are fixed)."""

import pytest

from emulator_ports import ports_free, start_emulator
from machine_load import scaled_by_load


@pytest.fixture(scope="module")
def ur_arm():
    pytest.importorskip("rtde_control")
    if not ports_free():
        pytest.skip("a UR controller or emulator already serves 30004/30003/29999/63352 here")
    from spatial_manip.control.ur_rtde_arm import URRtdeArm, URRtdeConfig

    emu = start_emulator("--no-gripper")
    try:
        # a re-uploaded control script starts within a second here when the machine is quiet, took
        # over 5 s (the default limit) with a benchmark beside the suite, and over 15 s at load 30:
        # the tests' margin, stretched with the load (the tests that time the limit set their own)
        arm = URRtdeArm(URRtdeConfig(host="127.0.0.1", path_upload_timeout_s=scaled_by_load(15.0),
                                     call_timeout_s=scaled_by_load(5.0)))
        arm.connect()
        try:
            yield arm
        finally:
            arm.close()
    finally:
        emu.terminate()
        emu.wait(10)
