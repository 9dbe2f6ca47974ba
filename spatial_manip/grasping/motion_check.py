"""The grasp service's motion stage: a grasp is kept only if the arm can reach its pre-grasp by a
collision-free plan from where it is now, and the straight approach from there to the grasp
touches nothing but the target and its support.

ROS-free. The world is built once per request (scene boxes, the depth cloud minus the target's
neighbourhood and minus the arm itself), then the grasps that passed the IK and link filters
are checked best first until enough are kept or the request's time budget is spent.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from spatial_manip.config import build, read_yaml, section
from spatial_manip.errors import InvalidGoalError, SpatialManipError
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.motion.arm_plans import SUPPORT_GAP_M
from spatial_manip.motion.cartesian import clear_of_contact, straight_segment
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.obstacle_map import ObstacleMapConfig, supported_voxels
from spatial_manip.motion.world import CollisionWorld, support_ids

TARGET_ID = "target"        # the target's id in the world when the request named no scene object


@dataclass(frozen=True, kw_only=True)
class MotionCheckConfig:
    """The `motion_check` section of grasp.yaml."""

    enabled: bool = True
    time_budget_s: float = 1.5        # per request: no grasp is checked after this (the best one always
    #                                   is); a check started in time may overrun it by plan_budget_s
    plan_budget_s: float = 0.5        # per pre-grasp plan (capped by what is left of the request's)
    target_clearance_m: float = 0.03  # cloud points this close to the target box are the target or
    #                                   its support surface: the fingers must be allowed near them
    self_filter_m: float = 0.05       # cloud points this close to the arm's collision bodies are the arm
    cloud_voxel_m: float = 0.02

    def __post_init__(self):
        for name in ("time_budget_s", "plan_budget_s", "cloud_voxel_m"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise InvalidGoalError(f"motion_check.{name} must be a positive number, got {v!r}")
        for name in ("target_clearance_m", "self_filter_m"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0 <= v < 0.5):
                raise InvalidGoalError(f"motion_check.{name} must be within 0..0.5 m, got {v!r}")

    @classmethod
    def from_config(cls, cfg: Mapping | None) -> "MotionCheckConfig":
        return build(cls, cfg, "motion_check")


@dataclass
class Drop:
    """Why one grasp (its rank among those checked, 0 = best) was dropped."""

    rank: int
    phase: str              # "pre_grasp" | "approach"
    body: str               # what blocks, as the planner names it
    message: str

    def __str__(self) -> str:
        return f"#{self.rank} {self.phase}: {self.body}"


@dataclass
class MotionReport:
    """What the motion stage did for one request."""

    checked: int = 0
    kept: list = field(default_factory=list)      # indices into the candidates, best first
    drops: list = field(default_factory=list)     # Drop per refused grasp
    paths: dict = field(default_factory=dict)     # kept index -> pre-grasp JointPath
    approaches: dict = field(default_factory=dict)  # kept index -> (n, 6) approach configurations
    world: object = None                          # the CollisionWorld checked against
    skipped: str = ""                             # why the stage did not run ("" = it ran)
    out_of_time: bool = False
    elapsed_s: float = 0.0                        # checking the grasps
    world_s: float = 0.0                          # building the world (not in the time budget)

    def tcp_trace(self, index: int, kinematics) -> np.ndarray:
        """TCP positions (n, 3) of a kept grasp's pre-grasp path, then its approach (forward
        kinematics of the approach's configurations)."""
        approach = np.array([kinematics.fk(q)[:3, 3] for q in self.approaches[index]]).reshape(-1, 3)
        return np.vstack([self.paths[index].tcp, approach])

    def summary(self) -> str:
        if self.skipped:
            return f"motion check skipped: {self.skipped}"
        s = (f"motion check: {self.checked} checked, {len(self.kept)} kept in {self.elapsed_s * 1000:.0f} ms "
             f"(+ {self.world_s * 1000:.0f} ms building the world)")
        if self.drops:
            s += "; dropped " + ", ".join(str(d) for d in self.drops)
        if self.out_of_time:
            s += "; stopped at the time budget"
        return s


def load_motion_check_config(path) -> MotionCheckConfig:
    """The `grasp.motion_check` section of grasp.yaml (absent: the defaults); a ConfigError
    naming the file, key and value."""
    data = read_yaml(path)
    where = f"{path}: grasp"
    return build(MotionCheckConfig, section(data.get("grasp", data), "motion_check", where, required=False),
                 f"{where}.motion_check")


