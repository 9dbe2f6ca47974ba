"""UR5 / UR5e analytic IK: FK(IK(T)) == T on random reachable poses, all branches, limits."""
import numpy as np
import pytest

from spatial_manip.control.kinematics import DH_PRESETS, URKinematics, tcp_offset_matrix
from spatial_manip.errors import UnreachableError


@pytest.mark.parametrize("model", ["ur5", "ur5e"])
def test_fk_of_every_ik_solution_matches_the_target(model):
    rng = np.random.default_rng(7)
    kin = URKinematics(**DH_PRESETS[model], T_tool0_tcp=tcp_offset_matrix([0, 0, 0.15, 0, 0, 0]))
    for _ in range(200):
        q = rng.uniform(-np.pi, np.pi, 6)
        T = kin.fk(q)
        sols = kin.ik_all(T, q)
        assert 1 <= len(sols) <= 8
        for s in sols:
            np.testing.assert_allclose(kin.fk(s), T, atol=1e-8)
        # the configuration that produced the pose is among the solutions (mod 2*pi)
        assert min(np.max(np.abs(np.angle(np.exp(1j * (s - q))))) for s in sols) < 1e-6


def test_generic_pose_has_eight_distinct_solutions():
    kin = URKinematics(**DH_PRESETS["ur5"])
    q = np.array([0.4, -1.1, 1.3, -0.7, 0.9, 0.2])
    raw = kin.ik_flange(kin.fk_flange(q))
    assert len(raw) == 8
    assert len({tuple(np.round(s, 6)) for s in raw}) == 8


def test_ik_picks_the_solution_closest_to_the_reference():
    kin = URKinematics(**DH_PRESETS["ur5e"])
    q = np.array([3.0, -1.2, 1.6, -1.9, -1.5, 0.3])
    q_near = q + 0.05
    best = kin.ik(kin.fk(q), q_near)
    np.testing.assert_allclose(best, q, atol=1e-8)


def test_wrapping_keeps_joints_near_reference_beyond_pi():
    kin = URKinematics(**DH_PRESETS["ur5e"])
    q = np.array([4.0, -1.2, 1.6, -1.9, -1.5, 5.5])  # beyond pi: needs +2*pi wrapping
    np.testing.assert_allclose(kin.ik(kin.fk(q), q), q, atol=1e-8)


def test_joint_limits_remove_solutions_and_far_poses_are_unreachable():
    kin = URKinematics(**DH_PRESETS["ur5e"], q_min=(-6.3, -6.3, -0.1, -6.3, -6.3, -6.3),
                       q_max=(6.3, 6.3, 0.1, 6.3, 6.3, 6.3))
    T = URKinematics(**DH_PRESETS["ur5e"]).fk([0.3, -1.2, 1.6, -1.9, -1.5, 0.3])
    assert kin.ik_all(T) == []  # every solution needs |elbow| ~ 1.6 rad
    with pytest.raises(UnreachableError, match="no inverse-kinematics solution"):
        kin.ik(T)
    far = np.eye(4)
    far[:3, 3] = [2.0, 0.0, 0.3]
    with pytest.raises(UnreachableError):
        URKinematics(**DH_PRESETS["ur5"]).ik(far)


def test_zero_configuration_matches_the_published_pendant_pose():
    # UR5 at all-zero joints: the teach pendant shows X -817.25, Y -191.45, Z -5.49 mm
    T = URKinematics(**DH_PRESETS["ur5"]).fk_flange(np.zeros(6))
    np.testing.assert_allclose(T[:3, 3], [-0.81725, -0.19145, -0.005491], atol=1e-5)
