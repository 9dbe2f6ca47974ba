"""sim_node stopped by Ctrl-C mid-motion, as a real process over DDS: the goal's client gets its
result (CANCELED) before the node exits, and the node exits cleanly. rclpy's own signal handler
used to shut the node's context down first, so the goal's end could not be published."""
import signal
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from machine_load import scaled_by_load  # noqa: E402
from node_process import start_sim_node, stop  # noqa: E402
from ros_helpers import arm_motion_client  # noqa: E402
from spatial_manip_interfaces.action import ArmMotion  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.ros]

# MOTION_HOME from where the sim arm starts to its stowed pose at this speed lasts several seconds
# of wall time even on a quiet machine (6.5 s measured): the interrupt lands inside it
SLOW = 0.05


def _done(future, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.02)
    return future.done()


def test_ctrl_c_mid_motion_answers_the_goal_canceled_and_exits_cleanly():
    proc = start_sim_node("width:=160", "height:=120", "camera_rate_hz:=2.0")
    proc.stderr = proc.stdout       # arm_motion_client shows it when the node serves nothing
    try:
        with arm_motion_client("sim_stop_test_client", proc, discovery_s=2.0) as (_node, client):
            moving = []
            sent = client.send_goal_async(ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME, speed_scale=SLOW),
                                          feedback_callback=moving.append)
            assert _done(sent, scaled_by_load(10.0)) and sent.result().accepted
            result = sent.result().get_result_async()
            deadline = time.monotonic() + scaled_by_load(10.0)
            while not moving and time.monotonic() < deadline:
                time.sleep(0.02)
            assert moving and not result.done(), "the motion should still be running when Ctrl-C lands"
            proc.send_signal(signal.SIGINT)
            assert _done(result, scaled_by_load(10.0)), "the goal's client got no result before sim_node exited"
            assert result.result().result.error_code == "CANCELED"
        assert proc.wait(scaled_by_load(20.0)) == 0
    finally:
        if proc.poll() is None:
            print(stop(proc))
        else:
            print(proc.stdout.read())
