"""What each arm motion will do, planned and checked before the arm makes it: a collision-free
joint path for every transit (to the pre-grasp, the pre-place, home) and a checked straight
segment for every move that must be straight (approach, lift, descent, retreat). A pick is
planned in two parts: the transit and the approach before the arm moves (`pick_start`), the lift
while it travels to the pre-grasp (`pick_lift`); place, home and waypoints in full before moving.

The world is the scene the goal carries (the perceived objects as boxes, fixtures by their
parts, the floor), plus the held object attached to the gripper. Contact with the target and
what it rests on is allowed on the straight segments into and out of it, and nowhere else.
ROS-free; `control.primitives` executes these plans on any `Arm`.
"""
from __future__ import annotations

import copy
import dataclasses
import threading
from typing import Callable, Mapping, Sequence

import numpy as np

from spatial_manip.errors import CanceledError, SpatialManipError, UnreachableError
from spatial_manip.motion.base import JointPath, MotionPlanner
from spatial_manip.motion.carry import carry_refusal
from spatial_manip.motion.cartesian import clear_of_contact, straight_segment
from spatial_manip.motion.world import CLOUD_EXPLAINED_M, Attached, CollisionWorld, support_ids, touching_ids
from spatial_manip.control.config import arm_overrides, load_arm_config
from spatial_manip.control.primitives import MotionPrimitives, PrimitivesConfig
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.factory import make_planner
from spatial_manip.motion.ompl_backend import HINT_GOAL_RAD, HINT_START_RAD
from spatial_manip.scene import SceneObject

SAME_RAD = 1e-4          # a transit shorter than this in every joint is no transit
SUPPORT_GAP_M = 0.03     # a perceived box's bottom may float this far above what it rests on
PLACE_GAP_M = 0.02       # what lies this close under the object at its place pose supports it
CLOUD_VOXEL_M = 0.02     # a goal's depth cloud, one point per voxel of this size
ARM_FILTER_M = 0.05      # cloud points this close to the arm's bodies are the arm itself


@dataclasses.dataclass
class Transit:
    path: JointPath | None               # None: the arm is there already
    clear_T: np.ndarray | None = None    # first, a straight move out of a contact the arm starts in


@dataclasses.dataclass
class PickStart:
    """A pick's checked way to the pre-grasp and straight approach from it, and what its lift is
    checked against (`ArmPlans.pick_lift`, planned while the arm travels)."""

    transit: Transit
    approach: np.ndarray          # (n, 6): the configurations along the approach, the last at the grasp
    # builds the scene with the target in the fingers and gone from its place (`pick_lift` calls it,
    # while the arm travels: building it before the arm moved cost every pick 50-200 ms, issue 42)
    carry: Callable[[], CollisionWorld]
    leaving: list[str]            # what the carried target may touch as it leaves: its support, its neighbours
    held: Attached | None         # the target in the fingers after closing (None: no scene object named)


@dataclasses.dataclass
class PlacePlan:
    transit: Transit


