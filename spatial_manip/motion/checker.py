"""Is a configuration (or a joint segment) safe: no contact between the arm, its gripper, the held
object and the world, no self-contact (beyond the SRDF's pairs), and the TCP inside the safety
envelope (workspace box, keep-out boxes, table height: SafetyEnvelope.check_position).

The search asks thousands of times, so it uses a broad phase (coal's AABB tree through
Pinocchio) and `EnvelopeBoxes`, the envelope's three position tests on plain floats (a test
keeps the two equal); the final check of a path calls SafetyEnvelope.check_position itself on
every sample."""
from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import UnreachableError
from spatial_manip.motion.robot import GRIPPER_PREFIX, RobotModel, _inside_grown, link_of
from spatial_manip.motion.world import CollisionWorld

HELD_IGNORES = ("wrist_3_link", "camera_bracket", "camera_color_optical_frame")   # the held object touches the hand
FINGER_PREFIX = "robotiq_left_finger", "robotiq_right_finger"
FINGER_OPEN_INNER_M = 0.0425          # inner finger faces of the URDF's open 2F-85 (85 mm stroke)


class CollisionChecker:
    """One robot in one world. `padding_m` is the clearance kept from world bodies (not from the
    robot itself, whose primitives already cover its links generously)."""

    def __init__(self, robot: RobotModel, world: CollisionWorld, envelope: SafetyEnvelope | None,
                 padding_m: float = 0.0, touchable: Sequence[str] = ()):
        import pinocchio as pin

        self.robot, self.world, self.envelope = robot, world, envelope
        self.model, self.data = robot.model, robot.model.createData()
        self.geom = robot.geom.copy()
        if world.attached is not None:
            self._close_fingers(world)
        n_robot = self.n_robot = self.geom.ngeoms
        moving = [i for i, g in enumerate(self.geom.geometryObjects) if g.parentJoint != 0]
        obstacles = [self._add(o.name, 0, o.pose, o.geometry) for o in world.obstacles]
        # the cloud is kept its clearance (the sensor's error) away, and its points name a block
        self._clearance = {k: o.clearance_m for k, o in zip(obstacles, world.obstacles) if o.clearance_m > 0}
        self._points = {k: o.points for k, o in zip(obstacles, world.obstacles) if o.points is not None}
        held = self._add_held(world) if world.attached is not None else None
        # `touchable` bodies (a target and its support) may meet the gripper and the held
        # object, never the arm's own links
        touch = {k for k, o in zip(obstacles, world.obstacles) if o.name in touchable or o.owner in touchable}
        hand = {r for r in moving if self.geom.geometryObjects[r].name.startswith(GRIPPER_PREFIX)}
        world_pairs = [(r, o) for r in moving for o in obstacles if not (o in touch and r in hand)]
        if held is not None:
            world_pairs += [(held, o) for o in obstacles if o not in touch]
            for r in range(n_robot):
                g = self.geom.geometryObjects[r]
                if not (g.name.startswith(GRIPPER_PREFIX) or link_of(g) in HELD_IGNORES):
                    self.geom.addCollisionPair(pin.CollisionPair(r, held))
        for a, b in world_pairs:
            self.geom.addCollisionPair(pin.CollisionPair(a, b))
        self.gdata = pin.GeometryData(self.geom)
        padded = {(a, b) for a, b in world_pairs}
        self._padded = [k for k, cp in enumerate(self.geom.collisionPairs)
                        if (cp.first, cp.second) in padded or (cp.second, cp.first) in padded]
        self.set_padding(padding_m)
        self.manager = pin.BroadPhaseManager_DynamicAABBTreeCollisionManager(self.model, self.geom, self.gdata)
        self.fast_envelope = EnvelopeBoxes(envelope) if envelope is not None else None
        self.blockers: Counter = Counter()      # body pair -> times it made a state invalid
        self._invalid = 0

    def set_padding(self, padding_m: float) -> None:
        """Clearance kept from world bodies (0: exact contact); cheap, so one checker serves the
        padded search and the exact final check."""
        if getattr(self, "padding_m", None) == float(padding_m):
            return
        self.padding_m = float(padding_m)
        for k in self._padded:
            cp = self.geom.collisionPairs[k]
            extra = max(self._clearance.get(cp.first, 0.0), self._clearance.get(cp.second, 0.0))
            self.gdata.collisionRequests[k].security_margin = self.padding_m + extra

    def _close_fingers(self, world: CollisionWorld) -> None:
        """Holding something, the fingers close on it: move each finger in along the TCP's
        closing axis (y) until its inner face meets the held box's extent along that axis."""
        import pinocchio as pin

        a = world.attached
        y = self.robot.T_tool0_tcp[:3, 1]                         # closing axis in tool0 = joint-6 axis frame
        half = 0.5 * float(np.abs(a.T_tcp_object[1, :3]) @ a.size)
        for g in self.geom.geometryObjects:
            if g.name.startswith(FINGER_PREFIX):
                t = g.placement.translation
                side = float(np.sign((t - self.robot.M_joint6_tool0[:3, 3]) @ y))
                shift = max(0.0, FINGER_OPEN_INNER_M - half)
                g.placement = pin.SE3(g.placement.rotation, t - side * shift * y)

    def _name(self, index: int) -> str:
        g = self.geom.geometryObjects[index]
        return link_of(g) if index < self.n_robot else g.name

    def _add(self, name: str, joint: int, T: np.ndarray, geometry) -> int:
        import pinocchio as pin

        return self.geom.addGeometryObject(pin.GeometryObject(name, joint, pin.SE3(T), geometry))

    def _add_held(self, world: CollisionWorld) -> int:
        import coal

        a = world.attached
        T = self.robot.M_joint6_tool0 @ self.robot.T_tool0_tcp @ a.T_tcp_object
        return self._add(f"held:{a.name}", self.robot.wrist3, T, coal.Box(*a.size))

    # ---- single configurations -----------------------------------------------------------
    def collides(self, q: np.ndarray) -> bool:
        """Any contact at q (broad phase, then the exact test of the overlapping pairs)."""
        import pinocchio as pin

        return bool(pin.computeCollisions(self.model, self.data, self.manager, np.asarray(q, float), True))

    def contact(self, q: np.ndarray) -> tuple[str, str] | None:
        """The first pair of bodies in contact at q (link or obstacle names), or None."""
        import pinocchio as pin

        if not self.collides(q):
            return None
        # the broad phase leaves untested pairs' results stale: name the pair with the plain pass
        pin.computeCollisions(self.model, self.data, self.geom, self.gdata, np.asarray(q, float), True)
        for k, res in enumerate(self.gdata.collisionResults):
            if res.isCollision():
                cp = self.geom.collisionPairs[k]
                return self._name(cp.first), self._name(cp.second)
        return ("?", "?")

    def blocking_points(self, q: np.ndarray) -> tuple[str, np.ndarray] | None:
        """At q, the first body touching a point cloud and the cloud points it touches (base
        frame; within its clearance and a voxel of the body), or None: what a user needs to
        tell a real obstacle from noise."""
        if not self._points or not self.collides(q):
            return None
        import pinocchio as pin

        pin.computeCollisions(self.model, self.data, self.geom, self.gdata, np.asarray(q, float), True)
        for k, res in enumerate(self.gdata.collisionResults):
            cp = self.geom.collisionPairs[k]
            cloud = cp.second if cp.second in self._points else cp.first if cp.first in self._points else None
            if cloud is None or not res.isCollision():
                continue
            body = cp.first if cloud == cp.second else cp.second
            pts = self._points[cloud]
            M = self.gdata.oMg[body]
            voxel = float(self.geom.geometryObjects[cloud].geometry.getResolution())
            reach = self.gdata.collisionRequests[k].security_margin + voxel * np.sqrt(3)
            hit = _inside_grown(self.geom.geometryObjects[body].geometry, (pts - M.translation) @ M.rotation, reach)
            return self._name(body), pts[hit]
        return None

    def tcp(self, q: np.ndarray) -> np.ndarray:
        import pinocchio as pin

        pin.framesForwardKinematics(self.model, self.data, np.asarray(q, float))
        return (self.data.oMf[self.robot.tool0].homogeneous @ self.robot.T_tool0_tcp)[:3, 3]

    def envelope_problem(self, q: np.ndarray) -> str | None:
        """The envelope's refusal of the TCP at q, or None (reuses SafetyEnvelope.check_position)."""
        if self.envelope is None:
            return None
        try:
            self.envelope.check_position(self.tcp(q), what="TCP on the path")
        except UnreachableError as e:
            return e.message
        return None

    def problem(self, q: np.ndarray) -> str | None:
        """Why q is unsafe (collision pair or envelope message), or None."""
        pair = self.contact(q)
        if pair is not None:
            return f"{pair[0]} touches {pair[1]}" + self._cloud_detail(q, pair)
        return self.envelope_problem(q)

    def _cloud_detail(self, q: np.ndarray, pair: tuple[str, str]) -> str:
        """' (n points of the depth cloud around [x, y, z] m, nearest ...)' for a contact with
        the cloud, else ''."""
        if pair[1] != "cloud":
            return ""
        found = self.blocking_points(q)
        if found is None or not len(found[1]):
            return ""
        pts = found[1]
        return (f" ({len(pts)} cloud point{'s' * (len(pts) != 1)} around {np.round(pts.mean(0), 3).tolist()} m, "
                f"first {np.round(pts[:3], 3).tolist()})")

    def valid(self, q: np.ndarray) -> bool:
        """The fast test the search calls; every 8th refusal is explained, for the error message."""
        import pinocchio as pin

        if self.collides(q):
            self._note(q)
            return False
        if self.fast_envelope is not None:
            T = pin.updateFramePlacement(self.model, self.data, self.robot.tool0).homogeneous @ self.robot.T_tool0_tcp
            if not self.fast_envelope.ok(T[:3, 3]):
                self._note(q, T[:3, 3])
                return False
        return True

    def _note(self, q: np.ndarray, tcp: np.ndarray | None = None) -> None:
        self._invalid += 1
        if self._invalid % 8 == 1:
            if tcp is not None:
                self.blockers[f"the safety envelope's {self.fast_envelope.refusal(tcp)}"] += 1
            else:
                self.blockers[_world_side(self.contact(q) or ("?", "?"))] += 1

    # ---- segments ------------------------------------------------------------------------
    def first_problem_on_segment(self, q0: np.ndarray, q1: np.ndarray, step_rad: float) -> tuple[np.ndarray, str] | None:
        """The first unsafe configuration on the straight joint segment (every step_rad of the
        largest joint change), with its reason, or None."""
        for q in _segment(q0, q1, step_rad):
            # the fast tests first; the explaining ones (problem) only where they refuse
            if self.collides(q) or (self.fast_envelope is not None and not self.fast_envelope.ok(self.tcp(q))):
                why = self.problem(q)
                if why is not None:
                    return q, why
        return None

    def segment_valid(self, q0: np.ndarray, q1: np.ndarray, step_rad: float) -> bool:
        """The search's fast version of first_problem_on_segment (checked from both ends
        inwards: a blocked segment is usually blocked away from its valid ends)."""
        qs = _segment(q0, q1, step_rad)
        order = np.argsort(-np.minimum(np.arange(len(qs)), np.arange(len(qs))[::-1]), kind="stable")
        return all(self.valid(qs[i]) for i in order)

    def blocker_near(self, goal: np.ndarray, start: np.ndarray, step_rad: float) -> str:
        """The first thing in the way walking the straight joint line back from the goal: what
        closes the goal off (the search's own refusals are mostly random samples)."""
        for q in _segment(goal, start, step_rad):
            pair = self.contact(q)
            if pair is not None:
                return _world_side(pair)
            if self.fast_envelope is not None:
                why = self.fast_envelope.refusal(self.tcp(q))
                if why is not None:
                    return f"the safety envelope's {why}"
        return self.main_blocker()

    def main_blocker(self) -> str:
        """What refused the search most often; the workspace box only when nothing else did
        (random samples land outside it all the time, which blocks nothing in particular)."""
        ranked = [b for b, _ in self.blockers.most_common() if not b.endswith("workspace box")]
        if ranked:
            return ranked[0]
        return self.blockers.most_common(1)[0][0] if self.blockers else "nothing in particular"


