"""The grasp service's logic without ROS: crop the target from an RGB-D observation, propose
grasps in the camera frame, move them to the base frame and keep the reachable ones.

grasp_node is a thin adapter over `GraspService.propose`; every failure comes back as a
`GraspResult` with an error code and a message, never as an exception.

Filters, in order: workspace box and approach direction, IK at the grasp and pre-grasp, the
arm's links clear of the cloud, then (with a `MotionCheck`) a collision-free plan from the
arm's current joints to the pre-grasp and a collision-free straight approach.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.spatial import cKDTree

from spatial_manip.control.kinematics import DH_PRESETS
from spatial_manip.control.primitives import pre_grasp_poses
from spatial_manip.errors import CanceledError, ErrorCode, InvalidGoalError, SpatialManipError
from spatial_manip import transforms as tf
from spatial_manip.camera_model import backproject
from spatial_manip.geometry.pointcloud import depth_edge_pixels
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.grasping.base import ObjectBox
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.motion_check import TARGET_ID, MotionCheck, MotionReport
from spatial_manip.motion.batch_kinematics import ik_near_many
from spatial_manip.motion.robot import RobotModel, description_paths
from spatial_manip.scene import SceneObject


@dataclass(frozen=True, kw_only=True)
class ServiceConfig:
    # the box grasp points must lie in, base frame: the arm's safety workspace
    # (control.config.load_workspace), which the cell sets once; None (both) keeps every grasp point
    workspace_min_m: tuple | None = None
    workspace_max_m: tuple | None = None
    max_upward_approach: float = 0.2               # approach . z_base above this = from below
    crop_margin_m: float = 0.01                    # target box inflation
    scene_margin_m: float = 0.15                   # collision context kept around the target
    pixel_stride: int = 2                          # back-project every n-th pixel (speed)
    max_grasps: int = 10
    approach_distance_m: float = 0.10              # the pick's pre-grasp back-off: reachable at it or at a shorter
                                                   # stand-off (control.primitives.pre_grasp_poses)
    # the forearm's and wrists' collision bodies (the planner's arm model, urdf/, which holds the
    # simulator's links) at the grasp and pre-grasp must keep this clear of the scene cloud: a
    # low sideways grasp that the fingers fit can still put the wrist into the table. Needs
    # `kinematics`; None turns it off. (Capsules of 5 cm about the DH chain missed the wrist_2
    # housing, 7 cm out: a mug's side grasp put it on the table.)
    link_clearance_m: float | None = 0.01
    # the cell's fixtures (the scene's `support` boxes: pedestals, wedges, holders) as solid
    # obstacles for the fingers, sampled this finely: under a lying book the camera cannot see
    # whether the pedestal or air is where the lower finger goes. 0 turns it off.
    fixture_spacing_m: float = 0.01
    # the scene's other objects (a neighbour named from the library, an unnamed cluster) as solid
    # boxes too, on the same grid: the motion check refuses a finger in any scene box, and the
    # camera sees only an object's front. Against the cloud alone, all three edge pinches of the
    # demo's book (realistic, noise draw 2) had a finger at the pre-grasp in the ceramic jar's box,
    # and the motion check dropped every one (GRASP_FAILED)
    neighbour_boxes: bool = True
    # the configured table's top (the scene's `table` box, exact in the base frame) against the
    # depth's table around the target: a gap past table_gap_min_m is the camera pose's error along
    # the vertical, and the cloud is moved by it. A calibration draw put the demo's cloud 8.6 mm
    # low (realistic, noise draw 7): the lying book's edge pinch, placed on the seen book, swung
    # the lower knuckle to 2 mm over the real table and the motion check refused every grasp
    table_gap_min_m: float = 0.002
    table_gap_max_m: float = 0.03
    reference_q: tuple | None = None               # joints the arm starts from (its home/ready)

    def __post_init__(self):
        if (self.workspace_min_m is None) != (self.workspace_max_m is None):
            raise ValueError(f"workspace box needs both its mins and maxes or neither, got {self.workspace_min_m} "
                             f"{self.workspace_max_m}")
        if self.workspace_min_m is not None:
            lo, hi = np.asarray(self.workspace_min_m, float), np.asarray(self.workspace_max_m, float)
            if lo.shape != (3,) or hi.shape != (3,) or np.any(lo >= hi):
                raise ValueError(f"workspace box must be 3 mins below 3 maxes, got {self.workspace_min_m} "
                                 f"{self.workspace_max_m}")
        if self.pixel_stride < 1 or self.max_grasps < 1:
            raise ValueError("pixel_stride and max_grasps must be >= 1")
        if not (np.isfinite(self.fixture_spacing_m) and (self.fixture_spacing_m == 0 or self.fixture_spacing_m >= 0.002)):
            raise ValueError(f"fixture_spacing_m must be 0 (off) or at least 0.002 m, got {self.fixture_spacing_m}")
        if self.link_clearance_m is not None and not (np.isfinite(self.link_clearance_m) and self.link_clearance_m >= 0):
            raise ValueError(f"link_clearance_m must be >= 0 metres (None: no link check), got {self.link_clearance_m}")
        if not 0 <= self.table_gap_min_m <= self.table_gap_max_m < 0.2:
            raise ValueError(f"table_gap_min_m and table_gap_max_m must satisfy 0 <= min <= max < 0.2 m, got "
                             f"{self.table_gap_min_m}, {self.table_gap_max_m}")
        if self.reference_q is not None and (np.shape(self.reference_q) != (6,)
                                             or not np.all(np.isfinite(self.reference_q))):
            raise ValueError(f"reference_q must be 6 finite joint angles (rad), got {self.reference_q}")


@dataclass
class TargetBox:
    center: np.ndarray
    size: np.ndarray
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    object_id: str = ""


@dataclass
class GraspResult:
    grasps: GraspGroup                      # base frame, ranked, reachable
    error_code: str = ""
    message: str = ""
    latency_s: float = 0.0
    object_name: str = ""
    motion: MotionReport | None = None      # the motion stage's report (None: not configured)

    @property
    def success(self) -> bool:
        return not self.error_code


class GraspService:
    def __init__(self, proposer, gripper: GripperGeometry, config: ServiceConfig | None = None, kinematics=None,
                 motion: MotionCheck | None = None):
        """`kinematics`: the arm's URKinematics (with its TCP offset); when given, a grasp is kept
        only if the arm has an IK solution within joint limits at it and at its pre-grasp.
        `motion`: when given (and enabled), a grasp is kept only if its pre-grasp is reached by a
        collision-free plan from the request's current joints and its approach is clear."""
        self.proposer, self.gripper, self.config = proposer, gripper, config or ServiceConfig()
        self.kinematics, self.motion = kinematics, motion
        # asked between the steps of a request and between the motion check's grasps: True stops the
        # request (CANCELED). grasp_node's service proposing ahead stops a job a new look made useless
        self.should_stop: Callable[[], bool] = lambda: False
        if hasattr(proposer, "checkpoint"):     # a proposer that can stop between its steps (antipodal)
            proposer.checkpoint = self._stop_if_asked

    # ---- entry points -------------------------------------------------------------------
    def propose_for_box(self, depth_m, intrinsics, T_base_cam, box: TargetBox, max_grasps: int = 0, *,
                        scene=None, q_now=None) -> GraspResult:
        """`scene` (core Scene, base frame) and `q_now` (the arm's current joints) feed the motion
        check; without q_now it is skipped with a note in the message."""
        t0 = time.perf_counter()
        try:
            box = self._check_box(box)
            cfg = self.config
            s = cfg.pixel_stride
            depth = np.asarray(depth_m, np.float32)
            # a depth edge's flying pixels (returns strewn between an object and what is behind it)
            # are neither target nor obstacle: beside a bottle they stood where the fingers go
            depth = np.where(depth_edge_pixels(depth), np.float32(0.0), depth)
            if s > 1:
                depth = depth[::s, ::s]
                intrinsics = intrinsics.scaled(depth.shape[1], depth.shape[0])
            pts_cam, _ = backproject(depth, intrinsics)
            if len(pts_cam) == 0:
                raise SpatialManipError("the depth image has no valid pixel", ErrorCode.NO_OBSERVATION)
            pts_base = tf.apply(T_base_cam, pts_cam)
            # the cloud in the box's axes once (points_in_box's arithmetic): each crop below compares it
            local = np.abs((pts_base - box.center) @ box.rotation)
            half = box.size / 2
            lift = self._table_gap_m(pts_base, scene, box, local)
            if lift:
                T_base_cam = np.asarray(T_base_cam, float).copy()
                T_base_cam[2, 3] += lift
                pts_base = pts_base + [0.0, 0.0, lift]
                box = TargetBox(box.center + [0.0, 0.0, lift], box.size, box.rotation, box.object_id)
                # the moved box's crops, exactly, on the points it can reach (the lift is at most table_gap_max_m)
                near = np.all(local <= half + cfg.scene_margin_m + abs(lift) + 1e-6, axis=1)
                rows = np.flatnonzero(near)
                target = np.zeros(len(pts_base), bool)
                near[rows] = points_in_box(pts_base[rows], box, cfg.scene_margin_m)
                target[rows] = points_in_box(pts_base[rows], box, cfg.crop_margin_m)
            else:
                near = np.all(local <= half + cfg.scene_margin_m, axis=1)
                target = np.all(local <= half + cfg.crop_margin_m, axis=1)
            if target.sum() < 20:
                raise SpatialManipError(
                    f"only {int(target.sum())} depth points inside the target box of {box.object_id or 'the request'} "
                    f"(centre {np.round(box.center, 3).tolist()}): is it in view, and is the extrinsics right?",
                    ErrorCode.TARGET_NOT_FOUND)
            context = _Context(scene, _as_object(box), q_now)
            fixtures = tf.apply(tf.invert(np.asarray(T_base_cam, float)), self._fixture_points(scene, box))
            return self._propose(pts_cam[near], target[near], T_base_cam, box.object_id, max_grasps, t0,
                                 scene_base=pts_base, context=context, box_cam=_in_camera(box, T_base_cam),
                                 fixtures_cam=fixtures)
        except SpatialManipError as e:
            return GraspResult(GraspGroup(frame_id="base"), e.code.value, e.message, time.perf_counter() - t0)
        except Exception as e:  # a bug: reported, never raised into the node
            return GraspResult(GraspGroup(frame_id="base"), ErrorCode.INTERNAL.value,
                               f"{type(e).__name__}: {e}", time.perf_counter() - t0)

    def propose_for_cloud(self, points_base, T_base_cam, max_grasps: int = 0, *, scene=None,
                          q_now=None) -> GraspResult:
        """The request's own cloud (base frame) is both the target and the collision scene; for
        the motion check the target is the cloud's bounding box and the world the scene's boxes."""
        t0 = time.perf_counter()
        try:
            p = np.asarray(points_base, float)
            if p.ndim != 2 or p.shape[1] != 3:
                raise InvalidGoalError(f"cloud must be (N, 3) points, got {p.shape}")
            pts_cam = tf.apply(tf.invert(T_base_cam), p)
            context = _Context(scene, _cloud_object(p), q_now, cloud=False)
            return self._propose(pts_cam, None, T_base_cam, "", max_grasps, t0, scene_base=p, context=context)
        except SpatialManipError as e:
            return GraspResult(GraspGroup(frame_id="base"), e.code.value, e.message, time.perf_counter() - t0)
        except Exception as e:
            return GraspResult(GraspGroup(frame_id="base"), ErrorCode.INTERNAL.value,
                               f"{type(e).__name__}: {e}", time.perf_counter() - t0)

    # ---- steps ----------------------------------------------------------------------------
    @staticmethod
    def _check_box(box: TargetBox) -> TargetBox:
        c, s, R = (np.asarray(v, float) for v in (box.center, box.size, box.rotation))
        if c.shape != (3,) or s.shape != (3,) or not np.all(np.isfinite(c)) or not np.all(s > 0):
            raise InvalidGoalError(f"target box needs a finite centre and positive size, got {c.tolist()} {s.tolist()}")
        return TargetBox(c, s, R.reshape(3, 3), box.object_id)

    def _propose(self, pts_cam, target_mask, T_base_cam, name, max_grasps, t0, scene_base=None,
                 context: "_Context | None" = None, box_cam: ObjectBox | None = None,
                 fixtures_cam: np.ndarray | None = None) -> GraspResult:
        cfg = self.config
        up_cam = np.asarray(T_base_cam)[:3, :3].T @ np.array([0.0, 0.0, 1.0])
        kw = {"up": up_cam, "target_box": box_cam, "obstacles": fixtures_cam}
        if target_mask is not None:
            kw["target_mask"] = target_mask
        self._stop_if_asked()
        gg, _ = self.proposer.get_grasp(pts_cam, None, **kw)
        self._stop_if_asked()
        base = gg.transform(T_base_cam, frame_id="base")
        n_all = len(base)
        inside = self._in_workspace(base.translations)
        not_below = base.approaches[:, 2] <= cfg.max_upward_approach
        base = base[inside & not_below].sort_by_score()
        k = max_grasps if max_grasps > 0 else cfg.max_grasps
        reach = self._arm_reach(base, scene_base)
        report = None
        if self.motion is not None and self.motion.config.enabled:
            # the motion stage picks the best k of every grasp the arm reaches, and asks for each one's
            # links' clearance as it comes to it: for all of them first, the links' test took about a
            # third of a request whose best grasp was all the pick asked for (issue 42)
            self._stop_if_asked()
            base, report = self._motion_stage(base, reach, k, context, scene_base)
        else:
            base = base[reach.first_clear(k, self._stop_if_asked)]
        n_no_ik, n_links = reach.no_ik, reach.refused
        dt = time.perf_counter() - t0
        note = f"; {report.summary()}" if report is not None else ""
        if len(base) == 0:
            why = gg.note if n_all == 0 else (f"{n_all} grasps found but none reachable: {int((~inside).sum())} outside "
                                              f"the workspace box, {int((~not_below).sum())} approach from below, "
                                              f"{n_no_ik} without an arm IK solution, {n_links} with the arm's links "
                                              "in the scene")
            return GraspResult(base, ErrorCode.GRASP_FAILED.value, f"no valid grasp: {why}{note}", dt, name, report)
        return GraspResult(base, "", f"{len(base)} grasps (of {n_all} proposed) in {dt * 1000:.0f} ms{note}", dt,
                           name, report)

    def _in_workspace(self, points: np.ndarray) -> np.ndarray:
        """Which of `points` (base frame) lie in the configured workspace box (all, with none set)."""
        cfg = self.config
        if cfg.workspace_min_m is None:
            return np.ones(len(points), bool)
        lo, hi = np.asarray(cfg.workspace_min_m, float), np.asarray(cfg.workspace_max_m, float)
        return np.all((points >= lo) & (points <= hi), axis=1)

    def _table_gap_m(self, pts_base: np.ndarray, scene, box: TargetBox, local: np.ndarray | None = None) -> float:
        """How far up the depth's table must move to lie on the scene's table top (a level box,
        category `table`) within scene_margin_m of the target: the median height of the returns
        within table_gap_max_m of that top; 0 below table_gap_min_m, with no level table, or too
        few returns. `local`: |the points in the box's axes|, when the caller has them."""
        cfg = self.config
        table = next((o for o in (getattr(scene, "objects", None) or []) if o.category == "table"), None)
        if table is None or abs(np.asarray(table.rotation, float)[2, 2]) < 0.999:
            return 0.0
        top = float(np.asarray(table.corners())[:, 2].max())
        if local is None:
            local = np.abs((np.asarray(pts_base, float) - box.center) @ box.rotation)
        half = np.asarray(box.size, float) / 2
        near = np.all(local <= half + cfg.scene_margin_m, axis=1) & ~np.all(local <= half + cfg.crop_margin_m, axis=1)
        z = pts_base[near, 2]
        z = z[np.abs(z - top) <= cfg.table_gap_max_m]
        if len(z) < 200:
            return 0.0
        gap = top - float(np.median(z))
        return gap if cfg.table_gap_min_m <= abs(gap) <= cfg.table_gap_max_m else 0.0

    def _fixture_points(self, scene, box: TargetBox) -> np.ndarray:
        """(N, 3) base-frame points filling the scene's fixtures (category `support`, each by its
        parts when it has them) and, with neighbour_boxes, its other objects but the table and
        what is held, near the target, on a fixture_spacing_m grid, outside the target's own box."""
        step = self.config.fixture_spacing_m
        if scene is None or step <= 0:
            return np.zeros((0, 3))
        reach = np.abs(box.rotation) @ (box.size / 2) + self.config.scene_margin_m
        lo, hi = box.center - reach, box.center + reach
        filled = []
        for o in scene.objects:
            if o.id == box.object_id or not self._solid(o, box):
                continue
            # a fixture by its parts: a wedge's own box is their level hull, and filled whole it stood
            # beside the free top of the book leaning on it, where the pinches stopped short of their depth
            for c, size, R in o.solid_boxes():
                ext = np.abs(R) @ (size / 2)
                if np.any(c + ext < lo) or np.any(c - ext > hi):
                    continue
                axes = [np.linspace(-h, h, max(2, int(np.ceil(2 * h / step)) + 1)) for h in size / 2]
                # a box (a part, or an object without parts) whose whole grid, meshed before the crop
                # to the target's surroundings, passes 200,000 points (0.2 m^3 at 1 cm) is not filled
                # at all: the proposer keeps the fingers out of it by the faces the depth cloud holds
                # alone (the motion check's world still has the box)
                if np.prod([len(a) for a in axes]) > 200_000:
                    continue
                grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3) @ R.T + c
                keep = np.all((grid >= lo) & (grid <= hi), axis=1) & ~points_in_box(grid, box)
                filled.append(grid[keep])
        return np.concatenate(filled) if filled else np.zeros((0, 3))

    def _solid(self, o, box: TargetBox) -> bool:
        """Whether scene object `o` is an obstacle the fingers must keep out of: a fixture, or a
        neighbour (not the table, not held, not the target under another name: its centre in
        the target's box)."""
        if o.category == "support":
            return True
        if not self.config.neighbour_boxes or o.category == "table" or getattr(o, "held", False):
            return False
        return not bool(points_in_box(np.asarray(o.center, float)[None], box, 0.01)[0])

    def _stop_if_asked(self) -> None:
        if self.should_stop():
            raise CanceledError("stopped: the request's answer is no longer wanted (a newer look, or the arm moved)")

    def _motion_stage(self, graspable: GraspGroup, reach: "_ArmReach", k: int, context,
                      scene_base) -> tuple[GraspGroup, MotionReport]:
        """The best k of `graspable` that the arm reaches (`reach`: IK, and its links clear at the
        grasp, asked as each comes up) whose pre-grasp is planned and approach clear; skipped (the
        best k the arm reaches kept, the report saying why) when the arm's joints are unknown or
        not a safe start."""
        def first_clear() -> GraspGroup:
            return graspable[reach.first_clear(k, self._stop_if_asked)]

        ranked = graspable[reach.feasible]

        if context is None or context.q_now is None:
            return first_clear(), MotionReport(skipped="the arm's current joints are unknown (no joint state yet)")
        if len(ranked) == 0:
            return ranked, MotionReport()
        t0 = time.perf_counter()
        q_now = np.asarray(context.q_now, float)
        cloud = scene_base if context.cloud else None
        world, scene = self.motion.build_world(context.scene, context.target, q_now, cloud)
        self._stop_if_asked()
        q_now = self.motion.cleared_start(q_now, world)
        why = self.motion.start_problem(q_now, world)
        world_s = time.perf_counter() - t0
        if why:
            return first_clear(), MotionReport(world=world, world_s=world_s,
                                               skipped=f"the arm's current joints are not a safe start: {why}")
        tcp = self.gripper.tcp_poses(ranked.matrices(), ranked.depths)
        pre = [self._pre_grasps(T) for T in tcp]

        def check(w) -> MotionReport:
            return self.motion.filter(q_now, tcp, pre, w, scene, context.target.id, k, stop=self._stop_if_asked,
                                      admit=reach.clear_at)
        # first around the neighbours' hidden sides (motion.world.HIDDEN_DEPTH_MAX_M: the camera saw
        # their fronts only) and a margin round them (NEIGHBOUR_MARGIN_M: perception's error, more where
        # it named one wrongly), then, when fewer than k grasps clear those, around the boxes as measured
        cautious = world.with_hidden_sides(scene, keep=[context.target.id])
        first = None
        if len(cautious.obstacles) > len(world.obstacles) and self.motion.start_problem(q_now, cautious) is None:
            first = check(cautious)
        report = first if first is not None and len(first.kept) >= k else check(world)
        if first is not None and report is not first:
            report = _cautious_first(first, report, k)
        report.world_s = world_s
        return ranked[np.asarray(report.kept, int)], report

    def _pre_grasps(self, T_tcp) -> list[np.ndarray]:
        """A grasp's pre-grasps, longest stand-off first, as the arm's pick tries them."""
        return pre_grasp_poses(T_tcp, self.config.approach_distance_m)

    def _arm_reach(self, ranked: GraspGroup, scene_base=None) -> "_ArmReach":
        """Which of `ranked` the arm reaches: an IK solution at the TCP pose and at one of its
        pre-grasps (`_pre_grasps`), for every grasp in one pass, each nearest the reference joints;
        and, asked one grasp at a time (`_ArmReach.clear_at`), its links clear of the scene there.
        With no kinematics, every grasp."""
        if self.kinematics is None or len(ranked) == 0:
            return _ArmReach(np.arange(len(ranked)), 0, lambda i: True)
        tree = None
        if scene_base is not None and self.config.link_clearance_m is not None:
            pts = np.asarray(scene_base, float)
            tree = cKDTree(pts[np.all(np.isfinite(pts), axis=1)])
        tcp = self.gripper.tcp_poses(ranked.matrices(), ranked.depths)
        poses = [[T, *self._pre_grasps(T)] for T in tcp]
        q_all = ik_near_many(self.kinematics, [P for row in poses for P in row],
                             self.config.reference_q).reshape(len(tcp), len(poses[0]), 6)
        pres = [[j for j in range(1, len(qs)) if not np.isnan(qs[j]).any()] for qs in q_all]
        feasible = np.array([i for i, qs in enumerate(q_all) if not np.isnan(qs[0]).any() and pres[i]], int)

        def clear(i: int) -> bool:
            self._stop_if_asked()
            qs = q_all[i]
            return tree is None or self._links_clear_at(qs, pres[i], tree) or \
                self._some_configuration_clear([poses[i][0]] + [poses[i][j] for j in pres[i]], tree)

        return _ArmReach(feasible, len(ranked) - len(feasible), lambda j: clear(int(feasible[j])))

    def _links_clear_at(self, qs, pres: list, tree) -> bool:
        """Whether the links are clear at the grasp's configuration `qs[0]` and at one of the
        pre-grasps' `qs[j]`, j in `pres`."""
        return self._links_clear(qs[0], tree) and any(self._links_clear(qs[j], tree) for j in pres)

    def _some_configuration_clear(self, poses, tree) -> bool:
        """Whether the grasp (`poses[0]`) and one of its pre-grasps (the rest) each have an arm
        configuration whose links are clear. The configuration nearest the reference joints is
        tried first (the caller); when a neighbour stands in its forearm's way (a standing book
        beside a book lying on a pedestal), another elbow or wrist branch may pass over it, and
        the motion check, which tries every branch of the pre-grasp, decides which the arm takes."""
        def clear(T):
            return any(self._links_clear(q, tree) for q in self.kinematics.ik_all(T, self.config.reference_q))
        return clear(poses[0]) and any(clear(T) for T in poses[1:])

    def _links_clear(self, q, tree) -> bool:
        """No scene point within link_clearance_m of the forearm's and wrists' collision bodies.
        The gripper is the proposer's collision check; the upper arm is left out because it stays
        near the shoulder, which the camera may see at rest and would count as an obstacle."""
        arm, clearance = _arm_model(self.kinematics), self.config.link_clearance_m
        # only the points in the checked bodies' bounding spheres are tested exactly (a few of the frame's)
        spheres = [s for s, link in zip(arm.bounding_spheres(q, clearance), arm.link_names) if link in CHECKED_LINKS]
        near = tree.query_ball_point(np.array([c for c, _ in spheres]), np.array([r for _, r in spheres]))
        idx = np.unique(np.concatenate([np.asarray(n, int) for n in near]))
        return len(idx) == 0 or not arm.points_on(tree.data[idx], q, clearance, links=CHECKED_LINKS).any()