class ArmPlans:
    def __init__(self, planner: MotionPlanner, home_q=None):
        self.planner = planner
        self.robot, self.envelope = planner.robot, planner.envelope
        self.home_q = None if home_q is None else np.asarray(home_q, float)
        # joint paths to pre-grasps found before (the grasp service's motion check, issue 42): a pick's
        # transit takes one that runs from where the arm is to the configuration it chose and is clear
        # in the goal's own world, rather than search again (the planner's `hints`); replaced, not edited
        self.pre_grasp_hints: list[np.ndarray] = []

    # ---- the world -----------------------------------------------------------------------
    def world(self, scene, held: Attached | None = None, leave_out: Sequence[str] = (), q_now=None,
              clutter=None) -> CollisionWorld:
        """The scene's bodies (held ones and `leave_out` excluded) with `held` attached, and the
        depth cloud's voxels that no body explains (unmodelled clutter; `scene.extra["cloud"]`;
        `clutter`: that already computed by `_clutter`, for a plan that builds several worlds)."""
        world = scene_world(scene, held, leave_out)
        clutter, voxel_m, clearance_m = self._clutter(scene, q_now) if clutter is None else clutter
        if len(clutter):
            world.add_cloud(clutter, voxel_m, clearance_m)
        return world

    def _clutter(self, scene, q_now) -> tuple[np.ndarray, float, float]:
        """The goal's cloud (an obstacle map: motion.obstacle_map) minus what the scene explains
        (every object where it was seen, the held and the left-out ones too: their own points are
        not clutter) and minus the arm, where it is now and at home, where it waits while the
        camera looks; with its voxel size and the clearance the sensor's error asks for."""
        cloud = scene.extra.get("cloud") if scene is not None else None
        if not cloud:
            return np.empty((0, 3)), 0.0, 0.0
        pts = np.asarray(cloud.get("points", []), float).reshape(-1, 3)
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        seen = CollisionWorld.from_scene(scene.with_objects([dataclasses.replace(o, held=False) for o in scene.objects]))
        clearance_m = float(cloud.get("clearance_m", 0.0))
        pts = pts[~seen.explains(pts, max(CLOUD_EXPLAINED_M, clearance_m))]
        for q in (q_now, self.home_q):
            if q is not None and len(pts):
                pts = pts[~self.robot.points_on(pts, q, ARM_FILTER_M)]
        return pts, float(cloud.get("voxel_m", CLOUD_VOXEL_M)), clearance_m

    @staticmethod
    def held_in(scene, T_base_tcp: np.ndarray) -> Attached | None:
        """The scene's held object as a body on the gripper: where the scene says it sits in the
        hand (`extra["T_object_tcp"]`), else where it is now relative to the TCP."""
        o = scene.held_object() if scene is not None else None
        if o is None:
            return None
        if "T_object_tcp" in o.extra:
            return Attached(o.id, np.asarray(o.size, float), np.linalg.inv(np.asarray(o.extra["T_object_tcp"], float)))
        return Attached(o.id, np.asarray(o.size, float), np.linalg.inv(T_base_tcp) @ _pose(o))

    # ---- plans ---------------------------------------------------------------------------
    def pick_start(self, q_now, grasp_T, pre_T, scene, target_id: str) -> PickStart:
        """Transit to the pre-grasp around everything (the target too) on the arm configuration
        nearest the arm's whose straight approach touches only the target and its support (as
        the grasp service's motion check chose it); the lift, and the world it is checked in, are
        left to `pick_lift`. `pre_T` is one pre-grasp pose or several, longest stand-off first
        (control.primitives.pre_grasp_poses): the first that a transit and a clear approach reach is taken."""
        target = scene.get(target_id) if scene is not None and target_id in scene.ids() else None
        allowed = (support_ids(scene, target_id, gap_m=SUPPORT_GAP_M) if target is not None
                   else [target_id] if target_id else [])
        clutter = self._clutter(scene, q_now)
        world = self.world(scene, clutter=clutter)
        held = None if target is None else Attached(target.id, np.asarray(target.size, float),
                                                    np.linalg.inv(grasp_T) @ _pose(target))

        def carry() -> CollisionWorld:
            return self.world(scene, held, leave_out=[target_id] if target_id else [], clutter=clutter)
        leaving = allowed + [i for i in touching_ids(scene, target_id, SUPPORT_GAP_M) if i not in allowed] \
            if target is not None else allowed

        def approach(q_pre):
            return straight_segment(self.robot, self.envelope, world, q_pre, grasp_T, allowed=allowed, phase="approach")

        transit, approach_qs = self._reach_any(q_now, np.asarray(pre_T, float).reshape(-1, 4, 4), world, "pre_grasp",
                                               approach, hints=self.pre_grasp_hints)
        return PickStart(transit, approach_qs, carry, leaving, held)

    def pick_lift(self, start: PickStart, lifts: Sequence[np.ndarray]) -> np.ndarray:
        """The highest of `lifts` the arm reaches from the grasp carrying the target clear of all
        but its support and neighbours; the last refusal when none does."""
        last, carry = None, start.carry()
        for lift in lifts:
            try:
                straight_segment(self.robot, self.envelope, carry, start.approach[-1], lift,
                                 allowed=start.leaving, phase="lift")
                return lift
            except UnreachableError as e:      # too high for the arm: a lower lift may still clear
                last = e
        raise last

    def place(self, q_now, place_T, pre_T, retreat_T, scene, held: Attached | None) -> PlacePlan:
        """Transit to the pre-place carrying the held object, the straight descent touching only
        what the object will rest on, and the retreat from it with the fingers open."""
        leave_out = [held.name] if held is not None else []
        clutter = self._clutter(scene, q_now)
        world = self.world(scene, held, leave_out, clutter=clutter)
        allowed = self.place_support(scene, held, place_T)
        released = self.world(scene, None, leave_out, clutter=clutter)

        def descend_and_retreat(q_pre):
            down = straight_segment(self.robot, self.envelope, world, q_pre, place_T, allowed=allowed, phase="descend")
            straight_segment(self.robot, self.envelope, released, down[-1], retreat_T, allowed=allowed, phase="retreat")

        transit, _ = self._reach(q_now, pre_T, world, "pre_place", descend_and_retreat)
        return PlacePlan(transit)

    def home(self, q_now, home_q, scene, held: Attached | None) -> Transit:
        """The way home; none, and no world built, when the arm is there (every look before
        perceiving asks for home, and the goal's cloud costs tens of milliseconds to model).
        Carrying `held`, UnreachableError unless home is a carry pose in `scene` (motion.carry:
        clear of every keep-out and body by a margin, and hiding less of the scene from its
        viewer than the arm where it is); the arm then stays where it is."""
        if q_now is not None and float(np.max(np.abs(np.asarray(q_now, float) - np.asarray(home_q, float)))) < SAME_RAD:
            return Transit(None)
        world = self.world(scene, held, [held.name] if held is not None else [], q_now)
        if held is not None and q_now is not None:      # a carry: home must be safe, and clear the camera's view
            refusal = carry_refusal(self.robot, self.envelope, world, scene, q_now, home_q)
            if refusal is not None:
                raise UnreachableError(f"home is no carry pose for {held.name} on this layout: {refusal}")
        return self.transit(q_now, np.asarray(home_q, float), world, "home")

    def waypoints(self, q_now, poses: Sequence[np.ndarray], scene, held: Attached | None) -> None:
        """Each straight move between the waypoints touches nothing."""
        world = self.world(scene, held, [held.name] if held is not None else [], q_now)
        q = np.asarray(q_now, float)
        for i, T in enumerate(poses):
            q = straight_segment(self.robot, self.envelope, world, q, T, phase=f"waypoint {i + 1}")[-1]

    def _reach(self, q_now, pre_T, world: CollisionWorld, phase: str, then, hints=()):
        """A transit to the pre-pose `pre_T` on an arm configuration from which `then(q_pre)` (the
        straight moves that follow) passes: each IK solution in turn, one a hint runs to from the
        arm first (`checked_goals`), then nearest the current joints, the straight moves checked
        before the (costlier) transit. Returns (transit, then's result); raises the last refusal
        when none works. `hints`: the planner's, for the transit."""
        q_now = np.asarray(q_now, float)
        return self._reach_through(q_now, self._goals(q_now, pre_T, phase, hints), world, phase, then, hints)

    def _goals(self, q_now: np.ndarray, pre_T, phase: str, hints) -> tuple[list, list]:
        """The IK solutions at `pre_T` (`_configurations`) and those a hint runs to (`checked_goals`)."""
        candidates = self._configurations(q_now, pre_T, phase)
        return candidates, checked_goals(candidates, q_now, hints)

    def _reach_through(self, q_now: np.ndarray, goals: tuple[list, list], world: CollisionWorld, phase: str,
                       then, hints):
        """`_reach` over its pre-pose's `goals` (`_goals`: worked out once per pre-pose)."""
        candidates, checked = goals
        refusals = {}
        for q_pre in checked + [q for q in candidates if not any(q is c for c in checked)]:
            try:
                rest = then(q_pre)
                return self.transit(q_now, q_pre, world, phase, hints), rest
            except SpatialManipError as e:       # this arm configuration is blocked; the next may not be
                refusals[id(q_pre)] = e
        # the refusal of the configuration nearest the arm's, the one a user would expect it to take,
        # and what blocked the others: in books place 78-00007 the nearest met the robot's stand while
        # the cloud blocked every other, and the message named only the stand
        first = refusals.pop(id(candidates[0]))
        first.message = f"{first.message} (and the other {len(candidates) - 1} arm configurations reaching the " \
                        f"{phase} pose{_what_blocked(list(refusals.values()))})"
        raise first

    def _configurations(self, q_now: np.ndarray, pre_T, phase: str) -> list[np.ndarray]:
        """The IK solutions at the pre-pose `pre_T`, nearest the current joints first;
        UnreachableError naming the pose when there is none (or it is outside the workspace)."""
        self.envelope.check_position(np.asarray(pre_T, float)[:3, 3], what=f"{phase} pose")
        candidates = sorted(self.envelope.kin.ik_all(pre_T, q_now), key=lambda q: float(np.max(np.abs(q - q_now))))
        if not candidates:
            self.envelope.kin.ik(pre_T, q_now)          # raises UnreachableError naming the pose
        return candidates

    def _reach_any(self, q_now, pre_Ts: np.ndarray, world: CollisionWorld, phase: str, then, hints=()):
        """`_reach` of the first of the pre-poses `pre_Ts` that one reaches, one with a
        configuration a hint runs to from the arm first (the grasp service's motion check may have
        reached a grasp only at a shorter stand-off); the refusal of the first (the full
        stand-off, the one a user would expect) when none does. Each pre-pose's IK and hinted
        configurations are worked out once, for the order and for the reach."""
        q_now = np.asarray(q_now, float)
        goals: dict[int, tuple | SpatialManipError] = {}

        def goals_at(i: int) -> tuple[list, list]:
            if i not in goals:
                try:
                    goals[i] = self._goals(q_now, pre_Ts[i], phase, hints)
                except SpatialManipError as e:       # no IK there, or outside the workspace
                    goals[i] = e
            if isinstance(goals[i], SpatialManipError):
                raise goals[i]
            return goals[i]

        def unhinted(i: int) -> bool:
            try:
                return not goals_at(i)[1]
            except SpatialManipError:
                return True
        # the order needs every pre-pose's IK only when a hint runs from where the arm is
        order = range(len(pre_Ts))
        if any(_runs_from(h, q_now) for h in hints):
            order = sorted(order, key=unhinted)
        refusals: dict[int, SpatialManipError] = {}
        for i in order:
            try:
                return self._reach_through(q_now, goals_at(i), world, phase, then, hints)
            except SpatialManipError as e:
                refusals[i] = e
        first = refusals[0]
        if len(pre_Ts) > 1:
            first.message = f"{first.message} (and at {len(pre_Ts) - 1} shorter stand-offs)"
        raise first

    def transit(self, q_now, goal, world: CollisionWorld, phase: str, hints=()) -> Transit:
        """A planned path to `goal` (joints or a TCP pose), out of any contact the arm starts in;
        `hints` (joint paths found before) go to the planner when there are any."""
        clear_T, q_start = clear_of_contact(self.robot, self.envelope, world, q_now)
        goal = np.asarray(goal, float)
        if goal.shape == (6,) and float(np.max(np.abs(goal - q_start))) < SAME_RAD:
            return Transit(None, clear_T)
        hints = list(hints)
        path = self.planner.plan(q_start, goal, world, phase=phase, **({"hints": hints} if hints else {}))
        if float(np.max(np.abs(path.waypoints[-1] - q_start))) < SAME_RAD:
            return Transit(None, clear_T)
        return Transit(path, clear_T)

    @staticmethod
    def place_support(scene, held: Attached | None, place_T) -> list[str]:
        """The held object and what it will rest on at the place pose (its support: the table,
        a shelf board, the object it is stacked on)."""
        if held is None or scene is None:
            return [held.name] if held is not None else []
        T_obj = np.asarray(place_T, float) @ held.T_tcp_object
        placed = SceneObject(id=held.name, label=held.name, category="held", center=T_obj[:3, 3], size=held.size, rotation=T_obj[:3, :3])
        others = [o for o in scene.objects if o.id != held.name and not o.held]
        return support_ids(scene.with_objects(others + [placed]), held.name, gap_m=PLACE_GAP_M)


