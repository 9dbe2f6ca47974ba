"""The ChArUco board: geometry from config, detection, and its pose in the camera frame.

Board frame (OpenCV's): origin at the outer corner of the first square, x along the squares_x
direction, y along squares_y, z out of the printed face's back (right-handed, the camera sees the
board looking along +z). Corner ids run row by row, (squares_x - 1) per row.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import yaml

from spatial_manip.camera_model import CameraIntrinsics, project, undistort_points
from spatial_manip.transforms import apply, make_transform


class BoardError(ValueError):
    """The board config is malformed, or the board was not seen well enough for a pose."""


def _cv2():
    try:
        import cv2  # optional here: a missing or too old OpenCV gets the BoardError below
    except ImportError as e:  # the calibration is the only part of the stack that needs OpenCV
        raise BoardError("calibration needs OpenCV: pip install 'opencv-python-headless>=4.7'") from e
    if not hasattr(cv2, "aruco") or not hasattr(cv2.aruco, "CharucoDetector"):
        raise BoardError(f"OpenCV {cv2.__version__} has no cv2.aruco.CharucoDetector; "
                         "install opencv-python-headless >= 4.7")
    return cv2


@dataclass(frozen=True)
class BoardConfig:
    """A ChArUco board: `squares` (x, y) chessboard squares, sizes in metres, an ArUco dictionary
    name of cv2.aruco (e.g. DICT_5X5_100). `legacy_pattern` is for boards printed by OpenCV < 4.6
    with an even number of rows (their first square is white)."""

    squares_x: int = 7
    squares_y: int = 5
    square_m: float = 0.04
    marker_m: float = 0.03
    dictionary: str = "DICT_5X5_100"
    legacy_pattern: bool = False

    def __post_init__(self):
        if self.squares_x < 2 or self.squares_y < 2:
            raise BoardError(f"a ChArUco board needs at least 2x2 squares, got {self.squares_x}x{self.squares_y}")
        if not 0 < self.marker_m < self.square_m:
            raise BoardError(f"marker size must be positive and smaller than the square: marker_m={self.marker_m}, "
                             f"square_m={self.square_m} (metres; measure the printed board)")
        cv2 = _cv2()
        if not self.dictionary.startswith("DICT_") or not hasattr(cv2.aruco, self.dictionary):
            raise BoardError(f"unknown ArUco dictionary {self.dictionary!r}; use a cv2.aruco name such as "
                             "DICT_4X4_50, DICT_5X5_100, DICT_6X6_250 or DICT_ARUCO_ORIGINAL")
        n_markers = (self.squares_x * self.squares_y) // 2
        size = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary)).bytesList.shape[0]
        if n_markers > size:
            raise BoardError(f"{self.squares_x}x{self.squares_y} squares need {n_markers} markers but "
                             f"{self.dictionary} has only {size}; choose a larger dictionary")

    @classmethod
    def from_dict(cls, d: dict, where: str = "board") -> "BoardConfig":
        if not isinstance(d, dict):
            raise BoardError(f"{where}: expected a mapping with squares, square_m, marker_m, dictionary; got {d!r}")
        unknown = set(d) - {"squares", "square_m", "marker_m", "dictionary", "legacy_pattern"}
        if unknown:
            raise BoardError(f"{where}: unknown keys {sorted(unknown)}; expected squares, square_m, marker_m, "
                             "dictionary, legacy_pattern")
        try:
            sx, sy = (int(v) for v in d.get("squares", (7, 5)))
            return cls(sx, sy, float(d.get("square_m", 0.04)), float(d.get("marker_m", 0.03)),
                       str(d.get("dictionary", "DICT_5X5_100")), bool(d.get("legacy_pattern", False)))
        except (TypeError, ValueError) as e:
            if isinstance(e, BoardError):
                raise
            raise BoardError(f"{where}: squares must be two integers [x, y] and sizes numbers in metres: {e}") from e

    def to_dict(self) -> dict:
        return {"squares": [self.squares_x, self.squares_y], "square_m": self.square_m,
                "marker_m": self.marker_m, "dictionary": self.dictionary, "legacy_pattern": self.legacy_pattern}

    @property
    def size_m(self) -> tuple[float, float]:
        return self.squares_x * self.square_m, self.squares_y * self.square_m

    @property
    def center(self) -> np.ndarray:
        """The board's centre in the board frame: residuals are measured there, not at a corner."""
        w, h = self.size_m
        return np.array([w / 2, h / 2, 0.0])

    def cv_board(self):
        cv2 = _cv2()
        board = cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_m, self.marker_m,
                                       cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary)))
        board.setLegacyPattern(self.legacy_pattern)
        return board

    def image(self, px_per_square: int = 100, margin_px: int = 0) -> np.ndarray:
        """The printable board (uint8 grey), exactly `px_per_square` pixels per square."""
        w, h = self.squares_x * px_per_square, self.squares_y * px_per_square
        return self.cv_board().generateImage((w + 2 * margin_px, h + 2 * margin_px), marginSize=margin_px, borderBits=1)


