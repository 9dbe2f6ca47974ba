"""Hand-eye solving on exact and corrupted pose sets, outlier rejection, guidance, bounds."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.calibration.guidance import guidance
from spatial_manip.calibration.result import Bounds, pose_error
from spatial_manip.calibration.solve import METHODS, HandEyeError, calibrate_hand_eye, solve_x
from spatial_manip.transforms import invert, make_transform

CENTER = np.array([0.14, 0.10, 0.0])


def _T(rotvec, t):
    return make_transform(Rotation.from_rotvec(rotvec).as_matrix(), t)


def _poses(n, rng, tilt=0.5):
    return [_T(rng.normal(0, tilt, 3) + [np.pi, 0, 0], [0.5, 0.0, 0.4] + rng.normal(0, 0.08, 3)) for _ in range(n)]


def _scene(mode, n=12, seed=0):
    """Exact flange and board poses for a known X (camera mounting) and Y (the board's)."""
    rng = np.random.default_rng(seed)
    B = _poses(n, rng)
    if mode == "eye_to_hand":
        X, Y = _T([2.0, 0.3, -0.4], [1.2, 0.2, 0.8]), _T([0.1, 0.0, 1.5], [-0.1, -0.14, 0.18])
        C = [invert(X) @ b @ Y for b in B]
    else:
        X, Y = _T([0.05, -0.1, 1.57], [0.09, 0.0, 0.04]), _T([np.pi, 0, 0.2], [0.4, 0.1, 0.0])
        C = [invert(b @ X) @ Y for b in B]
    return B, C, X, Y


@pytest.mark.parametrize("mode", ["eye_to_hand", "eye_in_hand"])
@pytest.mark.parametrize("method", METHODS)
def test_every_method_recovers_the_mounting_from_exact_poses(mode, method):
    B, C, X, _ = _scene(mode)
    mm, deg = pose_error(solve_x(method, mode, B, C), X)
    assert mm < 1e-3 and deg < 1e-4, (method, mm, deg)


@pytest.mark.parametrize("mode", ["eye_to_hand", "eye_in_hand"])
def test_a_mispaired_sample_is_rejected_and_the_rest_agree(mode):
    B, C, X, Y = _scene(mode, n=14, seed=1)
    rng = np.random.default_rng(5)
    C = [c @ _T(rng.normal(0, 2e-3, 3), rng.normal(0, 3e-4, 3)) for c in C]     # PnP-like noise
    B[6] = _poses(1, np.random.default_rng(99))[0]      # image 6 paired with another instant's pose
    sol = calibrate_hand_eye(mode, B, C, CENTER)
    assert list(sol.rejected) == [6] and "outlier" in sol.rejected[6]
    mm, deg = pose_error(sol.best.X, X)
    assert mm < 2.0 and deg < 0.2
    assert set(sol.methods) == set(METHODS) and sol.spread_mm < 5.0
    assert sol.best.residual_mm.max() < 2.0


def test_clean_noisy_samples_are_all_kept():
    B, C, X, _ = _scene("eye_to_hand", n=15, seed=2)
    rng = np.random.default_rng(3)
    C = [c @ _T(rng.normal(0, 1e-3, 3), rng.normal(0, 2e-4, 3)) for c in C]
    assert calibrate_hand_eye("eye_to_hand", B, C, CENTER).rejected == {}


def test_too_few_samples_unknown_method_and_mode_are_named():
    B, C, _, _ = _scene("eye_to_hand", n=3)
    with pytest.raises(HandEyeError, match="at least 3 samples, got 2"):
        solve_x("park", "eye_to_hand", B[:2], C[:2])
    with pytest.raises(HandEyeError, match="unknown method 'nope'"):
        solve_x("nope", "eye_to_hand", B, C)
    with pytest.raises(HandEyeError, match="mode must be one of"):
        solve_x("park", "on_the_ceiling", B, C)
    with pytest.raises(HandEyeError, match="3 robot poses but 2 board poses"):
        solve_x("park", "eye_to_hand", B, C[:2])


def test_guidance_asks_for_the_missing_rotations_then_is_satisfied():
    rng = np.random.default_rng(0)
    # only wrist-3 turns so far: rotations about the flange z, nothing about x or y
    base = _T([np.pi, 0, 0], [0.5, 0, 0.4])
    turns = [base @ _T([0, 0, a], [0, 0, 0]) for a in np.radians([-30, -10, 10, 30])]
    g = guidance(turns, min_samples=12)
    assert g.samples == 4 and g.more_poses == 8 and not g.done
    text = g.message()
    assert "flange x axis" in text and "flange y axis" in text and "own z axis" not in text
    assert "move the flange along the base x axis" in text
    assert g.rotation_span_deg["z"] == pytest.approx(60.0, abs=0.5)
    varied = [make_transform(base[:3, :3] @ Rotation.from_euler("xyz", rng.uniform(-25, 25, 3), degrees=True).as_matrix(),
                             [0.5, 0, 0.4] + rng.uniform(-0.1, 0.1, 3)) for _ in range(14)]
    g = guidance(varied, min_samples=12)
    assert g.done and "you can solve now" in g.message()
    assert guidance([]).more_poses == 12


def test_bounds_from_config_refuse_nonsense():
    assert Bounds.from_dict({"max_sample_mm": 3, "min_samples": 8}) == Bounds(max_sample_mm=3.0, min_samples=8)
    with pytest.raises(ValueError, match="unknown keys \\['max_mm'\\]"):
        Bounds.from_dict({"max_mm": 3})
    with pytest.raises(ValueError, match="must be positive"):
        Bounds.from_dict({"max_sample_deg": 0})


def test_rotations_about_one_axis_only_are_called_degenerate():
    """Turning only wrist 3 leaves hand-eye undetermined (Tsai and Lenz): say so, do not guess."""
    rng = np.random.default_rng(0)
    X, Y = _T([2.0, 0.3, -0.4], [1.2, 0.2, 0.8]), _T([0.1, 0.0, 1.5], [-0.1, -0.14, 0.18])
    B = [_T([np.pi, 0, 0], [0.5, 0, 0.4] + rng.normal(0, 0.08, 3)) @ _T([0, 0, a], [0, 0, 0]) for a in np.linspace(-1, 1, 12)]
    C = [invert(X) @ b @ Y for b in B]
    with pytest.raises(HandEyeError, match="degenerate \\(too little rotation between poses, or all about one axis\\)"):
        calibrate_hand_eye("eye_to_hand", B, C, CENTER)
