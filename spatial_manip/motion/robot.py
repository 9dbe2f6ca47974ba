"""The arm as Pinocchio sees it: kinematics and collision bodies from urdf/, with the SRDF's
never-colliding pairs removed, and the gripper turned to the configured TCP."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from spatial_manip.errors import InvalidGoalError
from spatial_manip.motion.description import MODELS, MOUNTS
from spatial_manip.paths import urdf_dir

GRIPPER_PREFIX = "robotiq_"


def description_paths(model: str = "ur5e", mount: str = "eye_to_hand") -> tuple[Path, Path]:
    """(URDF, SRDF) of an arm model and camera mount: the source tree's urdf/, else the installed
    share/spatial_manip/urdf/."""
    if model not in MODELS or mount not in MOUNTS:
        raise InvalidGoalError(f"motion: model must be one of {MODELS} and mount one of {MOUNTS}, "
                               f"got {model!r} and {mount!r}")
    stem = f"{model}_robotiq_2f85_{mount}"
    urdf, srdf = urdf_dir() / f"{stem}.urdf", urdf_dir() / f"{stem}.srdf"
    if not urdf.is_file() or not srdf.is_file():
        raise InvalidGoalError(f"robot description {urdf} (and .srdf) not found; "
                               "regenerate it with `python -m spatial_manip.devtools.write_urdf`")
    return urdf, srdf


class RobotModel:
    """Pinocchio model + collision GeometryModel of one URDF, with the SRDF pairs removed."""

    def __init__(self, urdf: str | Path, srdf: str | Path, T_tool0_tcp: np.ndarray | None = None):
        import pinocchio as pin

        self.urdf, self.srdf = Path(urdf), Path(srdf)
        self.model = pin.buildModelFromUrdf(str(self.urdf))
        if self.model.nq != 6:
            raise InvalidGoalError(f"{self.urdf} has {self.model.nq} joints; the planner expects a 6-joint arm")
        self.geom = pin.buildGeomFromUrdf(self.model, str(self.urdf), pin.COLLISION)
        self.geom.addAllCollisionPairs()
        pin.removeCollisionPairs(self.model, self.geom, str(self.srdf))
        self.tool0 = self.model.getFrameId("tool0")
        self.wrist3 = self.model.getJointId("wrist_3_joint")
        # flange in the wrist-3 joint frame: where attached bodies hang from
        self.M_joint6_tool0 = self.model.frames[self.tool0].placement.homogeneous.copy()
        self.T_tool0_tcp = np.eye(4) if T_tool0_tcp is None else np.asarray(T_tool0_tcp, float)
        self._turn_gripper_to_tcp()

    @property
    def link_names(self) -> list[str]:
        return [link_of(g) for g in self.geom.geometryObjects]

    def _turn_gripper_to_tcp(self) -> None:
        """The URDF's fingers close along tool0 y (the real cell's TCP); a TCP offset turned about
        the tool axis (the simulated 2F-85 is mounted at -90 deg) turns the gripper bodies too."""
        import pinocchio as pin

        R = self.T_tool0_tcp[:3, :3]
        if abs(R[2, 2] - 1.0) > 1e-6:
            raise InvalidGoalError("the TCP offset may only turn about the tool axis (rx = ry = 0); "
                                   f"got rotation {np.round(R, 4).tolist()}")
        yaw = math.atan2(R[1, 0], R[0, 0])
        if abs(yaw) < 1e-9:
            return
        turn = pin.SE3(pin.utils.rotate("z", yaw), np.zeros(3))
        M_tool0 = pin.SE3(self.M_joint6_tool0)
        for g in self.geom.geometryObjects:
            if g.name.startswith(GRIPPER_PREFIX):
                g.placement = M_tool0 * turn * M_tool0.inverse() * g.placement

    def fk_tool0(self, q: np.ndarray) -> np.ndarray:
        import pinocchio as pin

        data = self.model.createData()
        pin.framesForwardKinematics(self.model, data, np.asarray(q, float))
        return data.oMf[self.tool0].homogeneous.copy()

    def self_clearance(self, q) -> tuple[float, str, str]:
        """The smallest distance between two of the arm's own collision bodies at joints q (the
        SRDF's never-colliding pairs left out; negative: they overlap), and their two links."""
        import pinocchio as pin

        data, gdata = self.model.createData(), pin.GeometryData(self.geom)
        pin.computeDistances(self.model, data, self.geom, gdata, np.asarray(q, float))
        k = int(np.argmin([r.min_distance for r in gdata.distanceResults]))
        pair = self.geom.collisionPairs[k]
        return (float(gdata.distanceResults[k].min_distance), link_of(self.geom.geometryObjects[pair.first]),
                link_of(self.geom.geometryObjects[pair.second]))

    def points_on(self, pts: np.ndarray, q, margin_m: float, links=None) -> np.ndarray:
        """Which points lie on the arm at joints q: inside one of its collision bodies grown by
        margin_m (a camera in the cell sees the arm; those points must not block the arm's own
        moves). The margin covers depth noise and an octree's voxel rounding. `links`: only
        these links' bodies (default all)."""
        pts = np.asarray(pts, float).reshape(-1, 3)
        bodies, spheres = self._bodies(q, margin_m)
        if links is not None:
            mine = [link_of(g) in links for g, _ in bodies]
            bodies = [b for b, m in zip(bodies, mine) if m]
            spheres = [s for s, m in zip(spheres, mine) if m]
        if not bodies or not len(pts):
            return np.zeros(len(pts), bool)
        # only points inside the box around every body's bounding sphere can be on the arm: one
        # pass over a whole image instead of one per body (the arm covers a small part of a view)
        lo = np.min([c - r for c, r in spheres], axis=0)
        hi = np.max([c + r for c, r in spheres], axis=0)
        near = np.flatnonzero(np.all((pts >= lo) & (pts <= hi), axis=1))
        near_pts = pts[near]
        hit = np.zeros(len(pts), bool)
        for (g, M), (c, r) in zip(bodies, spheres):
            # and of those, only the ones in this body's sphere's box are tested exactly
            mine = np.flatnonzero(np.all(np.abs(near_pts - c) <= r, axis=1))
            local = (near_pts[mine] - M.translation) @ M.rotation       # the body's frame (cylinder axis = z)
            hit[near[mine]] |= _inside_grown(g.geometry, local, margin_m)
        return hit


    def bounding_spheres(self, q, margin_m: float) -> list[tuple[np.ndarray, float]]:
        """(centre, radius) in the base frame of a sphere around each collision body at joints q,
        grown by margin_m: nothing of the arm lies outside them (a camera's pixels that see none of
        them need no test, agent.without_arm)."""
        return self._bodies(q, margin_m)[1]

    def _bodies(self, q, margin_m: float):
        """[(geometry object, its placement)] at joints q, and their bounding spheres grown by margin_m."""
        import pinocchio as pin

        data, gdata = self.model.createData(), pin.GeometryData(self.geom)
        pin.updateGeometryPlacements(self.model, data, self.geom, gdata, np.asarray(q, float))
        bodies = list(zip(self.geom.geometryObjects, gdata.oMg))
        spheres = [(M.translation + M.rotation @ c, r + margin_m)
                   for (c, r), M in ((_bounding_sphere(g.geometry), M) for g, M in bodies)]
        return bodies, spheres


