"""The ROS side of each pipeline stage for planner_node: camera subscriptions, the grasp
service, the arm action. Perception and reasoning are core objects chosen by parameters."""
from __future__ import annotations

import os
import threading
import time
from datetime import datetime
from pathlib import Path

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from spatial_manip.errors import NoObservationError
from spatial_manip.nodes.convert import (camera_info_to_intrinsics, image_to_array,
                                         matrix_from_pose_msg, stamp_to_seconds)
from spatial_manip.observation import ObservationBuffer, RGBDObservation

PARAMETERS = {
    "color_topic": "/camera/color/image_raw",
    "depth_topic": "/camera/aligned_depth_to_color/image_raw",
    "camera_info_topic": "/camera/color/camera_info",
    "extrinsics_topic": "/camera/extrinsics",
    "observation_timeout_s": 5.0,     # how long a goal waits for a synchronized RGB-D pair
    "max_skew_s": 0.05,               # colour/depth stamps further apart are not a pair
    "segmenter": "classical",         # perception backend (see spatial_manip.perception)
    "planner": "program",             # reasoning backend (see spatial_manip.reasoning)
    "grasp_service": "/spatial_manip/propose_grasps",
    "arm_action": "/spatial_manip/arm_motion",
    "trace_dir": "traces",            # one sub-directory per goal
}


def declare_port_parameters(node) -> None:
    from rcl_interfaces.msg import ParameterDescriptor

    for name, default in PARAMETERS.items():
        # dynamic typing: `-p observation_timeout_s:=2` arrives as an integer
        node.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=isinstance(default, float)))


class PlannerPorts:
    def __init__(self, node, group):
        self.node = node
        p = lambda n: node.get_parameter(n).value  # noqa: E731
        self.timeout_s = float(p("observation_timeout_s"))
        self.trace_root = Path(os.path.expanduser(str(p("trace_dir"))))
        self.buffer = ObservationBuffer(max_skew_s=float(p("max_skew_s")))
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(Image, p("color_topic"), self._on_color, qos_profile_sensor_data,
                                 callback_group=group)
        node.create_subscription(Image, p("depth_topic"), self._on_depth, qos_profile_sensor_data,
                                 callback_group=group)
        node.create_subscription(CameraInfo, p("camera_info_topic"), self._on_info, qos_profile_sensor_data,
                                 callback_group=group)
        node.create_subscription(PoseStamped, p("extrinsics_topic"), self._on_extrinsics, latched,
                                 callback_group=group)
        self._warned: set[str] = set()

    # --- subscriptions ---------------------------------------------------------------------
    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.node.get_logger().warn(text)

    def _on_color(self, msg: Image) -> None:
        try:
            self.buffer.add_color(stamp_to_seconds(msg.header.stamp), image_to_array(msg), time.monotonic())
        except ValueError as e:
            self._warn_once("color", f"ignoring colour images: {e}")

    def _on_depth(self, msg: Image) -> None:
        try:
            arr = image_to_array(msg)
        except ValueError as e:
            self._warn_once("depth", f"ignoring depth images: {e}")
            return
        # 16UC1 is millimetres (the RealSense driver's convention); 32FC1 is metres.
        depth_m = arr.astype(np.float32) * (0.001 if arr.dtype == np.uint16 else 1.0)
        self.buffer.add_depth(stamp_to_seconds(msg.header.stamp), depth_m, time.monotonic())

    def _on_info(self, msg: CameraInfo) -> None:
        try:
            self.buffer.set_intrinsics(camera_info_to_intrinsics(msg))
        except ValueError as e:
            self._warn_once("info", f"ignoring camera_info: {e}")

    def _on_extrinsics(self, msg: PoseStamped) -> None:
        try:
            self.buffer.set_extrinsics(matrix_from_pose_msg(msg.pose))
        except ValueError as e:
            self._warn_once("extrinsics", f"ignoring camera extrinsics: {e}")

    # --- pipeline ports --------------------------------------------------------------------
    def new_trace_dir(self) -> str:
        return str(self.trace_root / datetime.now().strftime("%Y%m%d-%H%M%S-%f"))

    def observe(self, cancel: threading.Event) -> RGBDObservation:
        obs = self.buffer.wait_pair(timeout_s=self.timeout_s, newer_than_s=time.monotonic() - self.timeout_s,
                                    now=time.monotonic, cancel=cancel)
        if obs is None:
            if cancel.is_set():
                from spatial_manip.errors import CanceledError

                raise CanceledError("the goal was canceled while waiting for the camera")
            missing = self.buffer.missing()
            what = ", ".join(missing) if missing else "a colour/depth pair with matching stamps"
            raise NoObservationError(
                f"no synchronized RGB-D observation within {self.timeout_s:g} s (missing: {what}); "
                f"is the camera (or sim) node running and publishing on the configured topics?")
        return obs

    def perceive(self, obs):
        raise NotImplementedError("perception is wired in by the planner issue")

    def reason(self, scene, goal, obs, reflection, trace):
        raise NotImplementedError("reasoning is wired in by the planner issue")

    def propose_grasps(self, decision, scene, obs):
        raise NotImplementedError

    def pick(self, grasps, decision, cancel):
        raise NotImplementedError

    def place(self, decision, cancel):
        raise NotImplementedError

    def verify(self, decision, goal, cancel):
        raise NotImplementedError

    def stop_motion(self) -> None:
        pass

    def close(self) -> None:
        pass
