"""The motion MarkerArray (visualization_msgs, in-process): a cube per collision body with its
name, the cloud's voxels as one cube list, the TCP path as a line strip; and the grasp node's
conversions that feed the motion check (Scene and JointState messages)."""
import numpy as np
import pytest

pytest.importorskip("coal")
visualization_msgs = pytest.importorskip("visualization_msgs.msg")
from std_msgs.msg import Header  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from spatial_manip.motion.markers import motion_markers, world_boxes  # noqa: E402
from spatial_manip.motion.world import CollisionWorld  # noqa: E402

YAW_90 = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])


def _world() -> CollisionWorld:
    w = CollisionWorld()
    w.add_box("table", [0.6, 0.0, -0.025], [0.9, 1.4, 0.05])
    w.add_box("shelf/part0", [0.5, 0.3, 0.3], [0.2, 0.4, 0.02], YAW_90, owner="shelf")
    # clutter on the table, away from both boxes: kept as voxels
    xs, ys, zs = np.meshgrid(np.arange(0.30, 0.36, 0.005), np.arange(-0.40, -0.34, 0.005), np.arange(0.05, 0.09, 0.005))
    assert w.add_cloud(np.column_stack([xs.ravel(), ys.ravel(), zs.ravel()]), voxel_m=0.02) > 0
    return w


def test_bodies_cloud_and_path_become_markers():
    header = Header(frame_id="base")
    path = np.array([[0.3, 0.0, 0.5], [0.4, 0.0, 0.4], [0.5, -0.1, 0.2]])
    arr = motion_markers(_world(), path, header)
    assert isinstance(arr, MarkerArray)
    assert arr.markers[0].action == Marker.DELETEALL           # stale bodies of the last request go
    by_ns = {}
    for m in arr.markers[1:]:
        by_ns.setdefault(m.ns, []).append(m)
        assert m.header.frame_id == "base" and m.action == Marker.ADD and m.color.a > 0
    cubes = by_ns["motion/bodies"]
    assert [m.text for m in cubes] == ["table", "shelf/part0"] and [m.id for m in cubes] == [0, 1]
    assert all(m.type == Marker.CUBE for m in cubes)
    shelf = cubes[1]
    assert (shelf.scale.x, shelf.scale.y, shelf.scale.z) == pytest.approx((0.2, 0.4, 0.02))
    assert (shelf.pose.position.x, shelf.pose.position.y, shelf.pose.position.z) == pytest.approx((0.5, 0.3, 0.3))
    q = shelf.pose.orientation                                  # 90 deg about z
    assert (q.x, q.y, abs(q.z), abs(q.w)) == pytest.approx((0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)))
    (cloud,) = by_ns["motion/cloud"]
    assert cloud.type == Marker.CUBE_LIST and cloud.scale.x == pytest.approx(0.02) and len(cloud.points) >= 8
    centres = np.array([[p.x, p.y, p.z] for p in cloud.points])
    assert np.all(np.abs(centres - [0.33, -0.37, 0.07]) < 0.06)   # the voxels sit on the clutter
    (strip,) = by_ns["motion/path"]
    assert strip.type == Marker.LINE_STRIP and strip.scale.x > 0
    assert np.allclose([[p.x, p.y, p.z] for p in strip.points], path)


def test_no_path_no_strip_and_boxes_listed_for_other_views():
    arr = motion_markers(_world(), None)
    assert "motion/path" not in {m.ns for m in arr.markers}
    names = [n for n, _, _ in world_boxes(_world())]
    assert names == ["table", "shelf/part0"]


def test_grasp_node_reads_scene_and_joint_state_messages():
    pytest.importorskip("spatial_manip_interfaces.msg")
    from sensor_msgs.msg import JointState
    from spatial_manip_interfaces.msg import DetectedObject, Scene

    from spatial_manip.control.kinematics import JOINT_NAMES
    from spatial_manip import transforms as tf
    from spatial_manip.nodes import convert
    from spatial_manip.nodes.convert import joints_from_msg, scene_from_msg

    msg = Scene(objects=[DetectedObject(id="book_1", label="book", category="book", held=True,
                                        pose=convert.pose_msg_from_matrix(tf.make_transform(YAW_90, (0.5, 0.1, 0.2))),
                                        size=convert.vector3((0.2, 0.03, 0.25)))])
    (o,) = scene_from_msg(msg).objects
    assert o.id == "book_1" and o.held and np.allclose(o.rotation, YAW_90) and np.allclose(o.size, (0.2, 0.03, 0.25))
    q = [0.1, -1.2, 1.3, -1.4, -1.5, 0.6]
    js = JointState(name=["finger_joint"] + list(JOINT_NAMES)[::-1], position=[0.7] + q[::-1])
    assert np.allclose(joints_from_msg(js), q)                  # by name, not by order
    assert joints_from_msg(JointState(name=list(JOINT_NAMES[:5]), position=q[:5])) is None
