"""Oracle expert: solves a generated task from ground-truth poses, then the checker judges the
final exported state.

The oracle talks to a world through four calls, the ones `sim.world.SimWorld` offers:
    move_tcp(T_base_tcp 4x4) -> bool, set_gripper(closed: bool) -> bool, export_scene() -> Scene.
Each call is one step (the golden count g is 4 for a pick or a place: approach, descend,
close/open, lift/retreat).

`KinematicWorld` below is a KINEMATIC FALLBACK, not a physics simulator: the gripper takes an
object when the TCP is within reach of its grasp point, a held object follows the TCP rigidly,
and a released object drops straight down onto the support surface below it (slot floor, table
top). It checks that every task is solvable from ground truth and that the checker accepts the
solution; it says nothing about grasp physics. `--world mujoco` uses SimWorld when it exists.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from spatial_manip.errors import SpatialManipError
from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.transforms import quat_to_matrix
from spatial_manip.scene import Scene, SceneObject
from spatial_manip.sim import tasks as T
from spatial_manip.sim.checker import check_task
from spatial_manip.sim.metrics import EpisodeResult, Failure, step_budget

GRASP_REACH_M = 0.02      # the fingers reach an object whose box is within 2 cm of the TCP
APPROACH_M = 0.10         # pre-grasp / pre-place stand-off


def _T(R, p) -> np.ndarray:
    M = np.eye(4)
    M[:3, :3], M[:3, 3] = R, p
    return M


def _inside_xy(point, box) -> bool:
    """Whether a point lies within a box's ground footprint (its own x/y extents)."""
    local = (np.asarray(point, float) - box.center) @ box.rotation
    return bool(np.all(np.abs(local[:2]) <= box.size[:2] / 2 + 1e-6))


class KinematicWorld:
    """KINEMATIC FALLBACK world (see the module docstring)."""

    name = "kinematic"

    def __init__(self, scene: Scene):
        self.scene = Scene.from_dict(scene.to_dict())      # own copy
        ee = scene.extra.get("ee_pose")
        self.tcp = np.asarray(ee, float) if ee is not None else _T(np.eye(3), [0.2, 0, 0.4])
        held = self.scene.held_object()
        self._offset = np.linalg.inv(self.tcp) @ _T(held.rotation, held.center) if held else None

    def move_tcp(self, T_tcp) -> bool:
        self.tcp = np.asarray(T_tcp, float)
        held = self.scene.held_object()
        if held is not None:
            M = self.tcp @ self._offset
            held.rotation, held.center = M[:3, :3].copy(), M[:3, 3].copy()
        return True

    def set_gripper(self, closed: bool) -> bool:
        held = self.scene.held_object()
        if closed and held is None:
            p = self.tcp[:3, 3]
            cands = [o for o in self.scene.objects if o.category == "book" and rel.distance_to_point(o, p) <= GRASP_REACH_M]
            if cands:
                o = min(cands, key=lambda o: rel.distance_to_point(o, p))
                o.held = True
                self._offset = np.linalg.inv(self.tcp) @ _T(o.rotation, o.center)
        elif not closed and held is not None:
            held.held = False
            self._drop(held)
        return True

    def _drop(self, o: SceneObject) -> None:
        """Let the object fall straight down onto the highest support under its centre."""
        bottom = float(o.corners()[:, 2].min())
        tops = [float(self.scene.extra.get("ground_z", -1.0))]
        for r in self.scene.regions:
            lo = float(rel._corners(r)[:, 2].min())
            if _inside_xy(o.center, r) and lo <= bottom + 1e-6:
                tops.append(lo)
        for s in self.scene.objects:
            if s is o or s.held or s.category in ("shelf",):
                continue
            top = float(s.corners()[:, 2].max())
            if top <= bottom + 1e-6 and _inside_xy(o.center, s):
                tops.append(top)
        o.center = o.center - np.array([0, 0, bottom - max(tops)])

    def export_scene(self) -> Scene:
        return Scene.from_dict(self.scene.to_dict())


class SimWorldAdapter:
    """The oracle's four calls on `sim.world.SimWorld` (MuJoCo physics)."""

    name = "mujoco"

    def __init__(self, scene: Scene):
        from spatial_manip.sim.world import SimWorld
        self.world = SimWorld(scene)

    def move_tcp(self, T_tcp) -> bool:
        from spatial_manip.errors import UnreachableError
        try:
            return bool(self.world.move_tcp(np.asarray(T_tcp, float)))
        except UnreachableError:
            return False

    def set_gripper(self, closed: bool) -> bool:
        if closed:
            return bool(self.world.close_gripper())
        self.world.set_gripper(0.085)
        return True

    def export_scene(self) -> Scene:
        return self.world.export_scene()


def _frame(y_axis, z_axis) -> np.ndarray:
    z = np.asarray(z_axis, float) / np.linalg.norm(z_axis)
    y = np.asarray(y_axis, float) - (np.asarray(y_axis, float) @ z) * z
    y /= np.linalg.norm(y)
    return np.column_stack([np.cross(y, z), y, z])


@dataclass
class Plan:
    poses: list          # TCP poses in order, with the gripper command after index `grip_at`
    grip_at: int
    close: bool


