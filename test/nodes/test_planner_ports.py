"""planner_ports' conversions between the agent's types and the messages (no DDS needed):
grasp_node's GraspArray becomes one GraspGroup, in order, in the frame its header names; and its
wait for an answer, which a cancel or a lost arm ends early."""
import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

pytest.importorskip("spatial_manip_interfaces")

from spatial_manip_interfaces.msg import Grasp as GraspMsg, GraspArray  # noqa: E402

from spatial_manip.transforms import make_transform  # noqa: E402
from spatial_manip.nodes.convert import pose_msg_from_matrix  # noqa: E402
from spatial_manip.errors import ArmLostError  # noqa: E402
from spatial_manip.nodes.planner_ports import _grasp_group, _wait_unless_canceled  # noqa: E402


def _array(poses, frame_id="base") -> GraspArray:
    msg = GraspArray()
    msg.header.frame_id = frame_id
    msg.grasps = [GraspMsg(score=0.9 - 0.1 * k, width=0.04 + 0.01 * k, height=0.02, depth=0.01 * k,
                           pose=pose_msg_from_matrix(T), object_id=k, object_name="book_1") for k, T in enumerate(poses)]
    return msg


def test_a_grasp_array_becomes_one_group_in_order_in_its_frame():
    poses = [make_transform(R, [0.5, 0.1 * k, 0.2]) for k, R in enumerate(Rotation.random(3, random_state=4).as_matrix())]
    group = _grasp_group(_array(poses))
    assert len(group) == 3 and group.frame_id == "base"
    assert np.allclose(group.matrices(), poses, atol=1e-6)
    assert np.allclose(group.scores, [0.9, 0.8, 0.7]) and np.allclose(group.widths, [0.04, 0.05, 0.06])
    assert np.allclose(group.depths, [0.0, 0.01, 0.02]) and group.object_ids.tolist() == [0, 1, 2]
    # the agent turns each into a TCP pose; the float32 fields arrive as the message carried them
    assert group[1].width == pytest.approx(0.05, abs=1e-7)


def test_an_empty_or_unframed_array_keeps_its_frame_or_is_base():
    assert len(_grasp_group(_array([]))) == 0
    assert _grasp_group(_array([np.eye(4)], frame_id="")).frame_id == "base"
    assert _grasp_group(_array([np.eye(4)], frame_id="camera_color_optical_frame")).frame_id == \
        "camera_color_optical_frame"


def test_the_answer_wait_returns_the_answer_or_none_at_a_cancel_or_the_timeout():
    answered = Future()
    answered.set_result("accepted")
    assert _wait_unless_canceled(answered, 5.0, threading.Event()) == "accepted"
    canceled = threading.Event()
    canceled.set()
    assert _wait_unless_canceled(Future(), 5.0, canceled) is None
    assert _wait_unless_canceled(Future(), 0.05, threading.Event()) is None


def test_a_lost_arm_ends_the_answer_wait_with_its_own_error_not_the_timeout():
    # under load the arm server may die before it answers: its stalled pose stream must be the
    # message, within the liveness check's time, not "did not answer" at the end of the wait
    calls = []

    def lost_after_three_polls():
        calls.append(1)
        if len(calls) == 3:
            raise ArmLostError("arm server lost: no TCP pose for 3 s")

    start = time.monotonic()
    with pytest.raises(ArmLostError, match="arm server lost"):
        _wait_unless_canceled(Future(), 30.0, threading.Event(), check=lost_after_three_polls)
    assert time.monotonic() - start < 5.0 and len(calls) == 3
