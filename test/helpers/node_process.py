"""Stopping a node started as a subprocess by a test, and showing its log."""
import subprocess


def stop_and_show_log(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    print(out)  # the node's log, shown when a test fails
