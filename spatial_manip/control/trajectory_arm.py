"""The `Arm` backend over a `trajectory_msgs/JointTrajectory` command topic and `/joint_states`.

In Gazebo, ros_gz_bridge carries the trajectory to gz-sim's JointTrajectoryController and the
joint states back (config/gazebo/bridge.yaml); any other consumer of the topic (a ROS
joint_trajectory_controller behind a relay, a test's MuJoCo world) works the same way.

    arm = TrajectoryArm(command_topic="/spatial_manip/joint_trajectory", model="ur5e",
                        tcp_offset=[0, 0, 0.15, 0, 0, 0])
    arm.connect()                       # waits for the first joint state and a subscriber
    arm.move_j(q, speed=1.0, accel=1.4) # publishes one time-parameterised trajectory, then waits
                                        # until /joint_states reaches the goal (or raises)

The backend runs its own rclpy context and executor thread, so it can live inside arm_node (whose
--ros-args remappings then do not touch its topics) or in a plain script. Cartesian moves are
sampled along the straight line and solved with the analytic UR IK (control/kinematics.py);
a line the IK cannot follow without a branch jump is refused before anything is published.
`move_path(qs, ...)` sends the whole joint path as ONE trajectory: a C1 cubic through every
waypoint (each is a point of the message, at its time), moving on through the inner ones where
a joint keeps its direction, timed so the speed and acceleration caps hold; gz-sim's controller
does not interpolate between points, so the curve is sampled every `point_period_s` as well.
`stop()` publishes a one-point trajectory holding the current joints (how both ROS's and gz-sim's
controllers take "stop here").
"""
from __future__ import annotations

import math
import threading
import time
from typing import Sequence

import numpy as np
from scipy.spatial.transform import Rotation, Slerp
from scipy.interpolate import CubicHermiteSpline

from spatial_manip.device import Device
from spatial_manip.control.base import DrivenPath, SafetyStatus, straight_driven_path
from spatial_manip.control.kinematics import DH_PRESETS, JOINT_NAMES, URKinematics, tcp_offset_matrix
from spatial_manip.errors import (BackendUnavailableError, CanceledError, InvalidGoalError, MotionFailedError,
                                  UnreachableError)
from spatial_manip.transforms import make_transform

MAX_STEP_RAD = math.radians(20)    # a larger joint change between two line samples is an IK branch jump
ROT_TRAVEL_M_PER_RAD = 0.15        # as the sim arm: turning 1 rad costs as long as 15 cm of travel


def cosine_duration(delta: float, speed: float, accel: float) -> float:
    """Duration of a 0.5 - 0.5 cos(pi t / T) profile over `delta` that keeps the peak speed
    (pi/2 delta/T) and peak acceleration (pi^2/2 delta/T^2) within the given limits."""
    if speed <= 0 or accel <= 0:
        raise MotionFailedError(f"speed and acceleration must be positive, got {speed} and {accel}")
    delta = abs(float(delta))
    return max(math.pi / 2 * delta / speed, math.pi * math.sqrt(delta / (2 * accel)), 0.1)


