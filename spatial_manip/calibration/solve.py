"""Solve hand-eye from paired poses with every OpenCV method, reject outliers, report residuals.

Unknowns, per set-up (names as geometry/calibration.py stores them):

- eye_to_hand: X = T_base_camera (camera fixed), Y = T_tool0_board (board in the gripper);
  each sample predicts T_cam_board = inv(X) @ T_base_tool0 @ Y.
- eye_in_hand: X = T_tool0_camera (camera on the flange), Y = T_base_board (board on the table);
  each sample predicts T_cam_board = inv(T_base_tool0 @ X) @ Y.

A sample's residual compares that prediction with the board pose solvePnP measured: the distance
between the two board centres (mm) and the angle between the two orientations (degrees).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.transforms import apply, invert, make_transform, rotation_angle

MODES = ("eye_to_hand", "eye_in_hand")


class HandEyeError(ValueError):
    """Too few or degenerate samples, or an unknown method or mode."""


def _hand_eye_methods() -> dict:
    return {"tsai": cv2.CALIB_HAND_EYE_TSAI, "park": cv2.CALIB_HAND_EYE_PARK,
            "horaud": cv2.CALIB_HAND_EYE_HORAUD, "andreff": cv2.CALIB_HAND_EYE_ANDREFF,
            "daniilidis": cv2.CALIB_HAND_EYE_DANIILIDIS}


def _robot_world_methods() -> dict:
    return {"shah": cv2.CALIB_ROBOT_WORLD_HAND_EYE_SHAH, "li": cv2.CALIB_ROBOT_WORLD_HAND_EYE_LI}


METHODS = ("tsai", "park", "horaud", "andreff", "daniilidis", "rw_shah", "rw_li")
MIN_SAMPLES = 3   # OpenCV's own minimum; guidance asks for many more


def _split(Ts):
    return [T[:3, :3] for T in Ts], [T[:3, 3].reshape(3, 1) for T in Ts]


def _check(mode: str, T_base_tool0, T_cam_board) -> None:
    if mode not in MODES:
        raise HandEyeError(f"mode must be one of {MODES}, got {mode!r}")
    if len(T_base_tool0) != len(T_cam_board):
        raise HandEyeError(f"{len(T_base_tool0)} robot poses but {len(T_cam_board)} board poses: pair them first")
    if len(T_base_tool0) < MIN_SAMPLES:
        raise HandEyeError(f"hand-eye needs at least {MIN_SAMPLES} samples, got {len(T_base_tool0)}")


def solve_x(method: str, mode: str, T_base_tool0, T_cam_board) -> np.ndarray:
    """X (T_base_camera or T_tool0_camera) by one OpenCV method."""
    _check(mode, T_base_tool0, T_cam_board)
    if method.startswith("rw_"):
        return _solve_robot_world(method[3:], mode, T_base_tool0, T_cam_board)
    if method not in _hand_eye_methods():
        raise HandEyeError(f"unknown method {method!r}; choose from {METHODS}")
    # calibrateHandEye solves eye-in-hand (gripper->base, target->cam gives cam->gripper). For
    # eye-to-hand the same equation holds with the base and gripper swapped: pass base->gripper
    # and it returns cam->base, i.e. T_base_camera.
    robot = T_base_tool0 if mode == "eye_in_hand" else [invert(T) for T in T_base_tool0]
    Rg, tg = _split(robot)
    Rc, tc = _split(T_cam_board)
    try:
        R, t = cv2.calibrateHandEye(Rg, tg, Rc, tc, method=_hand_eye_methods()[method])
    except cv2.error as e:
        raise HandEyeError(f"OpenCV's {method} failed: {str(e).strip().splitlines()[-1]}") from e
    return _rigid(R, t)


def _solve_robot_world(name: str, mode: str, T_base_tool0, T_cam_board) -> np.ndarray:
    """calibrateRobotWorldHandEye solves T_c_w = T_c_g T_g_b T_b_w and returns (T_w_b, T_c_g)
    (checked numerically). Eye-in-hand: world = board. Eye-to-hand: the roles of the camera and
    the world swap (the board is the 'camera' seeing the fixed camera as 'world')."""
    if name not in _robot_world_methods():
        raise HandEyeError(f"unknown robot-world method rw_{name}; choose rw_shah or rw_li")
    Rg, tg = _split([invert(T) for T in T_base_tool0])
    seen = T_cam_board if mode == "eye_in_hand" else [invert(T) for T in T_cam_board]
    Rw, tw = _split(seen)
    try:
        R_wb, t_wb, R_cg, t_cg = cv2.calibrateRobotWorldHandEye(Rw, tw, Rg, tg, method=_robot_world_methods()[name])
    except cv2.error as e:
        raise HandEyeError(f"OpenCV's rw_{name} failed: {str(e).strip().splitlines()[-1]}") from e
    if mode == "eye_in_hand":
        return invert(_rigid(R_cg, t_cg))
    return invert(_rigid(R_wb, t_wb))


def _rigid(R, t) -> np.ndarray:
    R = np.asarray(R, float)
    if not np.all(np.isfinite(R)) or not np.all(np.isfinite(t)):
        raise HandEyeError("the solver returned no finite transform: the samples are degenerate "
                           "(too little rotation between poses, or all about one axis)")
    U, _, Vt = np.linalg.svd(R)      # some methods return a matrix a little off orthonormal
    return make_transform(U @ np.diag([1, 1, np.linalg.det(U @ Vt)]) @ Vt, np.asarray(t, float).reshape(3))


def predicted_cam_board(mode: str, X: np.ndarray, Y: np.ndarray, T_base_tool0: np.ndarray) -> np.ndarray:
    if mode == "eye_to_hand":
        return invert(X) @ T_base_tool0 @ Y
    return invert(T_base_tool0 @ X) @ Y


def estimate_y(mode: str, X: np.ndarray, T_base_tool0, T_cam_board) -> np.ndarray:
    """The other unknown (T_tool0_board or T_base_board) as the mean over samples given X."""
    if mode == "eye_to_hand":
        Ys = [invert(B) @ X @ C for B, C in zip(T_base_tool0, T_cam_board)]
    else:
        Ys = [B @ X @ C for B, C in zip(T_base_tool0, T_cam_board)]
    R = Rotation.from_matrix([Y[:3, :3] for Y in Ys]).mean().as_matrix()
    return make_transform(R, np.mean([Y[:3, 3] for Y in Ys], axis=0))


def residuals(mode: str, X, Y, T_base_tool0, T_cam_board, center) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: board-centre distance (mm) and orientation angle (degrees), predicted vs seen."""
    mm, deg = [], []
    for B, C in zip(T_base_tool0, T_cam_board):
        P = predicted_cam_board(mode, X, Y, B)
        mm.append(1000.0 * float(np.linalg.norm(apply(P, center) - apply(C, center))))
        deg.append(float(np.degrees(rotation_angle(P[:3, :3], C[:3, :3]))))
    return np.array(mm), np.array(deg)


