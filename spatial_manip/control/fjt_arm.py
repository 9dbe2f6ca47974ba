"""The `Arm` backend over the UR ROS 2 driver: planned paths go to its
`control_msgs/action/FollowJointTrajectory` action on `scaled_joint_trajectory_controller`.

For a cell that already runs `ur_robot_driver` (its joint_state_broadcaster publishes
/joint_states, its speed_scaling_state_broadcaster the pendant's speed slider):

    arm = FollowJointTrajectoryArm(model="ur5", tcp_offset=[0, 0, 0.15, 0, 0, 0])
    arm.connect()                        # waits for joint states and the action server
    arm.move_path(qs, speed=1.0, accel=1.4)

Trajectories are built as the joint_trajectory backend builds them (control/trajectory_arm.py: the
same time parameterisation, Cartesian lines through the analytic IK) and sent as ONE goal; the
backend then waits for the action's result and turns its status and error code into one line
that says what to do. The scaled controller slows the trajectory down with the speed slider (and
when the robot itself slows down), so the time a goal may take is counted in trajectory time:
wall time multiplied by the published scaling. A slider below 100 % makes a motion slower, not a
failure; a slider at 0 % for `max_pause_s` is one. `stop()` cancels the goal (the controller then
holds the arm where it is) and returns once /joint_states shows the arm standing still.
ur_rtde (control/ur_rtde_arm.py) stays the backend for a cell without the driver.
"""
from __future__ import annotations

import math
import threading
import time
from typing import Sequence

import numpy as np

from spatial_manip.control.base import SafetyStatus
from spatial_manip.control.kinematics import JOINT_NAMES
from spatial_manip.control.trajectory_arm import TrajectoryArm
from spatial_manip.errors import BackendUnavailableError, CanceledError, MotionFailedError

DEFAULT_ACTION = "/scaled_joint_trajectory_controller/follow_joint_trajectory"
DEFAULT_SCALING_TOPIC = "/speed_scaling_state_broadcaster/speed_scaling"

# action_msgs/GoalStatus values (stable since ROS 2 Dashing)
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6

# control_msgs/action/FollowJointTrajectory result codes -> what went wrong and what to do
ERROR_ADVICE = {
    -1: ("INVALID_GOAL", "the controller refused the trajectory as invalid",
         "check that its first point is where the arm stands and that the trajectory is not empty"),
    -2: ("INVALID_JOINTS", "the trajectory's joints are not the controller's",
         "set arm.ur_driver.joint_names to the controller's joints (the driver's tf_prefix comes first)"),
    -3: ("OLD_HEADER_TIMESTAMP", "the trajectory's start time had passed when the controller got it",
         "check that this machine's clock and the driver's agree (use_sim_time on both or neither)"),
    -4: ("PATH_TOLERANCE_VIOLATED", "the arm left the trajectory's path tolerance",
         "look for a collision, a protective stop or a payload heavier than configured, then recover"),
    -5: ("GOAL_TOLERANCE_VIOLATED", "the arm did not reach the goal within the goal tolerance in time",
         "look for contact at the goal or a payload heavier than configured"),
}


def result_error(what: str, action: str, status: int, error_code: int, error_string: str) -> str | None:
    """None when the goal succeeded, else one line naming the action, the controller's reason
    (its error code and error_string) and what to do."""
    if status == STATUS_SUCCEEDED and error_code == 0:
        return None
    detail = f": {error_string.strip()}" if error_string and error_string.strip() else ""
    if error_code in ERROR_ADVICE:
        name, meaning, todo = ERROR_ADVICE[error_code]
        return f"{what}: {meaning} ({action} answered {name}{detail}); {todo}"
    if error_code != 0:
        return f"{what}: {action} failed with error code {error_code}{detail}; see the driver's log"
    if status == STATUS_CANCELED:
        return (f"{what}: {action} canceled the goal{detail} (another client, or the controller was switched "
                "off); check `ros2 control list_controllers`")
    return (f"{what}: {action} aborted the goal (status {status}{detail}); is the External Control program "
            "still running on the pendant and the robot out of protective stop?")


