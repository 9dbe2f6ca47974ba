"""The cloud the arm avoids is a map, not raw pixels: one depth image turned into the supported
obstacle points a motion plans around, the way real stacks filter a depth camera before
collision checking (MoveIt's depth-image octomap updater, nvblox).

A depth camera's raw points include returns that are no surface: flying pixels at depth edges
(an L515 return that mixes the foreground and the background lands on the ray between them),
range noise that grows with distance, and the robot's own body. Taken as obstacles they close
every move that passes near an edge (issue 36: with the L515 noise model on, every place failed
on "wrist_1_link touches cloud"). Here, in order:
0. a 3x3 median on the depth image (librealsense's spatial filter does the like): it keeps about
   0.4 of the range noise and settles lone flying pixels onto a side of their edge;
1. depth-edge test: a pixel whose 3x3 neighbourhood spans more depth than the sensor's noise
   at that range explains is a mixed return;
2. ray-angle test: a pixel whose local surface is seen nearly edge-on (flying pixels line up
   along their rays) is dropped;
3. the robot's body (and what it holds) at the image's joint state: `exclude` (the caller's
   mask, e.g. `RobotModel.points_on`);
4. support: a voxel is an obstacle only when it holds enough returns, and has occupied
   neighbours (radius outlier removal on the voxels);
and a clearance: the sensor's range error left after the median (3 sigma of it) at the far end
of what is kept, which the planner keeps from these points on top of its own padding, scaled up
when the frame shows more noise than the sensor model (its returns' scatter about the median,
`seen_noise_scale`): harsh sensing's doubled noise and registration error put a shelf board's
returns 2.2 cm above the board, past the 2 cm within which the arm's plans take cloud points for
the modelled box they lie on (motion.arm_plans), and every book's set-down there met its own board
(place-68 harsh: four places MOTION_FAILED on points at z -0.07, the board's top at -0.092).
5. the cell's fixtures (the shelf's boards and panels, the table: configured, not perceived),
   when given: their returns are not clutter, but the depth does not show them where they are
   configured. A depth image registered a few pixels off its colour (and the extrinsics' 0.1 deg)
   turns the whole cloud about the camera: 4 px lifted a shelf board 2.5 m away by 1.6 cm, its
   returns lay 1.6-2.1 cm above the board, and the voxels past the 2 cm within which the arm's
   plans take points for the box they lie on were obstacles in the slot, 1-13 of them, which
   closed every set-down there (books place 76-78: 5 of 7 failures, MOTION_FAILED, the book still
   held; the nearest arm configuration's refusal named the robot's stand, the others' the cloud).
   The frame's turn is measured, as a real cell registers its cloud to the cell's model: the
   small rotation about the camera that best lays the map's points near the fixtures' faces onto
   them (robust point-to-plane, geometry.registration); the points the fixtures, so registered,
   explain are dropped (`dropped["fixture"]`, in voxels). The rest stay where the depth shows
   them, as the perceived objects they are checked against were fitted to the same depth.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import ndimage
from scipy.spatial.transform import Rotation

from spatial_manip.geometry import pointcloud as pc
from spatial_manip.geometry.registration import RegistrationConfig, fixture_boxes, fixture_registration
from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.motion.world import CLOUD_EXPLAINED_M, OBSTACLE_RANGE_M
from spatial_manip.transforms import apply


MEDIAN_NOISE_LEFT = 0.42   # a median of 9 Gaussian samples has ~1.25/3 of one sample's sigma
NEAREST_RETURN_M = 0.1     # nearer is no depth camera's return (the agent marks the arm's pixels 1 cm: agent.without_arm)
RESIDUAL_MAD_SIGMA = 0.867  # a Gaussian sample minus its 3x3 median: the robust sigma (1.4826 MAD) of that, in sigmas


@dataclass(frozen=True, kw_only=True)
class ObstacleMapConfig:
    voxel_m: float = 0.02              # one obstacle point per voxel of this size
    median_px: int = 3                 # depth median window (1: none)
    reach_m: float = OBSTACLE_RANGE_M  # farther points cannot touch the arm or what it carries
    edge_min_m: float = 0.02           # a 3x3 depth span above max(this, edge_sigmas * sigma(z)) is an edge
    edge_sigmas: float = 8.0
    max_ray_angle_deg: float = 80.0    # surfaces seen more edge-on than this are mixed returns
    min_points_per_voxel: int = 4      # a supported voxel holds at least this many returns ...
    neighbour_radius_voxels: float = 2.0
    min_neighbours: int = 2            # ... and has this many occupied voxels within the radius
    clearance_sigmas: float = 3.0      # clearance = this many sigmas of the noise left after the median
    clearance_quantile: float = 0.9    # ... at this quantile of the kept voxels' range
    # fixture_registration: points this close to a fixture's face measure how the frame is turned
    # (shrinking to 0.4 of it over the iterations), by at most max_turn_deg (a misregistration of
    # 10 px and the extrinsics' 0.3 deg, harsh, turn it 1.2 deg; farther, the fixtures' model is off,
    # not the frame), from at least min_fixture_points points
    fixture_band_m: float = 0.05
    max_turn_deg: float = 2.0
    min_fixture_points: int = 100

    def __post_init__(self):
        for name in ("voxel_m", "reach_m", "edge_min_m", "neighbour_radius_voxels"):
            if not getattr(self, name) > 0:
                raise ValueError(f"obstacle map: {name} must be > 0, got {getattr(self, name)}")
        if self.median_px < 1 or self.median_px % 2 == 0:
            raise ValueError(f"obstacle map: median_px is an odd window >= 1, got {self.median_px}")
        if not 0 < self.max_ray_angle_deg <= 90:
            raise ValueError(f"obstacle map: max_ray_angle_deg is in (0, 90], got {self.max_ray_angle_deg}")


@dataclass(frozen=True)
class ObstacleMap:
    points: np.ndarray        # (n, 3) base frame, one per supported voxel (its centroid)
    voxel_m: float
    clearance_m: float        # keep this far from the points, for the sensor's error at their range
    dropped: dict             # why raw points were left out: {"edge": n, "ray_angle": n, ...; "fixture": voxels}
    turn_deg: float = 0.0     # how far the frame was found turned against the fixtures (fixture_registration)

    def as_extra(self) -> dict:
        """The form a Scene's extra["cloud"] carries to the arm server."""
        return {"voxel_m": self.voxel_m, "clearance_m": round(self.clearance_m, 4),
                "points": np.round(self.points, 3).tolist()}