CHECKED_LINKS = ("forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link")


@functools.lru_cache(maxsize=4)
def _arm_model_of(model: str):
    return RobotModel(*description_paths(model))


def _arm_model(kinematics):
    """The planner's collision model of the arm whose DH table `kinematics` has."""
    for model, dh in DH_PRESETS.items():
        if all(np.isclose(getattr(kinematics, k), v) for k, v in dh.items()):
            return _arm_model_of(model)
    raise ValueError(f"no arm model ({', '.join(DH_PRESETS)}) has this arm's DH table; the link check needs one")


class _ArmReach:
    """A request's grasps the arm reaches (`feasible`: their ranks, best first; `no_ik`: how many had
    no IK solution), and whether the j-th of them has its links clear (`clear_at(j)`, asked lazily
    and counted: `refused`)."""

    def __init__(self, feasible: np.ndarray, no_ik: int, clear: Callable[[int], bool]):
        self.feasible, self.no_ik, self.refused = feasible, no_ik, 0
        self._clear = clear
        self._known: dict[int, bool] = {}

    def clear_at(self, j: int) -> bool:
        if j not in self._known:
            self._known[j] = self._clear(j)
            self.refused += not self._known[j]
        return self._known[j]

    def first_clear(self, k: int, stop: Callable[[], None] = lambda: None) -> np.ndarray:
        """The ranks of the best `k` feasible grasps whose links are clear (checked best first, so a
        long list costs the test only until k are found)."""
        keep = []
        for j in range(len(self.feasible)):
            stop()
            if self.clear_at(j):
                keep.append(int(self.feasible[j]))
                if len(keep) == k:
                    break
        return np.asarray(keep, int)


