"""Helpers for cross-process tests: an rclpy client node spun in a background thread, and
a graph started by the pip-only launcher in its own process."""
from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from machine_load import scaled_by_load

from spatial_manip.bench.domains import hold_domains
from spatial_manip.bringup.goal_client import spinning_node


@contextlib.contextmanager
def plain_node(name: str):
    """rclpy initialised and one node, not spun (the test spins it); shut down afterwards."""
    import rclpy

    rclpy.init()
    node = rclpy.create_node(name)
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.shutdown()


def client_node(name: str = "test_client"):
    """A client node spun in a background thread (the product's own helper)."""
    return spinning_node(name)


@contextlib.contextmanager
def launched(graph: str, *overrides: str, log_path=None, env=None):
    """Start `spatial-manip launch GRAPH --set ...` (in `env`, else this process's environment)
    and stop it with Ctrl-C afterwards."""
    cmd = [sys.executable, "-m", "spatial_manip.cli", "launch", graph, "--grace", "3"]
    for o in overrides:
        cmd += ["--set", o]
    out = open(log_path, "w") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                _kill_with_its_nodes(proc)
        if log_path:
            out.close()


def _kill_with_its_nodes(launcher: subprocess.Popen) -> None:
    """SIGKILL a launcher that did not stop, and the nodes it started: each runs in a session of
    its own, so killing the launcher's group alone would leave them serving the next tests."""
    import psutil

    try:
        nodes = psutil.Process(launcher.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        nodes = []
    os.killpg(launcher.pid, signal.SIGKILL)
    for p in nodes:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    launcher.wait()


@contextlib.contextmanager
def arm_motion_client(name: str, arm_node: subprocess.Popen, *, discovery_s: float):
    """rclpy, a node `name` spun by two threads, and an ArmMotion action client that has found the
    server of `arm_node` (a process started by the test: the test fails with its log when it serves
    nothing in time); all shut down after the block. `discovery_s`: wait_for_server means this
    client found the server's request readers, not that the server found this client's reply
    readers, and a goal's answer sent before that is lost (CI once saw "goal not answered" on the
    first goal)."""
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor

    from spatial_manip_interfaces.action import ArmMotion

    rclpy.init()
    node = rclpy.create_node(name)
    executor = MultiThreadedExecutor(num_threads=2)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    client = ActionClient(node, ArmMotion, "/spatial_manip/arm_motion")
    try:
        if not client.wait_for_server(timeout_sec=scaled_by_load(20.0)):
            arm_node.terminate()
            pytest.fail(f"arm_node did not serve the action: {arm_node.stderr.read()[-2000:]}")
        time.sleep(discovery_s)
        yield node, client
    finally:
        # a teardown that raised here would leave rclpy initialised for every later test
        stop_spinning(executor, spinner)      # before the node (and its action client) goes
        node.destroy_node()
        rclpy.try_shutdown()


def wait_for(predicate, timeout_s: float, poll_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll_s)
    return False


def launched_pid(log_text: str, node: str) -> int:
    """The pid the launcher logged for `node` ("started NODE (pid N)"): this graph's node, never
    another test's or another user's of the same name, as a search by name would find."""
    found = re.findall(rf"started {re.escape(node)} \(pid (\d+)\)", log_text)
    assert found, f"the launcher never said it started {node}; its log: {log_text}"
    return int(found[-1])


# Runs hold their domain in 1-101 (conftest.py); a test's private domain comes from the other
# range ROS 2 documents as safe on Linux, so it never meets another run's nodes
PRIVATE_DOMAINS = range(215, 233)


def private_domain_id() -> int:
    """A ROS domain for one test's processes alone: one of PRIVATE_DOMAINS, drawn in a fresh order
    (a fixed number is shared by every run on the machine, and the global RNG may have been seeded
    by an earlier test) and held, like the benchmarks' domains (bench/domains.py), for as long as
    this process lives, so neither the other xdist worker of this run nor a concurrent run takes it
    (a private domain drawn from 1-101 once met another run's realistic sim_node; two workers drawing
    from 18 domains met once in 18). When every one is held, a random one, as before the locks."""
    order = random.SystemRandom().sample(PRIVATE_DOMAINS, len(PRIVATE_DOMAINS))
    for domain in order:
        try:
            return hold_domains(1, first=domain)[0]
        except RuntimeError:
            continue
    return order[0]


def stop_spinning(executor, spinner, timeout_s: float = 30.0) -> None:
    """Shut down an executor spun by the thread `spinner` and wait for that thread to leave its
    wait set, before the caller destroys the node: a node (an action or service client above all)
    destroyed under a waiting executor fails there ('action client pointer is invalid') and can
    crash the test process (goal_client.spinning_node does the same)."""
    executor.shutdown()
    spinner.join(timeout_s)