@dataclass(frozen=True)
class MethodResult:
    method: str
    X: np.ndarray
    Y: np.ndarray
    residual_mm: np.ndarray
    residual_deg: np.ndarray

    @property
    def rms_mm(self) -> float:
        return float(np.sqrt(np.mean(self.residual_mm ** 2)))

    @property
    def rms_deg(self) -> float:
        return float(np.sqrt(np.mean(self.residual_deg ** 2)))

    def score(self, mm_per_deg: float = 5.0) -> float:
        """One number to rank methods: 1 degree counts as `mm_per_deg` millimetres."""
        return self.rms_mm + mm_per_deg * self.rms_deg


def solve_method(method: str, mode: str, T_base_tool0, T_cam_board, center) -> MethodResult:
    X = solve_x(method, mode, T_base_tool0, T_cam_board)
    Y = estimate_y(mode, X, T_base_tool0, T_cam_board)
    mm, deg = residuals(mode, X, Y, T_base_tool0, T_cam_board, center)
    return MethodResult(method, X, Y, mm, deg)


def spread(results: list[MethodResult]) -> tuple[float, float]:
    """Largest pairwise difference between methods' X: translation (mm), rotation (degrees)."""
    mm = deg = 0.0
    for a, b in combinations(results, 2):
        mm = max(mm, 1000.0 * float(np.linalg.norm(a.X[:3, 3] - b.X[:3, 3])))
        deg = max(deg, float(np.degrees(rotation_angle(a.X[:3, :3], b.X[:3, :3]))))
    return mm, deg


