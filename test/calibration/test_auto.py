"""The automatic eye-in-hand pose set: safe, reachable, varied, and short to travel."""
import numpy as np
import pytest
import yaml

from spatial_manip.paths import config_dir
from spatial_manip.calibration.auto import eye_in_hand_pose_set, viewpoints
from spatial_manip.calibration.guidance import guidance
from spatial_manip.sim.calibration_cell import Q_NOMINAL
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import UnreachableError
from spatial_manip.transforms import apply, invert, make_transform

MOUNT = np.array([[0.0, -1, 0, 0], [1, 0, 0, -0.09], [0, 0, 1, 0.04], [0, 0, 0, 1]])   # camera beside the flange
BOARD_CENTER = np.array([0.50, 0.05, 0.0])


@pytest.fixture(scope="module")
def envelope():
    return SafetyEnvelope.from_config(yaml.safe_load((config_dir() / "params" / "arm.yaml").read_text()))


def test_the_pose_set_is_safe_sees_the_board_and_covers_the_rotations(envelope):
    qs = eye_in_hand_pose_set(BOARD_CENTER, MOUNT, envelope.kin, n=15, q_ref=Q_NOMINAL, envelope=envelope)
    assert len(qs) == 15
    flanges = []
    for q in qs:
        envelope.check_joints(q)                               # limits, workspace, keep-outs, table
        T_flange = envelope.kin.fk_flange(q)
        flanges.append(T_flange)
        p = apply(invert(T_flange @ MOUNT), BOARD_CENTER)      # the board centre in the camera frame
        assert 0.3 < p[2] < 0.55 and np.hypot(p[0], p[1]) < 0.05 * p[2]
    assert guidance(flanges, min_samples=15).done, guidance(flanges, min_samples=15).message()


def test_the_tour_visits_neighbours_first(envelope):
    qs = eye_in_hand_pose_set(BOARD_CENTER, MOUNT, envelope.kin, n=15, q_ref=Q_NOMINAL, envelope=envelope)
    travel = sum(np.max(np.abs(b - a)) for a, b in zip(qs, qs[1:]))
    shuffled = [qs[i] for i in np.random.default_rng(0).permutation(len(qs))]
    assert travel < sum(np.max(np.abs(b - a)) for a, b in zip(shuffled, shuffled[1:]))


def test_viewpoints_are_deterministic_and_look_at_the_board():
    a, b = viewpoints(BOARD_CENTER, n=8), viewpoints(BOARD_CENTER, n=8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    for T in a:
        p = apply(invert(T), BOARD_CENTER)
        assert p[2] > 0.3 and np.hypot(p[0], p[1]) < 1e-9


def test_a_board_out_of_reach_is_refused_with_the_reasons(envelope):
    with pytest.raises(UnreachableError, match=r"only \d+ of 15 calibration poses are safe and reachable \(.*outside"):
        eye_in_hand_pose_set([1.6, 0.0, 0.0], make_transform(t=[0, 0, 0.05]), envelope.kin, n=15,
                             q_ref=Q_NOMINAL, envelope=envelope)
