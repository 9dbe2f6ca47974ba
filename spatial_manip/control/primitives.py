"""Pick, place, home and waypoint motions over the `Arm` / `Gripper` protocols.

Every motion is planned and checked before the arm makes it (`motion.arm_plans`: collision-free
paths around the goal's scene, straight segments, the SafetyEnvelope at every configuration), is
checked again by the envelope just before it reaches the arm (`_follow`, `_line`: the joint
limits, the workspace and keep-out boxes, the table, the speed caps, from where the arm is then),
and runs phase by phase, reporting `progress(phase, detail, fraction)`. Place, home and waypoints are
checked in full before the arm moves. A pick starts as soon as its transit and approach are
checked: its lift is planned and the fingers open while the arm travels to the pre-grasp, and
a lift that fails there leaves the arm stopped at the pre-grasp, the fingers never closed.
A `cancel` Event is checked between phases and watched during them: setting it calls
`arm.stop()` and the primitive raises CanceledError. Nothing is retried here.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from concurrent import futures
from typing import Callable, Mapping, Sequence

import numpy as np

from spatial_manip.config import build
from spatial_manip.control.base import Arm, Gripper
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import CanceledError, GraspFailedError, InvalidGoalError

ProgressFn = Callable[[str, str, float], None]


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrimitivesConfig:
    approach_distance_m: float = 0.10
    lift_height_m: float = 0.10
    speed_m_s: float = 0.25
    accel_m_s2: float = 1.2
    contact_speed_scale: float = 0.5      # approach, lift, descent, retreat: slower near contact pushes
                                          # objects less and lets a marginal grasp hold
    joint_speed_rad_s: float = 1.05
    joint_accel_rad_s2: float = 1.4
    gripper_speed: float = 0.5
    gripper_force: float = 0.5
    home_q: tuple[float, ...] = (np.pi, -np.pi / 2, np.pi / 2, -np.pi / 2, -np.pi / 2, 0.0)

    def __post_init__(self):
        for f in ("approach_distance_m", "lift_height_m"):
            if not (0.0 <= getattr(self, f) <= 0.5):
                raise InvalidGoalError(f"primitives.{f} must be within 0..0.5 m, got {getattr(self, f)}")
        if not (0.0 < self.contact_speed_scale <= 1.0):
            raise InvalidGoalError(f"primitives.contact_speed_scale must be within (0, 1], got {self.contact_speed_scale}")
        if len(self.home_q) != 6:
            raise InvalidGoalError(f"primitives.home_q needs 6 joint angles, got {self.home_q}")
        for f in ("speed_m_s", "accel_m_s2", "joint_speed_rad_s", "joint_accel_rad_s2"):
            if not (math.isfinite(getattr(self, f)) and getattr(self, f) > 0):
                raise InvalidGoalError(f"primitives.{f}: {getattr(self, f)!r} is not a positive number")
        for f in ("gripper_speed", "gripper_force"):
            if not 0.0 <= getattr(self, f) <= 1.0:
                raise InvalidGoalError(f"primitives.{f}: {getattr(self, f)!r} is not within 0..1 (of the gripper's range)")

    @classmethod
    def from_config(cls, cfg: Mapping) -> "PrimitivesConfig":
        """From arm.yaml's `primitives` section; an unknown key or a wrong type is refused (a
        misspelt speed was dropped and the default used). grasp_to_tcp_rotation is the grasping
        config's (config.grasp_to_tcp_rotation reads it)."""
        return build(cls, cfg, "primitives", ignore=("grasp_to_tcp_rotation",))


@dataclasses.dataclass
class MotionResult:
    final_pose: np.ndarray
    object_held: bool = False
    tcp_path: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))   # the planned way


PATH_POINTS = 100     # a transit's TCP samples kept for a result (a 4 s path has 500)


def planned_path(start: np.ndarray, transit, *poses) -> np.ndarray:
    """The TCP's planned way (n, 3): from `start` (a pose), out of a contact, along the transit's
    samples (thinned to PATH_POINTS), then through the straight moves' end `poses`."""
    points = [np.asarray(start, float)[:3, 3]]
    if transit.clear_T is not None:
        points.append(transit.clear_T[:3, 3])
    if transit.path is not None and len(transit.path.tcp):
        tcp = np.asarray(transit.path.tcp, float)
        points += list(tcp[np.unique(np.linspace(0, len(tcp) - 1, min(len(tcp), PATH_POINTS)).astype(int))])
    points += [np.asarray(T, float)[:3, 3] for T in poses]
    return np.array(points)


