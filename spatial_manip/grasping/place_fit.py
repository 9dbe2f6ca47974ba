"""Setting a held object down the way it is actually held.

The planner says where the object goes and in which pose class (upright, flat, tilted); the
rotation it proposes ignores the grasp. Held by one edge across its thickness, a book set down
with that rotation may need the lower finger inside the table. `fit_place` searches the rotations
of the object (its 24 axis-aligned turns, each yawed in steps) that keep the asked pose class,
sets each on the support at the asked position, and keeps the one closest to the asked rotation
whose fingers stay above the support and whose TCP and pre-place pose the arm reaches.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from spatial_manip.control.primitives import back_off
from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.relations import _corners, book_pose_class, point_in_box
from spatial_manip.transforms import rotation_angle, rpy_to_matrix
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.motion.description import TCP_Z, finger_boxes

DROP_M = 0.004          # release this far above the support
CLEARANCE_M = 0.003     # the lowest finger point stays this far above the support
AVOID_DEG = 30.0        # a retry's set-down differs from a failed one by at least this rotation, if it can
# a held object whose smallest size is more than this fraction of the next is chunky (a carton,
# a mug, a bottle, a can; a book or a plate is a slab: antipodal's square_thin_ratio): it rests on
# its own base, and a rotation that puts another of its axes up is not the same pose, whatever
# book_pose_class says of its box. A lying carton's 5.4 x 5.5 cm section read 'flat' either way,
# so a carton out of top-down reach at its place was rolled 90 degrees onto its side to be held
# from the side (objects-88-00001: tipped 90 deg; the agent saw it where it meant to put it)
CHUNKY_RATIO = 0.3
# how far the 2F-85's pads reach past the TCP along the approach: the arm planner's finger boxes
# (motion.description), which a finger kept out of a slot's opening must clear too
PAD_PAST_TCP_M = max(b.xyz[2] + b.size[2] / 2 for b in finger_boxes(+1)) - TCP_Z


def _axis_turns() -> list[np.ndarray]:
    """The 24 proper rotations that map the coordinate axes onto signed coordinate axes."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            R = np.zeros((3, 3))
            for col, (row, s) in enumerate(zip(perm, signs)):
                R[row, col] = s
            if np.linalg.det(R) > 0.5:
                out.append(R)
    return out


AXIS_TURNS = _axis_turns()


def finger_points(T_tcp: np.ndarray, width_m: float, gripper: GripperGeometry) -> np.ndarray:
    """Corners of both fingers (TCP frame: z approach, y closing; the TCP is between the tips)."""
    half = width_m / 2.0
    pts = []
    for s, dz, dx in itertools.product((-1.0, 1.0), (0.0, -gripper.finger_length_m), (-1.0, 1.0)):
        for dy in (half, half + gripper.finger_thickness_m):
            pts.append([dx * gripper.finger_height_m / 2.0, s * dy, dz])
    pts = np.asarray(pts)
    return pts @ T_tcp[:3, :3].T + T_tcp[:3, 3]


def pose_class(R: np.ndarray, size) -> str:
    """The pose class (geometry.relations.book_pose_class: flat, upright, tilted) of an object of
    `size` turned by `R`."""
    return book_pose_class(SimpleNamespace(rotation=np.asarray(R, float), size=np.asarray(size, float)))


