"""The grasp service's motion stage: a grasp is kept only if the arm can reach its pre-grasp by a
collision-free plan from where it is now, and the straight approach from there to the grasp
touches nothing but the target and its support.

ROS-free. The world and its collision checkers are built once per request (scene boxes, the
depth cloud minus the target's neighbourhood and minus the arm itself), then every grasp that
passed the IK and link filters is checked: its approach lines in one batched IK pass each
(motion.batch_kinematics), straight joint moves first, an RRT only where none is clear and
while the request's time budget lasts. The arm's pick (motion.arm_plans) runs the same steps.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from spatial_manip.config import build, read_yaml, section
from spatial_manip.errors import InvalidGoalError, SpatialManipError
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.motion.arm_plans import SUPPORT_GAP_M
from spatial_manip.motion.base import GoalBlockedError
from spatial_manip.motion.cartesian import clear_of_contact, segment_checker, straight_segment
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.obstacle_map import ObstacleMapConfig, supported_voxels
from spatial_manip.motion.world import CollisionWorld, support_ids

TARGET_ID = "target"        # the target's id in the world when the request named no scene object


@dataclass(frozen=True, kw_only=True)
class MotionCheckConfig:
    """The `motion_check` section of grasp.yaml."""

    enabled: bool = True
    time_budget_s: float = 1.5        # per check, for the RRT searches: none starts after this (the
    #                                   best grasp's always does); a search may overrun it by plan_budget_s.
    #                                   Both count the check's own work (`WorkClock`), not the wall clock.
    #                                   A request whose grasps do not clear the neighbours' hidden sides is
    #                                   checked twice (GraspService._motion_stage), so may spend it twice
    plan_budget_s: float = 0.5        # per RRT search (capped by what is left of the request's)
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


MIN_CPU_SHARE = 0.1    # a search's wall-clock time is stretched at most 1/this by a loaded machine


class WorkClock:
    """The check's budgets in the work it has done: CPU seconds of the thread running it. A loaded
    machine gives that thread a share of a core, and the wall clock ran out the budget with most of
    the grasps unchecked (the demo at load 19: 1 of 7 grasps checked in 2.3 s, the first dropped,
    GRASP_FAILED with six never looked at). An RRT search stops on the wall clock (OMPL's), so it
    is given its CPU budget divided by the share this thread had so far (at least MIN_CPU_SHARE)."""

    def __init__(self, cpu=time.thread_time, wall=time.perf_counter):
        self._cpu, self._wall = cpu, wall
        self._cpu0, self._wall0 = cpu(), wall()

    def worked_s(self) -> float:
        return self._cpu() - self._cpu0

    def share(self) -> float:
        """The share of a core this thread has had since the start (1 until a little has passed)."""
        wall = self._wall() - self._wall0
        return 1.0 if wall < 0.05 else min(1.0, max(MIN_CPU_SHARE, self.worked_s() / wall))

    def wall_for(self, cpu_s: float) -> float:
        return cpu_s / self.share()


@dataclass
class Drop:
    """Why one grasp (its rank among those checked, 0 = best) was dropped."""

    rank: int
    phase: str              # "pre_grasp" | "approach"
    body: str               # what blocks, as the planner names it
    message: str
    # what refused the grasp's other arm configurations, each once, most often first: the nearest
    # one's "upper_arm_link touches table" alone hid that every other one's wrist met the plant
    # beside the book (pick-101-00000), and the drop was read as the arm unable to clear the table
    others: tuple = ()

    def __str__(self) -> str:
        tail = f" (other arm configurations: {'; '.join(self.others)})" if self.others else ""
        return f"#{self.rank} {self.phase}: {self.body}{tail}"


@dataclass
class MotionReport:
    """What the motion stage did for one request."""

    checked: int = 0
    kept: list = field(default_factory=list)      # indices into the candidates, best first
    drops: list = field(default_factory=list)     # Drop per refused grasp
    paths: dict = field(default_factory=dict)     # kept index -> PreGraspPath
    approaches: dict = field(default_factory=dict)  # kept index -> (n, 6) approach configurations
    world: object = None                          # the CollisionWorld checked against
    skipped: str = ""                             # why the stage did not run ("" = it ran)
    out_of_time: bool = False
    not_searched: int = 0                         # grasps needing a search, ranked below k already reached
    not_checked: int = 0                          # grasps ranked below k reached at once (none needing a search)
    elapsed_s: float = 0.0                        # checking the grasps
    world_s: float = 0.0                          # building the world (not in the time budget)
    # why the grasps were checked on the measured boxes too: fewer than asked cleared the
    # neighbours' hidden sides (GraspService._motion_stage; "" = kept clear of them, or none to clear)
    hidden_sides: str = ""

    def tcp_trace(self, index: int, kinematics, step_rad: float = 0.05) -> np.ndarray:
        """TCP positions (n, 3) along a kept grasp's pre-grasp path (its joint polyline, a
        configuration every step_rad), then its approach."""
        w = self.paths[index].waypoints
        dense = [w[0]] + [a + (b - a) * s for a, b in zip(w[:-1], w[1:])
                          for s in np.linspace(0, 1, max(1, int(np.ceil(np.max(np.abs(b - a)) / step_rad))) + 1)[1:]]
        return np.array([kinematics.fk(q)[:3, 3] for q in [*dense, *self.approaches[index]]]).reshape(-1, 3)

    def summary(self) -> str:
        if self.skipped:
            return f"motion check skipped: {self.skipped}"
        s = (f"motion check: {self.checked} checked, {len(self.kept)} kept in {self.elapsed_s * 1000:.0f} ms "
             f"(+ {self.world_s * 1000:.0f} ms building the world)")
        if self.drops:
            s += "; dropped " + ", ".join(str(d) for d in self.drops)
        if self.not_searched:
            s += f"; {self.not_searched} below the best {len(self.kept)} not searched for"
        if self.not_checked:
            s += f"; {self.not_checked} below the best {len(self.kept)} not checked"
        if self.out_of_time:
            s += "; stopped at the time budget"
        if self.hidden_sides:
            s += f"; checked on the measured boxes too: {self.hidden_sides}"
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
               target_id: str, k: int, stop: Callable[[], None] = lambda: None,
               admit: Callable[[int], bool] = lambda i: True) -> MotionReport:
        """Check every candidate against one world as the arm's pick will run it
        (motion.arm_plans.ArmPlans.pick_start): the pre-grasp's IK solutions nearest the arm's
        first, the first whose straight approach is clear, reached by a collision-free path
        (else the next solution; each grasp's `pre_poses` entry is one pre-grasp or several,
        longest stand-off first, tried in turn). The checkers are built once per request and paths are found
        cheapest first: for each grasp, best first, a straight joint move from the start or from a
        pre-grasp already reached (one object's grasps lie close together), until the best `k`
        are reached with none above them waiting for a search (`_cheap_paths`); then, best grasp
        first, an RRT while the time budget lasts (the best grasp always gets one) and until the
        best `k` are reached. Keeps the best `k` that pass. `stop()` is called before each grasp's
        IK, its cheap path and its search, and may raise to end the check (a request no longer
        wanted): a job ahead made stale ran on through every grasp's IK and straight moves (tens of
        ms each, 20-30 grasps a large book) beside the request that replaced it, on the same GIL.
        `admit(i)`, asked as grasp i comes up, refuses it unchecked (the grasp service's test of the
        arm's links at the grasp, which cost as much for the grasps never reached as for the best)."""
        t0, work = time.perf_counter(), WorkClock()
        report = MotionReport(world=world)
        batch = _Batch(self.planner, np.asarray(q_now, float), world, support_ids(scene, target_id, gap_m=SUPPORT_GAP_M))
        grasps, looked_at = self._cheap_paths(batch, tcp_poses, pre_poses, k, stop, admit)
        report.not_checked = len(tcp_poses) - looked_at
        reached = 0
        for g in grasps:
            stop()
            if reached >= k:                                # the best k are reached: no search can change them
                report.not_searched += g.goal is not None and g.path is None
                continue
            while g.goal is not None and g.path is None:
                left = self.config.time_budget_s - work.worked_s()
                if g.rank > 0 and left <= 0.01:
                    report.out_of_time = True
                    break
                batch.cheap_path(g)                         # from a pre-grasp an RRT reached since
                if g.path is None:
                    batch.searched_path(g, work.wall_for(min(max(left, 0.05), self.config.plan_budget_s)))
                if g.path is None and batch.next_goal(g):
                    batch.cheap_path(g)
            reached += g.path is not None
        for g in grasps:
            self._settle(report, g, batch, k)
        report.elapsed_s = time.perf_counter() - t0
        return report

    @staticmethod
    def _cheap_paths(batch: "_Batch", tcp_poses, pre_poses, k: int, stop: Callable[[], None],
                     admit: Callable[[int], bool] = lambda i: True) -> tuple[list["_Candidate"], int]:
        """The grasps, best first, each with its pre-grasp's IK, the first configuration whose
        approach is clear and a straight joint move to it when one is clear (from the start or a
        pre-grasp reached before), up to the point where the best `k` are reached with none above
        them waiting for a search: the grasps below cannot change what is kept (the best `k` that
        pass), and checking them cost most of a request whose best grasps were reached at once
        (36 grasps checked for 5 kept: the bottle of objects-86-00000's recorded frame). Also returns
        how many grasps were looked at (those `admit` refused among them)."""
        grasps, reached, waiting, looked_at = [], 0, False, 0
        for i, (T, T_pre) in enumerate(zip(tcp_poses, pre_poses)):
            stop()
            looked_at = i + 1
            if not admit(i):
                continue
            g = batch.candidate(i, T, T_pre)
            stop()
            batch.next_goal(g) and batch.cheap_path(g)
            grasps.append(g)
            # one waiting for a search may yet be reached through a later grasp's pre-grasp: all are checked
            waiting = waiting or (g.goal is not None and g.path is None)
            reached += not waiting and batch.verified(g)
            if not waiting and reached >= k:
                break
        return grasps, looked_at

    def _settle(self, report: MotionReport, g: "_Candidate", batch: "_Batch", k: int) -> None:
        """Keep a grasp (its path checked once more without padding, for the best k) or drop it
        saying why; one the time budget left unsearched is not counted as checked."""
        if g.path is None and g.goal is not None:
            return
        report.checked += 1
        why = None if g.path is None or len(report.kept) == k else batch.problem_of(g)
        if g.path is None or why is not None:
            report.drops.append(_with_others(g.drop, g.refused) if why is None else
                                Drop(g.rank, "pre_grasp", why, f"pre_grasp: the path is not safe: {why}"))
        elif len(report.kept) < k:
            report.kept.append(g.rank)
            report.paths[g.rank], report.approaches[g.rank] = g.path, g.approach


UNVERIFIED = "not checked yet"       # a candidate's path problem before its final check


@dataclass
class PreGraspPath:
    """A collision-free joint path to a grasp's pre-grasp (untimed: the arm plans its own)."""

    waypoints: np.ndarray           # (n, 6): the start, ..., the pre-grasp configuration


@dataclass
class _Candidate:
    """One grasp being checked: its pre-grasp's IK solutions (nearest the arm's first), the one
    being tried (`goal`, the search's padding from it, the approach from it), and the verdict."""

    rank: int
    T: np.ndarray
    configurations: list
    tried: int = 0
    goal: np.ndarray | None = None
    padding: float = 0.0
    approach: np.ndarray | None = None
    path: PreGraspPath | None = None
    drop: Drop | None = None        # the refusal of the configuration nearest the arm's
    refused: Counter = field(default_factory=Counter)  # what refused each configuration tried
    problem: str | None = UNVERIFIED  # the path's final check without padding (None: safe)


class _Batch:
    """One request's checkers (built once for all its grasps) and the pre-grasps reached so far."""

    def __init__(self, planner, q_start: np.ndarray, world, allowed: list):
        self.planner, self.kin, self.start, self.world, self.allowed = planner, planner.envelope.kin, q_start, world, allowed
        self.transit = planner.checker(world, q_start, "pre_grasp")
        self.padding = self.transit.padding_m
        self.bare = self.transit                       # for goals too close to something to keep the padding
        if self.padding > 0:
            self.bare = planner.checker(world, q_start, "pre_grasp")
            self.bare.set_padding(0.0)
        self.approach_checker = segment_checker(planner.robot, planner.envelope, world, allowed=allowed)
        self.reached: list = []        # configurations of the pre-grasps reached, with their paths

    def candidate(self, rank: int, T: np.ndarray, T_pres: np.ndarray) -> _Candidate:
        """A grasp at T with its pre-grasps `T_pres` (one pose, or several, longest stand-off first):
        the IK solutions of each pre-grasp in turn, nearest the arm's first, as the pick tries them
        (ArmPlans.pick_start); the refusal of the first pre-grasp when none is reached."""
        qs, first = [], None
        for T_pre in np.asarray(T_pres, float).reshape(-1, 4, 4):
            try:
                self.planner.envelope.check_position(T_pre[:3, 3], what="pre_grasp goal TCP")
                found = sorted(self.kin.ik_all(T_pre, self.start), key=lambda q: float(np.max(np.abs(q - self.start))))
                if not found:
                    self.kin.ik(T_pre, self.start)         # raises UnreachableError naming the pose
                qs += found
            except SpatialManipError as e:
                first = first or e
        if not qs:
            return _Candidate(rank, T, [], drop=_drop(rank, "pre_grasp", first))
        return _Candidate(rank, T, qs)

    def next_goal(self, g: _Candidate) -> bool:
        """Move g to its next configuration that is not blocked and whose approach is clear."""
        g.goal = None
        while g.tried < len(g.configurations):
            q = g.configurations[g.tried]
            g.tried += 1
            try:
                g.padding = self._padding_at(q)
                g.approach = straight_segment(self.planner.robot, self.planner.envelope, self.world, q, g.T,
                                              allowed=self.allowed, phase="approach", checker=self.approach_checker)
            except SpatialManipError as e:
                refusal = _drop(g.rank, "approach", e)
                g.refused[_blocker(refusal.body)] += 1
                g.drop = g.drop or refusal
                continue
            g.goal = q
            return True
        return False

    def _padding_at(self, q: np.ndarray) -> float:
        """The padding a search keeps from q: the configured one, or 0 when q is that close to
        something (as the planner's goal_configs); GoalBlockedError when q itself is blocked."""
        why = self.transit.problem(q)
        if why is None:
            return self.padding
        why = self.bare.problem(q)
        if why is None:
            return 0.0
        raise GoalBlockedError(f"pre_grasp: the arm configuration reaching the goal is blocked: {why}",
                               phase="pre_grasp", body=why)

    def cheap_path(self, g: _Candidate) -> None:
        """A straight joint move to g's goal from the start or from one of the three nearest
        pre-grasps reached before, else a detour from the start (`detours`)."""
        step, checker = self.planner.config.plan_step_rad, self._checker(g)
        if checker.segment_valid(self.start, g.goal, step):
            return self._reached(g, np.array([self.start, g.goal]))
        for q, waypoints in sorted(self.reached, key=lambda r: float(np.max(np.abs(r[0] - g.goal))))[:3]:
            if checker.segment_valid(q, g.goal, step):
                return self._reached(g, np.vstack([waypoints, g.goal]))
        for vias in detours(self.start, g.goal):
            waypoints = self.planner.hinted_path(np.array([self.start, *vias, g.goal]), self.start, [g.goal], checker)
            if waypoints is not None:
                return self._reached(g, waypoints)

    def searched_path(self, g: _Candidate, budget_s: float) -> None:
        """An RRT to g's goal within budget_s; its refusal becomes g's drop when g has none yet."""
        try:
            self._reached(g, self.planner.search(self.start, [g.goal], self._checker(g), "pre_grasp", budget_s, budget_s))
        except SpatialManipError as e:
            g.drop = g.drop or _drop(g.rank, "pre_grasp", e)

    def problem_of(self, g: _Candidate) -> str | None:
        """The final check of g's path without padding (once: it is asked again when g is kept)."""
        if g.problem is UNVERIFIED:
            g.problem = self.planner.path_problem(g.path.waypoints, self.bare)
        return g.problem

    def verified(self, g: _Candidate) -> bool:
        """Whether g has a path that passes its final check."""
        return g.path is not None and self.problem_of(g) is None

    def _checker(self, g: _Candidate):
        return self.transit if g.padding == self.padding else self.bare

    def _reached(self, g: _Candidate, waypoints: np.ndarray) -> None:
        g.path, g.problem = PreGraspPath(waypoints), UNVERIFIED
        self.reached.append((g.goal, waypoints))


# a detour's raised midpoint: the shoulder lifted this far above the straight move's halfway configuration
DETOUR_RAISE_RAD = 0.6
ARM_JOINTS, LIFT_JOINTS, BASE_JOINT = (0, 1, 2), (1, 2), (0,)


def detours(start: np.ndarray, goal: np.ndarray) -> list[list[np.ndarray]]:
    """Via configurations (one or two each) of joint paths from `start` to `goal` for when the
    straight joint move is blocked, most often serving first: the arm raised or lowered, then the
    base turned, then the wrists (the straight move swept the fingers through the table); the
    straight move's halfway configuration with the shoulder raised; the arm's three joints first,
    then the wrists; the base first. On the recorded frames' requests (test/grasping/frames,
    test/perception/frames) one of these served 24 of the 57 grasps the check sent to an RRT,
    each in a few milliseconds where the search took 0.3-2 s at load 13-20."""
    raised = (start + goal) / 2
    raised[1] -= DETOUR_RAISE_RAD           # a UR's shoulder lift: less is up
    return [[_moved(start, goal, LIFT_JOINTS), _moved(start, goal, ARM_JOINTS)], [raised],
            [_moved(start, goal, ARM_JOINTS)], [_moved(start, goal, BASE_JOINT)]]


def _moved(start: np.ndarray, goal: np.ndarray, joints: tuple) -> np.ndarray:
    """`start` with `joints` at their `goal` values."""
    q = np.array(start, float, copy=True)
    q[list(joints)] = np.asarray(goal, float)[list(joints)]
    return q


def _drop(rank: int, phase: str, e: SpatialManipError) -> Drop:
    """GoalBlocked / PlanNotFound carry the blocking body; IK and envelope refusals do not."""
    return Drop(rank, getattr(e, "phase", phase), getattr(e, "body", "") or _short(e.message), e.message)


OTHERS_NAMED = 3       # a drop names this many of what refused its other configurations


def _with_others(drop: Drop, refused: Counter) -> Drop:
    """`drop` naming what refused the grasp's other configurations, most often first
    (`refused`: each configuration's blocking body)."""
    others = refused - Counter([_blocker(drop.body)])
    named = [f"{body} x{n}" if n > 1 else body for body, n in others.most_common(OTHERS_NAMED)]
    return replace(drop, others=tuple(named)) if named else drop


def _blocker(body: str) -> str:
    """A drop's blocking body as `_with_others` counts it: a cloud's contact without its points."""
    return body.split(" (")[0]


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
