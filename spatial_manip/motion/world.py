"""What the arm must not touch: boxes from the perceived scene (objects, supports, shelf boards,
the table, the floor), the depth cloud as an octree for what the scene does not explain, and the
held object attached to the gripper.

Obstacle names are the scene ids (a multi-part fixture's boards are "<id>/part<k>"), so an error
can name what blocks a motion and a caller can allow contact with a target and its support.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

import numpy as np

from spatial_manip.control.kinematics import DH_PRESETS
from spatial_manip.errors import InvalidGoalError
from spatial_manip.geometry.reach import REACH_M, SLOT_REACH_M, TCP_TO_WRIST_M
from spatial_manip.geometry.relations import BOOK_SIZE_RANGES_M
from spatial_manip.scene import FIXTURE_CATEGORIES

# Farther from the base than this, nothing can touch the arm or what it carries, so boxes and cloud
# points beyond it are left out: the highest shoulder, the wrist at the farthest a set-down reaches
# (geometry.reach: into a slot, 1.0 m on the simulated UR5e), the TCP ahead of the wrist, a held
# book's farthest corner from the TCP (the largest book's diagonal), and a margin for the fingers.
# A literal 1.35 m cropped the obstacles beside a far slot's held book (its far edge ~1.34 m out).
OBSTACLE_RANGE_M = (max(float(dh["d1"]) for dh in DH_PRESETS.values()) + max(REACH_M, SLOT_REACH_M)
                    + TCP_TO_WRIST_M + float(np.linalg.norm([max(sizes[k][1] for sizes in BOOK_SIZE_RANGES_M.values())
                                                                for k in range(3)]))
                    + 0.05)
CLOUD_EXPLAINED_M = 0.02  # cloud points this close to a modelled box are that box, not clutter
# One depth view sees an object's near side and top; its far side is hidden behind it, and a box
# fitted to what was seen ends at the last surface seen. A potted plant's foliage reached 3.5-5 cm
# past its perceived box on the side away from the camera, and the gripper, at a pre-grasp clear of
# the box and of the cloud (no returns there), brushed it. In the world `with_hidden_sides` builds,
# an object's footprint is taken to be as deep, along the camera's horizontal view, as it is wide
# across it, grown away from the camera by at most this much (`with_hidden_side`). Books keep their
# boxes (perception completes a book's hidden thickness from its size class), and so do fixtures
# (configured). A prior, not a measurement: a statue seen edge-on is as thin as it looks, so the
# grasp service prefers grasps clear of these sides and falls back to the measured boxes.
HIDDEN_DEPTH_MAX_M = 0.08
# In that world every neighbour's box (books too; not fixtures, the cell's own) also stands this much
# larger all round: where perception named an object from the library wrongly its box is off by
# more than the depth's error. An alarm clock 7 cm wide, boxed as a 2.6 cm thick book 6 cm nearer the
# camera, ended 1-2.5 cm short of it on its hidden sides (a book's box keeps its hidden side), and a
# grasp of the book beside it, kept on that box, put the wrist through the clock; the pads of session
# 39's pick touched it. Grasps that pass a neighbour closer than this margin are tried after those
# that do not (test/grasping/frames/pick-112-00001).
NEIGHBOUR_MARGIN_M = 0.015
FLOOR_HALF_M = 2.0


@dataclasses.dataclass(frozen=True)
class Obstacle:
    name: str                    # "<scene id>" or "<scene id>/part<k>" or "cloud"
    owner: str                   # the scene id it belongs to
    geometry: object             # a coal.CollisionGeometry
    pose: np.ndarray             # 4x4 in the base frame
    clearance_m: float = 0.0     # kept from this body on top of the planner's padding (the cloud: sensor error)
    points: np.ndarray | None = None   # the cloud's points, base frame: to say which ones block a move


@dataclasses.dataclass(frozen=True)
class Attached:
    """A body carried by the gripper (the held object), posed relative to the TCP."""

    name: str
    size: np.ndarray             # box extents (m)
    T_tcp_object: np.ndarray


@dataclasses.dataclass
class CollisionWorld:
    obstacles: list = dataclasses.field(default_factory=list)
    attached: Attached | None = None

    # ---- building ------------------------------------------------------------------------
    def add_box(self, name: str, center, size, rotation=None, owner: str | None = None) -> None:
        import coal

        size = np.asarray(size, float).reshape(3)
        if np.any(size <= 0) or not np.all(np.isfinite(size)):
            raise InvalidGoalError(f"obstacle {name!r} needs a positive, finite size, got {size.tolist()}")
        T = np.eye(4)
        T[:3, :3] = np.eye(3) if rotation is None else np.asarray(rotation, float).reshape(3, 3)
        T[:3, 3] = np.asarray(center, float).reshape(3)
        if _beyond_reach(T[:3, 3], size):
            return
        self.obstacles.append(Obstacle(name, owner or name, coal.Box(*size), T))

    def add_cylinder(self, name: str, center, radius_m: float, height_m: float, owner: str | None = None) -> None:
        """An upright cylinder (axis along z) centred at `center`."""
        import coal

        if not (np.isfinite(radius_m) and np.isfinite(height_m) and radius_m > 0 and height_m > 0):
            raise InvalidGoalError(f"obstacle {name!r} needs a positive, finite radius and height, got "
                                   f"{radius_m} / {height_m}")
        T = np.eye(4)
        T[:3, 3] = np.asarray(center, float).reshape(3)
        self.obstacles.append(Obstacle(name, owner or name, coal.Cylinder(float(radius_m), float(height_m)), T))

    def add_cloud(self, points: np.ndarray, voxel_m: float = 0.02, clearance_m: float = 0.0) -> int:
        """Occupy the voxels of a base-frame point cloud (an obstacle map: motion.obstacle_map)
        that no modelled box explains (the boxes already cover their own surfaces; what is left is
        unmodelled clutter), kept `clearance_m` from (the sensor's error there; points that
        close to a box are that box too). Returns the number of points kept."""
        import coal

        if not (np.isfinite(clearance_m) and clearance_m >= 0):
            raise InvalidGoalError(f"the cloud's clearance must be a finite distance >= 0 m, got {clearance_m}")
        pts = np.asarray(points, float).reshape(-1, 3)
        pts = pts[np.all(np.isfinite(pts), axis=1)]
        pts = pts[np.linalg.norm(pts, axis=1) < OBSTACLE_RANGE_M]
        pts = pts[~self.explains(pts, max(CLOUD_EXPLAINED_M, clearance_m))]
        if len(pts):
            self.obstacles.append(Obstacle("cloud", "cloud", coal.makeOctree(pts, float(voxel_m)), np.eye(4),
                                           float(clearance_m), pts))
        return len(pts)

    def attach(self, name: str, size, T_tcp_object: np.ndarray) -> None:
        self.attached = Attached(name, np.asarray(size, float).reshape(3), np.asarray(T_tcp_object, float))

    def without(self, ids: Iterable[str]) -> "CollisionWorld":
        """The world minus obstacles named or owned by `ids` (a target and its support)."""
        ids = set(ids)
        kept = [o for o in self.obstacles if o.name not in ids and o.owner not in ids]
        return CollisionWorld(kept, self.attached)

    def with_keep_out(self, envelope) -> "CollisionWorld":
        """This world plus the envelope's keep-out boxes (the camera stand...) as bodies, so no
        link, not only the TCP, enters them."""
        out = CollisionWorld(list(self.obstacles), self.attached)
        for b in envelope.config.keep_out:
            lo, hi = np.asarray(b.min_m, float), np.asarray(b.max_m, float)
            if b.radius_m is None:
                out.add_box(f"keep_out:{b.name}", (lo + hi) / 2, hi - lo)
            else:
                out.add_cylinder(f"keep_out:{b.name}", (lo + hi) / 2, b.radius_m, hi[2] - lo[2])
        return out

    def names(self) -> list[str]:
        return [o.name for o in self.obstacles]

    def explains(self, pts: np.ndarray, margin_m: float = CLOUD_EXPLAINED_M) -> np.ndarray:
        """Which points lie on or within margin_m of one of the world's boxes."""
        hit = np.zeros(len(pts), bool)
        for o in self.obstacles:
            half = getattr(o.geometry, "halfSide", None)
            if half is None:
                continue
            local = (pts - o.pose[:3, 3]) @ o.pose[:3, :3]
            hit |= np.all(np.abs(local) <= np.asarray(half) + margin_m, axis=1)
        return hit

    # ---- from a scene --------------------------------------------------------------------
    @classmethod
    def from_scene(cls, scene, *, allowed: Sequence[str] = (), cloud: np.ndarray | None = None,
                   voxel_m: float = 0.02, T_base_tcp: np.ndarray | None = None,
                   cloud_clearance_m: float = 0.0) -> "CollisionWorld":
        """Every scene object as a box (fixtures by their parts), the floor, the cloud's
        unexplained voxels, and the held object attached when the TCP pose (or the object's
        recorded grasp, `extra["T_object_tcp"]`) says where it sits in the gripper. Objects in
        `allowed` (the target while approaching it) are left out."""
        world = cls()
        for o in scene.objects:
            if o.held:
                world._attach_held(o, T_base_tcp)
            elif o.id not in allowed:
                world._add_object(o)
        if "ground_z" in scene.extra:
            g = float(scene.extra["ground_z"])
            world.add_box("floor", [0.0, 0.0, g - 0.025], [2 * FLOOR_HALF_M, 2 * FLOOR_HALF_M, 0.05])
        if cloud is not None:
            world.add_cloud(cloud, voxel_m, cloud_clearance_m)
        return world

    def _add_object(self, o) -> None:
        for k, (center, size, rotation) in enumerate(o.solid_boxes()):
            self.add_box(f"{o.id}/part{k}" if o.has_parts else o.id, center, size, rotation, owner=o.id)

    def with_hidden_sides(self, scene, keep: Sequence[str] = ()) -> "CollisionWorld":
        """This world plus, for each of the scene's objects it holds as one box (not `keep`: the
        target, whose far side the grasp reaches round), that box grown on the side the scene's
        viewer (the camera) could not see (`with_hidden_side`) and, but for a fixture's, by
        NEIGHBOUR_MARGIN_M all round, under the object's name."""
        out = CollisionWorld(list(self.obstacles), self.attached)
        boxed = {ob.name for ob in self.obstacles}
        for o in scene.objects:
            if o.id in boxed and o.id not in keep:
                center, size = with_hidden_side(o, scene.viewer.position)
                if o.category not in FIXTURE_CATEGORIES:
                    size = size + 2 * NEIGHBOUR_MARGIN_M
                if not np.allclose(size, o.size):
                    out.add_box(o.id, center, size, o.rotation)
        return out

    def _attach_held(self, o, T_base_tcp) -> None:
        T_obj = np.eye(4)
        T_obj[:3, :3], T_obj[:3, 3] = o.rotation, o.center
        if T_base_tcp is not None:
            self.attach(o.id, o.size, np.linalg.inv(np.asarray(T_base_tcp, float)) @ T_obj)
        elif "T_object_tcp" in o.extra:
            self.attach(o.id, o.size, np.linalg.inv(np.asarray(o.extra["T_object_tcp"], float)))
        else:
            raise InvalidGoalError(f"the held object {o.id!r} cannot be attached: give the TCP pose at which it "
                                   "was grasped (T_base_tcp) or record extra['T_object_tcp']")


