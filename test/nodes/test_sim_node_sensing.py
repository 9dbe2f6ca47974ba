"""sim_node started with a sensing profile the way the bench starts it (worker.sim_node_sensing
as -p parameters): it publishes the calibrated extrinsics, off the pose it renders from by the
episode's drawn calibration error, over real DDS."""
import json
import math
import os
import subprocess
import time

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

rclpy = pytest.importorskip("rclpy")
from geometry_msgs.msg import PoseStamped
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String

from node_process import start_sim_node
from ros_helpers import private_domain_id
from spatial_manip.bench.worker import sim_node_sensing
from spatial_manip.transforms import invert
from spatial_manip.nodes.convert import matrix_from_pose_msg
from spatial_manip.scene import Scene
from spatial_manip.sim.layouts import camera_pose
from spatial_manip.sim.sensing import sensing_profile

DOMAIN = private_domain_id()      # its own graph: no other run's sim_node answers


@pytest.mark.ros
def test_sim_node_publishes_the_calibrated_extrinsics_of_its_profile():
    profile = sensing_profile("harsh", "misregistration,arm_kinematics")
    params = [f"{k}:={v}" for k, v in sim_node_sensing(profile).items()]
    proc = start_sim_node("width:=160", "height:=120", "camera_rate_hz:=2.0", "seed:=4", *params,
                          env={**os.environ, "ROS_DOMAIN_ID": str(DOMAIN)})
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = rclpy.create_node("sim_node_sensing_test", context=context)
    got: dict = {}
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    try:
        node.create_subscription(PoseStamped, "/camera/extrinsics", lambda m: got.__setitem__("ext", m), latched)
        node.create_subscription(String, "/spatial_manip/workspace", lambda m: got.__setitem__("ws", m), latched)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        end = time.monotonic() + 90
        while time.monotonic() < end and len(got) < 2 and proc.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert len(got) == 2, f"seen {sorted(got)}; sim_node exit {proc.poll()}"
        T_given = matrix_from_pose_msg(got["ext"].pose)
        T_true = camera_pose(Scene.from_dict(json.loads(got["ws"].data)).viewer)
        err = invert(T_true) @ T_given
        assert 0.002 - 1e-6 <= np.linalg.norm(err[:3, 3]) <= 0.004 + 1e-6          # harsh: twice 1-2 mm
        assert 0.1 - 1e-3 <= math.degrees(Rotation.from_matrix(err[:3, :3]).magnitude()) <= 0.3 + 1e-3
        assert np.allclose(err, profile.draw(4).T_cam_error, atol=1e-6)          # the draw of the node's seed
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
