"""Straight Cartesian segments (approach, grasp, lift, final descent): the envelope's own path
check (workspace, keep-out, table, IK continuity every path_check_step_m), then a collision check
of every configuration along it and between neighbours, except with the bodies the caller
allows to be touched (the target and its support)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from spatial_manip.errors import UnreachableError
from spatial_manip.motion.base import PlanNotFoundError
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.robot import RobotModel
from spatial_manip.motion.world import CollisionWorld
from spatial_manip.control.safety import SafetyEnvelope


def straight_segment(robot: RobotModel, envelope: SafetyEnvelope, world: CollisionWorld, q_start: Sequence[float],
                     T_goal: np.ndarray, *, allowed: Sequence[str] = (), phase: str = "approach",
                     step_rad: float = 0.01, keep_out_bodies: bool = True) -> np.ndarray:
    """Joint configurations (n, 6) along the straight TCP line from FK(q_start) to T_goal, one
    every `path_check_step_m`; PlanNotFoundError naming the body when anything but `allowed`
    is touched, UnreachableError when the envelope refuses the line."""
    kin = envelope.kin
    q_start = np.asarray(q_start, float).reshape(6)
    poses = _line(kin.fk(q_start), np.asarray(T_goal, float), envelope.config.path_check_step_m)
    try:
        qs = [q_start] + envelope.check_motion(poses, q_start)
    except UnreachableError as e:
        raise UnreachableError(f"{phase}: {e.message}") from e
    world = world.without(allowed)
    checker = CollisionChecker(robot, world.with_keep_out(envelope) if keep_out_bodies else world, envelope, 0.0)
    for a, b in zip(qs[:-1], qs[1:]):
        hit = checker.first_problem_on_segment(a, b, step_rad)
        if hit is not None:
            raise PlanNotFoundError(f"{phase}: the straight move is blocked: {hit[1]} at TCP "
                                    f"{np.round(checker.tcp(hit[0]), 3).tolist()} m", phase=phase, body=hit[1])
    return np.array(qs)


def _line(A: np.ndarray, B: np.ndarray, step_m: float) -> list[np.ndarray]:
    """Poses from A (excluded) to B, linear in position and slerp in rotation, at most step_m
    apart (0.1 m per radian of turn, as the envelope counts it)."""
    from scipy.spatial.transform import Rotation, Slerp

    dist = float(np.linalg.norm(B[:3, 3] - A[:3, 3]))
    ang = float(np.linalg.norm(Rotation.from_matrix(A[:3, :3].T @ B[:3, :3]).as_rotvec()))
    n = max(1, int(np.ceil(max(dist, 0.1 * ang) / step_m)))
    slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([A[:3, :3], B[:3, :3]])))
    out = []
    for s in np.linspace(0.0, 1.0, n + 1)[1:]:
        T = np.eye(4)
        T[:3, :3] = slerp([s]).as_matrix()[0]
        T[:3, 3] = (1 - s) * A[:3, 3] + s * B[:3, 3]
        out.append(T)
    return out
