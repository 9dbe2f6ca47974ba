"""planner_node's I/O: the camera subscriptions, the workspace description, the scene it
publishes, the grasp service and the arm action, as the `spatial_manip.agent.Ports` the agent
makes its decisions over. Nothing here decides anything."""
from __future__ import annotations

import collections
import json
import os
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Callable

import numpy as np
from geometry_msgs.msg import PoseStamped, Vector3
from sensor_msgs.msg import JointState
from rclpy.action.client import ClientGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import String
from unique_identifier_msgs.msg import UUID

from spatial_manip_interfaces.action import ArmMotion
from spatial_manip_interfaces.msg import Scene as SceneMsg
from spatial_manip_interfaces.srv import ProposeGrasps

from spatial_manip.agent import MOTION_HOME, MOTION_PICK, MOTION_PLACE, MotionRequest, MotionResult
from spatial_manip.errors import (ArmLostError, CanceledError, ErrorCode, MotionFailedError, NoObservationError,
                                  SpatialManipError, StageTimeoutError)
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.nodes.convert import (camera_info_to_intrinsics, image_to_array, joints_from_msg,
                                         matrix_from_pose_msg, points_to_cloud, pose_stamped, scene_to_msg,
                                         stamp_to_seconds)
from spatial_manip.nodes.camera_tf import CameraPoseFromTf
from spatial_manip.nodes.futures import wait_future
from spatial_manip.nodes.runner import ActionClient
from spatial_manip.observation import ObservationBuffer, RGBDObservation
from spatial_manip.perception.look_ahead import ARM_STILL_TOL_RAD
from spatial_manip.perception import SegmentationHints
from spatial_manip.scene import Scene, SceneFormatError
from spatial_manip.workspace.catalogue import load_library_file, with_library

MOTIONS = {MOTION_PICK: ArmMotion.Goal.MOTION_PICK, MOTION_PLACE: ArmMotion.Goal.MOTION_PLACE,
           MOTION_HOME: ArmMotion.Goal.MOTION_HOME}
ACCEPT_WAIT_S = 10.0        # how long the arm server may take to answer a motion goal
# a canceled motion: how long to wait for the arm server's final answer (it answers once the arm
# backend's stop has returned) and then for /joint_states to show the arm standing still. Short:
# a node shutting down has the launcher's grace period only (runner.FINISH_S, 2.5 s, for both and the result)
STOP_ANSWER_S = 1.0
STILL_WAIT_S = 0.6
STILL_WINDOW_S = 0.1        # standing still: no joint moved more than STILL_TOL_RAD over this long
STILL_TOL_RAD = 1e-3
# a frame to confirm a set-down on is one stamped this long after the arm's last motion as the joint
# states' stamps tell (a camera stamps a frame at its exposure; the sim's before it reads the world)
FRAME_AFTER_MOTION_S = 0.03
# the joint states' and the camera's stamps are compared only when each stream's stamps lie about as far
# behind their arrival (the least lag over its recent messages: the same clock, whatever the load; a frame's
# render and transport took 1-2 s at load 17): a camera or an arm on a clock of its own falls back to the
# frames' arrival. Compared as the newest stamp of each (2 s), a long motion that held the simulated world
# left the newest frame older than that, and the look after it went by arrival: a frame of the arm mid-way
# that arrived late was taken for one after its stop (the demo's VERIFY_FAILED at load 17)
CLOCKS_AGREE_S = 5.0
JOINTS_FRESH_WAIT_S = 0.3   # for a joint state sent after the question (the last motion's stamp is then known)
ALREADY_THERE_S = 1.0       # frames that arrived this long before the question are judged by their stamps too
# a look waits for its frame the configured observation_timeout_s, or this many of the camera's recent periods
# if longer: a loaded machine renders and delivers frames slower (NO_OBSERVATION at load 17: no frame in 5 s)
CAMERA_PERIODS_WAIT = 4


