"""ChArUco detection and board pose on OpenCV's own board image projected through a known camera."""
import cv2
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.calibration.board import BoardConfig, BoardError, detect, load_board_file
from spatial_manip.calibration.result import pose_error
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import make_transform

INTR = CameraIntrinsics.from_fovy(640, 480, 43.3)


def _project_board(board: BoardConfig, T_cam_board: np.ndarray, intr: CameraIntrinsics, ss: int = 3) -> np.ndarray:
    """The printed board seen by a pinhole camera at T_cam_board: a homography warp of the board
    image, rendered at `ss` times the resolution and area-averaged down (as a sensor integrates)."""
    px = 100
    img = board.image(px)
    # board image pixel (u, v) -> board metres: pixel centres sit at (u + 0.5) / px squares
    A = np.array([[board.square_m / px, 0, 0.5 * board.square_m / px], [0, board.square_m / px, 0.5 * board.square_m / px], [0, 0, 1]])
    K = intr.K.copy()
    K[:2] *= ss
    K[0, 2], K[1, 2] = (intr.cx + 0.5) * ss - 0.5, (intr.cy + 0.5) * ss - 0.5
    H = K @ np.column_stack([T_cam_board[:3, 0], T_cam_board[:3, 1], T_cam_board[:3, 3]]) @ A
    big = cv2.warpPerspective(img, H, (intr.width * ss, intr.height * ss), flags=cv2.INTER_LINEAR, borderValue=170)
    return cv2.resize(big, (intr.width, intr.height), interpolation=cv2.INTER_AREA)


def _pose(rotvec_deg, t):
    return make_transform(Rotation.from_rotvec(np.radians(rotvec_deg)).as_matrix(), t)


@pytest.mark.parametrize("rotvec_deg,t", [([0, 0, 0], [-0.14, -0.10, 0.6]),
                                          ([25, -15, 30], [-0.12, -0.08, 0.7]),
                                          ([-30, 20, -80], [-0.05, 0.05, 0.55])])
def test_board_pose_from_a_projected_board_is_within_a_millimetre(rotvec_deg, t):
    board = BoardConfig()
    T = _pose(rotvec_deg, t)
    view = detect(_project_board(board, T, INTR), board, INTR)
    assert len(view.ids) >= 20 and view.reprojection_px < 0.3
    mm, deg = pose_error(view.T_cam_board, T)
    assert mm < 1.0 and deg < 0.3, (mm, deg)
    # the ids name the corners: their board points project where they were found
    assert view.object_points.shape == (len(view.ids), 3)


def test_rgb_and_grey_images_give_the_same_pose():
    board = BoardConfig()
    grey = _project_board(board, _pose([10, 5, 0], [-0.14, -0.1, 0.6]), INTR)
    a = detect(grey, board, INTR).T_cam_board
    b = detect(np.dstack([grey] * 3), board, INTR).T_cam_board
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_no_board_and_wrong_image_size_say_what_to_do():
    board = BoardConfig()
    with pytest.raises(BoardError, match="0 ChArUco corners seen, need at least 6"):
        detect(np.full((480, 640), 128, np.uint8), board, INTR)
    with pytest.raises(BoardError, match="image is 320x240 but the intrinsics are 640x480"):
        detect(np.zeros((240, 320), np.uint8), board, INTR)


def test_a_board_of_another_dictionary_is_not_seen():
    img = _project_board(BoardConfig(dictionary="DICT_4X4_50"), _pose([0, 0, 0], [-0.14, -0.1, 0.6]), INTR)
    with pytest.raises(BoardError, match="ChArUco corners seen"):
        detect(img, BoardConfig(dictionary="DICT_6X6_250"), INTR)