def _bounding_sphere(geometry) -> tuple[np.ndarray, float]:
    """The centre (body frame) and radius of a sphere holding a coal body (see _inside_grown)."""
    kind = type(geometry).__name__
    if kind == "Cylinder":
        return np.zeros(3), float(np.hypot(geometry.radius, geometry.halfLength))
    if kind == "Box":
        return np.zeros(3), float(np.linalg.norm(geometry.halfSide))
    if kind == "Sphere":
        return np.zeros(3), float(geometry.radius)
    geometry.computeLocalAABB()
    return np.asarray(geometry.aabb_center, float), float(geometry.aabb_radius)


def _inside_grown(geometry, local: np.ndarray, margin: float) -> np.ndarray:
    """Which body-frame points lie inside a coal Cylinder / Box / Sphere grown by margin (other
    shapes: inside their bounding sphere grown by margin)."""
    kind = type(geometry).__name__
    if kind == "Cylinder":
        radial = np.linalg.norm(local[:, :2], axis=1)
        return (radial <= geometry.radius + margin) & (np.abs(local[:, 2]) <= geometry.halfLength + margin)
    if kind == "Box":
        return np.all(np.abs(local) <= np.asarray(geometry.halfSide) + margin, axis=1)
    if kind == "Sphere":
        return np.linalg.norm(local, axis=1) <= geometry.radius + margin
    geometry.computeLocalAABB()
    centre = np.asarray(geometry.aabb_center)
    return np.linalg.norm(local - centre, axis=1) <= geometry.aabb_radius + margin


def link_of(geometry_object) -> str:
    """The URDF link of a geometry (Pinocchio names them "<link>_<index>")."""
    return geometry_object.name.rsplit("_", 1)[0]
