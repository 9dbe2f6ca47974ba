"""The ROS side of each pipeline stage for planner_node: camera subscriptions, the workspace
description, the grasp service, the arm action. Perception and reasoning are core objects
chosen by parameters; every decision is made in the core."""
from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime
from pathlib import Path

import numpy as np
from geometry_msgs.msg import PoseStamped, Vector3
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.action import ActionClient
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import String

from spatial_manip_interfaces.msg import Scene as SceneMsg

from spatial_manip.bringup.goal_client import wait_future
from spatial_manip.errors import (CanceledError, ErrorCode, GraspFailedError, MotionFailedError,
                                  NoObservationError, SpatialManipError, StageTimeoutError)
from spatial_manip.control.primitives import lift_height_for
from spatial_manip.geometry.relations import point_in_box
from spatial_manip.geometry.transforms import invert, make_transform, quat_to_matrix
from spatial_manip.nodes.convert import (camera_info_to_intrinsics, image_to_array, matrix_from_pose_msg,
                                         pose_stamped, scene_to_msg, stamp_to_seconds)
from spatial_manip.observation import ObservationBuffer, RGBDObservation
from spatial_manip.pipeline import Decision
from spatial_manip.scene import FIXTURE_CATEGORIES as FIXTURES
from spatial_manip.scene import Scene, SceneFormatError

PARAMETERS = {
    "color_topic": "/camera/color/image_raw",
    "depth_topic": "/camera/aligned_depth_to_color/image_raw",
    "camera_info_topic": "/camera/color/camera_info",
    "extrinsics_topic": "/camera/extrinsics",
    "workspace_topic": "/spatial_manip/workspace",   # fixtures, slots and object catalogue (JSON scene)
    "workspace_file": "",             # the same as a file, for a real cell
    "workspace_ack_topic": "/spatial_manip/planner/workspace_revision",  # the revision in use (latched)
    "tcp_topic": "/tcp_pose_broadcaster/pose",
    "segmentation_topic": "/sim/segmentation",  # used by the ground_truth segmenter only
    "image_qos": "sensor_data",       # sensor_data (best effort: matches any driver) | reliable
    "observation_timeout_s": 5.0,     # how long a goal waits for a synchronized RGB-D pair
    "max_skew_s": 0.05,               # colour/depth stamps further apart are not a pair
    "segmenter": "classical",         # perception backend (see spatial_manip.perception)
    "planner": "program",             # reasoning backend (see spatial_manip.reasoning)
    "unnamed_frame": "intrinsic",     # program planner: left/right of a reference whose front was only
                                      # assumed, when the words name no frame: intrinsic | viewer | ask
    "grasp_service": "/spatial_manip/propose_grasps",
    "grasp_timeout_s": 10.0,
    "max_grasp_tries": 5,             # top-k grasps tried before GRASP_FAILED
    "home_before_perceiving": True,   # MOTION_HOME (the arm out of view) before each look, unless holding
    "arm_config_file": "",            # arm.yaml for the place-pose IK check ("" = the default file)
    "arm_backend": "",                # that file's per-backend overrides (sim: the model's TCP)
    "arm_action": "/spatial_manip/arm_motion",
    "motion_timeout_s": 60.0,
    "arm_lost_after_s": 3.0,          # no TCP pose for this long during a motion: the arm server is gone
    "default_max_attempts": 3,        # attempts (with reflection) for a goal that leaves max_attempts at 0
    "verify_tolerance_m": 0.03,       # ESPIRE: within 3 cm of the expected position
    "trace_dir": "traces",            # one sub-directory per goal
}


def declare_port_parameters(node) -> None:
    from rcl_interfaces.msg import ParameterDescriptor

    for name, default in PARAMETERS.items():
        # dynamic typing: `-p observation_timeout_s:=2` arrives as an integer
        node.declare_parameter(name, default, ParameterDescriptor(dynamic_typing=isinstance(default, float)))