class MotionCheck:
    """Checks grasp candidates with a MotionPlanner (planner.robot, planner.envelope, plan())."""

    def __init__(self, planner, config: MotionCheckConfig | None = None):
        self.planner, self.config = planner, config or MotionCheckConfig()

    # ---- the world -------------------------------------------------------------------------
    def build_world(self, scene: Scene | None, target: SceneObject, q_now, cloud_base=None):
        """Scene boxes (the target included: the transit must not sweep through it; the approach
        allows it), and the cloud minus the target's neighbourhood and minus the arm."""
        scene = _with_target(scene, target)
        T_now = self.planner.envelope.kin.fk(q_now)
        cloud = None if cloud_base is None else self._clutter(np.asarray(cloud_base, float), target, q_now)
        return CollisionWorld.from_scene(scene, cloud=cloud, voxel_m=self.config.cloud_voxel_m, T_base_tcp=T_now), scene

    def _clutter(self, pts: np.ndarray, target: SceneObject, q_now) -> np.ndarray:
        """The depth points as supported obstacle voxels (a lone return, a flying pixel strewn
        along its ray, is no obstacle: motion.obstacle_map), minus the target and the arm."""
        pts, _, _ = supported_voxels(pts[np.all(np.isfinite(pts), axis=1)], None,
                                     ObstacleMapConfig(voxel_m=self.config.cloud_voxel_m))
        pts = pts[~points_in_box(pts, target, self.config.target_clearance_m)]
        if self.config.self_filter_m > 0 and len(pts):
            pts = pts[~self.planner.robot.points_on(pts, q_now, self.config.self_filter_m)]
        return pts

    def cleared_start(self, q_now, world) -> np.ndarray:
        """Where the arm's plans start: out of a contact it is in, as the primitives move first
        (motion.cartesian.clear_of_contact)."""
        q = np.asarray(q_now, float).reshape(-1)
        if q.size != 6 or not np.all(np.isfinite(q)) or not self.planner.envelope.kin.within_limits(q):
            return q             # start_problem names it
        return clear_of_contact(self.planner.robot, self.planner.envelope, world.with_keep_out(self.planner.envelope), q)[1]

    def start_problem(self, q_now, world) -> str | None:
        """Why q_now cannot start a plan (outside the joint limits, touching something), or None.
        Asked once per request: a bad start would drop every grasp for the same reason, which
        says more about the world model near the arm than about the grasps."""
        envelope = self.planner.envelope
        q = np.asarray(q_now, float).reshape(-1)
        if q.size != 6 or not np.all(np.isfinite(q)) or not envelope.kin.within_limits(q):
            return f"{np.round(q, 4).tolist()} rad is not 6 joint angles within the limits"
        checker = CollisionChecker(self.planner.robot, world.with_keep_out(envelope), envelope, 0.0)
        pair = checker.contact(q)
        return None if pair is None else f"the {pair[0]} touches {pair[1]}"

    # ---- the check -------------------------------------------------------------------------
    def filter(self, q_now, tcp_poses: Sequence[np.ndarray], pre_poses: Sequence[np.ndarray], world, scene: Scene,
               target_id: str, k: int) -> MotionReport:
        """Check candidates in order (best first) until `k` pass or the time budget is spent
        (the best candidate is always checked, however slow the machine)."""
        t0 = time.perf_counter()
        report = MotionReport(world=world)
        allowed = support_ids(scene, target_id, gap_m=SUPPORT_GAP_M)
        for i, (T, T_pre) in enumerate(zip(tcp_poses, pre_poses)):
            left = self.config.time_budget_s - (time.perf_counter() - t0)
            if i > 0 and left <= 0.01:
                report.out_of_time = True
                break
            report.checked += 1
            self._check_one(report, i, q_now, T, T_pre, world, allowed,
                            min(max(left, 0.05), self.config.plan_budget_s))
            if len(report.kept) == k:
                break
        report.elapsed_s = time.perf_counter() - t0
        return report

    def _check_one(self, report: MotionReport, i: int, q_now, T, T_pre, world, allowed, budget: float) -> None:
        phase = "pre_grasp"
        try:
            path = self.planner.plan(q_now, T_pre, world, phase=phase, time_budget_s=budget)
            phase = "approach"
            qs = straight_segment(self.planner.robot, self.planner.envelope, world, path.q[-1], T,
                                  allowed=allowed, phase=phase)
        except SpatialManipError as e:   # GoalBlocked / PlanNotFound carry the body; IK/envelope refusals do not
            report.drops.append(Drop(i, getattr(e, "phase", phase), getattr(e, "body", "") or _short(e.message),
                                     e.message))
            return
        report.kept.append(i)
        report.paths[i], report.approaches[i] = path, qs


def _short(message: str) -> str:
    return message if len(message) <= 90 else message[:87] + "..."


def _with_target(scene: Scene | None, target: SceneObject) -> Scene:
    """The scene with the target in it (a request by box or cloud names no scene object)."""
    if scene is None:
        origin = Viewpoint(np.zeros(3), np.array([1.0, 0.0, 0.0]))
        scene = Scene(viewer=origin, robot=origin, objects=[])
    if any(o.id == target.id for o in scene.objects):
        return scene
    return scene.with_objects([o for o in scene.objects if not _same_thing(o, target)] + [target])


def _same_thing(o: SceneObject, target: SceneObject) -> bool:
    """A scene object whose centre lies in the requested box is the target under another name."""
    return bool(points_in_box(o.center[None], target, 0.01)[0])
