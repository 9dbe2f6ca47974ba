"""Starting sim_node as a subprocess for a test, stopping a node started so, showing its log,
and telling whether it has joined the test's graph."""
import contextlib
import subprocess
import sys


def stop(proc: subprocess.Popen) -> str:
    """Terminate the node (kill it after 10 s) and return its log."""
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def stop_and_show_log(proc: subprocess.Popen) -> None:
    print(stop(proc))  # the node's log, shown when a test fails


def start_sim_node(*params: str, log=None, env=None) -> subprocess.Popen:
    """`python -m spatial_manip.nodes.sim_node` with each of `params` ("name:=value") as a ROS
    parameter; its output goes to `log` (an open file: what a test reads after the node exits)
    or to a pipe that `stop` reads."""
    args = [a for p in params for a in ("-p", p)]
    return subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.sim_node", "--ros-args", *args],
                            stdout=log or subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


@contextlib.contextmanager
def sim_node(*params: str, env=None):
    """start_sim_node for the block; stopped after it, its log shown (pytest prints it when the
    test fails)."""
    proc = start_sim_node(*params, env=env)
    try:
        yield proc
    finally:
        stop_and_show_log(proc)


def grasp_node_still_joining(res) -> bool:
    """grasp_node's reply says it has not yet had the test's frame, or the latched scene: a
    matched publisher does not mean a delivered message, and the scene can reach the node after
    the service is up and after the first frames."""
    return res.error_code == "NO_OBSERVATION" or "not in the latest scene" in res.message
