"""Automatic pose set for eye-in-hand calibration: flange poses from which a camera on the flange
sees a board lying on the table, spread over the rotations hand-eye needs, each inside the arm's
safety envelope (control.safety: workspace box, keep-out boxes, table height, IK within the
joint limits), ordered so the arm travels little between them.

Only rough knowledge is needed: where the board lies (a few cm off is fine) and the camera's
nominal mounting (from the bracket's drawing); the calibration then measures the real one. The
set is deterministic: the same inputs give the same poses, so a failed run can be repeated.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.control.kinematics import URKinematics
from spatial_manip.errors import UnreachableError
from spatial_manip.transforms import invert, look_at, make_transform

GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))    # spreads azimuths evenly whatever their number


def viewpoints(board_center, *, n: int, distance_m=(0.35, 0.5), max_tilt_deg: float = 35.0,
               max_roll_deg: float = 35.0) -> list[np.ndarray]:
    """`n` camera poses (T_base_camera) on a spherical cap above the board, looking at its centre:
    tilts from 0 to max_tilt off the vertical at golden-angle azimuths, distances and rolls
    alternating, so consecutive poses differ about all three axes."""
    c = np.asarray(board_center, float)
    out = []
    for k in range(n):
        tilt = math.radians(max_tilt_deg) * math.sqrt((k + 0.5) / n)     # even over the cap's area
        az = k * GOLDEN_ANGLE
        direction = [math.sin(tilt) * math.cos(az), math.sin(tilt) * math.sin(az), math.cos(tilt)]
        dist = distance_m[k % 2]
        roll = math.radians(max_roll_deg) * (1 if k % 3 == 0 else -1 if k % 3 == 1 else 0)
        T = look_at(c + dist * np.asarray(direction), c, up=(1.0, 0.0, 0.0))
        out.append(T @ make_transform(Rotation.from_rotvec([0, 0, roll]).as_matrix()))
    return out


def eye_in_hand_pose_set(board_center, T_tool0_camera, kin: URKinematics, *, n: int = 15, q_ref=None,
                         envelope=None, candidates: int = 40, **view_kw) -> list[np.ndarray]:
    """Joint configurations (n of them) for the automatic mode, in the order to visit them.

    `envelope` is a control.safety.SafetyEnvelope (its TCP checks and IK); without one, only IK
    within `kin`'s joint limits is checked. Raises UnreachableError when fewer than n are safe."""
    q_ref = np.zeros(6) if q_ref is None else np.asarray(q_ref, float)
    feasible, why = [], {}
    for T_cam in viewpoints(board_center, n=candidates, **view_kw):
        T_base_tool0 = T_cam @ invert(np.asarray(T_tool0_camera, float))
        try:
            q = (envelope.check_pose(T_base_tool0 @ envelope.kin.T_tool0_tcp, q_ref) if envelope is not None
                 else kin.ik(T_base_tool0 @ kin.T_tool0_tcp, q_ref))
        except UnreachableError as e:
            why[str(e).split(";")[0]] = why.get(str(e).split(";")[0], 0) + 1
            continue
        feasible.append(q)
        if len(feasible) == n:
            break
    if len(feasible) < n:
        reasons = "; ".join(f"{count}x {msg}" for msg, count in sorted(why.items(), key=lambda kv: -kv[1])[:3])
        raise UnreachableError(f"only {len(feasible)} of {n} calibration poses are safe and reachable ({reasons}); "
                               "move the board closer to the arm, lower max_tilt_deg or widen the workspace box")
    return _nearest_first(feasible, q_ref)


def _nearest_first(qs: list[np.ndarray], q_start: np.ndarray) -> list[np.ndarray]:
    """Greedy tour: always go to the closest remaining configuration (largest joint change)."""
    left, order, here = list(qs), [], q_start
    while left:
        k = min(range(len(left)), key=lambda i: float(np.max(np.abs(left[i] - here))))
        here = left.pop(k)
        order.append(here)
    return order