def load_board_file(path: str | Path) -> tuple[BoardConfig, dict]:
    """(board, the rest of the file: bounds, pairing) from a YAML file such as config/calibration/charuco.yaml."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError as e:
        raise BoardError(f"board config {path} does not exist; start from config/calibration/charuco.yaml") from e
    if not isinstance(data, dict) or "board" not in data:
        raise BoardError(f"{path}: expected a mapping with a 'board' section (see config/calibration/charuco.yaml)")
    return BoardConfig.from_dict(data["board"], f"{path}: board"), {k: v for k, v in data.items() if k != "board"}


@dataclass(frozen=True)
class BoardView:
    """One detection: ChArUco corners (N, 2) pixels with their ids, their board points (N, 3), and
    the board pose T_cam_board from solvePnP with its RMS reprojection error."""

    ids: np.ndarray
    corners_px: np.ndarray
    object_points: np.ndarray
    T_cam_board: np.ndarray
    reprojection_px: float


@lru_cache(maxsize=8)      # a board's detector is built once, not per image
def _detector(board: BoardConfig):
    cv2 = _cv2()
    params = cv2.aruco.DetectorParameters()
    # sub-pixel marker corners: the ChArUco corners are interpolated from them before their own
    # cornerSubPix refinement, so a better start means fewer corners refined to the wrong saddle
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    charuco = cv2.aruco.CharucoParameters()
    charuco.tryRefineMarkers = True   # recover markers missed at first from the board's layout
    return cv2.aruco.CharucoDetector(board.cv_board(), charuco, params)


def _grey(image: np.ndarray) -> np.ndarray:
    cv2 = _cv2()
    img = np.asarray(image)
    if img.ndim == 3:
        return cv2.cvtColor(img, cv2.COLOR_RGB2GRAY if img.shape[2] == 3 else cv2.COLOR_RGBA2GRAY)
    return img


def detect(image: np.ndarray, board: BoardConfig, intr: CameraIntrinsics, *, min_corners: int = 6) -> BoardView:
    """Find the board in an RGB (or grey) image and its pose in the camera frame.

    Raises BoardError when fewer than `min_corners` corners are seen or they are collinear (a
    pose from them would be unreliable: skip that image)."""
    _cv2()      # a clear BoardError when this OpenCV has no ArUco module
    img = _grey(image)
    if img.shape[:2] != (intr.height, intr.width):
        raise BoardError(f"image is {img.shape[1]}x{img.shape[0]} but the intrinsics are {intr.width}x{intr.height}; "
                         "use the camera_info of the stream the images come from")
    det = _detector(board)
    corners, ids, _, _ = det.detectBoard(img)
    n = 0 if ids is None else len(ids)
    if n < min_corners:
        raise BoardError(f"{n} ChArUco corners seen, need at least {min_corners}: bring the whole board into view, "
                         "closer, with less glare")
    ids = ids.reshape(-1)
    corners = corners.reshape(-1, 2).astype(np.float64)
    cv_board = det.getBoard()
    obj = cv_board.getChessboardCorners()[ids].astype(np.float64)
    if cv_board.checkCharucoCornersCollinear(ids.reshape(-1, 1)):
        raise BoardError(f"the {n} corners seen lie on one line: no pose; show more of the board")
    T, err = board_pose(obj, corners, intr)
    return BoardView(ids=ids, corners_px=corners, object_points=obj, T_cam_board=T, reprojection_px=err)


def board_pose(object_points: np.ndarray, corners_px: np.ndarray, intr: CameraIntrinsics) -> tuple[np.ndarray, float]:
    """T_cam_board from planar correspondences: IPPE (closed form for planes) refined by
    Levenberg-Marquardt; returns it with the RMS reprojection error in pixels."""
    cv2 = _cv2()
    K, dist, pts = _camera_for_cv(intr, corners_px)
    ok, rvec, tvec = cv2.solvePnP(object_points, pts, K, dist, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise BoardError("solvePnP found no board pose from the detected corners")
    rvec, tvec = cv2.solvePnPRefineLM(object_points, pts, K, dist, rvec, tvec)
    proj, _ = cv2.projectPoints(object_points, rvec, tvec, K, dist)
    err = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - pts) ** 2, axis=1))))
    return make_transform(cv2.Rodrigues(rvec)[0], tvec.reshape(3)), err


def _camera_for_cv(intr: CameraIntrinsics, pixels: np.ndarray):
    """K, distortion and pixels as OpenCV wants them. OpenCV's model is plumb_bob; the
    RealSense inverse model is removed from the pixels first, so OpenCV sees an ideal camera."""
    pts = np.asarray(pixels, np.float64).reshape(-1, 2)
    if intr.distortion_model == "plumb_bob":
        return intr.K, np.asarray(intr.distortion, np.float64), pts
    return intr.K, np.zeros(5), undistort_points(pts, intr)


def project_board_points(T_cam_board: np.ndarray, object_points: np.ndarray, intr: CameraIntrinsics) -> np.ndarray:
    """Pixels (N, 2) of board points seen from T_cam_board, with the camera's distortion."""
    uv, _ = project(apply(T_cam_board, object_points), intr)
    return uv
