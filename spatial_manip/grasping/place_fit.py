"""Setting a held object down the way it is actually held.

The planner says where the object goes and in which pose class (upright, flat, tilted); the
rotation it proposes ignores the grasp. Held by one edge across its thickness, a book set down
with that rotation may need the lower finger inside the table. `fit_place` searches the rotations
of the object (its 24 axis-aligned turns, each yawed in steps) that keep the asked pose class,
sets each on the support at the asked position, and keeps the one closest to the asked rotation
whose fingers stay above the support and whose TCP and pre-place pose the arm reaches.
"""
from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np

from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.relations import book_pose_class
from spatial_manip.geometry.transforms import rotation_angle, rpy_to_matrix
from spatial_manip.grasping.gripper import GripperGeometry

DROP_M = 0.004          # release this far above the support
CLEARANCE_M = 0.003     # the lowest finger point stays this far above the support


def _axis_turns() -> list[np.ndarray]:
    """The 24 proper rotations that map the coordinate axes onto signed coordinate axes."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            R = np.zeros((3, 3))
            for col, (row, s) in enumerate(zip(perm, signs)):
                R[row, col] = s
            if np.linalg.det(R) > 0.5:
                out.append(R)
    return out


AXIS_TURNS = _axis_turns()


def finger_points(T_tcp: np.ndarray, width_m: float, gripper: GripperGeometry) -> np.ndarray:
    """Corners of both fingers (TCP frame: z approach, y closing; the TCP is between the tips)."""
    half = width_m / 2.0
    pts = []
    for s, dz, dx in itertools.product((-1.0, 1.0), (0.0, -gripper.finger_length_m), (-1.0, 1.0)):
        for dy in (half, half + gripper.finger_thickness_m):
            pts.append([dx * gripper.finger_height_m / 2.0, s * dy, dz])
    pts = np.asarray(pts)
    return pts @ T_tcp[:3, :3].T + T_tcp[:3, 3]


def fit_place(T_place: np.ndarray, size, T_obj_tcp: np.ndarray, *, width_m: float,
              gripper: GripperGeometry | None = None, kinematics=None, approach_m: float = 0.10,
              yaw_step_deg: float = 15.0) -> tuple[np.ndarray, np.ndarray]:
    """(T_obj, T_tcp) for setting the held object down at T_place's position.

    `T_place`: the planner's object pose (its rotation gives the pose class and the preferred
    facing; the support is under its lowest point). `T_obj_tcp`: the grasp, inv(T_obj) @ T_tcp.
    Raises UnreachableError when no rotation works."""
    gripper = gripper or GripperGeometry()
    size = np.asarray(size, float)
    T_place = np.asarray(T_place, float)
    R0, p0 = T_place[:3, :3], T_place[:3, 3]
    want = book_pose_class(SimpleNamespace(rotation=R0, size=size))
    support_z = p0[2] - float(np.abs(R0.T[:, 2]) @ (size / 2))   # R0.T[:, 2] = world up in object axes
    cands = []
    for P, yaw in itertools.product(AXIS_TURNS, np.arange(0.0, 360.0, yaw_step_deg)):
        R = rpy_to_matrix(0.0, 0.0, math.radians(yaw)) @ R0 @ P
        if book_pose_class(SimpleNamespace(rotation=R, size=size)) != want:
            continue
        cands.append((rotation_angle(R, R0), R))
    cands.sort(key=lambda c: c[0])
    n_low = n_ik = 0
    for _, R in cands:
        center = np.array([p0[0], p0[1], support_z + float(np.abs(R.T[:, 2]) @ (size / 2)) + DROP_M])
        T_obj = np.eye(4)
        T_obj[:3, :3], T_obj[:3, 3] = R, center
        T_tcp = T_obj @ T_obj_tcp
        if finger_points(T_tcp, width_m, gripper)[:, 2].min() < support_z + CLEARANCE_M:
            n_low += 1
            continue
        pre = T_tcp.copy()
        pre[:3, 3] -= approach_m * T_tcp[:3, 2]
        if kinematics is not None and not (kinematics.ik_all(T_tcp) and kinematics.ik_all(pre)):
            n_ik += 1
            continue
        return T_obj, T_tcp
    raise UnreachableError(
        f"the held object cannot be set down {want} at {np.round(p0, 3).tolist()} as it is held: of "
        f"{len(cands)} rotations, {n_low} put a finger into the support and {n_ik} have no arm IK solution")
