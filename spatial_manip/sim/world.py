"""SimWorld: a MuJoCo world built from a Scene (UR5e + Robotiq 2F-85, books, supports, references,
an RGB-D camera), with the arm and gripper primitives the sim backends and the sim node use.

API (stable; all poses 4x4 in the world = robot `base` frame, metres):

    world = SimWorld(scene, config=SimConfig(width=640, height=480, sensing=IDEAL), seed=0)
    world.reset(scene=None, seed=0)           # rebuild from a scene (None: the current one); the
                                              #   sensing profile's effects are drawn from the seed
    obs = world.render()                      # RGBDObservation: rgb, depth_m (background 0),
                                              #   intrinsics, T_base_cam, segmentation (H, W) int32
                                              #   (-1 none), segment_ids {index: scene object id}
    world.joint_names                         # 6 UR joints + GRIPPER_JOINT_NAME
    world.joint_positions() -> (7,)           # arm radians + gripper opening in metres
    world.tcp_pose() -> 4x4                   # TCP: z = approach, y = finger closing axis, as the
                                              #   controller reports it (the nominal arm model)
    world.T_base_cam                          # the camera pose the calibration gives (rendered from
                                              #   T_base_cam_true; they differ under the profile)
    world.move_tcp(T, speed_mps=0.2, cancel=None) -> bool   # Cartesian straight line, physics on
    world.move_joints(q, speed_rad_s=1.0, cancel=None) -> bool
    world.set_gripper(width_m) -> None; world.close_gripper() -> bool (object held)
    world.command_gripper(width_m); world.wait_gripper()   # set_gripper in two: the fingers move
                                              #   with the physics of the arm's motions meanwhile
    world.held_object_id() -> str | None
    world.object_pose(id) -> 4x4; world.export_scene() -> Scene (same ids, current poses, held)
    world.visible_fractions(ids=None) -> {id: fraction of the object's unoccluded pixels seen}
    world.pose_arm(q)                         # set the arm's joints at once (no physics; for views)
    world.step(n); world.close()
    world.step_callbacks                      # list of fn(world) run after every physics step
                                              #   (e.g. sim.contacts.ContactMonitor); empty: no cost

move_tcp raises UnreachableError when no IK solution reaches the target (before moving) and
returns False when cancelled or when the arm could not follow (blocked by contact).
T_tool0_tcp of this model (TOOL0_TCP): translation [0, 0, 0.1559], rotation -90 deg about tool0 z.
Headless rendering needs MUJOCO_GL=egl (or osmesa): importing spatial_manip chooses one (rendering.py).
"""
from __future__ import annotations

import copy
import functools
import math
import os
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable

import cv2
import mujoco
import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from spatial_manip.control.kinematics import DH_PRESETS, URKinematics
from spatial_manip.control.trajectory_arm import cosine_duration
from spatial_manip.errors import UnreachableError
from spatial_manip.heap import release_freed_memory
from spatial_manip.motion.timing import time_parameterise
from spatial_manip.rendering import NO_GL_MESSAGE
from spatial_manip.camera_model import CameraIntrinsics, project
from spatial_manip.transforms import apply, invert, make_transform
from spatial_manip.motion.robot import RobotModel, description_paths
from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import Scene
from spatial_manip.sim import layouts, mjcf, object_sets
from spatial_manip.sim.layouts import camera_pose
from spatial_manip.sim.sensing import IDEAL, SensingProfile

GRIPPER_JOINT_NAME = "robotiq_85_left_knuckle_joint"   # published like the ROS Robotiq driver
GRIPPER_MAX_WIDTH_M = 0.085
GRIPPER_SETTLE_S = 0.6    # physics time the fingers get to reach a commanded width
HOME_Q = np.array([-math.pi, -1.9, 1.9, -1.57, -1.57, 0.0])   # elbow up, tool above the front of the table
# hanging low behind the base, below the camera's rays to the table: where the arm waits while the
# camera looks (sim_node's MOTION_HOME; the task generator checks visibility from here). On 24
# generated pick scenes, books and references are 0.857 visible on average (0.867 with no arm
# at all), against 0.835 with the arm folded up beside the base as it was before.
STOW_Q = np.array([0.0, 0.5, 1.0, -3.0, 0.0, 0.0])
TOOL0_TCP = np.array([[0.0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 1, 0.1559], [0, 0, 0, 1]])

START_SELF_CLEARANCE_M = 0.005  # a scene's starting arm keeps this between its own collision bodies (place-21-00000 began 7 mm clear and moved well)


@functools.lru_cache(maxsize=1)
def _description():
    """The UR5e's collision model from urdf/ (as the planner uses it), with the sim's TCP."""

    return RobotModel(*description_paths("ur5e"), T_tool0_tcp=TOOL0_TCP)


CONTROL_DT_S = 0.02
PATH_START_RAD = 0.005    # a path's first row this close to the joints is where the arm is (TrajectoryArm's tolerance)


@dataclass(frozen=True, kw_only=True)
class SimConfig:
    width: int = 640
    height: int = 480
    fovy_deg: float = 43.3                # L515 colour at 640x480: fx = fy ~ 605 px
    # depth noise, misregistration, calibration and arm errors, lighting (sim/sensing.py); the
    # benchmark, demo and sim_node run `realistic`, a world built for a check or a test `ideal`
    sensing: SensingProfile = IDEAL
    timestep_s: float = 0.002
    book_density_kg_m3: float = 350.0     # books of 0.1-0.9 kg: within what the 2F-85 model holds
    settle_s: float = 1.0                 # max physics after a motion (stops early once converged)
    ik_tol_m: float = 1e-3
    ik_tol_rad: float = math.radians(0.5)
    max_speed_mps: float = 0.5
    # free space the arm's initial pose must keep from everything but itself. The sim node's reset
    # needs none; the task generator asks for some, so a scene it keeps still resets when the
    # sensing profile offsets the arm's links by a millimetre or two
    start_clearance_m: float = 0.0

    def __post_init__(self):
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"image size must be positive, got {self.width}x{self.height}")
        if not 10.0 <= self.fovy_deg <= 120.0:
            raise ValueError(f"fovy_deg must be within 10-120 degrees, got {self.fovy_deg}")
        if not 0 < self.timestep_s <= 0.01:
            raise ValueError(f"timestep_s must be in (0, 0.01] for stable grasps, got {self.timestep_s}")
        if self.book_density_kg_m3 <= 0 or self.max_speed_mps <= 0:
            raise ValueError("book_density_kg_m3 and max_speed_mps must be positive")
        if not 0.0 <= self.start_clearance_m <= 0.05:
            raise ValueError(f"start_clearance_m must be within 0-0.05 m, got {self.start_clearance_m}")


