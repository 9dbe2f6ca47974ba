"""The safety envelope every arm command passes before a backend sees it (`checked_path` and
`checked_line`, called by MotionPrimitives just before each motion, whatever planned it).

Checks, from config `safety` + `kinematics`: the TCP inside a workspace box, outside keep-out
boxes (e.g. the camera mount), at least a minimum height above the table, reachable by
analytic IK within the joint limits, and speeds/accelerations under their caps. Cartesian paths
are checked at a fixed spacing, including IK continuity (a jump between neighbouring samples
means the straight line crosses a singularity or a branch change the controller would refuse).
A joint path is judged as its backend will drive it (the arm's `driven_path`: a time-optimal
curve or a spline leaves the waypoints' straight segments at their corners). Violations raise
UnreachableError (geometry, naming the limit and by how much) or InvalidGoalError (malformed request).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from spatial_manip.config import build
from spatial_manip.control.base import DrivenPath, straight_driven_path
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
        return self.depth(p) >= 0.0

    def depth(self, p: np.ndarray, grown_by_m: float = 0.0) -> float:
        """How far p lies inside the box grown by `grown_by_m` on every side (the cylinder's
        radius too): >= 0 inside (bounds inclusive), negative outside."""
        p = np.asarray(p, float)
        lo, hi = np.asarray(self.min_m) - grown_by_m, np.asarray(self.max_m) + grown_by_m
        depth = float(np.min(np.minimum(p - lo, hi - p)))
        if self.radius_m is None:
            return depth
        cx, cy = self.axis_xy
        return min(depth, self.radius_m + grown_by_m - math.hypot(p[0] - cx, p[1] - cy))


JOINT_CHECK_STEP_RAD = 0.02    # joint-space segments are checked at this spacing (largest joint change)

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
    def check_position(self, p: np.ndarray, what: str = "TCP target", margin_m: float = 0.0) -> None:
        """The TCP at p inside the workspace box, above the table limit and outside every
        keep-out box, each by `margin_m` at least (how far the TCP may stray from p: a blended
        corner). A refusal names the limit and by how much it is missed."""
        c = self.config
        p = np.asarray(p, float)
        slack = "" if margin_m <= 0 else f" (with the {margin_m:.3f} m the TCP may stray from it)"
        outside = -c.workspace.depth(p, -margin_m)
        if outside > 0:
            raise UnreachableError(
                f"{what} {np.round(p, 4).tolist()} m is outside the workspace box "
                f"{list(c.workspace.min_m)}..{list(c.workspace.max_m)} by {outside:.4f} m{slack}; "
                "choose a target inside it or widen safety.workspace_*")
        floor = c.table_height_m + c.min_tcp_height_above_table_m
        if p[2] < floor + margin_m:
            raise UnreachableError(
                f"{what} height {p[2]:.4f} m is below the table limit {floor:.4f} m "
                f"(table {c.table_height_m} m + {c.min_tcp_height_above_table_m} m) by {floor + margin_m - p[2]:.4f} m"
                f"{slack}; raise the target")
        for box in c.keep_out:
            inside = box.depth(p, margin_m)
            if inside >= 0:
                shape = "" if box.radius_m is None else f" (a {box.radius_m} m radius cylinder)"
                raise UnreachableError(f"{what} {np.round(p, 4).tolist()} m is inside the keep-out box "
                                       f"{box.name!r} {list(box.min_m)}..{list(box.max_m)}{shape} by {inside:.4f} m"
                                       f"{slack}; choose another target")

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

    # ---- what reaches the arm: every motion's last check (MotionPrimitives._follow / _line) ----
    def checked_path(self, q_now: Sequence[float], waypoints, speed: float, accel: float,
                     driven: Callable[[np.ndarray, float, float], DrivenPath] | None = None
                     ) -> tuple[np.ndarray, float, float]:
        """A joint path as the arm will drive it from `q_now` (its joints now) through `waypoints`
        ((n, 6)), whatever planned it (a search, a hint or a grasp check's detour, a straight joint
        move, a carry home). The joint speed and acceleration are capped (clamp_speed); `driven`
        (the arm's driven_path) then says, for the capped values, what its backend will really
        drive - a time-optimal curve, a spline, blended corners, which leave the waypoints'
        straight segments by centimetres - and check_driven judges that (without `driven`, the
        straight segments from q_now). Returns the waypoints and the capped speed and acceleration."""
        w = np.asarray(waypoints, float)
        if w.ndim != 2 or w.shape[1:] != (6,) or not len(w) or not np.all(np.isfinite(w)):
            raise InvalidGoalError(f"a joint path is an (n, 6) array of finite angles, got shape {w.shape}")
        v, a = self.clamp_speed(speed, accel, joint=True)
        self.check_driven(driven(w, v, a) if driven is not None else straight_driven_path(q_now, w))
        return w, v, a

    def check_driven(self, path: DrivenPath) -> None:
        """Every sample after the first (where the arm is) within the joint limits, and the TCP
        along every segment between samples (straight in joint space, every JOINT_CHECK_STEP_RAD)
        inside the workspace, outside the keep-out boxes and above the table by the segment's
        stray_m. A refusal names the sample, the limit and by how much; nothing has moved."""
        q, m = path.q, len(path.q) - 1
        lo, hi = np.asarray(self.kin.q_min), np.asarray(self.kin.q_max)
        over = np.max(np.maximum(lo - q[1:], q[1:] - hi), axis=1)
        if np.any(over > 1e-9):                      # URKinematics.within_limits' tolerance
            i = int(np.argmax(over > 1e-9))
            raise UnreachableError(f"driven path sample {i + 1} of {m}: joints {np.round(q[i + 1], 4).tolist()} rad "
                                   f"are outside the joint limits {list(self.kin.q_min)}..{list(self.kin.q_max)} "
                                   f"by {over[i]:.4f} rad")
        points, segment = _joint_segments_filled(q, JOINT_CHECK_STEP_RAD)
        for x, i in zip(points, segment):
            self.check_position(self.kin.fk(x)[:3, 3], what=f"driven path sample {i + 1} of {m}: TCP",
                                margin_m=float(path.stray_m[i]))

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


def _joint_segments_filled(q: np.ndarray, step_rad: float) -> tuple[np.ndarray, np.ndarray]:
    """Points along the straight joint-space segments between q's rows, at most step_rad apart
    (largest joint change), each segment's end included and its start not; with each point's
    segment index."""
    d = np.diff(q, axis=0)
    n = np.maximum(1, np.ceil(np.max(np.abs(d), axis=1) / step_rad).astype(int))
    segment = np.repeat(np.arange(len(d)), n)
    k = np.arange(len(segment)) - np.repeat(np.cumsum(n) - n, n) + 1     # 1..n within each segment
    return q[segment] + (k / n[segment])[:, None] * d[segment], segment


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