def fit_place(T_place: np.ndarray, size, T_obj_tcp: np.ndarray, *, width_m: float,
              gripper: GripperGeometry | None = None, kinematics=None, approach_m: float = 0.10,
              yaw_step_deg: float = 15.0, entry: SlotEntry | None = None,
              avoid=(), any_pose_class: bool = False, rests=None) -> tuple[np.ndarray, np.ndarray]:
    """(T_obj, T_tcp) for setting the held object down at T_place's position.

    `T_place`: the planner's object pose (its rotation gives the pose class and the preferred
    facing; the support is under its lowest point). `T_obj_tcp`: the grasp, inv(T_obj) @ T_tcp.
    `entry`: the object slides in through an opening (a shelf slot) instead of coming down from
    above: it goes just inside the opening, held from the open side, and the pre-place pose is
    in front of it (`entry.approach_m`). `avoid`: object poses whose set-down failed before (a
    retry); rotations within AVOID_DEG of one are tried last. `any_pose_class`: the instruction
    named no pose, so when no rotation of T_place's class works (a book lying flat on the table
    is held by its edges, a finger under it) another class may (stood upright); a chunky object
    (`keeps_its_up`: a carton, a mug) is never turned onto another face, whatever the words.
    `rests(T_obj)`: raises UnreachableError when the object set down at T_obj would not rest
    (geometry.support: over an edge, inside a neighbour); such rotations are skipped. Raises
    UnreachableError when no rotation works."""
    gripper = gripper or GripperGeometry()
    size = np.asarray(size, float)
    T_place = np.asarray(T_place, float)
    R0, p0 = T_place[:3, :3], T_place[:3, 3]
    want = pose_class(R0, size)
    # a chunky object keeps the axis that is up in T_place up (in object axes: R0's last row)
    own_up = R0[2, :] if keeps_its_up(size) else None
    support_z = p0[2] - float(np.abs(R0.T[:, 2]) @ (size / 2))   # R0.T[:, 2] = world up in object axes
    cands = []
    # in a slot the object stays square to its walls, and goes in deepest first (a book stands
    # with its spine out, as on any shelf): a shallow one topples out when released
    yaws = np.arange(0.0, 360.0, 90.0 if entry else yaw_step_deg)
    for P, yaw in itertools.product(AXIS_TURNS, yaws):
        R = rpy_to_matrix(0.0, 0.0, math.radians(yaw)) @ R0 @ P
        if own_up is not None and float(R[2, :] @ own_up) < 0.5:
            continue
        other_class = pose_class(R, size) != want
        if other_class and not any_pose_class:
            continue
        depth = -round(entry.extent(R, size), 3) if entry else 0.0
        failed = any(rotation_angle(R, np.asarray(T)[:3, :3]) < math.radians(AVOID_DEG) for T in avoid)
        cands.append((other_class, failed, depth, rotation_angle(R, R0), R))
    cands.sort(key=lambda c: c[:4])
    n_low = n_ik = n_side = n_rest = 0
    why_not_rest = ""
    for *_, R in cands:
        center = np.array([p0[0], p0[1], support_z + float(np.abs(R.T[:, 2]) @ (size / 2)) + DROP_M])
        T_obj = np.eye(4)
        T_obj[:3, :3], T_obj[:3, 3] = R, center
        if entry is not None:
            T_obj[:3, 3] += entry.direction * entry.depth_to_inset(R, size, center) + [0, 0, entry.raise_m]
        T_tcp = T_obj @ T_obj_tcp
        # in a slot, the fingers open fully to let go (control.primitives) and the arm planner
        # checks them open: a finger that clears the floor board at the holding width may open
        # into it, so they are checked at the release width there
        low = finger_points(T_tcp, gripper.max_width_m if entry is not None else width_m, gripper)
        low = low[low[:, 2] < support_z + CLEARANCE_M]
        if len(low) and entry is not None:
            # a finger under the object (a book laid flat): let the object overhang the
            # opening's edge so that finger, pads included, stays in front of the support, if
            # the object still rests on it
            T_obj, T_tcp = entry.overhang(T_obj, T_tcp, low, margin_m=PAD_PAST_TCP_M + 0.005)
            low = low[:0] if T_obj is not None else low
        if len(low):
            n_low += 1
            continue
        if entry is not None and not entry.held_from_front(T_obj, T_tcp):
            n_side += 1
            continue
        if rests is not None:
            try:
                rests(T_obj)
            except UnreachableError as e:
                n_rest += 1
                why_not_rest = why_not_rest or f" (the first: {e.message})"
                continue
        pre = back_off(T_tcp, entry.approach_m(T_obj, size) if entry else approach_m,
                       entry.direction if entry else None)
        if kinematics is not None and not _reachable(kinematics, pre, T_tcp):
            n_ik += 1
            continue
        return T_obj, T_tcp
    raise UnreachableError(
        f"the held object cannot be set down {want} at {np.round(p0, 3).tolist()} as it is held: of "
        f"{len(cands)} rotations, {n_low} put a finger into the support, {n_side} hold it from the far side "
        f"of the opening, {n_rest} would not rest there{why_not_rest} and {n_ik} have no arm IK solution")


