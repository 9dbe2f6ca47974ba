"""Camera model (camera_info / RealSense intrinsics, distortion) and hand-eye calibration loading."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from spatial_manip.geometry.calibration import CalibrationError, HandEyeCalibration, load_calibration
from spatial_manip.camera_model import CameraIntrinsics, backproject, project, undistort_points
from spatial_manip.transforms import rotvec_pose_to_matrix

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "calibration" / "eye_to_hand.example.yaml"
INFO = {"width": 640, "height": 480, "k": [600.0, 0, 320.5, 0, 602.0, 240.5, 0, 0, 1],
        "d": [0.1, -0.05, 0.001, -0.002, 0.01], "distortion_model": "plumb_bob"}


def test_from_camera_info_dict_and_object():
    a = CameraIntrinsics.from_camera_info(INFO)
    b = CameraIntrinsics.from_camera_info(SimpleNamespace(**INFO))
    assert a == b and (a.fx, a.fy, a.cx, a.cy) == (600.0, 602.0, 320.5, 240.5)
    assert a.distortion == tuple(INFO["d"]) and a.has_distortion
    assert CameraIntrinsics.from_camera_info(a.to_camera_info()) == a


def test_from_camera_info_rejects_missing_and_unknown_model():
    with pytest.raises(ValueError, match="'k'"):
        CameraIntrinsics.from_camera_info({"width": 1, "height": 1})
    with pytest.raises(ValueError, match="not supported"):
        CameraIntrinsics.from_camera_info({**INFO, "distortion_model": "equidistant"})


def test_from_realsense_duck_typed_and_real():
    fake = SimpleNamespace(fx=900.0, fy=901.0, ppx=512.0, ppy=384.0, width=1024, height=768,
                           model=SimpleNamespace(name="inverse_brown_conrady"), coeffs=[0, 0, 0, 0, 0])
    i = CameraIntrinsics.from_realsense(fake)
    assert (i.width, i.height, i.fx, i.cy, i.distortion_model) == (1024, 768, 900.0, 384.0, "inverse_brown_conrady")
    rs = pytest.importorskip("pyrealsense2")
    r = rs.intrinsics()
    r.width, r.height, r.fx, r.fy, r.ppx, r.ppy = 640, 480, 610.0, 611.0, 319.0, 241.0
    r.model, r.coeffs = rs.distortion.brown_conrady, [0.1, 0.0, 0.0, 0.0, 0.0]
    j = CameraIntrinsics.from_realsense(r)
    assert j.distortion_model == "plumb_bob" and j.distortion[0] == pytest.approx(0.1)


@pytest.mark.parametrize("model", ["plumb_bob", "inverse_brown_conrady"])
def test_distortion_project_backproject_round_trip(model):
    intr = CameraIntrinsics.from_camera_info({**INFO, "distortion_model": model})
    rng = np.random.default_rng(0)
    p = np.stack([rng.uniform(-0.3, 0.3, 200), rng.uniform(-0.2, 0.2, 200), rng.uniform(0.5, 1.5, 200)], 1)
    uv, inside = project(p, intr)
    ideal, _ = project(p, CameraIntrinsics.from_K(intr.K, 640, 480))
    assert np.abs(uv - ideal).max() > 1.0  # the distortion is not a no-op
    np.testing.assert_allclose(undistort_points(uv, intr), ideal, atol=1e-6)
    # back-project a depth image holding these points at their (rounded) pixels
    u, v = np.round(uv[inside]).astype(int).T
    depth = np.zeros((480, 640), np.float32)
    depth[v, u] = p[inside, 2]
    pts, pix = backproject(depth, intr)
    uv2, _ = project(pts, intr)
    np.testing.assert_allclose(uv2, pix, atol=1e-3)


def test_eye_to_hand_example_file_loads():
    cal = load_calibration(EXAMPLE)
    T = cal.T_base_camera()
    assert not cal.eye_in_hand and T[2, 3] == pytest.approx(0.8)
    assert T[2, 2] < -0.5  # the optical axis looks down at the table
    assert cal.intrinsics.width == 1024
    assert HandEyeCalibration.from_dict(cal.to_dict()).T_base_camera() == pytest.approx(T)


def test_eye_in_hand_composes_with_tool_pose():
    cal = HandEyeCalibration.from_dict({"T_tool0_camera": {"translation": [0, -0.05, 0.03], "rpy": [0, 0, 0.1]}})
    assert cal.eye_in_hand
    with pytest.raises(CalibrationError, match="T_base_tool0"):
        cal.T_base_camera()
    T_bt = rotvec_pose_to_matrix([0.4, 0.1, 0.5, 3.14, 0, 0])
    np.testing.assert_allclose(cal.T_base_camera(T_bt), T_bt @ cal.T_mount_camera)


@pytest.mark.parametrize("bad, match", [
    ({"mode": "eye_to_hand"}, "T_base_camera"),
    ({"T_base_camera": {"translation": [0, 0, 0]}}, "rotation"),
    ({"T_base_camera": {"matrix": np.diag([1, 1, 2, 1]).tolist()}}, "rigid"),
    ({"mode": "floating", "T_base_camera": {"matrix": np.eye(4).tolist()}}, "mode"),
])
def test_bad_calibrations_are_refused(bad, match):
    with pytest.raises(CalibrationError, match=match):
        HandEyeCalibration.from_dict(bad)


def test_missing_file_says_what_to_do(tmp_path):
    with pytest.raises(CalibrationError, match="example"):
        load_calibration(tmp_path / "nope.yaml")


GOOD = ("mode: eye_to_hand\nT_base_camera:\n  translation: [1.2, 0.0, 0.8]\n"
        "  rotation_xyzw: [0.6619, 0.6619, -0.2487, -0.2487]\n")


@pytest.mark.parametrize("old, new, names", [
    ("1.2, 0.0, 0.8", ".nan, 0.0, 0.8", ["translation", "nan"]),
    ("0.6619, 0.6619, -0.2487, -0.2487", "0, 0, 0, 0", ["rotation_xyzw", "[0.0, 0.0, 0.0, 0.0]", "unit quaternion"]),
    ("0.0, 0.8]", "0.0, 0.8", ["not valid YAML", "line 4"]),
    ("T_base_camera:", "T_base_cam:", ["T_base_camera"]),
    ("1.2, 0.0, 0.8", "'a', 0.0, 0.8", ["translation", "'a'"]),
    ("1.2, 0.0, 0.8", "1200, 0.0, 800", ["translation", "1200.0", "3.0 m", "millimetres"]),
    ("translation:", "translaton:", ["T_base_camera", "translaton"]),
    ("eye_to_hand", "eye_to_hnd", ["mode", "eye_to_hnd", "eye_in_hand"]),
])
def test_a_bad_calibration_file_is_refused_naming_file_key_and_value(tmp_path, old, new, names):
    """Each was found by trying bad files on camera_node: NaN, a zero quaternion, a syntax error,
    a missing key, a wrong type, millimetres (accepted silently), a misspelt key (translation
    silently 0), a misspelt mode."""
    path = tmp_path / "cal.yaml"
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(CalibrationError) as e:
        load_calibration(path)
    assert str(path) in e.value.message and "\n" not in e.value.message
    for name in names:
        assert name in e.value.message


@pytest.mark.parametrize("model", ["plumb_bob", "inverse_brown_conrady"])
def test_distortion_agrees_with_opencv(model):
    """The polynomial written out for speed is OpenCV's; the inverse is OpenCV's own."""
    import cv2

    intr = CameraIntrinsics.from_camera_info({**INFO, "distortion_model": model})
    rng = np.random.default_rng(1)
    p = np.stack([rng.uniform(-0.3, 0.3, 100), rng.uniform(-0.2, 0.2, 100), rng.uniform(0.5, 1.5, 100)], 1)
    d = np.asarray(intr.distortion)
    if model == "plumb_bob":            # the polynomial distorts: project through OpenCV's camera
        expected, _ = cv2.projectPoints(p, np.zeros(3), np.zeros(3), intr.K, d)
        np.testing.assert_allclose(project(p, intr)[0], expected.reshape(-1, 2), atol=1e-6)
    else:                               # the polynomial undistorts: OpenCV undistorts its inverse
        uv, _ = project(p, intr)
        ideal = cv2.projectPoints(p, np.zeros(3), np.zeros(3), intr.K, None)[0].reshape(-1, 2)
        np.testing.assert_allclose(undistort_points(uv, intr), ideal, atol=1e-6)
