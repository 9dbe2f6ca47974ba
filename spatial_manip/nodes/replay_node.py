"""replay_node: publish rosbag2 recordings into the graph with their original timing, so the
planner and grasp nodes run on recorded data exactly as on live data. Plays our bags, bags of
`ros2 bag record` with the official RealSense driver, and pyrealsense2 `.db3` recordings (their
/device_0/... streams are mapped onto the driver's camera topics)."""
from __future__ import annotations

import sys

import threading
import time

from rclpy.node import Node

from spatial_manip.nodes.runner import spin_node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from spatial_manip.bags.io import BagError, BagMessage, BagReader
from spatial_manip.bags.realsense_bag import RealSenseBagMapper, is_realsense_bag
from spatial_manip.bags.replay import ReplayConfig, play
from spatial_manip.bags.ros_types import message_class
from spatial_manip.bags import realsense_bag as rsb
from spatial_manip.nodes import convert
from spatial_manip.nodes.camera_node import ros_time

LATCHED_TOPICS = {"/camera/extrinsics", "/tf_static"}


class ReplayNode(Node):
    def __init__(self, bags: list[str] | None = None, config: ReplayConfig | None = None):
        super().__init__("replay_node")
        self.readers: list[BagReader] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replay", daemon=True)
        self.declare_parameter("bags", bags or [""])
        cfg = config or ReplayConfig()
        self.declare_parameter("rate", cfg.rate)
        self.declare_parameter("start_offset_s", cfg.start_offset_s)
        self.declare_parameter("loop", cfg.loop)
        self.declare_parameter("topics", list(cfg.topics) or [""])
        self.declare_parameter("clock", cfg.clock)
        paths = [p for p in self.get_parameter("bags").value if p]
        if not paths:
            raise BagError("replay_node needs the 'bags' parameter (one or more bag paths)")
        self.config = ReplayConfig(rate=self.get_parameter("rate").value,
                                   start_offset_s=self.get_parameter("start_offset_s").value,
                                   loop=self.get_parameter("loop").value,
                                   topics=tuple(t for t in self.get_parameter("topics").value if t),
                                   clock=self.get_parameter("clock").value)
        self.readers = [BagReader(p) for p in paths]
        self.mappers = {id(r): RealSenseBagMapper(r) for r in self.readers if is_realsense_bag(r)}
        self._pubs: dict = {}
        self._create_publishers()
        self._clock_pub = self._create_clock_publisher() if self.config.clock else None
        self.published = 0
        self.error: Exception | None = None
        self.done = threading.Event()

    def _create_publishers(self) -> None:
        """All publishers up front, so subscribers can match before the first message."""
        from sensor_msgs.msg import CameraInfo, Image


        for r in self.readers:
            if id(r) in self.mappers:
                for topic, cls in ((rsb.COLOR_TOPIC, Image), (rsb.COLOR_INFO, CameraInfo),
                                   (rsb.DEPTH_TOPIC, Image), (rsb.DEPTH_INFO, CameraInfo)):
                    self._publisher(topic, cls, False)
                continue
            for info in r.topics.values():
                if self.config.topics and info.topic not in self.config.topics:
                    continue
                cls = message_class(info.msgtype, f"bag {r.path} topic {info.topic}")
                self._publisher(info.topic, cls, info.topic in LATCHED_TOPICS or info.latched)

    def _create_clock_publisher(self):
        """/clock at the recording's time, as `ros2 bag play --clock` does: the planner judges a
        frame's freshness against its own clock (a frame must be stamped after the workspace came),
        so a replayed session answers goals only when the planner runs on the recording's time."""
        return self.create_publisher(Clock, "/clock", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))

    def subscriber_count(self) -> int:
        return sum(p.get_subscription_count() for p in self._pubs.values())

    def start(self) -> None:
        self._thread.start()

    def wait_for_all_acked(self, timeout_s: float) -> list[str]:
        """Wait up to `timeout_s` in all until every reliable subscriber has acknowledged what was
        published; returns the topics still unacknowledged. Destroying the publishers (a replay
        that exits) throws away what is still in flight: a loaded machine's subscriber lost the
        last frames of a replay that had exited, not the first."""
        from rclpy.duration import Duration

        deadline = time.monotonic() + timeout_s
        return [t for t, p in self._pubs.items()
                if not p.wait_for_all_acked(Duration(seconds=max(0.0, deadline - time.monotonic())))]

    def _publisher(self, topic: str, cls, latched: bool):
        if topic not in self._pubs:
            qos = QoSProfile(depth=1 if latched else 10, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
            self._pubs[topic] = self.create_publisher(cls, topic, qos)
        return self._pubs[topic]

    def _publish(self, msg: BagMessage) -> None:
        if self._clock_pub is not None:     # the time first: a node reading a message sees its clock at it
            self._clock_pub.publish(Clock(clock=ros_time(msg.t_ns)))
        reader = next(r for r in self.readers if msg.topic in r.topics)
        mapper = self.mappers.get(id(reader))
        if mapper is not None:
            for item in mapper.map(msg):
                self._publish_camera_item(item)
            return
        self._pubs[msg.topic].publish(msg.raw)
        self.published += 1

    def _publish_camera_item(self, item) -> None:
        from sensor_msgs.msg import CameraInfo, Image


        stamp = ros_time(item.stamp_ns)
        if item.kind == "image":
            self._publisher(item.topic, Image, False).publish(
                convert.array_to_image(item.image, item.encoding, item.frame_id, stamp))
        else:
            self._publisher(item.topic, CameraInfo, False).publish(
                convert.intrinsics_to_camera_info(item.intrinsics, item.frame_id, stamp))
        self.published += 1

    def _run(self) -> None:
        try:
            if self.mappers and self.config.topics:
                raise BagError("--topics cannot select from a RealSense SDK recording; its streams are mapped "
                               "to /camera/color/* and /camera/depth/*")
            play(self.readers, self._publish, self.config, stop=self._stop)
            for mapper in self.mappers.values():
                for item in mapper.flush():
                    self._publish_camera_item(item)
        except Exception as e:  # reported by the caller (CLI exit code, log); the node stays up
            self.error = e
            self.get_logger().error(f"replay stopped: {e}")
        finally:
            self.done.set()

    def destroy_node(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        for r in self.readers:
            r.close()
        super().destroy_node()


def main(args=None) -> int:
    return spin_node(_started_replay, args=args)


def _started_replay() -> "ReplayNode":
    node = ReplayNode()
    node.start()
    return node


if __name__ == "__main__":
    sys.exit(main())