class ArmReach:
    """What a place pose needs for the arm to set something down there: arm configurations that
    clear the arm itself and the safety envelope (an analytic IK solution may fold the forearm
    through the base), and a straight move in from the pre-place pose along which they stay
    clear, around the scene when one is given (`around`). `grasping.place_fit` asks it once per
    rotation it tries (hundreds for a pick-and-place's grasps): a goal's cancel ends the asking
    (`until`) rather than waits for the last answer."""

    def __init__(self, planner: MotionPlanner, scene=None, held: Attached | None = None,
                 cancel: threading.Event | None = None):
        self.planner, self.kin = planner, planner.envelope.kin
        self.scene, self.held, self.cancel = scene, held, cancel
        self.world = scene_world(scene, held, [held.name] if held is not None else [])
        self._checker = CollisionChecker(planner.robot, CollisionWorld(), planner.envelope, 0.0)

    def until(self, cancel: threading.Event | None) -> "ArmReach":
        """This reach, its checks refused with CanceledError once `cancel` is set (a goal's: its
        place fit took 8.5 s at load 5-9 and the cancel was seen only as the arm goal was sent)."""
        reach = copy.copy(self)
        reach.cancel = cancel
        return reach

    def around(self, scene, object_id: str, size, T_object_tcp) -> "ArmReach":
        """This reach around `scene`, carrying `object_id` (of `size`, held at T_object_tcp) and
        leaving its place in the scene out (it is in the fingers by then)."""
        if scene is None:
            return self
        held = Attached(object_id, np.asarray(size, float), np.linalg.inv(np.asarray(T_object_tcp, float)))
        return ArmReach(self.planner, scene.with_objects([o for o in scene.objects if o.id != object_id]), held,
                        self.cancel)

    def ik_all(self, T_base_tcp, q_ref=None) -> list[np.ndarray]:
        self.refuse_if_canceled()
        return [q for q in self.kin.ik_all(T_base_tcp, q_ref) if self._checker.problem(q) is None]

    def reaches(self, pre_T, T_base_tcp) -> bool:
        """Whether some clear configuration at pre_T moves straight to T_base_tcp staying clear,
        touching only what the object will rest on."""
        allowed = ArmPlans.place_support(self.scene, self.held, T_base_tcp)
        for q in self.ik_all(pre_T):
            try:
                straight_segment(self.planner.robot, self.planner.envelope, self.world, q, T_base_tcp,
                                 allowed=allowed, keep_out_bodies=self.scene is not None)
                return True
            except SpatialManipError:
                continue
        return False

    def refuse_if_canceled(self) -> None:
        """CanceledError once the goal's cancel is set (`until`)."""
        if self.cancel is not None and self.cancel.is_set():
            raise CanceledError("the goal was canceled while its set-down was being fitted; the set-down was not sent")


