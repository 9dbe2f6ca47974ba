"""arm_node over the REAL ur_rtde library loses its controller mid-motion and gets it back.

The emulator process (`spatial-manip ur-emulator`) is SIGKILLed during a move and started again,
like a controller that rebooted or a cable pulled and replugged. arm_node must report the loss,
keep reconnecting with bounded back-off, say so on /spatial_manip/arm_status and in the results
of goals sent meanwhile, resume /joint_states, never move by itself, and serve the next goal.
ur_rtde's ports are fixed: this module starts its own emulator and must not overlap with
test_arm_node_ur_rtde.py (pytest runs modules one after the other).
"""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("rtde_control")

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from emulator_ports import emu_state, ports_free, start_emulator  # noqa: E402
from ros_helpers import arm_motion_client  # noqa: E402
from spatial_manip.nodes import convert  # noqa: E402
from spatial_manip_interfaces.action import ArmMotion  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.ros]


def down_pose(x, y, z):
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = [x, y, z]
    return convert.pose_msg_from_matrix(T)


def wait_for(cond, timeout_s, step=0.02):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def run_goal(client, goal, on_feedback=None, timeout_s=30.0):
    done, phases = threading.Event(), []

    def fb(msg):
        phases.append(msg.feedback.phase)
        if on_feedback:
            on_feedback(msg.feedback.phase)

    fut = client.send_goal_async(goal, feedback_callback=fb)
    assert wait_for(fut.done, 10), "goal not answered"
    handle = fut.result()
    assert handle.accepted
    res = handle.get_result_async()
    res.add_done_callback(lambda _: done.set())
    assert done.wait(timeout_s), "no result in time"
    return res.result().result, phases


@pytest.fixture
def stack():
    if not ports_free():
        pytest.skip("a UR controller or emulator already serves 30004/30003/29999/63352 here")
    procs = {"emu": start_emulator()}
    procs["node"] = subprocess.Popen(
        [sys.executable, "-m", "spatial_manip.nodes.arm_node", "--ros-args", "-p", "arm.backend:=ur_rtde",
         "-p", "arm.host:=127.0.0.1", "-p", "reconnect_max_delay_s:=1.0"],
        env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        with arm_motion_client("arm_reconnect_test", procs["node"], discovery_s=1.0) as (node, client):
            yield node, client, procs
    finally:
        for p in (procs["node"], procs["emu"]):  # node first: its stopScript needs a live controller
            p.send_signal(signal.SIGINT)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def test_controller_lost_mid_motion_then_back(stack):
    node, client, procs = stack
    joints, status = [], []
    node.create_subscription(JointState, "/joint_states", lambda m: joints.append(time.monotonic()), 10)
    node.create_subscription(String, "/spatial_manip/arm_status", lambda m: status.append(m.data), 10)
    res, _ = run_goal(client, ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME))
    assert res.success, res.message

    goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_WAYPOINTS, speed_scale=0.1)
    goal.waypoints = [down_pose(0.5, -0.3, 0.3)]
    killed = {}

    def kill_while_moving():
        if wait_for(lambda: emu_state()["moving"], 5.0, step=0.01):
            killed["q"] = emu_state()["q"]
            procs["emu"].kill()  # SIGKILL: the controller vanishes mid-move

    def kill(phase):
        if phase == "waypoint" and not killed:
            killed["started"] = True
            threading.Thread(target=kill_while_moving, daemon=True).start()

    res, _ = run_goal(client, goal, on_feedback=kill)
    assert "q" in killed, "the emulator never reported the arm moving"
    assert not res.success and res.error_code == "MOTION_FAILED"
    assert "connection" in res.message, res.message
    procs["emu"].wait(5)

    # while it is away: goals fail at once, naming the state; /joint_states is silent (no stale joints)
    t0 = time.monotonic()
    res, phases = run_goal(client, ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME))
    assert res.error_code == "MOTION_FAILED" and "reconnecting" in res.message, res.message
    assert phases == [] and time.monotonic() - t0 < 8.0
    quiet_from = time.monotonic()
    time.sleep(1.0)
    assert not [t for t in joints if t > quiet_from + 0.2]
    assert any("reconnecting" in s for s in status), status

    procs["emu"] = start_emulator()  # the controller is back, the arm at its (home) start pose
    q_back = emu_state()["q"]
    back = time.monotonic()
    assert wait_for(lambda: [t for t in joints if t > back], 10.0), f"/joint_states did not resume: {status}"
    assert wait_for(lambda: status and "lost" not in status[-1], 5.0), status  # "safety mode 1": normal
    time.sleep(1.0)
    state = emu_state()  # reconnected: nothing was re-sent, the arm did not move by itself
    assert not state["moving"]
    np.testing.assert_allclose(state["q"], q_back, atol=1e-9)

    # the next goal works without restarting arm_node, gripper included: its socket is re-opened
    # and the restarted (reset) gripper activated by this goal, not before it
    pick = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_PICK, speed_scale=1.0)
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = [0.5, 0.0, 0.05]
    pick.target = convert.pose_stamped(T, "base")
    res, phases = run_goal(client, pick)
    assert res.success and res.object_held, res.message
    # the fingers open during the transit to the pre-grasp, awaited after it (c5372d9)
    assert phases[:2] == ["pre_grasp", "open"]
