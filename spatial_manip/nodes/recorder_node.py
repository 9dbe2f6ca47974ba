"""recorder_node: record topics of the graph into a rosbag2 (sqlite3 or MCAP) with the `rosbags`
library. Generic over message types: subscriptions are raw (CDR bytes go straight to the bag).

Nothing is lost on the way in:
- a topic is subscribed once it has a publisher, with the durability its publishers offer, and
  that is checked again at every discovery tick: a latched (transient-local) publisher that
  shows up after the topic was first seen (the planner's subscription made the name visible
  first) gets a transient-local subscription, so its history arrives however late it appears;
- the topics the planner needs are watched: a warning names the absent ones after
  `absent_warn_s`, and `close()` returns a summary saying which never came;
- the bag is flushed every `flush_period_s` (sqlite3 commit / MCAP chunk), so a killed recorder
  loses at most that much, and `spatial-manip bag-repair` makes the rest readable.
"""
from __future__ import annotations

import collections
import sys
import threading
import time

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from spatial_manip.bags.io import BagError, BagWriter
from spatial_manip.bags.ros_types import message_class
from spatial_manip.nodes.runner import spin_node

ACTION = "/spatial_manip/execute_instruction"
DEFAULT_TOPICS = [
    "/camera/color/image_raw", "/camera/color/camera_info",
    "/camera/aligned_depth_to_color/image_raw", "/camera/aligned_depth_to_color/camera_info",
    "/camera/extrinsics", "/joint_states", "/tcp_pose_broadcaster/pose", "/spatial_manip/scene",
    "/spatial_manip/workspace",
    f"{ACTION}/_action/feedback", f"{ACTION}/_action/status", "/spatial_manip/instruction_log",
]
# what `spatial-manip evaluate` (the planner offline) cannot do without
PLANNER_TOPICS = ["/camera/color/image_raw", "/camera/aligned_depth_to_color/image_raw",
                  "/camera/color/camera_info", "/camera/extrinsics"]
_RECENT = 100   # messages per topic remembered to drop the history a late latched subscription replays


class _Topic:
    """One recorded topic: its subscription, durability, and recent message hashes."""

    def __init__(self):
        self.sub = None
        self.durability = None
        self.recent: collections.deque = collections.deque(maxlen=_RECENT)
        self.replayed: set = set()   # hashes the new transient-local subscription will resend
        self.warned_mixed = False