class ArmStops:
    """When the arm last moved, by the joint states' own stamps (the clock the camera stamps its
    frames on, in the simulator and on a cell whose drivers share the host's): a reading more than
    ARM_STILL_TOL_RAD from the reference (the first, then each that moved) marks motion. Thread-safe;
    `heard` counts readings, so a caller can wait for one sent after its question."""

    def __init__(self, keep: int = 20):
        self._cv = threading.Condition()
        self._ref: np.ndarray | None = None
        self.moved_stamp_s: float | None = None     # the stamp of the last reading that showed motion
        self.latest_stamp_s: float | None = None
        self.heard = 0
        self._lags = collections.deque(maxlen=keep)   # arrival (monotonic) minus stamp, recent readings

    def note(self, q, stamp_s: float, received_s: float | None = None) -> None:
        """A reading with its stamp, heard at `received_s` (monotonic; default now)."""
        q = np.asarray(q, float)
        if np.shape(q) != (6,) or not np.all(np.isfinite(q)) or not stamp_s > 0:
            return
        with self._cv:
            if self._ref is None or float(np.max(np.abs(q - self._ref))) > ARM_STILL_TOL_RAD:
                self._ref, self.moved_stamp_s = q, float(stamp_s)
            self.latest_stamp_s = float(stamp_s)
            self._lags.append((time.monotonic() if received_s is None else received_s) - float(stamp_s))
            self.heard += 1
            self._cv.notify_all()

    def stamp_lag_s(self) -> float | None:
        """The least lag of the recent readings' stamps behind their arrival (ObservationBuffer.stamp_lag_s)."""
        with self._cv:
            return min(self._lags) if self._lags else None

    def after(self, heard: int, timeout_s: float) -> tuple[float | None, float | None]:
        """(last motion's stamp, latest reading's stamp) once a reading beyond the `heard`-th has
        come (the arm's motion up to the question is then all heard), or (None, None) after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        with self._cv:
            while self.heard <= heard:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, None
                self._cv.wait(left)
            return self.moved_stamp_s, self.latest_stamp_s


def stamps_agree(buffer: ObservationBuffer, arm: ArmStops) -> bool:
    """Whether the camera's and the joint states' stamps are on one clock (CLOCKS_AGREE_S)."""
    frames, joints = buffer.stamp_lag_s(), arm.stamp_lag_s()
    return frames is not None and joints is not None and abs(frames - joints) <= CLOCKS_AGREE_S


def arm_still_since_s(buffer: ObservationBuffer, arm: ArmStops) -> float:
    """The stamp from which a frame shows the arm where the joint states heard so far leave it:
    FRAME_AFTER_MOTION_S after its last motion; 0 when the stamps cannot tell (no motion heard, a
    camera or an arm on a clock of its own). A frame exposed while the arm still moved shows it
    elsewhere than the joints the look masks it at, and hides what it stood over, however late
    it arrives: under load a frame of the arm mid-way home arrived after the arm's stop, and the
    verification look took it (the demo's VERIFY_FAILED at load 17: the set-down book not seen)."""
    moved = arm.moved_stamp_s
    if moved is None or not stamps_agree(buffer, arm):
        return 0.0
    return moved + FRAME_AFTER_MOTION_S


def frame_after_arm_stop(buffer: ObservationBuffer, arm: ArmStops, since_stamp_s: float, *, timeout_s: float,
                         cancel: threading.Event) -> RGBDObservation | None:
    """The first frame stamped FRAME_AFTER_MOTION_S after the arm's last motion (and at or after
    `since_stamp_s`, the workspace's), the motion over (a motion's result came): a frame already
    there serves, so the result need not wait EXPOSURE_MARGIN_S and a camera period on arrival
    times (issue 42, arm stopped -> result). None when the stamps cannot tell: no joint state after
    the question within JOINTS_FRESH_WAIT_S, unstamped frames or joints, or the two clocks apart by
    more than CLOCKS_AGREE_S (the caller judges by arrival then); None too after `timeout_s`."""
    asked = time.monotonic()
    moved_s, latest_s = arm.after(arm.heard, JOINTS_FRESH_WAIT_S)
    newest = buffer.newest_stamp_s()
    if moved_s is None or latest_s is None or newest is None or newest <= 0 or not stamps_agree(buffer, arm):
        return None
    since = max(since_stamp_s, moved_s + FRAME_AFTER_MOTION_S)
    obs, _ = frame_of_workspace(buffer, since, timeout_s=timeout_s, cancel=cancel,
                                arrived_after_s=asked - ALREADY_THERE_S)
    return obs if obs is not None and obs.stamp_s >= since else None


class PlannerPorts:
    def __init__(self, node, group, params: dict):
        """`params`: planner_node's parameters (planner_node.PARAMETERS), topics and timeouts."""
        self.node, self.p = node, params
        self.trace_root = Path(os.path.expanduser(str(self.p["trace_dir"])))
        self.buffer = ObservationBuffer(max_skew_s=float(self.p["max_skew_s"]),
                                        require_segmentation=self.p["segmenter"] == "ground_truth")
        # the workspace and the segmenter's hints made from it when it arrived, swapped as one
        self._workspace: tuple[Scene | None, SegmentationHints | None] = (None, None)
        # when the workspace in use came, on the node's clock (the frames' stamps'): a frame
        # stamped before it shows the previous one (0: a file's, in use from the start)
        self._workspace_since_stamp_s = 0.0
        self._T_base_tcp: np.ndarray | None = None
        self._tcp_seen_at: float | None = None        # monotonic time of the last TCP pose
        self._q: np.ndarray | None = None              # the arm's latest joints
        self.arm_stops = ArmStops()                    # when the arm last moved, by the joint states' stamps
        self._arm_goal = None
        # the goal's cancel Event (planner_node sets its own; run_motion keeps the agent's): the
        # grasp request, whose port takes none, is abandoned on it too. Not observe's: an idle
        # look passes the node's stop Event there
        self.goal_cancel = threading.Event()
        self._warned: set[str] = set()
        # whether a look that found no frame in its wait waits once more (planner_node: only while a
        # goal runs or waits; an idle look held the look lock twice as long for no one), and who is told
        self.goal_waiting: Callable[[], bool] = lambda: True
        self.on_camera_wait: Callable[[str], None] = lambda note: None
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        # reliable delivery keeps large images whole on a loaded machine, but only matches
        # reliable publishers; best effort (the default) matches every camera driver
        images = QoSProfile(depth=2) if self.p["image_qos"] == "reliable" else qos_profile_sensor_data
        subs = [(Image, "color_topic", self._on_color, images),
                (Image, "depth_topic", self._on_depth, images),
                (CameraInfo, "camera_info_topic", self._on_info, images),
                (PoseStamped, "extrinsics_topic", self._on_extrinsics, latched),
                (String, "workspace_topic", self._on_workspace, latched),
                (PoseStamped, "tcp_topic", self._on_tcp, qos_profile_sensor_data),
                (JointState, "joint_states_topic", self._on_joints, qos_profile_sensor_data)]
        if self.p["segmenter"] == "ground_truth":  # only the simulator publishes this
            subs.append((Image, "segmentation_topic", self._on_segmentation, images))
        # latched state (extrinsics, workspace) in arrival order: on a reentrant group the
        # historical message and the one a reset sends right after it can race, and the old won
        in_order = MutuallyExclusiveCallbackGroup()
        for msg_type, param, cb, qos in subs:
            node.create_subscription(msg_type, self.p[param], cb, qos,
                                     callback_group=in_order if qos is latched else group)
        # the enrolled library, read and checked before the node spins (the callbacks above use it): a bad file refuses the start
        self._library = load_library_file(self.p["library_file"]) if self.p["library_file"] else None
        if self._library is not None:
            node.get_logger().info(f"library_file: {len(self._library.entries)} enrolled objects, the workspace's catalogue")
        if self.p["workspace_file"]:
            workspace = self._with_library(Scene.load(self.p["workspace_file"]))
            self._workspace = (workspace, SegmentationHints.from_scene(workspace))   # a bad fixture box fails here
        # the camera pose from TF (the calibration on /tf_static); the extrinsics topic is the fallback
        self.camera_tf = CameraPoseFromTf(node, self.buffer.set_extrinsics, base_frame=self.p["tf_base_frame"],
                                          camera_frame=self.p["tf_camera_frame"], callback_group=in_order)
        self.scene_pub = node.create_publisher(SceneMsg, "spatial_manip/scene", latched)
        self.ack_pub = node.create_publisher(String, self.p["workspace_ack_topic"], latched)
        self.grasp_client = node.create_client(ProposeGrasps, self.p["grasp_service"], callback_group=group)
        self.arm_client = ActionClient(node, ArmMotion, self.p["arm_action"], callback_group=group)

    # --- subscriptions ---------------------------------------------------------------------
    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.node.get_logger().warn(text)

    def _on_color(self, msg: Image) -> None:
        try:
            self.buffer.add_color(stamp_to_seconds(msg.header.stamp), image_to_array(msg), time.monotonic())
        except ValueError as e:
            self._warn_once("color", f"ignoring colour images: {e}")

    def _on_depth(self, msg: Image) -> None:
        try:
            arr = image_to_array(msg)
        except ValueError as e:
            self._warn_once("depth", f"ignoring depth images: {e}")
            return
        # 16UC1 is millimetres (the RealSense driver's convention); 32FC1 is metres.
        depth_m = arr.astype(np.float32) * (0.001 if arr.dtype == np.uint16 else 1.0)
        self.buffer.add_depth(stamp_to_seconds(msg.header.stamp), depth_m, time.monotonic())

    def _on_info(self, msg: CameraInfo) -> None:
        try:
            self.buffer.set_intrinsics(camera_info_to_intrinsics(msg))
        except ValueError as e:
            self._warn_once("info", f"ignoring camera_info: {e}")

    def _on_extrinsics(self, msg: PoseStamped) -> None:
        if self.camera_tf.has_pose:
            return                     # TF's pose wins
        try:
            # stamped: a simulator's pose per frame pairs with its own frame only (observation.CameraPoses)
            self.buffer.set_extrinsics(matrix_from_pose_msg(msg.pose), stamp_to_seconds(msg.header.stamp))
        except ValueError as e:
            self._warn_once("extrinsics", f"ignoring camera extrinsics: {e}")

    def _on_workspace(self, msg: String) -> None:
        try:
            workspace = self._with_library(Scene.from_dict(json.loads(msg.data)))
            hints = SegmentationHints.from_scene(workspace)     # refuses bad fixture boxes by name
        except (ValueError, SceneFormatError) as e:
            self._warn_once("workspace", f"ignoring the workspace description: {e}")
            return
        # the stamp first: an observe that reads the new workspace must not take the old bound
        self._workspace_since_stamp_s = self.node.get_clock().now().nanoseconds * 1e-9
        # a new Scene object each time tells the agent (and LookAhead) it is new
        self._workspace = (workspace, hints)
        # whoever changed the workspace (a simulator reset) learns when goals will use it
        self.ack_pub.publish(String(data=str(workspace.extra.get("revision", ""))))

    def _with_library(self, workspace: Scene) -> Scene:
        """The workspace with the library_file's objects as its catalogue (as it came without one)."""
        return with_library(workspace, self._library) if self._library is not None else workspace

    def _on_segmentation(self, msg: Image) -> None:
        workspace = self._workspace[0]
        ids = (workspace.extra.get("segment_ids") if workspace else None) or []
        seg = image_to_array(msg).astype(np.int32) - 1
        self.buffer.add_segmentation(stamp_to_seconds(msg.header.stamp), seg, dict(enumerate(ids)))

    def _on_tcp(self, msg: PoseStamped) -> None:
        try:
            self._T_base_tcp = matrix_from_pose_msg(msg.pose)
            self._tcp_seen_at = time.monotonic()
        except ValueError:
            pass

    # --- the agent's ports ----------------------------------------------------------------------
    def new_trace_dir(self) -> str:
        return str(self.trace_root / datetime.now().strftime("%Y%m%d-%H%M%S-%f"))

    def workspace(self) -> tuple[Scene | None, SegmentationHints | None]:
        return self._workspace

    def tcp_pose(self) -> np.ndarray | None:
        return self._T_base_tcp

    def _on_joints(self, msg: JointState) -> None:
        q = joints_from_msg(msg)
        if q is not None:          # a message of other joints (a gripper's alone) says nothing of the arm
            self._q = q
            self.arm_stops.note(q, stamp_to_seconds(msg.header.stamp))

    def joint_positions(self) -> np.ndarray | None:
        return self._q

    def publish_scene(self, scene: Scene) -> None:
        self.scene_pub.publish(scene_to_msg(scene, "base", self.node.get_clock().now().to_msg()))

    def observe(self, cancel: threading.Event, arrived_after_s: float | None = None) -> RGBDObservation:
        """`arrived_after_s`: a frame that arrived since this (monotonic) shows the table as it is
        now (None: only one that arrives after the question does). Either way the frame is stamped
        after the workspace in use came and after the arm's last motion as the joint states heard
        up to the question tell (`arm_still_since_s`): arrival alone let a frame of the arm mid-way,
        delivered late, serve as one after its stop."""
        asked, timeout = time.monotonic(), self.observation_wait_s()
        arrived_after_s = asked if arrived_after_s is None else arrived_after_s
        if self.arm_stops.heard:       # the arm's motion up to the question heard first (one state period, as a rule)
            self.arm_stops.after(self.arm_stops.heard, JOINTS_FRESH_WAIT_S)
        workspace_s, arm_s = self._workspace_since_stamp_s, arm_still_since_s(self.buffer, self.arm_stops)
        since_s = max(workspace_s, arm_s)
        obs, refused_stamp_s = frame_of_workspace(self.buffer, since_s, timeout_s=timeout, cancel=cancel,
                                                  arrived_after_s=arrived_after_s)
        retry_s = float(self.p["observation_retry_s"])
        if obs is None and retry_s > 0 and not cancel.is_set() and self.goal_waiting():
            # once more, for a goal: a loaded cell's camera delivers late rather than never; the person
            # is told, and a cancel still ends it
            self.on_camera_wait(f"no synchronized RGB-D pair within {timeout:g} s (missing: "
                                f"{self._missing(workspace_s, arm_s, refused_stamp_s)}); the camera may be slowed "
                                f"by load: waiting once more, up to {retry_s:g} s")
            obs, refused_stamp_s = frame_of_workspace(self.buffer, since_s, timeout_s=retry_s, cancel=cancel,
                                                      arrived_after_s=arrived_after_s)
            timeout += retry_s
        if obs is None:
            if cancel.is_set():
                raise CanceledError("the goal was canceled while waiting for the camera")
            raise NoObservationError(
                f"no synchronized RGB-D observation within {timeout:g} s (missing: "
                f"{self._missing(workspace_s, arm_s, refused_stamp_s)}); "
                f"is the camera (or sim) node running and publishing on the configured topics?")
        return obs

    def _missing(self, workspace_s: float, arm_s: float, refused_stamp_s: float | None) -> str:
        """What a look that found no frame lacked: the streams not heard, or why the newest frame did not serve."""
        missing = self.buffer.missing()
        if missing:
            return ", ".join(missing)
        if refused_stamp_s is None:
            return "a fresh colour/depth pair with matching stamps"
        after = f"the workspace came at {workspace_s:.3f} s" if arm_s <= workspace_s else \
            f"the arm last moved at {arm_s - FRAME_AFTER_MOTION_S:.3f} s (by the joint states' stamps)"
        return (f"a frame stamped after {after}; the newest was stamped {refused_stamp_s:.3f} s: do the "
                "camera's and the planner's clocks agree?")

    def observation_wait_s(self) -> float:
        """How long a look waits for its frame: observation_timeout_s, or CAMERA_PERIODS_WAIT of the
        camera's recent periods when longer (a loaded machine's camera is slower, not gone)."""
        period = self.buffer.frame_period_s()
        return max(float(self.p["observation_timeout_s"]), CAMERA_PERIODS_WAIT * period if period else 0.0)

    def observe_after_arm_stop(self, cancel: threading.Event) -> RGBDObservation | None:
        """After a motion's result: the first frame exposed after the arm stopped, by the stamps
        (`frame_after_arm_stop`); None when they cannot tell (then `observe` by arrival)."""
        return frame_after_arm_stop(self.buffer, self.arm_stops, self._workspace_since_stamp_s,
                                    timeout_s=self.observation_wait_s(), cancel=cancel)

    def propose_grasps(self, target_id: str, max_grasps: int) -> GraspGroup:
        """Grasps of `target_id` in the scene last published, from grasp_node, best first."""
        timeout = float(self.p["grasp_timeout_s"])
        if not self.grasp_client.wait_for_service(timeout_sec=timeout):
            raise StageTimeoutError(f"no grasp service at {self.p['grasp_service']}: is grasp_node running?")
        request = ProposeGrasps.Request(target_id=target_id, max_grasps=max_grasps)
        res = _wait_unless_canceled(self.grasp_client.call_async(request), timeout, self.goal_cancel)
        if self.goal_cancel.is_set():
            raise CanceledError("the goal was canceled while grasp_node proposed grasps; the arm did not move")
        if res is None:
            raise StageTimeoutError(f"the grasp service did not answer within {self.p['grasp_timeout_s']} s")
        if not res.success or not res.grasps.grasps:
            raise SpatialManipError(f"no grasp for {target_id}: {res.message}",
                                    res.error_code or ErrorCode.GRASP_FAILED.value)
        return _grasp_group(res.grasps)

    def arm_ready(self) -> bool:
        return self.arm_client.server_is_ready()

    def run_motion(self, request: MotionRequest, cancel: threading.Event) -> MotionResult:
        self.goal_cancel = cancel
        result = self._run_arm(_arm_goal(request), cancel)
        return MotionResult(success=result.success, object_held=result.object_held, message=result.message,
                            error_code=result.error_code, tcp_path=tuple((p.x, p.y, p.z) for p in result.tcp_path),
                            final_pose=_final_pose(result))

    def _run_arm(self, goal, cancel: threading.Event):
        if cancel.is_set():       # before anything is sent: nothing to stop
            raise CanceledError("the goal was canceled before the motion was sent; the arm did not move")
        if not self.arm_client.wait_for_server(timeout_sec=10.0):
            raise MotionFailedError(f"no arm action server at {self.p['arm_action']}: is arm_node (or sim_node) running?")
        # our own goal id: a goal whose acceptance never arrives can still be canceled by it
        goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        sent = self.arm_client.send_goal_async(goal, goal_uuid=goal_id)
        try:
            handle = _wait_unless_canceled(sent, ACCEPT_WAIT_S, cancel, check=self._check_arm_alive)
        except ArmLostError as lost:
            # the server may yet take the goal (only its pose stream stalled): stop it by our id
            raise ArmLostError(f"{lost}; {self._stop_arm(self._late_handle(sent, goal_id))}") from None
        if cancel.is_set():
            # the arm server may take the goal after this instant: learn whether it did, and stop it
            stopped = self._stop_arm(handle or self._late_handle(sent, goal_id))
            raise CanceledError(f"the goal was canceled as the motion was sent; {stopped}")
        if handle is None or not handle.accepted:
            if handle is None:
                raise ArmLostError(f"the arm server did not answer the motion goal within {ACCEPT_WAIT_S:g} s "
                                   "(is arm_node or sim_node running?)")
            raise MotionFailedError("the arm refused the motion goal")
        self._arm_goal = handle
        try:
            fut = handle.get_result_async()
            deadline = time.monotonic() + float(self.p["motion_timeout_s"])
            while not fut.done():
                if cancel.is_set():
                    raise CanceledError(f"the goal was canceled during motion; {self._stop_arm(handle, fut)}")
                if time.monotonic() > deadline:
                    self._stop_arm(handle, fut)
                    raise StageTimeoutError(f"the motion took longer than {self.p['motion_timeout_s']} s; stopped")
                self._check_arm_alive()
                time.sleep(0.02)
            return fut.result().result
        finally:
            self._arm_goal = None

    def _late_handle(self, sent, goal_id):
        """The handle of a goal sent just before a cancel: its answer if it comes within
        STOP_ANSWER_S (short: a stopping node has FINISH_S), else a handle made from our goal id
        (canceling a goal the server never took does nothing)."""
        handle = wait_future(sent, STOP_ANSWER_S)
        if handle is None:
            answer = ArmMotion.Impl.SendGoalService.Response(accepted=True)
            handle = ClientGoalHandle(self.arm_client, goal_id, answer)
        return handle

    def _stop_arm(self, handle, result_future=None) -> str:
        """Cancel the arm goal, wait for the arm server's final answer (sent once the backend's
        stop has returned) and then for the joints to stand still; says how that went. Only then
        may the goal answer CANCELED: a cancel never leaves the arm moving behind the answer."""
        if not handle.accepted:
            return "the arm had refused the motion and did not move"
        deadline = time.monotonic() + STOP_ANSWER_S
        wait_future(handle.cancel_goal_async(), STOP_ANSWER_S)
        if result_future is None:
            result_future = handle.get_result_async()
        answered = wait_future(result_future, max(0.0, deadline - time.monotonic())) is not None
        if not self._wait_still(STILL_WAIT_S):
            return f"the arm was told to stop but still moved {STILL_WAIT_S:g} s later"
        if not answered:
            return (f"the arm server did not confirm the stop within {STOP_ANSWER_S:g} s "
                    "(is arm_node or sim_node running?)")
        return "the arm was stopped"

    def _wait_still(self, timeout_s: float) -> bool:
        """True once no joint moved more than STILL_TOL_RAD over STILL_WINDOW_S (or nothing
        reports the joints), False if the arm still moves after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        last = self._q
        while True:
            time.sleep(STILL_WINDOW_S)
            q = self._q
            if last is None or q is None or float(np.max(np.abs(q - last))) <= STILL_TOL_RAD:
                return True
            if time.monotonic() > deadline:
                self.node.get_logger().warn(f"the arm still moves {timeout_s:g} s after its goal was canceled")
                return False
            last = q

    def _check_arm_alive(self) -> None:
        """An arm server that dies mid-motion never answers: its TCP pose stream stopping (the
        arm and sim nodes publish it all the time) says so within seconds, not at the timeout."""
        lost_s = float(self.p["arm_lost_after_s"])
        if self._tcp_seen_at is not None and time.monotonic() - self._tcp_seen_at > lost_s:
            self._tcp_seen_at = None      # the next motion starts fresh, should the arm come back
            raise ArmLostError(f"arm server lost: no TCP pose on {self.p['tcp_topic']} for {lost_s:g} s "
                                    f"during the motion (is arm_node or sim_node running?)")

    def stop_motion(self) -> None:
        if self._arm_goal is not None:
            self._arm_goal.cancel_goal_async()

    def close(self) -> None:
        self.stop_motion()


def _final_pose(result) -> np.ndarray | None:
    """The motion's final TCP pose, when the arm server said it (in base; a result without one
    leaves the pose at the message's default, an all-zero quaternion)."""
    if result.final_pose.header.frame_id != "base":
        return None
    try:
        return matrix_from_pose_msg(result.final_pose.pose)
    except ValueError:
        return None


def _grasp_group(msg) -> GraspGroup:
    """A GraspArray as one GraspGroup, in the frame its header names (grasp_node answers in base)."""
    poses = np.array([matrix_from_pose_msg(g.pose) for g in msg.grasps]).reshape(-1, 4, 4)
    return GraspGroup.from_parts(scores=[g.score for g in msg.grasps], widths=[g.width for g in msg.grasps],
                                 heights=[g.height for g in msg.grasps], depths=[g.depth for g in msg.grasps],
                                 rotations=poses[:, :3, :3], translations=poses[:, :3, 3],
                                 object_ids=[g.object_id for g in msg.grasps], frame_id=msg.header.frame_id or "base")


def _arm_goal(request: MotionRequest) -> ArmMotion.Goal:
    goal = ArmMotion.Goal(motion=MOTIONS[request.kind], gripper_width=float(request.gripper_width_m),
                          lift_height=float(request.lift_height_m),
                          approach_distance=float(request.approach_distance_m))
    if request.target is not None:
        goal.target = pose_stamped(request.target, "base")
    if request.approach_direction is not None:
        d = request.approach_direction
        goal.approach_direction = Vector3(x=float(d[0]), y=float(d[1]), z=float(d[2]))
    if request.scene is not None:
        _put_scene(goal, request.scene)
    goal.target_id = request.target_id
    return goal


def _put_scene(goal: ArmMotion.Goal, scene: Scene) -> None:
    """The scene the motion plans around as the goal's typed fields: the boxes as a Scene message,
    the obstacle map the agent keeps in `extra["cloud"]` (motion.obstacle_map) as a PointCloud2."""
    cloud = scene.extra.get("cloud")
    goal.scene = scene_to_msg(scene, "base")
    if cloud:
        goal.obstacle_cloud = points_to_cloud(np.asarray(cloud["points"], float).reshape(-1, 3), "base")
        goal.cloud_voxel_m = float(cloud.get("voxel_m", 0.0))
        goal.cloud_clearance_m = float(cloud.get("clearance_m", 0.0))


def frame_of_workspace(buffer: ObservationBuffer, since_stamp_s: float, *, timeout_s: float,
                       cancel: threading.Event, arrived_after_s: float | None = None
                       ) -> tuple[RGBDObservation | None, float | None]:
    """A frame that arrives after the question (or after `arrived_after_s`, monotonic: the caller
    knows nothing moved since, so the newest frame already there serves at once) and was stamped
    at or after `since_stamp_s` (when the workspace in use came), or None after `timeout_s`; with
    the stamp of the last frame refused as older (None: none was). Arrival alone is not enough: one
    already queued may show the world before a reset or an arm motion that has just finished (one
    camera period of latency), and a frame of the old scene still queued in the subscription
    (images keep 2) can arrive after the reset's acknowledgement. A frame stamped 0 (a driver that
    stamps none) cannot be told apart."""
    deadline, refused = time.monotonic() + timeout_s, None
    asked = time.monotonic() if arrived_after_s is None else min(arrived_after_s, time.monotonic())
    while (left := deadline - time.monotonic()) > 0:
        obs = buffer.wait_pair(timeout_s=left, newer_than_s=asked, now=time.monotonic, cancel=cancel)
        if obs is None or obs.stamp_s <= 0 or obs.stamp_s >= since_stamp_s:
            return obs, refused
        refused, asked = obs.stamp_s, time.monotonic()    # the next frame to arrive may be the new scene's
    return None, refused


def _wait_unless_canceled(future, timeout_s: float, cancel: threading.Event, check=None):
    """The future's result, or None after `timeout_s` or as soon as `cancel` is set; `check`,
    if given, is called on every poll and may raise to end the wait (e.g. the arm server lost)."""
    deadline = time.monotonic() + timeout_s
    while not future.done() and not cancel.is_set() and time.monotonic() < deadline:
        if check is not None:
            check()
        time.sleep(0.02)
    return future.result() if future.done() else None
