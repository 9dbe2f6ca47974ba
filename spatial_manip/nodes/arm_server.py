"""ArmActionServer: the ArmMotion action + arm state topics over any Arm/Gripper backend.

Reusable by every node that owns an arm (arm_node with ur_rtde, sim_node with MuJoCo):

    server = ArmActionServer(node, arm, gripper, primitives)   # after arm.connect()

- action `/spatial_manip/arm_motion` (ArmMotion): PICK / PLACE / HOME / WAYPOINTS through
  `MotionPrimitives` (transits planned around the goal's `scene` and `obstacle_cloud`, every
  command passing the SafetyEnvelope first); feedback per phase; one
  goal at a time (others are rejected); cancel sets an Event that makes the primitives call
  `arm.stop()` at once; errors come back as `error_code` + `message`, never as exceptions. A
  stopping node cancels the running goal, refuses new ones and stops the arm (`stop_motion`), then
  waits for the motion to end before closing the arm's link (`release`).
- `/joint_states` (UR joint names + the gripper joint) and `/tcp_pose_broadcaster/pose`
  (PoseStamped in `base`) at `state_rate_hz`; `~/robot_program_running` (Bool) and
  `/spatial_manip/arm_status` (String, on change) report the controller's state.
- `/spatial_manip/arm_motion_markers` (visualization_msgs/MarkerArray, latched): after each
  motion, the bodies it was planned around and the TCP's planned way, for RViz / Foxglove.
- `/spatial_manip/pre_grasp_paths` (spatial_manip_interfaces/PreGraspPaths, latched; grasp_node publishes it with
  each answer): the joint paths to the pre-grasps of the grasps it kept, found by its motion check.
  A PICK's transit takes the one that runs from where the arm stands to the configuration the pick
  chose, when every segment of it is clear in the goal's own world, instead of searching again
  (issue 42: that search could spend its whole budget before the arm moved).
- `/spatial_manip/arm_recover` (std_msgs/Empty): an operator's explicit request to unlock a
  protective stop and re-upload the control script (backends with `recover()`); nothing
  recovers by itself and no interrupted motion is resumed.
The node must spin in a MultiThreadedExecutor (>= 3 threads) so that cancel and the state
timer run while a goal executes.
"""
from __future__ import annotations

import math
import threading
from typing import Callable

import numpy as np
from geometry_msgs.msg import Point, PoseStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from sensor_msgs.msg import JointState
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import Bool, Empty, String
from visualization_msgs.msg import MarkerArray

from spatial_manip.control.kinematics import JOINT_NAMES
from spatial_manip.control.primitives import MotionPrimitives, approach_direction
from spatial_manip.errors import CanceledError, ErrorCode, InvalidGoalError, MotionFailedError, SpatialManipError
from spatial_manip.nodes import convert
from spatial_manip.motion.arm_plans import scene_world
from spatial_manip.motion.markers import motion_markers
from spatial_manip.scene import Scene
from spatial_manip_interfaces.action import ArmMotion
from spatial_manip_interfaces.msg import JointPath, PreGraspPaths

ACTION_NAME = "spatial_manip/arm_motion"
# a stopping node: how long the stopped arm's motion may take to end before its link is closed. The
# ur_driver backend's cancel waits up to stop_timeout_s (2 s) for the cancel's answer and as long again
# for the arm to stand still: 4 s, which arm_node's finish (runner.FINISH_S, 2.5 s, the stop sent at
# its start) and this wait cover together; the launcher gives 3-5 s
STOP_WAIT_S = 2.0
MARKER_TOPIC = "spatial_manip/arm_motion_markers"
PRE_GRASP_PATHS_TOPIC = "spatial_manip/pre_grasp_paths"
MAX_HINTS = 20          # paths kept from one message (grasp_node sends the few grasps it kept)
FINGER_JOINT = "finger_joint"   # Robotiq 2F-85: 0 rad open .. 0.8 rad closed
FINGER_CLOSED_RAD = 0.8


FLOAT32_SLACK_M = 1e-6   # a float32 goal field rounds 0.085 up to 0.0850000009


def gripper_width(value: float, max_width_m: float) -> float:
    """A PICK goal's opening in metres, within 0..max_width_m; the full opening sent as float32
    (a hair above it) is the full opening. InvalidGoalError for anything else outside."""
    width = float(value)
    if max_width_m < width <= max_width_m + FLOAT32_SLACK_M:
        return float(max_width_m)
    if not (0.0 <= width <= max_width_m):
        raise InvalidGoalError(f"gripper_width must be within 0..{max_width_m} m, got {width}")
    return width


