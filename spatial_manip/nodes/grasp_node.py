"""grasp_node: the `ProposeGrasps` service (/spatial_manip/propose_grasps) over the grasping core.

Keeps recent aligned depth images with the camera pose of each (observation.CameraPoses), camera_info, the latest scene and the
arm's joints (/joint_states); a request names a scene object, a box, or carries a cloud. Replies
with ranked, reachable grasps in the base frame (graspnetAPI convention) and publishes a
MarkerArray of them; with grasp.yaml's `motion_check` on, only grasps whose pre-grasp is planned
collision-free from the current joints and whose approach is clear, and a second MarkerArray
(/spatial_manip/motion_markers) of the collision bodies and the best grasp's TCP path. Errors
come back as error_code + message; no exception leaves a callback.

    ros2 run spatial_manip grasp_node --ros-args -p backend:=antipodal
"""
from __future__ import annotations

import collections
import os
import sys
import threading
import time
from dataclasses import replace

import numpy as np
from geometry_msgs.msg import Point, PoseStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image, JointState
from spatial_manip_interfaces.msg import Grasp as GraspMsg
from spatial_manip_interfaces.msg import PreGraspPaths
from spatial_manip_interfaces.msg import Scene as SceneMsg
from spatial_manip_interfaces.srv import ProposeGrasps
from visualization_msgs.msg import Marker, MarkerArray

import spatial_manip.grasping  # noqa: F401  (registers the "grasp" role)
from spatial_manip.control.config import arm_overrides, load_arm_config, load_home_q, load_kinematics, load_workspace
from spatial_manip.errors import ErrorCode
from spatial_manip.geometry.pointcloud import preload_point_cloud_library
from spatial_manip.grasping.gripper import GripperGeometry, load_grasp_config
from spatial_manip.grasping.motion_check import MotionCheck, load_motion_check_config
from spatial_manip.grasping.service import GraspResult, GraspService, ServiceConfig, TargetBox
from spatial_manip.grasping.ahead import GraspsAhead, Job, likely_order, load_grasps_ahead_config, unchanged_ids
from spatial_manip.motion.factory import make_planner
from spatial_manip.motion.markers import motion_markers
from spatial_manip.nodes import convert
from spatial_manip.nodes.arm_server import PRE_GRASP_PATHS_TOPIC, pre_grasp_paths_msg
from spatial_manip.nodes.camera_tf import CameraPoseFromTf
from spatial_manip.nodes.parameters import declare_parameters
from spatial_manip.nodes.runner import spin_node
from spatial_manip.observation import CameraPoses
from spatial_manip.paths import params_file
from spatial_manip.registry import make

CAMERA_AGREE_M = 0.02      # the extrinsics and the scene see from the same camera pose within this
# how long a request waits for a depth image whose pose agrees (then goes on as is): a simulator's pose per
# frame and its depth travel apart, and at load 16 none of the 5 depths kept had its pose within 1 s
# (pick-71-00004 at e82c178: NO_OBSERVATION, the goal lost; issue 42's latency bench). Only a miss waits
EXTRINSICS_WAIT_S = 3.0
SCENE_WAIT_S = 3.0         # for a scene holding the requested id, published just before the request
DEPTH_KEEP = 5             # recent depth images kept, to pair one with its own camera pose
AHEAD_POLL_S = 0.1         # how often the proposing-ahead thread asks whether a job is due
# a request for the object being proposed for ahead waits for that (up to this long, then the job is
# stopped) rather than proposing the same again beside it on the same cores. As long as the planner's
# grasp_timeout_s (30 s): under load 30-45 one proposal took 4-11 s (pick 62), so a request that gave up
# at 5 s on a job for its own object and proposed anew beside it could only answer later than the job,
# with two proposals sharing the cores. At 10 s (the planner's former timeout) a white bottle's job 16 s
# under way at load 11-14 was stopped at 10 s and proposed anew (8.3 s), the planner gone at 10 s
# (objects-88-00007 TIMEOUT; -00003's own proposal took 15.6 s: TIMEOUT too)
AHEAD_WAIT_S = 30.0
# a job proposing ahead runs at the node's priority until a goal shows itself (a request, a new look,
# an arm motion), then this far below it (Linux niceness applies per thread): it uses the CPU the goal's
# perception, planning and motion leave. Niced from the start, it was starved on a loaded host (3-7 s a
# job beside other processes at the node's niceness, latency-bench seed 71 at load 7-23) and the
# target's grasps were not ready when the goal came 8 s after a reset
AHEAD_NICE = 10
ASKED_CATEGORIES_KEPT = 3  # the last requests whose objects' categories go first among the jobs ahead