def with_hidden_side(o, camera_position, max_m: float = HIDDEN_DEPTH_MAX_M) -> tuple[np.ndarray, np.ndarray]:
    """The centre and size of `o`'s box with its hidden far side (HIDDEN_DEPTH_MAX_M): of its two
    horizontal axes, the one nearer the camera's horizontal view direction is the depth the
    camera could not measure; it grows, away from the camera, to the width across it (at most
    `max_m` more). Books and fixtures keep their boxes."""
    center, size = np.asarray(o.center, float), np.asarray(o.size, float)
    if o.category == "book" or o.category in FIXTURE_CATEGORIES:
        return center, size
    view = center - np.asarray(camera_position, float)
    view[2] = 0.0
    if np.linalg.norm(view) < 1e-6:          # seen from straight above: its footprint is in view
        return center, size
    R = np.asarray(o.rotation, float)
    across, depth = [k for k in range(3) if k != int(np.argmax(np.abs(R[2])))]
    if abs(R[:, across] @ view) > abs(R[:, depth] @ view):
        across, depth = depth, across
    grow = float(np.clip(size[across] - size[depth], 0.0, max_m))
    if grow <= 0.0:
        return center, size
    away = float(np.sign(R[:, depth] @ view)) or 1.0
    size = size.copy()
    size[depth] += grow
    return center + away * R[:, depth] * grow / 2, size