class MotionPrimitives:
    """The motions over one arm. Every transit is a collision-free joint path planned around
    the goal's scene (`motion.arm_plans`); every straight move is checked against it too. After
    a pick the target rides along as a body on the gripper until a place sets it down."""

    def __init__(self, arm: Arm, gripper: Gripper | None, safety: SafetyEnvelope, config: PrimitivesConfig,
                 plans):
        self.arm, self.gripper, self.safety, self.config, self.plans = arm, gripper, safety, config, plans
        self.held = None        # motion.world.Attached: what the last pick put in the fingers

    # ---- public primitives ---------------------------------------------------------------
    def pick(self, grasp_T: np.ndarray, *, width_m: float = 0.0, approach_m: float | None = None,
             lift_m: float | None = None, speed_scale: float = 0.0, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, approach_dir=None, scene=None, target_id: str = "") -> MotionResult:
        """Follow a planned path to the pre-grasp (approach_m back along `approach_dir`, default
        the TCP z axis; a shorter stand-off where that one is out of reach or blocked:
        pre_grasp_poses), the fingers opening on the way, approach linearly, close, lift along
        base +z. GraspFailedError (after the lift) if nothing is held. `scene` is what to avoid;
        `target_id` names the object in it being grasped (touched on the approach, carried after)."""
        gripper = self._need_gripper("pick")
        grasp_T = np.asarray(grasp_T, float)
        pres = pre_grasp_poses(grasp_T, motion_distance(approach_m, self.config.approach_distance_m), approach_dir)
        lifts = raised_poses(grasp_T, motion_distance(lift_m, self.config.lift_height_m))
        v, a, vj, aj = self._speeds(speed_scale)
        start_T = self.arm.tcp_pose()
        t0 = time.perf_counter()
        start = self.plans.pick_start(self.arm.joint_positions(), grasp_T, pres, scene, target_id)
        checked_s = time.perf_counter() - t0
        lift_plan = _in_background(lambda: self.plans.pick_lift(start, lifts), "pick-lift-plan")
        run = _Runner(self.arm, progress, cancel, total=5)
        try:
            self._to_pre_grasp(run, gripper, width_m, start.transit, vj, aj, checked_s)
        finally:                        # whatever stopped the arm, the lift's planning is over when pick returns
            futures.wait([lift_plan])
        lift = lift_plan.result()       # refused: the arm stays stopped at the pre-grasp, the fingers open
        v_near = v * self.config.contact_speed_scale
        run.phase("approach", "linear approach to the grasp", lambda: self._line(grasp_T, v_near, a))
        held = run.phase("close", "closing the gripper", gripper.close)
        self.held = start.held if held else None
        run.phase("lift", "lifting", lambda: self._line(lift, v_near, a))
        run.done("lift")
        if not held and gripper.holding():
            # the lift tests the grasp too: the fingers hold what they carried up, whatever closing
            # said. A bowl's 4 mm wall pinched at its rim read no object when the fingers stopped
            # (closed to 0.004 m) and came up in them: reported failed, the arm went home with it
            # and the look again found no bowl on the table (objects-88-00000 at 6ff6438)
            held, self.held = True, start.held
        if not held:
            raise GraspFailedError(f"the gripper closed to {gripper.width_m():.3f} m without detecting an object; "
                                   "check the grasp pose and width")
        if not gripper.holding():       # it slipped out while lifting: the grasp failed, whatever closing said
            self.held = None
            raise GraspFailedError(f"the object slipped out of the gripper during the lift (closed to "
                                   f"{gripper.width_m():.3f} m); a grasp nearer its middle may hold")
        return MotionResult(self.arm.tcp_pose(), object_held=True, tcp_path=planned_path(start_T, start.transit,
                                                                                         grasp_T, lift))

    def _to_pre_grasp(self, run: "_Runner", gripper: Gripper, width_m: float, transit, vj: float, aj: float,
                      checked_s: float = 0.0) -> None:
        """The transit to the pre-grasp with the fingers opening (to width_m; 0: fully) on the
        way once the arm is out of any contact; fingers that hold something open first, where
        the arm stands, as a pick always opened them. `checked_s`: how long planning and checking
        the transit and approach took (the detail says it: the arm waited that long, issue 42)."""
        def open_fingers():
            gripper.start_move(width_m if width_m > 0 else None, self.config.gripper_speed, self.config.gripper_force)

        if gripper.holding():
            run.total += 1
            run.phase("open", "opening the gripper", lambda: (open_fingers(), gripper.wait_moved()))
        self.held = None
        path = transit.path
        found = "" if path is None else \
            f" ({getattr(path, 'found_by', '') or 'planned'} in {getattr(path, 'planning_time_s', 0.0) * 1000:.0f} ms" \
            f"{f'; with the approach checked, {checked_s * 1000:.0f} ms' if checked_s else ''})"
        self._transit(run, "pre_grasp", f"planned path to the pre-grasp{found}, the fingers opening on the way", transit,
                      vj, aj, leaving=open_fingers)
        run.phase("open", "the fingers finish opening", gripper.wait_moved)

    def place(self, place_T: np.ndarray, *, approach_m: float | None = None, retreat_m: float | None = None,
              speed_scale: float = 0.0, progress: ProgressFn | None = None,
              cancel: threading.Event | None = None, approach_dir=None, scene=None,
              release_if: Callable[[], bool] | None = None) -> MotionResult:
        """Follow a planned path, carrying the held object, to the pre-place pose (approach_m
        back along `approach_dir`, default the TCP z axis: above the place pose for a top-down
        grasp; +x to slide into a shelf slot), move in linearly, open, retreat the way it came.
        `release_if()`, asked at the place pose: False backs out to the pre-place pose still
        holding (a result with object_held=True), so the caller can try elsewhere."""
        gripper = self._need_gripper("place")
        place_T = np.asarray(place_T, float)
        pre = back_off(place_T, motion_distance(approach_m, self.config.approach_distance_m), approach_dir)
        retreat = back_off(place_T, motion_distance(retreat_m, self.config.lift_height_m), approach_dir)
        held = self._held(scene)
        plan = self.plans.place(self.arm.joint_positions(), place_T, pre, retreat, scene, held)
        path = planned_path(self.arm.tcp_pose(), plan.transit, place_T, retreat)
        v, a, vj, aj = self._speeds(speed_scale)
        run = _Runner(self.arm, progress, cancel, total=4)
        self._transit(run, "pre_place", "planned path to the pre-place pose", plan.transit, vj, aj)
        v_near = v * self.config.contact_speed_scale
        run.phase("descend", "linear descent", lambda: self._line(place_T, v_near, a))
        if release_if is not None and not release_if():
            run.phase("back_out", "backing out, still holding", lambda: self._line(pre, v_near, a))
            run.done("back_out")
            return MotionResult(self.arm.tcp_pose(), object_held=True, tcp_path=path)
        run.phase("open", "releasing", gripper.open)
        self.held = None
        run.phase("retreat", "retreating", lambda: self._line(retreat, v_near, a))
        run.done("retreat")
        return MotionResult(self.arm.tcp_pose(), object_held=False, tcp_path=path)

    def home(self, *, speed_scale: float = 0.0, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, scene=None) -> MotionResult:
        transit = self.plans.home(self.arm.joint_positions(), self.config.home_q, scene, self._held(scene))
        path = planned_path(self.arm.tcp_pose(), transit)
        _, _, vj, aj = self._speeds(speed_scale)
        run = _Runner(self.arm, progress, cancel, total=1)
        self._transit(run, "home", "planned path home", transit, vj, aj)
        run.done("home")
        return MotionResult(self.arm.tcp_pose(), tcp_path=path)

    def waypoints(self, poses: Sequence[np.ndarray], *, speed_scale: float = 0.0,
                  progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                  scene=None) -> MotionResult:
        """Linear moves through TCP poses; the gripper is untouched."""
        poses = [np.asarray(T, float) for T in poses]
        self.plans.waypoints(self.arm.joint_positions(), poses, scene, self._held(scene))
        v, a, _, _ = self._speeds(speed_scale)
        run = _Runner(self.arm, progress, cancel, total=len(poses))
        for i, T in enumerate(poses):
            run.phase("waypoint", f"waypoint {i + 1}/{len(poses)}", lambda T=T: self._line(T, v, a))
        run.done("waypoint")
        return MotionResult(self.arm.tcp_pose())

    # ---- helpers -------------------------------------------------------------------------
    def _transit(self, run: "_Runner", name: str, detail: str, transit, vj: float, aj: float,
                 leaving: Callable[[], None] = lambda: None) -> None:
        """A planned transit (`arm_plans.Transit`): out of a contact first when it starts in one,
        then its path (None: already there, the phase is reported and nothing moves).
        `leaving()` is called once the arm is clear of any contact, as the path starts."""
        if transit.clear_T is not None:
            v, a, _, _ = self._speeds(0.0)
            run.total += 1
            run.phase("clear", "moving straight out of contact", lambda: self._line(transit.clear_T, v, a))
        def follow():
            leaving()
            if transit.path is not None:
                self._follow(transit.path.waypoints, vj, aj)

        run.phase(name, detail, follow)

    def _follow(self, waypoints: np.ndarray, vj: float, aj: float) -> None:
        """Every joint path reaches the arm here, checked from where the arm is now, as the arm
        will drive it (its driven_path), and its speeds capped by the envelope
        (SafetyEnvelope.checked_path), whichever planner produced it."""
        self.arm.move_path(*self.safety.checked_path(self.arm.joint_positions(), waypoints, vj, aj,
                                                     driven=self.arm.driven_path))

    def _line(self, T: np.ndarray, v: float, a: float) -> None:
        """Every straight move reaches the arm here, checked from where the arm is now and its
        speeds capped by the envelope (SafetyEnvelope.checked_line)."""
        self.arm.move_l(*self.safety.checked_line(self.arm.joint_positions(), T, v, a))

    def _held(self, scene):
        """What is in the fingers: the goal's scene says so (a held object), else the last pick."""
        from_scene = self.plans.held_in(scene, self.arm.tcp_pose()) if scene is not None else None
        return from_scene or self.held

    def _speeds(self, scale: float):
        if not (0.0 <= scale <= 1.0):
            raise InvalidGoalError(f"speed_scale must be within 0..1 (0 = default), got {scale}")
        c = self.config
        s = scale or 1.0
        # capped before scaling: a configured speed over the envelope's limit still makes the contact
        # moves (contact_speed_scale of it) slower than the transits, not as fast as the cap
        v, a = self.safety.clamp_speed(c.speed_m_s, c.accel_m_s2)
        vj, aj = self.safety.clamp_speed(c.joint_speed_rad_s, c.joint_accel_rad_s2, joint=True)
        return v * s, a, vj * s, aj

    def _need_gripper(self, what: str) -> Gripper:
        if self.gripper is None:
            raise InvalidGoalError(f"{what} needs a gripper but none is configured (arm.gripper.backend)")
        return self.gripper