class GraspNode(Node):
    def __init__(self):
        super().__init__("grasp_node")
        self.p = p = declare_parameters(self)   # spatial_manip/parameters.py
        gripper, backend, backend_cfg = load_grasp_config(p["config_file"] or params_file("grasp.yaml"), p["backend"])
        self.service_core = self._grasp_service(p, gripper, backend, backend_cfg)
        self.gripper: GripperGeometry = gripper
        self._lock = threading.Lock()
        self.info = self.scene = None
        self._scene_at = 0.0             # when the newest scene came (monotonic)
        self.depths = collections.deque(maxlen=DEPTH_KEEP)   # newest last
        self.poses = CameraPoses()       # the camera pose of each depth image (fixed, or one per frame)
        self.joints, self.joints_at = None, 0.0            # latest UR joints and when (monotonic)
        # the categories the last requests asked for (a person asks for a book after a book): their
        # objects go first among the grasps proposed ahead
        self._asked_categories: collections.deque = collections.deque(maxlen=ASKED_CATEGORIES_KEPT)
        group = ReentrantCallbackGroup()
        # sensor data: best effort matches any publisher (realsense2_camera's SENSOR_DATA, the UR
        # driver, camera_node reliable:=false); a reliable subscription never hears a best-effort one
        sensor = QoSProfile(depth=2) if p["image_qos"] == "reliable" else qos_profile_sensor_data
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(Image, p["depth_topic"], self._on_depth, sensor, callback_group=group)
        self.create_subscription(CameraInfo, p["depth_info_topic"], self._on_info, sensor, callback_group=group)
        in_order = MutuallyExclusiveCallbackGroup()   # latched state: the newest must win
        # deeper than latched state needs: a simulator sends a pose per frame, and each must wait for its frame
        poses = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(PoseStamped, p["extrinsics_topic"], self._on_extrinsics, poses, callback_group=in_order)
        # the camera pose from TF (the calibration on /tf_static); the extrinsics topic is the fallback
        self.camera_tf = CameraPoseFromTf(self, self._on_tf_camera_pose, base_frame=p["tf_base_frame"],
                                          camera_frame=p["tf_camera_frame"], callback_group=in_order)
        self.create_subscription(SceneMsg, p["scene_topic"], self._on_scene, latched, callback_group=in_order)
        self.create_subscription(JointState, p["joint_states_topic"], self._on_joints, sensor, callback_group=group)
        self.markers = self.create_publisher(MarkerArray, p["marker_topic"], latched)
        self.motion_markers = self.create_publisher(MarkerArray, p["motion_marker_topic"], latched)
        # the kept grasps' pre-grasp paths: the arm server's pick takes one rather than search again
        self.pre_grasp_paths = self.create_publisher(PreGraspPaths, PRE_GRASP_PATHS_TOPIC, latched)
        self.create_service(ProposeGrasps, p["service"], self._on_request, callback_group=group)
        preload_point_cloud_library()   # the proposers' point-cloud library, not at the first request
        # grasps of every graspable object of the newest look, proposed before a pick asks (issue 42),
        # on a service of their own: the motion check's planner is not shared between threads
        self.ahead = GraspsAhead(load_grasps_ahead_config(p["config_file"] or params_file("grasp.yaml")),
                                 yield_job=self._yield_ahead_job, resume_job=self._resume_ahead_job)
        self._stop = threading.Event()
        self._nice = os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0
        self._job_lock = threading.Lock()
        self._job_tid: int | None = None      # the native id of the thread running a job ahead
        self._job_yields = False              # the job handed out (or under way) is to yield
        if self.ahead.config.enabled:
            self._service_ahead = self._grasp_service(p, gripper, backend, backend_cfg)
            self._service_ahead.should_stop = self._ahead_job_stale
            self._job: Job | None = None      # the job under way (its staleness stops its proposing)
            self._ahead_thread = threading.Thread(target=self._propose_ahead, name="grasps_ahead", daemon=True)
            self._ahead_thread.start()
        self.get_logger().info(f"grasp_node ready: backend {backend}, service {p['service']}")

    def _grasp_service(self, p: dict, gripper, backend: str, backend_cfg: dict) -> GraspService:
        return GraspService(make("grasp", backend, gripper=gripper, **backend_cfg), gripper, self.service_config(p),
                            kinematics=self._kinematics(p), motion=self._motion_check(p))

    @classmethod
    def service_config(cls, p: dict) -> ServiceConfig:
        """The grasp service's settings from the node's parameters. Its workspace box is the arm's
        safety workspace (arm.yaml, `arm_backend`'s overrides): a grasp whose TCP lies outside it
        is one the arm's envelope would refuse, and a cell sets its workspace once."""
        lo, hi = load_workspace(p["arm_config_file"], p["arm_backend"], p["ur_type"])
        return ServiceConfig(workspace_min_m=lo, workspace_max_m=hi, pixel_stride=p["pixel_stride"],
                             max_grasps=p["max_grasps"], reference_q=cls._home_q(p))

    # ---- inputs ------------------------------------------------------------------------------
    @staticmethod
    def _kinematics(p: dict):
        return load_kinematics(p["arm_config_file"], p["arm_backend"], p["ur_type"]) if p["check_reachability"] else None

    @staticmethod
    def _home_q(p: dict):
        return load_home_q(p["arm_config_file"], p["arm_backend"], p["ur_type"]) if p["check_reachability"] else None

    def _motion_check(self, p: dict):
        """The motion stage grasp.yaml asks for, on the arm's planner (arm.yaml, `arm_backend`'s
        overrides: the sim's TCP), or None (off, or the motion libraries missing: warned)."""
        cfg = load_motion_check_config(p["config_file"] or params_file("grasp.yaml"))
        if not cfg.enabled:
            return None

        try:
            arm = load_arm_config(p["arm_config_file"] or None, arm_overrides(p["arm_backend"], p["ur_type"]) or None)
            return MotionCheck(make_planner(arm), cfg)
        except ImportError as e:
            self.get_logger().warning(f"motion check off: the motion planner cannot load ({e}); "
                                      "install ompl, pin, coal and toppra")
            return None

    def _on_joints(self, msg):
        q = convert.joints_from_msg(msg)
        if q is not None:
            with self._lock:
                self.joints, self.joints_at = q, time.monotonic()
            self.ahead.note_joints(q)

    def _q_now(self):
        """The arm's current joints, or None when none arrived or the latest is older than
        joint_state_max_age_s (a stopped driver: its last joints may no longer be true)."""
        with self._lock:
            q, at = self.joints, self.joints_at
        max_age = float(self.p["joint_state_max_age_s"])
        if q is None or (max_age > 0 and time.monotonic() - at > max_age):
            return None
        return q

    def _on_depth(self, msg):
        with self._lock:
            self.depths.append(msg)
            self.poses.note_frame(convert.stamp_to_seconds(msg.header.stamp))

    def _on_info(self, msg):
        with self._lock:
            self.info = msg

    def _on_extrinsics(self, msg):
        if self.camera_tf.has_pose:
            return                     # TF's pose wins
        try:
            T = convert.matrix_from_pose_msg(msg.pose)
            with self._lock:
                self.poses.add(T, convert.stamp_to_seconds(msg.header.stamp))
        except ValueError as e:
            self.get_logger().warning(f"ignoring camera extrinsics: {e}")

    def _on_tf_camera_pose(self, T_base_camera) -> None:
        with self._lock:
            self.poses.add(T_base_camera)          # the calibration: fixed

    def _on_scene(self, msg):
        with self._lock:
            last, self.scene = self.scene, msg
            kept = unchanged_ids(last, msg)
            if not kept:
                self._scene_at = time.monotonic()
        order = self._likely_order(msg)
        if kept:
            self.ahead.same_look(msg, kept, order)   # published again, names from the words
        else:
            self.ahead.new_scene(msg, order)

    def _likely_order(self, msg) -> list[str]:
        """The scene's graspable objects in the order a pick is likely to ask for them: the
        categories the last requests asked for first, then the ones a superlative names, as seen
        from the scene's viewer (ahead.likely_order)."""
        with self._lock:
            asked = list(self._asked_categories)
        v = msg.viewer.position
        viewer = None if v.x == v.y == v.z == 0.0 else (v.x, v.y, v.z)   # a scene that left it at the default
        return likely_order(msg.objects, asked, viewer)

    def _note_asked(self, target_id: str) -> None:
        """Remember the category of the object a request asked for (the next look's jobs put it first)."""
        with self._lock:
            obj = next((o for o in (self.scene.objects if self.scene is not None else []) if o.id == target_id), None)
            if obj is not None and obj.category:
                self._asked_categories.append(obj.category)

    # ---- service -------------------------------------------------------------------------------
    def _on_request(self, request, response):
        try:
            return self._respond(request, response)
        except Exception as e:  # never let an exception escape into the executor
            response.success, response.error_code = False, ErrorCode.INTERNAL.value
            response.message = f"{type(e).__name__}: {e}"
            response.grasps.grasps = []
            return response

    def _respond(self, request, response):
        try:
            result, stamp = self._handle(request)
        except Exception as e:
            result, stamp = GraspResult(grasps=None, error_code=ErrorCode.INTERNAL.value,
                                        message=f"{type(e).__name__}: {e}"), None
        response.success = result.success
        response.error_code = result.error_code
        response.message = result.message
        response.grasps.header.frame_id = "base"
        if stamp is not None:
            response.grasps.header.stamp = stamp
        if result.grasps is not None and len(result.grasps):
            response.grasps.grasps = [self._grasp_msg(g, result.object_name) for g in result.grasps]
            self.markers.publish(self._marker_array(result.grasps, response.grasps.header))
        self._publish_motion(result, response.grasps.header)
        self._publish_paths(result)
        # rclpy forbids changing the severity of one call site, hence two calls
        if result.success:
            self.get_logger().info(f"propose_grasps: OK {result.message}")
        else:
            self.get_logger().warning(f"propose_grasps: {result.error_code} {result.message}")
        return response

    @staticmethod
    def _camera_gap_m(T_base_cam, scene) -> float:
        """How far the camera of a depth image lies from the camera the scene was seen from (0
        without a scene)."""
        if T_base_cam is None or scene is None:
            return 0.0
        b = scene.viewer.position
        if b.x == b.y == b.z == 0.0:
            return 0.0           # a scene that left its viewer at the message's default says nothing
        return float(np.linalg.norm(np.asarray(T_base_cam)[:3, 3] - [b.x, b.y, b.z]))

    def _newest_posed_depth(self):
        """(depth, its camera pose): the newest depth image whose pose is known (the caller holds
        the lock); (newest depth, None) when none is."""
        for depth in reversed(self.depths):
            T = self.poses.for_frame(convert.stamp_to_seconds(depth.header.stamp))
            if T is not None:
                return depth, T
        return (self.depths[-1] if self.depths else None), None

    def _inputs(self):
        """(depth, info, the depth's camera pose, scene), waiting up to EXTRINSICS_WAIT_S for a
        depth image seen from the scene's camera: after a reset the new scene can arrive before a
        frame of the new world (or its pose), and the old world's depth misses every object."""
        deadline = time.monotonic() + EXTRINSICS_WAIT_S
        while True:
            with self._lock:
                (depth, T), info, scene = self._newest_posed_depth(), self.info, self.scene
                if T is None and depth is None:
                    T = self.poses.latest          # a cloud request needs no depth image
            if (T is not None and self._camera_gap_m(T, scene) <= CAMERA_AGREE_M) or time.monotonic() > deadline:
                return depth, info, T, scene
            time.sleep(0.02)

    def _await_scene_holding(self, target_id: str) -> None:
        """Wait up to SCENE_WAIT_S for a scene that holds `target_id`: the latched scene and the
        request travel apart, so a scene published just before the request (a look, or a
        detection the instruction's words named) can arrive after it. Done before `_inputs`, so
        the depth image is matched to the camera of the scene the request is answered from."""
        deadline = time.monotonic() + SCENE_WAIT_S
        while time.monotonic() < deadline:
            with self._lock:
                if self.scene is not None and any(o.id == target_id for o in self.scene.objects):
                    return
            time.sleep(0.02)

    def _handle(self, request) -> tuple[GraspResult, object]:
        """A request's answer: the grasps proposed ahead on this look from these joints, if there
        are, else proposed now."""
        if request.target_id:
            self._await_scene_holding(request.target_id)
            self._note_asked(request.target_id)
            self.ahead.asked(int(request.max_grasps), request.target_id)
        hit = self.ahead.take(self.scene, request.target_id, int(request.max_grasps), wait_s=AHEAD_WAIT_S) \
            if request.target_id else None
        if hit is not None:
            (result, stamp), age_s = hit
            n = int(request.max_grasps)
            best = result.grasps[:n] if n > 0 and result.grasps is not None and len(result.grasps) > n else result.grasps
            return replace(result, grasps=best, message=f"{result.message}; proposed ahead on this look from these "
                                                        f"joints, {age_s:.2f} s before the request"), stamp
        return self._propose_now(request)

    def _propose_ahead(self) -> None:
        """The thread that hands out GraspsAhead's jobs until the node closes, each run on a thread
        of its own (at this one's priority, the node's) so that it alone yields to a goal."""
        warned: list[str] = []
        while not self._stop.wait(AHEAD_POLL_S):
            job = self.ahead.next_job()
            if job is not None:
                worker = threading.Thread(target=self._run_ahead, args=(job, warned), name="grasps_ahead_job",
                                          daemon=True)
                worker.start()
                worker.join()

    def _yield_ahead_job(self) -> None:
        """Lower the running job's thread AHEAD_NICE below the node (or have it do so as it starts)."""
        with self._job_lock:
            self._job_yields = True
            if self._job_tid is not None:
                _renice(self._job_tid, self._nice + AHEAD_NICE)

    def _resume_ahead_job(self) -> None:
        """A request waits for the running job (its own object): back to the node's priority."""
        with self._job_lock:
            self._job_yields = False
            if self._job_tid is not None:
                _renice(self._job_tid, self._nice)

    def _ahead_job_stale(self) -> bool:
        """Whether the job under way can no longer be kept (a newer look, an arm motion, the node
        stopping): its proposing stops at its next step rather than spend the CPU a goal needs, or
        keep a stopping node (`close`) waiting for it."""
        job = self._job
        return self._stop.is_set() or job is not None and self.ahead.stale(job)

    def _run_ahead(self, job: Job, warned: list[str]) -> None:
        """Propose for one job and hand the result back. Never raises (it runs on a thread of its
        own): a failure is logged once and the job dropped; the request proposes for itself."""
        with self._job_lock:
            self._job_tid, self._job = threading.get_native_id(), job
            if self._job_yields:                # a goal came between the job's handing out and now
                _renice(self._job_tid, self._nice + AHEAD_NICE)
        try:
            self._propose_job(job, warned)
        finally:
            with self._job_lock:
                self._job_tid, self._job_yields, self._job = None, False, None

    def _propose_job(self, job: Job, warned: list[str]) -> None:
        result, keep = None, False
        t0 = time.monotonic()
        try:
            known_joints = self._q_now() is not None
            result = self._propose_now(ProposeGrasps.Request(target_id=job.object_id, max_grasps=job.max_grasps),
                                       self._service_ahead)
            keep = known_joints and self._depends_only_on_look(result[0])
            # when each object's grasps were ready after its look came (issue 42's latency bench)
            self.get_logger().info(f"grasps ahead for {job.object_id}: {'kept' if keep else 'not kept'}, "
                                   f"{1e3 * (time.monotonic() - t0):.0f} ms, {time.monotonic() - self._scene_at:.2f} s "
                                   f"after the look came; {result[0].message}")
        except Exception as e:
            if not warned:
                warned.append(type(e).__name__)
                self.get_logger().warning(f"proposing grasps ahead failed ({type(e).__name__}: {e}); "
                                          "requests propose for themselves")
        try:
            self.ahead.put(job, result, keep)
        except Exception:  # bookkeeping only
            pass

    @staticmethod
    def _depends_only_on_look(result: GraspResult) -> bool:
        """A result a request on the same look from the same joints would get too: grasps, or none
        that hold, with the motion check made (not skipped for want of joints)."""
        checked = result.motion is None or not result.motion.skipped
        return checked and (result.success or result.error_code == ErrorCode.GRASP_FAILED.value)

    def close(self) -> None:
        self._stop.set()
        if self.ahead.config.enabled:
            self._ahead_thread.join(timeout=2.0)

    def _propose_now(self, request, service: GraspService | None = None) -> tuple[GraspResult, object]:
        """Grasps proposed now, by `service` (default: the requests' own)."""
        service = service or self.service_core
        depth, info, T_base_cam, scene = self._inputs()
        if T_base_cam is None:
            what = "for the latest depth image (one per frame, stamped like it)" if self.poses.per_frame else "yet"
            return GraspResult(None, ErrorCode.NO_OBSERVATION.value,
                               f"no camera extrinsics on {self.p['extrinsics_topic']} {what}"), None
        n = int(request.max_grasps)
        core_scene = convert.scene_from_msg(scene) if scene is not None else None
        q_now = self._q_now()
        size = request.target_box.size
        if not request.target_id and not any((size.x, size.y, size.z)):
            if request.cloud.width * request.cloud.height == 0:
                return GraspResult(None, ErrorCode.INVALID_GOAL.value,
                                   "give one of target_id, target_box (non-zero size) or cloud"), None
            pts = convert.cloud_to_points(request.cloud)
            if request.cloud.header.frame_id and request.cloud.header.frame_id != "base":
                pts = pts @ T_base_cam[:3, :3].T + T_base_cam[:3, 3]  # camera-frame cloud -> base
            return (service.propose_for_cloud(pts, T_base_cam, n, scene=core_scene, q_now=q_now),
                    request.cloud.header.stamp)
        if depth is None or info is None:
            return GraspResult(None, ErrorCode.NO_OBSERVATION.value,
                               f"no depth image or camera_info yet on {self.p['depth_topic']}"), None
        if request.target_id:
            obj = next((o for o in (scene.objects if scene else []) if o.id == request.target_id), None)
            if obj is None:
                known = [o.id for o in scene.objects] if scene else []
                return GraspResult(None, ErrorCode.TARGET_NOT_FOUND.value,
                                   f"object {request.target_id!r} is not in the latest scene "
                                   f"(known: {known}); is {self.p['scene_topic']} published?"), None
            box_msg = obj
        else:
            box_msg = request.target_box
        T_obj = convert.matrix_from_pose_msg(box_msg.pose)
        box = TargetBox(T_obj[:3, 3], np.array([box_msg.size.x, box_msg.size.y, box_msg.size.z]), T_obj[:3, :3],
                        box_msg.id or request.target_id)
        depth_m = convert.image_to_array(depth).astype(np.float32)
        if depth.encoding in ("16UC1", "mono16"):
            depth_m *= 0.001  # the RealSense driver publishes millimetres
        intr = convert.camera_info_to_intrinsics(info)
        result = service.propose_for_box(depth_m, intr, T_base_cam, box, n, scene=core_scene, q_now=q_now)
        if result.error_code == ErrorCode.TARGET_NOT_FOUND.value:
            # what to look at next time (pick-22-00003 once found 0 points where perception saw 1578)
            age = self.get_clock().now().nanoseconds * 1e-9 - (depth.header.stamp.sec + depth.header.stamp.nanosec * 1e-9)
            result.message += (f" (depth image {age:.2f} s old; the extrinsics' camera "
                               f"{self._camera_gap_m(T_base_cam, scene):.3f} m from the scene's)")
        return result, depth.header.stamp

    # ---- outputs -------------------------------------------------------------------------------
    def _grasp_msg(self, g, name: str) -> GraspMsg:
        return GraspMsg(score=float(g.score), width=float(g.width), height=float(g.height), depth=float(g.depth),
                        pose=convert.pose_msg_from_matrix(g.matrix()), object_id=int(g.object_id), object_name=name)

    def _publish_motion(self, result: GraspResult, header) -> None:
        """The collision bodies the grasps were checked against and the best grasp's TCP path
        (pre-grasp plan, then approach); a skipped check is warned (the reply says it too)."""
        report = result.motion
        if report is None:
            return
        if report.skipped:
            self.get_logger().warning(f"propose_grasps: {report.summary()}")
        if report.world is None:
            return
        trace = report.tcp_trace(report.kept[0], self.service_core.motion.planner.envelope.kin) if report.kept else None
        self.motion_markers.publish(motion_markers(report.world, trace, header))

    def _publish_paths(self, result: GraspResult) -> None:
        """The answer's grasps' pre-grasp paths (best first), for the arm server's pick."""
        report = result.motion
        if report is None or report.skipped or not result.success:
            return
        n = len(result.grasps) if result.grasps is not None else 0     # the answer's (a result made ahead: its best)
        paths = [report.paths[i].waypoints for i in report.kept[:n] if i in report.paths]
        if paths:
            self.pre_grasp_paths.publish(pre_grasp_paths_msg(paths, self.get_clock().now().to_msg()))

    def _marker_array(self, grasps, header) -> MarkerArray:
        arr = MarkerArray(markers=[Marker(action=Marker.DELETEALL)])
        for i, g in enumerate(grasps[:5]):
            m = Marker(header=header, ns="grasps", id=i, type=Marker.LINE_LIST, action=Marker.ADD)
            m.scale.x = 0.004
            m.color.r, m.color.g, m.color.a = float(1 - g.score), float(g.score), 1.0
            a, y = g.approach, g.closing_axis
            t, hw = g.translation, g.width / 2
            tips = [t + s * hw * y + g.depth * a for s in (-1, 1)]
            roots = [t + s * hw * y + (g.depth - self.gripper.finger_length_m) * a for s in (-1, 1)]
            mid = t + (g.depth - self.gripper.finger_length_m) * a
            segs = [(roots[0], tips[0]), (roots[1], tips[1]), (roots[0], roots[1]), (mid, mid - 0.05 * a)]
            m.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for seg in segs for p in seg]
            arr.markers.append(m)
        return arr


def _renice(thread_id: int, nice: int) -> None:
    """Set one thread's niceness (Linux: per thread); where that is not allowed it keeps its own."""
    try:
        os.setpriority(os.PRIO_PROCESS, thread_id, nice)
    except (AttributeError, OSError):
        pass


def main(args=None) -> int:
    return spin_node(GraspNode, args=args, threads=None, close=lambda n: n.close())


if __name__ == "__main__":
    sys.exit(main())
