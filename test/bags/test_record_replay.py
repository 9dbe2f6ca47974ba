"""record and replay through real rclpy/DDS across processes, and the CLI's error messages."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Image
from std_msgs.msg import String

from bag_fixtures import camera_messages
from recordings import build_recording_isolated
from ros_helpers import plain_node
from spatial_manip import cli
from spatial_manip.bags.io import BagReader, BagWriter
from spatial_manip.bags.replay import ReplayConfig, play
from spatial_manip.nodes.convert import image_to_array

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)


@pytest.fixture
def node():
    with plain_node("bag_test") as n:
        yield n


def spin_until(node, cond, timeout_s, proc=None, drain_s=2.0):
    """Spin until `cond()`, the timeout, or `drain_s` after `proc` exits: messages it sent just
    before exiting may still be on their way (on a busy machine, the last frames arrived late)."""
    deadline = time.monotonic() + timeout_s
    while not cond() and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
        if proc is not None and proc.poll() is not None:
            deadline = min(deadline, time.monotonic() + drain_s)
            proc = None
    return cond()


def cli_proc(*args):
    return subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_play_keeps_timing_rate_offset_and_loop(tmp_path):
    with BagWriter(tmp_path / "b", "sqlite3") as w:
        w.add_topic("/x", "std_msgs/msg/String")
        for i in range(5):
            w.write("/x", 1_000_000_000 + i * 500_000_000, serialize_message(String(data=str(i))))
    now = [0.0]
    slept = []

    def sleep(dt):
        slept.append(dt)
        now[0] += dt
    got = []
    with BagReader(tmp_path / "b") as r:
        n = play([r], lambda m: got.append((now[0], m)), ReplayConfig(rate=2.0, start_offset_s=1.0),
                 clock=lambda: now[0], sleep=sleep)
        assert n == 3  # messages at 1.0 s and later of the 2 s recording
        assert [t for t, _ in got] == pytest.approx([0.0, 0.25, 0.5])
        got.clear()
        import threading
        stop = threading.Event()

        def pub(m):
            got.append(m)
            if len(got) == 12:
                stop.set()
        play([r], pub, ReplayConfig(rate=100.0, loop=True), stop=stop, clock=lambda: now[0], sleep=sleep)
        assert len(got) == 12  # looped past the end twice


@pytest.mark.ros
def test_record_from_the_graph(tmp_path, node):
    out = tmp_path / "rec"
    proc = cli_proc("record", str(out), "--storage", "mcap", "--duration", "120")   # a limit; SIGINT ends it
    try:
        pubs = {t: node.create_publisher(Image, t, RELIABLE) for t in
                ("/camera/color/image_raw", "/camera/aligned_depth_to_color/image_raw")}
        extr = node.create_publisher(PoseStamped, "/camera/extrinsics", LATCHED)
        log = node.create_publisher(String, "/spatial_manip/instruction_log", RELIABLE)
        pose = PoseStamped()
        pose.header.frame_id = "base"
        pose.pose.position.x = 1.25
        pose.pose.orientation.w = 1.0
        extr.publish(pose)   # before the recorder subscribes: transient-local keeps it
        assert spin_until(node, lambda: all(p.get_subscription_count() for p in pubs.values())
                          and log.get_subscription_count(), 60, proc), proc.communicate(timeout=5)[0]
        sent = [m for _, t, m in camera_messages(n=3) if t in pubs]
        for m in sent:
            pubs["/camera/color/image_raw" if m.encoding == "rgb8" else "/camera/aligned_depth_to_color/image_raw"].publish(m)
            time.sleep(0.02)
        log.publish(String(data='{"event": "goal", "instruction": "pick the red box"}'))
        # every message has reached the recorder's readers before it is stopped (a fixed second
        # of spinning can end first on a loaded machine)
        for p in (*pubs.values(), log):
            assert p.wait_for_all_acked(Duration(seconds=30)), f"the recorder acknowledged not all of {p.topic_name}"
        spin_until(node, lambda: False, 1.0)
    finally:
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=20)[0]
    assert proc.returncode == 0, output
    assert (out / "metadata.yaml").exists()
    with BagReader(out) as r:
        assert r.topics["/camera/extrinsics"].latched
        msgs = list(r.messages())
    by_topic = {}
    for m in msgs:
        by_topic.setdefault(m.topic, []).append(m)
    assert len(by_topic["/camera/color/image_raw"]) == 3 and len(by_topic["/camera/aligned_depth_to_color/image_raw"]) == 3
    from rclpy.serialization import deserialize_message
    got = [deserialize_message(m.raw, Image) for m in by_topic["/camera/color/image_raw"]]
    want = [m for m in sent if m.encoding == "rgb8"]
    assert all(np.array_equal(image_to_array(a), image_to_array(b)) for a, b in zip(got, want))
    assert deserialize_message(by_topic["/camera/extrinsics"][0].raw, PoseStamped).pose.position.x == 1.25
    assert "pick the red box" in deserialize_message(by_topic["/spatial_manip/instruction_log"][0].raw, String).data


@pytest.mark.ros
def test_replay_into_another_process(tmp_path, node):
    msgs = camera_messages(n=5)
    with BagWriter(tmp_path / "b", "sqlite3") as w:
        w.add_topic("/camera/color/image_raw", "sensor_msgs/msg/Image")
        w.add_topic("/camera/aligned_depth_to_color/image_raw", "sensor_msgs/msg/Image")
        w.add_topic("/camera/color/camera_info", "sensor_msgs/msg/CameraInfo")
        w.add_topic("/camera/extrinsics", "geometry_msgs/msg/PoseStamped", latched=True)
        w.write("/camera/extrinsics", msgs[0][0] - 1, serialize_message(PoseStamped()))
        for t, topic, m in msgs:
            w.write(topic, t, serialize_message(m))
    from rosgraph_msgs.msg import Clock

    got, times, extr, clock = [], [], [], []
    node.create_subscription(Image, "/camera/color/image_raw", lambda m: (got.append(m), times.append(time.monotonic())), RELIABLE)
    node.create_subscription(PoseStamped, "/camera/extrinsics", extr.append, LATCHED)
    node.create_subscription(Clock, "/clock", lambda m: clock.append(m.clock.sec * 10**9 + m.clock.nanosec), RELIABLE)
    proc = cli_proc("replay", str(tmp_path / "b"), "--rate", "0.5", "--wait-subscribers", "10", "--clock")
    ok = spin_until(node, lambda: len(got) == 5 and extr and clock and clock[-1] == msgs[-1][0], 60, proc)  # start-up on a loaded machine
    spin_until(node, lambda: False, 0.2)
    output = proc.communicate(timeout=20)[0]
    assert ok, output
    assert proc.returncode == 0, output
    want = [m for _, t, m in msgs if t == "/camera/color/image_raw"]
    assert all(np.array_equal(image_to_array(a), image_to_array(b)) for a, b in zip(got, want))
    assert [m.header.stamp for m in got] == [m.header.stamp for m in want]
    # /clock is the recording's time, ticked before each message (the latched extrinsics first)
    assert clock == sorted(clock) and set(clock) <= {msgs[0][0] - 1} | {t for t, _, _ in msgs}
    assert clock[-1] == msgs[-1][0] and len(clock) >= len(msgs) - 2
    gaps = np.diff(times)      # recorded 1/30 s apart, played at half speed
    assert np.median(gaps) == pytest.approx(2 / 30, abs=0.03)


@pytest.mark.ros
def test_replay_realsense_sdk_recording(tmp_path, node):
    from spatial_manip.camera.synthetic import SyntheticConfig

    # written in a child process: pyrealsense2's recorder once crashed the pytest worker here (recordings.py)
    rec = build_recording_isolated(str(tmp_path / "rs.db3"), SyntheticConfig(n_frames=5, distinct_frames=2))
    got = {"color": [], "depth": []}
    node.create_subscription(Image, "/camera/color/image_raw", got["color"].append, RELIABLE)
    node.create_subscription(Image, "/camera/depth/image_rect_raw", got["depth"].append, RELIABLE)
    proc = cli_proc("replay", rec.path, "--rate", "4", "--wait-subscribers", "10")
    by_stamp = {round(f.stamp_ms * 1e6): f for f in rec.frames}

    def replayed(msgs):   # the recording's frames only: another graph on this machine may use these topics
        return [m for m in msgs if m.header.stamp.sec * 10**9 + m.header.stamp.nanosec in by_stamp]

    ok = spin_until(node, lambda: len(replayed(got["color"])) >= 5 and len(replayed(got["depth"])) >= 5, 60, proc)
    spin_until(node, lambda: False, 0.2)
    output = proc.communicate(timeout=20)[0]
    got = {k: replayed(v) for k, v in got.items()}
    # every frame: the replay waits for our acknowledgements before it exits (under load, the
    # last frame was lost when it did not); the missing frames are named, first or last
    missing = {k: [i for i, f in enumerate(rec.frames) if round(f.stamp_ms * 1e6) not in
                   {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in v}] for k, v in got.items()}
    assert ok and len(got["color"]) == len(got["depth"]) == 5, \
        f"{output}\nreceived color {len(got['color'])}, depth {len(got['depth'])}; missing frames {missing}"
    for m in got["depth"]:
        f = by_stamp[m.header.stamp.sec * 10**9 + m.header.stamp.nanosec]
        assert m.encoding == "16UC1"
        assert np.array_equal(image_to_array(m), np.rint(f.depth_raw * 0.25).astype(np.uint16))
    for m in got["color"]:
        f = by_stamp[m.header.stamp.sec * 10**9 + m.header.stamp.nanosec]
        assert m.encoding == "rgb8" and np.array_equal(image_to_array(m), f.rgb)


@pytest.mark.parametrize("case", ["garbage", "missing_topic", "truncated", "unknown_type"])
def test_replay_errors_name_bag_and_topic(tmp_path, capsys, case):
    bag = tmp_path / "b"
    with BagWriter(bag, "sqlite3") as w:
        w.add_topic("/camera/color/image_raw", "sensor_msgs/msg/Image")
        if case == "unknown_type":
            from spatial_manip.bags.typestore import project_typestore
            w._writer.add_connection("/odd", "spatial_manip_interfaces/msg/Scene", typestore=project_typestore())
        for t, topic, m in camera_messages(n=40):
            if topic == "/camera/color/image_raw":
                w.write(topic, t, serialize_message(m))
    args = ["replay", str(bag), "--rate", "1000"]
    if case == "garbage":
        bad = tmp_path / "garbage.db3"
        bad.write_bytes(os.urandom(4096))
        args[1], expect = str(bad), "garbage.db3"
    elif case == "missing_topic":
        args += ["--topics", "/joint_states"]
        expect = r"has no topic /joint_states"
    elif case == "truncated":
        db3 = next(bag.glob("*.db3"))
        cut = tmp_path / "cut.db3"
        cut.write_bytes(db3.read_bytes()[: int(db3.stat().st_size * 0.5)])
        args[1], expect = str(cut), "cut.db3"
    else:
        # a type the bag defines but this machine cannot import is refused up front
        from spatial_manip.bags import ros_types
        real = ros_types.importlib.import_module

        def fake(name, *a):
            if name.startswith("spatial_manip_interfaces"):
                raise ImportError(f"No module named {name!r}")
            return real(name, *a)
        ros_types.importlib.import_module = fake
        expect = r"topic /odd: message type spatial_manip_interfaces/msg/Scene is not installed"
    try:
        code = cli.main(args)
    finally:
        if case == "unknown_type":
            ros_types.importlib.import_module = real
    out = capsys.readouterr().out
    assert code != 0
    import re
    assert re.search(expect, out), out
    if case != "garbage":
        assert str(tmp_path) in out  # names the bag
