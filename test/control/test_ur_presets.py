"""UR5 (CB3) and UR5e presets of arm.yaml, and the controller generation check arm_node runs
before connecting (issue 39): the RTDE handshake of the project's controller emulator, served
on free ports in this process, reports a version; a preset that contradicts it is refused."""
import socket

import pytest

from spatial_manip.control.config import load_arm_config, load_kinematics
from spatial_manip.control.ur_version import check_model, controller_version
from spatial_manip.errors import ConfigError


def test_presets_set_the_model_and_the_rtde_rate():
    ur5 = load_arm_config(None, {"arm.model": "ur5"})
    ur5e = load_arm_config(None, {"arm.model": "ur5e"})
    assert (ur5["kinematics"]["model"], ur5["arm"]["ur_rtde"]["frequency_hz"]) == ("ur5", 125.0)
    assert (ur5e["kinematics"]["model"], ur5e["arm"]["ur_rtde"]["frequency_hz"]) == ("ur5e", 500.0)
    assert load_kinematics(model="ur5").d1 == 0.089159 and load_kinematics(model="ur5e").d1 == 0.1625
    # the simulator is a UR5e whatever preset is chosen: its overrides come after the preset
    assert load_arm_config(None, {"arm.model": "ur5", "arm.backend": "sim"})["kinematics"]["model"] == "ur5e"
    with pytest.raises(ConfigError, match="arm.model: 'ur10' is not one of the presets ur5, ur5e"):
        load_arm_config(None, {"arm.model": "ur10"})


def _free_ports(n: int) -> tuple[int, ...]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = tuple(s.getsockname()[1] for s in socks)
    for s in socks:
        s.close()
    return ports


@pytest.mark.parametrize("version,model", [((3, 15, 8, 106339), "ur5"), ((5, 11, 1, 108318), "ur5e")])
def test_the_controller_version_names_the_model_and_a_contradiction_is_refused(version, model):
    from spatial_manip.control.kinematics import URKinematics
    from spatial_manip.devtools.emulated_arm import EmulatedArm
    from spatial_manip.devtools.ur_emulator import URControllerEmulator

    kin = URKinematics.from_config(load_arm_config(None, {"arm.model": model})["kinematics"])
    emu = URControllerEmulator(EmulatedArm(kin, [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]), version=version,
                               log=lambda *a: None)
    ports = _free_ports(3)
    emu.start(ports)
    try:
        got = controller_version("127.0.0.1", port=ports[0])
    finally:
        emu.shutdown()
    assert got == version
    check_model(model, "127.0.0.1", got)                   # agrees: no error
    other = {"ur5": "ur5e", "ur5e": "ur5"}[model]
    with pytest.raises(ConfigError, match=f"arm model '{other}' configured.*ur_type:={model}"):
        check_model(other, "127.0.0.1", got)


def test_an_unreachable_controller_is_an_os_error_left_to_the_arm_connect():
    with pytest.raises(OSError):
        controller_version("127.0.0.1", timeout_s=0.5, port=_free_ports(1)[0])
