"""sim_node: the MuJoCo world (spatial_manip.sim.world.SimWorld) behind the real robot's interfaces.

Publishes the camera as realsense2_camera does (rgb8 colour, 16UC1 mm aligned depth, camera_info),
its pose with every frame on `/camera/extrinsics` (transient-local, stamped like the frame: the
camera stands elsewhere each episode, see observation.CameraPoses), `/joint_states` (UR names + gripper) and
`/tcp_pose_broadcaster/pose`; serves ArmMotion at `/spatial_manip/arm_motion` through the real
robot's `ArmActionServer` and `MotionPrimitives` (planner, safety envelope, busy lock, cancel)
over the MuJoCo arm (`sim.arm.SimArm`), `/sim/reset_task` (ResetTask) and
`/sim/check_success` (CheckSuccess, judged by spatial_manip.sim.checker on the exported state;
its final state carries the contact monitor's unintended contacts by phase, `contacts`).

    sim_node --ros-args -p scene_kind:=tabletop -p seed:=3 -p camera_rate_hz:=5.0 -p sensing:=realistic

`sensing` (ideal | realistic | harsh, sim/sensing.py) and `sensing_off` (effects switched off by
name, comma-separated) set how far the camera, its calibration and the arm are from ideal; each
reset draws the episode's errors from its seed. `/camera/extrinsics` carries the calibrated pose,
not the one MuJoCo renders from.
"""
from __future__ import annotations

import sys

import json
import threading
import time
import traceback
from pathlib import Path

import numpy as np
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from spatial_manip.nodes.parameters import declare_parameters
from spatial_manip.nodes.runner import spin_node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from geometry_msgs.msg import PoseStamped
from std_msgs.msg import String

from spatial_manip.camera.types import metres_to_mm
from spatial_manip.sim.arm import sim_primitives
from spatial_manip.errors import ConfigError, SpatialManipError
from spatial_manip.nodes import convert
from spatial_manip.nodes.arm_server import ArmActionServer
from spatial_manip.scene import Scene, SceneFormatError
from spatial_manip.sim.library import catalogue_workspace, library_for
from spatial_manip.motion.world import support_ids
from spatial_manip.sim.contacts import ContactMonitor
from spatial_manip.sim.layouts import sample_scene
from spatial_manip.sim.world import GRIPPER_MAX_WIDTH_M, STOW_Q, SimConfig, SimWorld
from spatial_manip_interfaces.srv import CheckSuccess, ResetTask
from spatial_manip.sim.checker import check_task
from spatial_manip.sim.sensing import sensing_profile

PARAMS = {
    "scene_file": "", "scene_kind": "tabletop", "seed": 0, "tasks_dir": "",
    "width": 640, "height": 480, "fovy_deg": 43.3, "sensing": "realistic", "sensing_off": "",
    "camera_rate_hz": 5.0, "state_rate_hz": 30.0,
    # what the planner is told may be in the scene (sim/library.py): the enrolled library, or the
    # episode's own objects (a diagnostic)
    "catalogue": "library", "library_file": "",
    # arm.yaml with its `arm.sim.overrides` (the simulated cell's TCP, workspace, planner)
    "arm_config_file": "",
    # MOTION_HOME goes here: the arm hanging low behind its base, out of the camera's view
    "home_q": STOW_Q.tolist(),
    "color_topic": "camera/color/image_raw", "color_info_topic": "camera/color/camera_info",
    "depth_topic": "camera/aligned_depth_to_color/image_raw",
    "depth_info_topic": "camera/aligned_depth_to_color/camera_info",
    "extrinsics_topic": "camera/extrinsics", "color_frame_id": "camera_color_optical_frame",
    "base_frame_id": "base",
}