REGRASP_STEP_M = 0.005   # a regrasp slides the grasp out towards the edge it holds in steps of this


def shallower_grasps(T_obj_tcp: np.ndarray, size, gripper: GripperGeometry | None = None,
                     step_m: float = REGRASP_STEP_M) -> list[np.ndarray]:
    """The grasp `T_obj_tcp` (inv(T_obj) @ T_tcp) slid back along its approach, out towards the
    edge it came in over, in steps of `step_m` while the TCP stays `gripper.min_depth_m` inside
    that edge: the grasps a set-down, an opening and a re-close can make without turning the hand,
    deepest (the firmest) first. A book held 3 cm in from its side edge, a finger under it once
    flat, cannot be laid flat in a slot (the finger would have to be in front of the opening,
    the book's middle too: place-85-00009, place-87-00003); held 1.5 cm in, it overhangs the
    opening's edge with its middle inside. Empty when the grasp is already that shallow."""
    gripper = gripper or GripperGeometry()
    T = np.asarray(T_obj_tcp, float)
    a = T[:3, 2]                                          # the approach, in object axes
    depth = float(T[:3, 3] @ a) + float(np.abs(a) @ (np.asarray(size, float) / 2))
    out = []
    for k in range(1, int((depth - gripper.min_depth_m) / step_m + 1e-9) + 1):
        S = T.copy()
        S[:3, 3] = T[:3, 3] - k * step_m * a
        out.append(S)
    return out


def keeps_its_up(size) -> bool:
    """Whether an object of box `size` is set down only on the face it is asked to rest on
    (chunky: its smallest size more than CHUNKY_RATIO of the next), never turned onto another."""
    s = np.sort(np.asarray(size, float))
    return bool(s[0] > CHUNKY_RATIO * s[1])


def _reachable(kinematics, pre: np.ndarray, T_tcp: np.ndarray) -> bool:
    """The arm reaches the pre-place and place poses: by a straight move that clears the arm
    itself when `kinematics` can tell (motion.arm_plans.ArmReach), else by IK at both ends."""
    reaches = getattr(kinematics, "reaches", None)
    if reaches is not None:
        return bool(reaches(pre, T_tcp))
    return bool(kinematics.ik_all(T_tcp) and kinematics.ik_all(pre))


@dataclass(frozen=True)
class SlotEntry:
    """An opening the placed object slides through horizontally: `direction` (unit, base frame)
    points into it, `front` is the opening's plane (direction @ x == front)."""

    direction: np.ndarray
    front: float
    inset_m: float = 0.01        # the object's near face this far inside the opening
    clearance_m: float = 0.03    # the pre-place pose holds the whole object this far in front
    min_rest_m: float = 0.01     # an overhanging object's centre stays this far inside
    # slid in this much higher than a place on an open surface: a wide book held by its edge
    # sags a few degrees in the fingers, and its far corner must clear the slot's floor board
    raise_m: float = 0.012

    @classmethod
    def of_slot(cls, slot, robot_position) -> "SlotEntry":
        """The entry of a slot region. A slot faces along its rotation's x axis (towards the
        viewer); one without a rotation faces the robot."""
        facing = slot.rotation[:, 0]
        if np.allclose(slot.rotation, np.eye(3)):
            facing = np.asarray(robot_position, float) - slot.center
        d = -np.asarray(facing, float).copy()
        d[2] = 0.0
        d /= np.linalg.norm(d)
        return cls(d, float((_corners(slot) @ d).min()))

    def extent(self, R, size) -> float:
        return float(np.abs(R.T @ self.direction) @ (np.asarray(size, float) / 2))

    def depth_to_inset(self, R, size, center) -> float:
        """How far to move an object centred at `center` along the entry so its near face is
        `inset_m` inside the opening."""
        return self.front + self.inset_m + self.extent(R, size) - float(self.direction @ center)

    def approach_m(self, T_obj, size) -> float:
        """The slide: from the whole object `clearance_m` in front of the opening to T_obj."""
        far = float(self.direction @ T_obj[:3, 3]) + self.extent(T_obj[:3, :3], size)
        return far - self.front + self.clearance_m

    def overhang(self, T_obj, T_tcp, low_points, margin_m: float = 0.005):
        """(T_obj, T_tcp) moved back out of the opening until `low_points` (fingertip corners
        below the support) are in front of it; (None, None) if the object's centre would then
        no longer be `min_rest_m` inside (it would tip off)."""
        back = float((low_points @ self.direction).max()) - self.front + margin_m
        shift = -self.direction * max(back, 0.0)
        T_obj, T_tcp = T_obj.copy(), T_tcp.copy()
        T_obj[:3, 3] += shift
        T_tcp[:3, 3] += shift
        if float(self.direction @ T_obj[:3, 3]) - self.front < self.min_rest_m:
            return None, None
        return T_obj, T_tcp

    def held_from_front(self, T_obj, T_tcp) -> bool:
        """The gripper trails the object into the opening (on its open side), not ahead of it."""
        return float(self.direction @ (T_tcp[:3, 3] - T_obj[:3, 3])) < -0.01


