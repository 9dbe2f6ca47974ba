"""Faults a lab will hit while a goal runs, across real processes over real DDS: the arm's
server dies mid-motion, and the graph is stopped under a waiting client. Either way the client
gets a result within seconds, naming what happened."""
import dataclasses
import os
import signal
import threading
import time

import pytest

from ros_helpers import client_node, wait_for
from spatial_manip.bringup.goal_client import send_goal
from spatial_manip.bringup.graph import load_graph
from spatial_manip.bringup.launcher import Launcher

pytestmark = [pytest.mark.slow, pytest.mark.ros]
GOAL = "pick the leftmost book"


def _sim_graph(sim_required: bool):
    g = load_graph("sim")
    nodes = tuple(dataclasses.replace(n, required=sim_required) if n.name == "sim_node" else n for n in g.nodes)
    return dataclasses.replace(g, nodes=nodes)


class _KillSimMidMotion:
    """SIGKILL the simulator once the arm is really moving: after the goal's "moving" stage, as
    soon as /joint_states (which the simulator publishes) shows the joints leaving where they
    were. A fixed delay either lands before the arm takes the goal or after a short pick ends.
    The joints it measures from are the first it has once "moving" came: on a loaded machine the
    subscription may match only after that feedback."""

    def __init__(self, node, sim_pid: int):
        from sensor_msgs.msg import JointState

        self.sim_pid = sim_pid
        self.joints, self.at, self._armed, self._moving = None, None, None, False
        node.create_subscription(JointState, "/joint_states", self._on_joints, 10)

    def _on_joints(self, msg):
        self.joints = list(msg.position[:6])
        if self._moving and self._armed is None:
            self._armed = list(self.joints)
        if self._armed is not None and self.at is None and \
                max(abs(a - b) for a, b in zip(self.joints, self._armed)) > 0.02:
            os.kill(self.sim_pid, signal.SIGKILL)
            self.at = time.monotonic()

    def on_feedback(self, fb):
        if fb.stage == "moving" and not self._moving:
            self._moving = True
            if self.joints is not None:
                self._armed = list(self.joints)


@pytest.fixture
def graph_log(tmp_path):
    with open(tmp_path / "launch.log", "w") as f:
        yield f


def _send_once_ready(log, killed: dict, sim_pid: int):
    """Send the goal once the simulator serves the arm (a goal sent earlier fails to perceive)."""
    assert wait_for(lambda: "sim_node ready" in open(log.name).read(), 90), open(log.name).read()[-3000:]
    with client_node() as node:
        killer = _KillSimMidMotion(node, sim_pid)
        report = send_goal(node, GOAL, max_attempts=1, timeout_s=60, server_timeout_s=60,
                           on_feedback=killer.on_feedback)
    if killer.at is not None:
        killed["at"] = killer.at
    return report


def _run_and_kill_sim(graph_log, tmp_path, *, sim_required: bool, grace_s: float, arm_lost_after_s: float):
    """Start the sim graph, send the goal, SIGKILL the simulator in the middle of the first
    motion, and return (the goal's report, when the simulator was killed)."""
    # the simulator's own segmentation: this tests losing the arm, not reading a noisy frame
    planner = {"trace_dir": str(tmp_path / "traces"), "arm_lost_after_s": arm_lost_after_s, "segmenter": "ground_truth"}
    launcher = Launcher(_sim_graph(sim_required), out=graph_log, grace_s=grace_s,
                        params={"planner_node": planner, "sim_node": {"catalogue": "episode"}})
    launcher.start()
    waiter = threading.Thread(target=launcher.wait, daemon=True)
    waiter.start()
    killed = {}
    try:
        report = _send_once_ready(graph_log, killed, launcher.pid_of("sim_node"))
    finally:
        launcher.request_stop()
        waiter.join(20)
    assert "at" in killed, f"the arm never moved during the goal ({report.status}: {report.result})"
    return report, killed["at"]


def test_losing_the_arm_server_mid_motion_is_motion_failed_within_seconds(graph_log, tmp_path):
    report, killed_at = _run_and_kill_sim(graph_log, tmp_path, sim_required=False, grace_s=3.0, arm_lost_after_s=3.0)
    r = report.result
    assert r is not None and r.error_code == "MOTION_FAILED", (report.status, r)
    assert "arm server lost" in r.message
    assert time.monotonic() - killed_at < 15.0


def test_stopping_the_graph_under_a_running_goal_still_answers_the_client(graph_log, tmp_path):
    # the lost-arm check is slowed down here, so only the graph's shutdown can end the goal
    report, killed_at = _run_and_kill_sim(graph_log, tmp_path, sim_required=True, grace_s=5.0, arm_lost_after_s=30.0)
    r = report.result
    assert r is not None, f"the client got no result ({report.status}): " + open(graph_log.name).read()[-3000:]
    assert not r.success and "stopping" in r.message, r.message    # the planner answered before exiting
    assert time.monotonic() - killed_at < 15.0
