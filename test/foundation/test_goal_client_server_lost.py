"""`spatial-manip goal` against an ExecuteInstruction server that vanishes mid-goal (SIGKILL, so
DDS keeps it in the graph for its 20 s lease): the client says so within seconds, and the
command prints one line and exits 2. A live server that is merely slow is never taken for lost."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from ros_helpers import client_node
from spatial_manip.bringup import goal_cli, goal_client

pytestmark = pytest.mark.ros

# an ExecuteInstruction server whose goals run until the process is killed
SERVER = textwrap.dedent("""
    import sys, threading, rclpy
    from rclpy.action import ActionServer, CancelResponse
    from rclpy.executors import MultiThreadedExecutor
    from spatial_manip_interfaces.action import ExecuteInstruction
    rclpy.init()
    node = rclpy.create_node("lost_server_test")
    canceled = []
    def execute(goal_handle):
        goal_handle.publish_feedback(ExecuteInstruction.Feedback(stage="perceiving"))
        threading.Event().wait(float(sys.argv[2]))
        goal_handle.succeed()
        return ExecuteInstruction.Result(success=True, message=f"canceled {len(canceled)}")
    def on_cancel(goal_handle):
        canceled.append(goal_handle)
        return CancelResponse.ACCEPT
    ActionServer(node, ExecuteInstruction, sys.argv[1], execute, cancel_callback=on_cancel)
    print("up", flush=True)
    executor = MultiThreadedExecutor(num_threads=2)
    executor.add_node(node)
    executor.spin()
""")


@pytest.fixture
def server():
    """Start a server on an action name of its own; yield (name, start(goal_s) -> Popen)."""
    name, procs = f"/h3_test_{uuid.uuid4().hex[:8]}/execute", []

    def start(goal_s: float) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", SERVER, name, str(goal_s)], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "up"
        return proc

    yield name, start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_server_killed_mid_goal_is_noticed_within_seconds(server, monkeypatch):
    monkeypatch.setattr(goal_client, "SERVER_LOST_S", 3.0)
    name, start = server
    proc = start(goal_s=600)
    seen = []

    def kill_on_feedback(_fb):
        if not seen:
            seen.append(time.monotonic())
            os.kill(proc.pid, signal.SIGKILL)

    with client_node() as node:
        report = goal_client.send_goal(node, "pick the book", timeout_s=120, server_timeout_s=20,
                                       on_feedback=kill_on_feedback, action_name=name)
    assert seen, "the server sent no feedback"
    assert report.accepted and report.status == "server_lost", (report.status, report.error)
    noticed_s = time.monotonic() - seen[0]
    assert noticed_s < goal_client.SERVER_LOST_S + 5.0, noticed_s
    assert "stopped answering" in report.error and "planner_node" in report.error


def test_a_live_server_is_not_lost_and_its_goals_are_not_canceled_by_the_watch(server, monkeypatch):
    # 3 s (was 2): a loaded machine can starve the server's process of the CPU for a second or two
    monkeypatch.setattr(goal_client, "SERVER_LOST_S", 3.0)
    name, start = server
    start(goal_s=6.0)     # longer than the watch's limit, with no feedback meanwhile: only probes answer
    with client_node() as node:
        report = goal_client.send_goal(node, "pick the book", timeout_s=60, server_timeout_s=20, action_name=name)
    assert report.status == "succeeded", (report.status, report.error)
    assert report.result.message == "canceled 0"      # the probes named no goal of the server's


def test_the_goal_command_prints_one_line_and_exits_2_when_the_server_is_lost(monkeypatch, capsys):
    lost = goal_client.GoalReport(accepted=True, status="server_lost",
                                  error="the action server stopped answering 6 s ago (...)")
    monkeypatch.setattr(goal_cli, "send_goal", lambda *a, **kw: lost)
    args = goal_cli.argparse.Namespace(instruction="pick the book", kind="auto", dry_run=False, attempts=0,
                                       timeout=180.0, json=False, server_timeout=20.0, namespace="")
    assert goal_cli.run(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == "spatial-manip goal: server_lost: the action server stopped answering 6 s ago (...)"
