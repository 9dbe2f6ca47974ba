"""Where and how the oracle sets a carried book down, from ground truth, so the arm can reach it.

The gripper holds the book by one edge (`offset` = inv(T_tcp) @ T_book, measured in the world):
thickness along the finger-closing axis, width along the approach. Instead of one fixed target
rotation (which often has no IK solution), the planner enumerates the book rotations the task's
check accepts, derives the TCP pose of each from the grasp, verifies the resulting final state
with the task's own success constraints (a "ghost" scene), and keeps the first candidate whose
approach, final and retreat poses the arm reaches.

Shelf slots ("upright" or "flat"): the book goes in from the front (+x), as the robot faces the
shelf; the fingers stay at the front. An upright book stands on the slot floor with its back edge
1 cm inside the slot; a flat book's gripped edge overhangs the slot floor so that the lower
finger stays in front of the shelf board (the fingertips reach FINGERTIP_M past the TCP).
Metric placements (table): the book is lowered vertically as it hangs from a top-down grasp and
stood on its long edge (thin axis horizontal: "upright" for the checker), yawed so that the
checker's distance and direction hold.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from spatial_manip.geometry import relations as rel
from spatial_manip.transforms import rotation_angle
from spatial_manip.scene import Region, Scene
from spatial_manip.sim.checker import check_constraints

FINGERTIP_M = 0.05        # fingertips reach 0.018 m past the TCP; the TCP is ~0.03 m inside the book edge
DROP_M = 0.004            # release this high above the support
SLOT_INSET_M = 0.01       # upright: back edge this far inside the slot's front face
APPROACH_M = 0.10
MIN_CLEARANCE_M = 0.01    # metric: distance from every other object


@dataclass
class PlacePlan:
    poses: list               # TCP poses: pre-place, place, retreat (the gripper opens after the 2nd)
    T_book: np.ndarray        # the book's pose at release
    label: str                # which candidate was chosen (for messages)
    band: tuple | None = None  # shelf: (floor z, ceiling z) of the slot opening the book enters


def _T(R, p) -> np.ndarray:
    M = np.eye(4)
    M[:3, :3], M[:3, 3] = R, p
    return M


def signed_frames(axes: tuple) -> list[np.ndarray]:
    """Rotations whose columns (the book's width, thickness, length) point along +-axes[i]
    (world unit vectors), proper rotations only."""
    out = []
    for s in itertools.product((1.0, -1.0), repeat=3):
        R = np.column_stack([s[i] * np.asarray(axes[i], float) for i in range(3)])
        if np.linalg.det(R) > 0.5:
            out.append(R)
    return out


def slot_frames(pose: str, offset: np.ndarray) -> list[np.ndarray]:
    """Rotations of a held book set down in a shelf slot `pose` ("upright": its length up;
    "flat": its thickness up) with the gripper on the robot's side (-x): a shelf is reached from
    the front. `offset`: the book's pose in the TCP frame."""
    ex, ey, ez = np.eye(3)
    axes = (ex, ez, ey) if pose == "flat" else (ex, ey, ez)
    p_tcp_in_book = -(offset[:3, :3].T @ offset[:3, 3])
    return [R for R in signed_frames(axes) if (R @ p_tcp_in_book)[0] <= -0.01]


def approach_poses(T_tcp: np.ndarray, pre: np.ndarray, retreat: np.ndarray) -> list[np.ndarray]:
    """The TCP's pre-place, place and retreat poses: `T_tcp` shifted by `pre` and by `retreat`
    (base frame), its orientation kept."""
    return [_T(T_tcp[:3, :3], T_tcp[:3, 3] + pre), T_tcp, _T(T_tcp[:3, :3], T_tcp[:3, 3] + retreat)]


def _extent(R: np.ndarray, size: np.ndarray, axis) -> float:
    return float(np.abs(R.T @ np.asarray(axis, float)) @ (size / 2))


def ghost_ok(scene: Scene, book_id: str, T_book: np.ndarray, check: list) -> tuple[bool, str]:
    """The task's constraints (except 'released') on a copy of the scene with the book at T_book."""
    ghost = Scene.from_dict(scene.to_dict())
    b = ghost.get(book_id)
    b.center, b.rotation, b.held = T_book[:3, 3].copy(), T_book[:3, :3].copy(), False
    specs = [c for c in check if c["type"] not in ("released", "held")]
    if not specs:
        return True, "no pose constraint"
    r = check_constraints(specs, ghost, scene)
    return r.success, r.message


def _choose(cands: Iterable[tuple], offset, T_now, reachable: Callable, band=None) -> PlacePlan | None:
    """First candidate (T_book, pre_shift, retreat_shift, label), ordered by the wrist rotation
    from the current TCP, whose three TCP poses are reachable."""
    inv_off = np.linalg.inv(offset)
    scored = []
    for T_book, pre, retreat, label in cands:
        T_tcp = T_book @ inv_off
        scored.append((rotation_angle(T_tcp[:3, :3], T_now[:3, :3]), T_book, T_tcp, pre, retreat, label))
    scored.sort(key=lambda s: s[0])
    for _, T_book, T_tcp, pre, retreat, label in scored:
        poses = approach_poses(T_tcp, pre, retreat)
        if all(reachable(p, a) for p, a in zip(poses, [T_now] + poses[:-1])):
            return PlacePlan(poses, T_book, label, band)
    return None


# --- shelf ---------------------------------------------------------------------------------------
def slot_candidates(scene: Scene, slot: Region, size: np.ndarray, pose: str, offset: np.ndarray) -> list:
    """(T_book, pre-place shift, retreat shift, label) for one slot."""
    ex, _, ez = np.eye(3)
    corners = rel._corners(slot)
    x_front, floor = float(corners[:, 0].min()), float(corners[:, 2].min())
    lo, hi = slot.extra.get("free_y", [slot.center[1] - slot.size[1] / 2, slot.center[1] + slot.size[1] / 2])
    out = []
    for R in slot_frames(pose, offset):
        hx, hz = _extent(R, size, ex), _extent(R, size, ez)
        back = x_front - FINGERTIP_M if pose == "flat" else x_front + SLOT_INSET_M
        c = np.array([back + hx, (lo + hi) / 2, floor + hz + DROP_M])
        if pose == "flat":
            c[2] += 0.002
        pre_dx = (c[0] - hx) - (x_front - 2 * hx - 0.03)   # whole book in front of the shelf
        out.append((_T(R, c), np.array([-pre_dx, 0, 0.015]), np.array([-0.10 - (FINGERTIP_M if pose != "flat" else 0), 0, 0.0]),
                    f"{slot.id} {pose}"))
    return out


def plan_slot_place(scene: Scene, slots: list[Region], pose: str, check: list, book_id: str,
                    offset: np.ndarray, T_now: np.ndarray, reachable: Callable) -> PlacePlan | None:
    size = np.asarray(scene.get(book_id).size, float)
    for slot in sorted(slots, key=lambda r: rel.distance(r, scene.robot)):
        cands = [c for c in slot_candidates(scene, slot, size, pose, offset)
                 if ghost_ok(scene, book_id, c[0], check)[0]]
        corners = rel._corners(slot)
        plan = _choose(cands, offset, T_now, reachable, (float(corners[:, 2].min()), float(corners[:, 2].max())))
        if plan is not None:
            return plan
    return None


# --- metric (table) ------------------------------------------------------------------------------
def _direction_vectors(scene: Scene, spec: dict) -> np.ndarray:
    """The ground direction of a direction check's word, as relations defines it for a metric
    placement (in the viewer's frame, behind the reference is further away)."""
    ref = scene.get(spec["reference"])
    frame = rel.Frame(spec.get("frame", "relative"))
    intrinsic = frame is rel.Frame.INTRINSIC
    axes = (rel.frame_axes(frame, reference=ref, reference_id=ref.id) if intrinsic
            else rel.frame_axes(frame, viewer=scene.viewer))
    return rel.horizontal(rel.metric_direction(spec["word"], axes, attached=intrinsic))


def _support_top(scene: Scene, xy) -> float:
    """The top of the table under a ground point, never below the scene's `table_top_z`."""
    table_top = float(scene.extra.get("table_top_z", 0.0))
    return max(rel.support_top(scene.by_category("table"), xy, table_top), table_top)


def metric_candidates(scene: Scene, check: list, book_id: str, offset: np.ndarray,
                      hint_xy=None) -> list:
    """Book poses standing on the long edge at the asked distance; `hint_xy`: the program's
    place position, whose bearing from the reference gives the direction first."""
    book = scene.get(book_id)
    size = np.asarray(book.size, float)
    dist = next(c for c in check if c["type"] == "distance")
    dirc = next((c for c in check if c["type"] == "direction"), None)
    ref = scene.get(dist["reference"])
    d = _direction_vectors(scene, dirc) if dirc else rel.horizontal(ref.center - scene.robot.position)
    if hint_xy is not None:
        h = np.array([hint_xy[0] - ref.center[0], hint_xy[1] - ref.center[1], 0.0])
        if np.linalg.norm(h) > 1e-6:
            d = h / np.linalg.norm(h)
    dirs = [d] + [_rot_z(d, a) for a in (20, -20, 40, -40, 180)]   # the checker decides which hold
    p_tcp_in_book = -(offset[:3, :3].T @ offset[:3, 3])
    w_book = int(np.argmax(np.abs(p_tcp_in_book)))   # the gripped edge is across the width
    out = []
    others = [o for o in scene.objects if o.id not in (book_id, ref.id) and o.category not in ("table",)]
    for d, yaw_deg in itertools.product(dirs, range(0, 180, 15)):
        a = math.radians(yaw_deg)
        h1 = np.array([math.cos(a), math.sin(a), 0.0])
        h2 = np.cross(np.array([0, 0, 1.0]), h1)
        axes = [None, None, None]
        axes[w_book] = np.array([0, 0, 1.0])
        rest = [i for i in range(3) if i != w_book]
        axes[rest[0]], axes[rest[1]] = h1, h2
        for R in signed_frames(tuple(axes)):
            if (R @ p_tcp_in_book)[2] < 0.01:        # the gripper above the book
                continue
            for extra_gap in (0.0, 0.01, -0.01, 0.02):
                gap = float(dist["value_m"]) + extra_gap
                c = ref.center + d * (rel.half_extent_along(ref, d) + gap + _extent(R, size, d))
                c[2] = _support_top(scene, c) + _extent(R, size, [0, 0, 1]) + DROP_M
                T_book = _T(R, c)
                ok, _ = ghost_ok(scene, book_id, T_book, check)
                if not ok or not _clear(book, T_book, others):
                    continue
                lift = _lift_over(others + [ref], T_book, size)
                out.append((T_book, np.array([0, 0, lift]), np.array([0, 0, lift]),
                            f"metric yaw {yaw_deg} gap {gap:.2f}"))
                break
    return out


def _lift_over(objs, T_book, size, radius_m: float = 0.12) -> float:
    """How high above its release pose the book must come down from (and the gripper leave to)
    so that its bottom clears every object standing within `radius_m` of it by 3 cm."""
    bottom = T_book[2, 3] - _extent(T_book[:3, :3], size, [0, 0, 1])
    reach = float(np.linalg.norm(size[:2])) / 2 + radius_m
    tops = [float(o.corners()[:, 2].max()) for o in objs
            if np.linalg.norm(o.center[:2] - T_book[:2, 3]) < reach + float(np.linalg.norm(o.size[:2])) / 2]
    return max(APPROACH_M, max(tops, default=-1.0) - bottom + 0.03)


def _rot_z(v, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], 0.0])