class RecorderNode(Node):
    def __init__(self, output: str = "", storage: str = "", topics: list[str] | None = None,
                 required: list[str] | None = None, flush_period_s: float = 1.0):
        super().__init__("recorder_node")
        self.declare_parameter("output", output)
        self.declare_parameter("storage", storage or "sqlite3")
        self.declare_parameter("topics", topics or DEFAULT_TOPICS)
        self.declare_parameter("required_topics", required if required is not None else PLANNER_TOPICS)
        self.declare_parameter("discovery_period_s", 0.25)
        self.declare_parameter("flush_period_s", float(flush_period_s))
        self.declare_parameter("absent_warn_s", 5.0)
        out = self.get_parameter("output").value
        if not out:
            raise BagError("recorder_node needs the 'output' parameter (a new bag folder)")
        self.wanted = list(self.get_parameter("topics").value)
        self.required = [t for t in self.get_parameter("required_topics").value if t and t in self.wanted]
        self.writer = BagWriter(out, self.get_parameter("storage").value)
        self._lock = threading.Lock()
        self._topics: dict[str, _Topic] = {t: _Topic() for t in self.wanted}
        self._bad_types: set[str] = set()
        self._counts: dict[str, int] = {}   # once closed
        self._t0 = time.monotonic()
        self._absent_warned = False
        self.create_timer(self.get_parameter("discovery_period_s").value, self._discover)
        flush = float(self.get_parameter("flush_period_s").value)
        if flush > 0:
            self.create_timer(flush, self.flush)
        self._discover()

    # ---- discovery -----------------------------------------------------------------------
    def _discover(self) -> None:
        for topic, state in self._topics.items():
            if topic not in self._bad_types:
                self._check_topic(topic, state)
        self._warn_absent()

    def _check_topic(self, topic: str, state: _Topic) -> None:
        pubs = self.get_publishers_info_by_topic(topic)
        if not pubs:
            return  # a name seen only through subscribers says nothing about durability yet
        latched = [p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in pubs]
        # transient-local only when every publisher offers it: such a subscription does not
        # match a volatile publisher at all, and live messages matter more than history
        want = DurabilityPolicy.TRANSIENT_LOCAL if all(latched) else DurabilityPolicy.VOLATILE
        if any(latched) and not all(latched) and not state.warned_mixed:
            state.warned_mixed = True
            self.get_logger().warning(f"{topic}: latched and volatile publishers mixed; recording it volatile, "
                                      "so history published before the recorder matched may be missing")
        if want != state.durability:
            self._subscribe(topic, state, pubs[0].topic_type, want)

    def _subscribe(self, topic: str, state: _Topic, msgtype: str, durability) -> None:
        try:
            cls = message_class(msgtype, f"recording {topic}")
        except BagError as e:
            self.get_logger().error(str(e))
            self._bad_types.add(topic)
            return
        latched = durability == DurabilityPolicy.TRANSIENT_LOCAL
        qos = QoSProfile(depth=_RECENT, reliability=ReliabilityPolicy.RELIABLE, durability=durability)
        with self._lock:
            if self.writer is None:
                return
            self.writer.add_topic(topic, msgtype, latched=latched)
            # the new subscription receives the publisher's history again: drop what is in the bag
            state.replayed = set(state.recent) if latched else set()
        old = state.sub
        state.sub = self.create_subscription(cls, topic, lambda raw, t=topic: self._write(t, raw), qos, raw=True)
        state.durability = durability
        if old is not None:
            self.destroy_subscription(old)
        how = "re-subscribed" if old is not None else "recording"
        self.get_logger().info(f"{how} {topic} ({msgtype}{', latched' if latched else ''})")

    def _warn_absent(self) -> None:
        if self._absent_warned or time.monotonic() - self._t0 < self.get_parameter("absent_warn_s").value:
            return
        missing = self.absent()
        if missing:
            self._absent_warned = True
            self.get_logger().warning(f"no message yet on {', '.join(missing)}, which the planner needs to "
                                      "re-plan this recording offline; is its publisher (camera driver, "
                                      "calibration publisher) running?")

    # ---- writing -------------------------------------------------------------------------
    def _write(self, topic: str, raw: bytes) -> None:
        state = self._topics[topic]
        h = hash(raw)
        with self._lock:
            if self.writer is None:
                return
            if h in state.replayed:
                state.replayed.discard(h)  # already recorded through the volatile subscription
                return
            state.recent.append(h)
            self.writer.write(topic, self.get_clock().now().nanoseconds, raw)

    def flush(self) -> None:
        with self._lock:
            if self.writer is not None:
                self.writer.flush()

    def absent(self) -> list[str]:
        """The planner's topics with no message recorded (yet)."""
        with self._lock:
            counts = dict(self.writer.counts) if self.writer is not None else self._counts
        return [t for t in self.required if not counts.get(t)]

    def close(self) -> dict:
        """Finish the bag; the per-topic counts. Logs a summary naming absent planner topics."""
        with self._lock:
            if self.writer is None:
                return dict(self._counts)
            self.writer.close()
            self._counts, self.writer = dict(self.writer.counts), None
        missing = self.absent()
        summary = ", ".join(f"{t} {n}" for t, n in sorted(self._counts.items())) or "nothing"
        self._say(f"bag closed: {summary}")
        if missing:
            self._say(f"the bag has no {', '.join(missing)}: `spatial-manip evaluate` cannot re-plan it "
                      "without them", warning=True)
        return dict(self._counts)

    def _say(self, msg: str, warning: bool = False) -> None:
        # after SIGTERM/Ctrl-C the context is gone: rclpy would add "Failed to publish log
        # message to rosout" to every line, so the closing summary goes to stderr directly
        if not self.context.ok():
            print(f"[{'WARN' if warning else 'INFO'}] [{self.get_name()}]: {msg}", file=sys.stderr, flush=True)
        elif warning:
            self.get_logger().warning(msg)
        else:
            self.get_logger().info(msg)


def main(args=None) -> int:
    return spin_node(RecorderNode, args=args, close=lambda n: n.close())


if __name__ == "__main__":
    sys.exit(main())