def _segment(q0, q1, step_rad: float) -> np.ndarray:
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    n = max(1, int(np.ceil(np.max(np.abs(q1 - q0)) / step_rad)))
    return q0 + np.linspace(0.0, 1.0, n + 1)[:, None] * (q1 - q0)


def _world_side(pair: tuple[str, str]) -> str:
    """Name the obstacle of a robot-world contact (or the robot pair for a self-contact)."""
    a, b = pair
    return f"{b} (hit by the {a})"


class EnvelopeBoxes:
    """SafetyEnvelope.check_position's tests (workspace box, table floor, keep-out boxes, all
    inclusive bounds as there) on three floats, for the search's inner loop. A unit test keeps
    it equal to the envelope on random points."""

    def __init__(self, envelope: SafetyEnvelope):
        c = envelope.config
        self.lo, self.hi = tuple(c.workspace.min_m), tuple(c.workspace.max_m)
        self.floor = c.table_height_m + c.min_tcp_height_above_table_m
        self.keep_out = [(tuple(b.min_m), tuple(b.max_m), b.name, b.axis_xy, b.radius_m) for b in c.keep_out]

    def ok(self, p) -> bool:
        return self.refusal(p) is None

    def refusal(self, p) -> str | None:
        """What refuses the TCP position p ("workspace box", "table height", "keep-out box
        'name'"), or None."""
        x, y, z = float(p[0]), float(p[1]), float(p[2])
        lo, hi = self.lo, self.hi
        if not (lo[0] <= x <= hi[0] and lo[1] <= y <= hi[1] and lo[2] <= z <= hi[2]):
            return "workspace box"
        if z < self.floor:
            return "table height"
        for a, b, name, (cx, cy), r in self.keep_out:
            if a[0] <= x <= b[0] and a[1] <= y <= b[1] and a[2] <= z <= b[2] and \
                    (r is None or (x - cx) ** 2 + (y - cy) ** 2 <= r * r):
                return f"keep-out box {name!r}"
        return None
