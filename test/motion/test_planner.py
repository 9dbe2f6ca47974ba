"""The OMPL motion planner on the real libraries (OMPL, coal, Pinocchio, TOPP-RA): around a box,
with a held object, within the envelope, and the specific errors when it cannot."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ompl")
pytest.importorskip("pinocchio")
pytest.importorskip("toppra")

from spatial_manip.control.config import load_arm_config  # noqa: E402
from spatial_manip.errors import ErrorCode, InvalidGoalError, UnreachableError  # noqa: E402
from spatial_manip.control.config import MotionConfig  # noqa: E402
from spatial_manip.motion.base import GoalBlockedError, JointPath, MotionPlanner, PlanNotFoundError  # noqa: E402
from spatial_manip.motion.cartesian import straight_segment  # noqa: E402
from spatial_manip.motion.checker import CollisionChecker, EnvelopeBoxes  # noqa: E402
from spatial_manip.motion.factory import make_planner  # noqa: E402
from spatial_manip.motion.world import CollisionWorld  # noqa: E402

DOWN = np.diag([1.0, -1.0, -1.0])        # TCP approach -z (top-down)
DENSE_RAD = 0.004


def pose(p, R=DOWN) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def table_world() -> CollisionWorld:
    w = CollisionWorld()
    w.add_box("table", [0.6, 0.0, -0.025], [0.9, 1.4, 0.05])
    return w


def wall_world() -> CollisionWorld:
    w = table_world()
    w.add_box("wall", [0.45, 0.0, 0.15], [0.30, 0.06, 0.30])
    return w


def dense_problems(planner, world: CollisionWorld, q: np.ndarray) -> list[str]:
    """Every problem the envelope and an unpadded checker find along the path, densely."""
    checker = CollisionChecker(planner.robot, world.with_keep_out(planner.envelope), planner.envelope, 0.0)
    out = []
    for a, b in zip(q[:-1], q[1:]):
        hit = checker.first_problem_on_segment(a, b, DENSE_RAD)
        if hit is not None:
            out.append(hit[1])
    for x in q:
        try:
            planner.envelope.check_position(checker.tcp(x))
        except UnreachableError as e:
            out.append(e.message)
    return out


def test_planner_follows_the_protocol_and_config_string_is_validated(planner, arm_cfg):
    assert isinstance(planner, MotionPlanner) and planner.name == "ompl"
    with pytest.raises(InvalidGoalError, match="motion.backend must be one of"):
        make_planner({**arm_cfg, "motion": {"backend": "moveit"}})
    with pytest.raises(InvalidGoalError, match="motion: unknown key"):
        MotionConfig.from_config({"time_budget": 1.0})


def test_plans_around_a_box_the_straight_line_would_hit(planner, home):
    kin = planner.envelope.kin
    start = kin.ik(pose([0.45, -0.30, 0.12]), home)
    goal = kin.ik(pose([0.45, 0.30, 0.12]), home)
    world = wall_world()
    checker = CollisionChecker(planner.robot, world, planner.envelope)
    hit = checker.first_problem_on_segment(start, goal, DENSE_RAD)
    assert hit is not None and "wall" in hit[1]             # the straight joint move collides
    path = planner.plan(start, goal, world, phase="transit")
    assert isinstance(path, JointPath)
    np.testing.assert_allclose(path.q[0], start, atol=1e-9)
    np.testing.assert_allclose(path.q[-1], goal, atol=1e-6)
    assert dense_problems(planner, world, path.q) == []
    crossing = np.abs(path.tcp[:, 1]) < 0.05                 # where the TCP passes the wall's plane
    over = path.tcp[crossing, 2] > 0.30
    around = (path.tcp[crossing, 0] < 0.30) | (path.tcp[crossing, 0] > 0.60)
    assert crossing.any() and np.all(over | around)         # over the wall or round its end, never through


def test_timing_respects_the_envelope_joint_caps(planner, home):
    kin = planner.envelope.kin
    start = kin.ik(pose([0.45, -0.30, 0.12]), home)
    path = planner.plan(start, kin.ik(pose([0.45, 0.30, 0.12]), home), wall_world())
    c = planner.envelope.config
    assert np.all(np.abs(path.qd) <= c.max_joint_speed_rad_s + 1e-9)
    assert np.all(np.abs(path.qdd) <= c.max_joint_accel_rad_s2 + 1e-9)
    np.testing.assert_allclose(path.qd[[0, -1]], 0.0, atol=1e-6)      # starts and ends at rest
    dt = np.diff(path.t)
    assert np.all(dt > 0) and dt.max() <= planner.config.sample_dt_s + 1e-9
    # the samples are consistent with their velocities (a real trajectory, not relabelled points)
    np.testing.assert_allclose(np.diff(path.q, axis=0), (path.qd[:-1] + path.qd[1:]) / 2 * dt[:, None], atol=2e-3)


def test_a_seeded_search_draws_the_same_whatever_drew_before_it(arm_cfg, home):
    """OMPL seeds each sampler, nearest-neighbour structure and simplifier from one process-wide
    sequence; seeded once per process, a test's RRT paths changed with the tests run before it
    (test_grasp_frames' clock frame, whole-suite runs only). The planner restarts the sequence per
    search: the same search after other draws (other tests' planners) finds the same path."""
    from ompl import util as ou

    # simplified to convergence: cut short by its 0.05 s default, how far simplification gets (and
    # how many numbers it draws) depends on the machine's load, not on the seed
    planner = make_planner(arm_cfg, {"seed": 5, "simplify_s": 5.0})
    kin = planner.envelope.kin
    start, goal = kin.ik(pose([0.45, -0.30, 0.12]), home), kin.ik(pose([0.45, 0.30, 0.12]), home)
    first = planner.plan(start, goal, wall_world())
    [ou.RNG().uniform01() for _ in range(5)]                 # what earlier searches would have drawn
    planner.plan(kin.ik(pose([0.45, 0.30, 0.12]), home), start, wall_world())
    again = planner.plan(start, goal, wall_world())
    assert (first.found_by, again.found_by) == ("search", "search")
    np.testing.assert_array_equal(again.waypoints, first.waypoints)


def test_pose_goal_reaches_the_pose(planner, home):
    T = pose([0.40, 0.25, 0.30])
    path = planner.plan(home, T, table_world(), phase="pre_grasp")
    np.testing.assert_allclose(planner.envelope.kin.fk(path.q[-1]), T, atol=1e-6)


def test_held_object_is_attached_and_checked(planner, home):
    kin = planner.envelope.kin
    q = kin.ik(pose([0.45, -0.30, 0.30]), home)
    world = table_world()
    world.add_box("block", [0.45, -0.30, 0.09], [0.10, 0.10, 0.04])     # under the hand, clear of the fingers
    assert CollisionChecker(planner.robot, world, planner.envelope).contact(q) is None
    book = CollisionWorld(list(world.obstacles))
    # a 24 cm book hanging below the fingers: its lower end reaches into the block
    book.attach("book_1", [0.03, 0.16, 0.24], pose([0.0, 0.0, 0.10], np.eye(3)))
    pair = CollisionChecker(planner.robot, book, planner.envelope).contact(q)
    assert pair is not None and "held:book_1" in pair and "block" in pair
    # and a plan carrying it keeps the book clear all along
    start = kin.ik(pose([0.45, 0.30, 0.38]), home)
    path = planner.plan(start, kin.ik(pose([0.45, -0.30, 0.38]), home), book, phase="carry")
    assert dense_problems(planner, book, path.q) == []
    held = CollisionChecker(planner.robot, book, planner.envelope)
    assert all(held.contact(x) is None for x in path.q)


def test_unreachable_goal_is_unreachable(planner, home):
    with pytest.raises(UnreachableError) as e:
        planner.plan(home, pose([0.90, 0.0, 0.60]), table_world(), phase="pre_grasp")   # inside the box, beyond reach
    assert e.value.code is ErrorCode.UNREACHABLE
    with pytest.raises(UnreachableError, match="outside the workspace"):
        planner.plan(home, pose([1.5, 0.0, 0.3]), table_world(), phase="pre_grasp")


def test_goal_inside_an_obstacle_names_it(planner, home):
    world = table_world()
    world.add_box("jar", [0.45, -0.30, 0.12], [0.12, 0.12, 0.24])
    with pytest.raises(GoalBlockedError) as e:
        planner.plan(home, pose([0.45, -0.30, 0.20]), world, phase="pre_place")
    assert e.value.code is ErrorCode.UNREACHABLE
    assert e.value.phase == "pre_place" and "jar" in e.value.body and "pre_place" in e.value.message


def test_no_path_in_budget_is_motion_failed_naming_the_blocker(arm_cfg, home):
    """The goal's TCP sits in a pocket closed by keep-out boxes (checked for the TCP only
    here): the goal configuration is safe, and no path can reach it."""
    c, h, t = np.array([0.45, 0.30, 0.20]), 0.06, 0.02
    shell = []
    for axis in range(3):
        for sign in (-1, 1):
            lo, hi = c - h - t, c + h + t
            lo[axis], hi[axis] = (c[axis] + h, c[axis] + h + t) if sign > 0 else (c[axis] - h - t, c[axis] - h)
            shell.append({"name": f"pocket_{axis}{'+' if sign > 0 else '-'}", "min_m": lo.tolist(), "max_m": hi.tolist()})
    cfg = {**arm_cfg, "safety": {**arm_cfg["safety"], "keep_out": shell}}
    planner = make_planner(cfg, {"seed": 5, "keep_out_bodies": False})
    goal = planner.envelope.kin.ik(pose(c), home)
    with pytest.raises(PlanNotFoundError) as e:
        planner.plan(home, goal, table_world(), phase="transit", time_budget_s=0.3)
    assert e.value.code is ErrorCode.MOTION_FAILED
    assert e.value.phase == "transit" and "keep-out box 'pocket_" in e.value.body
    assert "no collision-free path found in the 0.30 s budget; the way to the goal is closed by" in e.value.message


def test_envelope_boxes_agree_with_the_envelope(planner):
    fast = EnvelopeBoxes(planner.envelope)
    rng = np.random.default_rng(3)
    for p in rng.uniform([-0.6, -1.0, -0.2], [1.2, 1.0, 1.6], (3000, 3)):
        try:
            planner.envelope.check_position(p)
            ok = True
        except UnreachableError:
            ok = False
        assert fast.ok(p) == ok, p


def test_envelope_boxes_agree_with_a_round_keep_out(arm_cfg):
    """A keep-out with radius_m (the sim cell's stand) refuses inside the cylinder, not in its
    box's corners, in the search's fast test as in the envelope's."""
    cfg = {**arm_cfg, "safety": {**arm_cfg["safety"], "workspace_min_m": [-0.5, -0.5, -0.5], "keep_out": [
        {"name": "pillar", "min_m": [0.3, -0.1, -0.5], "max_m": [0.5, 0.1, 0.3], "radius_m": 0.1}]}}
    envelope = make_planner(cfg, {"seed": 5}).envelope
    fast = EnvelopeBoxes(envelope)
    assert fast.refusal([0.4, 0.0, 0.2]) == "keep-out box 'pillar'"
    assert fast.ok([0.49, 0.09, 0.2])          # the box's corner, 0.127 m off the axis
    envelope.check_position(np.array([0.49, 0.09, 0.2]))
    rng = np.random.default_rng(4)
    for p in rng.uniform([0.25, -0.15, -0.1], [0.55, 0.15, 0.35], (2000, 3)):
        try:
            envelope.check_position(p)
            ok = True
        except UnreachableError:
            ok = False
        assert fast.ok(p) == ok, p


def test_straight_segment_checks_all_but_the_target_and_its_support(planner, home):
    kin = planner.envelope.kin
    world = table_world()
    world.add_box("book_1", [0.45, 0.0, 0.04], [0.03, 0.20, 0.08])          # the target, standing
    world.add_box("holder_1", [0.45, 0.0, 0.015], [0.08, 0.22, 0.03])        # its support
    world.add_box("lamp", [0.45, 0.0, 0.14], [0.03, 0.03, 0.03])             # in the way of the approach
    q0 = kin.ik(pose([0.45, 0.0, 0.25]), home)
    grasp = pose([0.45, 0.0, 0.07])
    with pytest.raises(PlanNotFoundError) as e:
        straight_segment(planner.robot, planner.envelope, world, q0, grasp, allowed=["book_1", "holder_1"], phase="approach")
    assert "lamp" in e.value.body and e.value.phase == "approach"
    clear = world.without(["lamp"])
    with pytest.raises(PlanNotFoundError, match="book_1|holder_1"):     # touching the target is a contact too
        straight_segment(planner.robot, planner.envelope, clear, q0, grasp, phase="approach")
    qs = straight_segment(planner.robot, planner.envelope, clear, q0, grasp, allowed=["book_1", "holder_1"])
    np.testing.assert_allclose(kin.fk(qs[-1]), grasp, atol=1e-6)
    tcp = np.array([kin.fk(q)[:3, 3] for q in qs])
    assert np.allclose(tcp[:, :2], [0.45, 0.0], atol=1e-6)                   # straight down


def test_fingers_close_on_the_held_object(planner, home):
    """Open (85 mm), a finger touches a slab 5.6 cm beside the TCP; closed on a 3 cm book it does not."""
    q = planner.envelope.kin.ik(pose([0.45, 0.0, 0.30]), home)
    world = CollisionWorld()
    world.add_box("slab", [0.45, 0.056, 0.30], [0.02, 0.012, 0.04])
    pair = CollisionChecker(planner.robot, world, planner.envelope).contact(q)
    assert pair is not None and "finger" in pair[0] and pair[1] == "slab"
    holding = CollisionWorld(list(world.obstacles))
    holding.attach("book_1", [0.20, 0.03, 0.15], pose([0.0, 0.0, 0.05], np.eye(3)))
    assert CollisionChecker(planner.robot, holding, planner.envelope).contact(q) is None


def test_a_hint_that_is_clear_in_the_plans_world_is_taken_instead_of_a_search(planner, home):
    """Issue 42: the grasp service's motion check found a path to the pre-grasp; the arm's plan
    takes it (its ends moved onto the start and the goal) when every segment is clear in its own
    world, and searches as before when the hint does not serve: another goal, a start farther than
    the arm's still noise, a segment through something, a malformed one."""
    from unittest import mock

    kin = planner.envelope.kin
    start = kin.ik(pose([0.45, -0.30, 0.12]), home)
    goal = kin.ik(pose([0.45, 0.30, 0.12]), home)
    world = wall_world()
    assert len(planner.plan(start, goal, world, phase="transit").waypoints) > 2    # the straight move is blocked
    # the hint: over the wall, built by hand rather than by a search, whose time-budgeted draws
    # may graze the padding between the search's checked states and fail the hint's check (load)
    found = np.array([start, kin.ik(pose([0.45, -0.30, 0.45]), start), kin.ik(pose([0.45, 0.30, 0.45]), start), goal])
    checker = planner.checker(world, start)
    assert planner.hinted_path(found, start, [goal], checker) is not None
    noisy = found.copy()
    noisy[0] += 0.004                                            # the joints a moment before, within the noise
    with mock.patch.object(planner, "_rrt", side_effect=AssertionError("searched")):
        path = planner.plan(start, goal, world, phase="transit", hints=[np.zeros((2, 6)), noisy])
    np.testing.assert_allclose(path.waypoints[1:-1], found[1:-1])
    assert path.found_by == "hint"
    np.testing.assert_allclose(path.q[0], start, atol=1e-9)
    np.testing.assert_allclose(path.q[-1], goal, atol=1e-6)
    assert dense_problems(planner, world, path.q) == []
    through_the_wall = np.array([start, goal])
    far_start = found.copy()
    far_start[0] += 0.05
    other_goal = found.copy()
    other_goal[-1] += 0.01
    for hint in (through_the_wall, far_start, other_goal, found[:, :5], [[np.nan] * 6] * 2, "not a path"):
        assert planner.hinted_path(hint, start, [goal], checker) is None
    searched = planner.plan(start, goal, world, phase="transit", hints=[through_the_wall])
    assert searched.found_by == "search" and dense_problems(planner, world, searched.q) == []


def test_a_hint_through_a_configuration_outside_the_joint_limits_is_refused(planner, home):
    """A grasp check's detour (a hint) turns a joint past its limit on a via configuration while
    its ends lie within them: a planner with those limits refuses it and searches within them
    (the search's own samples never leave them); the same hint serves a planner whose limits
    hold it."""
    from spatial_manip.grasping.motion_check import detours

    kin = planner.envelope.kin
    start, goal = kin.ik(pose([0.45, -0.30, 0.12]), home), kin.ik(pose([0.45, 0.30, 0.12]), home)
    vias = [np.array(v) for v in detours(start, goal)[0]]
    for v in vias:
        v[5] = max(start[5], goal[5]) + 0.8             # the wrist turned past both ends
    hint = np.array([start, *vias, goal])
    world = table_world()
    assert planner.hinted_path(hint, start, [goal], planner.checker(world, start)) is not None
    lo, hi = list(kin.q_min), list(kin.q_max)
    lo[5], hi[5] = min(start[5], goal[5]) - 0.2, max(start[5], goal[5]) + 0.4
    narrow = make_planner(load_arm_config(None, {"kinematics.joint_limits": {"min": lo, "max": hi}}), {"seed": 5})
    assert narrow.hinted_path(hint, start, [goal], narrow.checker(world, start)) is None
    path = narrow.plan(start, goal, world, hints=[hint])
    assert path.found_by != "hint" and all(narrow.envelope.kin.within_limits(q) for q in path.waypoints)


@pytest.mark.parametrize("coarse_strays", [False, True])
def test_an_arm_timing_the_paths_waypoints_follows_the_curve_the_final_check_passed(planner, home, monkeypatch,
                                                                                    coarse_strays):
    """The arm gets a path's waypoints and times them itself (the sim's move_path: the same TOPP-RA
    curve through them). When the spline through the search's waypoints strayed into something
    and a denser one passed the final check, the path's waypoints were still the search's: the arm
    followed the curve that had failed. Re-timed at the arm's own caps, the waypoints give the
    checked curve, whether the first curve passed or a denser one had to."""
    import spatial_manip.motion.ompl_backend as backend
    from spatial_manip.motion.timing import time_parameterise

    if coarse_strays:                    # the first (coarsest) curve is refused, as one straying would be
        verify, calls = backend._verify, []
        monkeypatch.setattr(backend, "_verify", lambda *a: (calls.append(1), ("strays", np.empty((0, 3)))
                                                             if len(calls) == 1 else verify(*a))[1])
    searched = []                        # the search's waypoints, as handed to the final check
    timed = planner._timed
    monkeypatch.setattr(planner, "_timed", lambda w, *a: (searched.append(np.array(w)), timed(w, *a))[1])
    kin = planner.envelope.kin
    start = kin.ik(pose([0.45, -0.30, 0.12]), home)
    path = planner.plan(start, kin.ik(pose([0.45, 0.30, 0.12]), home), wall_world())
    # denser waypoints only when needed (how many the search gives depends on OMPL's draws)
    assert len(searched) == 1 and (len(path.waypoints) > len(searched[0])) == coarse_strays
    q = time_parameterise(path.waypoints, 1.05, 1.4, 0.02)[1]
    gap = [float(np.min(np.max(np.abs(path.q - x), axis=1))) for x in q]
    assert max(gap) < 0.01, max(gap)        # every sample on the checked curve (its 8 ms samples)
