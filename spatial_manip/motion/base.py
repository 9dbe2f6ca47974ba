"""The motion planner's protocol, its result, its settings and its errors."""
from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Protocol, runtime_checkable

import numpy as np

from spatial_manip.config import build
from spatial_manip.errors import InvalidGoalError, MotionFailedError, UnreachableError

BACKENDS = ("ompl",)


@dataclasses.dataclass(frozen=True, kw_only=True)
class MotionConfig:
    """The `motion` section of arm.yaml (every key optional)."""

    backend: str = "ompl"
    mount: str = "eye_to_hand"          # which URDF: eye_to_hand | eye_in_hand
    time_budget_s: float = 1.0          # per plan() call, search and smoothing together
    padding_m: float = 0.01             # planning keeps this clearance; the final check needs 0
    plan_step_rad: float = 0.03         # joint-space collision-check spacing while searching
    verify_step_rad: float = 0.01       # spacing of the final check of the timed trajectory
    simplify_s: float = 0.05            # OMPL shortcutting / smoothing time
    cloud_voxel_m: float = 0.02
    speed_scale: float = 1.0            # fraction of the envelope's joint speed/accel caps
    sample_dt_s: float = 0.008          # timed samples (125 Hz, a CB3's servoJ rate)
    seed: int | None = None             # OMPL's RNG, for repeatable plans in tests and benches
    keep_out_bodies: bool = True        # the envelope's keep-out boxes block every link, not only the TCP

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise InvalidGoalError(f"motion.backend must be one of {BACKENDS}, got {self.backend!r}")
        for f in ("time_budget_s", "plan_step_rad", "verify_step_rad", "simplify_s", "cloud_voxel_m", "sample_dt_s"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InvalidGoalError(f"motion.{f} must be a positive number, got {v!r}")
        if not (0.0 <= self.padding_m < 0.1):
            raise InvalidGoalError(f"motion.padding_m must be within 0..0.1 m, got {self.padding_m!r}")
        if self.seed is not None and not (isinstance(self.seed, int) and self.seed > 0):
            raise InvalidGoalError(f"motion.seed must be a positive integer (OMPL refuses 0), got {self.seed!r}")
        if not (0.0 < self.speed_scale <= 1.0):
            raise InvalidGoalError(f"motion.speed_scale must be within (0, 1], got {self.speed_scale!r}")

    @classmethod
    def from_config(cls, cfg: Mapping | None) -> "MotionConfig":
        return build(cls, cfg, "motion")


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