def raw_points(depth_m: np.ndarray, intrinsics: CameraIntrinsics, T_base_cam: np.ndarray,
               reach_m: float = OBSTACLE_RANGE_M) -> np.ndarray:
    """Every valid pixel as a base-frame point within reach (no filtering): the old cloud."""
    pts, _ = backproject(depth_m, intrinsics)
    pts = apply(T_base_cam, pts)
    return pts[np.linalg.norm(pts, axis=1) < reach_m]


def build_obstacle_map(depth_m: np.ndarray, intrinsics: CameraIntrinsics, T_base_cam: np.ndarray, *,
                       exclude: Callable[[np.ndarray], np.ndarray] | None = None, fixtures: Sequence = (),
                       register: bool = True, config: ObstacleMapConfig = ObstacleMapConfig()) -> ObstacleMap:
    """The supported obstacle points of one depth image (metres, 0 = no return). `exclude`
    maps base-frame points to a mask of those to leave out (the robot and its load); the points
    of `fixtures` (scene objects: those of FIXTURE_CATEGORIES count), registered to them, are left
    out too (`without_fixtures`; `register=False`: `T_base_cam` is registered already,
    geometry.registration.Registration.apply)."""
    depth = raw = np.asarray(depth_m, np.float32)
    if config.median_px > 1:
        depth = ndimage.median_filter(depth, config.median_px, mode="nearest")
    edge = depth_edges(depth, config)
    scale = seen_noise_scale(raw, depth, edge) if config.median_px == 3 else 1.0
    grazing = grazing_pixels(depth, intrinsics, config.max_ray_angle_deg) & ~edge
    keep = ~(edge | grazing)
    pts, uv = backproject(depth, intrinsics)
    ok = keep[uv[:, 1], uv[:, 0]]
    dropped = {"edge": int(np.count_nonzero(edge[uv[:, 1], uv[:, 0]])),
               "ray_angle": int(np.count_nonzero(grazing[uv[:, 1], uv[:, 0]]))}
    pts = apply(T_base_cam, pts[ok])
    ranges = np.linalg.norm(pts - np.asarray(T_base_cam, float)[:3, 3], axis=1)
    near = np.linalg.norm(pts, axis=1) < config.reach_m
    pts, ranges = pts[near], ranges[near]
    if exclude is not None and len(pts):
        mine = exclude(pts)
        dropped["robot"] = int(np.count_nonzero(mine))
        pts, ranges = pts[~mine], ranges[~mine]
    centres, voxel_range, dropped["unsupported"] = supported_voxels(pts, ranges, config)
    far = float(np.quantile(voxel_range, config.clearance_quantile)) if len(centres) else 0.0
    left = MEDIAN_NOISE_LEFT if config.median_px > 1 else 1.0
    clearance = float(pc.range_tolerance_m(far, sigmas=config.clearance_sigmas * left * max(1.0, scale))) \
        if len(centres) else 0.0
    turn = 0.0
    boxes = fixture_boxes(fixtures)
    if len(boxes[0]) and len(centres):
        on, turn = without_fixtures(centres, np.asarray(T_base_cam, float)[:3, 3], boxes,
                                    max(CLOUD_EXPLAINED_M, clearance), config, register)
        dropped["fixture"], centres = int(np.count_nonzero(on)), centres[~on]
    return ObstacleMap(centres, config.voxel_m, clearance, dropped, turn)


