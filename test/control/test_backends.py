"""Backend contracts that need no robot: the Robotiq socket client against the Robotiq emulator
(pure sockets, same process is fine), and the MuJoCo sim arm through the Arm/Gripper protocols."""
import threading
import time

import numpy as np
import pytest

from spatial_manip.control.base import Arm, Gripper
from spatial_manip.control.robotiq import RobotiqConfig, RobotiqGripper
from spatial_manip.devtools.robotiq_emulator import RobotiqEmulator
from spatial_manip.errors import CanceledError, InvalidGoalError


@pytest.fixture
def robotiq():
    emu = RobotiqEmulator(object_width_m=0.04)
    with __import__("socket").socket() as s:  # a free port, not the fixed 63352
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emu.start("127.0.0.1", port)
    g = RobotiqGripper(RobotiqConfig(port=port, timeout_s=3.0))
    g.connect()
    yield g, emu
    g.disconnect()
    emu.shutdown()


def test_robotiq_activates_opens_and_detects_the_object(robotiq):
    g, emu = robotiq
    assert isinstance(g, Gripper)
    g.activate()
    g.open()
    assert g.width_m() == pytest.approx(0.085, abs=1e-3)
    assert g.close() is True                      # stopped on the 4 cm object (OBJ 2)
    assert g.width_m() == pytest.approx(0.04, abs=1e-3) and g.holding() is True
    emu.object_width_m = 0.0                      # it slips out: the fingers close on to the end (OBJ 3)
    deadline = time.monotonic() + 3.0
    while g.holding() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert g.holding() is False
    g.open()
    assert g.close() is False                     # nothing between the fingers (OBJ 3)
    assert g.move(0.05, 1.0, 0.5) is False and g.width_m() == pytest.approx(0.05, abs=1e-3)
    with pytest.raises(InvalidGoalError):
        g.move(0.2, 1.0, 0.5)


mujoco = pytest.importorskip("mujoco")


@pytest.mark.slow
def test_sim_arm_moves_reports_and_stops_on_request():
    from spatial_manip.control.config import load_arm_config
    from spatial_manip.control.factory import make_arm_from_config
    from spatial_manip.motion.arm_plans import make_primitives

    cfg = load_arm_config(overrides={"arm.backend": "sim"})
    arm = make_arm_from_config(cfg, render_width=64, render_height=48)
    with arm:
        assert isinstance(arm, Arm) and isinstance(arm.gripper, Gripper)
        prim = make_primitives(cfg, arm, arm.gripper)
        prim.home()
        # the analytic UR5e kinematics agree with the MuJoCo model (same TCP from the overrides)
        np.testing.assert_allclose(prim.safety.kin.fk(arm.joint_positions()), arm.tcp_pose(), atol=2e-3)
        T = arm.tcp_pose()
        T[:3, 3] += [0.05, 0.0, -0.05]
        prim.waypoints([T])
        np.testing.assert_allclose(arm.tcp_pose()[:3, 3], T[:3, 3], atol=5e-3)
        cancel = threading.Event()
        T2 = T.copy()
        T2[1, 3] += 0.3
        threading.Timer(0.01, cancel.set).start()
        t0 = time.monotonic()
        with pytest.raises(CanceledError):
            prim.waypoints([T2], speed_scale=0.1, cancel=cancel)
        assert time.monotonic() - t0 < 2.0
        assert abs(arm.tcp_pose()[1, 3] - T2[1, 3]) > 0.05


def test_a_misspelt_sim_arm_setting_is_refused_by_name():
    """arm.sim's keys were filtered silently: a misspelt `sead` left the seed at 0."""
    from spatial_manip.control.config import load_arm_config
    from spatial_manip.control.factory import make_arm_from_config
    from spatial_manip.errors import ConfigError

    cfg = load_arm_config(overrides={"arm.backend": "sim", "arm.sim.sead": 3})
    with pytest.raises(ConfigError, match=r"arm.sim: unknown key 'sead' \(value 3\); known: scene_kind, seed"):
        make_arm_from_config(cfg)