class SimNode(Node):
    def __init__(self):
        super().__init__("sim_node")
        self.p = declare_parameters(self, PARAMS)
        _check_parameters(self.p)
        self.home_q = np.asarray(self.p["home_q"], float)
        cfg = SimConfig(width=int(self.p["width"]), height=int(self.p["height"]), fovy_deg=float(self.p["fovy_deg"]),
                        sensing=_sensing(self.p["sensing"], self.p["sensing_off"]))
        scene = self._load_scene_file() if self.p["scene_file"] else self._sample_scene()
        self.world = SimWorld(scene, config=cfg, seed=int(self.p["seed"]))
        self.library = _library(self.p["catalogue"], self.p["library_file"])
        self.task: dict | None = None
        self._resets = -1                       # workspace revisions published so far, minus one
        self.initial: Scene = scene
        sensor = QoSProfile(depth=2, reliability=ReliabilityPolicy.RELIABLE)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.pub = {k: self.create_publisher(Image if "info" not in k else CameraInfo, self.p[k], sensor)
                    for k in ("color_topic", "color_info_topic", "depth_topic", "depth_info_topic")}
        self.pub_ext = self.create_publisher(PoseStamped, self.p["extrinsics_topic"], latched)
        self.pub_ws = self.create_publisher(String, "spatial_manip/workspace", latched)
        # the simulator's object index per pixel (value = index + 1, 0 = none), for the
        # ground-truth segmenter; a real camera has no such topic
        self.pub_seg = self.create_publisher(Image, "sim/segmentation", sensor)
        # rendering stays on one thread: an EGL context cannot move between executor threads
        self._stop = threading.Event()
        # reset generations: a reset returns only once a frame of the new world is published
        self._frames = threading.Condition()
        self._reset_gen = self._published_gen = 0
        self._camera_thread = threading.Thread(target=self._camera_loop, name="sim_camera", daemon=True)
        self._camera_thread.start()
        rg = ReentrantCallbackGroup()
        self.create_service(ResetTask, "sim/reset_task", self.on_reset, callback_group=rg)
        self.create_service(CheckSuccess, "sim/check_success", self.on_check, callback_group=rg)
        self.contacts = ContactMonitor(self.world)
        self.arm_server = self._serve_arm()
        self.publish_workspace()
        self.get_logger().info(f"sim_node ready: {scene.extra.get('kind', 'scene')} with {len(scene.objects)} objects, "
                               f"sensing {cfg.sensing.label}")

    # --- publishing -----------------------------------------------------------------------------
    def _load_scene_file(self) -> Scene:
        try:
            return Scene.load(self.p["scene_file"])
        except (SceneFormatError, OSError) as e:      # /etc/passwd, a folder, unreadable
            raise ConfigError(f"parameter scene_file: {e} (a scene JSON as `spatial-manip tasks` writes)") from e

    def _sample_scene(self) -> Scene:
        try:
            return sample_scene(self.p["scene_kind"], int(self.p["seed"]))
        except ValueError as e:          # a misspelt scene_kind
            raise ConfigError(f"parameter scene_kind: {e}") from e

    def publish_workspace(self):
        """The cell's configuration as a real deployment would have it (fixtures, slots, a
        pose-free object catalogue), on the topic the planner reads."""
        ws = catalogue_workspace(self.world.export_scene(), self.world.tcp_pose(), catalogue=self.p["catalogue"],
                                 library=self.library)
        ws.extra["segment_ids"] = list(self.world.meta.object_ids)   # /sim/segmentation value - 1 -> id
        # which reset this is: the planner acknowledges it (workspace_ack_topic), so a client
        # knows when its next goal will be planned on this world and not the previous one
        self._resets += 1
        ws.extra["revision"] = f"{self._resets}:{(self.task or {}).get('id', '')}"
        self.pub_ws.publish(String(data=json.dumps(ws.to_dict())))

    def _camera_loop(self):
        period = 1.0 / float(self.p["camera_rate_hz"])
        while not self._stop.is_set():
            t0 = time.monotonic()
            try:
                self.publish_camera()
            except Exception as e:  # keep the camera alive through a transient failure, but say so
                if not self.context.ok():
                    return      # the graph is stopping: Ctrl-C shut the context down before this thread
                self.get_logger().error(f"camera render failed: {e}")
            self._stop.wait(max(0.0, period - (time.monotonic() - t0)))
        self.world.close()

    def publish_camera(self):
        gen = self._reset_gen   # read before rendering: a reset after this point makes the frame old
        # stamped as the world's state is read (under the world's lock), as a camera stamps a frame when
        # it is exposed. Stamped after rendering (0.3-1 s under load), a frame read in the middle of a
        # reset (the new scene, the arm still where the world's reset leaves it, not yet at home_q) or
        # just before it carried a stamp later than the new workspace, and the planner took it for the
        # new scene's (pick-62-00013: the arm masked at home_q, its shoulder seen elsewhere blocked the
        # approach). Stamped before waiting for the lock, a frame asked for as an arm motion began was
        # read only once the motion let the world go, seconds later under load: its stamp said "before
        # the motion", which no reader could tell from a frame of the arm mid-way
        exposed = {}

        def clock() -> float:
            exposed["stamp"] = self.get_clock().now()
            return exposed["stamp"].nanoseconds * 1e-9

        obs = self.world.render(clock=clock)
        stamp, fid = exposed["stamp"].to_msg(), self.p["color_frame_id"]
        depth_mm = metres_to_mm(obs.depth_m)
        info = convert.intrinsics_to_camera_info(obs.intrinsics, fid, stamp)
        # the calibrated pose this frame was rendered from, read with it under the world's lock: a
        # pose sent once per reset could reach a subscriber after the new scene's first frame
        self.pub_ext.publish(convert.pose_stamped(obs.T_base_cam, self.p["base_frame_id"], stamp))
        self.pub["color_topic"].publish(convert.array_to_image(obs.rgb, "rgb8", fid, stamp))
        self.pub["depth_topic"].publish(convert.array_to_image(depth_mm, "16UC1", fid, stamp))
        self.pub["color_info_topic"].publish(info)
        self.pub["depth_info_topic"].publish(info)
        if obs.segmentation is not None:
            seg = np.clip(np.asarray(obs.segmentation) + 1, 0, 65535).astype(np.uint16)
            self.pub_seg.publish(convert.array_to_image(seg, "16UC1", fid, stamp))
        with self._frames:
            self._published_gen = gen
            self._frames.notify_all()

    def _wait_for_new_frame(self, timeout_s: float = 5.0) -> bool:
        """After a reset: block until the camera has published a frame rendered after it, so a
        client that asks for an observation once the reset returns never sees the old world."""
        with self._frames:
            self._reset_gen += 1
            gen = self._reset_gen
            return self._frames.wait_for(lambda: self._published_gen >= gen, timeout=timeout_s)

    # --- services -------------------------------------------------------------------------------
    def on_reset(self, req, res):
        try:
            return self._reset(req, res)
        except Exception as e:   # a request nobody foresaw: answer it, keep the node serving
            self.get_logger().error(f"reset failed: {type(e).__name__}: {e}\n{traceback.format_exc()}")
            self._restore_previous_world()
            res.success, res.message = False, f"sim_node could not reset ({type(e).__name__}: {e}); the previous scene stays"
            return res

    def _restore_previous_world(self) -> None:
        """A reset that failed half-way leaves the world on the last good scene, not a mix."""
        try:
            if self.world.scene is not self.initial:
                self.world.reset(self.initial, 0)
        except Exception as e:
            self.get_logger().error(f"could not restore the previous scene: {e}")

    def _reset(self, req, res):
        try:
            task = _parse_task(req.task_json)
            if req.scene_json:
                scene = Scene.from_dict(_parse_json(req.scene_json, "scene_json"))
            elif task is not None and task.get("scene"):
                path = Path(task["scene"])
                path = path if path.is_absolute() else Path(self.p["tasks_dir"] or ".") / path
                scene = Scene.load(path)
            else:
                raise SceneFormatError("ResetTask needs scene_json, or a task_json whose 'scene' path exists "
                                       "(relative paths resolve against the tasks_dir parameter)")
            self.world.reset(scene, int(req.seed))
            if scene.held_object() is None:
                # an episode starts with the arm at home, as after the previous one: a reset
                # moves objects under an arm that has no plan for them
                self.world.pose_arm(self.home_q)
        except (SceneFormatError, SpatialManipError, ValueError, OSError) as e:
            self._restore_previous_world()
            res.success, res.message = False, str(e)
            return res
        self.task, self.initial = task, scene
        self.contacts.reset(_intended_contacts(task, scene))
        self.publish_workspace()
        if not self._wait_for_new_frame():
            self.get_logger().warning("reset: no camera frame of the new scene within 5 s")
        res.success, res.message, res.task_id = True, f"reset to {len(scene.objects)} objects", str((task or {}).get("id", ""))
        return res

    def on_check(self, req, res):
        try:
            return self._check(req, res)
        except Exception as e:   # answer, and keep serving
            self.get_logger().error(f"success check failed: {type(e).__name__}: {e}\n{traceback.format_exc()}")
            res.success, res.failure_category = False, "internal"
            res.message = f"sim_node could not check the task ({type(e).__name__}: {e})"
            return res

    def _check(self, req, res):
        final = self.world.export_scene()
        state = final.to_dict()
        state["contacts"] = {"by_phase": self.contacts.counts(), "events": self.contacts.events()}
        res.final_state_json = json.dumps(state)
        if self.task is None:
            res.success, res.failure_category = False, "no_task"
            res.message = "no active task: call /sim/reset_task with a task_json first"
            return res
        try:
            r = check_task(self.task, final, self.initial)
        except (ValueError, TypeError, KeyError, AttributeError) as e:   # a malformed check list
            res.success, res.failure_category, res.message = False, "bad_task", f"{type(e).__name__}: {e}"
            return res
        res.success, res.failure_category, res.message = bool(r.success), r.failure_category or "", r.message
        return res

    # --- the arm ------------------------------------------------------------------------------
    def _serve_arm(self) -> ArmActionServer:
        """ArmMotion, /joint_states and the TCP pose through the same server, primitives, planner
        and safety envelope as the real robot's arm_node, over the MuJoCo arm."""
        primitives = sim_primitives(self.world, self.home_q, self.p["arm_config_file"])
        arm = primitives.arm
        return ArmActionServer(self, arm, arm.gripper, primitives, state_rate_hz=float(self.p["state_rate_hz"]),
                               frame_id=self.p["base_frame_id"], gripper_max_width_m=GRIPPER_MAX_WIDTH_M,
                               on_phase=self.contacts.set_phase)