def arm_reach(arm_config_file: str = "", backend: str = "", model: str = "") -> ArmReach:
    """ArmReach for arm.yaml (`backend`'s overrides: the simulated UR5e's TCP; `model` its preset,
    "" = its arm.model)."""
    return ArmReach(make_planner(load_arm_config(arm_config_file or None, arm_overrides(backend, model) or None)))


def make_primitives(cfg: Mapping, arm, gripper, motion_overrides: Mapping | None = None) -> MotionPrimitives:
    """Primitives whose transits are planned by arm.yaml's motion planner (`motion` section,
    with `motion_overrides` merged over it)."""
    plans = ArmPlans(make_planner(cfg, motion_overrides), home_q=cfg["primitives"].get("home_q"))
    return MotionPrimitives(arm, gripper, SafetyEnvelope.from_config(cfg), PrimitivesConfig.from_config(cfg["primitives"]),
                            plans)


def scene_world(scene, held: Attached | None = None, leave_out: Sequence[str] = ()) -> CollisionWorld:
    """The scene's bodies (held ones and `leave_out` excluded) with `held` attached."""
    world = CollisionWorld()
    if scene is not None:
        kept = [o for o in scene.objects if not o.held and o.id not in set(leave_out)]
        world = CollisionWorld.from_scene(scene.with_objects(kept))
    world.attached = held
    return world


