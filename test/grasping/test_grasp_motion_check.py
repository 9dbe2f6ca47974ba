"""GraspService's motion stage on the real planner (OMPL, Pinocchio, coal, TOPP-RA): a grasp whose
straight approach runs through a board is dropped and the message names the board (for its
other arm configurations too); the next grasp is kept with its pre-grasp path; unknown joints
skip the stage with a note."""
import numpy as np
import pytest

pytest.importorskip("ompl")
pytest.importorskip("pinocchio")
pytest.importorskip("toppra")

from spatial_manip.control.config import load_arm_config, load_home_q, load_kinematics  # noqa: E402
from spatial_manip.errors import InvalidGoalError  # noqa: E402
from spatial_manip.grasping.grasp_group import GraspGroup  # noqa: E402
from spatial_manip.grasping.gripper import GripperGeometry  # noqa: E402
from spatial_manip.grasping.motion_check import MotionCheck, MotionCheckConfig  # noqa: E402
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox  # noqa: E402
from spatial_manip.motion.factory import make_planner  # noqa: E402
from spatial_manip.scene import Scene, SceneObject, Viewpoint  # noqa: E402
from synthetic import render_boxes  # noqa: E402

DOWN = np.array([[0.0, 1, 0], [0, 0, -1], [-1, 0, 0]])      # grasp approach (x) = -z, closing along base x
BLOCK = ((0.5, -0.15, 0.04), (0.05, 0.10, 0.08))           # the target on the table
# a board 3 cm over the block's -y end: between that end's pre-grasp and grasp, clear of its +y end
BOARD = SceneObject("board", "board", "shelf", (0.5, -0.285, 0.11), (0.2, 0.23, 0.01))


class FixedGrasps:
    """Proposer double: the given base-frame grasps, handed back in the camera frame."""

    def __init__(self, grasps_base: GraspGroup, T_base_cam: np.ndarray):
        self.grasps = grasps_base.transform(np.linalg.inv(T_base_cam), frame_id="camera_color_optical_frame")

    def get_grasp(self, points, colors=None, **kw):
        return self.grasps, None


def _grasps() -> GraspGroup:
    """Best: top-down at the block's -y edge, under the board. Second: its +y edge, in the open."""
    return GraspGroup.from_parts(scores=[0.9, 0.8], widths=[0.05, 0.05], heights=[0.02, 0.02],
                                 depths=[0.02, 0.02], rotations=np.stack([DOWN, DOWN]),
                                 translations=np.array([[0.5, -0.19, 0.08], [0.5, -0.11, 0.08]]),
                                 frame_id="base")


def _scene() -> Scene:
    you = Viewpoint((0.0, 0.0, 0.5), (1.0, 0.0, 0.0))
    block = SceneObject("block_1", "block", "reference", BLOCK[0], BLOCK[1])
    table = SceneObject("table", "table", "table", (0.5, 0.0, -0.02), (0.8, 1.0, 0.04))
    return Scene(viewer=you, robot=you, objects=[block, table, BOARD])


@pytest.fixture(scope="module")
def setup():
    depth, intr, T, _ = render_boxes([BLOCK])
    planner = make_planner(load_arm_config(), {"seed": 3})
    service = GraspService(FixedGrasps(_grasps(), T), GripperGeometry(),
                           ServiceConfig(link_clearance_m=None, reference_q=load_home_q()),
                           kinematics=load_kinematics(), motion=MotionCheck(planner, MotionCheckConfig(time_budget_s=5.0)))
    return service, depth, intr, T, np.asarray(load_home_q(), float)


def _request(setup, **kw):
    service, depth, intr, T, _ = setup
    return service.propose_for_box(depth, intr, T, TargetBox(np.array(BLOCK[0]), np.array(BLOCK[1]),
                                                             object_id="block_1"), 0, **kw)


def test_a_grasp_whose_approach_hits_a_board_is_dropped_and_the_board_named(setup):
    res = _request(setup, scene=_scene(), q_now=setup[4])
    assert res.success, res.message
    assert len(res.grasps) == 1 and abs(res.grasps.translations[0][1] - (-0.11)) < 1e-9   # the open one
    report = res.motion
    assert report.checked == 2 and report.kept == [1]
    (drop,) = report.drops
    assert drop.rank == 0 and drop.phase == "approach" and "board" in drop.body
    # it names what refused its other arm configurations too (each pre-grasp has several)
    assert drop.others and any("board" in o for o in drop.others) and "other arm configurations" in str(drop)
    assert "#0 approach:" in res.message and "board" in res.message and "2 checked, 1 kept" in res.message
    path = report.paths[1]
    assert np.allclose(path.waypoints[0], setup[4]) and len(path.waypoints) >= 2
    T_pre = np.asarray(setup[0].gripper.tcp_poses(res.grasps.matrices(), res.grasps.depths))[0]
    kin = setup[0].motion.planner.envelope.kin
    assert np.linalg.norm(kin.fk(path.waypoints[-1])[:3, 3] - (T_pre[:3, 3] - 0.10 * T_pre[:3, 2])) < 1e-3  # the pre-grasp
    trace = report.tcp_trace(1, kin)                 # the markers' TCP path: pre-grasp path, then the approach
    assert np.linalg.norm(trace[-1] - T_pre[:3, 3]) < 1e-3 and len(trace) > len(path.waypoints)