def _clear(book, T_book, others) -> bool:
    ghost = type(book)(**{**book.__dict__, "center": T_book[:3, 3], "rotation": T_book[:3, :3], "held": False})
    return all(rel.distance(ghost, o) >= MIN_CLEARANCE_M for o in others if not o.held)


def plan_metric_place(scene: Scene, check: list, book_id: str, offset: np.ndarray, T_now: np.ndarray,
                      reachable: Callable, hint_xy=None) -> PlacePlan | None:
    return _choose(metric_candidates(scene, check, book_id, offset, hint_xy), offset, T_now, reachable)


# --- everyday objects on the table (the objects suite) -------------------------------------------
OBJECT_LIFT_M = 0.10      # the carried object comes down from (and the gripper leaves to) this high
OBJECT_YAWS_DEG = range(0, 360, 30)


def object_candidates(scene: Scene, check: list, obj_id: str, offset: np.ndarray, place_pose: dict) -> list:
    """(T_obj, pre shift, retreat shift, label): the carried object standing upright at the task's
    set-down point, turned about the vertical in 30 degree steps (the grasp decides which the arm
    reaches), kept when the task's own checks hold on the ghost scene."""
    obj = scene.get(obj_id)
    size = np.asarray(obj.size, float)
    xy = np.asarray(place_pose["position"], float)[:2]
    base_z = _support_top(scene, xy)
    out = []
    for yaw in OBJECT_YAWS_DEG:
        a = math.radians(yaw)
        R = np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
        c = rel.resting_centre(xy, base_z + DROP_M, R, size)
        T_obj = _T(R, c)
        if ghost_ok(scene, obj_id, T_obj, check)[0]:
            up = np.array([0.0, 0.0, OBJECT_LIFT_M])
            out.append((T_obj, up, up, f"set down yaw {yaw}"))
    return out


def plan_object_place(scene: Scene, check: list, obj_id: str, offset: np.ndarray, T_now: np.ndarray,
                      reachable: Callable, place_pose: dict) -> PlacePlan | None:
    return _choose(object_candidates(scene, check, obj_id, offset, place_pose), offset, T_now, reachable)
