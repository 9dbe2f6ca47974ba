"""Live capture of calibration samples from ROS topics for `spatial-manip calibrate`: a thin
adapter (it converts messages and hands the rest to the calibration core).

Each `take()` waits for a camera frame that started after the call (the arm is held still by
then), and keeps the joint states from half a second around its stamp. The pairing itself is
left to samples.pair_by_stamp, on the saved folder, exactly as offline.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from spatial_manip.calibration.samples import SampleError, pair_by_stamp
from spatial_manip.nodes.convert import (camera_info_to_intrinsics, image_to_array, pose_msg_from_matrix,
                                         stamp_to_seconds)
from spatial_manip.nodes.runner import ActionClient

KEEP_AROUND_S = 0.5     # joint states kept either side of an image's stamp


@dataclass
class LiveSample:
    rgb: np.ndarray
    stamp: float
    joints: list          # [{"stamp", "names", "joints"}] around `stamp`
    skew_s: float         # to the nearest joint state


class RosCalibrationCapture:
    """Subscribes to the colour image, its camera_info and /joint_states (topic names as the
    realsense2_camera and UR drivers publish them; all parameters)."""

    def __init__(self, *, image_topic: str = "/camera/color/image_raw",
                 info_topic: str = "/camera/color/camera_info", joint_topic: str = "/joint_states",
                 max_skew_s: float = 0.02, node_name: str = "spatial_manip_calibrate"):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import CameraInfo, Image, JointState

        self._rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(node_name, context=self.context)
        self.max_skew_s = max_skew_s
        self._lock = threading.Lock()
        self._image = None                 # (stamp, msg)
        self._info = None
        self._joints: deque = deque(maxlen=5000)
        self._arm = None                   # ArmMotion client, made on the first move_to
        self.node.create_subscription(Image, image_topic, self._on_image, qos_profile_sensor_data)
        self.node.create_subscription(CameraInfo, info_topic, self._on_info, qos_profile_sensor_data)
        self.node.create_subscription(JointState, joint_topic, self._on_joints, 50)
        self.topics = (image_topic, info_topic, joint_topic)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._executor.spin, daemon=True)
        self._thread.start()

    # --- callbacks: convert and store, nothing else ----------------------------------------
    def _on_image(self, msg) -> None:
        with self._lock:
            self._image = (stamp_to_seconds(msg.header.stamp), msg)

    def _on_info(self, msg) -> None:
        with self._lock:
            self._info = camera_info_to_intrinsics(msg)

    def _on_joints(self, msg) -> None:
        entry = {"stamp": stamp_to_seconds(msg.header.stamp), "names": list(msg.name),
                 "joints": [float(p) for p in msg.position]}
        with self._lock:
            self._joints.append(entry)

    # --- what the CLI calls ----------------------------------------------------------------
    def latest_joints(self) -> dict | None:
        with self._lock:
            return self._joints[-1] if self._joints else None

    def intrinsics(self, timeout_s: float = 5.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if self._info is not None:
                    return self._info
            time.sleep(0.05)
        raise SampleError(f"no camera_info on {self.topics[1]} within {timeout_s:g} s: is the camera driver running "
                          "(and the topic name right)?")

    def take(self, timeout_s: float = 5.0) -> LiveSample:
        """The next frame and the joint states around it; raises SampleError naming the silent topic."""
        t_call = time.monotonic()
        with self._lock:
            old = self._image[0] if self._image else None
        stamp, msg = self._wait(lambda: self._image if self._image and self._image[0] != old else None,
                                t_call + timeout_s, f"no new image on {self.topics[0]}")
        # wait until the joint stream has passed the image, so the nearest state is known
        self._wait(lambda: self._joints and self._joints[-1]["stamp"] >= stamp + self.max_skew_s or None,
                   time.monotonic() + timeout_s, f"no joint state on {self.topics[2]} after the image")
        with self._lock:
            around = [j for j in self._joints if abs(j["stamp"] - stamp) <= KEEP_AROUND_S]
        pairing = pair_by_stamp([stamp], [j["stamp"] for j in around], self.max_skew_s)
        if pairing.unpaired:
            raise SampleError(f"image at {stamp:.3f} s: {pairing.unpaired[0]} (are the camera and robot clocks in sync?)")
        return LiveSample(image_to_array(msg), stamp, around, pairing.pairs[0][2])

    def move_to(self, T_base_tcp: np.ndarray, *, action: str = "/spatial_manip/arm_motion",
                speed_scale: float = 0.3, timeout_s: float = 60.0) -> None:
        """One ArmMotion WAYPOINTS goal to a TCP pose (the arm node checks it against its safety
        envelope again); raises SampleError with the arm's own error code and message."""
        from spatial_manip_interfaces.action import ArmMotion


        if self._arm is None:
            self._arm = ActionClient(self.node, ArmMotion, action)
        if not self._arm.wait_for_server(timeout_sec=10.0):
            raise SampleError(f"no arm action server at {action}: is arm_node (or sim_node) running?")
        goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_WAYPOINTS, waypoints=[pose_msg_from_matrix(T_base_tcp)],
                              speed_scale=float(speed_scale))
        deadline = time.monotonic() + timeout_s
        handle = self._future(self._arm.send_goal_async(goal), deadline, "the arm did not answer the motion goal")
        if not handle.accepted:
            raise SampleError(f"the arm refused the motion to {np.round(T_base_tcp[:3, 3], 3).tolist()}")
        result = self._future(handle.get_result_async(), deadline, "the motion did not finish").result
        if not result.success:
            raise SampleError(f"motion to {np.round(T_base_tcp[:3, 3], 3).tolist()} failed: "
                              f"{result.error_code}: {result.message}")

    def _future(self, fut, deadline: float, what: str):
        while not fut.done():
            if time.monotonic() > deadline:
                fut.cancel()
                raise SampleError(f"{what} in time")
            time.sleep(0.01)
        return fut.result()

    def _wait(self, get, deadline: float, what: str):
        while time.monotonic() < deadline:
            with self._lock:
                got = get()
            if got:
                return got
            time.sleep(0.01)
        raise SampleError(f"{what} within the timeout: check the topic names and that the driver publishes")

    def close(self) -> None:
        self._executor.shutdown()
        self.node.destroy_node()
        self._rclpy.shutdown(context=self.context)
        self._thread.join(timeout=2.0)