SLOT_VERIFY_RADIUS_M = 0.15   # a slot place is verified by an object in the slot this close to the set-down pose
CANCEL_ACK_S = 1.5          # how long a canceled goal waits for the arm server to confirm the stop
HELD_WAIT_S = 2.0             # how long a place waits for the workspace to say what is in the gripper


class PlannerPorts:
    def __init__(self, node, group):
        self.node = node
        self.p = {n: node.get_parameter(n).value for n in PARAMETERS}
        self.trace_root = Path(os.path.expanduser(str(self.p["trace_dir"])))
        self.buffer = ObservationBuffer(max_skew_s=float(self.p["max_skew_s"]),
                                        require_segmentation=self.p["segmenter"] == "ground_truth")
        self.workspace: Scene | None = None
        self.hints = None                 # the segmenter's hints from the workspace, made when it arrives
        self._segmenter = None
        self._planner = None
        self._in_hand: np.ndarray | None = None        # T_object_tcp of what we hold
        self._held_id: str | None = None
        self._held_size: np.ndarray | None = None       # box size of the held object
        self._grip_width = 0.0
        self._kinematics = None
        self._T_base_tcp: np.ndarray | None = None
        self._tcp_seen_at: float | None = None        # monotonic time of the last TCP pose
        self._arm_goal = None
        self._warned: set[str] = set()
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        # reliable delivery keeps large images whole on a loaded machine, but only matches
        # reliable publishers; best effort (the default) matches every camera driver
        images = QoSProfile(depth=2) if self.p["image_qos"] == "reliable" else qos_profile_sensor_data
        subs = [(Image, "color_topic", self._on_color, images),
                (Image, "depth_topic", self._on_depth, images),
                (CameraInfo, "camera_info_topic", self._on_info, images),
                (PoseStamped, "extrinsics_topic", self._on_extrinsics, latched),
                (String, "workspace_topic", self._on_workspace, latched),
                (PoseStamped, "tcp_topic", self._on_tcp, qos_profile_sensor_data)]
        if self.p["segmenter"] == "ground_truth":  # only the simulator publishes this
            subs.append((Image, "segmentation_topic", self._on_segmentation, images))
        # latched state (extrinsics, workspace) in arrival order: on a reentrant group the
        # historical message and the one a reset sends right after it can race, and the old won
        in_order = MutuallyExclusiveCallbackGroup()
        for msg_type, param, cb, qos in subs:
            node.create_subscription(msg_type, self.p[param], cb, qos,
                                     callback_group=in_order if qos is latched else group)
        if self.p["workspace_file"]:
            from spatial_manip.perception import SegmentationHints

            self.workspace = Scene.load(self.p["workspace_file"])
            self.hints = SegmentationHints.from_scene(self.workspace)   # a bad fixture box fails here, by name
        self.scene_pub = node.create_publisher(SceneMsg, "/spatial_manip/scene", latched)
        self.ack_pub = node.create_publisher(String, self.p["workspace_ack_topic"], latched)
        from spatial_manip_interfaces.action import ArmMotion
        from spatial_manip_interfaces.srv import ProposeGrasps

        if self.p["planner"] == "program":    # built now, so a bad setting stops the node at start-up
            self._planner = self._make_planner()
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
        try:
            self.buffer.set_extrinsics(matrix_from_pose_msg(msg.pose))
        except ValueError as e:
            self._warn_once("extrinsics", f"ignoring camera extrinsics: {e}")

    def _on_workspace(self, msg: String) -> None:
        from spatial_manip.perception import SegmentationHints

        try:
            workspace = Scene.from_dict(json.loads(msg.data))
            hints = SegmentationHints.from_scene(workspace)   # refuses bad fixture boxes by name
            self.workspace, self.hints = workspace, hints
        except (ValueError, SceneFormatError) as e:
            self._warn_once("workspace", f"ignoring the workspace description: {e}")
            return
        held = self.workspace.held_object()  # a new workspace (e.g. a sim reset) says what is in hand
        self._held_id = held.id if held else None
        self._in_hand = np.asarray(held.extra["T_object_tcp"], float) if held and "T_object_tcp" in held.extra else None
        self._held_size = np.asarray(held.size, float) if held else None
        self._grip_width = float(np.min(held.size)) if held else 0.0
        # whoever changed the workspace (a simulator reset) learns when goals will use it
        self.ack_pub.publish(String(data=str(self.workspace.extra.get("revision", ""))))

    def _on_segmentation(self, msg: Image) -> None:
        ids = (self.workspace.extra.get("segment_ids") if self.workspace else None) or []
        seg = image_to_array(msg).astype(np.int32) - 1
        self.buffer.add_segmentation(stamp_to_seconds(msg.header.stamp), seg, dict(enumerate(ids)))

    def _on_tcp(self, msg: PoseStamped) -> None:
        try:
            self._T_base_tcp = matrix_from_pose_msg(msg.pose)
            self._tcp_seen_at = time.monotonic()
        except ValueError:
            pass

    # --- perceive --------------------------------------------------------------------------
    def new_trace_dir(self) -> str:
        return str(self.trace_root / datetime.now().strftime("%Y%m%d-%H%M%S-%f"))

    def observe(self, cancel: threading.Event) -> RGBDObservation:
        timeout = float(self.p["observation_timeout_s"])
        # only a frame that arrives after the question: one already queued may show the world
        # before a reset or an arm motion that has just finished (one camera period of latency)
        obs = self.buffer.wait_pair(timeout_s=timeout, newer_than_s=time.monotonic(),
                                    now=time.monotonic, cancel=cancel)
        if obs is None:
            if cancel.is_set():
                raise CanceledError("the goal was canceled while waiting for the camera")
            missing = self.buffer.missing()
            what = ", ".join(missing) if missing else "a fresh colour/depth pair with matching stamps"
            raise NoObservationError(
                f"no synchronized RGB-D observation within {timeout:g} s (missing: {what}); "
                f"is the camera (or sim) node running and publishing on the configured topics?")
        return obs

    def perceive(self, obs: RGBDObservation) -> Scene:
        from spatial_manip.perception import detections_to_scene, make_segmenter

        if self._segmenter is None:
            self._segmenter = make_segmenter(str(self.p["segmenter"]))
        ws = self.workspace
        fixtures = [o for o in ws.objects if o.category in FIXTURES] if ws else []
        fixture_ids = {o.id for o in fixtures}
        # fixtures come from the workspace description; a segment of one is not a new object
        detections = [d for d in self._segmenter.segment(obs, hints=self.hints) if d.id not in fixture_ids]
        fronts = [o.id for o in ws.objects if o.oriented] if ws else []
        scene = detections_to_scene(detections, obs, regions=ws.regions if ws else (), extra_objects=fixtures,
                                    fronts=fronts)
        if self._held_id is not None:
            scene = self._mark_held(scene)
        self.scene_pub.publish(scene_to_msg(scene, "base", self.node.get_clock().now().to_msg()))
        return scene

    def _mark_held(self, scene: Scene) -> Scene:
        """The object in the gripper, placed where the TCP says it is (perception of an object
        inside the fingers is unreliable; the in-hand transform is known from the grasp)."""
        from dataclasses import replace

        others = [replace(o, held=False) for o in scene.objects if o.id != self._held_id]
        seen = next((o for o in scene.objects if o.id == self._held_id), None)
        ref = seen or (self.workspace.get(self._held_id) if self.workspace and self._held_id in self.workspace.ids() else None)
        if ref is None:
            return scene.with_objects(others)
        held = replace(ref, held=True)
        if self._held_size is not None:      # measured before it was in the fingers (or configured)
            held = replace(held, size=self._held_size)
        if self._in_hand is not None and self._T_base_tcp is not None:
            T_obj = self._T_base_tcp @ invert(self._in_hand)
            held = replace(held, center=T_obj[:3, 3], rotation=T_obj[:3, :3])
        # movable objects near the held one are the same book seen in the fingers: drop them
        others = [o for o in others if o.category in FIXTURES or np.linalg.norm(o.center - held.center) > 0.05]
        return scene.with_objects(others + [held])

    # --- reason ----------------------------------------------------------------------------
    def _make_planner(self):
        from spatial_manip.reasoning.planner import make_planner

        name = str(self.p["planner"])
        cfg = {"unnamed_frame": str(self.p["unnamed_frame"])} if name == "program" else {}
        try:
            return make_planner(name, **cfg)
        except ValueError as e:
            raise SpatialManipError(f"planner_node parameters: {e}", ErrorCode.INVALID_GOAL) from e

    def held_id(self) -> str | None:
        return self._held_id

    def reason(self, scene: Scene, goal, obs, reflection, trace) -> Decision:
        from spatial_manip.reasoning.compound import plan_compound, replan_place
        from spatial_manip.reasoning.reflection import RETRY_PLACE

        if self._planner is None:
            self._planner = self._make_planner()

        def plan_one(sc, text, kind):
            result = self._planner.plan(sc, text, observation=obs, task_kind=kind)
            trace.event("program_step", instruction=text, program=result.program, steps=result.trace,
                        targets=result.targets, error=result.error, notes=result.notes)
            if not result.ok:
                raise SpatialManipError(result.error["message"], result.error["code"])
            return result

        if reflection is not None and reflection.retry == RETRY_PLACE and scene.held_object() is not None:
            # the pick worked and the object is in the fingers: its words describe nothing on the
            # table any more; plan the place part again on this look
            trace.event("retry_place", holding=scene.held_object().id, instruction=goal.instruction)
            pick, place = None, replan_place(scene, goal.instruction, plan_one)
        else:
            pick, place = plan_compound(scene, goal.instruction, goal.task_kind, plan_one)
        targets = (pick.targets if pick else []) + (place.targets if place else [])
        place_T = None
        if place is not None and place.place_pose is not None:
            place_T = make_transform(quat_to_matrix(place.place_pose.orientation), place.place_pose.position)
        pick_ids = list(pick.targets) if pick else []
        if reflection is not None:     # objects whose grasps all failed go last
            pick_ids.sort(key=lambda i: i in reflection.failed_grasp_ids)
        pick_id = pick_ids[0] if pick_ids else None
        if place is not None and pick is None:
            held = scene.held_object()
            self._held_id = held.id if held else self._held_id
        program = " ; ".join(r.program for r in (pick, place) if r is not None and r.program)
        action = "pick_and_place" if pick and place else ("pick" if pick else "place")
        # Any object the words allow may be picked instead when the first cannot be grasped; a
        # placement was planned for the first one's size, so a pick-and-place keeps to it.
        alternatives = pick_ids[1:] if action == "pick" else []
        avoid = list(reflection.failed_place_poses) if reflection is not None else []
        # no pose word ("pose=keep"): the set-down may change the pose class when it must
        free = place is not None and "pose=keep" in (place.program or "")
        # how the words were read (the frame of each left/right and why, spelling fixes): the
        # result message repeats them, so a user is never surprised silently
        notes = [n for r in (pick, place) if r is not None for n in r.notes]
        return Decision(action, targets, pick_id=pick_id, pick_alternatives=alternatives, place_pose=place_T,
                        program=program, notes=notes, details={"scene": scene, "avoid_place_poses": avoid,
                                                               "any_pose_class": free})

    # --- grasp -----------------------------------------------------------------------------
    def propose_grasps(self, decision: Decision, scene: Scene, obs) -> list:
        from spatial_manip_interfaces.srv import ProposeGrasps

        if not self.grasp_client.wait_for_service(timeout_sec=float(self.p["grasp_timeout_s"])):
            raise StageTimeoutError(f"no grasp service at {self.p['grasp_service']}: is grasp_node running?")
        req = ProposeGrasps.Request(target_id=decision.pick_id, max_grasps=int(self.p["max_grasp_tries"]) * 3)
        res = wait_future(self.grasp_client.call_async(req), float(self.p["grasp_timeout_s"]))
        if res is None:
            raise StageTimeoutError(f"the grasp service did not answer within {self.p['grasp_timeout_s']} s")
        if not res.success or not res.grasps.grasps:
            raise SpatialManipError(f"no grasp for {decision.pick_id}: {res.message}",
                                    res.error_code or ErrorCode.GRASP_FAILED.value)
        return [{"pose": matrix_from_pose_msg(g.pose), "score": g.score, "width": g.width, "depth": g.depth}
                for g in res.grasps.grasps]

    # --- move ------------------------------------------------------------------------------
    def pick(self, grasps: list, decision: Decision, cancel: threading.Event) -> dict:
        from spatial_manip.grasping.gripper import GripperGeometry
        from spatial_manip_interfaces.action import ArmMotion

        gripper = GripperGeometry()
        obj = decision.details["scene"].get(decision.pick_id)
        T_obj = make_transform(obj.rotation, obj.center)
        tcps = [gripper.tcp_poses(g["pose"][None], [g["depth"]])[0] for g in grasps]
        if decision.place_pose is not None:    # a pick-and-place: only grasps it can set down as asked
            grasps, tcps = self._grasps_that_place(grasps, tcps, T_obj, obj.size, decision)
        errors = []
        for g, T_tcp in list(zip(grasps, tcps))[: int(self.p["max_grasp_tries"])]:
            goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_PICK, target=pose_stamped(T_tcp, "base"),
                                  gripper_width=float(min(gripper.max_width_m, g["width"] + 0.02)),
                                  lift_height=lift_height_for(obj.size))
            result = self._run_arm(goal, cancel)
            if result.success and result.object_held:
                self._in_hand = invert(T_obj) @ T_tcp
                self._held_id = decision.pick_id
                self._held_size, self._grip_width = np.asarray(obj.size, float), float(g["width"])
                return {"grasp_pose": T_tcp, "score": g["score"], "width": g["width"]}
            errors.append(f"{result.error_code or 'GRASP_FAILED'}: {result.message or 'nothing in the gripper'}")
            if result.error_code == "CANCELED" or cancel.is_set():
                break     # a missed grasp or a blocked approach: the next grasp may still work
        raise GraspFailedError(f"{len(errors)} grasp(s) of {decision.pick_id} failed: " + "; ".join(errors))

    def _grasps_that_place(self, grasps, tcps, T_obj, size, decision) -> tuple[list, list]:
        """The grasps (and TCP poses) with which the object can be set down at the planned place
        in its pose class: a book held by its edge with a finger under it cannot be laid flat.
        Checked before the arm moves, so a task that cannot finish is refused instead of
        leaving the object in the air."""
        from spatial_manip.errors import UnreachableError

        kept, why = [], ""
        entry = self._slot_entry(decision)[1]
        for g, T_tcp in zip(grasps, tcps):
            try:
                self._fit_place(decision, entry, (), np.asarray(size, float), invert(T_obj) @ T_tcp,
                                float(g["width"]))
                kept.append((g, T_tcp))
            except UnreachableError as e:
                why = e.message
        if not kept:
            raise UnreachableError(f"none of the {len(grasps)} grasps of {decision.pick_id} can set it down at the "
                                   f"planned place (the last: {why}); nothing was moved")
        return [g for g, _ in kept], [t for _, t in kept]

    def _slot_entry(self, decision: Decision):
        from spatial_manip.grasping.place_fit import SlotEntry, slot_at

        scene = decision.details.get("scene")
        slot = slot_at(scene, decision.place_pose)
        return slot, (None if slot is None else SlotEntry.of_slot(slot, scene.robot.position))

    def place(self, decision: Decision, cancel: threading.Event) -> dict:
        from spatial_manip_interfaces.action import ArmMotion

        # a reset's workspace (which says what is in the gripper) may arrive just after the goal
        deadline = time.monotonic() + HELD_WAIT_S
        while self._in_hand is None and time.monotonic() < deadline and not cancel.is_set():
            time.sleep(0.05)
        if self._in_hand is None:
            raise MotionFailedError("nothing is known to be in the gripper: pick an object before placing")
        slot, entry = self._slot_entry(decision)
        T_obj, T_tcp = self._fit_place(decision, entry, decision.details.get("avoid_place_poses", ()),
                                       self._held_size, self._in_hand, self._grip_width)
        decision.details["tried_place_pose"] = T_obj     # a retry sets the object down differently
        goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_PLACE, target=pose_stamped(T_tcp, "base"))
        if entry is not None:     # slide in through the slot's open side, not down from above
            goal.approach_direction = Vector3(x=float(entry.direction[0]), y=float(entry.direction[1]), z=0.0)
            goal.approach_distance = float(entry.approach_m(T_obj, self._held_size))
        result = self._run_arm(goal, cancel)
        if not result.success:
            raise SpatialManipError(f"placing failed: {result.message}", result.error_code or "MOTION_FAILED")
        # where the object was set down, and in which slot, for verify
        decision.details["placed_pose"] = T_obj
        decision.details["placed_slot"] = slot
        self._in_hand, placed = None, self._held_id
        self._held_id, self._held_size = None, None
        return {"placed_id": placed, "tcp_pose": T_tcp}

    def _fit_place(self, decision: Decision, entry, avoid, size, T_obj_tcp, width_m) -> tuple[np.ndarray, np.ndarray]:
        """(object pose, TCP pose) that set an object of `size` held by `T_obj_tcp` down at the
        planned place: the planned rotation turned (keeping its pose class unless the words
        named none) until the fingers clear the support and the arm reaches it
        (grasping.place_fit); rotations of set-downs that failed before (`avoid`) go last."""
        place_pose = decision.place_pose
        from spatial_manip.control.config import load_kinematics
        from spatial_manip.grasping.place_fit import fit_place

        if size is None:
            return place_pose, place_pose @ T_obj_tcp
        if self._kinematics is None:
            self._kinematics = load_kinematics(self.p["arm_config_file"], self.p["arm_backend"])
        return fit_place(place_pose, size, T_obj_tcp, width_m=width_m, kinematics=self._kinematics,
                         entry=entry, avoid=avoid, any_pose_class=decision.details.get("any_pose_class", False))

    def clear_view(self, cancel: threading.Event) -> None:
        """Before a look: send the arm home (configured out of the camera's view) so it hides
        nothing. Skipped while holding something or with no arm server; a refusal only costs
        visibility, so it is logged and perceiving goes on."""
        from spatial_manip_interfaces.action import ArmMotion

        if not self.p["home_before_perceiving"] or self._held_id is not None:
            return
        if not self.arm_client.server_is_ready():
            self._warn_once("home", "no arm action server: perceiving with the arm where it is")
            return
        result = self._run_arm(ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME), cancel)
        if not result.success:
            self._warn_once("home", f"could not move the arm out of view before perceiving: {result.message}")

    def _run_arm(self, goal, cancel: threading.Event):
        if not self.arm_client.wait_for_server(timeout_sec=10.0):
            raise MotionFailedError(f"no arm action server at {self.p['arm_action']}: is arm_node (or sim_node) running?")
        handle = _wait_unless_canceled(self.arm_client.send_goal_async(goal), 10.0, cancel)
        if cancel.is_set():
            if handle is not None and handle.accepted:
                wait_future(handle.cancel_goal_async(), CANCEL_ACK_S)
            raise CanceledError("the goal was canceled before the arm took the motion")
        if handle is None or not handle.accepted:
            raise MotionFailedError("the arm refused the motion goal")
        self._arm_goal = handle
        try:
            fut = handle.get_result_async()
            deadline = time.monotonic() + float(self.p["motion_timeout_s"])
            while not fut.done():
                if cancel.is_set():     # short: a node shutting down has the launcher's grace period only
                    wait_future(handle.cancel_goal_async(), CANCEL_ACK_S)
                    raise CanceledError("the goal was canceled during motion; the arm was stopped")
                if time.monotonic() > deadline:
                    wait_future(handle.cancel_goal_async(), 5.0)
                    raise StageTimeoutError(f"the motion took longer than {self.p['motion_timeout_s']} s; stopped")
                self._check_arm_alive()
                time.sleep(0.02)
            return fut.result().result
        finally:
            self._arm_goal = None

    def _check_arm_alive(self) -> None:
        """An arm server that dies mid-motion never answers: its TCP pose stream stopping (the
        arm and sim nodes publish it all the time) says so within seconds, not at the timeout."""
        lost_s = float(self.p["arm_lost_after_s"])
        if self._tcp_seen_at is not None and time.monotonic() - self._tcp_seen_at > lost_s:
            self._tcp_seen_at = None      # the next motion starts fresh, should the arm come back
            raise MotionFailedError(f"arm server lost: no TCP pose on {self.p['tcp_topic']} for {lost_s:g} s "
                                    f"during the motion (is arm_node or sim_node running?)")

    def stop_motion(self) -> None:
        if self._arm_goal is not None:
            self._arm_goal.cancel_goal_async()

    # --- verify ----------------------------------------------------------------------------
    def verify(self, decision: Decision, goal, scene: Scene | None) -> tuple[bool, str, str]:
        """Check the instruction's constraint on the scene seen after the motion (`scene`, for a place)."""
        if decision.place_pose is None:
            ok = self._held_id == decision.pick_id
            return ok, "" if ok else "dropped", f"{decision.pick_id} is in the gripper" if ok else "the object was lost"
        want = decision.details.get("placed_pose", decision.place_pose)[:3, 3]
        movable = [o for o in scene.objects if o.category not in FIXTURES]
        if not movable:
            return False, "not_in_region", "nothing was seen after placing"
        near = min(movable, key=lambda o: np.linalg.norm(o.center[:2] - want[:2]))
        err = float(np.linalg.norm(near.center[:2] - want[:2]))
        tol = float(self.p["verify_tolerance_m"])
        slot = decision.details.get("placed_slot")
        if slot is not None:
            # in a slot the boards hide part of the object, which pulls its seen centre to the
            # front: what the instruction asks, and what can be checked, is that it is inside
            inside = [o for o in movable if point_in_box(o.center, slot, margin_m=tol)
                      and np.linalg.norm(o.center[:2] - want[:2]) <= SLOT_VERIFY_RADIUS_M]
            if inside:
                return True, "", f"{inside[0].id} is in {slot.id}"
            return False, "not_in_region", (f"no object is seen in {slot.id} within {SLOT_VERIFY_RADIUS_M * 100:.0f} cm "
                                             f"of where it was set down, {np.round(want, 3).tolist()}")
        if err <= tol:
            return True, "", f"placed within {err * 100:.1f} cm of the computed pose"
        return False, "not_in_region", f"the nearest object is {err * 100:.1f} cm from the computed pose (tolerance {tol * 100:.0f} cm)"

    def close(self) -> None:
        self.stop_motion()


def _wait_unless_canceled(future, timeout_s: float, cancel: threading.Event):
    """The future's result, or None after `timeout_s` or as soon as `cancel` is set."""
    deadline = time.monotonic() + timeout_s
    while not future.done() and not cancel.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    return future.result() if future.done() else None
