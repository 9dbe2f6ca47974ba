"""rosbag2 write/read with the rosbags library: pixel-exact round trips and clear errors."""

import numpy as np
import pytest
from rclpy.serialization import serialize_message

from spatial_manip.bags.io import BagError, BagReader, BagTopicError, BagWriter
from spatial_manip.nodes.convert import image_to_array

from bag_fixtures import camera_messages

TYPES = {"/camera/color/image_raw": "sensor_msgs/msg/Image",
         "/camera/aligned_depth_to_color/image_raw": "sensor_msgs/msg/Image",
         "/camera/color/camera_info": "sensor_msgs/msg/CameraInfo",
         "/spatial_manip/execute_instruction/_action/feedback":
             "spatial_manip_interfaces/action/ExecuteInstruction_FeedbackMessage"}


def write_bag(path, storage, msgs):
    """Write and return the CDR bytes written (serialising twice may differ in padding bytes)."""
    raws = []
    with BagWriter(path, storage) as w:
        for topic, msgtype in TYPES.items():
            w.add_topic(topic, msgtype, latched=topic.endswith("camera_info"))
        for t, topic, msg in msgs:
            raws.append(serialize_message(msg))
            w.write(topic, t, raws[-1])
    return raws


def feedback_message():
    from spatial_manip_interfaces.action import ExecuteInstruction

    m = ExecuteInstruction.Impl.FeedbackMessage()
    m.goal_id.uuid = np.arange(16, dtype=np.uint8)
    m.feedback.stage, m.feedback.detail, m.feedback.progress, m.feedback.attempt = "grasping", "top", 0.5, 2
    return m


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_round_trip_is_pixel_exact(tmp_path, storage):
    msgs = camera_messages()
    msgs.append((msgs[-1][0] + 5, "/spatial_manip/execute_instruction/_action/feedback", feedback_message()))
    raws = write_bag(tmp_path / "bag", storage, msgs)
    assert (tmp_path / "bag" / "metadata.yaml").exists()
    with BagReader(tmp_path / "bag") as r:
        assert r.topics["/camera/color/image_raw"].count == 4
        assert r.topics["/camera/color/camera_info"].latched
        got = list(r.messages())
        assert [m.t_ns for m in got] == [t for t, _, _ in msgs]
        for m, raw, (_, topic, orig) in zip(got, raws, msgs):
            assert m.topic == topic
            assert m.raw == raw
            if m.msgtype == "sensor_msgs/msg/Image":
                assert np.array_equal(image_to_array(r.deserialize(m)), image_to_array(orig))
        fb = r.deserialize(got[-1])
        assert fb.feedback.stage == "grasping" and fb.feedback.attempt == 2
        with pytest.raises(BagTopicError, match=r"bag .*bag has no topic /joint_states"):
            list(r.messages(["/joint_states"]))


def test_garbage_bag_names_the_bag(tmp_path):
    bad = tmp_path / "garbage.db3"
    bad.write_bytes(b"not a bag at all" * 100)
    with pytest.raises(BagError, match="garbage.db3"):
        BagReader(bad)
    with pytest.raises(BagError, match="does not exist"):
        BagReader(tmp_path / "nothing")
    (tmp_path / "folder").mkdir()
    with pytest.raises(BagError, match="folder"):
        BagReader(tmp_path / "folder")


def test_truncated_bag_error_names_bag_and_topic(tmp_path):
    write_bag(tmp_path / "bag", "sqlite3", camera_messages(n=30))
    db3 = next((tmp_path / "bag").glob("*.db3"))
    cut = tmp_path / "cut.db3"
    data = db3.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])
    with pytest.raises(BagError, match=r"cut.db3.*(truncated|not a readable).*") as exc:
        with BagReader(cut) as r:
            for _ in r.messages():
                pass
    assert "cut.db3" in str(exc.value)


def test_unknown_type_is_reported(tmp_path):
    with BagWriter(tmp_path / "bag", "mcap") as w:
        w.add_topic("/mystery", "nobody_msgs/msg/Mystery")
        w.write("/mystery", 1, b"\x00\x01\x00\x00\x05\x00\x00\x00")
    # no definition stored and none known: the bag is refused at open, naming it and the type
    with pytest.raises(BagError, match=r"bag .*bag .*nobody_msgs/msg/Mystery"):
        BagReader(tmp_path / "bag")