def profile(T: float, period: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample times (excluding 0, ending at T), path parameter s and ds/dt of the cosine profile."""
    n = max(1, math.ceil(T / period))
    t = np.linspace(T / n, T, n)
    s = 0.5 - 0.5 * np.cos(np.pi * t / T)
    ds = 0.5 * np.pi / T * np.sin(np.pi * t / T)
    return t, s, ds


def path_trajectory(q0, rows, speed: float, accel: float, period: float, same_rad: float = 1e-6):
    """A trajectory from `q0` through the joint waypoints `rows` ((n, 6)), at rest at both ends.

    A cubic Hermite spline with one knot per waypoint. The slope at an inner knot is, per joint,
    the weighted harmonic mean of the neighbouring segments' mean speeds (as PCHIP: no overshoot
    past a waypoint), and 0 where the joint turns back, so the arm does not stop where it can go
    on. Segment times start in the proportions of the rest-to-rest cubic limits (1.5 d / speed,
    sqrt(6 d / accel) for the leading joint's travel d), then the whole curve is scaled in time
    uniformly so that its sampled peak joint speed or acceleration meets its cap (at least 0.1 s).

    Returns (t, positions, velocities, knot_t): sample times (> 0, ending at the last knot), the
    joints and joint speeds there; every waypoint is one of the samples, exactly, at knot_t.
    A first row within `same_rad` of q0 (where the arm already is) and repeated rows are merged."""
    pts = [np.asarray(q0, float)]
    for q in np.asarray(rows, float):
        if np.max(np.abs(q - pts[-1])) > same_rad:
            pts.append(q)
    if len(pts) == 1:
        return None
    P = np.asarray(pts)
    d = np.max(np.abs(np.diff(P, axis=0)), axis=1)
    h = np.maximum.reduce([1.5 * d / speed, np.sqrt(6.0 * d / accel), np.full_like(d, 1e-3)])
    m = np.diff(P, axis=0) / h[:, None]                      # mean joint speeds per segment
    slopes = np.zeros_like(P)
    for k in range(1, len(P) - 1):
        w1, w2 = 2 * h[k] + h[k - 1], h[k] + 2 * h[k - 1]
        a, b = m[k - 1], m[k]
        same = (a * b) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            slopes[k] = np.where(same, (w1 + w2) / (w1 / np.where(same, a, 1) + w2 / np.where(same, b, 1)), 0.0)
    knots = np.concatenate([[0.0], np.cumsum(h)])
    spline = CubicHermiteSpline(knots, P, slopes)
    probe = np.concatenate([np.linspace(knots[i], knots[i + 1], 33) for i in range(len(h))])
    v_peak = float(np.max(np.abs(spline(probe, 1))))
    a_peak = float(np.max(np.abs(spline(probe, 2))))
    scale = max(v_peak / speed, math.sqrt(a_peak / accel), 0.1 / knots[-1])  # one cap is met exactly
    knots, slopes = knots * scale, slopes / scale
    spline = CubicHermiteSpline(knots, P, slopes)
    grid = np.arange(period, knots[-1], period)
    near = np.min(np.abs(grid[:, None] - knots[None, 1:]), axis=1) < period / 4 if grid.size else np.zeros(0, bool)
    t = np.union1d(grid[~near], knots[1:])
    positions, velocities = spline(t), spline(t, 1)
    at_knot = np.searchsorted(t, knots[1:])
    positions[at_knot], velocities[at_knot] = P[1:], slopes[1:]  # the waypoints exactly
    velocities[-1] = 0.0
    return t, positions, velocities, knots[1:]


class TrajectoryArm(Device):
    _state_source = "the simulator (and ros_gz_bridge)"      # named when no joint states come

    def __init__(self, *, command_topic: str = "/spatial_manip/joint_trajectory", state_topic: str = "/joint_states",
                 model: str = "ur5e", tcp_offset: Sequence[float] = (0, 0, 0, 0, 0, 0),
                 joint_names: Sequence[str] = JOINT_NAMES, point_period_s: float = 0.05,
                 goal_tolerance_rad: float = 0.005, settle_timeout_s: float = 3.0,
                 connect_timeout_s: float = 10.0, state_timeout_s: float = 1.0, node_name: str = "trajectory_arm"):
        if model not in DH_PRESETS:
            raise ValueError(f"arm model must be one of {sorted(DH_PRESETS)}, got {model!r}")
        if len(joint_names) != 6:
            raise ValueError(f"joint_names must name the 6 UR joints, got {list(joint_names)}")
        self.command_topic, self.state_topic, self.node_name = command_topic, state_topic, node_name
        self.joint_names = tuple(joint_names)
        self.kin = URKinematics(**DH_PRESETS[model], T_tool0_tcp=tcp_offset_matrix(tcp_offset))
        self.period, self.tol = float(point_period_s), float(goal_tolerance_rad)
        self.settle_timeout_s, self.connect_timeout_s = float(settle_timeout_s), float(connect_timeout_s)
        self.state_timeout_s = float(state_timeout_s)
        self._lock = threading.Lock()
        self._q: np.ndarray | None = None
        self._q_stamp = 0.0                         # time.monotonic() of the last joint state
        self._state_event = threading.Event()
        self._stop = threading.Event()
        self._ctx = self._node = self._executor = self._thread = self._pub = None

    # --- lifecycle ------------------------------------------------------------------------------
    def connect(self) -> None:
        if self._node is not None:
            return
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        # its own context: the host process's --ros-args (arm_node's remappings) stay out of it
        self._ctx = rclpy.Context()
        rclpy.init(args=[], context=self._ctx)
        self._node = rclpy.create_node(self.node_name, context=self._ctx)
        self._open_command_channel(self._node)
        self._node.create_subscription(JointState, self.state_topic, self._on_state, 10)
        self._executor = SingleThreadedExecutor(context=self._ctx)
        self._executor.add_node(self._node)
        self._thread = threading.Thread(target=self._spin, name="trajectory-arm", daemon=True)
        self._thread.start()
        try:
            self._wait_connected()
        except BackendUnavailableError:
            self.close()
            raise

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        try:
            self._executor.spin()
        except ExternalShutdownException:
            pass

    def _open_command_channel(self, node) -> None:
        """Where trajectories go: a reliable JointTrajectory publisher (the FollowJointTrajectory
        backend opens an action client here instead)."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from trajectory_msgs.msg import JointTrajectory

        self._pub = node.create_publisher(JointTrajectory, self.command_topic,
                                          QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))

    def _wait_connected(self) -> None:
        deadline = time.monotonic() + self.connect_timeout_s
        if not self._state_event.wait(self.connect_timeout_s):
            raise BackendUnavailableError(
                f"no {self.state_topic} message with the joints {list(self.joint_names)} within "
                f"{self.connect_timeout_s:.0f} s; is {self._state_source} running?")
        self._wait_command_channel(deadline)

    def _wait_command_channel(self, deadline: float) -> None:
        while self._pub.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                raise BackendUnavailableError(
                    f"nothing subscribes to {self.command_topic} after {self.connect_timeout_s:.0f} s; "
                    "is ros_gz_bridge running with config/gazebo/bridge.yaml?")
            time.sleep(0.02)

    def close(self) -> None:
        if self._node is None:
            return
        self._executor.shutdown(timeout_sec=1.0)
        self._node.destroy_node()
        self._ctx.try_shutdown()
        self._thread.join(timeout=2.0)
        self._ctx = self._node = self._executor = self._thread = self._pub = None


    @property
    def is_connected(self) -> bool:
        return self._node is not None and (time.monotonic() - self._q_stamp) < self.state_timeout_s

    # --- state ----------------------------------------------------------------------------------
    def _on_state(self, msg) -> None:
        index = {n: i for i, n in enumerate(msg.name)}
        if not all(n in index for n in self.joint_names) or len(msg.position) < len(msg.name):
            return                      # e.g. a gripper-only message: not ours
        q = np.array([msg.position[index[n]] for n in self.joint_names], float)
        with self._lock:
            self._q, self._q_stamp = q, time.monotonic()
        self._state_event.set()

    def joint_positions(self) -> np.ndarray:
        with self._lock:
            q, age = self._q, time.monotonic() - self._q_stamp
        if q is None or age > self.state_timeout_s:
            raise MotionFailedError(f"no fresh {self.state_topic} (last {age:.1f} s ago); "
                                    "the simulator or the bridge stopped publishing joint states")
        return q.copy()

    def tcp_pose(self) -> np.ndarray:
        return self.kin.fk(self.joint_positions())

    def safety_status(self) -> SafetyStatus:
        ok = self.is_connected
        return SafetyStatus(connected=ok, program_running=ok,
                            detail=f"joint trajectories on {self.command_topic}" if ok
                            else f"no fresh {self.state_topic}")

    # --- motion ---------------------------------------------------------------------------------
    def move_j(self, q, speed: float, accel: float) -> None:
        q = np.asarray(q, float).reshape(-1)
        if q.shape != (6,) or not np.all(np.isfinite(q)):
            raise MotionFailedError(f"move_j needs 6 finite joint angles, got {q.tolist()}")
        if not self.kin.within_limits(q):
            raise UnreachableError(f"joint target {np.round(q, 3).tolist()} is outside the joint limits")
        q0 = self.joint_positions()
        T = cosine_duration(np.max(np.abs(q - q0)), speed, accel)
        t, s, ds = profile(T, self.period)
        positions = q0 + s[:, None] * (q - q0)
        velocities = ds[:, None] * (q - q0)
        self._execute("move_j", t, positions, velocities)

    def move_path(self, qs, speed: float, accel: float) -> None:
        """The joint path `qs` ((n, 6) rad, the first row near the current joints) as one
        trajectory (`path_trajectory`), then wait as move_j does until the last row is reached."""
        _, rows, traj = self._path_trajectory(qs, speed, accel)
        if traj is None:                                   # nothing left to travel
            return self.move_j(rows[-1], speed, accel)
        t, positions, velocities, _ = traj
        self._execute("move_path", t, positions, velocities)

    def driven_path(self, qs, speed: float, accel: float) -> DrivenPath:
        """The points move_path will send (the controller goes straight from one to the next,
        `point_period_s` apart), after the joints now."""
        q0, rows, traj = self._path_trajectory(qs, speed, accel)
        return straight_driven_path(q0, rows[-1:] if traj is None else traj[1])

    def _path_trajectory(self, qs, speed: float, accel: float):
        """(joints now, the rows still to travel, path_trajectory from the one through the other)."""
        q0 = self.joint_positions()
        rows = self._path_rows(q0, qs, speed, accel)
        return q0, rows, path_trajectory(q0, rows, speed, accel, self.period)

    def _path_rows(self, q0: np.ndarray, qs, speed: float, accel: float) -> np.ndarray:
        """`qs` checked as a joint path (InvalidGoalError, UnreachableError), without a first row
        where the arm already is (at `q0`)."""
        try:
            rows = np.array(qs, dtype=float)
        except (TypeError, ValueError) as e:
            raise InvalidGoalError(f"a joint path is an (n, 6) array of joint angles in rad: {e}") from e
        if rows.ndim != 2 or rows.shape[1] != 6 or rows.shape[0] < 1 or not np.all(np.isfinite(rows)):
            raise InvalidGoalError(f"a joint path is an (n, 6) array of finite joint angles in rad with n >= 1, "
                                   f"got shape {rows.shape}")
        if not (math.isfinite(speed) and math.isfinite(accel) and speed > 0 and accel > 0):
            raise InvalidGoalError(f"move_path needs a positive joint speed and acceleration, got {speed} and {accel}")
        outside = [i for i, q in enumerate(rows) if not self.kin.within_limits(q)]
        if outside:
            raise UnreachableError(f"joint path rows {outside} are outside the joint limits "
                                   f"(first: {np.round(rows[outside[0]], 3).tolist()})")
        if np.max(np.abs(rows[0] - q0)) <= self.tol:
            rows = rows[1:] if len(rows) > 1 else rows    # the arm is already at the first row
        return rows

    def move_l(self, T_base_tcp: np.ndarray, speed: float, accel: float) -> None:
        T1 = np.asarray(T_base_tcp, float)
        if T1.shape != (4, 4) or not np.all(np.isfinite(T1)):
            raise MotionFailedError(f"move_l needs a finite 4x4 pose, got shape {T1.shape}")
        q0 = self.joint_positions()
        T0 = self.kin.fk(q0)
        angle = np.linalg.norm(Rotation.from_matrix(T1[:3, :3] @ T0[:3, :3].T).as_rotvec())
        dist = max(np.linalg.norm(T1[:3, 3] - T0[:3, 3]), ROT_TRAVEL_M_PER_RAD * angle)
        T = cosine_duration(dist, speed, accel)
        t, s, _ = profile(T, self.period)
        positions = self._line_ik(T0, T1, s, q0)
        velocities = np.gradient(np.vstack([q0, positions]), np.r_[0.0, t], axis=0)[1:]
        self._execute("move_l", t, positions, velocities)

    def _line_ik(self, T0, T1, s, q0) -> np.ndarray:
        """Joints along the straight TCP line, each the IK solution nearest the previous one."""
        slerp = Slerp([0, 1], Rotation.from_matrix([T0[:3, :3], T1[:3, :3]]))
        out, q = [], q0
        for si in s:
            Ti = make_transform(slerp([si]).as_matrix()[0], (1 - si) * T0[:3, 3] + si * T1[:3, 3])
            qi = self.kin.ik(Ti, q)        # raises UnreachableError with the position
            if np.max(np.abs(qi - q)) > MAX_STEP_RAD:
                raise UnreachableError(f"the straight line to {np.round(T1[:3, 3], 3).tolist()} needs an IK branch "
                                       f"change at {si:.0%} of the way; move in joint space (move_j) instead")
            out.append(qi)
            q = qi
        return np.array(out)

    def _message(self, t, positions, velocities):
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        msg = JointTrajectory()       # header stamp 0: "start now" for ROS and gz-sim controllers
        msg.joint_names = list(self.joint_names)
        for ti, p, v in zip(t, positions, velocities):
            sec = int(ti)
            msg.points.append(JointTrajectoryPoint(
                positions=[float(x) for x in p], velocities=[float(x) for x in v],
                time_from_start=Duration(sec=sec, nanosec=int(round((ti - sec) * 1e9)))))
        return msg

    def _execute(self, what: str, t, positions, velocities) -> None:
        if self._pub is None:
            raise MotionFailedError(f"{what}: the trajectory arm is not connected; call connect() first")
        self._stop.clear()
        goal = positions[-1]
        self._pub.publish(self._message(t, positions, velocities))
        start, duration = time.monotonic(), float(t[-1])
        deadline = start + duration + self.settle_timeout_s
        while True:
            if self._stop.wait(self.period / 2):
                self._hold()
                raise CanceledError(f"{what} stopped on request")
            q = self.joint_positions()              # raises when the states stop coming
            err = float(np.max(np.abs(q - goal)))
            now = time.monotonic()
            if now - start >= duration and err < self.tol:
                return
            if now > deadline:
                self._hold()        # do not leave the controller pushing towards a goal it cannot reach
                raise MotionFailedError(
                    f"{what}: the arm is {math.degrees(err):.2f} deg from the goal {self.settle_timeout_s:.1f} s after "
                    f"the {duration:.2f} s trajectory ended; is the controller on {self.command_topic} running "
                    "(or the arm blocked by contact)?")

    def _hold(self) -> None:
        """Stop where the arm is: a one-point trajectory at the current joints."""
        try:
            q = self.joint_positions()
        except MotionFailedError:
            return
        self._pub.publish(self._message([self.period], [q], [np.zeros(6)]))

    def stop(self) -> None:
        self._stop.set()


def make_arm(**cfg) -> TrajectoryArm:
    keys = ("command_topic", "state_topic", "model", "tcp_offset", "joint_names", "point_period_s",
            "goal_tolerance_rad", "settle_timeout_s", "connect_timeout_s", "state_timeout_s", "node_name")
    unknown = sorted(set(cfg) - set(keys))
    if unknown:
        raise ValueError(f"unknown joint_trajectory arm settings {unknown}; known: {list(keys)}")
    return TrajectoryArm(**cfg)