def grasp_point(book: SceneObject) -> np.ndarray:
    """Ground-truth grasp point: the top of an upright book, the robot-facing overhanging end of
    a flat or tilted one (layouts.py puts the overhang towards the robot)."""
    pose = rel.book_pose_class(book)
    long_axis = book.rotation[:, 2] * book.size[2] / 2
    if pose == "upright":
        end = book.center + (long_axis if long_axis[2] > 0 else -long_axis)
        return end - np.array([0, 0, 0.015])
    toward = -book.center[:2] / (np.linalg.norm(book.center[:2]) + 1e-9)
    end = book.center + (long_axis if long_axis[:2] @ toward > 0 else -long_axis)
    return end - (end - book.center) / np.linalg.norm(end - book.center) * 0.02


def plan_pick(scene: Scene, task: T.Task) -> Plan:
    books = {o.id: o for o in scene.objects}
    target = min((books[i] for i in task.answer), key=lambda o: np.linalg.norm(o.center))
    g = grasp_point(target)
    R = grasp_rotation(target, g)
    back = -R[:, 2] * APPROACH_M            # pre-grasp: backed off along the approach axis
    return Plan([_T(R, g + back), _T(R, g), _T(R, g + [0, 0, APPROACH_M])], 1, True)


def grasp_rotation(book: SceneObject, g: np.ndarray) -> np.ndarray:
    """TCP orientation (z = approach, y = finger closing axis) that pinches the book's thickness:
    top-down for an upright book, along the long axis into the overhang for a flat or tilted one."""
    thin = book.rotation[:, int(np.argmin(book.size))]
    if rel.book_pose_class(book) == "upright":
        return _frame(thin, -rel.UP)
    into = book.center - g
    return _frame(thin, into)


FLAT_R = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], float)   # width along y, thickness up, length along x


def place_target(scene: Scene, task: T.Task) -> tuple[np.ndarray, np.ndarray]:
    """(centre, rotation) where the held book should end up."""
    held = scene.held_object()
    if task.place_pose:
        return np.asarray(task.place_pose["position"]), quat_to_matrix(task.place_pose["orientation"])
    pose = next((c["pose"] for c in task.check if c["type"] == "pose"), "upright")
    slots = T.feasible_slots(scene, task.answer, pose)
    if not slots:
        raise SpatialManipError(f"{task.id}: no answer slot has room for the book", "UNREACHABLE")
    slot = min(slots, key=lambda r: rel.distance(r, scene.robot))
    lo, hi = slot.extra.get("free_y", [slot.center[1] - slot.size[1] / 2, slot.center[1] + slot.size[1] / 2])
    R = FLAT_R if pose == "flat" else np.eye(3)
    half_z = float(np.abs(R.T @ rel.UP) @ (held.size / 2))
    floor = float(rel._corners(slot)[:, 2].min())
    return np.array([slot.center[0], (lo + hi) / 2, floor + half_z + 0.003]), R


def plan_place(world_tcp: np.ndarray, scene: Scene, task: T.Task, offset: np.ndarray) -> Plan:
    """TCP poses that carry the held book (rigid `offset` = inv(T_tcp) @ T_book) to its target."""
    c, R = place_target(scene, task)
    T_book = _T(R, c)
    T_tcp = T_book @ np.linalg.inv(offset)
    up = _T(np.eye(3), [0, 0, APPROACH_M])
    return Plan([up @ T_tcp, T_tcp, up @ T_tcp], 1, False)


def solve(task: T.Task, scene: Scene, world_factory=KinematicWorld) -> EpisodeResult:
    t0 = time.perf_counter()
    steps = 0
    try:
        world = world_factory(scene)
        if task.action == "pick":
            plan = plan_pick(scene, task)
        else:
            held = scene.held_object()
            T_tcp = np.asarray(scene.extra.get("ee_pose"), float)
            offset = np.linalg.inv(T_tcp) @ _T(held.rotation, held.center)
            plan = plan_place(T_tcp, scene, task, offset)
        for i, pose in enumerate(plan.poses):
            if steps >= step_budget(task.golden_steps):
                break
            ok = world.move_tcp(pose)
            steps += 1
            if not ok:
                return _result(task, False, steps, Failure.UNREACHABLE, "the arm could not reach a pose", t0)
            if i == plan.grip_at:
                world.set_gripper(plan.close)
                steps += 1
        final = world.export_scene()
        ok, cat, msg = check_task(task.to_dict(), final, scene)
        return _result(task, ok, steps, cat, msg, t0)
    except SpatialManipError as e:
        cat = Failure.UNREACHABLE if e.code.value == "UNREACHABLE" else Failure.PLANNER_ERROR
        return _result(task, False, steps, cat, e.message, t0)


def _result(task, ok, steps, cat, msg, t0) -> EpisodeResult:
    cat = None if ok else (cat.value if isinstance(cat, Failure) else cat)
    return EpisodeResult(task.id, task.instruction, bool(ok), steps, task.golden_steps, cat, msg,
                         time.perf_counter() - t0, task.suite, task.family_key, task.difficulty)