def test_board_config_errors_are_specific(tmp_path):
    with pytest.raises(BoardError, match="smaller than the square"):
        BoardConfig(square_m=0.03, marker_m=0.03)
    with pytest.raises(BoardError, match="unknown ArUco dictionary 'DICT_7X7'"):
        BoardConfig(dictionary="DICT_7X7")
    with pytest.raises(BoardError, match="need 60 markers but DICT_4X4_50 has only 50"):
        BoardConfig(squares_x=12, squares_y=10, dictionary="DICT_4X4_50")
    with pytest.raises(BoardError, match="unknown keys \\['size'\\]"):
        BoardConfig.from_dict({"size": 3})
    (tmp_path / "b.yaml").write_text("bounds: {}\n")
    with pytest.raises(BoardError, match="expected a mapping with a 'board' section"):
        load_board_file(tmp_path / "b.yaml")


def test_the_shipped_board_file_loads():
    from spatial_manip.paths import config_dir

    board, rest = load_board_file(config_dir() / "calibration" / "charuco.yaml")
    assert board == BoardConfig() and rest["bounds"]["max_sample_mm"] == 5.0
    assert board.image(50).shape == (250, 350)


def _distorted(ideal_img: np.ndarray, intr: CameraIntrinsics) -> np.ndarray:
    """What a lens with `intr`'s distortion sees: each distorted pixel looks along the ray the
    ideal camera (same K) saw at the undistorted pixel."""
    from spatial_manip.camera_model import undistort_points

    u, v = np.meshgrid(np.arange(intr.width), np.arange(intr.height))
    ideal = undistort_points(np.stack([u.ravel(), v.ravel()], axis=1), intr).reshape(intr.height, intr.width, 2)
    m = ideal.astype(np.float32)
    return cv2.remap(ideal_img, m[..., 0], m[..., 1], cv2.INTER_LINEAR, borderValue=170)


@pytest.mark.parametrize("model,coeffs", [("plumb_bob", (-0.12, 0.05, 0.001, -0.001, 0.0)),
                                          ("inverse_brown_conrady", (0.1, -0.05, 0.001, 0.0005, 0.0))])
def test_the_lens_distortion_of_the_camera_info_is_used(model, coeffs):
    board = BoardConfig()
    lens = CameraIntrinsics(640, 480, INTR.fx, INTR.fy, INTR.cx, INTR.cy, model, coeffs)
    T = _pose([15, -10, 20], [-0.02, -0.02, 0.55])          # off-centre, where the lens bends most
    img = _distorted(_project_board(board, T, INTR), lens)
    view = detect(img, board, lens)
    mm, deg = pose_error(view.T_cam_board, T)
    assert mm < 1.0 and deg < 0.3, (model, mm, deg)
    naive = detect(img, board, INTR)                 # the same image with the distortion ignored
    _, naive_deg = pose_error(naive.T_cam_board, T)
    assert naive_deg > max(0.5, 10 * deg) and naive.reprojection_px > 3 * view.reprojection_px, (model, naive_deg, deg)


def test_print_board_writes_the_board_at_the_printer_resolution(tmp_path, capsys):
    from spatial_manip.cli import main

    png = tmp_path / "board.png"
    assert main(["calibrate", "--print-board", str(png), "--dpi", "254"]) == 0
    img = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
    px = round(0.04 / 0.0254 * 254)                     # 400 px per 40 mm square at 254 dpi
    assert img.shape == (5 * px + px // 2 * 2, 7 * px + px // 2 * 2)
    assert "7x5 squares of 40 mm (280 x 200 mm) at 254 dpi" in capsys.readouterr().out
    corners, ids, _, _ = cv2.aruco.CharucoDetector(BoardConfig().cv_board()).detectBoard(img)
    assert ids is not None and len(ids) == 24          # every inner corner of the printed board


def test_unknown_methods_are_named(capsys):
    from spatial_manip.cli import main

    assert main(["calibrate", "--samples", "/nonexistent", "--methods", "park,magic"]) == 2
    assert "unknown methods ['magic']; choose from tsai, park, horaud, andreff, daniilidis, rw_shah, rw_li" \
        in capsys.readouterr().err
