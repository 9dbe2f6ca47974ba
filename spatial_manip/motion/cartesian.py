"""Straight Cartesian segments (approach, grasp, lift, final descent): the envelope's own path
check (workspace, keep-out, table, IK continuity every path_check_step_m), then a collision check
of every configuration along it and between neighbours. The bodies the caller allows to be
touched (the target and its support) may meet the gripper and the held object only: a wrist
on the table under a low side grasp is a collision."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from spatial_manip.errors import SpatialManipError, UnreachableError
from spatial_manip.motion.base import PlanNotFoundError
from spatial_manip.motion.batch_kinematics import line_configurations
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.robot import RobotModel
from spatial_manip.motion.world import CollisionWorld
from spatial_manip.control.safety import SafetyEnvelope


def straight_segment(robot: RobotModel, envelope: SafetyEnvelope, world: CollisionWorld, q_start: Sequence[float],
                     T_goal: np.ndarray, *, allowed: Sequence[str] = (), phase: str = "approach",
                     step_rad: float = 0.01, keep_out_bodies: bool = True,
                     checker: CollisionChecker | None = None) -> np.ndarray:
    """Joint configurations (n, 6) along the straight TCP line from FK(q_start) to T_goal, one
    every `path_check_step_m`; PlanNotFoundError naming the body when anything but `allowed`
    is touched, UnreachableError when the envelope refuses the line. `checker`: one built by
    segment_checker for these arguments, to share across many segments (world and allowed
    are then its own)."""
    kin = envelope.kin
    q_start = np.asarray(q_start, float).reshape(6)
    poses = _line(kin.fk(q_start), np.asarray(T_goal, float), envelope.config.path_check_step_m)
    try:
        qs = [q_start] + line_configurations(envelope, q_start, poses)
    except UnreachableError as e:
        raise UnreachableError(f"{phase}: {e.message}") from e
    checker = checker or segment_checker(robot, envelope, world, allowed=allowed, keep_out_bodies=keep_out_bodies)
    for a, b in zip(qs[:-1], qs[1:]):
        hit = checker.first_problem_on_segment(a, b, step_rad)
        if hit is not None:
            raise PlanNotFoundError(f"{phase}: the straight move is blocked: {hit[1]} at TCP "
                                    f"{np.round(checker.tcp(hit[0]), 3).tolist()} m", phase=phase, body=hit[1])
    return np.array(qs)


def segment_checker(robot: RobotModel, envelope: SafetyEnvelope, world: CollisionWorld, *,
                    allowed: Sequence[str] = (), keep_out_bodies: bool = True) -> CollisionChecker:
    """The checker straight_segment uses: no padding, `allowed` touchable by the hand only."""
    return CollisionChecker(robot, world.with_keep_out(envelope) if keep_out_bodies else world, envelope, 0.0,
                            touchable=allowed)


CLEAR_M = (0.05, 0.10)     # how far a start in contact backs out before a plan starts, nearest first


def clear_of_contact(robot: RobotModel, envelope: SafetyEnvelope, world: CollisionWorld, q_start: Sequence[float]):
    """(T_clear, q_clear): a straight move out of the contact the arm starts in, back along the
    TCP z axis or else up (5 cm, else 10 cm), touching only the body it is in contact with and
    ending clear of everything; (None, q_start) when it touches no world body (or no such move
    clears it: the planner then names the contact). A
    motion the world stopped short (a finger on a book the camera saw 1 cm off) leaves the arm
    touching it; without this every later plan would refuse its own start."""
    q_start = np.asarray(q_start, float).reshape(6)
    checker = CollisionChecker(robot, world, envelope, 0.0)
    pair = checker.contact(q_start)
    if pair is None or pair[1] not in world.names() or pair[1].startswith("keep_out:"):   # self-contact, the envelope
        return None, q_start
    T = envelope.kin.fk(q_start)
    for direction in (-T[:3, 2], np.array([0.0, 0.0, 1.0])):
        for distance in CLEAR_M:
            T_clear = T.copy()
            T_clear[:3, 3] = T[:3, 3] + distance * direction
            try:
                qs = straight_segment(robot, envelope, world.without([pair[1]]), q_start, T_clear, phase="clear")
            except SpatialManipError:
                break                          # farther along this direction is blocked too
            if checker.contact(qs[-1]) is None:
                return T_clear, qs[-1]
    return None, q_start


def _line(A: np.ndarray, B: np.ndarray, step_m: float) -> list[np.ndarray]:
    """Poses from A (excluded) to B, linear in position and slerp in rotation, at most step_m
    apart (0.1 m per radian of turn, as the envelope counts it)."""
    dist = float(np.linalg.norm(B[:3, 3] - A[:3, 3]))
    ang = float(np.linalg.norm(Rotation.from_matrix(A[:3, :3].T @ B[:3, :3]).as_rotvec()))
    n = max(1, int(np.ceil(max(dist, 0.1 * ang) / step_m)))
    slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([A[:3, :3], B[:3, :3]])))
    s = np.linspace(0.0, 1.0, n + 1)[1:]
    out = np.tile(np.eye(4), (n, 1, 1))
    out[:, :3, :3] = slerp(s).as_matrix()
    out[:, :3, 3] = (1 - s)[:, None] * A[:3, 3] + s[:, None] * B[:3, 3]
    return list(out)