def pre_grasp_paths_msg(paths, stamp=None) -> PreGraspPaths:
    """Joint paths (each waypoints (n, 6)) as a PRE_GRASP_PATHS_TOPIC message, best first."""
    msg = PreGraspPaths(paths=[JointPath(positions=np.asarray(w, float).reshape(-1).tolist()) for w in paths])
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def pre_grasp_paths(msg: PreGraspPaths) -> list[np.ndarray]:
    """A PRE_GRASP_PATHS_TOPIC message's joint paths (waypoints (n, 6), finite, at least two), at
    most MAX_HINTS; a path that is none of that is left out (a hint only: the planner checks what
    it takes)."""
    out = []
    for path in msg.paths[:MAX_HINTS]:
        w = np.asarray(path.positions, float)
        if w.size % 6 or w.size < 12 or not np.all(np.isfinite(w)):
            continue
        out.append(w.reshape(-1, 6))
    return out


def goal_scene(req, frame_id: str) -> Scene | None:
    """The goal's scene to plan around, with its obstacle cloud where the motion planner reads
    it (`extra["cloud"]`, motion.obstacle_map's form); None when the goal has no object, no
    floor and no cloud. A malformed one is INVALID_GOAL, before the arm moves."""
    cloud = req.obstacle_cloud
    n_points = cloud.width * cloud.height
    if not (req.scene.objects or req.scene.ground_known or n_points):
        return None
    for what, header in (("scene", req.scene.header), ("obstacle_cloud", cloud.header)):
        if header.frame_id not in ("", frame_id):
            raise InvalidGoalError(f"the goal's {what} must be in frame {frame_id!r}, got "
                                   f"{header.frame_id!r}; transform it first")
    for name in ("cloud_voxel_m", "cloud_clearance_m"):
        value = float(getattr(req, name))
        if not (math.isfinite(value) and value >= 0.0):
            raise InvalidGoalError(f"{name} must be a finite length >= 0 m, got {value}")
    try:
        scene = convert.scene_from_msg(req.scene)
        if n_points:
            scene.extra["cloud"] = {"points": convert.cloud_to_points(cloud),
                                    "clearance_m": float(req.cloud_clearance_m)}
            if req.cloud_voxel_m > 0:     # else the planner's default
                scene.extra["cloud"]["voxel_m"] = float(req.cloud_voxel_m)
    except ValueError as e:      # SceneFormatError names the object and the key
        raise InvalidGoalError(f"the goal's scene cannot be planned around: {e}") from e
    return scene


