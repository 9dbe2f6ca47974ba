"""Every refusal of the safety envelope, before any backend sees a command."""
import numpy as np
import pytest

from spatial_manip.control.config import grasp_to_tcp, grasp_to_tcp_rotation, load_arm_config
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import InvalidGoalError, UnreachableError


@pytest.fixture(scope="module")
def cfg():
    return load_arm_config()


@pytest.fixture(scope="module")
def env(cfg):
    return SafetyEnvelope.from_config(cfg)


@pytest.fixture(scope="module")
def home(cfg):
    return np.array(cfg["primitives"]["home_q"], float)


def down_pose(x, y, z):
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])  # TCP z (approach) pointing down
    T[:3, 3] = [x, y, z]
    return T


def test_safe_pose_returns_a_joint_solution(env, home):
    q = env.check_pose(down_pose(0.5, 0.1, 0.2), home)
    np.testing.assert_allclose(env.kin.fk(q), down_pose(0.5, 0.1, 0.2), atol=1e-8)


def test_refuses_outside_workspace(env, home):
    with pytest.raises(UnreachableError, match="outside the workspace box"):
        env.check_pose(down_pose(0.5, 0.9, 0.2), home)


def test_refuses_below_table(env, home):
    with pytest.raises(UnreachableError, match="below the table limit"):
        env.check_pose(down_pose(0.5, 0.0, 0.001), home)


def test_refuses_keep_out_box(cfg, home):
    cfg2 = {**cfg, "safety": {**cfg["safety"], "keep_out": [{"name": "camera_mount",
                                                                "min_m": [0.4, -0.1, 0.0], "max_m": [0.6, 0.1, 0.5]}]}}
    env = SafetyEnvelope.from_config(cfg2)
    with pytest.raises(UnreachableError, match="keep-out box 'camera_mount'"):
        env.check_pose(down_pose(0.5, 0.0, 0.3), home)
    # both ends outside, the straight line between them through the box: refused too
    with pytest.raises(UnreachableError, match="path to waypoint 1 passes"):
        env.check_motion([down_pose(0.5, 0.3, 0.3), down_pose(0.5, -0.3, 0.3)], home)


def test_a_round_keep_out_refuses_inside_its_cylinder_only(cfg, home):
    cfg2 = {**cfg, "safety": {**cfg["safety"], "keep_out": [{"name": "pillar", "min_m": [0.4, -0.1, 0.0],
                                                                "max_m": [0.6, 0.1, 0.5], "radius_m": 0.1}]}}
    env = SafetyEnvelope.from_config(cfg2)
    with pytest.raises(UnreachableError, match="keep-out box 'pillar'.*radius cylinder"):
        env.check_pose(down_pose(0.5, 0.0, 0.3), home)
    env.check_pose(down_pose(0.59, 0.09, 0.3), home)          # the box's corner, outside the pillar
    for bad in (0.0, -0.1, 0.11):
        with pytest.raises(InvalidGoalError, match="radius_m"):
            SafetyEnvelope.from_config({**cfg2, "safety": {**cfg2["safety"], "keep_out": [
                {"name": "pillar", "min_m": [0.4, -0.1, 0.0], "max_m": [0.6, 0.1, 0.5], "radius_m": bad}]}})


def test_refuses_unreachable_by_ik(cfg, home):
    cfg2 = {**cfg, "safety": {**cfg["safety"], "workspace_max_m": [2.0, 2.0, 2.0], "workspace_min_m": [-2, -2, -1]}}
    env = SafetyEnvelope.from_config(cfg2)
    with pytest.raises(UnreachableError, match="no inverse-kinematics solution"):
        env.check_pose(down_pose(1.3, 0.0, 0.3), home)


def test_refuses_joint_limits(env, home):
    q = home.copy()
    q[2] = 3.5  # elbow limited to +-pi in arm.yaml
    with pytest.raises(UnreachableError, match="outside the joint limits"):
        env.check_joints(q)
    with pytest.raises(InvalidGoalError, match="6 finite angles"):
        env.check_joints([0, 0, float("nan"), 0, 0, 0])


def test_refuses_joint_move_whose_tcp_dips_under_the_table(env, home):
    low = env.kin.ik(down_pose(0.5, 0.0, 0.02), home)
    far = low.copy()
    far[1] += 0.3  # shoulder down: the TCP sweeps below the table
    with pytest.raises(UnreachableError, match="sample 1 of 1: TCP height .* below the table limit"):
        env.checked_path(low, [far], 1.0, 1.0)


def test_refuses_malformed_pose(env, home):
    T = down_pose(0.5, 0.0, 0.2)
    T[:3, :3] *= 2
    with pytest.raises(InvalidGoalError, match="orthonormal"):
        env.check_pose(T, home)
    with pytest.raises(InvalidGoalError, match="finite 4x4"):
        env.check_pose(np.full((4, 4), np.nan), home)
    with pytest.raises(InvalidGoalError, match="at least one waypoint"):
        env.check_motion([], home)


def test_refuses_path_through_singularity(env, home):
    # straight line passing right over the base axis (shoulder singularity)
    with pytest.raises(UnreachableError, match="joint jump|no inverse-kinematics"):
        env.check_motion([down_pose(0.3, 0.3, 0.4), down_pose(-0.15, -0.02, 0.4)], home)


def test_clamp_speed_caps_and_refuses(env):
    c = env.config
    assert env.clamp_speed(10.0, 50.0) == (c.max_tcp_speed_m_s, c.max_tcp_accel_m_s2)
    assert env.clamp_speed(0.1, 0.5) == (0.1, 0.5)
    assert env.clamp_speed(9.0, 9.0, joint=True) == (c.max_joint_speed_rad_s, c.max_joint_accel_rad_s2)
    for bad in (0.0, -0.1, float("nan"), float("inf")):
        with pytest.raises(InvalidGoalError, match="speed must be a positive"):
            env.clamp_speed(bad, 1.0)
    with pytest.raises(InvalidGoalError, match="acceleration"):
        env.clamp_speed(0.1, -1.0)


def test_grasp_to_tcp_rotation_maps_approach_x_to_z(cfg):
    R = grasp_to_tcp_rotation(cfg)
    Tg = np.eye(4)
    Tg[:3, :3] = np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]).T  # grasp approach (+x) pointing down
    Tt = grasp_to_tcp(Tg, R)
    np.testing.assert_allclose(Tt[:3, 2], Tg[:3, 0], atol=1e-12)  # TCP z == grasp approach
    np.testing.assert_allclose(Tt[:3, 1], Tg[:3, 1], atol=1e-12)  # width axis kept
    with pytest.raises(InvalidGoalError):
        grasp_to_tcp_rotation({"primitives": {"grasp_to_tcp_rotation": [1, 0, 0, 0, 1, 0, 0, 0, -1]}})
