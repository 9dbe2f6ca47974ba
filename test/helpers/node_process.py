"""Stopping a node started as a subprocess by a test, and showing its log."""
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