def _control_periods(distance: float, speed: float, accel: float | None) -> int:
    """Control periods of a cosine-profile move over `distance`: within the peak speed and
    acceleration a controller keeps (`cosine_duration`) when `accel` is given; else at `speed` on
    average (its peak is pi/2 times that: the backend's moves pass their limits)."""
    duration = cosine_duration(distance, speed, accel) if accel else distance / speed
    return max(1, int(math.ceil(duration / CONTROL_DT_S)))


def _pose_error(T_target: np.ndarray, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dp = T_target[:3, 3] - T[:3, 3]
    dr = Rotation.from_matrix(T_target[:3, :3] @ T[:3, :3].T).as_rotvec()
    return dp, dr


class SimWorld:
    def __init__(self, scene: Scene, *, config: SimConfig | None = None, seed: int = 0):
        self.config = config or SimConfig()
        self.lock = threading.RLock()      # callers share one world between render and physics
        # fn(world) after every single physics step of step() and of the arm's motions, under the
        # lock; kept across reset(). Empty: physics runs in one mj_step call, as without the hook.
        self.step_callbacks: list[Callable[["SimWorld"], None]] = []
        self._renderer = None
        self._renderer_model, self._renderer_tid = None, None
        self.reset(scene, seed)

    # --- building -------------------------------------------------------------------------------
    def reset(self, scene: Scene | None = None, seed: int = 0) -> None:
        with self.lock:
            scene = scene if scene is not None else self.scene
            self.scene = scene
            self.rng = np.random.default_rng(seed)           # the depth noise of each frame
            self.sensing = self.config.sensing.draw(seed)
            c = self.config
            spec, self.meta = mjcf.build_spec(scene, width=c.width, height=c.height, fovy_deg=c.fovy_deg,
                                              book_density=c.book_density_kg_m3, timestep_s=c.timestep_s,
                                              light_scale=self.sensing.light_scale)
            self.model = spec.compile()
            self._apply_sensing()
            self.data = mujoco.MjData(self.model)
            self._kd = mujoco.MjData(self.model)            # scratch data for checks on the true model
            self._nd = mujoco.MjData(self._nominal)         # scratch data for the controller's IK
            self._index()
            self._gripper_due_s = 0.0   # physics time by which the fingers reach their last command
            self._init_robot(scene)     # the renderer is rebuilt for the new model on the next render
            self._builds = getattr(self, "_builds", 0) + 1    # which model a view key belongs to
            self._clean_frame: tuple | None = None     # (view key, rgb, seg, depth as the noise takes it): the last drawing
        release_freed_memory()

    def _apply_sensing(self) -> None:
        """The episode's surface colours and arm errors on the compiled model. The controller's
        model (`_nominal`: IK, the reported TCP pose) keeps the nominal links, as a real UR's
        controller keeps its nominal kinematics while the arm it drives differs."""
        m, draw = self.model, self.sensing
        gains = draw.colour_gains(len(self.meta.object_ids))
        index = {oid: i for i, oid in enumerate(self.meta.object_ids)}
        for g in range(m.ngeom):
            name = m.geom(g).name
            if name.startswith("obj:"):
                m.geom_rgba[g, :3] = np.clip(m.geom_rgba[g, :3] * gains[index[name.split(":")[1]]], 0, 1)
        self._nominal = copy.deepcopy(m) if draw.link_offsets_m else m
        for link, offset in draw.link_offsets_m.items():
            m.body_pos[m.body(link).id] += offset

    def _index(self) -> None:
        m = self.model
        self._arm_jnt = [m.joint(n).id for n in mjcf.ARM_JOINTS]
        self._arm_qadr = np.array([m.jnt_qposadr[j] for j in self._arm_jnt])
        self._arm_dadr = np.array([m.jnt_dofadr[j] for j in self._arm_jnt])
        self._arm_act = np.array([m.actuator(n).id for n in mjcf.ARM_ACTUATORS])
        self._grip_act = m.actuator(mjcf.GRIPPER_ACTUATOR).id
        self._grip_qadr = m.jnt_qposadr[m.joint(mjcf.GRIPPER_JOINT).id]
        self._tcp = m.site(mjcf.TCP_SITE).id
        self._cam = m.camera(mjcf.CAMERA).id
        self._pads = {m.body(n).id for n in mjcf.PAD_BODIES}
        self._pad_geoms = {g for g in range(m.ngeom) if m.geom_bodyid[g] in self._pads}
        self._body_of = {oid: m.body(f"obj:{oid}").id for oid in self.meta.dynamic_ids}
        self._id_of_body = {b: oid for oid, b in self._body_of.items()}
        self.robot_parts = self._robot_parts()
        self._q_limits = np.array([m.jnt_range[j] for j in self._arm_jnt])
        self._curve_memo: tuple[tuple, np.ndarray] | None = None   # joint_path_samples' last (key, samples)
        # geom -> segmentation index (position of the object in scene.objects), -1 robot / floor
        index = {oid: i for i, oid in enumerate(self.meta.object_ids)}
        self._geom_seg = np.full(m.ngeom, -1, np.int32)
        for g in range(m.ngeom):
            name = m.geom(g).name
            if name.startswith("obj:"):
                self._geom_seg[g] = index[name.split(":")[1]]

    def _init_robot(self, scene: Scene) -> None:
        m, d = self.model, self.data
        T_ee = np.asarray(scene.extra["ee_pose"], float) if "ee_pose" in scene.extra else None
        q = HOME_Q.copy()
        if T_ee is not None:
            q = self._start_joints(T_ee)
            if q is None:
                raise UnreachableError(f"the scene's initial TCP pose {T_ee[:3, 3].round(3).tolist()} has no IK solution; "
                                       "resample the scene")
        held = scene.held_object()
        d.ctrl[self._grip_act] = 0.0
        hit = self._arm_contact(q)
        if hit:
            raise UnreachableError(f"the scene's initial arm pose collides ({hit[0]} with {hit[1]}); resample the scene")
        near = self._near_object(self.config.start_clearance_m) if self.config.start_clearance_m > 0 else None
        if near:
            raise UnreachableError(f"the scene's initial arm pose leaves less than {self.config.start_clearance_m * 1000:.0f} mm "
                                   f"between {near[0]} and {near[1]}; resample the scene")
        if held is not None:
            # close on the carried book while pinning it in place, so it does not fall meanwhile
            b = self._body_of[held.id]
            qadr = m.jnt_qposadr[m.body_jntadr[b]]
            q0 = d.qpos[qadr:qadr + 7].copy()
            d.ctrl[self._grip_act] = 255.0
            for _ in range(int(0.8 / m.opt.timestep)):
                mujoco.mj_step(m, d)
                d.qpos[qadr:qadr + 7] = q0
                d.qvel[m.jnt_dofadr[m.body_jntadr[b]]:m.jnt_dofadr[m.body_jntadr[b]] + 6] = 0
        self.step(int(0.3 / m.opt.timestep))

    def _start_joints(self, T_ee: np.ndarray) -> np.ndarray | None:
        """The arm's joints for the scene's initial TCP pose: the IK solution reached from HOME_Q,
        unless it folds the arm within START_SELF_CLEARANCE_M of itself by the robot description's
        collision bodies (the meshes here do not collide, the planner's bodies do, and no motion
        leaves such a start: place-21-00011 began 1 mm inside, place-22-00010 1 mm clear); then,
        of the branches that touch nothing, the one that keeps the most (the nearest first). A
        solution that touches something here is kept, and refused as before."""
        q = self._ik(T_ee, HOME_Q)
        robot = _description()
        if q is None or robot.self_clearance(q)[0] >= START_SELF_CLEARANCE_M or self._arm_contact(q):
            return q
        others = (self._ik_dls(T_ee, seed, 50) for seed in self._analytic_seeds(T_ee, HOME_Q))
        free = [c for c in [q, *others] if c is not None and self._arm_contact(c) is None]
        return max(free, key=lambda c: robot.self_clearance(c)[0]) if free else q

    def _arm_contact(self, q: np.ndarray) -> tuple[str, str] | None:
        """Pose the arm at q (as commanded); the first two bodies of a contact involving the
        robot, by name, or None."""
        m, d = self.model, self.data
        d.qpos[self._arm_qadr] = q
        d.ctrl[self._arm_act] = q
        mujoco.mj_forward(m, d)
        robot = self.robot_parts
        for i in range(d.ncon):
            b1, b2 = m.geom_bodyid[d.contact[i].geom1], m.geom_bodyid[d.contact[i].geom2]
            if (b1 in robot or b2 in robot) and d.contact[i].dist < -1e-3:
                return m.body(b1).name, m.body(b2).name
        return None

    def _near_object(self, clearance_m: float) -> tuple[str, str] | None:
        """The first arm body and movable object closer than clearance_m, by name, or None, with
        the arm where _arm_contact posed it. The gripper holds the held object: only the arm's
        links are kept clear of that one."""
        m, d = self.model, self.data
        moving = {b for b, part in self.robot_parts.items() if part != "base"}
        links = {b for b, part in self.robot_parts.items() if part == "arm"}
        held = {self._body_of[o.id] for o in self.scene.objects if o.held and o.id in self._body_of}
        solid = [g for g in range(m.ngeom) if m.geom_contype[g] | m.geom_conaffinity[g]]
        for g2 in (g for g in range(m.ngeom) if m.geom_bodyid[g] in self._id_of_body):
            near = links if m.geom_bodyid[g2] in held else set(moving)
            for g1 in (g for g in solid if m.geom_bodyid[g] in near):
                if mujoco.mj_geomDistance(m, d, g1, g2, clearance_m, None) < clearance_m:
                    return m.body(m.geom_bodyid[g1]).name, m.body(m.geom_bodyid[g2]).name
        return None

    def _robot_parts(self) -> dict[int, str]:
        """The robot's bodies (every body but the world and the scene's objects) by part: "gripper"
        (named with mjcf.GRIPPER_PREFIX), "arm" (the links the arm's joints move), "base" (its
        fixed mount). The one classification of the robot's parts, for the start checks here and
        sim.contacts.ContactMonitor."""
        m = self.model
        root = m.jnt_bodyid[self._arm_jnt[0]]
        return {b: "gripper" if m.body(b).name.startswith(mjcf.GRIPPER_PREFIX)
                else "arm" if self._descends_from(b, root) else "base"
                for b in range(1, m.nbody) if b not in self._id_of_body}

    def _descends_from(self, body: int, root: int) -> bool:
        while body > 0:
            if body == root:
                return True
            body = self.model.body_parentid[body]
        return False

    # --- state ----------------------------------------------------------------------------------
    @property
    def joint_names(self) -> list[str]:
        return list(mjcf.ARM_JOINTS) + [GRIPPER_JOINT_NAME]

    def joint_positions(self) -> np.ndarray:
        """The arm's joints and the gripper's opening; while a motion (or a reset) holds the world,
        as its last control period left them, without waiting for it: a real arm reports its
        joints while it moves, and the arm server's state readers waited out whole motions and
        frames for the lock (issue 42)."""
        if not self.lock.acquire(blocking=False):
            q, width, _ = self._state
            return np.r_[q, width]
        try:
            return np.r_[self.data.qpos[self._arm_qadr], self.gripper_width()]
        finally:
            self.lock.release()

    def gripper_width(self) -> float:
        """Opening between the pads, metres (from the driver joint: 0 rad open, ~0.8 rad closed)."""
        a = float(self.data.qpos[self._grip_qadr])
        return float(np.clip(GRIPPER_MAX_WIDTH_M * (1.0 - a / 0.8), 0.0, GRIPPER_MAX_WIDTH_M))

    def tcp_pose(self) -> np.ndarray:
        """The TCP pose as the controller reports it: the nominal model at the arm's joints (while a
        motion holds the world, at its last control period's, as `joint_positions`)."""
        if not self.lock.acquire(blocking=False):
            return self._state[2].copy()
        try:
            return self._nominal_tcp(self.data.qpos[self._arm_qadr])
        finally:
            self.lock.release()

    def _note_state(self) -> None:
        """Keep the arm's state for readers that come while the world is held (the caller holds
        the lock): after every physics call and every pose set without physics."""
        q = self.data.qpos[self._arm_qadr].copy()
        self._state = (q, self.gripper_width(), self._nominal_tcp(q))

    def actual_tcp_pose(self) -> np.ndarray:
        """Where the simulated arm's TCP really is (differs from tcp_pose under the profile's
        arm_kinematics): the simulator's truth, for tests and diagnostics, never for the planner."""
        with self.lock:
            return self._site_pose(self.data)

    def _nominal_tcp(self, q: np.ndarray) -> np.ndarray:
        nd = self._nd
        nd.qpos[:] = self.data.qpos
        nd.qpos[self._arm_qadr] = q
        mujoco.mj_kinematics(self._nominal, nd)
        return self._site_pose(nd)

    def _site_pose(self, d) -> np.ndarray:
        return make_transform(d.site_xmat[self._tcp].reshape(3, 3).copy(), d.site_xpos[self._tcp].copy())

    def object_pose(self, obj_id: str) -> np.ndarray:
        with self.lock:
            if obj_id in self._body_of:
                b = self._body_of[obj_id]
                return make_transform(self.data.xmat[b].reshape(3, 3).copy(), self.data.xpos[b].copy())
            o = self.scene.get(obj_id)
            return make_transform(o.rotation, o.center)

    def held_object_id(self) -> str | None:
        """The book both pads touch, if any."""
        with self.lock:
            m, d = self.model, self.data
            touching: dict = {}
            for i in range(d.ncon):
                c = d.contact[i]
                for g_pad, g_obj in ((c.geom1, c.geom2), (c.geom2, c.geom1)):
                    if g_pad in self._pad_geoms:
                        b = int(m.geom_bodyid[g_obj])
                        if b in self._id_of_body:
                            touching.setdefault(b, set()).add(int(m.geom_bodyid[g_pad]))
            for b, pads in touching.items():
                if len(pads) == 2:
                    return self._id_of_body[b]
            return None

    def export_scene(self) -> Scene:
        with self.lock:
            held = self.held_object_id()
            objs = []
            for o in self.scene.objects:
                o2 = type(o)(**{**o.__dict__, "extra": dict(o.extra)})
                if o.id in self._body_of:
                    T = self.object_pose(o.id)
                    o2.center, o2.rotation = T[:3, 3], T[:3, :3]
                    o2.held = o.id == held
                objs.append(o2)
            s = self.scene.with_objects(objs)
            s.extra = {**self.scene.extra, "ee_pose": self.tcp_pose().tolist()}
            return s

    # --- physics --------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        with self.lock:
            self._mj_step(int(n))

    def _mj_step(self, n: int) -> None:
        if not self.step_callbacks:
            mujoco.mj_step(self.model, self.data, n)
        else:
            for _ in range(n):
                mujoco.mj_step(self.model, self.data)
                for fn in tuple(self.step_callbacks):
                    fn(self)
        self._note_state()

    def _ik(self, T: np.ndarray, q0: np.ndarray, iters: int = 100) -> np.ndarray | None:
        """DLS from q0; if that is stuck (limits, wrist flips), DLS from each analytic UR solution
        (nearest to q0 first: the DH model differs from the mesh model by ~1 mm)."""
        q = self._ik_dls(T, q0, iters)
        if q is not None:
            return q
        for seed in self._analytic_seeds(T, q0):
            q = self._ik_dls(T, seed, 50)
            if q is not None:
                return q
        return None

    def reachable(self, T: np.ndarray) -> bool:
        """Whether `move_tcp(T)` would find an IK solution from the current joints."""
        T = np.asarray(T, float)
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise ValueError(f"reachable expects a finite 4x4 pose, got shape {T.shape}")
        with self.lock:
            q_now = self.data.qpos[self._arm_qadr].copy()
            return self._ik(T, q_now) is not None

    def ik_near(self, T: np.ndarray, q_ref: np.ndarray) -> np.ndarray | None:
        """The joints for TCP pose T on the analytic branch nearest q_ref (largest joint change,
        as `URKinematics.ik` ranks them), refined on this model; None when unreachable. The grasp
        service checks the arm's links on that same branch."""
        seeds = sorted(self._analytic_seeds(T, q_ref), key=lambda q: float(np.max(np.abs(q - q_ref))))
        for seed in seeds:
            with self.lock:
                q = self._ik_dls(np.asarray(T, float), seed, 50)
            if q is not None:
                return q
        return None

    def _analytic_seeds(self, T: np.ndarray, q0: np.ndarray) -> list:
        kin = URKinematics(**DH_PRESETS["ur5e"], q_min=tuple(self._q_limits[:, 0]), q_max=tuple(self._q_limits[:, 1]),
                           T_tool0_tcp=TOOL0_TCP)
        sols = kin.ik_all(T, q0)
        return sorted(sols, key=lambda q: float(np.sum(np.abs(q - q0))))

    def _ik_dls(self, T: np.ndarray, q0: np.ndarray, iters: int) -> np.ndarray | None:
        """Damped least squares on the TCP site Jacobian (arm joints only), within joint limits, on
        the controller's (nominal) model."""
        m, kd = self._nominal, self._nd
        kd.qpos[:] = self.data.qpos
        q = np.array(q0, float)
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        lam = 0.05
        for _ in range(iters):
            kd.qpos[self._arm_qadr] = q
            mujoco.mj_kinematics(m, kd)
            mujoco.mj_comPos(m, kd)
            dp, dr = _pose_error(T, self._site_pose(kd))
            if np.linalg.norm(dp) < self.config.ik_tol_m * 0.2 and np.linalg.norm(dr) < self.config.ik_tol_rad * 0.2:
                return q
            mujoco.mj_jacSite(m, kd, jacp, jacr, self._tcp)
            J = np.vstack([jacp[:, self._arm_dadr], jacr[:, self._arm_dadr]])
            e = np.r_[dp, dr]
            dq = J.T @ np.linalg.solve(J @ J.T + lam ** 2 * np.eye(6), e)
            n = np.linalg.norm(dq)
            if n > 0.3:
                dq *= 0.3 / n
            q = np.clip(q + dq, self._q_limits[:, 0], self._q_limits[:, 1])
        kd.qpos[self._arm_qadr] = q
        mujoco.mj_kinematics(m, kd)
        dp, dr = _pose_error(T, self._site_pose(kd))
        ok = np.linalg.norm(dp) < self.config.ik_tol_m and np.linalg.norm(dr) < self.config.ik_tol_rad
        return q if ok else None

    def _drive(self, q_target: np.ndarray, cancel) -> bool:
        """One control period towards q_target; False if cancelled."""
        if cancel is not None and cancel():
            self.data.ctrl[self._arm_act] = self.data.qpos[self._arm_qadr]
            return False
        self.data.ctrl[self._arm_act] = q_target
        self._mj_step(int(round(CONTROL_DT_S / self.model.opt.timestep)))
        return True

    def _settle(self, q_target, cancel) -> bool:
        """Hold q_target until the joints converge; then correct a steady offset (payload, contact)
        by commanding past the target once, as an integral term would."""
        q_cmd = np.array(q_target, float)
        for _ in range(2):
            for _ in range(int(self.config.settle_s / CONTROL_DT_S)):
                if not self._drive(q_cmd, cancel):
                    return False
                if np.max(np.abs(self.data.qvel[self._arm_dadr])) < 1e-3:
                    break
            err = q_target - self.data.qpos[self._arm_qadr]
            if np.max(np.abs(err)) < 2e-4:
                break
            q_cmd = q_cmd + err
        return True

    def move_tcp(self, T_target: np.ndarray, *, speed_mps: float = 0.2, accel_mps2: float | None = None,
                 cancel: Callable[[], bool] | None = None) -> bool:
        """A straight line to `T_target` on a cosine profile. With `accel_mps2` (the arm's backend
        passes its limits) the profile's peak speed and acceleration keep within `speed_mps` and
        it, as a controller's; without, `speed_mps` is the line's mean speed (tools that drive the
        world directly: the oracle, the grasp-stability bench)."""
        T_target = np.asarray(T_target, float)
        if T_target.shape != (4, 4):
            raise ValueError(f"move_tcp expects a 4x4 pose, got shape {T_target.shape}")
        speed = float(np.clip(speed_mps, 1e-3, self.config.max_speed_mps))
        with self.lock:
            q_now = self.data.qpos[self._arm_qadr].copy()
            if self._ik(T_target, q_now) is None:
                raise UnreachableError(f"no IK solution for TCP at {T_target[:3, 3].round(3).tolist()}: outside the "
                                       "UR5e workspace or joint limits; choose a closer pose")
            T0 = self._nominal_tcp(q_now)
            dist = max(np.linalg.norm(T_target[:3, 3] - T0[:3, 3]),
                       0.15 * np.linalg.norm(_pose_error(T_target, T0)[1]))    # 1 rad ~ 15 cm of travel
            n = _control_periods(dist, speed, accel_mps2)
            slerp = Slerp([0, 1], Rotation.from_matrix([T0[:3, :3], T_target[:3, :3]]))
            q = q_now
            for i in range(1, n + 1):
                s = i / n
                s = 0.5 - 0.5 * math.cos(math.pi * s)          # smooth start and stop
                Ti = make_transform(slerp([s]).as_matrix()[0], (1 - s) * T0[:3, 3] + s * T_target[:3, 3])
                qi = self._ik_dls(Ti, q, 30)
                q = qi if qi is not None else q
                if not self._drive(q, cancel):
                    return False
            q_final = self._ik(T_target, q)
            if q_final is None or not self._settle(q_final, cancel):
                return False
            dp, dr = _pose_error(T_target, self._nominal_tcp(self.data.qpos[self._arm_qadr]))
            return bool(np.linalg.norm(dp) < 0.005 and np.linalg.norm(dr) < math.radians(2))

    def move_joints(self, q: np.ndarray, *, speed_rad_s: float = 1.0, accel_rad_s2: float | None = None,
                    cancel: Callable[[], bool] | None = None) -> bool:
        """A joint move on a cosine profile; `accel_rad_s2` as `move_tcp`'s `accel_mps2` (the
        leading joint's peak speed and acceleration within the limits)."""
        q = np.asarray(q, float).reshape(-1)[:6]
        if np.any(q < self._q_limits[:, 0]) or np.any(q > self._q_limits[:, 1]):
            raise UnreachableError(f"joint target {q.round(3).tolist()} is outside the joint limits")
        with self.lock:
            q0 = self.data.qpos[self._arm_qadr].copy()
            n = _control_periods(float(np.max(np.abs(q - q0))), max(speed_rad_s, 1e-3), accel_rad_s2)
            for i in range(1, n + 1):
                s = 0.5 - 0.5 * math.cos(math.pi * i / n)
                if not self._drive(q0 + s * (q - q0), cancel):
                    return False
            if not self._settle(q, cancel):
                return False
            return bool(np.max(np.abs(self.data.qpos[self._arm_qadr] - q)) < 0.01)

    def move_joint_path(self, rows: np.ndarray, *, speed_rad_s: float, accel_rad_s2: float,
                        cancel: Callable[[], bool] | None = None) -> bool:
        """Through the joint waypoints `rows` ((n, 6)) without stopping at each: the targets of
        joint_path_samples, one per control period; then settle on the last row."""
        rows = np.asarray(rows, float).reshape(-1, 6)
        with self.lock:
            qs = self.joint_path_samples(rows, speed_rad_s=speed_rad_s, accel_rad_s2=accel_rad_s2)
            for q in qs[1:]:            # the last period may be shorter: driven as a whole one, never faster
                if not self._drive(q, cancel):
                    return False
            if not self._settle(rows[-1], cancel):
                return False
            return bool(np.max(np.abs(self.data.qpos[self._arm_qadr] - rows[-1])) < 0.01)

    def joint_path_samples(self, rows: np.ndarray, *, speed_rad_s: float, accel_rad_s2: float) -> np.ndarray:
        """The joint targets move_joint_path drives, one per control period, the first where the
        arm is now: the planner's time-optimal curve through `rows` (motion.timing.time_parameterise,
        the one its final check verified), every joint within `speed_rad_s` and `accel_rad_s2`,
        ending on the last row. A first row within PATH_START_RAD of the joints now is where the
        arm already is. The last answer is kept: the safety envelope asks for the curve just
        before the move drives it (SimArm.driven_path)."""
        rows = np.asarray(rows, float).reshape(-1, 6)
        if np.any(rows < self._q_limits[:, 0]) or np.any(rows > self._q_limits[:, 1]):
            raise UnreachableError(f"a joint path row of {rows.round(3).tolist()} is outside the joint limits")
        v, a = max(speed_rad_s, 1e-3), max(accel_rad_s2, 1e-3)
        with self.lock:
            q0 = self.data.qpos[self._arm_qadr].copy()
        key = (q0.tobytes(), rows.tobytes(), v, a)
        if self._curve_memo is None or self._curve_memo[0] != key:
            path = np.vstack([q0, rows[1:] if np.max(np.abs(rows[0] - q0)) <= PATH_START_RAD else rows])
            qs = time_parameterise(path, v, a, CONTROL_DT_S)[1]
            qs[-1] = rows[-1]           # where the curve ends, up to the interpolator's rounding
            self._curve_memo = (key, qs)
        return self._curve_memo[1].copy()

    def set_gripper(self, width_m: float) -> None:
        """Open (or close) to `width_m` between the pads (0 .. 0.085) and let the fingers settle."""
        with self.lock:
            self.command_gripper(width_m)
            self.wait_gripper()

    def command_gripper(self, width_m: float) -> None:
        """Send the fingers towards `width_m` (0 .. 0.085) and return: they move with whatever
        physics runs next (an arm motion's), as a real gripper moves while the arm does."""
        w = float(np.clip(width_m, 0.0, GRIPPER_MAX_WIDTH_M))
        with self.lock:
            self.data.ctrl[self._grip_act] = 255.0 * (1.0 - w / GRIPPER_MAX_WIDTH_M)
            self._gripper_due_s = self.data.time + GRIPPER_SETTLE_S

    def wait_gripper(self) -> None:
        """Step the physics until the fingers have had GRIPPER_SETTLE_S since their last command
        (nothing when an arm motion ran that long since)."""
        with self.lock:
            left_s = self._gripper_due_s - self.data.time
            if left_s > 0:
                self.step(int(math.ceil(left_s / self.model.opt.timestep - 1e-6)))   # 0.6 s: 300 steps

    def close_gripper(self) -> bool:
        """Close fully; True when both pads hold a book."""
        with self.lock:
            self.data.ctrl[self._grip_act] = 255.0
            self.step(int(0.8 / self.model.opt.timestep))
            return self.held_object_id() is not None

    # --- camera ---------------------------------------------------------------------------------
    @property
    def intrinsics(self) -> CameraIntrinsics:
        return CameraIntrinsics.from_fovy(self.config.width, self.config.height, self.config.fovy_deg)

    @property
    def T_base_cam(self) -> np.ndarray:
        """The camera's pose as the cell's calibration gives it (what the planner is told)."""
        return self.T_base_cam_true @ self.sensing.T_cam_error

    @property
    def T_base_cam_true(self) -> np.ndarray:
        """The pose MuJoCo renders from."""
        return camera_pose(self.scene.viewer)

    def _get_renderer(self) -> mujoco.Renderer:
        # A GL context belongs to the thread that made it: render from one thread (the sim node
        # has a camera thread); a new model or another thread gets a new renderer.
        tid = threading.get_ident()
        if self._renderer is not None and (self._renderer_model is not self.model or self._renderer_tid != tid):
            self._drop_renderer()
        if self._renderer is None:
            try:
                self._renderer = mujoco.Renderer(self.model, self.config.height, self.config.width)
            except Exception as e:  # MuJoCo's GL errors end deep in a traceback; say what to do
                raise RuntimeError(f"MuJoCo could not render with MUJOCO_GL={os.environ.get('MUJOCO_GL', '')!r} "
                                   f"({type(e).__name__}: {e}); {NO_GL_MESSAGE}") from e
            self._renderer_model, self._renderer_tid = self.model, tid
        return self._renderer

    def _drop_renderer(self) -> None:
        r, self._renderer = self._renderer, None
        if r is not None and self._renderer_tid == threading.get_ident():
            r.close()
        # a renderer from another thread cannot be closed here; its context goes with the process

    def _render_seg(self, r) -> tuple[np.ndarray, np.ndarray]:
        r.update_scene(self.data, camera=self._cam)
        return _seg_of(r, self._geom_seg)

    def render(self, clock: Callable[[], float] | None = None) -> RGBDObservation:
        """One frame. The world is locked only while its state is copied into the renderer's scene:
        drawing it and the sensor's effects hold up no motion and no state reading (under load a
        frame took 0.3-1 s, and the arm server's joint readings waited that long, issue 42).
        `clock()` (seconds), when given, stamps the frame as the state is copied, under the lock: the
        instant the frame shows, as a camera stamps its exposure (default: the simulation time). A
        frame asked for while an arm motion holds the world is exposed after that motion, not when asked."""
        with self.lock:
            r = self._get_renderer()
            r.update_scene(self.data, camera=self._cam)
            stamp_s = float(clock()) if clock is not None else float(self.data.time)
            sensing, rng, geom_seg = self.sensing, self.rng, self._geom_seg
            zfar = 0.99 * self.model.vis.map.zfar * self.model.stat.extent
            frame = dict(intrinsics=self.intrinsics, T_base_cam=self.T_base_cam, stamp_s=stamp_s,
                         segment_ids={i: oid for i, oid in enumerate(self.meta.object_ids)})
            key, drawn = self._view_key(), self._clean_frame
        if drawn is not None and drawn[0] == key:
            # nothing the renderer draws has moved since: the same pixels, without drawing them
            # again (a still world between motions is most of a goal; a frame is 3 GL passes of
            # 0.2 s CPU, and the camera draws 5 a second); the sensor's noise below stays per frame
            rgb, seg, sensed = drawn[1].copy(), drawn[2].copy(), drawn[3]
        else:
            rgb = r.render().copy()
            r.enable_depth_rendering()
            try:
                depth = r.render().astype(np.float32)
            finally:
                r.disable_depth_rendering()
            seg, geom = _seg_of(r, geom_seg)
            depth[(geom < 0) | (depth >= zfar)] = 0.0
            depth = sensing.shift_depth(depth)      # registered to colour a few pixels off
            sensed = sensing.depth_noise.prepare(depth) if sensing.depth_noise is not None else depth
            with self.lock:
                self._clean_frame = (key, rgb.copy(), seg.copy(), sensed)
        depth = sensing.depth_noise.apply_to(sensed, rng) if sensing.depth_noise is not None else sensed.copy()
        return RGBDObservation(rgb=rgb, depth_m=depth, segmentation=seg, **frame)

    def _view_key(self) -> tuple:
        """What a frame's clean pixels follow from (the caller holds the lock): the model (each reset
        builds one, with its episode's lights), the colours (visible_fractions hides geoms for a
        while), the camera (an ESPIRE ego view moves it) and every pose the renderer draws."""
        m, d = self.model, self.data
        return (self._builds, *(a.tobytes() for a in (m.geom_rgba, m.cam_fovy, d.cam_xpos, d.cam_xmat, d.light_xpos,
                                                       d.light_xdir, d.geom_xpos, d.geom_xmat, d.site_xpos, d.site_xmat)))

    def pose_arm(self, q) -> None:
        """Put the arm at joints `q` instantly, without moving anything else (to look from a pose)."""
        q = np.asarray(q, float)
        if q.shape != (6,) or not np.all(np.isfinite(q)):
            raise ValueError(f"arm joints must be 6 finite angles (rad), got {q.tolist()}")
        with self.lock:
            self.data.qpos[self._arm_qadr] = q
            self.data.ctrl[self._arm_act] = q
            mujoco.mj_forward(self.model, self.data)
            self._note_state()

    def visible_fractions(self, ids=None) -> dict:
        """Seen pixels / the object's pixels per object: those it would cover rendered alone (every
        other geom hidden), times the share of its box's outline inside the image. A book nine
        tenths beyond the image's edge is a tenth visible, not wholly (pick-23-00014: 'the third
        farthest book' of three, one of them a sliver at the edge)."""
        scene = self.export_scene()
        with self.lock:
            ids = list(ids) if ids is not None else [o.id for o in self.scene.objects if _watched(o)]
            r = self._get_renderer()
            seg, _ = self._render_seg(r)
            index = {oid: i for i, oid in enumerate(self.meta.object_ids)}
            alpha = self.model.geom_rgba[:, 3].copy()
            out = {}
            try:
                for oid in ids:
                    k = index[oid]
                    self.model.geom_rgba[:, 3] = np.where(self._geom_seg == k, alpha, 0.0)
                    alone, _ = self._render_seg(r)
                    total = int(np.count_nonzero(alone == k))
                    in_frame = in_frame_share(scene.get(oid), scene, self.config)
                    out[oid] = float(np.count_nonzero(seg == k)) / total * in_frame if total else 0.0
            finally:
                self.model.geom_rgba[:, 3] = alpha
            return out

    def close(self) -> None:
        with self.lock:
            self._drop_renderer()

    def __enter__(self) -> "SimWorld":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _seg_of(r: mujoco.Renderer, geom_seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(object index by `geom_seg`, geom) per pixel of the scene `r` was last updated with."""
    r.enable_segmentation_rendering()
    try:
        seg = r.render()
    finally:
        r.disable_segmentation_rendering()
    geom = np.where(seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM), seg[..., 0], -1)
    out = np.full(geom.shape, -1, np.int32)
    ok = geom >= 0
    out[ok] = geom_seg[geom[ok]]
    return out, geom


def _watched(o) -> bool:
    """Objects a task may name, which ESPIRE's visibility rule covers: books, references and
    everyday objects (sim/object_sets.py)."""
    return o.category in ("book", "reference") or object_sets.is_everyday(o)


def visibility_shortfall(scene: Scene, *, min_visible: float = 0.2, held_min_visible: float = 0.5,
                         arm_q=None, config: SimConfig | None = None, world: SimWorld | None = None) -> dict:
    """{id: fraction seen} of the books and references seen less than ESPIRE requires from the
    camera: `min_visible` of each object's pixels, `held_min_visible` for the book in the gripper.
    The arm is at `arm_q` (None: the scene's initial pose). `world`: one already built for
    `scene` to count in (sim.tasks checks a reset in it first) instead of building another.
    Raises UnreachableError when the scene's initial arm pose is not reachable."""
    cfg = config or SimConfig(width=320, height=240)     # a coarser image is enough to count pixels
    need = _visibility_needed(scene, min_visible, held_min_visible)
    outside = out_of_view(scene, min_visible=min_visible, held_min_visible=held_min_visible, config=cfg)
    if outside:          # answered without building the world: most rejected draws end here
        return outside
    with (nullcontext(world) if world is not None else SimWorld(scene, config=cfg)) as w:
        if arm_q is not None:
            w.pose_arm(arm_q)
        vis = w.visible_fractions(need)
    return {oid: round(v, 2) for oid, v in vis.items() if v < need[oid]}


def out_of_view(scene: Scene, *, min_visible: float = 0.2, held_min_visible: float = 0.5,
                config: SimConfig | None = None) -> dict:
    """{id: 0.0} of the watched objects whose box falls outside the camera's image: visibility_shortfall's
    answer when there are any, found without building a world."""
    cfg = config or SimConfig(width=320, height=240)
    need = _visibility_needed(scene, min_visible, held_min_visible)
    return {o.id: 0.0 for o in scene.objects if need.get(o.id, 0) > 0 and _outside_image(o, scene, cfg)}


def _visibility_needed(scene: Scene, min_visible: float, held_min_visible: float) -> dict:
    return {o.id: (held_min_visible if o.held else min_visible) for o in scene.objects if _watched(o)}


def _image_corners(obj, scene: Scene, cfg: SimConfig) -> tuple[np.ndarray, np.ndarray]:
    """The object's box corners in the camera's frame and as pixels of a `cfg` image (the pixels
    mean nothing for a corner at or behind the camera plane)."""
    pc = apply(invert(camera_pose(scene.viewer)), obj.corners())
    uv, _ = project(pc, CameraIntrinsics.from_fovy(cfg.width, cfg.height, cfg.fovy_deg))
    return pc, uv


def in_frame_share(obj, scene: Scene, cfg: SimConfig) -> float:
    """The share of the object's box outline, projected into the camera, that lies inside the
    image (1 when a corner is behind the camera: the outline is not a polygon then)."""
    pc, uv = _image_corners(obj, scene, cfg)
    if np.any(pc[:, 2] <= 1e-3):
        return 1.0
    hull = cv2.convexHull(np.round(uv).astype(np.int64).reshape(-1, 1, 2))
    lo = np.minimum(hull.reshape(-1, 2).min(axis=0), 0)
    hi = np.maximum(hull.reshape(-1, 2).max(axis=0), (cfg.width - 1, cfg.height - 1))
    if np.prod(hi - lo + 1) > 64 * cfg.width * cfg.height:
        return 1.0                    # a box reaching far past the image: a close-up, not a sliver
    canvas = np.zeros((int(hi[1] - lo[1] + 1), int(hi[0] - lo[0] + 1)), np.uint8)
    cv2.fillConvexPoly(canvas, (hull - lo).astype(np.int32), 1)
    total = int(canvas.sum())
    inside = int(canvas[-lo[1]:-lo[1] + cfg.height, -lo[0]:-lo[0] + cfg.width].sum())
    return inside / total if total else 1.0


def _outside_image(obj, scene: Scene, cfg: SimConfig) -> bool:
    """True when the object's box lies wholly beyond one edge of the image (or behind the camera),
    so none of it can be seen; False does not promise that any of it is."""
    pc, uv = _image_corners(obj, scene, cfg)
    if np.any(pc[:, 2] <= 1e-3):      # at or behind the camera plane: only wholly behind is sure
        return bool(np.all(pc[:, 2] <= 1e-3))
    u, v = uv[:, 0], uv[:, 1]
    return bool(np.all(u < 0) or np.all(u >= cfg.width) or np.all(v < 0) or np.all(v >= cfg.height))


def sample_visible_scene(kind: str, seed: int, *, min_visible: float = 0.2, attempts: int = 8,
                         config: SimConfig | None = None, **layout_kw) -> Scene:
    """A layout whose books and references are each at least `min_visible` visible from the
    camera (robot included) and whose initial arm pose is reachable; deterministic in `seed`
    (attempt k uses the Generator seeded with (seed, k))."""
    last = "no attempt"
    for k in range(attempts):
        rng = np.random.default_rng([seed, k])
        scene = layouts.sample_tabletop(rng, **layout_kw) if kind == "tabletop" else \
            layouts.sample_shelf(rng, **layout_kw) if kind == "shelf" else None
        if scene is None:
            raise ValueError(f"scene kind must be 'tabletop' or 'shelf', got {kind!r}")
        try:
            low = visibility_shortfall(scene, min_visible=min_visible, held_min_visible=min_visible, config=config)
        except UnreachableError as e:
            last = str(e)
            continue
        if not low:
            scene.extra["sample_attempt"] = k
            return scene
        last = f"objects below {min_visible:.0%} visible: {low}"
    raise ValueError(f"no {kind} scene for seed {seed} in {attempts} attempts ({last}); "
                     "lower min_visible or ask for fewer objects")