class FollowJointTrajectoryArm(TrajectoryArm):
    def __init__(self, *, action_name: str = DEFAULT_ACTION, speed_scaling_topic: str = DEFAULT_SCALING_TOPIC,
                 state_topic: str = "/joint_states", model: str = "ur5", tcp_offset: Sequence[float] = (0, 0, 0, 0, 0, 0),
                 joint_names: Sequence[str] = JOINT_NAMES, point_period_s: float = 0.05,
                 goal_tolerance_rad: float = 0.005, goal_time_tolerance_s: float = 0.5, settle_timeout_s: float = 3.0,
                 connect_timeout_s: float = 10.0, state_timeout_s: float = 1.0, accept_timeout_s: float = 2.0,
                 stop_timeout_s: float = 2.0, standstill_rad_s: float = 0.01, max_pause_s: float = 120.0,
                 node_name: str = "fjt_arm"):
        super().__init__(state_topic=state_topic, model=model, tcp_offset=tcp_offset, joint_names=joint_names,
                         point_period_s=point_period_s, goal_tolerance_rad=goal_tolerance_rad,
                         settle_timeout_s=settle_timeout_s, connect_timeout_s=connect_timeout_s,
                         state_timeout_s=state_timeout_s, node_name=node_name)
        for name, value in (("goal_time_tolerance_s", goal_time_tolerance_s), ("accept_timeout_s", accept_timeout_s),
                            ("stop_timeout_s", stop_timeout_s), ("standstill_rad_s", standstill_rad_s),
                            ("max_pause_s", max_pause_s)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"arm.ur_driver.{name} must be a positive number of seconds (rad/s), got {value}")
        self.action_name, self.speed_scaling_topic = action_name, speed_scaling_topic
        self.goal_time_tolerance_s, self.accept_timeout_s = float(goal_time_tolerance_s), float(accept_timeout_s)
        self.stop_timeout_s, self.standstill_rad_s = float(stop_timeout_s), float(standstill_rad_s)
        self.max_pause_s = float(max_pause_s)
        self._client = None
        self._scaling = 1.0            # fraction; 1 until the driver's broadcaster says otherwise
        self._joint_speed = math.inf   # rad/s, the largest joint's, from consecutive joint states
        self._prev_state: tuple[float, np.ndarray] | None = None

    _state_source = "the UR driver (its joint_state_broadcaster)"

    # --- connection -----------------------------------------------------------------------------
    def _open_command_channel(self, node) -> None:
        from rclpy.action import ActionClient
        from std_msgs.msg import Float64

        FollowJointTrajectory = _action_type()
        self._client = ActionClient(node, FollowJointTrajectory, self.action_name)
        node.create_subscription(Float64, self.speed_scaling_topic, self._on_scaling, 10)

    def _wait_command_channel(self, deadline: float) -> None:
        if not self._client.wait_for_server(timeout_sec=max(0.1, deadline - time.monotonic())):
            raise BackendUnavailableError(
                f"no FollowJointTrajectory action server at {self.action_name} within {self.connect_timeout_s:.0f} s; "
                "is ur_robot_driver running with scaled_joint_trajectory_controller active "
                "(`ros2 control list_controllers`)?")

    def close(self) -> None:
        self._client = None
        super().close()

    # --- state ----------------------------------------------------------------------------------
    def _on_state(self, msg) -> None:
        super()._on_state(msg)
        if not set(self.joint_names) <= set(msg.name):
            return                      # e.g. arm_node's gripper-only message: says nothing of the arm
        # the driver's stamps, not arrival times: messages delivered in a burst would look fast
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self._lock:
            q = self._q
            if q is None:
                return
            now = stamp if stamp > 0 else self._q_stamp
            if self._prev_state is not None and now - self._prev_state[0] > 1e-4:
                self._joint_speed = float(np.max(np.abs(q - self._prev_state[1]))) / (now - self._prev_state[0])
            self._prev_state = (now, q)

    def _on_scaling(self, msg) -> None:
        # the broadcaster publishes percent (the slider times the controller's own slow-down)
        self._scaling = min(max(float(msg.data) / 100.0, 0.0), 1.0)

    @property
    def speed_scaling(self) -> float:
        """The driver's last published speed scaling as a fraction (1.0 before the first message)."""
        return self._scaling

    def safety_status(self) -> SafetyStatus:
        ok = self.is_connected and self._client is not None and self._client.server_is_ready()
        return SafetyStatus(connected=ok, program_running=ok,
                            detail=f"FollowJointTrajectory on {self.action_name}" if ok
                            else f"no fresh {self.state_topic} or no action server at {self.action_name}")

    # --- motion ---------------------------------------------------------------------------------
    def _execute(self, what: str, t, positions, velocities) -> None:
        if self._client is None:
            raise MotionFailedError(f"{what}: the UR driver arm is not connected; call connect() first")
        self._stop.clear()
        handle = self._send(what, self._goal(t, positions, velocities))
        result = handle.get_result_async()
        budget = float(t[-1]) + self.goal_time_tolerance_s + self.settle_timeout_s   # in trajectory time
        progressed, last, paused_since = 0.0, time.monotonic(), None
        while not result.done():
            if self._stop.wait(self.period / 2):
                self._cancel(handle, what)
                raise CanceledError(f"{what} stopped on request")
            now, scaling = time.monotonic(), self._scaling
            progressed += (now - last) * scaling
            last = now
            paused_since = (paused_since or now) if scaling <= 0.0 else None
            problem = None
            if paused_since is not None and now - paused_since > self.max_pause_s:
                problem = (f"the speed scaling has been 0 % for {self.max_pause_s:.0f} s (the pendant's slider, "
                           "or the robot paused); the goal was canceled")
            elif progressed > budget:
                problem = (f"no result from {self.action_name} {budget:.1f} s of trajectory time after the goal "
                           f"started (the trajectory lasts {float(t[-1]):.2f} s); the goal was canceled")
            elif not self.is_connected:
                problem = f"{self.state_topic} stopped during the motion; the goal was canceled"
            if problem:
                self._cancel(handle, what, quiet=True)
                raise MotionFailedError(f"{what}: {problem}")
        wrapped = result.result()
        message = result_error(what, self.action_name, wrapped.status, wrapped.result.error_code,
                               getattr(wrapped.result, "error_string", ""))
        if message:
            raise MotionFailedError(message)

    def _goal(self, t, positions, velocities):
        from builtin_interfaces.msg import Duration

        goal = _action_type().Goal()
        goal.trajectory = self._message(t, positions, velocities)
        sec = int(self.goal_time_tolerance_s)
        goal.goal_time_tolerance = Duration(sec=sec, nanosec=int(round((self.goal_time_tolerance_s - sec) * 1e9)))
        return goal

    def _send(self, what: str, goal):
        future = self._client.send_goal_async(goal)
        if not _wait(future, self.accept_timeout_s):
            raise MotionFailedError(f"{what}: {self.action_name} did not answer the goal within "
                                    f"{self.accept_timeout_s:.1f} s; is the driver's controller manager running?")
        handle = future.result()
        if not handle.accepted:
            raise MotionFailedError(f"{what}: {self.action_name} rejected the goal; is scaled_joint_trajectory_controller "
                                    "active and the External Control program running on the pendant?")
        return handle

    def _cancel(self, handle, what: str, quiet: bool = False) -> None:
        """Cancel the goal, then wait until the joint states show the arm standing still."""
        _wait(handle.cancel_goal_async(), self.stop_timeout_s)
        deadline = time.monotonic() + self.stop_timeout_s
        while time.monotonic() < deadline:
            if self.is_connected and self._joint_speed < self.standstill_rad_s:
                return
            time.sleep(self.period / 2)
        if not quiet:
            raise MotionFailedError(f"{what}: canceled, but {self.state_topic} still shows the arm moving "
                                    f"({self._joint_speed:.3f} rad/s) {self.stop_timeout_s:.1f} s later; "
                                    "stop it from the pendant")

    def _hold(self) -> None:
        """Nothing to publish: a canceled FollowJointTrajectory goal already holds the arm."""


def _action_type():
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError as e:
        raise BackendUnavailableError(
            "arm.backend ur_driver needs control_msgs (FollowJointTrajectory), which did not import; source the "
            "ROS 2 install that runs the UR driver (apt: ros-$ROS_DISTRO-control-msgs)") from e
    return FollowJointTrajectory


def _wait(future, timeout_s: float) -> bool:
    """Wait for an rclpy future completed by the backend's own executor thread."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    return done.wait(timeout_s) or future.done()


def make_arm(**cfg) -> FollowJointTrajectoryArm:
    keys = ("action_name", "speed_scaling_topic", "state_topic", "model", "tcp_offset", "joint_names",
            "point_period_s", "goal_tolerance_rad", "goal_time_tolerance_s", "settle_timeout_s", "connect_timeout_s",
            "state_timeout_s", "accept_timeout_s", "stop_timeout_s", "standstill_rad_s", "max_pause_s", "node_name")
    unknown = sorted(set(cfg) - set(keys))
    if unknown:
        raise ValueError(f"unknown ur_driver arm settings {unknown}; known: {list(keys)}")
    return FollowJointTrajectoryArm(**cfg)
