"""The collision world from the benchmark's scenes: boxes named by scene id, fixtures by part,
the target left out, the held object attached, the depth cloud's unexplained voxels."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("coal")
pytest.importorskip("pinocchio")

from spatial_manip.control.config import load_arm_config  # noqa: E402
from spatial_manip.errors import InvalidGoalError  # noqa: E402
from spatial_manip.motion.checker import CollisionChecker  # noqa: E402
from spatial_manip.motion.factory import make_planner  # noqa: E402
from spatial_manip.motion.world import NEIGHBOUR_MARGIN_M, CollisionWorld, support_ids  # noqa: E402
from spatial_manip.sim import layouts  # noqa: E402


@pytest.fixture(scope="module")
def planner():
    return make_planner(load_arm_config(), {"seed": 5})


def test_tabletop_scene_becomes_named_boxes_without_the_target():
    scene = layouts.sample_scene("tabletop", 4)
    book = next(o for o in scene.objects if o.category == "book")
    world = CollisionWorld.from_scene(scene, allowed=[book.id])
    names = world.names()
    assert "table" in names and "floor" in names and book.id not in names
    others = [o.id for o in scene.objects if o.category == "book" and o.id != book.id]
    assert set(others) <= set(names)
    support = next(o for o in scene.objects if o.extra.get("supports") == book.id)
    assert support.id in support_ids(scene, book.id)
    assert any(n.startswith(f"{support.id}/part") for n in names)      # supports by their parts
    assert set(support_ids(scene, book.id)) & set(world.without(support_ids(scene, book.id)).names()) == set()


def test_shelf_scene_attaches_the_held_book_at_the_tcp():
    scene = layouts.sample_scene("shelf", 4)
    held = scene.held_object()
    ee = np.asarray(scene.extra["ee_pose"], float)
    world = CollisionWorld.from_scene(scene, T_base_tcp=ee)
    assert world.attached is not None and world.attached.name == held.id
    assert held.id not in world.names()
    assert any(n.startswith("shelf/part") for n in world.names())        # boards, back, sides
    T_obj = ee @ world.attached.T_tcp_object
    np.testing.assert_allclose(T_obj[:3, 3], held.center, atol=1e-9)
    with pytest.raises(InvalidGoalError, match="cannot be attached"):
        CollisionWorld.from_scene(scene)


def test_cloud_keeps_only_what_the_boxes_do_not_explain(planner):
    world = CollisionWorld()
    world.add_box("box", [0.5, -0.3, 0.05], [0.1, 0.1, 0.1])
    rng = np.random.default_rng(0)
    on_box = rng.uniform([0.45, -0.35, 0.0], [0.55, -0.25, 0.10], (500, 3))     # the box's own points
    clutter = rng.uniform([0.47, 0.27, 0.0], [0.53, 0.33, 0.30], (500, 3))      # something unmodelled
    kept = world.add_cloud(np.vstack([on_box, clutter]), voxel_m=0.02)
    assert kept == 500 and "cloud" in world.names()
    kin = planner.envelope.kin
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = np.diag([1.0, -1.0, -1.0]), [0.5, 0.3, 0.20]           # hand inside the clutter
    q = kin.ik(T, planner.envelope.kin.ik(T))
    pair = CollisionChecker(planner.robot, world, planner.envelope).contact(q)
    assert pair is not None and "cloud" in pair
    T[:3, 3] = [0.5, 0.0, 0.35]                                                   # beside it: free
    assert CollisionChecker(planner.robot, world, planner.envelope).contact(kin.ik(T)) is None


def test_planner_avoids_the_cloud(planner):
    home = np.asarray(load_arm_config()["primitives"]["home_q"], float)
    kin = planner.envelope.kin
    down = np.diag([1.0, -1.0, -1.0])
    world = CollisionWorld()
    world.add_box("table", [0.6, 0.0, -0.025], [0.9, 1.4, 0.05])
    rng = np.random.default_rng(1)
    world.add_cloud(rng.uniform([0.38, -0.03, 0.0], [0.52, 0.03, 0.30], (3000, 3)), voxel_m=0.02)   # a wall of points
    start = kin.ik(np.block([[down, np.array([[0.45], [-0.3], [0.12]])], [0, 0, 0, 1]]), home)
    goal = kin.ik(np.block([[down, np.array([[0.45], [0.3], [0.12]])], [0, 0, 0, 1]]), home)
    checker = CollisionChecker(planner.robot, world, planner.envelope)
    assert checker.first_problem_on_segment(start, goal, 0.01) is not None
    path = planner.plan(start, goal, world)
    for a, b in zip(path.q[:-1], path.q[1:]):
        assert checker.first_problem_on_segment(a, b, 0.004) is None


def test_gripper_turns_with_a_tcp_offset_turned_about_the_tool_axis():
    """The simulated 2F-85 is mounted -90 deg about tool0 z (arm.yaml sim override): the finger
    bodies must then lie along that TCP's y (its closing axis), not the URDF's tool0 y."""
    from spatial_manip.control.config import load_kinematics
    from spatial_manip.motion.robot import RobotModel, description_paths

    kin = load_kinematics(backend="sim")
    robot = RobotModel(*description_paths("ur5e", "eye_to_hand"), T_tool0_tcp=kin.T_tool0_tcp)
    y_tcp = kin.T_tool0_tcp[:3, 1]
    flange = robot.M_joint6_tool0[:3, 3]
    for g in robot.geom.geometryObjects:
        if g.name.startswith(("robotiq_left_finger", "robotiq_right_finger")):
            offset = g.placement.translation - flange
            assert 0.055 < abs(offset @ y_tcp) < 0.062                 # out along the closing axis
            assert abs(offset @ np.cross(y_tcp, [0, 0, 1])) < 1e-9     # not across it


def test_motion_bench_is_a_subcommand():
    from spatial_manip.cli import build_parser

    args = build_parser(["motion-bench"]).parse_args(["motion-bench", "--seeds", "3", "4", "--count", "2"])
    assert args.seeds == [3, 4] and args.count == 2 and callable(args._run)


def test_an_obstacle_beside_a_book_held_at_the_farthest_slot_is_kept():
    """A book held at the farthest set-down (the wrist SLOT_REACH_M from the shoulder, the TCP
    TCP_TO_WRIST_M ahead, the largest book's far corner beyond it) ends 1.6 m from the base: a box
    and a cloud point there are obstacles (the literal 1.35 m range cropped both); far past it they
    are left out."""
    from spatial_manip.geometry.reach import SLOT_REACH_M, TCP_TO_WRIST_M
    from spatial_manip.geometry.relations import BOOK_SIZE_RANGES_M
    from spatial_manip.motion.world import OBSTACLE_RANGE_M

    shoulder = np.array([0.0, 0.0, 0.1625])
    ahead = np.array([0.8, 0.6, 0.0])                          # a far slot, level with the shoulder
    largest = np.linalg.norm([max(r[k][1] for r in BOOK_SIZE_RANGES_M.values()) for k in range(3)])
    corner = shoulder + ahead * (SLOT_REACH_M + TCP_TO_WRIST_M + largest)
    assert np.linalg.norm(corner) > 1.35 and np.linalg.norm(corner) < OBSTACLE_RANGE_M
    boxes = CollisionWorld()
    boxes.add_box("near", corner, [0.02, 0.02, 0.02])
    boxes.add_box("far", corner * 2.0, [0.02, 0.02, 0.02])
    assert boxes.names() == ["near"]
    assert CollisionWorld().add_cloud(np.array([corner, corner * 2.0]), voxel_m=0.02) == 1


# A potted plant as perception boxed it under realistic sensing (pick-110-00007, seed 110): the box
# ends at the foliage the camera saw; the gripper's transit to a book behind it brushed the hidden
# foliage at these points (the contact monitor's, in that episode and in pick-110-00009), 3.5-5 cm
# past the box on the side away from the camera.
PLANT = dict(id="succulents", label="succulents", category="reference",
             center=[0.35348772566796904, -0.407490443392954, 0.15473747785510067], size=[0.1496, 0.0897, 0.2862],
             rotation=[[0.38641274654567614, -0.9115398014281165, -0.1406427378836764],
                       [0.8565672249546534, 0.4112118558752768, -0.311764973531496],
                       [0.34202014332566866, 0.0, 0.9396926207859083]])
PLANT_CAMERA = [-0.9341372492276585, 0.20618731280292169, 0.5282323972887375]
PLANT_TOUCHES = np.array([[0.4295, -0.4331, 0.2634], [0.4327, -0.4336, 0.2592], [0.4072, -0.5162, 0.2037]])


def _scene_seen_from(camera, objects):
    from spatial_manip.scene import Scene, SceneObject, Viewpoint

    cam = np.asarray(camera, float)
    return Scene(Viewpoint(cam, -cam), Viewpoint([0, 0, 0], [1, 0, 0]), [SceneObject(**o) for o in objects])


def test_an_objects_hidden_far_side_is_an_obstacle():
    measured = CollisionWorld()
    measured.add_box("succulents", PLANT["center"], PLANT["size"], PLANT["rotation"])
    assert not measured.explains(PLANT_TOUCHES, 0.02).any()        # the perceived box misses them
    scene = _scene_seen_from(PLANT_CAMERA, [PLANT])
    boxes = CollisionWorld.from_scene(scene)
    assert not boxes.explains(PLANT_TOUCHES, 0.02).any()
    assert not boxes.with_hidden_sides(scene, keep=["succulents"]).explains(PLANT_TOUCHES, 0.02).any()  # a target
    world = boxes.with_hidden_sides(scene)
    assert world.explains(PLANT_TOUCHES, 0.01).all()               # its hidden side holds them
    assert world.names() == ["succulents", "succulents"]           # the measured box and the grown one
    box = world.obstacles[1]
    margin = 2 * NEIGHBOUR_MARGIN_M
    np.testing.assert_allclose(sorted(2 * np.asarray(box.geometry.halfSide)),
                               sorted([0.1496 + margin, 0.1496 + margin, 0.2862 + margin]))
    # the seen (near) side stays where it was measured but for the margin: the box grew away from the camera
    toward_camera = np.asarray(PLANT["rotation"])[:, 1]      # the box's depth axis, here pointing at the camera
    near_face = np.asarray(PLANT["center"]) + (0.5 * 0.0897 + NEIGHBOUR_MARGIN_M) * toward_camera
    assert world.explains(near_face[None], 1e-6).all()
    assert not world.explains(near_face[None] + 0.01 * toward_camera, 0.0).any()


def test_a_neighbour_named_a_book_stands_larger_by_the_margin_in_the_cautious_world():
    """A book's box keeps its hidden side, but not its place: an object named a book wrongly (an
    alarm clock boxed as a 2.6 cm thick book, pick-112-00001) is larger than its box. In the
    cautious world every neighbour but a fixture stands NEIGHBOUR_MARGIN_M larger all round."""
    book = {**PLANT, "id": "book_red_medium", "label": "book", "category": "book", "size": [0.23, 0.026, 0.154]}
    pedestal = {**PLANT, "id": "support_1", "label": "pedestal", "category": "support", "center": [0.6, 0.0, 0.035],
                "size": [0.1, 0.1, 0.07], "rotation": np.eye(3).tolist()}
    scene = _scene_seen_from(PLANT_CAMERA, [book, pedestal])
    world = CollisionWorld.from_scene(scene).with_hidden_sides(scene)
    assert world.names() == ["book_red_medium", "support_1", "book_red_medium"]
    np.testing.assert_allclose(2 * np.asarray(world.obstacles[2].geometry.halfSide),
                               np.asarray(book["size"]) + 2 * NEIGHBOUR_MARGIN_M)
    np.testing.assert_allclose(world.obstacles[2].pose[:3, 3], book["center"])
    assert CollisionWorld.from_scene(scene).with_hidden_sides(scene, keep=["book_red_medium"]).names() == \
        ["book_red_medium", "support_1"]


def test_books_fixtures_and_objects_seen_deep_keep_their_boxes():
    from spatial_manip.motion.world import with_hidden_side
    from spatial_manip.scene import SceneObject

    thin = {**PLANT, "rotation": np.eye(3).tolist(), "center": [0.5, 0.0, 0.15]}
    camera = [-0.5, 0.0, 0.8]
    for category in ("book", "support", "table"):
        o = SceneObject(**{**thin, "category": category})
        c, s = with_hidden_side(o, camera)
        np.testing.assert_allclose(s, o.size)
        np.testing.assert_allclose(c, o.center)
    # seen along its long side: as deep as it is wide already, nothing hidden to add
    deep = SceneObject(**{**thin, "size": [0.15, 0.09, 0.2]})
    np.testing.assert_allclose(with_hidden_side(deep, camera)[1], deep.size)
    # seen along its short side: grown to its width, by at most the cap, away from the camera (+x)
    wide = SceneObject(**{**thin, "size": [0.02, 0.3, 0.2]})
    c, s = with_hidden_side(wide, camera, max_m=0.08)
    np.testing.assert_allclose(s, [0.10, 0.3, 0.2])
    np.testing.assert_allclose(c, [0.54, 0.0, 0.15])
    # seen from straight above: the footprint is in view
    np.testing.assert_allclose(with_hidden_side(wide, [0.5, 0.0, 1.0])[1], wide.size)
