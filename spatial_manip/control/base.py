"""The `Arm` and `Gripper` protocols every backend implements (ur_rtde, sim, ...).

Contract shared by all backends:
- Poses are 4x4 `T_base_tcp` (TCP in the robot base frame, metres); joints are 6 radians in
  UR order (`JOINT_NAMES`).
- `move_l` / `move_j` / `move_path` block until the motion ends. `move_path` follows a planned
  joint path (rows of an (n, 6) array, the first near the current joints) without stopping at
  the inner waypoints where the controller can blend, and ends exactly on the last one;
  `driven_path` returns, for the same arguments, the motion move_path will drive (a DrivenPath:
  the curve it follows, not the waypoints' straight segments), which the envelope checks. They raise `MotionFailedError` (with the
  controller's reason) when the controller refuses or stops, and `CanceledError` when `stop()`
  was called from another thread during the motion; `stop()` is thread-safe and decelerates
  the arm promptly. Backends never re-send an interrupted motion by themselves.
- Backends do not check safety: `MotionPrimitives` passes every command through the
  `SafetyEnvelope` first. Backends only enforce what the controller itself reports.
- The Gripper's `close()` closes the jaws; its lifecycle is `connect()` / `disconnect()`.
  `move(w, ...)` is `start_move(w, ...)` then `wait_moved()`: between the two the fingers move
  while the arm may (a pick opens them on the way to the pre-grasp).
"""
from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

import numpy as np

from spatial_manip.control.kinematics import JOINT_NAMES
from spatial_manip.errors import InvalidGoalError
from spatial_manip.registry import register_role

__all__ = ["Arm", "DrivenPath", "Gripper", "SafetyStatus", "JOINT_NAMES", "ARM_BACKENDS", "GRIPPER_BACKENDS",
           "straight_driven_path"]


@dataclasses.dataclass(frozen=True)
class DrivenPath:
    """The motion an arm's move_path drives, as SafetyEnvelope.checked_path judges it: joint
    samples `q` ((m, 6), the first where the arm is now, the last the path's end) in the order
    driven, the arm moving straight in joint space between neighbours (or closer than `stray_m`
    to that), and `stray_m` ((m - 1,) metres): how far the TCP may stray from the straight
    segment q[i] -> q[i + 1] because the controller shapes it itself (a blend radius), 0 where
    the backend sends the samples themselves."""

    q: np.ndarray
    stray_m: np.ndarray

    def __post_init__(self):
        q, stray = np.asarray(self.q, float), np.asarray(self.stray_m, float)
        if q.ndim != 2 or q.shape[1:] != (6,) or not len(q) or not np.all(np.isfinite(q)):
            raise InvalidGoalError(f"a driven path's samples are an (m, 6) array of finite angles, got shape {q.shape}")
        if stray.shape != (len(q) - 1,) or not np.all(np.isfinite(stray)) or np.any(stray < 0):
            raise InvalidGoalError(f"a driven path's stray_m is one finite value >= 0 per segment ({len(q) - 1}), "
                                   f"got {stray.tolist()}")
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "stray_m", stray)


def straight_driven_path(q_now, rows) -> DrivenPath:
    """From `q_now` straight in joint space through every row: the motion of an arm that stops
    at each waypoint (and what a path's waypoints alone say)."""
    q = np.vstack([np.asarray(q_now, float).reshape(1, 6), np.asarray(rows, float).reshape(-1, 6)])
    return DrivenPath(q, np.zeros(len(q) - 1))


@dataclasses.dataclass(frozen=True)
class SafetyStatus:
    """What the controller says about itself; `reason()` names the first problem."""

    connected: bool = True
    program_running: bool = True
    protective_stop: bool = False
    emergency_stop: bool = False
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.connected and self.program_running and not (self.protective_stop or self.emergency_stop)

    def reason(self) -> str:
        if not self.connected:
            return "connection to the controller lost"
        if self.emergency_stop:
            return "emergency stop active: release the e-stop, then restart safety"
        if self.protective_stop:
            return "protective stop: clear the cause, then unlock the protective stop (recover)"
        if not self.program_running:
            return "control script not running: re-upload it (recover)"
        return self.detail or "ok"


@runtime_checkable
class Arm(Protocol):
    def connect(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Arm": ...
    def __exit__(self, *exc) -> None: ...
    @property
    def is_connected(self) -> bool: ...
    def move_l(self, T_base_tcp: np.ndarray, speed: float, accel: float) -> None: ...
    def move_j(self, q: np.ndarray, speed: float, accel: float) -> None: ...
    def move_path(self, qs: np.ndarray, speed: float, accel: float) -> None: ...
    def driven_path(self, qs: np.ndarray, speed: float, accel: float) -> DrivenPath: ...
    def stop(self) -> None: ...
    def joint_positions(self) -> np.ndarray: ...
    def tcp_pose(self) -> np.ndarray: ...
    def safety_status(self) -> SafetyStatus: ...


@runtime_checkable
class Gripper(Protocol):
    def connect(self) -> None: ...
    def disconnect(self) -> None: ...
    def activate(self) -> None: ...
    def move(self, width_m: float, speed: float, force: float) -> bool:
        """Go to width_m (speed, force 0..1); True when it stopped on an object."""
    def start_move(self, width_m: float | None, speed: float, force: float) -> None:
        """Send the fingers towards width_m (None: fully open) and return without waiting."""
    def wait_moved(self) -> bool:
        """Wait until the fingers stop after `start_move`; True when they stopped on an object."""
    def open(self) -> None: ...
    def close(self) -> bool:
        """Close the jaws; True when an object is detected between them."""
    def width_m(self) -> float: ...
    def holding(self) -> bool:
        """Whether an object is still between the closed jaws (an object that slipped out
        during the lift reads False)."""


# backend name -> factory taking (config: dict) of the whole arm.yaml
ARM_BACKENDS = {
    "ur_rtde": "spatial_manip.control.ur_rtde_arm:make_arm",
    "sim": "spatial_manip.sim.arm:make_arm",
    "joint_trajectory": "spatial_manip.control.trajectory_arm:make_arm",   # Gazebo via ros_gz_bridge
    "ur_driver": "spatial_manip.control.fjt_arm:make_arm",   # the UR ROS 2 driver's FollowJointTrajectory action
}
GRIPPER_BACKENDS = {
    "robotiq_socket": "spatial_manip.control.robotiq:make_gripper",
}
register_role("arm", ARM_BACKENDS)
register_role("gripper", GRIPPER_BACKENDS)
