"""The safety envelope every arm command passes before a backend sees it (`checked_path` and
`checked_line`, called by MotionPrimitives just before each motion, whatever planned it).

Checks, from config `safety` + `kinematics`: the TCP inside a workspace box, outside keep-out
boxes (e.g. the camera mount), at least a minimum height above the table, reachable by
analytic IK within the joint limits, and speeds/accelerations under their caps. Cartesian paths
are checked at a fixed spacing, including IK continuity (a jump between neighbouring samples
means the straight line crosses a singularity or a branch change the controller would refuse).
Violations raise UnreachableError (geometry) or InvalidGoalError (malformed request).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from spatial_manip.config import build
from spatial_manip.control.kinematics import URKinematics
from spatial_manip.errors import InvalidGoalError, UnreachableError


@dataclasses.dataclass(frozen=True, kw_only=True)
class Box:
    """An axis-aligned box; with `radius_m`, the upright cylinder of that radius about the box's
    vertical middle line, over the box's height (a pillar such as the robot's stand, kept as the
    round body it is: the box around it reaches past it by 0.41 radius at its corners, where the
    sim's forearm met a stand it was 1 cm clear of, place-85-00013). `min_m`/`max_m` bound it."""
    name: str
    min_m: tuple[float, float, float]
    max_m: tuple[float, float, float]
    radius_m: float | None = None

    def __post_init__(self):
        if len(self.min_m) != 3 or len(self.max_m) != 3 or any(a >= b for a, b in zip(self.min_m, self.max_m)):
            raise InvalidGoalError(f"box {self.name!r} needs min_m < max_m (3 values each), got {self.min_m} / {self.max_m}")
        if self.radius_m is not None and \
                not (0 < self.radius_m <= min(self.max_m[k] - self.min_m[k] for k in (0, 1)) / 2 + 1e-9):
            raise InvalidGoalError(f"keep-out {self.name!r}: radius_m {self.radius_m} must be > 0 and fit in its box "
                                   f"{self.min_m} / {self.max_m}")

    @property
    def axis_xy(self) -> tuple[float, float]:
        return ((self.min_m[0] + self.max_m[0]) / 2, (self.min_m[1] + self.max_m[1]) / 2)

    def contains(self, p: np.ndarray) -> bool:
        if not (np.all(p >= np.asarray(self.min_m)) and np.all(p <= np.asarray(self.max_m))):
            return False
        if self.radius_m is None:
            return True
        cx, cy = self.axis_xy
        return bool((p[0] - cx) ** 2 + (p[1] - cy) ** 2 <= self.radius_m ** 2)


# The robot's own limits, as ur_rtde checks them before a move (rtde_control_interface.h:
# UR_TOOL_VELOCITY_MAX 3.0 m/s, UR_TOOL_ACCELERATION_MAX 150, UR_JOINT_VELOCITY_MAX 3.14 rad/s,
# UR_JOINT_ACCELERATION_MAX 40): a cap above one lets a motion start that the controller then
# refuses ("The value is not within [0;3]").
UR_LIMITS = {"max_tcp_speed_m_s": 3.0, "max_tcp_accel_m_s2": 150.0,
             "max_joint_speed_rad_s": 3.14, "max_joint_accel_rad_s2": 40.0}


@dataclasses.dataclass(frozen=True, kw_only=True)
class SafetyConfig:
    workspace: Box
    keep_out: tuple[Box, ...] = ()
    table_height_m: float = 0.0
    min_tcp_height_above_table_m: float = 0.005
    max_tcp_speed_m_s: float = 0.5
    max_tcp_accel_m_s2: float = 2.0
    max_joint_speed_rad_s: float = 1.5
    max_joint_accel_rad_s2: float = 3.0
    path_check_step_m: float = 0.01
    max_joint_step_rad: float = 0.5  # IK jump between path samples that counts as a singularity

    def __post_init__(self):
        for f in ("max_tcp_speed_m_s", "max_tcp_accel_m_s2", "max_joint_speed_rad_s",
                  "max_joint_accel_rad_s2", "path_check_step_m", "max_joint_step_rad"):
            v = getattr(self, f)
            if not (math.isfinite(v) and 0 < v <= UR_LIMITS.get(f, math.inf)):
                top = f"{UR_LIMITS[f]} (the UR's own limit)" if f in UR_LIMITS else "and finite"
                raise InvalidGoalError(f"{f}: {v!r} is not within (0, {top}]")

    @classmethod
    def from_config(cls, cfg: Mapping) -> "SafetyConfig":
        """From arm.yaml's `safety` section; unknown keys and wrong types are refused by name."""
        s = dict(cfg)
        try:
            ws = _box({"name": "workspace", "min_m": s.pop("workspace_min_m"), "max_m": s.pop("workspace_max_m")}, 0)
            boxes = tuple(_box(b, i) for i, b in enumerate(s.pop("keep_out", []) or []))
        except KeyError as e:
            raise InvalidGoalError(f"safety needs {e.args[0]!r}") from None
        return build(cls, {**s, "workspace": ws, "keep_out": boxes}, "safety")


