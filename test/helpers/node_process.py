"""Stopping a node started as a subprocess by a test, showing its log, and telling whether it
has joined the test's graph."""
import subprocess


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


def grasp_node_still_joining(res) -> bool:
    """grasp_node's reply says it has not yet had the test's frame, or the latched scene: a
    matched publisher does not mean a delivered message, and the scene can reach the node after
    the service is up and after the first frames."""
    return res.error_code == "NO_OBSERVATION" or "not in the latest scene" in res.message