class ArmActionServer:
    def __init__(self, node, arm, gripper, primitives: MotionPrimitives, *, state_rate_hz: float = 50.0,
                 frame_id: str = "base", gripper_max_width_m: float = 0.085, action_name: str = ACTION_NAME,
                 on_phase=None, publish_arm_state: bool = True):
        """`node`: the rclpy Node; `arm`/`gripper`: connected backends (gripper may be None);
        `primitives`: MotionPrimitives over the same arm and gripper; `on_phase(name)` hears each
        phase as it starts and "idle" when a goal ends (the simulator's contact monitor).
        `publish_arm_state` False: another node (the UR driver) publishes the arm's joints and TCP
        pose; only the gripper's finger joint goes to joint_states then."""
        self.publish_arm_state = publish_arm_state
        self.node, self.arm, self.gripper, self.primitives = node, arm, gripper, primitives
        self.on_phase = on_phase or (lambda name: None)
        self.frame_id, self.gripper_max_width_m = frame_id, gripper_max_width_m
        self._busy = threading.Lock()
        self._cancel: threading.Event | None = None  # of the running goal
        # a cancel can arrive between a goal's acceptance and its execution: it is kept by goal id
        # (under _cancel_lock) so the goal never starts moving
        self._cancel_lock = threading.Lock()
        self._canceled_early: set[bytes] = set()
        self._stopping = False   # the node is stopping (stop_motion): no goal may move the arm any more
        self._last_status = None
        self._gripper_width = gripper_max_width_m
        group = ReentrantCallbackGroup()
        self.joint_pub = node.create_publisher(JointState, "joint_states", 10)
        self.pose_pub = node.create_publisher(PoseStamped, "tcp_pose_broadcaster/pose", 10)
        self.running_pub = node.create_publisher(Bool, "~/robot_program_running", 10)
        self.status_pub = node.create_publisher(String, "spatial_manip/arm_status", 10)
        self.marker_pub = node.create_publisher(MarkerArray, MARKER_TOPIC,
                                                QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        node.create_subscription(Empty, "spatial_manip/arm_recover", self._on_recover, 10, callback_group=group)
        node.create_subscription(PreGraspPaths, PRE_GRASP_PATHS_TOPIC, self._on_pre_grasp_paths,
                                 QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL), callback_group=group)
        self.action = ActionServer(node, ArmMotion, action_name, execute_callback=self._execute,
                                   goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                                   callback_group=group)
        self.timer = node.create_timer(1.0 / state_rate_hz, self._publish_state, callback_group=group)
        self._tick = 0

    def destroy(self):
        self.action.destroy()
        self.node.destroy_timer(self.timer)

    def stop_motion(self) -> None:
        """A stopping node's stop: the running goal canceled, so its next phase never starts (a bare
        `arm.stop()` landing between moves, while the fingers close or a pick is planned, is lost:
        each backend clears its stop when the next move starts), every later goal refused or
        canceled before it moves, and the arm stopped."""
        with self._cancel_lock:
            self._stopping = True
            if self._cancel is not None:
                self._cancel.set()
        self.arm.stop()

    def finish(self) -> Callable[[], bool]:
        """On Ctrl-C or SIGTERM, while the node's rclpy context still runs (spin_node's `finish`):
        the running goal canceled and the arm stopped, so the goal's client gets its result; returns
        a predicate that is true once no goal runs. A stop that fails is logged, not raised: the
        node's `release` stops the arm again before its devices close."""
        try:
            self.stop_motion()
        except Exception as e:  # noqa: BLE001 -- release() runs next and tries the stop again
            self.node.get_logger().error(f"on stop, could not stop the arm ({type(e).__name__}: {e})")
        return lambda: self.wait_idle(0.0)

    def release(self, gripper) -> None:
        """A stopping node's devices released: the arm stopped through `stop_motion`, the motion's
        end awaited, then `gripper` (None when the arm's own) and the arm's link closed."""
        release_devices(self.arm, gripper, stop_motion=self.stop_motion, motion_ended=self.wait_idle,
                        warn=self.node.get_logger().warning)

    def wait_idle(self, timeout_s: float) -> bool:
        """Whether no motion runs, waiting up to `timeout_s` for the running one to end (after
        `arm.stop()`, its goal ends once the backend has stopped the arm)."""
        if not self._busy.acquire(timeout=timeout_s):
            return False
        self._busy.release()
        return True

    # ---- action --------------------------------------------------------------------------
    def _on_goal(self, goal) -> GoalResponse:
        if self._stopping:
            self.node.get_logger().warning("ArmMotion goal rejected: the node is stopping")
            return GoalResponse.REJECT
        if self._busy.locked():
            self.node.get_logger().warning("ArmMotion goal rejected: another motion is running")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, goal_handle) -> CancelResponse:
        with self._cancel_lock:
            if self._cancel is not None:
                self._cancel.set()  # the primitives' watcher calls arm.stop() right away
            else:                   # accepted, not yet running
                self._canceled_early.add(bytes(goal_handle.goal_id.uuid))
        return CancelResponse.ACCEPT

    def _goal_cancel_event(self, goal_handle) -> threading.Event:
        """The running goal's cancel Event, already set when its cancel came before it ran or the
        node is stopping."""
        cancel = threading.Event()
        with self._cancel_lock:
            self._cancel = cancel
            goal_id = bytes(goal_handle.goal_id.uuid)
            if goal_id in self._canceled_early or goal_handle.is_cancel_requested or self._stopping:
                cancel.set()
            self._canceled_early.clear()    # one goal at a time: older ids can never run
        return cancel

    def _execute(self, goal_handle):
        result = ArmMotion.Result()
        if not self._busy.acquire(blocking=False):
            goal_handle.abort()
            result.error_code, result.message = ErrorCode.BUSY.value, "another motion is running"
            return result
        cancel = self._goal_cancel_event(goal_handle)

        def feedback(phase: str, detail: str, fraction: float):
            self.on_phase(phase)
            if phase == "pre_grasp":    # how its path was found (a hint, a search) and in how long: issue 42
                self.node.get_logger().info(f"ArmMotion pick: {detail}")
            goal_handle.publish_feedback(ArmMotion.Feedback(phase=phase, detail=detail, progress=float(fraction)))

        try:
            wait_connected = getattr(self.arm, "wait_connected", None)
            if wait_connected is not None:  # a reconnect in progress: wait briefly, else say why not
                wait_connected()
            scene = goal_scene(goal_handle.request, self.frame_id)
            outcome = self._run(goal_handle.request, scene, feedback, cancel)
            result.success, result.object_held = True, bool(outcome.object_held)
            result.tcp_path = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in outcome.tcp_path]
            self._publish_markers(scene, outcome.tcp_path)
            goal_handle.succeed()
        except CanceledError as e:
            result.error_code, result.message = ErrorCode.CANCELED.value, str(e)
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
            else:   # stop_motion's: rclpy ends a goal CANCELED only after its client asked for that
                result.message = f"the arm's node is stopping: {e}"
                goal_handle.abort()
        except SpatialManipError as e:
            result.error_code, result.message = e.code.value, e.message
            self.node.get_logger().error(f"ArmMotion failed: {e.code.value}: {e.message}")
            goal_handle.abort()
        except Exception as e:  # noqa: BLE001 - a bug must reach the client as INTERNAL, not kill the node
            result.error_code, result.message = ErrorCode.INTERNAL.value, f"{type(e).__name__}: {e}"
            self.node.get_logger().error(f"ArmMotion internal error: {result.message}")
            goal_handle.abort()
        finally:
            self.on_phase("idle")
            with self._cancel_lock:
                self._cancel = None
            self._busy.release()
        try:
            result.final_pose = convert.pose_stamped(self.arm.tcp_pose(), self.frame_id, self._stamp())
        except SpatialManipError:
            pass  # no pose from a disconnected arm: the error code already says why
        return result

    def _run(self, req, scene: Scene | None, feedback, cancel):
        p = self.primitives
        common = dict(speed_scale=float(req.speed_scale), progress=feedback, cancel=cancel, scene=scene)
        if req.motion == ArmMotion.Goal.MOTION_HOME:
            return p.home(**common)
        if req.motion == ArmMotion.Goal.MOTION_WAYPOINTS:
            if not req.waypoints:
                raise InvalidGoalError("WAYPOINTS needs at least one pose in `waypoints`")
            return p.waypoints([self._matrix(w) for w in req.waypoints], **common)
        if req.motion in (ArmMotion.Goal.MOTION_PICK, ArmMotion.Goal.MOTION_PLACE):
            frame = req.target.header.frame_id
            if frame not in ("", self.frame_id):
                raise InvalidGoalError(f"target must be in frame {self.frame_id!r}, got {frame!r}; transform it first")
            T = self._matrix(req.target.pose)
            approach = float(req.approach_distance) or None
            lift = float(req.lift_height) or None
            a = req.approach_direction
            common["approach_dir"] = approach_direction([a.x, a.y, a.z])
            if req.motion == ArmMotion.Goal.MOTION_PICK:
                width = gripper_width(req.gripper_width, self.gripper_max_width_m)
                return p.pick(T, width_m=width, approach_m=approach, lift_m=lift, target_id=req.target_id, **common)
            return p.place(T, approach_m=approach, retreat_m=lift, **common)
        raise InvalidGoalError(f"unknown motion {req.motion}; use MOTION_PICK=1, PLACE=2, HOME=3, WAYPOINTS=4")

    def _publish_markers(self, scene: Scene | None, tcp_path) -> None:
        """What the motion was planned around and the TCP's planned way (drawing must never fail
        the goal)."""
        try:
            header = PoseStamped().header
            header.frame_id, header.stamp = self.frame_id, self._stamp()
            world = scene_world(scene)
            self.marker_pub.publish(motion_markers(world, np.asarray(tcp_path, float), header, ns="arm_motion"))
        except Exception as e:  # noqa: BLE001
            self.node.get_logger().warning(f"arm motion markers not published: {type(e).__name__}: {e}")

    @staticmethod
    def _matrix(pose) -> np.ndarray:
        try:
            return convert.matrix_from_pose_msg(pose)
        except ValueError as e:
            raise InvalidGoalError(str(e)) from e

    # ---- state ---------------------------------------------------------------------------
    def _stamp(self):
        return self.node.get_clock().now().to_msg()

    def _publish_state(self):
        try:
            q = self.arm.joint_positions()
            T = self.arm.tcp_pose()
        except SpatialManipError:
            q = T = None
        self._tick += 1
        if self.gripper is not None and self._tick % 5 == 0 and not self._busy.locked():
            try:  # the gripper socket is slow: sample it at a fifth of the rate, and not mid-goal
                self._gripper_width = float(self.gripper.width_m())
            except SpatialManipError:
                pass
        stamp = self._stamp()
        finger = FINGER_CLOSED_RAD * (1.0 - self._gripper_width / self.gripper_max_width_m)
        if q is not None and self.publish_arm_state:
            js = JointState(name=list(JOINT_NAMES) + [FINGER_JOINT],
                            position=[float(v) for v in q] + [float(finger)])
            js.header.stamp, js.header.frame_id = stamp, self.frame_id
            self.joint_pub.publish(js)
            self.pose_pub.publish(convert.pose_stamped(T, self.frame_id, stamp))
        elif not self.publish_arm_state and self.gripper is not None:
            js = JointState(name=[FINGER_JOINT], position=[float(finger)])   # robot_state_publisher merges it
            js.header.stamp = stamp
            self.joint_pub.publish(js)
        if self._tick % 10 == 0:
            status = self.arm.safety_status()
            self.running_pub.publish(Bool(data=bool(status.program_running)))
            reason = status.reason()
            if not status.connected and status.detail:  # e.g. "reconnecting to ...: 3 failed attempt(s)"
                reason = f"{reason}; {status.detail}"
            if reason != self._last_status:
                self._last_status = reason
                self.status_pub.publish(String(data=reason))
                if status.ok:  # (rclpy refuses two severities from one call site)
                    self.node.get_logger().info(f"arm status: {reason}")
                else:
                    self.node.get_logger().warning(f"arm status: {reason}")

    def _on_pre_grasp_paths(self, msg) -> None:
        """The grasp service's newest pre-grasp paths, as the next PICK's hints (replacing the last)."""
        plans = getattr(self.primitives, "plans", None)
        if plans is not None and hasattr(plans, "pre_grasp_hints"):
            plans.pre_grasp_hints = pre_grasp_paths(msg)

    def _on_recover(self, _msg):
        recover = getattr(self.arm, "recover", None)
        if recover is None:
            self.node.get_logger().warning("this arm backend has nothing to recover")
            return
        if self._busy.locked():
            self.node.get_logger().warning("recover refused: a motion is running")
            return
        try:
            if not self.arm.is_connected:
                self.arm.reconnect()
            recover()
            self.node.get_logger().info("arm recovered on request: protective stop unlocked, script running")
        except SpatialManipError as e:
            self.node.get_logger().error(f"recover failed: {e.message}")