@dataclass
class HandEyeSolution:
    mode: str
    best: MethodResult
    methods: dict[str, MethodResult]
    inliers: list[int]                    # indices into the samples given
    rejected: dict[int, str] = field(default_factory=dict)   # index -> why
    spread_mm: float = 0.0
    spread_deg: float = 0.0
    failed: dict[str, str] = field(default_factory=dict)      # method -> error


def solve_all(mode: str, T_base_tool0, T_cam_board, center, methods=METHODS) -> tuple[dict, dict]:
    """Every method that succeeds (name -> MethodResult), and those that failed (name -> why)."""
    ok, failed = {}, {}
    for m in methods:
        try:
            ok[m] = solve_method(m, mode, T_base_tool0, T_cam_board, center)
        except (cv2.error, HandEyeError, np.linalg.LinAlgError, ValueError) as e:
            failed[m] = str(e).strip().splitlines()[-1]
    if not ok:
        raise HandEyeError(f"every hand-eye method failed on these samples: {failed}")
    return ok, failed


def reject_outliers(mode: str, T_base_tool0, T_cam_board, center, *, floor_mm: float = 2.0,
                    floor_deg: float = 0.5, k_mad: float = 4.0, max_fraction: float = 0.25,
                    method: str = "park") -> tuple[list[int], dict[int, str]]:
    """Drop the worst sample while it stands out from the rest, one at a time, refitting after
    each: a sample stands out when its residual is above both an absolute floor (noise every
    real set has: a 28 cm board at 0.6-1 m gives solvePnP orientations good to 0.1-0.3 degrees
    only, so a lower floor throws away good samples) and median + k_mad * MAD of the others. Stops after `max_fraction` of the
    samples: beyond that the set, not a sample, is bad, and the bounds check says so."""
    keep = list(range(len(T_base_tool0)))
    rejected: dict[int, str] = {}
    while len(rejected) < int(max_fraction * len(T_base_tool0)) and len(keep) > MIN_SAMPLES + 1:
        r = solve_method(method, mode, [T_base_tool0[i] for i in keep], [T_cam_board[i] for i in keep], center)
        worst = _worst_outlier(r, floor_mm, floor_deg, k_mad)
        if worst is None:
            break
        idx = keep.pop(worst)
        rejected[idx] = f"outlier: {r.residual_mm[worst]:.1f} mm, {r.residual_deg[worst]:.2f} deg"
    return keep, rejected


def _worst_outlier(r: MethodResult, floor_mm: float, floor_deg: float, k_mad: float) -> int | None:
    def limit(v, floor):
        med = np.median(v)
        return max(floor, med + k_mad * 1.4826 * np.median(np.abs(v - med)))

    over = np.maximum(r.residual_mm / limit(r.residual_mm, floor_mm), r.residual_deg / limit(r.residual_deg, floor_deg))
    worst = int(np.argmax(over))
    return worst if over[worst] > 1.0 else None


def calibrate_hand_eye(mode: str, T_base_tool0, T_cam_board, center, *, methods=METHODS,
                       reject: bool = True, **reject_kw) -> HandEyeSolution:
    """Outlier rejection, then every method on the inliers; the best is the lowest residual score."""
    _check(mode, T_base_tool0, T_cam_board)
    keep, rejected = (reject_outliers(mode, T_base_tool0, T_cam_board, center, **reject_kw) if reject
                      else (list(range(len(T_base_tool0))), {}))
    B = [T_base_tool0[i] for i in keep]
    C = [T_cam_board[i] for i in keep]
    ok, failed = solve_all(mode, B, C, center, methods)
    best = min(ok.values(), key=lambda r: r.score())
    s_mm, s_deg = spread(list(ok.values()))
    return HandEyeSolution(mode, best, ok, keep, rejected, s_mm, s_deg, failed)
