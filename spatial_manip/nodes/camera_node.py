"""camera_node: a RealSense camera (L515 or any depth RealSense) or an SDK recording, published
as the official realsense2_camera driver does (rgb8 colour, 16UC1 mm aligned depth, camera_info
from the SDK intrinsics, optical frame ids, sensor time), plus `/camera/extrinsics` from the
hand-eye calibration file. The core (spatial_manip.camera.realsense) owns the device; this node
only converts and publishes, from its own thread, so publishing never blocks capture.

    ros2 run spatial_manip camera_node --ros-args -p source:=file -p file_path:=run.db3

`source:=none` opens no device: where realsense2_camera already publishes the images, this node
publishes only the calibrated camera pose.
"""
from __future__ import annotations

import sys

import threading
import time

from rclpy.node import Node

from spatial_manip.nodes.parameters import declare_parameters
from spatial_manip.nodes.runner import spin_node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import CameraInfo, Image

from spatial_manip.camera.realsense import RealSenseConfig, RealSenseSource
from spatial_manip.camera.types import CameraError, StampConverter
from spatial_manip.errors import ConfigError
from spatial_manip.nodes import convert
from spatial_manip.geometry.calibration import load_calibration
from spatial_manip.paths import resolve_user_file



def realsense_config(p: dict) -> RealSenseConfig:
    """Node parameters -> the core's config (numbers < 0 and "" mean the device's value: None)."""
    opt = lambda v: None if v is None or (isinstance(v, (int, float)) and v < 0) or v == "" else v  # noqa: E731
    preset = opt(p["visual_preset"])
    if isinstance(preset, str) and preset.isdigit():
        preset = int(preset)
    try:
        return RealSenseConfig(
            source=p["source"], serial=p["serial"], file_path=p["file_path"], real_time=p["real_time"],
            repeat_playback=p["repeat_playback"], depth_width=p["depth_width"], depth_height=p["depth_height"],
            color_width=p["color_width"], color_height=p["color_height"], fps=p["fps"],
            laser_power=opt(p["laser_power"]), receiver_gain=opt(p["receiver_gain"]),
            confidence_threshold=opt(p["confidence_threshold"]), visual_preset=preset,
            temporal_filter=p["temporal_filter"], spatial_filter=p["spatial_filter"],
            hole_filling_filter=p["hole_filling_filter"], reconnect_initial_s=p["reconnect_initial_s"],
            reconnect_max_s=p["reconnect_max_s"])
    except ValueError as e:
        raise ConfigError(f"camera_node parameters: {e}") from e


def ros_time(seconds_ns: int) -> Time:
    return Time(sec=seconds_ns // 1_000_000_000, nanosec=seconds_ns % 1_000_000_000)


class CameraNode(Node):
    def __init__(self):
        super().__init__("camera_node")
        # set first: a node refused half-built is still destroyed (by rclpy's shutdown)
        self._stop, self._thread, self.source = threading.Event(), None, None
        self.p = declare_parameters(self)   # spatial_manip/parameters.py
        if self.p["source"] == "none":
            self._publish_extrinsics()
            self.get_logger().info("ready: source none (another driver publishes the images)")
            return
        config = realsense_config(self.p)     # refused before any publisher exists
        qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE) if self.p["reliable"] \
            else qos_profile_sensor_data
        self.pub_color = self.create_publisher(Image, self.p["color_topic"], qos)
        self.pub_color_info = self.create_publisher(CameraInfo, self.p["color_info_topic"], qos)
        self.pub_depth = self.create_publisher(Image, self.p["depth_topic"], qos)
        self.pub_depth_info = self.create_publisher(CameraInfo, self.p["depth_info_topic"], qos)
        self._publish_extrinsics()
        self.stamps = StampConverter()
        self.published = 0
        self.stale = 0
        self.source = RealSenseSource(config, on_status=self._on_status)
        self.source.connect()
        self._thread = threading.Thread(target=self._publish_loop, name="camera-publish", daemon=True)
        self._thread.start()

    def _publish_extrinsics(self) -> None:
        if not self.p["calibration_file"]:
            self.get_logger().info("no calibration_file: /camera/extrinsics is not published")
            return

        cal = load_calibration(resolve_user_file(self.p["calibration_file"]))
        if cal.eye_in_hand:
            self.get_logger().warn("eye-in-hand calibration: the camera pose moves with the flange, so this node"
                                   " does not publish a fixed /camera/extrinsics")
            return
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.pub_extr = self.create_publisher(PoseStamped, self.p["extrinsics_topic"], latched)
        self.pub_extr.publish(convert.pose_stamped(cal.T_base_camera(), self.p["base_frame_id"],
                                                   self.get_clock().now().to_msg()))

    def _on_status(self, status: str, detail: str) -> None:
        if status == "streaming":
            self.stamps.reset()  # a reconnected device's hardware clock starts again
        log = self.get_logger().warn if status in ("reconnecting", "ended") else self.get_logger().info
        log(f"camera {status}: {detail}")

    def _publish_loop(self) -> None:
        seq, last_warn = 0, 0.0
        while not self._stop.is_set():
            try:
                frame = self.source.wait_for_frame(0.5, seq)
            except CameraError:
                continue  # status changes are logged by _on_status
            seq = frame.seq
            age = frame.age_s()
            if age > self.p["max_frame_age_s"]:
                self.stale += 1
                if time.monotonic() - last_warn > 2.0:
                    last_warn = time.monotonic()
                    self.get_logger().warn(f"dropping a frame {age:.3f} s old (max_frame_age_s="
                                           f"{self.p['max_frame_age_s']}); {self.stale} dropped so far")
                continue
            self.publish_frame(frame)

    def publish_frame(self, frame) -> None:
        if frame.timestamp_domain in ("global_time", "system_time"):
            stamp = ros_time(int(round(frame.stamp_ms * 1e6)))
        else:
            stamp = ros_time(int(round(self.stamps.to_ros_seconds(frame.stamp_ms, frame.timestamp_domain) * 1e9)))
        fid = self.p["color_frame_id"]  # aligned depth lives in the colour optical frame
        info = convert.intrinsics_to_camera_info(frame.intrinsics, fid, stamp)
        self.pub_color.publish(convert.array_to_image(frame.rgb, "rgb8", fid, stamp))
        self.pub_color_info.publish(info)
        self.pub_depth.publish(convert.array_to_image(frame.depth_mm, "16UC1", fid, stamp))
        self.pub_depth_info.publish(info)
        self.published += 1

    def destroy_node(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.source is not None:
            self.source.close()
        super().destroy_node()


def main(args=None) -> int:
    return spin_node(CameraNode, args=args)


if __name__ == "__main__":
    sys.exit(main())