def release_devices(arm, gripper, *, stop_motion: Callable[[], None], motion_ended: Callable[[float], bool],
                    warn: Callable[[str], None] = lambda msg: None) -> None:
    """A stopping node's devices: the arm stopped first through `stop_motion`, whatever its backend
    (ArmActionServer.stop_motion: a motion still under way must not go on without its server, nor
    its goal's next phase start; `stop()` on an idle arm does nothing), and the motion's end
    awaited (`motion_ended(timeout_s)`, at most STOP_WAIT_S: the ur_driver backend's stop cancels
    its trajectory goal through the link closed next); then the gripper's socket and the arm's link
    closed. Each step runs even if one before it failed (`warn` says which): a failed stop must not
    leave the link open, nor a failed disconnect the arm moving."""
    steps = [("stop the arm", stop_motion), ("see the motion end", lambda: _ended_or_raise(motion_ended))]
    if gripper is not None and hasattr(gripper, "disconnect"):
        steps.append(("disconnect the gripper", gripper.disconnect))
    steps.append(("close the arm's link", arm.close))
    for what, step in steps:
        try:
            step()
        except Exception as e:  # noqa: BLE001 -- the remaining steps still run
            warn(f"on shutdown, could not {what} ({type(e).__name__}: {e})")


def _ended_or_raise(motion_ended: Callable[[float], bool]) -> None:
    if not motion_ended(STOP_WAIT_S):
        raise MotionFailedError(f"the running motion had not ended {STOP_WAIT_S:g} s after the stop")
