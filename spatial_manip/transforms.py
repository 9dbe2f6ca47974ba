"""Rigid transforms: the one place quaternions, rotation vectors and 4x4 matrices meet.

Conventions: quaternions are [qx, qy, qz, qw] (ROS order); rotation vectors are UR's
[rx, ry, rz] (axis * angle); a transform `T_a_b` maps points in frame b to frame a
(p_a = T_a_b @ p_b), so `T_base_cam` is the camera's pose in the base frame.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def make_transform(R=None, t=None) -> np.ndarray:
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = np.asarray(R, float).reshape(3, 3)
    if t is not None:
        T[:3, 3] = np.asarray(t, float).reshape(3)
    return T


def invert(T: np.ndarray) -> np.ndarray:
    R, t = T[:3, :3], T[:3, 3]
    return make_transform(R.T, -R.T @ t)


def apply(T: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Transform (N, 3) points (or one (3,) point) by a 4x4 matrix."""
    p = np.asarray(points, float)
    return p @ T[:3, :3].T + T[:3, 3]


def quat_to_matrix(q) -> np.ndarray:
    return Rotation.from_quat(np.asarray(q, float)).as_matrix()


def matrix_to_quat(R) -> np.ndarray:
    return Rotation.from_matrix(np.asarray(R, float)).as_quat()


def pose_to_matrix(position, quat_xyzw) -> np.ndarray:
    return make_transform(quat_to_matrix(quat_xyzw), position)


def matrix_to_pose(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position, quaternion xyzw) of a 4x4 transform."""
    return T[:3, 3].copy(), matrix_to_quat(T[:3, :3])


def rotvec_pose_to_matrix(pose6) -> np.ndarray:
    """UR pose [x, y, z, rx, ry, rz] to a 4x4 transform."""
    p = np.asarray(pose6, float).reshape(6)
    return make_transform(Rotation.from_rotvec(p[3:]).as_matrix(), p[:3])


def matrix_to_rotvec_pose(T: np.ndarray) -> np.ndarray:
    """4x4 transform to a UR pose [x, y, z, rx, ry, rz]."""
    return np.concatenate([T[:3, 3], Rotation.from_matrix(T[:3, :3]).as_rotvec()])


def rotation_angle(R_a, R_b) -> float:
    """Angle in radians of the rotation taking R_a to R_b."""
    return float(np.linalg.norm(Rotation.from_matrix(np.asarray(R_a).T @ np.asarray(R_b)).as_rotvec()))


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Fixed-axis x-y-z (roll about x, then pitch about y, then yaw about z)."""
    return Rotation.from_euler("xyz", [roll, pitch, yaw]).as_matrix()


_CORNER_SIGNS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


def box_corners(center, size, rotation) -> np.ndarray:
    """The 8 corners (8, 3) of a box of extents `size` along the columns of `rotation`, centred
    at `center`; x-major order (the x sign changes slowest)."""
    return np.asarray(center, float) + (_CORNER_SIGNS * (np.asarray(size, float) / 2)) @ np.asarray(rotation, float).T


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """T_base_cam of an optical frame (x right, y down, z forward) at `eye` looking at `target`
    (straight down: x along -y)."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, float))
    if np.linalg.norm(x) < 1e-6:
        x = np.array([0.0, -1.0, 0.0])
    x /= np.linalg.norm(x)
    return make_transform(np.stack([x, np.cross(z, x), z], axis=1), eye)
