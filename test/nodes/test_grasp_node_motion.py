"""grasp_node's motion check over real DDS: without /joint_states the check is skipped and the
reply says so; with them, the reply says how many grasps were checked and the collision bodies
and the chosen grasp's TCP path arrive on /spatial_manip/motion_markers."""
import subprocess
import sys
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("ompl")
pytest.importorskip("pinocchio")
pytest.importorskip("toppra")
from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image, JointState  # noqa: E402
from spatial_manip_interfaces.msg import DetectedObject, Scene  # noqa: E402
from spatial_manip_interfaces.srv import ProposeGrasps  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from spatial_manip.control.config import load_home_q  # noqa: E402
from spatial_manip.control.kinematics import JOINT_NAMES  # noqa: E402
from spatial_manip import transforms as tf  # noqa: E402
from spatial_manip.nodes import convert  # noqa: E402
from synthetic import render_boxes  # noqa: E402
from node_process import grasp_node_still_joining, stop_and_show_log  # noqa: E402

pytestmark = pytest.mark.ros      # grasp_node in its own process, over DDS
BOX = ((0.5, 0.0, 0.04), (0.05, 0.06, 0.08))
TOPICS = {"depth": (Image, "/camera/aligned_depth_to_color/image_raw"),
          "info": (CameraInfo, "/camera/aligned_depth_to_color/camera_info"),
          "extr": (PoseStamped, "/camera/extrinsics"), "scene": (Scene, "/spatial_manip/scene"),
          "joints": (JointState, "/joint_states")}
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
SENSOR = QoSProfile(depth=2, reliability=ReliabilityPolicy.RELIABLE)


@pytest.fixture(scope="module")
def graph():
    rclpy.init()
    node = rclpy.create_node("grasp_node_motion_test")
    proc = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.grasp_node", "--ros-args",
                             "-p", "service:=/motion_test/propose_grasps"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pubs = {k: node.create_publisher(t, name, LATCHED if k in ("extr", "scene") else SENSOR)
            for k, (t, name) in TOPICS.items()}
    markers = []
    node.create_subscription(MarkerArray, "/spatial_manip/motion_markers", markers.append, LATCHED)
    depth, intr, T, _ = render_boxes([BOX])
    pubs["extr"].publish(convert.pose_stamped(T, "base"))
    obj = DetectedObject(id="block_1", label="block", category="reference",
                         pose=convert.pose_msg_from_matrix(tf.make_transform(t=BOX[0])), size=convert.vector3(BOX[1]))
    pubs["scene"].publish(Scene(objects=[obj]))
    frame = (convert.array_to_image(np.round(depth * 1000).astype(np.uint16), "16UC1", "camera_color_optical_frame"),
             convert.intrinsics_to_camera_info(intr, "camera_color_optical_frame"))
    client = node.create_client(ProposeGrasps, "/motion_test/propose_grasps")
    try:
        assert client.wait_for_service(timeout_sec=60), "grasp_node did not come up"
        yield node, client, pubs, frame, markers
    finally:
        node.destroy_node()
        rclpy.shutdown()
        stop_and_show_log(proc)


def ask(node, client, pubs, frame, joints=None, timeout=60.0):     # a loaded machine
    """Publish the frame (and joints) until the node has seen the frame and the latched scene."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pubs["depth"].publish(frame[0])
        pubs["info"].publish(frame[1])
        if joints is not None:
            for _ in range(3):
                pubs["joints"].publish(JointState(name=list(JOINT_NAMES), position=[float(v) for v in joints]))
                rclpy.spin_once(node, timeout_sec=0.05)
        rclpy.spin_once(node, timeout_sec=0.1)
        fut = client.call_async(ProposeGrasps.Request(target_id="block_1", max_grasps=2))
        rclpy.spin_until_future_complete(node, fut, timeout_sec=30)
        assert fut.done(), "no reply from grasp_node"
        res = fut.result()
        if not grasp_node_still_joining(res) and (joints is None or "motion check skipped" not in res.message):
            return res
    pytest.fail(f"grasp_node saw no complete observation in {timeout} s: {res.message}")


def test_without_joint_states_the_check_is_skipped_and_said(graph):
    node, client, pubs, frame, _ = graph
    res = ask(node, client, pubs, frame)
    assert res.success, res.message
    assert "motion check skipped: the arm's current joints are unknown" in res.message


def test_with_joint_states_grasps_are_checked_and_markers_published(graph):
    node, client, pubs, frame, markers = graph
    res = ask(node, client, pubs, frame, joints=load_home_q())
    assert res.success, res.message
    assert "motion check: " in res.message and " checked, " in res.message
    assert 1 <= len(res.grasps.grasps) <= 2
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(_path(m) for m in markers):
        rclpy.spin_once(node, timeout_sec=0.1)
    arr = next(m for m in reversed(markers) if _path(m))
    bodies = [m for m in arr.markers if m.ns == "motion/bodies"]
    assert "block_1" in [m.text for m in bodies] and all(m.type == Marker.CUBE for m in bodies)
    assert all(m.header.frame_id == "base" for m in arr.markers[1:])
    (strip,) = _path(arr)
    end = np.array([strip.points[-1].x, strip.points[-1].y, strip.points[-1].z])
    assert np.linalg.norm(end[:2] - np.array(BOX[0][:2])) < 0.06        # the path ends at the block


def _path(arr: MarkerArray) -> list:
    return [m for m in arr.markers if m.ns == "motion/path" and m.type == Marker.LINE_STRIP]


def test_a_request_after_a_quiet_spell_is_answered_with_the_grasps_proposed_ahead(graph):
    """Issue 42: once the scene, the arm and the requests have been quiet for grasp.yaml's
    ahead.quiet_s (under a second), grasp_node proposes the scene's objects' grasps before a request asks,
    and the request is answered with them (the reply says so). Each round publishes a new look (a
    request ends proposing ahead on its own), then the frame and the joints for 6 s without asking,
    then asks; a loaded machine may need several rounds."""
    node, client, pubs, frame, _ = graph
    joints = JointState(name=list(JOINT_NAMES), position=[float(v) for v in load_home_q()])
    block = DetectedObject(id="block_1", label="block", category="reference",
                           pose=convert.pose_msg_from_matrix(tf.make_transform(t=BOX[0])), size=convert.vector3(BOX[1]))
    deadline, res = time.monotonic() + 120.0, None
    while time.monotonic() < deadline:
        pubs["scene"].publish(Scene(objects=[block]))
        quiet_until = time.monotonic() + 6.0
        while time.monotonic() < quiet_until:
            pubs["depth"].publish(frame[0])
            pubs["info"].publish(frame[1])
            pubs["joints"].publish(joints)
            rclpy.spin_once(node, timeout_sec=0.1)
        fut = client.call_async(ProposeGrasps.Request(target_id="block_1", max_grasps=2))
        rclpy.spin_until_future_complete(node, fut, timeout_sec=30)
        assert fut.done(), "no reply from grasp_node"
        res = fut.result()
        if "proposed ahead" in res.message:
            break
    assert res is not None and res.success, res.message if res else "no reply"
    assert "proposed ahead on this look from these joints" in res.message and " checked, " in res.message, res.message
    assert 1 <= len(res.grasps.grasps) <= 2