def _in_background(fn: Callable, name: str) -> futures.Future:
    """fn() run on a thread of its own: its result (or its exception) in the Future."""
    future: futures.Future = futures.Future()

    def run():
        try:
            future.set_result(fn())
        except BaseException as e:  # noqa: BLE001 - handed to whoever asks for the result
            future.set_exception(e)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


class _Runner:
    """Runs phases in order, with progress reports and a cancel watcher around each."""

    def __init__(self, arm: Arm, progress: ProgressFn | None, cancel: threading.Event | None, total: int):
        self.arm, self.progress, self.cancel = arm, progress, cancel
        self.total, self.index = max(1, total), 0

    def phase(self, name: str, detail: str, fn: Callable):
        self._check_cancel(name)
        if self.progress:
            self.progress(name, detail, self.index / self.total)
        with self._watch():
            try:
                result = fn()
            except CanceledError:
                raise
            except Exception:
                if self.cancel is not None and self.cancel.is_set():
                    raise CanceledError(f"canceled during {name}") from None
                raise
        self._check_cancel(name)
        self.index += 1
        return result

    def done(self, name: str):
        if self.progress:
            self.progress(name, "done", 1.0)

    def _check_cancel(self, name: str):
        if self.cancel is not None and self.cancel.is_set():
            raise CanceledError(f"canceled at phase {name}; the arm was stopped")

    @contextlib.contextmanager
    def _watch(self):
        """While a phase runs, a thread waits for cancel and stops the arm at once."""
        if self.cancel is None:
            yield
            return
        finished = threading.Event()

        def watcher():
            while not finished.is_set():
                if self.cancel.wait(0.005):
                    # repeat until the phase returns: a stop that lands just before the backend
                    # starts its motion must not be lost
                    while not finished.is_set():
                        self.arm.stop()
                        finished.wait(0.02)
                    return

        t = threading.Thread(target=watcher, name="cancel-watch", daemon=True)
        t.start()
        try:
            yield
        finally:
            finished.set()
            t.join(1.0)


