"""The planner's decisions, without ROS: what the pipeline's stages do with the world.

`Agent` builds the scene (fixtures from the workspace description, the held object where the
TCP says it is), plans the pick and/or place (re-planning only the place while the object is in
hand, objects whose grasps failed tried last), turns grasps into TCP poses and keeps those that
can set the object down as planned, fits the set-down (slot entry, finger clearance, reach),
knows what it holds, and verifies the result. Everything it touches outside goes through
`Ports`, which do I/O only: planner_node's are ROS topics, a service and an action; a test's
can be a MuJoCo world in the same process.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from types import SimpleNamespace
from typing import Callable, Protocol

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.control.config import load_reach
from spatial_manip.control.primitives import back_off, lift_height_for
from spatial_manip.errors import ErrorCode, GraspFailedError, MotionFailedError, SpatialManipError, UnreachableError
from spatial_manip.camera_model import backproject
from spatial_manip.geometry.depth_check import depth_evidence
from spatial_manip.geometry.pointcloud import depth_edge_pixels, preload_point_cloud_library, range_tolerance_m
from spatial_manip.geometry.relations import _corners, point_in_box, points_in_box
from spatial_manip.geometry.support import check_support, resting_surface
from spatial_manip.transforms import apply, invert, make_transform, quat_to_matrix
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.place_fit import SlotEntry, fit_place, pose_class, shallower_grasps, slot_at, slot_positions
from spatial_manip.motion.arm_plans import CLOUD_VOXEL_M, arm_reach
from spatial_manip.motion.line_of_sight import visible_fraction
from spatial_manip.motion.obstacle_map import ObstacleMap, ObstacleMapConfig, build_obstacle_map
from spatial_manip.motion.world import OBSTACLE_RANGE_M
from spatial_manip.observation import RGBDObservation
from spatial_manip.parameters import DEFAULT_SEGMENTER
from spatial_manip.perception import SegmentationHints, make_segmenter, perceive_with_workspace
from spatial_manip.pipeline import (Decision, GoalRequest, Grasped, Perceived, Placed, Regrasp, SetDown,
                                    TouchedGraspError, Verified)
from spatial_manip.reasoning.compound import plan_compound, replan_place
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.reasoning.reflection import RETRY_PLACE, Reflection, keep_described
from spatial_manip.scene import FIXTURE_CATEGORIES as FIXTURES
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.trace import Trace
from spatial_manip.perception.labelling import name_from_words

SLOT_VERIFY_RADIUS_M = 0.15   # a slot place is verified by an object in the slot this close to the set-down pose
VERIFY_HEIGHT_TOL_M = 0.03    # a placed object's seen bottom within this of the place pose's (perceived boxes err ~1-2 cm)
FRAME_SEEN_MIN = 0.8          # of a set-down box's pixels whose depth says anything, this share inside it confirms the place
FRAME_MIN_PIXELS = 30         # ... from at least this many pixels inside it
FRAME_GROW_M = 0.02           # ... inside the box grown by this (a set-down lands within a centimetre or two)
FRAME_LIFT_M = 0.01           # ... and this far above its bottom (the surface under it is not it)
FRAME_SLOT_CORE_M = 0.02      # in a slot, only the pixels of its box's core (this far in from each face) are asked:
                              # verify needs it in the slot, and a book seen from 2.3 m lands a centimetre or two off
                              # its silhouette (seed 72's book_8: 72 inside, 40 beyond at its edges; its core 0.85 in)
FRAME_CORE_M = 0.01           # elsewhere, the core 1 cm in (verify allows 3 cm): a 1.6 cm book set down upright a few
                              # mm off showed the table past its planned side on 100 of 431 pixels (test_agent_e2e's
                              # held book, share 0.77); its core 0.96
PLACE_SEEN_MIN = 0.5          # a set-down object less visible than this past the arm is not judged by the look
ARRIVED_NEARER_M = 0.02       # a slot place's frame check: depth this much nearer than before the place (or the
                              # sensor's error there, if more) is something that arrived: ARRIVED_SIGMAS of one
ARRIVED_SIGMAS = 5.0          # frame's noise, 3.5 of the difference of two frames' (one pixel in 4000 by chance)
ARRIVED_MIN_PIXELS = 60       # ... on at least this many pixels: two realistic 640x480 frames of an unchanged shelf
                              # differed so on at most 23 in one whole slot (seed 71's place scenes); a book set
                              # down in a top slot on 158-250
REGRASP_LIFT_M = 0.03         # a regrasp lifts the object this far off where it was set down (the place's transit follows)
REGRASP_PRE_M = 0.10          # ... from a pre-grasp this far back along the new grasp's approach
REGRASP_SEEN_M = 0.03         # the look's depth this close to the object as it was held is that object, not clutter
HELD_WAIT_S = 2.0             # how long a place waits for the workspace to say what is in the gripper
HOME_SAME_M = 0.001           # a TCP this close to where the last home motion left it (and turned by less than
HOME_SAME_RAD = 0.005         # this) is still at home: no motion is sent

MOTION_PICK, MOTION_PLACE, MOTION_HOME = "pick", "place", "home"


GRASP_CENTRE_BIN_M = 0.03     # for a pick-and-place, grasps this much nearer the object's middle
GRASP_SQUARE_BIN_DEG = 10.0   # or this much squarer to its faces go first
# A grasp whose TCP pose is this close to one that reached the object and failed, and turned from it by
# less than SAME_GRASP_DEG, is that grasp again (a new look proposes much the same list): not tried again
SAME_GRASP_M = 0.015
SAME_GRASP_DEG = 15.0
# a motion that ended with the TCP this far from where it started moved the arm: one stopped by contact
# on its way to a grasp touched something (one refused before moving did not)
ARM_MOVED_M = 0.01
ARM_SEEN_M = 0.03             # depth this close to the arm's collision bodies is the arm itself
ARM_DEPTH_M = 0.01            # ... and is replaced by this: nearer than anything, below every camera's range


def cloud_map(obs: RGBDObservation, voxel_m: float = CLOUD_VOXEL_M, fixtures=()) -> ObstacleMap:
    """The look's depth as an obstacle map within the arm's reach (flying pixels, unsupported
    returns and the arm's pixels, already set to no return by `without_arm`, left out, and the
    returns of the cell's `fixtures`, registered to them): what an arm motion's plan checks for
    unmodelled clutter (motion.arm_plans)."""
    return build_obstacle_map(obs.depth_m, obs.intrinsics, obs.T_base_cam, fixtures=fixtures,
                              config=ObstacleMapConfig(voxel_m=voxel_m, reach_m=OBSTACLE_RANGE_M))


def without_arm(obs: RGBDObservation, robot, q, margin_m: float = ARM_SEEN_M) -> RGBDObservation:
    """The look with the arm's own pixels (its collision bodies at joints `q`, grown by
    `margin_m`) made points of nothing. From some camera set-ups the arm waiting out of the way
    is still in view (pick-15-00007: the stowed forearm beside the base); a segmenter made it an
    object, which every grasp's motion check then found the arm starting inside. The pixels get
    ARM_DEPTH_M, not 0: below any camera's range, so no point, but still nearer than what the
    arm hides, so an object it cuts off is known to be hidden there, not to end there (with 0,
    a geosphere in a shelf slot behind the stowed arm lost its name, place-8-00014)."""
    roi = _pixels_near(obs, robot.bounding_spheres(q, margin_m))
    if roi is not None and not roi.any():
        return obs
    pts, uv = backproject(obs.depth_m, obs.intrinsics, mask=roi)
    on = robot.points_on(apply(obs.T_base_cam, pts), q, margin_m)
    if not np.any(on):
        return obs
    depth = np.array(obs.depth_m, dtype=np.float32, copy=True)
    depth[uv[on, 1], uv[on, 0]] = ARM_DEPTH_M
    return replace(obs, depth_m=depth)


ROI_MARGIN_PX = 2    # _pixels_near: rounding, and a depth pixel's footprint


def _pixels_near(obs: RGBDObservation, spheres) -> np.ndarray | None:
    """The pixels onto which any of `spheres` ((centre, radius), base frame) may project: the union
    of the bounding rectangles of their silhouettes (along each image axis, between the two planes
    through the camera that touch the sphere). None (every pixel) when a sphere reaches into the
    camera's plane or the lens is distorted; a sphere wholly behind the camera is never seen.
    Backprojecting and testing only these pixels cut masking the arm at home, 42% of the realistic
    view's pixels near it, from 0.35-0.65 s to 0.31-0.35 s a look at load 21 (issue 42); an arm
    out of view costs nothing."""
    if obs.intrinsics.has_distortion:
        return None          # a distortion model may fold a point far outside the view into it
    h, w = np.shape(obs.depth_m)[:2]
    roi = np.zeros((h, w), bool)
    T_cam_base = invert(np.asarray(obs.T_base_cam, float))
    K = obs.intrinsics
    for centre, radius in spheres:
        c = apply(T_cam_base, np.asarray(centre, float)[None])[0]
        if c[2] + radius <= 0:
            continue
        if c[2] - radius <= 0.01:
            return None
        span = []
        for along, f, principal in ((c[0], K.fx, K.cx), (c[1], K.fy, K.cy)):
            mid, half = np.arctan2(along, c[2]), np.arcsin(radius / np.hypot(along, c[2]))
            span.append((f * np.tan(mid - half) + principal - ROI_MARGIN_PX, f * np.tan(mid + half) + principal
                         + ROI_MARGIN_PX))
        (u0, u1), (v0, v1) = span
        if u1 < 0 or v1 < 0 or u0 >= w or v0 >= h:
            continue
        roi[max(int(np.floor(v0)), 0):min(int(np.ceil(v1)), h - 1) + 1,
            max(int(np.floor(u0)), 0):min(int(np.ceil(u1)), w - 1) + 1] = True
    return roi


def _tcp_poses(grasps: GraspGroup) -> list[np.ndarray]:
    """The TCP pose of each proposed grasp (graspnetAPI frame and depth -> the 2F-85's TCP)."""
    gripper = GripperGeometry()
    return [gripper.tcp_poses(g.matrix()[None], [g.depth])[0] for g in grasps]


def _touched(result: MotionResult, start: np.ndarray | None) -> bool:
    """Whether a pick motion that holds nothing reached its object: the fingers closed at the grasp
    (GRASP_FAILED: closed on nothing, or it slipped out in the lift), or the arm moved and was
    stopped (by contact, on a real arm a protective stop) before it got there."""
    if result.error_code == ErrorCode.GRASP_FAILED.value:
        return True
    if result.error_code != ErrorCode.MOTION_FAILED.value or start is None or result.final_pose is None:
        return False
    return bool(np.linalg.norm(np.asarray(result.final_pose, float)[:3, 3] - np.asarray(start, float)[:3, 3])
                > ARM_MOVED_M)


def _tried_before(T_tcp: np.ndarray, failed) -> bool:
    """Whether TCP pose `T_tcp` is one of the `failed` grasps again (SAME_GRASP_M, SAME_GRASP_DEG)."""
    for F in failed:
        turned = np.degrees(np.linalg.norm(Rotation.from_matrix(F[:3, :3].T @ T_tcp[:3, :3]).as_rotvec()))
        if np.linalg.norm(F[:3, 3] - T_tcp[:3, 3]) <= SAME_GRASP_M and turned <= SAME_GRASP_DEG:
            return True
    return False


def _carry_risk(T_tcp: np.ndarray, T_obj: np.ndarray) -> tuple[int, int]:
    """How likely a grasp is to let the object turn in the fingers, so that it lands tilted:
    the fingers' closing axis askew to the object's faces (the object squares itself against the
    pads as they close, and then sits other than the grasp assumed), then the distance from its
    middle (it swings while carried). Coarse bins, so the grasp score still orders the rest."""
    closing = np.abs(T_obj[:3, :3].T @ T_tcp[:3, 1])      # the TCP y axis in object axes
    skew = float(np.degrees(np.arccos(np.clip(np.max(closing), -1.0, 1.0))))
    off = float(np.linalg.norm(T_tcp[:3, 3] - T_obj[:3, 3]))
    return int(off // GRASP_CENTRE_BIN_M), int(skew // GRASP_SQUARE_BIN_DEG)


@dataclass(frozen=True, kw_only=True)
class MotionRequest:
    """One arm motion, base frame. Zero distances mean the arm server's defaults."""

    kind: str                                     # MOTION_PICK | MOTION_PLACE | MOTION_HOME
    target: np.ndarray | None = None              # 4x4 TCP pose to grasp / place at
    gripper_width_m: float = 0.0                  # opening before closing (pick)
    lift_height_m: float = 0.0
    approach_direction: np.ndarray | None = None  # direction of the last linear move in (None: TCP +z)
    approach_distance_m: float = 0.0
    scene: Scene | None = None                    # what the motion plans around (a held object rides along)
    target_id: str = ""                           # PICK: the scene object being grasped


@dataclass(frozen=True, kw_only=True)
class MotionResult:
    success: bool
    object_held: bool = False
    message: str = ""
    error_code: str = ""
    tcp_path: tuple = ()        # the TCP's planned way, base frame ((x, y, z), ...): drawn on the trace
    final_pose: np.ndarray | None = None   # the TCP's 4x4 pose when the motion ended, base frame (None: not said)


class Ports(Protocol):
    """The agent's I/O. Each may raise a SpatialManipError (CanceledError, StageTimeoutError, ...)."""

    # a frame that arrived since `arrived_after_s` (monotonic) may serve; None: one after the question
    def observe(self, cancel: threading.Event, arrived_after_s: float | None = None) -> RGBDObservation: ...
    def workspace(self) -> tuple[Scene | None, SegmentationHints | None]: ...   # the latest description
    def publish_scene(self, scene: Scene) -> None: ...       # what grasp proposal and viewers see
    def propose_grasps(self, target_id: str, max_grasps: int) -> GraspGroup: ...   # base frame, best first
    def arm_ready(self) -> bool: ...                         # an arm server answers now (no waiting)
    def run_motion(self, request: MotionRequest, cancel: threading.Event) -> MotionResult: ...
    def stop_motion(self) -> None: ...
    def tcp_pose(self) -> np.ndarray | None: ...             # the latest 4x4 TCP pose, base frame
    def joint_positions(self) -> np.ndarray | None: ...      # the arm's latest joints (None: not known)


@dataclass(frozen=True, kw_only=True)
class InHand:
    """What the agent knows is in the gripper, kept across goals (a place goal after a pick goal):
    from the grasp that held it, or from a workspace description that says so (a reset that
    starts with an object in the fingers)."""

    object_id: str
    T_object_tcp: np.ndarray | None = None   # the grasp (None: not known, so no place can be fitted)
    size: np.ndarray | None = None           # its box size, measured before it was in the fingers
    width_m: float = 0.0                     # the jaws' opening on it
    # the TCP pose it was held at before the arm first carried it out of the camera's view (None: not
    # carried): a look from there places it as held here, so a place that keeps its pose keeps this one
    # (home turns the tool; the object's pose relative to the table is the one the goal means)
    T_base_tcp_before_carry: np.ndarray | None = None


HELD_SEEN_M = 0.05   # a movable segment this close to the held object is that object seen in the fingers


def with_held(others: list, held) -> list:
    """`others` and the held object, without the movable segments that are the held object
    itself seen in the fingers (perception of an object inside the fingers is unreliable)."""
    return [o for o in others if o.category in FIXTURES or np.linalg.norm(o.center - held.center) > HELD_SEEN_M] + [held]


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    segmenter: str = DEFAULT_SEGMENTER  # perception backend (see spatial_manip.perception)
    planner: str = "program"            # reasoning backend (see spatial_manip.reasoning)
    unnamed_frame: str = "intrinsic"    # program planner: intrinsic | viewer | ask
    max_grasp_tries: int = 5            # top-k grasps tried before GRASP_FAILED
    home_before_perceiving: bool = True
    carry_out_of_view: bool = True      # ... holding an object too, carried as a body on the gripper (if home is a carry pose)
    arm_config_file: str = ""           # arm.yaml for the place-pose IK check ("" = the default file)
    arm_backend: str = ""               # that file's per-backend overrides (sim: the model's TCP)
    ur_type: str = ""                   # that file's model preset (ur5 | ur5e; "" = its arm.model), as every node has it
    verify_tolerance_m: float = 0.03    # ESPIRE: within 3 cm of the expected position

    @classmethod
    def from_params(cls, params: dict) -> "AgentConfig":
        """The agent's fields out of a node's parameters (the rest are the ports')."""
        kinds = {f.name: type(f.default) for f in fields(cls)}
        return cls(**{name: kind(params[name]) for name, kind in kinds.items() if name in params})


class Agent:
    """The stages `InstructionPipeline` drives, over I/O `ports`."""

    def __init__(self, ports: Ports, config: AgentConfig = AgentConfig(), *,
                 warn: Callable[[str], None] = lambda text: None, segmenter_config: dict | None = None,
                 interrupt: Callable[[], bool] = lambda: False):
        """`segmenter_config`: the segmenter backend's settings (perception.yaml's section).
        `interrupt()`: asked with each look's own `should_stop` (`perceive`): True stops any look,
        a goal's or an idle one (planner_node: the running goal was canceled, the node stops)."""
        self.ports, self.config, self._warn = ports, config, warn
        self._interrupt = interrupt
        self._segmenter_config = dict(segmenter_config or {})
        self._warned: set[str] = set()
        self._segmenter = self._planner = self._reach = None
        self._workspace_seen: Scene | None = None
        self._holding: InHand | None = None
        self._known: Scene | None = None                # the latest look, updated by what we moved since
        # that look's depth as an obstacle map, built beside the goal's reasoning and grasping (0.3-1.1 s
        # a look under load, issue 42): only an arm motion needs it (`_obstacles`)
        self._cloud: Future | None = None
        self._mapper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="obstacle_map")
        self._seen_from: tuple[np.ndarray, np.ndarray | None] | None = None   # that look's camera position, arm joints
        self._seen_frame: RGBDObservation | None = None   # that look's frame as the camera gave it
        self._home_tcp: np.ndarray | None = None      # the TCP pose where the last home motion left the arm
        self._carry_refused_at: np.ndarray | None = None   # the TCP pose from which the arm server refused a carry
        self.carry_note: str | None = None     # the last clear_view's carry, or why none (for the look's trace)
        self._building = threading.RLock()     # the segmenter and the arm's model are built once (`prepare`)
        self._reasoning = threading.Lock()     # the language planner plans one instruction at a time (`prepare`'s too)
        if config.planner == "program":    # built now, so a bad setting stops the node at start-up
            self._planner = self._make_planner()

    # --- the held object ----------------------------------------------------------------------
    def _workspace(self) -> tuple[Scene | None, SegmentationHints | None]:
        """The latest workspace; a new one (e.g. a sim reset) says what is in the gripper."""
        ws, hints = self.ports.workspace()
        if ws is not None and ws is not self._workspace_seen:
            self._workspace_seen = ws
            self._known = self._cloud = self._seen_frame = None   # a new world (a reset): the last look shows the old one
            self._carry_refused_at = None      # and a carry refused in the old one may be one in this
            held = ws.held_object()
            self._holding = None if held is None else InHand(
                object_id=held.id, size=np.asarray(held.size, float), width_m=float(np.min(held.size)),
                T_object_tcp=np.asarray(held.extra["T_object_tcp"], float) if "T_object_tcp" in held.extra else None)
        return ws, hints

    def held_id(self) -> str | None:
        self._workspace()
        return self._held_id

    @property
    def _held_id(self) -> str | None:
        """The held object's id as last known (held_id() asks the workspace first)."""
        return self._holding.object_id if self._holding is not None else None

    @property
    def _in_hand(self) -> np.ndarray | None:
        """T_object_tcp of what is held, if known."""
        return self._holding.T_object_tcp if self._holding is not None else None

    def stop_motion(self) -> None:
        self.ports.stop_motion()

    # --- perceive -----------------------------------------------------------------------------
    def observe(self, cancel: threading.Event, arrived_after_s: float | None = None) -> RGBDObservation:
        if arrived_after_s is None:         # ports that never serve an earlier frame need not know the argument
            return self.ports.observe(cancel)
        return self.ports.observe(cancel, arrived_after_s=arrived_after_s)

    def observe_after_arm_stop(self, cancel: threading.Event) -> RGBDObservation | None:
        """After a motion: the first frame exposed after the arm stopped, when the ports can tell
        by the stamps (`observe_after_arm_stop`, optional); None: they cannot, `observe` instead."""
        port = getattr(self.ports, "observe_after_arm_stop", None)
        return port(cancel) if port is not None else None

    def clear_view(self, cancel: threading.Event) -> None:
        """Before a look: send the arm home (configured out of the camera's view) so it hides
        nothing; holding an object, carry it there (`carry_out_of_view`) as a body on the gripper,
        which the arm server plans around the table, the cell and the arm itself, and refuses
        unless home is a carry pose on this layout (motion.carry: clear of every keep-out and body
        by a margin, hiding less of the scene than the arm where it is). Skipped with no arm
        server, and holding an object whose grasp is not known (it cannot be carried as planned).
        A refusal only costs visibility: the look is taken where the arm is, and `carry_note`
        says why for the look's trace. Holding the object where the scene began, the arm hid the
        reference of the place it looked for (objects-88-00014: the forearm in front of the
        pillar bookend; books place-86-00002: the teddy bear)."""
        self.carry_note = None
        if not self.config.home_before_perceiving:
            return
        holding = self.held_id() is not None
        if holding and (not self.config.carry_out_of_view or self._in_hand is None):
            return
        if self._still_home() or (holding and self._at(self._carry_refused_at)):
            return
        if not self.ports.arm_ready():
            self._warn_once("home", "no arm action server: perceiving with the arm where it is")
            return
        T_now = self.ports.tcp_pose()
        T_now = np.asarray(T_now, float) if T_now is not None and np.shape(T_now) == (4, 4) else None
        try:
            result = self.ports.run_motion(MotionRequest(kind=MOTION_HOME, scene=self._obstacles()), cancel)
        except MotionFailedError as e:   # a lost arm server: the look says whether the camera is there too
            self._warn_once("home", f"could not move the arm out of view before perceiving: {e.message}")
            return
        moved = T_now is None or not self._at(T_now)
        if holding and moved and self._holding is not None and self._holding.T_base_tcp_before_carry is None:
            self._holding = replace(self._holding, T_base_tcp_before_carry=T_now)
        if not result.success:
            self._warn_once("home", f"could not move the arm out of view before perceiving: {result.message}")
            if holding:
                self.carry_note = f"not carried out of view ({result.message}): looking with the arm where it is"
                self._carry_refused_at = None if moved else T_now
        elif holding:
            self.carry_note = f"{self._held_id} carried out of the camera's view"
        self._home_tcp = result.final_pose if result.success else None

    def _at(self, T) -> bool:
        """Whether the TCP is at pose T (within HOME_SAME_M and HOME_SAME_RAD); False for None."""
        now = self.ports.tcp_pose()
        if T is None or now is None or np.shape(now) != (4, 4):
            return False
        now = np.asarray(now, float)
        turned = np.linalg.norm(Rotation.from_matrix(np.asarray(T)[:3, :3].T @ now[:3, :3]).as_rotvec())
        return bool(np.linalg.norm(now[:3, 3] - np.asarray(T)[:3, 3]) <= HOME_SAME_M and turned <= HOME_SAME_RAD)

    def _still_home(self) -> bool:
        """Whether the TCP is where the last home motion left it: a goal after a reset or a pick then
        sends no home motion that would not move the arm (its round trip cost 0.1-3 s under load,
        before the look; issue 42)."""
        return self._at(self._home_tcp)

    def perceive(self, obs: RGBDObservation, instruction: str = "", should_stop=None) -> Perceived:
        """`instruction`: the words this look serves (an open-vocabulary segmenter asks for them).
        `should_stop()`: asked as the segmenter's stages end (one that has a `should_stop`: the
        classical one) with the agent's `interrupt()`: True stops the look with CanceledError,
        nothing published. A goal's look asks `interrupt()` alone: a cancel during its segmenting
        was answered only after it (up to 10 s in the cancel soak at load 19)."""
        ws, hints = self._workspace()
        if instruction:
            base = hints if hints is not None else SegmentationHints.from_scene(ws) if ws is not None else SegmentationHints()
            hints = base.with_instruction(instruction)
        segmenter = self._perception()
        t0 = time.perf_counter()
        q, masked = self.ports.joint_positions(), obs
        if q is not None and np.shape(q) == (6,) and np.all(np.isfinite(q)):   # the arm is no object on the table
            masked = without_arm(obs, self._arm_reach().planner.robot, q)
        else:
            q = None
        t1 = time.perf_counter()
        stop_as_was = getattr(segmenter, "should_stop", None)
        if stop_as_was is not None:
            segmenter.should_stop = lambda: self._interrupt() or (should_stop is not None and should_stop())
        try:
            scene = perceive_with_workspace(segmenter, masked, ws, hints)
        finally:
            if stop_as_was is not None:
                segmenter.should_stop = stop_as_was
        t2 = time.perf_counter()
        if ws is not None and "ground_z" in ws.extra:     # the cell's floor: the planner keeps every link above it
            scene = replace(scene, extra={**scene.extra, "ground_z": float(ws.extra["ground_z"])})
        if self._held_id is not None:
            scene = self._mark_held(scene, ws)
        self.ports.publish_scene(scene)
        fixtures = [o for o in scene.objects if o.category in FIXTURES]     # the cell's, configured
        self._known, self._cloud = scene, self._mapper.submit(cloud_map, masked, fixtures=fixtures)
        self._seen_from, self._seen_frame = (np.asarray(obs.T_base_cam, float)[:3, 3], q), obs
        laps = getattr(segmenter, "last_timing_s", None) or {}
        timing = {"mask_arm": t1 - t0, "segment": t2 - t1, **{f"segment.{k}": v for k, v in laps.items()},
                  "after": time.perf_counter() - t2}
        return Perceived(observation=obs, scene=scene,     # the look as the camera gave it
                         timing_s={k: round(v, 3) for k, v in timing.items()})

    def _obstacles(self, scene: Scene | None = None) -> Scene | None:
        """What an arm motion must avoid: `scene` (default: the latest look, with what was set
        down since where it was set down; before any look, the workspace's fixtures), with the
        held object marked held with its grasp, so the planner carries it on the gripper."""
        scene = scene if scene is not None else self._known
        if scene is None:       # nothing seen yet: at least the cell's fixtures (the table, shelves), and what is held
            ws = self._workspace()[0]
            fixtures = [o for o in ws.objects if o.category in FIXTURES] if ws is not None else []
            held = ws.held_object() if ws is not None else None
            if held is not None and held.id == self._held_id and self._in_hand is not None:
                extra = {**held.extra, "T_object_tcp": np.asarray(self._in_hand).tolist()}
                size = self._holding.size if self._holding.size is not None else held.size
                fixtures = fixtures + [replace(held, held=True, size=size, extra=extra)]
            return ws.with_objects(fixtures) if fixtures else None
        if self._cloud is not None:     # what the boxes do not explain is avoided too (the arm server drops the rest)
            scene = replace(scene, extra={**scene.extra, "cloud": self._cloud.result().as_extra()})
        others = [o for o in scene.objects if o.id != self._held_id and not o.held]
        held = scene.get(self._held_id) if self._held_id in scene.ids() else None
        if held is None or self._in_hand is None:
            return scene.with_objects(others)
        extra = {**held.extra, "T_object_tcp": np.asarray(self._in_hand).tolist()}
        size = self._holding.size if self._holding.size is not None else held.size
        return scene.with_objects(others + [replace(held, held=True, size=size, extra=extra)])

    def _mark_held(self, scene: Scene, ws: Scene | None) -> Scene:
        """The object in the gripper, placed where the TCP says it is (perception of an object
        inside the fingers is unreliable; the in-hand transform is known from the grasp), or was
        before the arm carried it out of view (`InHand.T_base_tcp_before_carry`: at home the tool
        is turned, and a place that keeps the object's pose set a bottle down on its side,
        objects-81-00009)."""
        others = [replace(o, held=False) for o in scene.objects if o.id != self._held_id]
        seen = next((o for o in scene.objects if o.id == self._held_id), None)
        ref = seen or (ws.get(self._held_id) if ws and self._held_id in ws.ids() else None)
        if ref is None:
            return scene.with_objects(others)
        held = replace(ref, held=True)
        if self._holding.size is not None:      # measured before it was in the fingers (or configured)
            held = replace(held, size=self._holding.size)
        T_base_tcp = self._holding.T_base_tcp_before_carry
        T_base_tcp = self.ports.tcp_pose() if T_base_tcp is None else T_base_tcp
        if self._in_hand is not None and T_base_tcp is not None:
            T_obj = T_base_tcp @ invert(self._in_hand)
            held = replace(held, center=T_obj[:3, 3], rotation=T_obj[:3, :3])
        return scene.with_objects(with_held(others, held))

    def _perception(self):
        """The segmenter (built on first use)."""
        with self._building:
            if self._segmenter is None:
                self._segmenter = make_segmenter(self.config.segmenter, **self._segmenter_config)
            return self._segmenter

    def prepare(self) -> None:
        """Build now what the first look would build: the segmenter, the arm's model (its pixels are
        masked) and the point-cloud library the segmenter loads on first use. The first goal's look
        paid 2-3 s more than the next ones for them (issue 42); a node calls this at start-up."""
        self._perception()
        self._arm_reach()
        preload_point_cloud_library()
        self._warm_planner()

    def _warm_planner(self) -> None:
        """Plan one instruction on a made-up scene, so that what the language planner builds on its
        first plan is built before the first goal: that goal's reasoning took 0.7-2.7 s against 0.03-0.1 s
        for the next ones (issue 42's latency bench, seed 71; 2.7 s measured alone at load 17). A failure
        is left for the first goal to meet and report."""
        if self._planner is None:
            return
        you = Viewpoint((0.0, 0.0, 0.5), (1.0, 0.0, 0.0))
        scene = Scene(viewer=you, robot=you, objects=[
            SceneObject("book_1", "book", "book", (0.5, -0.1, 0.02), (0.2, 0.15, 0.03)),
            SceneObject("mug_1", "mug", "mug", (0.5, 0.2, 0.05), (0.08, 0.08, 0.1)),
            SceneObject("table", "table", "table", (0.5, 0.0, -0.02), (0.8, 1.0, 0.04))])
        try:
            with self._reasoning:
                self._planner.plan(scene, "put the second book from the left 10 cm to the right of the mug")
        except Exception:  # noqa: BLE001 - a warm-up only
            pass

    # --- reason -------------------------------------------------------------------------------
    def _arm_reach(self):
        """The arm's model for the place-pose checks and the arm's pixels (built on first use)."""
        with self._building:
            if self._reach is None:
                self._reach = arm_reach(self.config.arm_config_file, self.config.arm_backend, self.config.ur_type)
            return self._reach

    def _make_planner(self):
        name = self.config.planner
        c = self.config
        cfg = {"reach": load_reach(c.arm_config_file, c.arm_backend, c.ur_type)}   # the arm this graph drives
        if name == "program":
            cfg["unnamed_frame"] = c.unnamed_frame
        try:
            return make_planner(name, **cfg)
        except ValueError as e:
            raise SpatialManipError(f"planner_node parameters: {e}", ErrorCode.INVALID_GOAL) from e

    def reason(self, seen: Perceived, goal: GoalRequest, reflection: Reflection | None, trace: Trace) -> Decision:
        scene, obs = seen.scene, seen.observation
        if self._planner is None:
            self._planner = self._make_planner()
        # a name perception refused between two catalogue objects is given when the words name one
        scene, named = name_from_words(scene, goal.instruction)
        if named:
            trace.event("named_by_words", notes=named)
            self.ports.publish_scene(scene)     # the grasp service finds the target under its new id

        def plan_one(sc, text, kind):
            with self._reasoning:
                result = self._planner.plan(sc, text, observation=obs, task_kind=kind)
            trace.event("program_step", instruction=text, program=result.program, steps=result.trace,
                        targets=result.targets, error=result.error, notes=result.notes)
            if not result.ok:
                raise SpatialManipError(result.error["message"], result.error["code"])
            return result

        if (reflection is not None and reflection.retry == RETRY_PLACE and scene.held_object() is not None
                and reflection.named_ids):
            # the pick worked and the object is in the fingers: its words describe nothing on the
            # table any more; plan the place part again on this look. A goal that began with the
            # object in hand (no pick, nothing named) is planned whole again, as the first time:
            # split as a pick-and-place, "place the book lying flat on the shelf" lost its pose
            # and was set down upright (books place-112-00013)
            trace.event("retry_place", holding=scene.held_object().id, instruction=goal.instruction)
            pick, place = None, replan_place(scene, goal.instruction, plan_one)
        else:
            pick, place = plan_compound(scene, goal.instruction, goal.task_kind, plan_one)
        if place is not None and pick is None:
            held = scene.held_object()
            self._workspace()
            if held is not None:
                self._holding = replace(self._holding, object_id=held.id) if self._holding else InHand(object_id=held.id)
        return _decision(scene, pick, place, reflection)

    # --- grasp and move -----------------------------------------------------------------------
    def propose_grasps(self, decision: Decision, seen: Perceived) -> GraspGroup:
        """The pick target's grasps: for a pick its best one alone (the pick asks for the rest only
        when the arm refuses it before moving: `_grasps_to_try`), three times `max_grasp_tries` for a
        pick-and-place (only those that can set it down as asked are tried). A pick asked for all it
        may try, and grasp_node's motion check planned paths for grasps that were never tried: of the
        116 picks that held in session 34's benches, 115 held with the best grasp, and on the five
        recorded motion check requests keeping the best alone took 0.01-0.37 s of CPU against
        0.05-0.42 s for the best five (the same grasp first), all of it a goal's wait for the arm's
        first motion (issue 42)."""
        return self._asked_grasps(decision.pick_id, self.config.max_grasp_tries * 3 if decision.place_pose is not None
                                  else 1)

    def _asked_grasps(self, pick_id: str, n: int) -> GraspGroup:
        grasps = self.ports.propose_grasps(pick_id, n)
        if grasps.frame_id != "base":     # the TCP poses made from them go to the arm in base
            raise SpatialManipError(f"the grasps of {pick_id} came in frame {grasps.frame_id!r}, expected "
                                    "'base': the grasp service must answer in the robot base frame", ErrorCode.INTERNAL)
        return grasps

    def check_place(self, decision: Decision, seen: Perceived, cancel: threading.Event | None = None) -> None:
        """For a dry run: UnreachableError when the planned place cannot be made, as a real run
        would find before the arm moves (with the grasps proposed for a pick-and-place, else with
        the object in hand); CanceledError once `cancel` is set."""
        if decision.place_pose is None:
            return
        if decision.pick_id is not None:
            obj = decision.scene.get(decision.pick_id)
            grasps = self.propose_grasps(decision, seen)
            self._grasps_that_place(grasps, _tcp_poses(grasps), make_transform(obj.rotation, obj.center),
                                    obj.size, decision, cancel)
        elif self._in_hand is not None:
            h = self._holding
            slot, entry = _slot_entry(decision)
            try:
                self._fit_place(decision, entry, (), h.size, h.T_object_tcp, h.width_m, cancel=cancel)
            except UnreachableError as e:      # a real run would regrasp when it can
                if not decision.may_regrasp or self._regrasp(decision, slot, entry, h, e.message)[0] is None:
                    raise

    def pick(self, grasps: GraspGroup, decision: Decision, cancel: threading.Event) -> Grasped:
        gripper = GripperGeometry()
        obj = decision.scene.get(decision.pick_id)
        T_obj = make_transform(obj.rotation, obj.center)
        tcps, place_pose = _tcp_poses(grasps), None
        if decision.place_pose is not None:    # a pick-and-place: only grasps it can set down as asked
            grasps, tcps, place_pose = self._grasps_that_place(grasps, tcps, T_obj, obj.size, decision, cancel)
        errors, tried = [], []
        for g, T_tcp in self._grasps_to_try(grasps, tcps, decision, tried):
            start = self.ports.tcp_pose()
            request = MotionRequest(kind=MOTION_PICK, target=T_tcp,
                                    gripper_width_m=float(gripper.opening_m(g.width)),
                                    lift_height_m=lift_height_for(obj.size),
                                    scene=self._obstacles(decision.scene), target_id=decision.pick_id)
            result = self.ports.run_motion(request, cancel)
            if result.success and result.object_held:
                self._workspace()      # a workspace that came during the motion is older than this grasp
                self._holding = InHand(object_id=decision.pick_id, T_object_tcp=invert(T_obj) @ T_tcp,
                                       size=np.asarray(obj.size, float), width_m=g.width)
                self._carry_refused_at = None
                return Grasped(object_id=decision.pick_id, tcp_pose=T_tcp, score=g.score, width=g.width,
                               tcp_path=result.tcp_path, place_pose=place_pose)
            errors.append(f"{result.error_code or 'GRASP_FAILED'}: {result.message or 'nothing in the gripper'}")
            if result.error_code == "CANCELED" or cancel.is_set():
                break
            if _touched(result, start):   # the rest of the list was proposed for a table that may be gone
                raise TouchedGraspError(f"{len(errors)} grasp(s) of {decision.pick_id} failed, the last after reaching "
                                        "it: " + "; ".join(errors), T_tcp)
            # refused before the arm moved (no path, out of reach): the next grasp may still work
        if not tried and len(grasps):
            raise GraspFailedError(f"every proposed grasp of {decision.pick_id} is one that reached it and failed "
                                   "before; nothing was moved")
        raise GraspFailedError(f"{len(errors)} grasp(s) of {decision.pick_id} failed: " + "; ".join(errors))

    def _grasps_to_try(self, grasps: GraspGroup, tcps, decision: Decision, tried: list):
        """The (grasp, TCP pose) pairs a pick tries, in turn, at most `max_grasp_tries`, each noted
        in `tried` as it is handed out: the proposed ones that did not reach the object and fail
        before (`decision.failed_grasps`), then, for a pick proposed fewer than it may try (its best
        alone: `propose_grasps`), those of a new request for as many as it may try that neither
        failed before nor were tried already (the pick goes on to them only when the arm refused
        the ones before it without moving)."""
        limit = self.config.max_grasp_tries

        def untried(pairs, skipped):
            for g, T_tcp in pairs:
                if len(tried) == limit:
                    return
                if not _tried_before(T_tcp, skipped):
                    tried.append((g, T_tcp))
                    yield g, T_tcp

        yield from untried(zip(grasps, tcps), decision.failed_grasps)
        if decision.place_pose is None and 0 < len(grasps) < limit and len(tried) < limit:
            more = self._asked_grasps(decision.pick_id, limit)
            yield from untried(zip(more, _tcp_poses(more)), (*decision.failed_grasps, *(T for _, T in tried)))

    def _grasps_that_place(self, grasps: GraspGroup, tcps, T_obj, size, decision,
                           cancel: threading.Event | None = None) -> tuple[GraspGroup, list, np.ndarray]:
        """The grasps (and TCP poses) with which the object can be set down at the planned place
        in its pose class (a book held by its edge with a finger under it cannot be laid flat),
        and the set-down they make. Checked before the arm moves, so a task that cannot finish is
        refused instead of leaving the object in the air."""
        kept, why = [], ""
        slot, entry = _slot_entry(decision)
        # the planned set-down first; in a slot, where no grasp can make it, the other places
        # along the slot one by one (the first that some grasp makes is where the place goes)
        for T_place in self._places_to_try(decision, decision.place_pose, slot, size):
            for k, (g, T_tcp) in enumerate(zip(grasps, tcps)):
                try:
                    self._fit_place(decision, entry, (), np.asarray(size, float), invert(T_obj) @ T_tcp,
                                    g.width, places=[T_place], cancel=cancel)
                    kept.append((k, T_tcp))
                except UnreachableError as e:
                    why = e.message
            if kept:
                break
        if not kept:
            raise UnreachableError(f"none of the {len(grasps)} grasps of {decision.pick_id} can set it down at the "
                                   f"planned place (the last: {why}); nothing was moved")
        kept.sort(key=lambda k: _carry_risk(k[1], T_obj))
        return grasps[[k for k, _ in kept]], [t for _, t in kept], T_place

    def set_down(self, decision: Decision, grasped: Grasped | None, cancel: threading.Event) -> SetDown:
        """Where and how the held object goes down: the planned place (or, after this goal's pick,
        the one its grasps were chosen for) fitted to the grasp, set-downs that failed before last."""
        if not self._wait_in_hand(cancel):
            raise MotionFailedError("nothing is known to be in the gripper: pick an object before placing")
        slot, entry = _slot_entry(decision)
        h = self._holding
        regrasp = None
        planned = grasped.place_pose if grasped else None
        try:
            T_obj, T_tcp = self._fit_place(decision, entry, decision.avoid_place_poses, h.size, h.T_object_tcp,
                                           h.width_m, planned=planned, cancel=cancel)
        except UnreachableError as e:
            # held as it came (no pick this goal chose the grasp for this place): set it down where
            # it can go as held, and grasp it again so that it can go here (once a goal)
            if grasped is not None or not decision.may_regrasp:
                raise
            found, why_not = self._regrasp(decision, slot, entry, h, e.message, cancel)
            if found is None:
                raise UnreachableError(f"{e.message}; nor after a regrasp ({why_not})") from e
            T_obj, T_tcp, regrasp = found
        note = _pose_change_note(planned if planned is not None else decision.place_pose, T_obj, h.size)
        return _through_entry(SetDown(object_id=h.object_id, object_pose=T_obj, tcp_pose=T_tcp, size=h.size, slot=slot,
                                      regrasp=regrasp, note=note), entry)

    def _regrasp(self, decision: Decision, slot, entry, h: InHand, why: str, cancel: threading.Event | None = None):
        """((T_obj, T_tcp) of the planned set-down, Regrasp), or (None, why not): the held object
        set down where it can go as it is held, in any pose class (a book held by its side edge
        stands in the slot spine out), then grasped again with the same grasp slid out towards
        its edge (grasping.place_fit.shallower_grasps, the firmest that works) from which the
        planned set-down can be made; the new grasp's pre-grasp and straight approach reached by
        the arm. Everything is checked before the arm moves; each motion is planned by the arm
        server when it is made."""
        if h.T_object_tcp is None or h.size is None:
            return None, "the grasp is not known"
        fits = []
        for T_obj_tcp in shallower_grasps(h.T_object_tcp, h.size):
            try:
                fits.append((T_obj_tcp, self._fit_place(decision, entry, decision.avoid_place_poses, h.size, T_obj_tcp,
                                                        h.width_m, cancel=cancel)))
            except UnreachableError:
                continue
        if not fits:
            return None, "no grasp slid out towards the edge it holds makes it"
        try:   # as held, in any pose class: where the planned place is, or along its slot
            A_obj, A_tcp = self._fit_place(replace(decision, any_pose_class=True), entry, (), h.size, h.T_object_tcp,
                                           h.width_m, cancel=cancel)
        except UnreachableError as e:
            return None, f"it cannot be set down as held to be grasped again: {e.message}"
        reach = self._arm_reach().until(cancel)
        for T_obj_tcp, (T_obj, T_tcp) in fits:
            G = A_obj @ T_obj_tcp
            if not reach.reaches(back_off(G, REGRASP_PRE_M), G):
                continue
            aside = _through_entry(SetDown(object_id=h.object_id, object_pose=A_obj, tcp_pose=A_tcp, size=h.size,
                                           slot=slot_at(decision.scene, A_obj) if entry is not None else None), entry)
            slid = float(np.linalg.norm(T_obj_tcp[:3, 3] - np.asarray(h.T_object_tcp, float)[:3, 3]))
            return (T_obj, T_tcp, Regrasp(reason=why, aside=aside, tcp_pose=G, T_object_tcp=T_obj_tcp,
                                          width_m=h.width_m, slid_m=slid)), ""
        return None, f"the arm reaches none of the {len(fits)} new grasps where it would be set down"

    def _make_regrasp(self, decision: Decision, regrasp: Regrasp, cancel: threading.Event) -> None:
        """Set the held object down as `regrasp.aside` says and grasp it again at `regrasp.tcp_pose`
        (a small lift: the place's own transit takes it on). The object is in the fingers with the
        new grasp after; MotionFailedError / GraspFailedError (not retried) when a motion fails."""
        a = regrasp.aside
        seen = decision.scene.get(a.object_id) if decision.scene is not None and a.object_id in decision.scene.ids() \
            else None
        result = self.ports.run_motion(MotionRequest(kind=MOTION_PLACE, target=a.tcp_pose,
                                                     scene=self._obstacles(decision.scene),
                                                     approach_direction=a.approach_direction,
                                                     approach_distance_m=a.approach_distance_m), cancel)
        if not result.success:
            raise SpatialManipError(f"placing failed: setting {a.object_id} down to grasp it again: {result.message}",
                                    result.error_code or "MOTION_FAILED")
        self._workspace()
        self._holding = None
        self._known_moved(a.object_id, a.object_pose)
        scene = self._obstacles(decision.scene)
        if seen is not None and scene is not None:
            scene = _moved_aside(scene, seen, a.object_pose, a.size)
        result = self.ports.run_motion(MotionRequest(
            kind=MOTION_PICK, target=regrasp.tcp_pose, gripper_width_m=float(GripperGeometry().opening_m(regrasp.width_m)),
            lift_height_m=REGRASP_LIFT_M, scene=scene, target_id=a.object_id), cancel)
        if not (result.success and result.object_held):
            e = GraspFailedError(f"{a.object_id} was set down at {np.round(a.object_pose[:3, 3], 3).tolist()} to be "
                                 f"grasped again {regrasp.slid_m * 100:.1f} cm nearer its edge, and that grasp failed: "
                                 f"{result.error_code or 'GRASP_FAILED'}: {result.message or 'nothing in the gripper'}")
            e.retryable = False
            raise e
        self._workspace()
        self._holding = InHand(object_id=a.object_id, T_object_tcp=np.asarray(regrasp.T_object_tcp, float),
                               size=np.asarray(a.size, float), width_m=regrasp.width_m)

    def place(self, decision: Decision, set_down: SetDown, cancel: threading.Event) -> Placed:
        if set_down.regrasp is not None:
            self._make_regrasp(decision, set_down.regrasp, cancel)
        request = MotionRequest(kind=MOTION_PLACE, target=set_down.tcp_pose, scene=self._obstacles(decision.scene),
                                approach_direction=set_down.approach_direction,
                                approach_distance_m=set_down.approach_distance_m)
        result = self.ports.run_motion(request, cancel)
        if not result.success:
            raise SpatialManipError(f"placing failed: {result.message}", result.error_code or "MOTION_FAILED")
        self._workspace()
        self._holding = None
        self._known_moved(set_down.object_id, set_down.object_pose)
        return Placed(set_down=set_down, tcp_path=result.tcp_path)

    def _known_moved(self, obj_id: str | None, T_obj: np.ndarray) -> None:
        """The latest look, with the object just set down where it now is (not in the hand)."""
        if self._known is None or obj_id not in self._known.ids():
            return
        o = self._known.get(obj_id)
        moved = replace(o, held=False, center=T_obj[:3, 3], rotation=T_obj[:3, :3])
        self._known = self._known.with_objects([x for x in self._known.objects if x.id != obj_id] + [moved])

    def _wait_in_hand(self, cancel: threading.Event) -> bool:
        """Whether something is known to be in the gripper; a reset's workspace (which says
        what is) may arrive just after the goal, so wait for it a little."""
        deadline = time.monotonic() + HELD_WAIT_S
        while True:
            self._workspace()
            if self._in_hand is not None or time.monotonic() >= deadline or cancel.is_set():
                return self._in_hand is not None
            time.sleep(0.05)

    def _fit_place(self, decision: Decision, entry, avoid, size, T_obj_tcp, width_m,
                   places: list | None = None, planned: np.ndarray | None = None,
                   cancel: threading.Event | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(object pose, TCP pose) that set an object of `size` held by `T_obj_tcp` down at the
        planned place: the planned rotation turned (keeping its pose class unless the words
        named none) until the fingers clear the support and the arm reaches it
        (grasping.place_fit); rotations of set-downs that failed before (`avoid`) go last.
        `places`: the object poses to try, in order; by default `planned` (the one a
        pick-and-place's grasps were chosen for; None: the decision's) and, in a slot where that
        cannot be made, other places along the slot (grasping.place_fit.slot_positions). `cancel` (the
        goal's), once set, ends the fitting with CanceledError at its next arm check."""
        place_pose = planned if planned is not None else decision.place_pose
        if size is None:
            return place_pose, place_pose @ T_obj_tcp
        moved = self._held_id or decision.pick_id
        reach = self._arm_reach().until(cancel)
        reach.refuse_if_canceled()     # also when no rotation comes as far as an arm check
        reach = reach.around(decision.scene, moved, size, T_obj_tcp) if moved else reach
        if places is None:
            slot = slot_at(decision.scene, place_pose) if entry is not None else None
            places = self._places_to_try(decision, place_pose, slot, size)
        first, tried = None, 0
        rests = _rests_in(decision.scene, moved, size)
        for tried, T_place in enumerate(places, 1):
            try:
                return fit_place(T_place, size, T_obj_tcp, width_m=width_m, kinematics=reach, entry=entry, avoid=avoid,
                                 any_pose_class=decision.any_pose_class, rests=rests)
            except UnreachableError as e:
                first = first or e
        if tried > 1:
            raise UnreachableError(f"{first.message}; nor at {tried - 1} other place(s) along the slot")
        raise first

    def _places_to_try(self, decision: Decision, first: np.ndarray, slot, size):
        """`first`, then - only if asked for more, and in a slot - the other set-down poses along
        `slot` than the planned one (the planner's, in its middle)."""
        yield first
        if slot is not None:
            moved = self._held_id or decision.pick_id
            yield from slot_positions(decision.scene, slot, decision.place_pose, size, moved)

    # --- verify -------------------------------------------------------------------------------
    def verify(self, decision: Decision, placed: Placed | None, goal: GoalRequest, scene: Scene | None) -> Verified:
        """Check the instruction's constraint on the scene seen after the motion (`scene`, for a
        place: where `placed` says the object was set down)."""
        if placed is None:
            if self.held_id() == decision.pick_id:
                return Verified(True, "", f"{decision.pick_id} is in the gripper")
            return Verified(False, "dropped", "the object was lost")
        put = placed.set_down
        T_want = put.object_pose
        movable = [o for o in scene.objects if o.category not in FIXTURES]
        if not movable:
            return Verified(False, "not_in_region", "nothing was seen after placing")
        tol = self.config.verify_tolerance_m + measurement_error_m(scene, T_want[:3, 3])
        if put.slot is not None:
            verdict = _verify_in_slot(movable, put.slot, T_want[:3, 3], tol)
        else:
            verdict = _verify_placed(scene, movable, put.object_id, T_want, put.size, tol,
                                     _category_of(decision.scene, put.object_id))
        seen_elsewhere = put.slot is None and put.object_id in {o.id for o in movable}
        if verdict[0] or verdict[1] != "not_in_region" or seen_elsewhere:
            return Verified(*verdict)
        return self._unseen_place(put) or Verified(*verdict)

    def verify_on_frame(self, placed: Placed | None, obs: RGBDObservation) -> Verified | None:
        """A set-down confirmed on the first fresh frame after it, without perceiving the scene
        (issue 42: the result follows the arm's stop): where the camera would see the object at
        its set-down pose, of the pixels whose depth is not hidden by something nearer (a shelf
        board, the arm), at least FRAME_SEEN_MIN land inside its box and not beyond it. The pose
        was planned on free space, so nothing else fills it. Only ever confirms, or says the arm's
        own body hides the place (`_unseen_place`): None (perceive and verify in full) otherwise."""
        if placed is None or placed.set_down.size is None:
            return None
        put = placed.set_down
        seen = depth_evidence(obs, put.object_pose, put.size, grow_m=FRAME_GROW_M, lift_m=FRAME_LIFT_M,
                              core_m=FRAME_SLOT_CORE_M if put.slot is not None else FRAME_CORE_M)
        if seen.inside < FRAME_MIN_PIXELS or seen.share_seen() < FRAME_SEEN_MIN:
            q = self.ports.joint_positions()
            if q is None or np.shape(q) != (6,) or not np.all(np.isfinite(q)):
                return None
            arrived = self._arrived_in_slot(put, obs, np.asarray(q, float))
            if arrived:
                return arrived
            # hidden behind the arm's own body: a full look would not see it either
            self._seen_from = (np.asarray(obs.T_base_cam, float)[:3, 3], np.asarray(q, float))
            return self._unseen_place(put)
        where = f"in {put.slot.id}" if put.slot is not None else "at the computed pose"
        return Verified(True, "", f"{put.object_id} seen {where}: its depth fills its set-down box (within "
                                  f"{FRAME_GROW_M * 100:.0f} cm) on {seen.inside} of {seen.inside + seen.behind} "
                                  "pixels that show the place")

    def _arrived_in_slot(self, put: SetDown, obs: RGBDObservation, q: np.ndarray) -> Verified | None:
        """A slot place confirmed by what the frame shows arrived: what a full look's verify asks
        of a slot (an object in it within SLOT_VERIFY_RADIUS_M of the set-down, `_verify_in_slot`),
        asked of the depth that came nearer since the look before the place. A book standing in a
        slot seen from 1.6-2.3 m often misses its own planned box's pixels by a centimetre or two
        (calibration error, a lean), and the full look that then followed cost 7-10 s on a loaded
        machine (issue 42: 3 of 6 place goals at seed 71). None when too little arrived there, the
        look before was from another camera pose, or this is no slot place."""
        before = self._seen_frame
        if put.slot is None or before is None or np.shape(before.depth_m) != np.shape(obs.depth_m) \
                or np.linalg.norm(np.asarray(before.T_base_cam)[:3, 3] - np.asarray(obs.T_base_cam)[:3, 3]) > 0.01:
            return None
        new = new_depth_points(before, obs)
        new = new[~self._arm_reach().planner.robot.points_on(new, q, ARM_SEEN_M)] if len(new) else new
        want = put.object_pose[:3, 3]
        tol = self.config.verify_tolerance_m + float(range_tolerance_m(np.linalg.norm(want - obs.T_base_cam[:3, 3]),
                                                                        sigmas=1.0))
        there = points_in_box(new, put.slot, tol) & (np.linalg.norm(new[:, :2] - want[:2], axis=1)
                                                      <= SLOT_VERIFY_RADIUS_M) if len(new) else np.zeros(0, bool)
        if int(there.sum()) < ARRIVED_MIN_PIXELS:
            return None
        return Verified(True, "", f"{put.object_id} seen in {put.slot.id}: {int(there.sum())} pixels of depth arrived "
                                  f"there within {SLOT_VERIFY_RADIUS_M * 100:.0f} cm of its set-down since the look "
                                  "before the place")

    def _unseen_place(self, put: SetDown) -> Verified | None:
        """A place the look could not show: when the arm's own bodies (the robot model at the look's
        joints) stand between the camera and most of the set-down object, seeing nothing there is
        no evidence of a failed place, and the arm released the object at the planned pose. Says so
        instead of failing (a retry would pick a correctly placed book out again); None when the
        place was in view or the look's joints are unknown."""
        if self._seen_from is None or self._seen_from[1] is None or put.size is None:
            return None
        camera, q = self._seen_from
        T = put.object_pose
        seen = visible_fraction(self._arm_reach().planner.robot, q, camera, T[:3, 3], put.size, T[:3, :3])
        if seen >= PLACE_SEEN_MIN:
            return None
        where = f"in {put.slot.id}" if put.slot is not None else f"at {np.round(T[:3, 3], 3).tolist()}"
        return Verified(True, "", f"{put.object_id} released {where} as planned; not checked by sight: the arm's "
                                  f"own body hides {100 * (1 - seen):.0f}% of it from the camera")

    def _warn_once(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self._warn(text)


def new_depth_points(before: RGBDObservation, after: RGBDObservation) -> np.ndarray:
    """(N, 3) base-frame points of `after` whose pixels' depth came nearer than in `before` (the
    same camera) by more than ARRIVED_NEARER_M or ARRIVED_SIGMAS of the sensor's error there; pixels at a
    depth edge in either frame (flying pixels, which flicker between frames) or without a return
    in either are left out."""
    d0, d1 = np.asarray(before.depth_m, np.float32), np.asarray(after.depth_m, np.float32)
    steady = ~(depth_edge_pixels(d0) | depth_edge_pixels(d1))
    nearer = steady & (d0 > 0) & (d1 > 0) & (d0 - d1 > range_tolerance_m(d1, sigmas=ARRIVED_SIGMAS,
                                                                          floor_m=ARRIVED_NEARER_M))
    pts, _ = backproject(d1, after.intrinsics, mask=nearer)
    return apply(after.T_base_cam, pts)


def _decision(scene: Scene, pick, place, reflection: Reflection | None) -> Decision:
    """The Decision of a planned pick and/or place (program results)."""
    targets = (pick.targets if pick else []) + (place.targets if place else [])
    place_T = None
    if place is not None and place.place_pose is not None:
        place_T = make_transform(quat_to_matrix(place.place_pose.orientation), place.place_pose.position)
    pick_ids = list(pick.targets) if pick else []
    notes = [n for r in (pick, place) if r is not None for n in r.notes]
    if reflection is not None and pick is not None:
        # the words were said about the table before any attempt touched it: of what they
        # describe now, what they described then (a failed grasp's push can tie or reorder a
        # rank), or a refusal; objects whose grasps all failed go last
        pick_ids, kept_note = keep_described(reflection, scene, pick_ids)
        notes += [kept_note] if kept_note else []
        pick_ids.sort(key=lambda i: i in reflection.failed_grasp_ids)
    pick_id = pick_ids[0] if pick_ids else None
    program = " ; ".join(r.program for r in (pick, place) if r is not None and r.program)
    action = "pick_and_place" if pick and place else ("pick" if pick else "place")
    # Any object the words allow may be picked instead when the first cannot be grasped; a
    # placement was planned for the first one's size, so a pick-and-place keeps to it.
    alternatives = pick_ids[1:] if action == "pick" else []
    avoid = tuple(reflection.failed_place_poses) if reflection is not None else ()
    # no pose word ("pose=keep"): the set-down may change the pose class when it must
    free = place is not None and "pose=keep" in (place.program or "")
    # how the words were read (the frame of each left/right and why, spelling fixes, the
    # candidates kept on a retry): the result message repeats them, so a user is never surprised
    return Decision(action, tuple(targets), pick_id=pick_id, pick_alternatives=tuple(alternatives),
                    place_pose=place_T, program=program, notes=tuple(notes), scene=scene, pick_targets=tuple(pick_ids),
                    avoid_place_poses=avoid, any_pose_class=free)


def _pose_change_note(T_planned, T_set, size) -> str:
    """What the result says when the set-down is in another pose class than the planned one (the
    words named no pose, and no way the object is held lets it go down as planned: a book wider
    than the gripper opens is held across its thickness, and laid flat a finger would be under it)."""
    if size is None or T_planned is None:
        return ""
    want, got = pose_class(np.asarray(T_planned)[:3, :3], size), pose_class(np.asarray(T_set)[:3, :3], size)
    if want == got:
        return ""
    return (f"set down {got}, not {want}: as the gripper holds it, it cannot go down {want} there, and the words "
            f"named no pose")


def _slot_entry(decision: Decision):
    scene = decision.scene
    slot = slot_at(scene, decision.place_pose)
    return slot, (None if slot is None else SlotEntry.of_slot(slot, scene.robot.position))


def _through_entry(set_down: SetDown, entry) -> SetDown:
    """`set_down` slid in through the slot's open side (`entry`), not down from above (None: as is)."""
    if entry is None:
        return set_down
    return replace(set_down, approach_direction=np.array([entry.direction[0], entry.direction[1], 0.0]),
                   approach_distance_m=float(entry.approach_m(set_down.object_pose, set_down.size)))


def _moved_aside(scene: Scene, seen, T_obj: np.ndarray, size) -> Scene:
    """`scene` with object `seen` (as the look saw it, in the fingers) standing free at T_obj, and
    the look's depth points on it where it was held no clutter (they were the object)."""
    obj = replace(seen, held=False, center=T_obj[:3, 3], rotation=T_obj[:3, :3], size=np.asarray(size, float),
                  extra={k: v for k, v in seen.extra.items() if k != "T_object_tcp"})
    scene = scene.with_objects([o for o in scene.objects if o.id != seen.id] + [obj])
    cloud = scene.extra.get("cloud")
    if cloud and len(cloud.get("points", [])):
        pts = np.asarray(cloud["points"], float).reshape(-1, 3)
        keep = ~points_in_box(pts, seen, REGRASP_SEEN_M)
        scene = replace(scene, extra={**scene.extra, "cloud": {**cloud, "points": pts[keep].tolist()}})
    return scene


def _rests_in(scene: Scene | None, moved: str | None, size):
    """For fit_place: raises UnreachableError when the moved object, set down at T_obj, would not
    rest in `scene` (geometry.support; the planner checked its own rotation, fit_place turns it)."""
    if scene is None or moved is None or moved not in scene.ids():
        return None
    obj = replace(scene.get(moved), held=False, size=np.asarray(size, float))

    def rests(T_obj: np.ndarray) -> None:
        check_support(scene, replace(obj, center=T_obj[:3, 3], rotation=T_obj[:3, :3]))
    return rests


def _category_of(scene: Scene | None, obj_id: str | None) -> str | None:
    return next((o.category for o in scene.objects if o.id == obj_id), None) if scene is not None else None


def _verify_placed(scene: Scene, movable: list, placed_id: str | None, T_want: np.ndarray, size,
                   tol: float, category: str | None = None) -> tuple[bool, str, str]:
    """The placed object itself, seen after the place, in 3D: its middle within `tol` of the place
    pose's in x-y, its bottom within VERIFY_HEIGHT_TOL_M of the pose's bottom, resting on a
    surface (geometry.support). Another object of its `category` in its place at that height counts
    (perception may have named it otherwise); a failure says what happened to the place ("... below
    the place pose: it fell")."""
    want = T_want[:3, 3]
    want_bottom = float(_corners(SimpleNamespace(center=want, size=np.asarray(size if size is not None else np.zeros(3),
                                                                                   float), rotation=T_want[:3, :3]))[:, 2].min())

    def misses(o) -> tuple[float, float]:      # (x-y distance, how far its bottom is below the pose's)
        return float(np.linalg.norm(o.center[:2] - want[:2])), want_bottom - float(_corners(o)[:, 2].min())

    named = next((o for o in movable if o.id == placed_id), None)
    there = [o for o in movable if misses(o)[0] <= tol and abs(misses(o)[1]) <= VERIFY_HEIGHT_TOL_M
             and category in (None, o.category)]
    if named is not None and named in there:
        there = [named]
    if there:
        obj = min(there, key=lambda o: misses(o)[0])
        surface, gap = resting_surface(scene, obj, VERIFY_HEIGHT_TOL_M)
        if surface is None:
            return False, "not_supported", (f"{obj.id} is seen where it was placed but {gap:.2f} m above the nearest "
                                            "surface under it: it rests on nothing there")
        return True, "", f"{obj.id} placed within {misses(obj)[0] * 100:.1f} cm of the computed pose, on {surface.words}"
    if named is not None:
        xy, below = misses(named)
        if below > VERIFY_HEIGHT_TOL_M:
            return False, "fell", f"the {named.label} ({named.id}) is {below:.2f} m below the place pose: it fell"
        if below < -VERIFY_HEIGHT_TOL_M:
            return False, "not_in_region", (f"the {named.label} ({named.id}) is {-below:.2f} m above the place pose: "
                                            "it did not come down where planned")
        return False, "not_in_region", (f"the {named.label} ({named.id}) is {xy * 100:.1f} cm from the place pose "
                                        f"(tolerance {tol * 100:.0f} cm)")
    near = min(movable, key=lambda o: misses(o)[0])
    xy, below = misses(near)
    what = f"{placed_id} is not seen after placing" if placed_id else "the placed object is not identified"
    return False, "not_in_region", (f"{what}; the nearest object to the place pose, {near.id}, is {xy * 100:.1f} cm "
                                    f"from it in x-y and {below:+.2f} m below it (tolerance {tol * 100:.0f} cm)")


def measurement_error_m(scene: Scene, point: np.ndarray) -> float:
    """What a position seen from `scene`'s viewer may be off by at `point`: one standard deviation
    of the sensor's range noise there (a box's middle averages many points, so what remains is
    bias: misregistration, calibration). Verification allows it on top of the task's tolerance,
    so a place measured 3.1 cm off with 4 mm of measurement error is not a failed place."""
    return float(range_tolerance_m(np.linalg.norm(np.asarray(point, float) - scene.viewer.position), sigmas=1.0))


def _verify_in_slot(movable, slot, want: np.ndarray, tol: float) -> tuple[bool, str, str]:
    """In a slot the boards hide part of the object, which pulls its seen centre to the front:
    what the instruction asks, and what can be checked, is that it is inside."""
    inside = [o for o in movable if point_in_box(o.center, slot, margin_m=tol)
              and np.linalg.norm(o.center[:2] - want[:2]) <= SLOT_VERIFY_RADIUS_M]
    if inside:
        return True, "", f"{inside[0].id} is in {slot.id}"
    return False, "not_in_region", (f"no object is seen in {slot.id} within {SLOT_VERIFY_RADIUS_M * 100:.0f} cm "
                                     f"of where it was set down, {np.round(want, 3).tolist()}")
