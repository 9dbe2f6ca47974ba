"""What the camera can see past the arm: how much of a box (a place pose's object) lies in the
camera's line of sight with the arm's collision bodies at given joints in the way. Computed from
the camera pose and the robot model (Pinocchio, `motion.robot.RobotModel.points_on`), never from a
simulator: a real cell's planner asks it before judging a place it may not be able to see.

Seen from a camera behind the robot, the robot's own base and shoulder hide part of a shelf's
lower middle from every arm configuration (seed 51's place episodes: 5 of 16 set-downs there
were judged failed while the book stood in the slot)."""
from __future__ import annotations

import numpy as np

RAY_STEP_M = 0.02        # the arm's thinnest body is ~0.07 m across: a step this short cannot skip it
RAY_END_GAP_M = 0.03     # the last stretch of a ray is the object's own surroundings, not the arm
ARM_MARGIN_M = 0.01      # the bodies grown by this much: calibration error and the model's rounding
GRID = 4                 # points per box axis whose lines of sight are traced (GRID**3 rays)


def box_points(center, size, rotation, n: int = GRID) -> np.ndarray:
    """An n x n x n grid of points inside the box (inset half a cell from its faces), base frame."""
    ticks = (np.arange(n) + 0.5) / n - 0.5
    local = np.stack(np.meshgrid(ticks, ticks, ticks, indexing="ij"), axis=-1).reshape(-1, 3) * np.asarray(size, float)
    return local @ np.asarray(rotation, float).T + np.asarray(center, float)


def visible_fraction(robot, q, camera_position, center, size, rotation, *, margin_m: float = ARM_MARGIN_M) -> float:
    """The fraction of the box's grid points whose straight line from `camera_position` passes
    clear of the arm's bodies at joints `q` (1.0: nothing of the arm in the way). Only the arm
    counts: what else may hide the box (a shelf board) is the scene's, and the look shows it."""
    targets = box_points(center, size, rotation)
    return float(1.0 - blocked_lines(robot, q, camera_position, targets, margin_m).mean())


def blocked_lines(robot, q, camera_position, targets, margin_m: float = ARM_MARGIN_M, held_box=None) -> np.ndarray:
    """Per target point, whether its straight line from `camera_position` passes through the arm's
    bodies at joints `q` (grown by `margin_m`) or, given `held_box` (T_base_object, half extents),
    through that box: what the arm holds hides as much as the arm."""
    camera = np.asarray(camera_position, float)
    length = np.linalg.norm(targets - camera, axis=1)
    n = max(2, int(np.ceil(float(length.max()) / RAY_STEP_M)))
    along = np.linspace(0.0, 1.0, n)                                     # (n,)
    stop = np.clip(1.0 - RAY_END_GAP_M / np.maximum(length, 1e-9), 0.0, 1.0)   # (k,)
    samples = camera + (targets - camera)[:, None, :] * along[None, :, None]    # (k, n, 3)
    used = along[None, :] <= stop[:, None]
    hit = np.zeros(used.shape, bool)
    hit[used] = robot.points_on(samples[used], np.asarray(q, float), margin_m)
    if held_box is not None:
        T, half = held_box
        local = (samples - T[:3, 3]) @ T[:3, :3]
        hit |= used & np.all(np.abs(local) <= half, axis=-1)
    return hit.any(axis=1)