@dataclass
class _Context:
    """What the motion check needs beyond the grasps: the scene, the target, the arm's joints,
    and whether the request's depth cloud is the collision scene (not for a cloud request,
    whose cloud is the target itself)."""

    scene: object
    target: SceneObject
    q_now: object
    cloud: bool = True


def _in_camera(box: TargetBox, T_base_cam) -> ObjectBox:
    """The target box (base frame) in the camera frame, where proposers work."""
    T_cam_base = tf.invert(np.asarray(T_base_cam, float))
    return ObjectBox(tf.apply(T_cam_base, box.center[None])[0], np.asarray(box.size, float),
                     T_cam_base[:3, :3] @ box.rotation)


def _as_object(box: TargetBox) -> SceneObject:
    return SceneObject(box.object_id or TARGET_ID, "target", "target", box.center, box.size, box.rotation)


def _cloud_object(points: np.ndarray) -> SceneObject:
    """A request cloud's axis-aligned bounding box, as the target."""
    p = points[np.all(np.isfinite(points), axis=1)]
    if len(p) == 0:
        raise InvalidGoalError("the request cloud has no finite point")
    lo, hi = p.min(0), p.max(0)
    return SceneObject(TARGET_ID, "target", "target", (lo + hi) / 2, np.maximum(hi - lo, 1e-3))


def _cautious_first(cautious: MotionReport, measured: MotionReport, k: int) -> MotionReport:
    """The grasps kept clear of the neighbours' hidden sides first, then the best of those the
    measured boxes allow, up to k: a prior never costs a grasp the measured world has (a
    pick-and-place's set-down filter or a retry may need more than the cautious few)."""
    extra = [i for i in measured.kept if i not in cautious.kept][:k - len(cautious.kept)]
    out = measured
    out.kept = [*cautious.kept, *extra]
    out.paths = {**{i: measured.paths[i] for i in extra}, **cautious.paths}
    out.approaches = {**{i: measured.approaches[i] for i in extra}, **cautious.approaches}
    out.elapsed_s += cautious.elapsed_s
    out.out_of_time = out.out_of_time or cautious.out_of_time
    ran_out = " (stopped at the time budget)" if cautious.out_of_time else ""
    out.hidden_sides = (f"{len(cautious.kept)} of {cautious.checked} checked cleared the neighbours' hidden "
                        f"sides{ran_out}" + (f" (first refused: {cautious.drops[0]})" if cautious.drops else ""))
    return out
