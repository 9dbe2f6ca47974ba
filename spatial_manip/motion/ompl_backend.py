"""`ompl` backend: OMPL's RRTConnect in joint space with a Pinocchio/coal validity checker, OMPL's
path simplifier, TOPP-RA timing, and a final dense check of the timed trajectory.

A pose goal becomes every analytic IK solution that is safe (OMPL's GoalStates: the search
connects to whichever is easiest). A straight joint move that is already safe skips the search.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from spatial_manip.control.config import MotionConfig
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import InvalidGoalError, UnreachableError
from spatial_manip.motion.base import GoalBlockedError, JointPath, PlanNotFoundError, as_goal
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.robot import RobotModel
from spatial_manip.motion.timing import DENSIFY_RAD, densify, time_parameterise
from spatial_manip.motion.world import CollisionWorld

WINDOW_RAD = np.pi       # joints search within [min(start, goal) - pi, max(start, goal) + pi]
# a hint (a path found before, e.g. by the grasp service's motion check) serves a plan when its ends lie
# this close to the plan's start (the arm's joints then and now: it stood still, within its noise) and
# to one of its goals (the same IK solution); its ends are moved onto them and every segment is checked
HINT_START_RAD = 0.01
HINT_GOAL_RAD = 1e-3


class OmplPlanner:
    name = "ompl"

    def __init__(self, robot: RobotModel, envelope: SafetyEnvelope, config: MotionConfig):
        from ompl import util as ou
        import toppra.algorithm  # noqa: F401  the timing's library, loaded here (1-2 s) and not by the first
        #                          plan: the first pick's plan took 2 s against 0.2-1 s for the next (issue 42)

        ou.setLogLevel(ou.LogLevel.LOG_WARN)     # OMPL's INFO lines would flood every plan (_restart_seed_sequence too)
        self.robot, self.envelope, self.config = robot, envelope, config
        c = envelope.config
        self.v_max = c.max_joint_speed_rad_s * config.speed_scale
        self.a_max = c.max_joint_accel_rad_s2 * config.speed_scale

    # ---- the protocol --------------------------------------------------------------------
    def plan(self, start_q, goal, world: CollisionWorld, *, phase: str = "transit",
             time_budget_s: float | None = None, hints=()) -> JointPath:
        """The budget bounds the search; simplification (config.simplify_s), timing and the
        final check come on top (a few to tens of milliseconds). `hints`: joint paths found
        before (waypoints (n, 6)); one from the start to a goal whose every segment is valid in
        this world is taken instead of a search (`search`)."""
        t0 = time.perf_counter()
        budget = float(time_budget_s or self.config.time_budget_s)
        start = np.asarray(start_q, float).reshape(-1)
        if start.size != 6 or not np.all(np.isfinite(start)):
            raise InvalidGoalError(f"{phase}: the start needs 6 finite joint angles, got {start.tolist()}")
        if not self.envelope.kin.within_limits(start):
            raise InvalidGoalError(f"{phase}: the start {np.round(start, 4).tolist()} rad is outside the joint limits")
        checker = self.checker(world, start, phase)
        goals = self.goal_configs(as_goal(goal), start, checker, phase)
        how: list[str] = []
        waypoints = self.search(start, goals, checker, phase, budget, budget - (time.perf_counter() - t0), hints, how)
        path = self._timed(waypoints, checker, phase)
        path.planning_time_s = time.perf_counter() - t0
        path.phase, path.found_by = phase, how[0]
        return path

    # ---- steps ---------------------------------------------------------------------------
    def checker(self, world: CollisionWorld, start: np.ndarray, phase: str = "transit") -> CollisionChecker:
        """The search's checker for plans from `start` in `world` (the keep-out boxes added as
        bodies when configured): with the configured padding, or without when the start already
        sits inside it (just after a grasp the hand is close to the support; leaving must stay
        possible). Built once, it serves every plan from that start (MotionCheck's grasps)."""
        if self.config.keep_out_bodies:
            world = world.with_keep_out(self.envelope)
        checker = CollisionChecker(self.robot, world, self.envelope, self.config.padding_m)
        if checker.problem(start) is None:
            return checker
        checker.set_padding(0.0)
        why = checker.problem(start)
        if why is not None:
            raise PlanNotFoundError(f"{phase}: the start configuration is not safe: {why}; move the arm clear "
                                    "(or allow contact with the object it is touching) first",
                                    phase=phase, body=why)
        return checker

    def goal_configs(self, goal: np.ndarray, start: np.ndarray, checker: CollisionChecker,
                     phase: str) -> list[np.ndarray]:
        """The safe configurations reaching a goal (joints, or every IK solution of a TCP pose,
        nearest the start first); GoalBlockedError / UnreachableError when there is none. A goal
        close to something drops the checker's padding (it stays dropped for the search)."""
        kin = self.envelope.kin
        if goal.shape == (6,):
            q = self.envelope.check_joints(goal)
            cands = [q]
        else:
            self.envelope.check_position(goal[:3, 3], what=f"{phase} goal TCP")
            cands = sorted(kin.ik_all(goal, start), key=lambda q: float(np.max(np.abs(q - start))))
            if not cands:
                kin.ik(goal, start)             # raises UnreachableError with the pose in its message
        problems = [(q, checker.problem(q)) for q in cands]
        ok = [q for q, why in problems if why is None]
        if not ok and checker.padding_m > 0:    # a goal close to something: search without padding
            checker.set_padding(0.0)
            problems = [(q, checker.problem(q)) for q in cands]
            ok = [q for q, why in problems if why is None]
        if not ok:
            why = problems[0][1]
            raise GoalBlockedError(f"{phase}: every arm configuration reaching the goal is blocked "
                                   f"({len(cands)} tried; nearest: {why})", phase=phase, body=why)
        return ok

    def search(self, start, goals, checker: CollisionChecker, phase: str, budget: float, left: float,
               hints=(), how: list | None = None) -> np.ndarray:
        """Waypoints (n, 6) of a path from start to one of the goals, with `left` seconds of the
        plan's `budget` for the RRT; the straight joint move when it is safe, else a hint that
        serves (`hinted_path`). `how` (a list) gets "straight", "hint" or "search" appended."""
        how = [] if how is None else how
        step = self.config.plan_step_rad
        for g in goals:                          # the straight joint move, when it is safe
            if checker.segment_valid(start, g, step):
                how.append("straight")
                return np.array([start, g])
        for hint in hints:
            waypoints = self.hinted_path(hint, start, goals, checker)
            if waypoints is not None:
                how.append("hint")
                return waypoints
        how.append("search")
        return self._rrt(start, goals, checker, phase, budget, max(left, 0.01))

    def hinted_path(self, hint, start, goals, checker: CollisionChecker) -> np.ndarray | None:
        """`hint` (waypoints (n, 6)) as a path from `start` to one of `goals`: its first waypoint
        within HINT_START_RAD of the start and its last within HINT_GOAL_RAD of a goal (both moved
        onto them), every waypoint within the joint limits (a detour's via configuration may lie
        outside them: the search's own samples never do) and every waypoint and every segment
        between them valid with `checker` (the search's own, padding and all); None when it does
        not serve. A malformed hint serves not."""
        try:
            w = np.array(hint, float)
        except (TypeError, ValueError):
            return None
        if w.ndim != 2 or w.shape[1] != 6 or len(w) < 2 or not np.all(np.isfinite(w)) or \
                float(np.max(np.abs(w[0] - start))) > HINT_START_RAD:
            return None
        goal = next((g for g in goals if float(np.max(np.abs(w[-1] - g))) <= HINT_GOAL_RAD), None)
        if goal is None:
            return None
        w[0], w[-1] = start, goal
        if not all(self.envelope.kin.within_limits(q) for q in w):
            return None
        step = self.config.plan_step_rad
        if all(checker.valid(q) for q in w) and all(checker.segment_valid(a, b, step) for a, b in zip(w[:-1], w[1:])):
            return w
        return None

    def _rrt(self, start, goals, checker: CollisionChecker, phase: str, budget: float, left: float) -> np.ndarray:
        """RRTConnect for what is `left` of the plan's `budget` (seconds)."""
        from ompl import base as ob, geometric as og

        _restart_seed_sequence(self.config.seed)
        space = ob.RealVectorStateSpace(6)
        bounds = ob.RealVectorBounds(6)
        lo, hi = self._window(start, goals)
        for j in range(6):
            bounds.setLow(j, float(lo[j]))
            bounds.setHigh(j, float(hi[j]))
        space.setBounds(bounds)
        ss = og.SimpleSetup(space)
        ss.setStateValidityChecker(lambda s: checker.valid(np.array([s[j] for j in range(6)])))
        si = ss.getSpaceInformation()
        si.setStateValidityCheckingResolution(self.config.plan_step_rad / space.getMaximumExtent())
        ss.setStartState(_state(space, start))
        goal_states = ob.GoalStates(si)
        for g in goals:
            goal_states.addState(_state(space, g))
        ss.setGoal(goal_states)
        ss.setPlanner(og.RRTConnect(si))
        solved = ss.solve(left)
        if not (solved and ss.haveExactSolutionPath()):
            body = checker.blocker_near(goals[0], start, self.config.plan_step_rad)
            raise PlanNotFoundError(f"{phase}: no collision-free path found in the {budget:.2f} s budget; the way to the "
                                    f"goal is closed by {body}", phase=phase, body=body)
        ss.simplifySolution(self.config.simplify_s)
        path = ss.getSolutionPath()
        return np.array([[path.getState(i)[j] for j in range(6)] for i in range(path.getStateCount())])

    def path_problem(self, waypoints: np.ndarray, checker: CollisionChecker) -> str | None:
        """The final check of an untimed path (the polyline through its waypoints) without
        padding, as _timed checks a timed one: the first problem on it, or None."""
        padding = checker.padding_m
        checker.set_padding(0.0)
        try:
            return _verify(checker, np.asarray(waypoints, float), self.config.verify_step_rad)[0]
        finally:
            checker.set_padding(padding)

    def _window(self, start, goals) -> tuple[np.ndarray, np.ndarray]:
        """Search bounds: the joint limits, narrowed around start and goals so the search does
        not wander through extra turns of the +-2 pi wrists (and samples where it matters)."""
        kin = self.envelope.kin
        pts = np.vstack([start] + list(goals))
        lo = np.maximum(np.asarray(kin.q_min), pts.min(0) - WINDOW_RAD)
        hi = np.minimum(np.asarray(kin.q_max), pts.max(0) + WINDOW_RAD)
        return lo, hi

    def _timed(self, waypoints: np.ndarray, checker: CollisionChecker, phase: str) -> JointPath:
        """Time the path; when the spline through the waypoints strays into something, follow
        the polyline more closely (denser points) and try again. The path's waypoints are then
        the denser ones: an arm that times them itself (the sim's move_path) follows the curve
        checked here, not the first one that strayed."""
        bare = checker
        bare.set_padding(0.0)
        why = None
        for step in (DENSIFY_RAD, DENSIFY_RAD / 4, DENSIFY_RAD / 16):
            t, q, qd, qdd = time_parameterise(waypoints, self.v_max, self.a_max, self.config.sample_dt_s, step)
            why, tcp = _verify(bare, q, self.config.verify_step_rad)
            if why is None:
                followed = waypoints if step == DENSIFY_RAD else densify(waypoints, step)
                return JointPath(waypoints=followed, t=t, q=q, qd=qd, qdd=qdd, tcp=tcp)
        raise PlanNotFoundError(f"{phase}: the timed trajectory is not safe: {why}", phase=phase, body=why)


def _verify(checker: CollisionChecker, q: np.ndarray, step_rad: float) -> tuple[str | None, np.ndarray]:
    """The final check, without padding: no contact at any sample nor between samples (filled
    in to step_rad), and SafetyEnvelope.check_position passing at every sample. Returns the
    first problem (or None) and the TCP positions."""
    for x in _spaced(q, step_rad):
        if checker.collides(x):
            return checker.problem(x), np.empty((0, 3))
    tcp = np.array([checker.tcp(x) for x in q])
    try:
        for p in tcp:
            checker.envelope.check_position(p, what="TCP on the path")
    except UnreachableError as e:
        return e.message, tcp
    return None, tcp


def _spaced(q: np.ndarray, step_rad: float) -> list[np.ndarray]:
    """The samples of a trajectory thinned or filled to about step_rad apart (largest joint
    change): slow stretches sample the same place many times over."""
    out, last = [q[0]], q[0]
    for b in q[1:]:
        gap = float(np.max(np.abs(b - last)))
        if gap >= step_rad:
            n = int(np.ceil(gap / step_rad))
            out += [last + (b - last) * (k / n) for k in range(1, n + 1)]
            last = b
    if out[-1] is not q[-1]:
        out.append(q[-1])
    return out


_SEED_LOCK = threading.Lock()


def _restart_seed_sequence(seed: int | None) -> None:
    """Restart OMPL's process-wide seed sequence at `seed` before a search builds its sampler,
    nearest-neighbour structure and simplifier (each takes the sequence's next seed), so a seeded
    plan draws the same given the same inputs, whatever was planned before it in the process
    (seeded once per process, a test's paths changed with the tests run before it). One search at
    a time: searches on several threads at once (grasp_node's) share the sequence, so their draws
    interleave. OMPL logs every restart after the first draw as an error ("not deterministic"); it
    is silenced here, under a lock, and the planner's own level (LOG_WARN) set again after it: a
    level saved and restored by two threads at once could stay silenced for good."""
    if seed is None:
        return
    from ompl import util as ou

    with _SEED_LOCK:
        ou.setLogLevel(ou.LogLevel.LOG_NONE)
        try:
            ou.RNG.setSeed(int(seed))
        finally:
            ou.setLogLevel(ou.LogLevel.LOG_WARN)


def _state(space, q: np.ndarray):
    s = space.allocState()
    for j in range(6):
        s[j] = float(q[j])
    return s