SLOT_STEP_M = 0.05       # other set-down places along a slot are this far apart
SLOT_MARGIN_M = 0.01     # and keep this far from its side walls and from what stands in it
SLOT_TRIES = 4           # at most this many of them are tried, nearest the robot first


def slot_positions(scene, slot, T_place: np.ndarray, size, moved_id: str | None = None,
                   step_m: float = SLOT_STEP_M, limit: int = SLOT_TRIES) -> list[np.ndarray]:
    """Other poses for setting the object down in `slot` when `T_place` (the planner's, in its
    middle) cannot be reached: T_place slid sideways along the opening, in steps of `step_m`,
    wherever the object (its narrower horizontal side across the slot, as `fit_place` turns it,
    deepest first) stays `SLOT_MARGIN_M` clear of the side walls and of every object standing in
    the slot; at most `limit`, nearest the robot first. Any of them satisfies "in the slot"; a
    wide or off-centre slot's middle may be out of the arm's reach where its near end is not."""
    T_place = np.asarray(T_place, float)
    entry = SlotEntry.of_slot(slot, scene.robot.position)
    across = np.cross([0.0, 0.0, 1.0], entry.direction)
    R0, size = T_place[:3, :3], np.asarray(size, float)
    vertical = int(np.argmax(np.abs(R0[2, :])))
    half = min(size[k] for k in range(3) if k != vertical) / 2 + SLOT_MARGIN_M
    p0 = T_place[:3, 3]
    walls = _corners(slot) @ across
    lo, hi = walls.min() + half - p0 @ across, walls.max() - half - p0 @ across
    taken = []
    for o in scene.objects:
        if o.id == moved_id or getattr(o, "held", False) or o.category in ("shelf", "table", "floor"):
            continue
        if point_in_box(o.center, slot, margin_m=0.02):
            ends = _corners(o) @ across - p0 @ across
            taken.append((ends.min() - half, ends.max() + half))
    offsets = [k * step_m for k in range(int(lo // step_m), int(hi // step_m) + 1) if k != 0]
    offsets = [s for s in offsets if lo <= s <= hi and not any(a < s < b for a, b in taken)]
    out = []
    for s in offsets:
        T = T_place.copy()
        T[:3, 3] = p0 + s * across
        out.append(T)
    robot = np.asarray(scene.robot.position, float)
    out.sort(key=lambda T: float(np.linalg.norm((T[:3, 3] - robot)[:2])))
    return out[:limit]


def slot_at(scene, place_pose):
    """The shelf slot (scene region) that `place_pose` (4x4) lies in, or None."""
    if scene is None or place_pose is None:
        return None
    p = np.asarray(place_pose, float)[:3, 3]
    return next((r for r in scene.regions if r.kind == "slot" and point_in_box(p, r, margin_m=1e-3)), None)


def slot_entry(scene, place_pose) -> SlotEntry | None:
    """The opening of the shelf slot that `place_pose` (4x4) lies in, or None for a place on an
    open surface."""
    slot = slot_at(scene, place_pose)
    return None if slot is None else SlotEntry.of_slot(slot, scene.robot.position)