# (low, high) of each numeric parameter: a camera at 0 Hz would leave a dead camera thread behind
# a node that says "ready"; the L515 streams at most 30 fps at up to 1920x1080
LIMITS = {"camera_rate_hz": (0.1, 60.0), "state_rate_hz": (1.0, 500.0), "width": (16, 3840),
          "height": (16, 2160), "fovy_deg": (10.0, 120.0), "seed": (0, 2**32 - 1)}


def _check_parameters(p: dict) -> None:
    """Refuse a parameter the node cannot run with, by name, before anything starts."""
    for name, (low, high) in LIMITS.items():
        value = p[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ConfigError(f"parameter {name}: expected a number in [{low}, {high}], got {value!r}")
    q = np.asarray(p["home_q"], float)
    if q.shape != (6,) or not np.all(np.isfinite(q)):
        raise ConfigError(f"parameter home_q: sim_node home_q must be 6 finite joint angles (rad), "
                          f"got {list(p['home_q'])}")


def _library(catalogue: str, path: str):
    try:
        return library_for(catalogue, path or None)
    except ValueError as e:
        raise ConfigError(f"parameters catalogue/library_file: {e}") from e


def _sensing(name, off):
    try:
        return sensing_profile(str(name), str(off))
    except ConfigError as e:
        raise ConfigError(f"sim_node parameter sensing/sensing_off: {e}") from e


TASK_FIELD_TYPES = {"id": (str, int), "scene": str, "held": (str, type(None)), "answer": list, "check": list}


def _parse_json(text: str, field: str):
    try:
        return json.loads(text)
    except RecursionError as e:     # json recurses per level: 100000 nested brackets overflow it
        raise SceneFormatError(f"ResetTask {field} is nested too deeply to be a task or scene "
                               f"({len(text)} characters); send the JSON a task file holds") from e
    except json.JSONDecodeError as e:
        raise SceneFormatError(f"ResetTask {field} is not valid JSON: {e}") from e


def _parse_task(text: str) -> dict | None:
    """A task record (a line of tasks.jsonl) or None for an empty task_json; SceneFormatError
    naming the field that is not what a task record holds."""
    if not text:
        return None
    task = _parse_json(text, "task_json")
    if not isinstance(task, dict):
        raise SceneFormatError(f"ResetTask task_json must be a JSON object (a line of tasks.jsonl), "
                               f"got {type(task).__name__} {text[:60]!r}")
    for key, kinds in TASK_FIELD_TYPES.items():
        if key in task and not isinstance(task[key], kinds):
            raise SceneFormatError(f"ResetTask task_json field {key!r} must be "
                                   f"{' or '.join(k.__name__ for k in _as_tuple(kinds))}, got {task[key]!r:.60}")
    return task


def _as_tuple(kinds) -> tuple:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def _intended_contacts(task: dict | None, scene: Scene) -> set[str]:
    """The objects a task's arm may touch: every acceptable target, the held object, and what
    each rests on."""
    task = task if isinstance(task, dict) else {}
    named = _listed(task.get("answer")) + [task.get("held")]
    for c in _listed(task.get("check")):    # what the success check names (held ids, the placed object)
        if isinstance(c, dict):
            named += _listed(c.get("ids")) + [c.get("object")]
    known = set(scene.ids())
    # a malformed task (ids that are not strings) only leaves the monitor stricter; the success
    # check refuses it by name
    return {s for i in named if isinstance(i, str) and i in known for s in support_ids(scene, i)}


def _listed(value) -> list:
    """A task field that should be a list, or nothing when it is not (a malformed task)."""
    return list(value) if isinstance(value, (list, tuple)) else []


def main(args=None) -> int:
    # finish: on Ctrl-C a goal's client gets its result (CANCELED) before the node exits
    return spin_node(SimNode, args=args, threads=4, close=_stop, finish=lambda n: n.arm_server.finish())


def _stop(node: "SimNode") -> None:
    """The arm first, as arm_node stops it: a motion under way would go on stepping the world the
    camera thread closes when it ends (the arm on the node's world leaves closing it to that thread)."""
    node.arm_server.release(None)
    node._stop.set()
    node._camera_thread.join(timeout=5)


if __name__ == "__main__":
    sys.exit(main())