def test_without_the_board_both_grasps_are_kept(setup):
    scene = _scene()
    res = _request(setup, scene=scene.with_objects([o for o in scene.objects if o.id != "board"]), q_now=setup[4])
    assert res.success and len(res.grasps) == 2 and res.motion.drops == []


def _behind(across_m: float, category: str = "reference") -> SceneObject:
    """A thin object between the camera (at the origin, looking +x) and the block's -y end, 4 cm deep as
    seen: clear of both grasps, its hidden far side (grown to its width, motion.world.with_hidden_side,
    up to 8 cm) reaching the -y end's fingers, and the +y end's too when it is wide enough across."""
    return SceneObject("plant", "plant", category, (0.37, -0.31 + across_m / 2, 0.10), (0.04, across_m, 0.20))


def test_a_grasp_clear_of_a_neighbours_hidden_side_is_preferred(setup):
    scene = _scene().with_objects([o for o in _scene().objects if o.id != "board"])
    # 13 cm across: the +y end's gripper passes it by more than NEIGHBOUR_MARGIN_M
    seen = _request(setup, scene=scene.with_objects(scene.objects + [_behind(0.13, "book")]), q_now=setup[4])
    assert seen.success and seen.motion.kept[0] == 0       # a book's box is complete: the best grasp leads
    res = _request(setup, scene=scene.with_objects(scene.objects + [_behind(0.13)]), q_now=setup[4])
    assert res.success, res.message
    # the +y end's first; the -y end's, whose fingers meet the plant's hidden side, after it: the
    # measured boxes allow it, and a set-down filter or a retry may need it
    assert res.motion.kept == [1, 0] and abs(res.grasps.translations[0][1] - (-0.11)) < 1e-9
    assert res.motion.drops == [] and "1 of 2 checked cleared the neighbours' hidden sides" in res.message
    assert "(first refused: #0" in res.message and "plant" in res.message


def test_when_no_grasp_clears_the_hidden_sides_the_measured_boxes_decide(setup):
    scene = _scene().with_objects([o for o in _scene().objects if o.id != "board"])
    res = _request(setup, scene=scene.with_objects(scene.objects + [_behind(0.26)]), q_now=setup[4])
    assert res.success and res.motion.kept[0] == 0 and res.motion.drops == [], res.message
    assert "on the measured boxes too: 0 of 2 checked cleared the neighbours' hidden sides (first refused: #0" in res.message
    assert "plant" in res.message


def test_unknown_joints_skip_the_check_with_a_note(setup):
    res = _request(setup, scene=_scene(), q_now=None)
    assert res.success and len(res.grasps) == 2
    assert res.motion.skipped and "motion check skipped: the arm's current joints are unknown" in res.message


def test_a_start_in_collision_skips_the_check_and_says_why(setup):
    scene = _scene()
    q = setup[4]
    T_tcp = load_kinematics().fk(q)
    wall = SceneObject("crate", "crate", "reference", T_tcp[:3, 3], (0.4, 0.4, 0.4))  # the gripper deep inside: no 10 cm move clears it
    res = _request(setup, scene=scene.with_objects(scene.objects + [wall]), q_now=q)
    assert res.success and "not a safe start" in res.message and "crate" in res.message


def test_motion_check_settings_are_validated_by_name():
    with pytest.raises(InvalidGoalError, match="motion_check.time_budget_s"):
        MotionCheckConfig(time_budget_s=0.0)
    with pytest.raises(InvalidGoalError, match="motion_check: unknown key 'budget'"):
        MotionCheckConfig.from_config({"budget": 1.0})


def _arm_surface(planner, q) -> np.ndarray:
    """Points on the upper arm's and forearm's collision cylinders at q: what a camera sees of it
    (as densely as a depth image does: sparser returns are unsupported, no obstacle)."""
    import pinocchio as pin

    from spatial_manip.motion.robot import link_of

    robot = planner.robot
    data, gdata = robot.model.createData(), pin.GeometryData(robot.geom)
    pin.updateGeometryPlacements(robot.model, data, robot.geom, gdata, np.asarray(q, float))
    out = []
    for g, M in zip(robot.geom.geometryObjects, gdata.oMg):
        if link_of(g) in ("upper_arm_link", "forearm_link"):
            th, z = np.meshgrid(np.linspace(0, 2 * np.pi, 96), np.linspace(-1, 1, 48) * g.geometry.halfLength)
            r = g.geometry.radius + 0.01                      # a depth surface just outside the primitive
            local = np.column_stack([r * np.cos(th).ravel(), r * np.sin(th).ravel(), z.ravel()])
            out.append(local @ M.rotation.T + M.translation)
    return np.vstack(out)