def _beyond_reach(center: np.ndarray, size: np.ndarray) -> bool:
    return float(np.linalg.norm(center)) - 0.5 * float(np.linalg.norm(size)) > OBSTACLE_RANGE_M


def support_ids(scene, target_id: str, gap_m: float = 0.01) -> list[str]:
    """The target and what it rests on: supports naming it (`extra["supports"]`), the shelf of
    a slotted object, and any object whose top lies within gap_m under the target's bottom
    with overlapping footprints (the table under a book standing in a holder). Contact with
    these is expected while approaching, grasping, lifting and placing."""
    target = next((o for o in scene.objects if o.id == target_id), None)
    out = [target_id]
    if target is None:
        return out
    lo, hi = target.corners().min(0), target.corners().max(0)
    for o in scene.objects:
        if o.id == target_id or o.held:
            continue
        c = o.corners()
        o_lo, o_hi = c.min(0), c.max(0)
        under = abs(o_hi[2] - lo[2]) <= gap_m and np.all(o_lo[:2] < hi[:2]) and np.all(o_hi[:2] > lo[:2])
        named = o.extra.get("supports") == target_id or (target.extra.get("in_region") and o.category == "shelf")
        if under or named:
            out.append(o.id)
    return out


def touching_ids(scene, target_id: str, gap_m: float = 0.01) -> list[str]:
    """The scene objects (owners, for a fixture's boards) whose boxes lie within gap_m of the
    target's box: what it rests on or leans against. A book leaning in a holder slides along
    the holder's wall as it is lifted out; that contact is expected, as the support's is."""
    import coal

    target = next((o for o in scene.objects if o.id == target_id), None)
    if target is None:
        return []
    box = coal.Box(*np.asarray(target.size, float))
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = np.asarray(target.rotation, float), np.asarray(target.center, float)
    others = CollisionWorld()
    for o in scene.objects:
        if o.id != target_id and not o.held:
            others._add_object(o)
    out = []
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    for ob in others.obstacles:
        result.clear()
        d = coal.distance(box, coal.Transform3s(T[:3, :3], T[:3, 3]), ob.geometry,
                          coal.Transform3s(ob.pose[:3, :3], ob.pose[:3, 3]), request, result)
        if d <= gap_m and ob.owner not in out:
            out.append(ob.owner)
    return out
