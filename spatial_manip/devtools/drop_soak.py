"""`spatial-manip drop-soak`: lose the UR controller mid-motion, again and again, through arm_node.

Starts the controller emulator and arm_node (ur_rtde backend, the real library) in processes of
their own, then per cycle sends a waypoint goal, drops every RTDE link 0.2 s into the motion
(`emulator drop 0.5`: the port refuses connections for 0.5 s), and sends a home goal once the
first has ended. A cycle passes when the interrupted goal ends MOTION_FAILED naming the lost
connection and the home goal succeeds after arm_node has reconnected by itself. `--load N` keeps
N busy processes running meanwhile, as a loaded CI machine does: that is when ur_rtde's own
reconnect thread once raced our disconnect and corrupted arm_node's heap (issue 24).
Exit status 1 when any cycle failed or a goal was never answered.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time

import numpy as np

from spatial_manip.devtools.arm_bench import _start_emulator
from spatial_manip.devtools.ur_emulator import dashboard_line
from spatial_manip.nodes import convert
from spatial_manip.nodes.runner import ActionClient

ANSWER_S = 30.0   # a goal not answered by then: the node hangs or died


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cycles", type=int, default=20, help="drop-and-home cycles")
    p.add_argument("--load", type=int, default=2, help="busy processes kept running meanwhile")
    p.add_argument("--node-log", default="", help="write arm_node's log here (default: discarded)")


def _down_pose(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])   # the TCP's approach axis pointing down
    T[:3, 3] = [x, y, z]
    return T


class _Client:
    def __init__(self):
        import rclpy
        from rclpy.executors import MultiThreadedExecutor

        from spatial_manip_interfaces.action import ArmMotion

        rclpy.init()
        self.node = rclpy.create_node("drop_soak")
        self.executor = MultiThreadedExecutor(num_threads=2)
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, daemon=True).start()
        self.client = ActionClient(self.node, ArmMotion, "/spatial_manip/arm_motion")
        self.ArmMotion = ArmMotion

    def run(self, goal, on_phase=None):
        """The goal's result, or None when it was not answered within ANSWER_S."""
        answered, done = threading.Event(), threading.Event()
        sent = self.client.send_goal_async(
            goal, feedback_callback=lambda m: on_phase and on_phase(m.feedback.phase))
        sent.add_done_callback(lambda _: answered.set())
        if not answered.wait(10.0) or not sent.result().accepted:
            return None
        result = sent.result().get_result_async()
        result.add_done_callback(lambda _: done.set())
        return result.result().result if done.wait(ANSWER_S) else None

    def close(self):
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown()


def _cycle(client: _Client, k: int) -> str:
    """'' when the cycle passed, else what went wrong."""
    ArmMotion = client.ArmMotion
    goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_WAYPOINTS, speed_scale=0.4)
    goal.waypoints = [convert.pose_msg_from_matrix(_down_pose(0.5, -0.2 if k % 2 == 0 else 0.2, 0.3))]
    dropped: list = []

    def drop(phase):
        if phase == "waypoint" and not dropped:
            dropped.append(threading.Timer(0.2, dashboard_line, args=("emulator drop 0.5",)))
            dropped[0].start()

    first = client.run(goal, drop)
    if first is None:
        return "the interrupted goal was never answered"
    if first.success or first.error_code != "MOTION_FAILED" or "connection" not in first.message:
        return f"the interrupted goal ended {first.error_code or 'in success'}: {first.message[:120]}"
    time.sleep(0.6)
    home = client.run(ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME))
    if home is None:
        return "the home goal after the drop was never answered"
    return "" if home.success else f"home after the drop failed: {home.message[:120]}"


def run(args) -> int:
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
            for _ in range(max(0, args.load))]
    procs, client, passed = list(load), None, 0
    try:
        procs.append(_start_emulator())
        log = open(args.node_log, "w") if args.node_log else subprocess.DEVNULL
        node = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.arm_node", "--ros-args",
                                 "-p", "arm.backend:=ur_rtde", "-p", "arm.host:=127.0.0.1", "-p", "state_rate_hz:=50.0"],
                                stdout=log, stderr=subprocess.STDOUT)
        procs.append(node)
        client = _Client()
        if not client.client.wait_for_server(timeout_sec=20.0):
            raise SystemExit("arm_node did not serve /spatial_manip/arm_motion within 20 s")
        time.sleep(1.0)   # the server's discovery of this client
        for k in range(args.cycles):
            why = _cycle(client, k)
            alive = node.poll() is None
            print(f"[drop-soak] cycle {k + 1}/{args.cycles}: {why or 'ok'}"
                  f"{'' if alive else f'; arm_node died (exit {node.returncode})'}", flush=True)
            passed += not why and alive
            if not alive:
                break
    finally:
        if client is not None:
            client.close()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"[drop-soak] {passed} of {args.cycles} cycles passed with {args.load} busy processes on "
          f"{os.cpu_count()} cores")
    return 0 if passed == args.cycles else 1
