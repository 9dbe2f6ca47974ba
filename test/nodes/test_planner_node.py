"""The planner node across real processes and real DDS: goals from a real action client to
the node started by the pip-only launcher."""
import os
import signal
import subprocess

import pytest

from machine_load import scaled_by_load
from ros_helpers import client_node, launched, launched_pid, private_domain_id, wait_for
from spatial_manip.bringup.goal_client import send_goal

pytestmark = pytest.mark.ros
# long enough that a cancel or a second goal sent while a goal perceives lands within it on a loaded
# machine (it was 1.5 s: a cancel 0.5 s in left 1 s for the request to cross processes)
OBS_TIMEOUT_S = 4.0
RETRY_S = 1.0     # the look's second wait for a slow camera (the default 5 s would only lengthen these tests)


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    log = tmp_path_factory.mktemp("launch") / "launch.log"
    traces = tmp_path_factory.mktemp("traces")
    with launched("planner", f"planner_node.observation_timeout_s={OBS_TIMEOUT_S}",
                  f"planner_node.observation_retry_s={RETRY_S}",
                  f"planner_node.trace_dir={traces}", log_path=log) as proc:
        with client_node() as node:
            yield node, proc, log


@pytest.mark.parametrize("instruction,kind,attempts,expect", [
    ("", 0, 1, "empty"),
    ("   \n\t ", 0, 1, "empty"),
    ("pick " + "the book " * 200, 0, 1, "limit is 1000"),
    ("pick the book\x07", 0, 1, "control"),
    ("pick the book", 9, 1, "unknown task kind"),
    ("pick the book", 1, 11, "max_attempts"),
    ("pick the book", 1, -3, "max_attempts"),
])
def test_invalid_goals_get_invalid_goal(graph, instruction, kind, attempts, expect):
    node, _, _ = graph
    report = send_goal(node, instruction, kind=kind, max_attempts=attempts, timeout_s=15)
    assert report.status == "aborted"
    assert report.result.error_code == "INVALID_GOAL"
    assert expect in report.result.message


def test_no_camera_gives_no_observation_in_time_with_feedback(graph):
    """No frame in the look's wait: it waits once more (observation_retry_s), saying so, then gives up."""
    node, _, _ = graph
    report = send_goal(node, "pick the leftmost book", timeout_s=20)
    assert report.result.error_code == "NO_OBSERVATION"
    assert "colour image" in report.result.message
    assert OBS_TIMEOUT_S + RETRY_S - 0.1 <= report.elapsed_s < OBS_TIMEOUT_S + RETRY_S + 6.0   # + round trips under load
    assert [f.stage for f in report.feedback][:2] == ["perceiving", "perceiving"]
    assert f"waiting once more, up to {RETRY_S:g} s" in report.feedback[1].detail
    assert os.path.isfile(report.result.trace_path)


def test_a_goal_with_only_the_instruction_uses_the_defaults(graph):
    """What `ros2 action send_goal ... "{instruction: '...'}"` sends: every other field at its
    message default (task_kind 0, dry_run false, max_attempts 0) means "the default"."""
    from rclpy.action import ActionClient

    from spatial_manip.bringup.goal_client import wait_future
    from spatial_manip_interfaces.action import ExecuteInstruction

    node, _, _ = graph
    client = ActionClient(node, ExecuteInstruction, "/spatial_manip/execute_instruction")
    try:
        assert client.wait_for_server(timeout_sec=20)
        handle = wait_future(client.send_goal_async(ExecuteInstruction.Goal(instruction="pick the leftmost book")), 10)
        result = wait_future(handle.get_result_async(), 15).result
    finally:
        client.destroy()
    assert result.error_code == "NO_OBSERVATION", result.message   # not INVALID_GOAL: it was accepted and ran
    assert result.attempts == 1       # NO_OBSERVATION is not retried, whatever the default


def test_cancel_is_honoured(graph):
    node, proc, log = graph
    # lengthen the wait so the cancel lands while the goal is perceiving
    report = send_goal(node, "pick the leftmost book", timeout_s=15, cancel_after_s=0.5)
    assert report.status == "canceled", report.result
    assert report.result.error_code == "CANCELED"
    assert report.elapsed_s < OBS_TIMEOUT_S, "the cancel did not end the goal before its observation timeout"


def test_second_goal_is_refused_while_one_runs(graph):
    import threading

    node, _, _ = graph
    first, perceiving = {}, threading.Event()
    t = threading.Thread(target=lambda: first.update(r=send_goal(node, "pick the leftmost book", timeout_s=15,
                                                                 on_feedback=lambda fb: perceiving.set())))
    t.start()
    # the first goal runs once its feedback comes (a fixed sleep could send the second before it)
    assert perceiving.wait(15), "the first goal sent no feedback"
    second = send_goal(node, "pick the rightmost book", timeout_s=15)
    t.join()
    assert second.result.error_code == "BUSY"
    assert "another instruction is running" in second.result.message
    assert first["r"].result.error_code == "NO_OBSERVATION"


def _own_graph_env() -> dict:
    """The environment of a test that starts a planner graph of its own: a private ROS domain, so
    the module's `graph` (still up until the module ends) or another run's planner never serves
    its goals (session 32, load 30: the Ctrl-C test's goal met two action servers)."""
    return {**os.environ, "ROS_DOMAIN_ID": str(private_domain_id())}


def test_killing_a_required_node_stops_the_launcher_and_names_it(tmp_path):
    log = tmp_path / "launch.log"
    with launched("planner", log_path=log, env=_own_graph_env()) as proc:
        assert wait_for(lambda: "ready" in log.read_text(), scaled_by_load(20)), log.read_text()
        os.kill(launched_pid(log.read_text(), "planner_node"), signal.SIGKILL)
        assert proc.wait(15) != 0
    text = log.read_text()
    assert "required node planner_node died" in text


def test_ctrl_c_on_the_goal_command_cancels_the_goal_and_waits_for_its_result(tmp_path):
    """Ctrl-C on `spatial-manip goal` cancels the running goal and exits once the server has
    answered CANCELED, with no traceback (the arm is stopped before the command returns)."""
    import sys

    log, env = tmp_path / "launch.log", _own_graph_env()
    with launched("planner", "planner_node.observation_timeout_s=30", f"planner_node.trace_dir={tmp_path}",
                  log_path=log, env=env):
        assert wait_for(lambda: "ready" in log.read_text(), scaled_by_load(30)), log.read_text()
        goal = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "goal", "pick the leftmost book"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        out = []
        assert wait_for(lambda: _read_line(goal, out) and "perceiving" in "".join(out), scaled_by_load(30)), out
        goal.send_signal(signal.SIGINT)
        stdout, stderr = goal.communicate(timeout=scaled_by_load(30))
    text = "".join(out) + stdout
    assert goal.returncode == 130, (text, stderr)
    assert "canceling the goal" in text and "Traceback" not in stderr
    assert "the goal ended canceled (CANCELED)" in stderr


def _read_line(proc, out: list) -> bool:
    line = proc.stdout.readline()
    out.append(line)
    return bool(line)
