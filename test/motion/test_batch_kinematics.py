"""The batched UR IK equals URKinematics solution for solution, and the straight-line check built
on it equals SafetyEnvelope.check_motion (configurations, or the refusal) on random lines."""
import numpy as np
import pytest

from spatial_manip.control.config import load_arm_config
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import UnreachableError
from spatial_manip.motion.batch_kinematics import fk_flange_many, ik_flange_many, line_configurations, nearest
from spatial_manip.motion.cartesian import _line


@pytest.fixture(scope="module")
def envelope():
    return SafetyEnvelope.from_config(load_arm_config())


def _random_q(rng, n):
    return rng.uniform(-np.pi, np.pi, size=(n, 6))


def test_fk_and_ik_of_many_poses_equal_the_scalar_kinematics(envelope):
    kin, rng = envelope.kin, np.random.default_rng(5)
    Q = _random_q(rng, 200)
    T = fk_flange_many(kin, Q)
    assert np.allclose(T, [kin.fk_flange(q) for q in Q], atol=1e-12)
    raw, ok, _ = ik_flange_many(kin, T)
    for i in range(len(Q)):
        scalar = kin.ik_flange(T[i])
        assert len(scalar) == int(ok[i].sum())
        assert np.allclose(raw[i][ok[i]], scalar, atol=1e-9)
        ref = rng.uniform(-np.pi, np.pi, 6)
        T_tcp = T[i] @ kin.T_tool0_tcp
        mine = nearest(kin, raw[i], ok[i], ref)
        try:
            assert np.allclose(mine, kin.ik(T_tcp, ref), atol=1e-9)
        except UnreachableError:
            assert mine is None


def test_straight_lines_are_checked_as_check_motion_checks_them(envelope):
    kin, rng = envelope.kin, np.random.default_rng(7)
    agreed = refused = 0
    for _ in range(60):
        q0 = _random_q(rng, 1)[0] * 0.6 + np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0])
        A = kin.fk(q0)
        B = A.copy()
        B[:3, 3] += rng.normal(0.0, 0.08, 3)
        poses = _line(A, B, envelope.config.path_check_step_m)
        try:
            expected = envelope.check_motion(poses, q0)
        except UnreachableError as e:
            with pytest.raises(UnreachableError) as got:
                line_configurations(envelope, q0, poses)
            assert got.value.message.split(" ")[:4] == e.message.split(" ")[:4]
            refused += 1
            continue
        assert np.allclose(line_configurations(envelope, q0, poses), expected, atol=1e-9)
        agreed += 1
    assert agreed > 10 and refused > 5           # both outcomes exercised


def test_ik_near_many_is_the_scalar_ik_pose_by_pose(envelope):
    from spatial_manip.motion.batch_kinematics import ik_near_many

    kin, rng = envelope.kin, np.random.default_rng(11)
    T = [kin.fk(q) for q in _random_q(rng, 100)]
    T[3] = T[3].copy()
    T[3][:3, 3] = [3.0, 0.0, 0.0]                          # out of reach
    ref = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    got = ik_near_many(kin, T, ref)
    for i, P in enumerate(T):
        try:
            assert np.allclose(got[i], kin.ik(P, ref), atol=1e-9)
        except UnreachableError:
            assert np.isnan(got[i]).all()
    assert np.isnan(got[3]).all()
