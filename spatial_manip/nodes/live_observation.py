"""One live RGB-D observation from the RealSense driver's topics (or camera_node's, the same
names) for the workspace capture (`spatial-manip cell-look`, capture-workspace): a thin adapter
that converts messages and pairs colour and depth by stamp with the planner's own ObservationBuffer.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from spatial_manip.errors import NoObservationError
from spatial_manip.geometry.calibration import HandEyeCalibration
from spatial_manip.nodes.convert import camera_info_to_intrinsics, image_to_array, matrix_from_pose_msg, stamp_to_seconds
from spatial_manip.observation import ObservationBuffer, RGBDObservation


def live_observation(calibration: HandEyeCalibration | None, *, color: str, depth: str, info: str,
                     extrinsics: str = "/camera/extrinsics", timeout_s: float = 10.0) -> RGBDObservation:
    """The first synchronized pair that arrives after the call. The camera pose comes from an
    eye-to-hand calibration, else from `extrinsics` (camera_node publishes it, eye-in-hand too)."""
    buf = ObservationBuffer()
    if calibration is not None and not calibration.eye_in_hand:
        buf.set_extrinsics(calibration.T_base_camera())
    started = not rclpy.ok()
    if started:
        rclpy.init()
    node = rclpy.create_node("spatial_manip_capture_workspace")
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)

    def on_depth(msg):
        arr = image_to_array(msg)
        depth_m = arr.astype(np.float32) * np.float32(0.001) if arr.dtype == np.uint16 else arr.astype(np.float32)
        buf.add_depth(stamp_to_seconds(msg.header.stamp), depth_m, time.monotonic())

    node.create_subscription(Image, color, lambda m: buf.add_color(
        stamp_to_seconds(m.header.stamp), image_to_array(m), time.monotonic()), qos_profile_sensor_data)
    node.create_subscription(Image, depth, on_depth, qos_profile_sensor_data)
    node.create_subscription(CameraInfo, info, lambda m: buf.set_intrinsics(camera_info_to_intrinsics(m)),
                             qos_profile_sensor_data)
    if calibration is None or calibration.eye_in_hand:
        node.create_subscription(PoseStamped, extrinsics, lambda m: buf.set_extrinsics(matrix_from_pose_msg(m.pose)),
                                 latched)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        obs = buf.wait_pair(timeout_s=timeout_s, newer_than_s=time.monotonic(), now=time.monotonic)
        if obs is None:
            raise NoObservationError(f"no synchronized observation within {timeout_s:.0f} s; still missing: "
                                     f"{', '.join(buf.missing()) or 'a pair of colour and depth with one stamp'} "
                                     f"(topics {color}, {depth}, {info})")
        return obs
    finally:
        executor.shutdown()
        node.destroy_node()
        if started:
            rclpy.shutdown()