RISE_FRACTIONS = (1.0, 0.75, 0.5, 0.25)   # of a hover or lift height, tried highest first
# of a pick's approach distance, tried longest first: the pre-grasps to stand off at when the full
# distance is out of reach or blocked. An edge pinch at a lying book's end nearest the robot has
# no arm configuration 10 cm back from it (the wrist would fold into the shoulder) but has at 4-6
# cm (pick-63-00004); the grasp service keeps a grasp that one of them reaches, and the pick tries
# them in this order, so both take the same one
STAND_OFF_FRACTIONS = (1.0, 0.6, 0.4)


def pre_grasp_poses(T: np.ndarray, approach_m: float, direction=None) -> list[np.ndarray]:
    """The pre-grasps of a grasp at TCP pose T to try, longest stand-off first (STAND_OFF_FRACTIONS
    of `approach_m`, back along `direction`, default the TCP z axis)."""
    return [back_off(T, f * approach_m, direction) for f in STAND_OFF_FRACTIONS]


def motion_distance(value: float | None, default: float) -> float:
    """A goal's approach or lift distance: `default` for None or 0, else within 0..0.5 m;
    InvalidGoalError otherwise (a negative, NaN or too long one)."""
    if value is None or value == 0:
        return default
    if not (0.0 < value <= 0.5):
        raise InvalidGoalError(f"approach/lift distances must be within 0..0.5 m (0 = default), got {value}")
    return float(value)


