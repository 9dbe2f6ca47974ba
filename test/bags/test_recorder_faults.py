"""The recorder loses nothing: a latched topic whose publisher appears late, a SIGKILLed recorder
(repaired with `spatial-manip bag-repair`, read back with the rosbags library), SIGTERM.
Real rclpy/DDS across processes."""
import signal
import subprocess
import sys
import time

import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from std_msgs.msg import String

from ros_helpers import plain_node
from spatial_manip import cli
from spatial_manip.bags.io import BagError, BagReader

pytestmark = [pytest.mark.slow, pytest.mark.ros]
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
TOPIC = "/test_recorder/count"


@pytest.fixture
def node():
    with plain_node("recorder_fault_test") as n:
        yield n


def spin_for(node, seconds, cond=lambda: False):
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    return cond()


def record(out, *topics, storage="sqlite3"):
    proc = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "record", str(out), "--storage", storage,
                             "--flush-period-s", "0.5", "--topics", *topics],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = ""
    while "topics into" not in seen.rpartition("\n")[0][-200:]:  # log lines may come first
        line = proc.stdout.readline()
        assert line, seen + proc.communicate(timeout=10)[0]
        seen += line
    return proc


def wait_recorder_subscribed(node, pub, proc, timeout_s=15):
    assert spin_for(node, timeout_s, lambda: pub.get_subscription_count() > 0 or proc.poll() is not None)
    assert proc.poll() is None, proc.communicate(timeout=5)[0]


def assert_recorder_has_them(pub, timeout_s=30):
    """Every message published has reached the recorder's reader: a matched publisher does not
    mean a delivered message, and a fixed 1-2 s wait can end before they came on a loaded machine."""
    assert pub.wait_for_all_acked(Duration(seconds=timeout_s)), f"the recorder acknowledged not all within {timeout_s} s"


def test_latched_topic_published_before_the_recorder_saw_its_publisher(tmp_path, node):
    """The field failure: the planner's transient-local subscription made /camera/extrinsics
    visible first, the recorder subscribed volatile, and the calibration publisher's one
    message, sent before the recorder matched it, never reached the bag."""
    node.create_subscription(PoseStamped, "/camera/extrinsics", lambda m: None, LATCHED)  # the planner
    out = tmp_path / "rec"
    proc = record(out, "/camera/extrinsics", "/camera/color/image_raw")
    try:
        spin_for(node, 2.0)  # the recorder has seen the topic name (through the subscriber) by now
        extr = node.create_publisher(PoseStamped, "/camera/extrinsics", LATCHED)
        pose = PoseStamped()
        pose.header.frame_id = "base"
        pose.pose.position.x = 0.75
        pose.pose.orientation.w = 1.0
        extr.publish(pose)  # at once: before any recorder could have matched this publisher
        spin_for(node, 15, lambda: any(i.node_name == "recorder_node" and
                                       i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                       for i in node.get_subscriptions_info_by_topic("/camera/extrinsics")))
        spin_for(node, 1.0)
    finally:
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=20)[0]
    assert proc.returncode == 0, output
    with BagReader(out) as r:
        assert "/camera/extrinsics" in r.topics, output
        assert r.topics["/camera/extrinsics"].latched
        got = [deserialize_message(m.raw, PoseStamped) for m in r.messages(["/camera/extrinsics"])]
    assert len(got) == 1 and got[0].pose.position.x == 0.75  # once: the re-subscription's replay is dropped
    # the planner cannot re-plan without images: the summary says so, by name
    assert "warning: the planner needs /camera/color/image_raw" in output, output


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_sigkilled_recording_is_repaired_with_every_message(tmp_path, node, storage):
    out = tmp_path / "rec"
    pub = node.create_publisher(String, TOPIC, RELIABLE)
    extr = node.create_publisher(PoseStamped, "/camera/extrinsics", LATCHED)
    extr.publish(PoseStamped())
    proc = record(out, TOPIC, "/camera/extrinsics", storage=storage)
    try:
        wait_recorder_subscribed(node, pub, proc)
        for i in range(60):
            pub.publish(String(data=f"message {i}"))
            spin_for(node, 0.01)
        assert_recorder_has_them(pub)
        spin_for(node, 2.0)  # > the 0.5 s flush period: everything is on disk
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
    assert not (out / "metadata.yaml").exists()  # it died before finishing the bag
    storage_file = next(out.glob("*.db3" if storage == "sqlite3" else "*.mcap"))
    with pytest.raises(BagError):  # as left, not a bag `ros2 bag play` or our reader opens
        with BagReader(out) as r:
            list(r.messages())

    assert cli.main(["bag-repair", str(out), "--out", str(tmp_path / "fixed")]) == 0

    from rosbags.highlevel import AnyReader  # read back with the library itself, not our wrapper
    from spatial_manip.bags.typestore import project_typestore
    with AnyReader([tmp_path / "fixed"], default_typestore=project_typestore()) as r:
        conns = {c.topic: c for c in r.connections}
        assert conns["/camera/extrinsics"].ext.offered_qos_profiles[0].durability.name == "TRANSIENT_LOCAL"
        texts = [r.deserialize(raw, c.msgtype).data for c, _, raw in r.messages([conns[TOPIC]])]
        assert sum(1 for _ in r.messages([conns["/camera/extrinsics"]])) == 1
    assert texts == [f"message {i}" for i in range(60)]
    assert storage_file.stat().st_size > 0 and not (out / "metadata.yaml").exists()  # the source left as it was


def test_sigterm_finishes_the_bag_without_a_traceback(tmp_path, node):
    out = tmp_path / "rec"
    pub = node.create_publisher(String, TOPIC, RELIABLE)
    proc = record(out, TOPIC, storage="mcap")
    try:
        wait_recorder_subscribed(node, pub, proc)
        for i in range(10):
            pub.publish(String(data=str(i)))
        assert_recorder_has_them(pub)
        spin_for(node, 1.0)
    finally:
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=20)[0]
    assert proc.returncode == 0 and "Traceback" not in output, output
    assert f"      10  {TOPIC}" in output, output
    with BagReader(out) as r:  # finished: metadata.yaml and the MCAP footer are there
        assert [m.raw for m in r.messages()] and r.topics[TOPIC].count == 10


def test_bag_repair_names_what_it_cannot_read(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["bag-repair", str(tmp_path / "empty")]) == 2
    assert "expected .db3 or .mcap files" in capsys.readouterr().err
    bad = tmp_path / "x.mcap"
    bad.write_bytes(b"not an mcap at all")
    assert cli.main(["bag-repair", str(bad)]) == 2
    assert "does not start with the MCAP magic" in capsys.readouterr().err