def _box(b, i: int) -> Box:
    """A keep-out (or the workspace) box from its YAML mapping."""
    try:
        radius = b.get("radius_m")
        return Box(name=str(b.get("name", f"keep_out_{i}")), min_m=tuple(map(float, b["min_m"])),
                   max_m=tuple(map(float, b["max_m"])), radius_m=None if radius is None else float(radius))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise InvalidGoalError(f"safety box {b!r} needs min_m and max_m, 3 numbers each "
                               "(and optionally radius_m, a number)") from None


class SafetyEnvelope:
    """Refuses unsafe commands with a specific error; returns the joint targets of safe ones."""

    def __init__(self, config: SafetyConfig, kinematics: URKinematics):
        self.config = config
        self.kin = kinematics

    @classmethod
    def from_config(cls, cfg: Mapping) -> "SafetyEnvelope":
        """From the whole arm.yaml dict (sections `safety` and `kinematics`)."""
        return cls(SafetyConfig.from_config(cfg["safety"]), URKinematics.from_config(cfg["kinematics"]))

    # ---- single poses --------------------------------------------------------------------
    def check_position(self, p: np.ndarray, what: str = "TCP target") -> None:
        c = self.config
        p = np.asarray(p, float)
        if not c.workspace.contains(p):
            raise UnreachableError(
                f"{what} {np.round(p, 4).tolist()} m is outside the workspace box "
                f"{list(c.workspace.min_m)}..{list(c.workspace.max_m)}; choose a target inside it or widen safety.workspace_*")
        floor = c.table_height_m + c.min_tcp_height_above_table_m
        if p[2] < floor:
            raise UnreachableError(
                f"{what} height {p[2]:.4f} m is below the table limit {floor:.4f} m "
                f"(table {c.table_height_m} m + {c.min_tcp_height_above_table_m} m); raise the target")
        for box in c.keep_out:
            if box.contains(p):
                shape = "" if box.radius_m is None else f" (a {box.radius_m} m radius cylinder)"
                raise UnreachableError(f"{what} {np.round(p, 4).tolist()} m is inside the keep-out box "
                                       f"{box.name!r} {list(box.min_m)}..{list(box.max_m)}{shape}; choose another target")

    def check_pose(self, T_base_tcp: np.ndarray, q_ref: Sequence[float] | None = None) -> np.ndarray:
        """Check one TCP pose; return the IK solution closest to q_ref."""
        T = _as_pose(T_base_tcp)
        self.check_position(T[:3, 3])
        return self.kin.ik(T, q_ref)

    def check_joints(self, q: Sequence[float]) -> np.ndarray:
        q = np.asarray(q, float).reshape(-1)
        if q.size != 6 or not np.all(np.isfinite(q)):
            raise InvalidGoalError(f"a joint target needs 6 finite angles in radians, got {q.tolist()}")
        if not self.kin.within_limits(q):
            raise UnreachableError(f"joint target {np.round(q, 4).tolist()} rad is outside the joint limits "
                                   f"{list(self.kin.q_min)}..{list(self.kin.q_max)}")
        self.check_position(self.kin.fk(q)[:3, 3], what="TCP at the joint target")
        return q

    # ---- motions -------------------------------------------------------------------------
    def check_motion(self, path: Sequence[np.ndarray], q_start: Sequence[float]) -> list[np.ndarray]:
        """Check a Cartesian (moveL) path from the current configuration through TCP poses.

        Every segment is sampled every `path_check_step_m` (position) so that a straight line
        through a keep-out box or under the table is refused even when its ends are fine.
        Returns the joint configuration at each waypoint."""
        if len(path) == 0:
            raise InvalidGoalError("a motion needs at least one waypoint, got none")
        q_prev = np.asarray(q_start, float).reshape(6)
        T_prev = self.kin.fk(q_prev)
        out = []
        for i, T_goal in enumerate(path):
            T_goal = _as_pose(T_goal)
            self.check_position(T_goal[:3, 3], what=f"waypoint {i}")
            for T in _interpolate(T_prev, T_goal, self.config.path_check_step_m)[1:]:
                self.check_position(T[:3, 3], what=f"path to waypoint {i} passes")
                q = self.kin.ik(T, q_prev)
                if np.max(np.abs(q - q_prev)) > self.config.max_joint_step_rad:
                    raise UnreachableError(
                        f"the straight line to waypoint {i} needs a joint jump of "
                        f"{np.max(np.abs(q - q_prev)):.2f} rad near {np.round(T[:3, 3], 3).tolist()} m "
                        "(a singularity or IK branch change); add a waypoint or use a joint move")
                q_prev = q
            out.append(q_prev.copy())
            T_prev = T_goal
        return out

    def check_joint_motion(self, q_start: Sequence[float], q_goal: Sequence[float]) -> np.ndarray:
        """Check a moveJ: the goal in limits, and the TCP along the joint-space line stays safe."""
        q_goal = self.check_joints(q_goal)
        q_start = np.asarray(q_start, float).reshape(6)
        n = max(2, int(np.ceil(np.max(np.abs(q_goal - q_start)) / 0.02)) + 1)
        for s in np.linspace(0.0, 1.0, n)[1:]:
            self.check_position(self.kin.fk(q_start + s * (q_goal - q_start))[:3, 3], what="joint move passes TCP")
        return q_goal

    # ---- what reaches the arm: every motion's last check (MotionPrimitives._follow / _line) ----
    def checked_path(self, q_now: Sequence[float], waypoints, speed: float, accel: float) -> tuple[np.ndarray, float, float]:
        """A joint path as the arm will follow it from `q_now` (its joints now) through `waypoints`
        ((n, 6)), whatever planned it (a search, a hint or a grasp check's detour, a straight joint
        move, a carry home): every waypoint within the joint limits and the TCP inside the
        workspace, outside the keep-out boxes and above the table along every segment, the first
        from q_now included (check_joint_motion); the joint speed and acceleration capped
        (clamp_speed). Returns the waypoints and the capped speed and acceleration."""
        w = np.asarray(waypoints, float)
        if w.ndim != 2 or w.shape[1:] != (6,) or not len(w) or not np.all(np.isfinite(w)):
            raise InvalidGoalError(f"a joint path is an (n, 6) array of finite angles, got shape {w.shape}")
        q = np.asarray(q_now, float).reshape(6)
        for i, goal in enumerate(w):
            try:
                q = self.check_joint_motion(q, goal)
            except UnreachableError as e:
                raise UnreachableError(f"joint path waypoint {i} of {len(w)}: {e.message}") from e
        return w, *self.clamp_speed(speed, accel, joint=True)

    def checked_line(self, q_now: Sequence[float], T_base_tcp, speed: float, accel: float) -> tuple[np.ndarray, float, float]:
        """A straight TCP move from `q_now` to the pose T_base_tcp as the arm will make it:
        check_motion's checks along the line (workspace, keep-out, table, IK within the joint
        limits without a jump), the TCP speed and acceleration capped. Returns the pose and the
        capped speed and acceleration."""
        T = _as_pose(T_base_tcp)
        self.check_motion([T], q_now)
        return T, *self.clamp_speed(speed, accel)

    def clamp_speed(self, speed: float, accel: float, *, joint: bool = False) -> tuple[float, float]:
        """Refuse non-positive or non-finite values; cap the rest at the configured limits."""
        c = self.config
        vmax, amax = ((c.max_joint_speed_rad_s, c.max_joint_accel_rad_s2) if joint
                      else (c.max_tcp_speed_m_s, c.max_tcp_accel_m_s2))
        unit = "rad/s" if joint else "m/s"
        for name, v in (("speed", speed), ("acceleration", accel)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InvalidGoalError(f"{name} must be a positive finite number ({unit}-based), got {v!r}")
        return min(float(speed), vmax), min(float(accel), amax)


def _as_pose(T) -> np.ndarray:
    T = np.asarray(T, float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise InvalidGoalError(f"a pose must be a finite 4x4 matrix, got shape {T.shape}")
    R = T[:3, :3]
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-4) or np.linalg.det(R) < 0:
        raise InvalidGoalError("a pose's rotation must be orthonormal with det +1; normalise the quaternion")
    return T


def _interpolate(A: np.ndarray, B: np.ndarray, step_m: float) -> list[np.ndarray]:
    """Poses from A to B, linear in position and slerp in rotation, at most step_m apart
    (rotation sampled as if 0.1 m per radian, so pure rotations are checked too)."""
    dist = float(np.linalg.norm(B[:3, 3] - A[:3, 3]))
    ang = float(np.linalg.norm(Rotation.from_matrix(A[:3, :3].T @ B[:3, :3]).as_rotvec()))
    n = max(1, int(np.ceil(max(dist, 0.1 * ang) / step_m)))
    slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([A[:3, :3], B[:3, :3]])))
    out = []
    for s in np.linspace(0.0, 1.0, n + 1):
        T = np.eye(4)
        T[:3, :3] = slerp([s]).as_matrix()[0]
        T[:3, 3] = (1 - s) * A[:3, 3] + s * B[:3, 3]
        out.append(T)
    return out
