"""The `Arm` + `Gripper` backends over the MuJoCo SimWorld (spatial_manip.sim.world).

The sim node passes its own world (`SimArm(world)`); built by name ("sim") without one, the arm
creates a world from a sampled scene (`scene_kind`, `seed`) and owns it. Physics runs inside
the move calls (faster than real time); `stop()` makes the running move return at the next
control period and raise CanceledError. The model's TCP (TOOL0_TCP: 0.1559 m, -90 deg about
tool0 z) is configured for the safety kinematics in arm.yaml under `arm.sim.overrides`.
"""
from __future__ import annotations

import threading

import numpy as np

from spatial_manip.device import Device
from spatial_manip.control.base import DrivenPath, SafetyStatus
from spatial_manip.control.config import load_arm_config
from spatial_manip.motion.arm_plans import make_primitives
from spatial_manip.errors import CanceledError, ConfigError, InvalidGoalError, MotionFailedError
from spatial_manip.sim.layouts import sample_scene
from spatial_manip.sim.world import GRIPPER_MAX_WIDTH_M, SimConfig, SimWorld

ARRIVE_TOL_M = 0.02


class SimArm(Device):
    def __init__(self, world=None, *, scene_kind: str = "tabletop", seed: int = 0, render_width: int = 320,
                 render_height: int = 240):
        self._world, self._owned = world, world is None
        self._scene_kind, self._seed = scene_kind, seed
        self._size = (render_width, render_height)
        self._stop = threading.Event()
        self.gripper = SimGripper(self) if world is not None else None

    @property
    def world(self):
        if self._world is None:
            raise MotionFailedError("the sim arm is not connected; call connect() first")
        return self._world

    def connect(self) -> None:
        if self._world is None:
            self._world = SimWorld(sample_scene(self._scene_kind, self._seed),
                                   config=SimConfig(width=self._size[0], height=self._size[1]), seed=self._seed)
        if self.gripper is None:
            self.gripper = SimGripper(self)

    def close(self) -> None:
        if self._owned and self._world is not None:
            self._world.close()
            self._world = None


    @property
    def is_connected(self) -> bool:
        return self._world is not None

    def move_l(self, T_base_tcp: np.ndarray, speed: float, accel: float) -> None:
        T = np.asarray(T_base_tcp, float)
        self._run("move_l", lambda c: self.world.move_tcp(T, speed_mps=speed, accel_mps2=accel, cancel=c) or self._pressed_on(T))

    def move_j(self, q, speed: float, accel: float) -> None:
        self._run("move_j", lambda c: self.world.move_joints(np.asarray(q, float), speed_rad_s=speed,
                                                                           accel_rad_s2=accel, cancel=c))

    def move_path(self, qs, speed: float, accel: float) -> None:
        """One time-optimal curve through the waypoints within the speed and acceleration limits
        (SimWorld.move_joint_path): the samples driven_path returns."""
        qs = _joint_rows(qs)
        self._run("move_path", lambda c: self.world.move_joint_path(qs, speed_rad_s=speed, accel_rad_s2=accel, cancel=c))

    def driven_path(self, qs, speed: float, accel: float) -> DrivenPath:
        """The joint targets move_path will drive, one per control period (SimWorld.joint_path_samples):
        the MuJoCo servo follows them, straight between neighbours 0.02 s apart."""
        q = self.world.joint_path_samples(_joint_rows(qs), speed_rad_s=speed, accel_rad_s2=accel)
        return DrivenPath(q, np.zeros(len(q) - 1))

    def _pressed_on(self, T: np.ndarray) -> bool:
        """A straight move that contact stopped within ARRIVE_TOL_M of its goal arrived: MuJoCo's
        position servo stops on a finger brushing the target, where the real arm's controller
        would push on the last millimetres."""
        return float(np.linalg.norm(self.world.tcp_pose()[:3, 3] - T[:3, 3])) <= ARRIVE_TOL_M

    def _run(self, what: str, fn) -> None:
        self._stop.clear()
        ok = fn(self._stop.is_set)
        if self._stop.is_set():
            raise CanceledError(f"{what} stopped on request")
        if not ok:
            raise MotionFailedError(f"{what}: the simulated arm could not follow (blocked by contact or IK); "
                                    "check the scene for collisions along the path")

    def stop(self) -> None:
        self._stop.set()

    def joint_positions(self) -> np.ndarray:
        return np.asarray(self.world.joint_positions()[:6], float)

    def tcp_pose(self) -> np.ndarray:
        return self.world.tcp_pose()

    def safety_status(self) -> SafetyStatus:
        return SafetyStatus(connected=self.is_connected, program_running=self.is_connected, detail="simulation")


class SimGripper:
    """The Robotiq 2F-85 of the SimWorld, through the Gripper protocol."""

    def __init__(self, arm: SimArm):
        self._arm = arm

    def connect(self) -> None: ...
    def disconnect(self) -> None: ...
    def activate(self) -> None: ...

    def move(self, width_m: float, speed: float, force: float) -> bool:
        self.start_move(width_m, speed, force)
        return self.wait_moved()

    def start_move(self, width_m: float | None, speed: float, force: float) -> None:
        self._arm.world.command_gripper(GRIPPER_MAX_WIDTH_M if width_m is None else width_m)

    def wait_moved(self) -> bool:
        w = self._arm.world
        w.wait_gripper()
        return w.held_object_id() is not None

    def open(self) -> None:
        self._arm.world.set_gripper(GRIPPER_MAX_WIDTH_M)

    def close(self) -> bool:
        return bool(self._arm.world.close_gripper())

    def width_m(self) -> float:
        return float(self._arm.world.gripper_width())

    def holding(self) -> bool:
        return self._arm.world.held_object_id() is not None


def _joint_rows(qs) -> np.ndarray:
    qs = np.asarray(qs, float)
    if qs.ndim != 2 or qs.shape[1] != 6 or len(qs) == 0 or not np.all(np.isfinite(qs)):
        raise InvalidGoalError(f"a joint path is an (n, 6) array of finite angles, got shape {qs.shape}")
    return qs


def sim_primitives(world, home_q, config_file: str | None = None):
    """MotionPrimitives (planner, safety envelope) over a SimArm on `world`, configured as arm.yaml
    configures the sim backend, with MOTION_HOME going to `home_q`: what sim_node serves, for
    in-process users (the ESPIRE server, tests)."""
    cfg = load_arm_config(config_file or None, {"arm.backend": "sim"})
    cfg["primitives"]["home_q"] = [float(v) for v in home_q]
    arm = SimArm(world)
    return make_primitives(cfg, arm, arm.gripper)


def make_arm(world=None, **cfg) -> SimArm:
    """The sim arm from arm.yaml's `arm.sim` section. `tcp_offset` (passed to every backend) is
    the model's own here; any other unknown key is a misspelling, refused by name."""
    keys = ("scene_kind", "seed", "render_width", "render_height")
    unknown = sorted(set(cfg) - set(keys) - {"tcp_offset"})
    if unknown:
        raise ConfigError(f"arm.sim: unknown key {unknown[0]!r} (value {cfg[unknown[0]]!r}); known: {', '.join(keys)}")
    return SimArm(world, **{k: v for k, v in cfg.items() if k in keys})