def raised_poses(T: np.ndarray, rise: float) -> list[np.ndarray]:
    """T raised along base z by each of RISE_FRACTIONS of `rise`, highest first: the lifts or
    hovers to try when the full one is beyond the arm's reach."""
    return [_offset_along_base_z(T, f * rise) for f in RISE_FRACTIONS]


# a book held by one end may swing down in the fingers until it hangs: lift it its own length
# (plus a margin) so it leaves its support anyway, within these bounds
LIFT_MIN_M, LIFT_MAX_M, LIFT_MARGIN_M = 0.10, 0.30, 0.03


def lift_height_for(size) -> float:
    """How far to lift after grasping an object of this size (m) so that it clears what it
    stood on, even hanging from its end."""
    size = np.asarray(size, float)
    if size.size == 0 or not np.all(np.isfinite(size)):
        raise InvalidGoalError(f"object size must be finite metres, got {size.tolist()}")
    return float(np.clip(float(np.max(size)) + LIFT_MARGIN_M, LIFT_MIN_M, LIFT_MAX_M))


def approach_direction(v) -> np.ndarray | None:
    """A goal's approach direction as a unit vector, or None (the TCP z axis) for a zero vector.
    InvalidGoalError for a non-finite one."""
    v = np.asarray(v, float).reshape(3)
    if not np.all(np.isfinite(v)):
        raise InvalidGoalError(f"approach_direction must be finite, got {v.tolist()}")
    n = float(np.linalg.norm(v))
    return None if n < 1e-9 else v / n


def back_off(T: np.ndarray, d: float, direction=None) -> np.ndarray:
    """T moved `d` metres back against the approach `direction` (unit, base frame; None: the
    TCP z axis), orientation unchanged: the pose a linear move into T starts from."""
    out = T.copy()
    axis = T[:3, 2] if direction is None else np.asarray(direction, float)
    out[:3, 3] = T[:3, 3] - d * axis
    return out


def _offset_along_base_z(T: np.ndarray, d: float) -> np.ndarray:
    out = T.copy()
    out[:3, 3] = T[:3, 3] + np.array([0.0, 0.0, d])
    return out
