"""Hand-eye calibration loaded from YAML: where the camera is in the robot base frame.

Two set-ups (see config/calibration/eye_to_hand.example.yaml):

- eye-to-hand: the camera is fixed in the cell; the file gives `T_base_camera`.
- eye-in-hand: the camera rides on the flange; the file gives `T_tool0_camera`, and the camera
  pose is `T_base_tool0 @ T_tool0_camera` for the current tool pose.

A transform is written either as `matrix` (4x4, row-major) or as `translation` (metres) plus one
rotation: `rotation_xyzw` (ROS quaternion order), `rotvec` (UR axis*angle, radians) or `rpy`
(fixed-axis roll, pitch, yaw in radians). The camera frame is the colour optical frame
(x right, y down, z forward).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.errors import ConfigError
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import make_transform
from spatial_manip.config import read_yaml

MODES = ("eye_to_hand", "eye_in_hand")


# A camera further than this from its mount is a translation written in millimetres (1200 for
# 1.2 m), not a cell: a UR5's reach is 0.85 m and a cell's camera stands within a metre or two.
MAX_TRANSLATION_M = 3.0
ROTATIONS = {"rotation_xyzw": 4, "rotvec": 3, "rpy": 3}


class CalibrationError(ConfigError, ValueError):
    """A calibration file or dict is malformed; the message names the file, the key and the value.
    A ValueError too, for the callers that catch one."""


def transform_from_dict(d, where: str) -> np.ndarray:
    """A 4x4 rigid transform from one of the YAML spellings described in the module docstring."""
    if not isinstance(d, dict):
        raise CalibrationError(f"{where}: expected a mapping with 'matrix' or 'translation' + rotation, got {d!r}")
    if "matrix" in d:
        T = _numbers(d, "matrix", 16, where).reshape(4, 4)
        _check_rigid(T, where)
        _check_translation(T[:3, 3], f"{where}.matrix")
        return T
    rotations = [k for k in ROTATIONS if k in d]
    unknown = sorted(set(d) - {"translation", *ROTATIONS})
    if unknown:
        raise CalibrationError(f"{where}: unknown key {unknown[0]!r} (value {d[unknown[0]]!r}); a transform is 'matrix', or "
                               f"'translation' plus one of {', '.join(ROTATIONS)}")
    if "translation" not in d or len(rotations) != 1:
        raise CalibrationError(f"{where}: give 'translation' (metres) and one rotation as 'rotation_xyzw', "
                               f"'rotvec' or 'rpy' (or a 'matrix'); got keys {sorted(d)}")
    t = _numbers(d, "translation", 3, where)
    _check_translation(t, f"{where}.translation")
    key = rotations[0]
    r = _numbers(d, key, ROTATIONS[key], where)
    if key == "rotation_xyzw" and not 0.5 < np.linalg.norm(r) < 1.5:
        raise CalibrationError(f"{where}.rotation_xyzw: {r.tolist()} is not a unit quaternion (x y z w, length 1)")
    R = {"rotation_xyzw": Rotation.from_quat, "rotvec": Rotation.from_rotvec,
         "rpy": lambda v: Rotation.from_euler("xyz", v)}[key](r).as_matrix()
    return make_transform(R, t)


def _numbers(d: dict, key: str, n: int, where: str) -> np.ndarray:
    """`d[key]` as n finite numbers, refused by key and value."""
    try:
        v = np.asarray(d[key], float).reshape(-1)
    except (TypeError, ValueError):
        raise CalibrationError(f"{where}.{key}: {d[key]!r} is not a list of {n} numbers") from None
    if v.size != n or not np.all(np.isfinite(v)):
        raise CalibrationError(f"{where}.{key}: {d[key]!r} is not {n} finite numbers")
    return v


def _check_translation(t: np.ndarray, key: str) -> None:
    if np.linalg.norm(t) > MAX_TRANSLATION_M:
        raise CalibrationError(f"{key}: {t.tolist()} is {np.linalg.norm(t):.1f} m from the mount, over "
                               f"{MAX_TRANSLATION_M} m: translations are metres (millimetres?)")


def _check_rigid(T: np.ndarray, where: str) -> None:
    R = T[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-4) or np.linalg.det(R) < 0 or not np.allclose(T[3], [0, 0, 0, 1]):
        raise CalibrationError(f"{where}.matrix: not a rigid transform (rotation must be orthonormal, last row 0 0 0 1)")


@dataclass(frozen=True)
class HandEyeCalibration:
    """The camera's mounting. `T_mount_camera` is T_base_camera (eye-to-hand) or T_tool0_camera
    (eye-in-hand)."""

    mode: str
    T_mount_camera: np.ndarray
    camera_frame: str = "camera_color_optical_frame"
    intrinsics: CameraIntrinsics | None = None
    source: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.mode not in MODES:
            raise CalibrationError(f"{self.source or '<dict>'}: mode: {self.mode!r} is not one of {', '.join(MODES)}")

    @property
    def eye_in_hand(self) -> bool:
        return self.mode == "eye_in_hand"

    def T_base_camera(self, T_base_tool0: np.ndarray | None = None) -> np.ndarray:
        """The camera's pose in the base frame; eye-in-hand needs the current flange pose."""
        if not self.eye_in_hand:
            return np.array(self.T_mount_camera, float)
        if T_base_tool0 is None:
            raise CalibrationError("an eye-in-hand camera's pose needs the current T_base_tool0 "
                                   "(the flange pose from /tcp_pose_broadcaster/pose or the arm)")
        return np.asarray(T_base_tool0, float).reshape(4, 4) @ self.T_mount_camera

    @classmethod
    def from_dict(cls, d: dict, source: str = "<dict>") -> "HandEyeCalibration":
        if not isinstance(d, dict):
            raise CalibrationError(f"{source}: a calibration must be a mapping, got {type(d).__name__}")
        mode = d.get("mode")
        if mode is None:  # infer from which transform is present
            mode = "eye_in_hand" if "T_tool0_camera" in d else "eye_to_hand"
        key = "T_tool0_camera" if mode == "eye_in_hand" else "T_base_camera"
        if key not in d:
            raise CalibrationError(f"{source}: mode {mode!r} needs the key {key!r}")
        intr = None
        if d.get("camera_info") is not None:
            try:
                intr = CameraIntrinsics.from_camera_info(d["camera_info"])
            except ValueError as e:
                raise CalibrationError(f"{source}: camera_info: {e}") from e
        known = {"mode", key, "camera_frame", "camera_info"}
        return cls(mode=mode, T_mount_camera=transform_from_dict(d[key], f"{source}: {key}"),
                   camera_frame=str(d.get("camera_frame", "camera_color_optical_frame")),
                   intrinsics=intr, source=source, extra={k: v for k, v in d.items() if k not in known})

    def to_dict(self) -> dict:
        key = "T_tool0_camera" if self.eye_in_hand else "T_base_camera"
        d = {"mode": self.mode, key: {"matrix": np.asarray(self.T_mount_camera).tolist()},
             "camera_frame": self.camera_frame}
        if self.intrinsics is not None:
            d["camera_info"] = self.intrinsics.to_camera_info()
        d.update(self.extra)
        return d


def load_calibration(path: str | Path) -> HandEyeCalibration:
    """Read a hand-eye calibration YAML file (format in the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise CalibrationError(f"calibration file {path} does not exist; copy "
                               f"config/calibration/eye_to_hand.example.yaml and edit it")
    try:
        data = read_yaml(path)
    except ConfigError as e:
        raise CalibrationError(e.message) from e
    return HandEyeCalibration.from_dict(data, source=str(path))