def checked_goals(candidates: Sequence[np.ndarray], q_now: np.ndarray, hints) -> list[np.ndarray]:
    """The `candidates` (arm configurations at a pre-pose) that a hint runs to from `q_now`, as the
    planner takes a hint (its ends within HINT_START_RAD / HINT_GOAL_RAD): the grasp service's motion
    check found the way to them from where the arm still is, so the pick tries them before the
    nearest, which may need a search that fails. pick-82-00002 searched 1 s in vain for each of two
    configurations, then took the hint to the third: 2.1 s before the arm's first motion (issue 42)."""
    ends = [np.asarray(h, float)[-1] for h in hints if _runs_from(h, q_now)]
    return [q for q in candidates if any(float(np.max(np.abs(q - end))) <= HINT_GOAL_RAD for end in ends)]


def _runs_from(hint, q_now: np.ndarray) -> bool:
    """Whether `hint` (waypoints (n, 6)) starts where the arm is, as the planner's hinted_path asks."""
    w = np.asarray(hint, float)
    return w.ndim == 2 and w.shape[1:] == (6,) and len(w) >= 2 and bool(np.all(np.isfinite(w))) and \
        float(np.max(np.abs(w[0] - q_now))) <= HINT_START_RAD


def _what_blocked(refusals: Sequence[SpatialManipError], most: int = 3) -> str:
    """': 4 by held:book touches cloud (3 cloud points around [..] m), 3 by ...': the bodies that
    blocked these refusals, the commonest first (the cloud's points by their centre, not listed)."""
    why = [str(getattr(e, "body", "") or "").split(", first [[")[0] for e in refusals]
    counts: dict[str, int] = {}
    for w in why:
        if w:
            counts[w] = counts.get(w, 0) + 1
    if not counts:
        return ""
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    text = "; ".join(f"{n} by {w}{')' * (w.count('(') - w.count(')'))}" for w, n in ranked[:most])
    rest = len(ranked) - most
    return f": {text}" + (f"; {rest} other cause{'s' * (rest > 1)}" if rest > 0 else "")


def _pose(o) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = np.asarray(o.rotation, float), np.asarray(o.center, float)
    return T

