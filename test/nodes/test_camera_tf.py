"""The camera pose from TF: the core's TfTree, and over real DDS the listener planner_node uses
(spatial_manip.nodes.camera_tf) joining cell_tf_node's calibration (base -> camera_link, in a
separate process) with realsense2_camera's own static frames below it (played by the test)."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from ros_helpers import private_domain_id
from spatial_manip.geometry.tf_tree import TfLookupError, TfTree
from spatial_manip.transforms import make_transform

T_BASE_LINK = make_transform(Rotation.from_euler("xyz", [0.1, 0.6, 2.9]).as_matrix(), [1.0, -0.3, 0.7])
# realsense2_camera: camera_link -> camera_color_frame (a small offset) -> the optical frame (z forward)
T_LINK_COLOR = make_transform(np.eye(3), [0.0, 0.015, 0.0])
T_COLOR_OPTICAL = make_transform(Rotation.from_euler("zyx", [-np.pi / 2, 0, -np.pi / 2]).as_matrix(), [0, 0, 0])
T_UR_BASELINK_BASE = make_transform(Rotation.from_euler("z", np.pi).as_matrix(), [0, 0, 0])   # UR's base_link -> base
DOMAIN = private_domain_id()   # /tf_static is one topic for every test on the machine: this test keeps to its own domain


def _realsense(tree):
    tree.set("camera_link", "camera_color_frame", T_LINK_COLOR, static=True)
    tree.set("camera_color_frame", "camera_color_optical_frame", T_COLOR_OPTICAL, static=True)


def test_lookup_composes_the_calibration_with_the_drivers_frames():
    tree = TfTree()
    _realsense(tree)
    with pytest.raises(TfLookupError, match="no TF chain joins base and camera_color_optical_frame"):
        tree.lookup("base", "camera_color_optical_frame")
    tree.set("/base", "camera_link", T_BASE_LINK, static=True)               # a leading slash is ignored
    expected = T_BASE_LINK @ T_LINK_COLOR @ T_COLOR_OPTICAL
    assert np.allclose(tree.lookup("base", "camera_color_optical_frame"), expected)
    assert np.allclose(tree.lookup("camera_color_optical_frame", "base"), np.linalg.inv(expected))


def test_a_calibration_given_to_base_link_is_looked_up_in_base():
    tree = TfTree()
    _realsense(tree)
    tree.set("base_link", "base", T_UR_BASELINK_BASE, static=True)            # robot_state_publisher's
    tree.set("base_link", "camera_link", T_BASE_LINK, static=True)
    expected = np.linalg.inv(T_UR_BASELINK_BASE) @ T_BASE_LINK @ T_LINK_COLOR @ T_COLOR_OPTICAL
    assert np.allclose(tree.lookup("base", "camera_color_optical_frame"), expected)


def test_a_second_parent_replaces_the_first_and_is_reported():
    tree = TfTree()
    assert tree.set("base", "camera_link", T_BASE_LINK) is None
    assert tree.set("tool0", "camera_link", T_BASE_LINK) == "base"
    with pytest.raises(ValueError, match="two different frame names"):
        tree.set("camera_link", "camera_link", np.eye(4))
    with pytest.raises(ValueError, match="not a finite 4x4"):
        tree.set("base", "x", np.full((4, 4), np.nan))


def test_the_calibration_moves_up_to_the_camera_mount_through_the_drivers_frames():
    from spatial_manip.workspace.cell_tf import CameraMount

    T_cal = T_BASE_LINK @ T_LINK_COLOR @ T_COLOR_OPTICAL          # what hand-eye calibration measures
    mount = CameraMount("camera_link", ("base", "camera_color_optical_frame", T_cal))
    assert mount.from_driver([("camera_link", "camera_color_frame", T_LINK_COLOR)]) is None   # chain incomplete
    parent, child, T = mount.from_driver([("camera_color_frame", "camera_color_optical_frame", T_COLOR_OPTICAL)])
    assert (parent, child) == ("base", "camera_link") and np.allclose(T, T_BASE_LINK)
    assert mount.from_driver([]) is None                          # published once


@pytest.mark.ros
@pytest.mark.parametrize("calibrated_frame, mount", [("camera_link", ""), ("camera_color_optical_frame", "camera_link")],
                         ids=["calibration-to-camera_link", "optical-calibration-moved-to-the-mount"])
def test_the_listener_gets_the_camera_pose_from_cell_tf_node_and_the_camera_driver(tmp_path, calibrated_frame, mount):
    rclpy = pytest.importorskip("rclpy")
    from tf2_msgs_build import tf2_msgs_env, use_in_this_process

    env = tf2_msgs_env()
    use_in_this_process(env)
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    from spatial_manip.nodes.camera_tf import CameraPoseFromTf
    from spatial_manip.nodes.cell_tf_node import transform_stamped

    expected = T_BASE_LINK @ T_LINK_COLOR @ T_COLOR_OPTICAL
    T_cal = T_BASE_LINK if calibrated_frame == "camera_link" else expected
    cal = tmp_path / "cell.yaml"       # the calibration ends at the camera's mounting frame, or at the optical one
    cal.write_text(yaml.safe_dump({"mode": "eye_to_hand", "camera_frame": calibrated_frame,
                                   "T_base_camera": {"matrix": T_cal.tolist()}}))
    node_proc = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.cell_tf_node", "--ros-args",
                                  "-p", f"calibration_file:={cal}", "-p", "publish_robot_tf:=false",
                                  *(["-p", f"camera_mount_frame:={mount}"] if mount else [])],
                                 env={**os.environ, **env, "PYTHONUNBUFFERED": "1", "ROS_DOMAIN_ID": str(DOMAIN)},
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx, domain_id=DOMAIN)
    try:
        node = rclpy.create_node("camera_tf_test", context=ctx)
        latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        realsense = node.create_publisher(TFMessage, "/tf_static", latched)      # realsense2_camera's frames
        stamp = node.get_clock().now().to_msg()
        realsense.publish(TFMessage(transforms=[
            transform_stamped("camera_link", "camera_color_frame", T_LINK_COLOR, stamp),
            transform_stamped("camera_color_frame", "camera_color_optical_frame", T_COLOR_OPTICAL, stamp)]))
        poses, got = [], threading.Event()
        listener = CameraPoseFromTf(node, lambda T: (poses.append(T), got.set()), base_frame="base",
                                    camera_frame="camera_color_optical_frame")
        executor = SingleThreadedExecutor(context=ctx)
        executor.add_node(node)
        deadline = time.monotonic() + 40          # cell_tf_node's start-up on a loaded machine
        while not got.is_set() and time.monotonic() < deadline and node_proc.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert got.is_set(), f"no camera pose from TF within 40 s; cell_tf_node: {_log_if_ended(node_proc)}"
        assert listener.has_pose
        assert np.allclose(poses[-1], expected, atol=1e-6)
        # one parent per frame: the optical frame hangs from the driver's chain, the mount from base
        assert listener.tree.lookup("camera_color_frame", "camera_color_optical_frame") is not None
        assert listener.tree._parent["camera_color_optical_frame"][0] == "camera_color_frame"
        assert listener.tree._parent["camera_link"][0] == "base"
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
    finally:
        ctx.try_shutdown()
        node_proc.send_signal(signal.SIGINT)
        try:
            node_proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            node_proc.kill()


def _log_if_ended(proc) -> str:
    return proc.stdout.read() if proc.poll() is not None else "(still running)"