def test_the_arm_seen_in_the_cloud_does_not_block_its_own_start(setup):
    service, _, _, _, q = setup
    planner = service.motion.planner
    cloud = _arm_surface(planner, q)
    target = SceneObject("block_1", "block", "reference", BLOCK[0], BLOCK[1])
    world, _ = service.motion.build_world(_scene(), target, q, cloud)
    assert "cloud" not in world.names() and service.motion.start_problem(q, world) is None
    unfiltered = MotionCheck(planner, MotionCheckConfig(self_filter_m=0.0))
    world, _ = unfiltered.build_world(_scene(), target, q, cloud)
    assert "cloud" in (unfiltered.start_problem(q, world) or "")


def test_a_spent_budget_bounds_the_searches_not_the_checks(setup):
    """Both grasps here are reached by a straight joint move: no search is needed, so a spent
    budget checks and keeps both (test_motion_check_batch: grasps that need a search)."""
    service, depth, intr, T, q = setup
    tight = GraspService(service.proposer, service.gripper, service.config, kinematics=service.kinematics,
                         motion=MotionCheck(service.motion.planner, MotionCheckConfig(time_budget_s=1e-6)))
    scene = _scene()
    res = tight.propose_for_box(depth, intr, T, TargetBox(np.array(BLOCK[0]), np.array(BLOCK[1]), object_id="block_1"),
                                0, scene=scene.with_objects([o for o in scene.objects if o.id != "board"]), q_now=q)
    assert res.success and len(res.grasps) == 2
    assert res.motion.checked == 2 and not res.motion.out_of_time and "stopped at the time budget" not in res.message


def test_a_request_no_longer_wanted_stops_between_its_steps_as_canceled(setup):
    """grasp_node's service proposing ahead stops a job a new look made useless (`should_stop`):
    the answer is CANCELED wherever it is asked: before proposing, among the reachability checks,
    among the motion check's IK and straight moves (a stale job ran on through these beside the
    request that replaced it), or between its searches."""
    service = setup[0]
    asked = []

    def stop_at(n):
        def should_stop():
            asked.append(1)
            return len(asked) >= n
        return should_stop

    try:
        # before proposing; the reachability loop (2 grasps); the motion check's IK, its straight moves, its searches
        for n in (1, 3, 7, 9, 11):
            asked.clear()
            service.should_stop = stop_at(n)
            res = _request(setup, scene=_scene(), q_now=setup[4])
            assert not res.success and res.error_code == "CANCELED" and "no longer wanted" in res.message
            assert len(asked) == n
    finally:
        service.should_stop = lambda: False
    assert _request(setup, scene=_scene(), q_now=setup[4]).success


def test_the_links_are_tested_only_for_the_grasps_the_motion_check_comes_to(setup):
    """The arm's links' test at each grasp ran for every grasp the arm reached before the motion
    check (about a third of a request whose best grasp was all a pick asked for, issue 42); the
    check now asks for it as each grasp comes up: a request for one grasp tests the best alone, and
    a grasp whose links are refused is never motion-checked."""
    import dataclasses

    service = setup[0]
    linked = GraspService(service.proposer, service.gripper, dataclasses.replace(service.config, link_clearance_m=0.01),
                          kinematics=service.kinematics, motion=service.motion)
    scene = _scene()
    open_scene = scene.with_objects([o for o in scene.objects if o.id != "board"])
    tested = []
    linked._links_clear_at = lambda qs, pres, tree: tested.append(qs[0]) or True
    res = linked.propose_for_box(setup[1], setup[2], setup[3], TargetBox(np.array(BLOCK[0]), np.array(BLOCK[1]),
                                                                         object_id="block_1"), 1,
                                 scene=open_scene, q_now=setup[4])
    assert res.success and len(res.grasps) == 1 and abs(res.grasps.translations[0][1] - (-0.19)) < 1e-9
    assert len(tested) == 1 and res.motion.checked == 1
    tested.clear()
    linked._links_clear_at = lambda qs, pres, tree: tested.append(qs[0]) or len(tested) > 1    # the best's refused
    linked._some_configuration_clear = lambda poses, tree: False
    res = linked.propose_for_box(setup[1], setup[2], setup[3], TargetBox(np.array(BLOCK[0]), np.array(BLOCK[1]),
                                                                         object_id="block_1"), 2,
                                 scene=open_scene, q_now=setup[4])
    assert res.success and len(res.grasps) == 1 and abs(res.grasps.translations[0][1] - (-0.11)) < 1e-9
    assert len(tested) == 2 and res.motion.checked == 1 and res.motion.kept == [1]