def without_fixtures(points: np.ndarray, camera_m, boxes, margin_m: float,
                     config: ObstacleMapConfig = ObstacleMapConfig(), register: bool = True) -> tuple[np.ndarray, float]:
    """(which of `points` the fixture `boxes` explain, how far the frame is turned, degrees): the
    points turned about the camera by `fixture_registration` (with `register`; a frame already
    registered is not measured again) lying within `margin_m` of a box."""
    camera = np.asarray(camera_m, float).reshape(3)
    turn = np.eye(3)
    if register:
        turn = fixture_registration(points, camera, boxes, RegistrationConfig(
            band_m=config.fixture_band_m, max_turn_deg=config.max_turn_deg, min_points=config.min_fixture_points)).turn
    moved = camera + (np.asarray(points, float) - camera) @ turn.T
    on = np.zeros(len(moved), bool)
    for c, R, h in zip(*boxes):
        on |= np.all(np.abs((moved - c) @ R) <= h + margin_m, axis=1)
    return on, float(np.degrees(Rotation.from_matrix(turn).magnitude()))


def seen_noise_scale(raw: np.ndarray, median: np.ndarray, edge: np.ndarray) -> float:
    """How many times the sensor model's range noise this frame shows: the robust sigma of each
    return's difference from the 3x3 median `median` of `raw`, in model sigmas at its range, over
    the returns off depth edges whose whole neighbourhood returned (a plane's slope cancels in
    the median), over what pure model noise gives (RESIDUAL_MAD_SIGMA). About 1 on a realistic
    L515 frame, 1.8 on a harsh one, 0 on a clean render; 1 when too few returns tell. Pixels
    nearer than NEAREST_RETURN_M (the arm's, marked) are no returns: their constant depth
    counted as noiseless diluted a harsh frame's 1.8 to 1.4."""
    raw, median = np.asarray(raw, float), np.asarray(median, float)
    returned = raw > NEAREST_RETURN_M
    ok = returned & ~edge & ndimage.minimum_filter(returned, 3, mode="nearest")
    if np.count_nonzero(ok) < 1000:
        return 1.0
    res = ((raw - median) / pc.SENSOR.sigma_m(median))[ok]
    return float(1.4826 * np.median(np.abs(res - np.median(res))) / RESIDUAL_MAD_SIGMA)


def depth_edges(depth: np.ndarray, config: ObstacleMapConfig) -> np.ndarray:
    """Pixels whose 3x3 neighbourhood (valid returns only) spans more depth than noise explains."""
    return pc.depth_edge_pixels(depth, min_jump_m=config.edge_min_m, sigmas=config.edge_sigmas)


def grazing_pixels(depth: np.ndarray, intrinsics: CameraIntrinsics, max_angle_deg: float) -> np.ndarray:
    """Pixels whose surface normal (from the neighbouring pixels' points) is more than
    max_angle_deg from the ray back to the camera."""
    h, w = depth.shape
    u, v = np.meshgrid(np.arange(w), np.arange(h))
    z = depth.astype(np.float64)
    p = np.stack([(u - intrinsics.cx) / intrinsics.fx * z, (v - intrinsics.cy) / intrinsics.fy * z, z], -1)
    du = np.zeros_like(p)
    dv = np.zeros_like(p)
    du[:, 1:-1] = p[:, 2:] - p[:, :-2]
    dv[1:-1] = p[2:] - p[:-2]
    n = np.cross(du, dv)
    norm = np.linalg.norm(n, axis=-1) * np.linalg.norm(p, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.abs(np.einsum("hwk,hwk->hw", n, p)) / norm
    measurable = (z > 0) & (norm > 0)
    for shift in ((0, 1), (0, -1), (1, 0), (-1, 0)):       # every neighbour used must be a return
        measurable &= np.roll(z, shift, axis=(0, 1)) > 0
    measurable[[0, -1], :] = measurable[:, [0, -1]] = False
    return measurable & (cos < np.cos(np.radians(max_angle_deg)))


def supported_voxels(pts: np.ndarray, ranges: np.ndarray | None, config: ObstacleMapConfig):
    """Centroids (and mean camera range, when `ranges` are given) of the voxels holding at
    least min_points_per_voxel returns and min_neighbours occupied neighbours; and how many
    points were unsupported. Works on any cloud (no image needed)."""
    if not len(pts):
        return np.empty((0, 3)), np.empty(0), 0
    grid = pc.VoxelGrid(pts, config.voxel_m)
    dense = grid.counts >= config.min_points_per_voxel
    centres = grid.mean(pts)[dense]
    voxel_range = grid.mean(ranges)[dense] if ranges is not None else np.zeros(len(centres))
    linked = pc.radius_inliers(centres, radius_m=config.neighbour_radius_voxels * config.voxel_m,
                               min_neighbours=config.min_neighbours)
    kept_points = int(grid.counts[dense][linked].sum())
    return centres[linked], voxel_range[linked], len(pts) - kept_points
