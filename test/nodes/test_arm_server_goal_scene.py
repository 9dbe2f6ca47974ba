"""The scene an ArmMotion goal carries, as typed fields (issue 41): planner_ports writes the agent's
scene into a Scene message and its obstacle map into a PointCloud2; the arm server reads back what
the motion planner plans around: the same bodies, fixture parts, supports, slots, held grasp, floor
and cloud. No DDS needed: the goal is built and read as the two nodes do."""
import dataclasses

import numpy as np
import pytest

pytest.importorskip("spatial_manip_interfaces")

from spatial_manip import transforms as tf  # noqa: E402
from spatial_manip.agent import MOTION_HOME, MOTION_PICK, MotionRequest  # noqa: E402
from spatial_manip.errors import InvalidGoalError  # noqa: E402
from spatial_manip.motion.obstacle_map import ObstacleMap  # noqa: E402
from spatial_manip.motion.world import CollisionWorld, support_ids  # noqa: E402
from spatial_manip.nodes.arm_server import goal_scene  # noqa: E402
from spatial_manip.nodes.planner_ports import _arm_goal  # noqa: E402
from spatial_manip.sim import layouts as L  # noqa: E402


def _held(scene, obj_id):
    """`obj_id` in the gripper, with the grasp the agent records."""
    T_object_tcp = tf.make_transform(tf.rpy_to_matrix(0.1, -0.2, 0.3), [0.01, -0.02, 0.05])
    objects = [dataclasses.replace(o, held=True, extra={**o.extra, "T_object_tcp": T_object_tcp.tolist()})
               if o.id == obj_id else dataclasses.replace(o, held=False) for o in scene.objects]
    return scene.with_objects(objects)


def _round_trip(scene, **request):
    return goal_scene(_arm_goal(MotionRequest(kind=MOTION_PICK, target=np.eye(4), scene=scene, **request)), "base")


def _bodies(scene):
    world = CollisionWorld.from_scene(scene)
    return sorted((o.name, tuple(np.round(o.pose[:3, 3], 5))) for o in world.obstacles)


@pytest.mark.parametrize("kind", ["tabletop", "shelf"])
def test_the_arm_server_plans_around_what_the_planner_sent(kind):
    rng = np.random.default_rng(3)
    scene = L.sample_tabletop(rng) if kind == "tabletop" else L.sample_shelf(rng)
    book = scene.by_category("book")[0].id
    scene = _held(scene, book)
    cloud = ObstacleMap(points=rng.uniform(-0.5, 0.5, (40, 3)), voxel_m=0.02, clearance_m=0.0123, dropped={})
    scene = dataclasses.replace(scene, extra={**scene.extra, "cloud": cloud.as_extra()})

    got = _round_trip(scene)

    assert [o.id for o in got.objects] == [o.id for o in scene.objects]
    assert [r.id for r in got.regions] == [r.id for r in scene.regions]
    for sent, read in zip(scene.objects, got.objects):
        assert (read.label, read.category, read.held) == (sent.label, sent.category, sent.held)
        assert np.allclose(read.center, sent.center) and np.allclose(read.size, sent.size)
        assert np.allclose(read.rotation, sent.rotation, atol=1e-9)
        for key in ("supports", "in_region"):
            assert read.extra.get(key) == sent.extra.get(key), (sent.id, key)
        assert len(read.extra.get("parts", [])) == len(sent.extra.get("parts", []))
    assert np.allclose(got.get(book).extra["T_object_tcp"], scene.get(book).extra["T_object_tcp"])
    assert got.extra["ground_z"] == pytest.approx(scene.extra["ground_z"])
    assert np.allclose(got.extra["cloud"]["points"], cloud.as_extra()["points"], atol=1e-6)
    assert got.extra["cloud"]["voxel_m"] == pytest.approx(0.02)
    assert got.extra["cloud"]["clearance_m"] == pytest.approx(0.0123)
    # what the motion planner builds from it: every body (fixtures by their parts) where it was sent
    assert _bodies(got) == _bodies(scene) and len(_bodies(scene)) > len(scene.objects) - 1
    target = next(o.id for o in scene.objects if o.category == "book" and o.id != book)
    assert support_ids(got, target) == support_ids(scene, target)


def test_no_scene_plans_around_the_robot_alone():
    assert goal_scene(_arm_goal(MotionRequest(kind=MOTION_HOME)), "base") is None


def _goal(scene):
    return _arm_goal(MotionRequest(kind=MOTION_PICK, target=np.eye(4), scene=scene))


@pytest.mark.parametrize("spoil, words", [
    (lambda g: setattr(g.scene.header, "frame_id", "camera_color_optical_frame"),
     "scene must be in frame 'base', got 'camera_color_optical_frame'"),
    (lambda g: setattr(g.scene.objects[0].size, "z", 0.0), "'size' must be positive"),
    (lambda g: setattr(g.scene.objects[0].pose.orientation, "w", 0.0) or
     setattr(g.scene.objects[0].pose.orientation, "x", float("nan")), "non-zero finite quaternion"),
    (lambda g: setattr(g, "cloud_clearance_m", float("nan")), "cloud_clearance_m must be a finite length"),
    (lambda g: setattr(g.scene.objects[1], "id", g.scene.objects[0].id), "duplicate ids"),
])
def test_a_malformed_goal_scene_is_an_invalid_goal_saying_why(spoil, words):
    goal = _goal(L.sample_tabletop(np.random.default_rng(0), n_books=1))
    spoil(goal)
    with pytest.raises(InvalidGoalError, match=words.replace("(", r"\(").replace(")", r"\)")):
        goal_scene(goal, "base")


def test_pre_grasp_paths_travel_as_typed_joint_paths_and_what_is_malformed_is_left_out():
    """grasp_node's pre-grasp paths (issue 42) reach the arm server as joint paths in a typed
    message (PreGraspPaths); a hint only, so a malformed path is dropped rather than refused, and
    at most MAX_HINTS are kept."""
    from spatial_manip.nodes.arm_server import MAX_HINTS, pre_grasp_paths, pre_grasp_paths_msg
    from spatial_manip_interfaces.msg import JointPath, PreGraspPaths

    a, b = np.linspace(np.zeros(6), np.ones(6), 4), np.array([[0.1] * 6, [0.2] * 6])
    msg = pre_grasp_paths_msg([a, b])
    assert isinstance(msg, PreGraspPaths) and [len(p.positions) for p in msg.paths] == [24, 12]
    back = pre_grasp_paths(msg)
    assert len(back) == 2 and np.array_equal(back[0], a) and np.array_equal(back[1], b)
    bad = [[0.0] * 6,                      # one waypoint: no path
           [1.0, 2.0, 3.0] * 3,            # not whole waypoints
           [0.0] * 6 + [1.0] * 5 + [float("nan")],
           [0.0] * 6 + [1.0] * 6]          # the one good path
    assert [w.shape for w in pre_grasp_paths(PreGraspPaths(paths=[JointPath(positions=w) for w in bad]))] == [(2, 6)]
    assert pre_grasp_paths(PreGraspPaths()) == []
    many = pre_grasp_paths(pre_grasp_paths_msg([b] * (MAX_HINTS + 5)))
    assert len(many) == MAX_HINTS
