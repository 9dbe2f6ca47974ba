"""recorder_node: record topics of the graph into a rosbag2 (sqlite3 or MCAP) with the `rosbags`
library. Generic over message types: subscriptions are raw (CDR bytes go straight to the bag),
created as soon as a wanted topic appears, transient-local when its publisher is (extrinsics)."""
from __future__ import annotations

import sys

import threading

from rclpy.node import Node

from spatial_manip.nodes.runner import spin_node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from spatial_manip.bags.io import BagError, BagWriter
from spatial_manip.bags.ros_types import message_class

ACTION = "/spatial_manip/execute_instruction"
DEFAULT_TOPICS = [
    "/camera/color/image_raw", "/camera/color/camera_info",
    "/camera/aligned_depth_to_color/image_raw", "/camera/aligned_depth_to_color/camera_info",
    "/camera/extrinsics", "/joint_states", "/tcp_pose_broadcaster/pose", "/spatial_manip/scene",
    f"{ACTION}/_action/feedback", f"{ACTION}/_action/status", "/spatial_manip/instruction_log",
]


class RecorderNode(Node):
    def __init__(self, output: str = "", storage: str = "", topics: list[str] | None = None):
        super().__init__("recorder_node")
        self.declare_parameter("output", output)
        self.declare_parameter("storage", storage or "sqlite3")
        self.declare_parameter("topics", topics or DEFAULT_TOPICS)
        self.declare_parameter("discovery_period_s", 0.25)
        out = self.get_parameter("output").value
        if not out:
            raise BagError("recorder_node needs the 'output' parameter (a new bag folder)")
        self.wanted = list(self.get_parameter("topics").value)
        self.writer = BagWriter(out, self.get_parameter("storage").value)
        self._lock = threading.Lock()
        self._subs: dict = {}
        self.create_timer(self.get_parameter("discovery_period_s").value, self._discover)
        self._discover()

    def _discover(self) -> None:
        types = dict(self.get_topic_names_and_types())
        for topic in self.wanted:
            if topic in self._subs or topic not in types:
                continue
            msgtype = types[topic][0]
            try:
                cls = message_class(msgtype, f"recording {topic}")
            except BagError as e:
                self.get_logger().error(str(e))
                self._subs[topic] = None
                continue
            latched = any(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                          for i in self.get_publishers_info_by_topic(topic))
            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
            with self._lock:
                self.writer.add_topic(topic, msgtype, latched=latched)
            self._subs[topic] = self.create_subscription(cls, topic, lambda raw, t=topic: self._write(t, raw), qos,
                                                         raw=True)
            self.get_logger().info(f"recording {topic} ({msgtype}{', latched' if latched else ''})")

    def _write(self, topic: str, raw: bytes) -> None:
        with self._lock:
            if self.writer is not None:
                self.writer.write(topic, self.get_clock().now().nanoseconds, raw)

    def close(self) -> dict:
        with self._lock:
            if self.writer is None:
                return {}
            self.writer.close()
            counts, self.writer = self.writer.counts, None
        return counts


def main(args=None) -> int:
    return spin_node(RecorderNode, args=args, close=lambda n: n.close())


if __name__ == "__main__":
    sys.exit(main())
