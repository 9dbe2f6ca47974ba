"""The motion planner's protocol, its result and its errors (its settings, arm.yaml's `motion`
section, are control.config.MotionConfig: arm.yaml is checked at load, below motion/)."""
from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

import numpy as np

from spatial_manip.errors import InvalidGoalError, MotionFailedError, UnreachableError


@dataclasses.dataclass
class JointPath:
    """A collision-free joint path and its timing within the envelope's caps.

    `waypoints` is the shortened geometric path (moveJ with blends, or a trace overlay);
    `t`, `q`, `qd`, `qdd` sample the time-parameterised trajectory every `sample_dt_s`
    (servoJ streaming). `tcp` is the TCP position at each sample."""

    waypoints: np.ndarray
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tcp: np.ndarray
    planning_time_s: float = 0.0
    phase: str = ""
    found_by: str = ""      # "straight" (a straight joint move), "hint" (a path found before), "search"

    @property
    def duration_s(self) -> float:
        return float(self.t[-1]) if len(self.t) else 0.0

    @property
    def length_rad(self) -> float:
        return float(np.sum(np.linalg.norm(np.diff(self.waypoints, axis=0), axis=1)))

    @property
    def tcp_length_m(self) -> float:
        return float(np.sum(np.linalg.norm(np.diff(self.tcp, axis=0), axis=1)))


Goal = np.ndarray   # (6,) joint angles, or a 4x4 TCP pose in the base frame


@runtime_checkable
class MotionPlanner(Protocol):
    name: str

    def plan(self, start_q: np.ndarray, goal: Goal, world, *, phase: str = "transit",
             time_budget_s: float | None = None) -> JointPath:
        """A collision-free, timed path from start_q to the goal around `world`.
        Raises GoalBlockedError / UnreachableError (goal cannot be reached) or PlanNotFoundError."""
        ...


class GoalBlockedError(UnreachableError):
    """Every configuration reaching the goal touches something (named in `body`)."""

    def __init__(self, message: str, *, phase: str, body: str):
        super().__init__(message)
        self.phase, self.body = phase, body


class PlanNotFoundError(MotionFailedError):
    """No collision-free path in the time budget, or a blocked straight segment; `body` names
    what blocked the search most often."""

    def __init__(self, message: str, *, phase: str, body: str):
        super().__init__(message)
        self.phase, self.body = phase, body


def as_goal(goal) -> np.ndarray:
    g = np.asarray(goal, float)
    if g.shape not in ((6,), (4, 4)) or not np.all(np.isfinite(g)):
        raise InvalidGoalError(f"a motion goal is 6 joint angles or a 4x4 TCP pose, got shape {g.shape}")
    return g
