"""Helpers for cross-process tests: an rclpy client node spun in a background thread, and
a graph started by the pip-only launcher in its own process."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time


@contextlib.contextmanager
def client_node(name: str = "test_client"):
    import rclpy
    from rclpy.executors import MultiThreadedExecutor

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node(name, context=ctx)
    ex = MultiThreadedExecutor(num_threads=2, context=ctx)
    ex.add_node(node)
    t = threading.Thread(target=ex.spin, daemon=True)
    t.start()
    try:
        yield node
    finally:
        ex.shutdown()
        t.join(timeout=5)
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)


@contextlib.contextmanager
def launched(graph: str, *overrides: str, log_path=None):
    """Start `spatial-manip launch GRAPH --set ...` and stop it with Ctrl-C afterwards."""
    cmd = [sys.executable, "-m", "spatial_manip.cli", "launch", graph, "--grace", "3"]
    for o in overrides:
        cmd += ["--set", o]
    out = open(log_path, "w") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if log_path:
            out.close()


def wait_for(predicate, timeout_s: float, poll_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll_s)
    return False
