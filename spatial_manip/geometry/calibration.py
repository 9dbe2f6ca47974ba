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

from spatial_manip.geometry.camera import CameraIntrinsics
from spatial_manip.geometry.transforms import make_transform

MODES = ("eye_to_hand", "eye_in_hand")


class CalibrationError(ValueError):
    """A calibration file or dict is malformed; the message names the key and the file."""


def transform_from_dict(d, where: str) -> np.ndarray:
    """A 4x4 rigid transform from one of the YAML spellings described in the module docstring."""
    if not isinstance(d, dict):
        raise CalibrationError(f"{where}: expected a mapping with 'matrix' or 'translation' + rotation, got {d!r}")
    try:
        if "matrix" in d:
            T = np.asarray(d["matrix"], float).reshape(4, 4)
        else:
            t = np.asarray(d.get("translation", [0, 0, 0]), float).reshape(3)
            if "rotation_xyzw" in d:
                R = Rotation.from_quat(np.asarray(d["rotation_xyzw"], float).reshape(4)).as_matrix()
            elif "rotvec" in d:
                R = Rotation.from_rotvec(np.asarray(d["rotvec"], float).reshape(3)).as_matrix()
            elif "rpy" in d:
                R = Rotation.from_euler("xyz", np.asarray(d["rpy"], float).reshape(3)).as_matrix()
            else:
                raise CalibrationError(f"{where}: give a rotation as 'rotation_xyzw', 'rotvec' or 'rpy' (or a 'matrix')")
            T = make_transform(R, t)
    except (TypeError, ValueError) as e:
        if isinstance(e, CalibrationError):
            raise
        raise CalibrationError(f"{where}: could not read a transform from {d!r}: {e}") from e
    R = T[:3, :3]
    if not np.all(np.isfinite(T)) or not np.allclose(R.T @ R, np.eye(3), atol=1e-4) or np.linalg.det(R) < 0 \
            or not np.allclose(T[3], [0, 0, 0, 1]):
        raise CalibrationError(f"{where}: not a rigid transform (rotation must be orthonormal, last row 0 0 0 1)")
    return T


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
            raise CalibrationError(f"calibration mode must be one of {MODES}, got {self.mode!r}")

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
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError as e:
        raise CalibrationError(f"calibration file {path} does not exist; copy "
                               f"config/calibration/eye_to_hand.example.yaml and edit it") from e
    except yaml.YAMLError as e:
        raise CalibrationError(f"calibration file {path} is not valid YAML: {e}") from e
    return HandEyeCalibration.from_dict(data, source=str(path))
