"""What the joint_trajectory and ur_driver arm tests share: the MuJoCo arm their controller
process drives (a trajectory topic consumer, a FollowJointTrajectory server), starting and
stopping that process, connecting the backend to it, and the first move both check."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from node_process import stop

SIM_TCP_OFFSET = [0.0, 0.0, 0.1559, 0.0, 0.0, -1.5708]   # the MuJoCo model's TOOL0_TCP (arm.yaml sim overrides)


def mujoco_arm():
    """The small tabletop world whose arm a controller process plays trajectories on."""
    import spatial_manip  # noqa: F401  (headless GL before mujoco)
    from spatial_manip.sim.layouts import sample_scene
    from spatial_manip.sim.world import SimConfig, SimWorld

    return SimWorld(sample_scene("tabletop", 0), config=SimConfig(width=64, height=48))


def joint_state(world, node):
    """The arm's six joints as the controller publishes them, stamped now."""
    from sensor_msgs.msg import JointState

    from spatial_manip.sim import mjcf

    js = JointState(name=list(mjcf.ARM_JOINTS), position=[float(v) for v in world.joint_positions()[:6]])
    js.header.stamp = node.get_clock().now().to_msg()
    return js


def start_controller(script: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    """A test file run as a script: the controller process (its log on stdout). It imports this
    module too, outside pytest's pythonpath."""
    env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, script, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)


def stop_controller(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        stop(proc)


def connected(arm, controller: subprocess.Popen, what: str):
    """`arm` connected to the controller, or the test failed with the controller's log."""
    from spatial_manip.errors import BackendUnavailableError

    try:
        arm.connect()
    except BackendUnavailableError:
        out = controller.stdout.read() if controller.poll() is not None else "(still running)"
        pytest.fail(f"{what} did not come up: {out}")
    return arm


def move_j_follows_the_plan(arm, tolerance_rad: float) -> np.ndarray:
    """A six-joint move_j reaches its goal, played in the planned time rather than jumped to;
    returns where the arm started."""
    from spatial_manip.control.trajectory_arm import cosine_duration

    assert arm.safety_status().ok and arm.is_connected
    q0 = arm.joint_positions()
    goal = q0 + np.array([0.25, -0.15, 0.1, 0.1, 0.2, -0.3])
    t = time.monotonic()
    arm.move_j(goal, speed=1.0, accel=2.0)
    assert np.max(np.abs(arm.joint_positions() - goal)) < tolerance_rad
    assert time.monotonic() - t >= cosine_duration(0.3, 1.0, 2.0) - 0.05
    return q0


def spin_quietly(executor) -> None:
    """Spin until the context shuts down (the thread's normal end)."""
    import rclpy

    try:
        executor.spin()
    except rclpy.executors.ExternalShutdownException:
        pass
