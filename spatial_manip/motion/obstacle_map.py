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
   them (robust point-to-plane, `fixture_registration`); the points the fixtures, so registered,
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
from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.motion.world import CLOUD_EXPLAINED_M
from spatial_manip.scene import FIXTURE_CATEGORIES
from spatial_manip.transforms import apply


MEDIAN_NOISE_LEFT = 0.42   # a median of 9 Gaussian samples has ~1.25/3 of one sample's sigma
NEAREST_RETURN_M = 0.1     # nearer is no depth camera's return (the agent marks the arm's pixels 1 cm: agent.without_arm)
REGISTRATION_POINTS = 2000  # fixture_registration fits the turn to about this many of the map's points
RESIDUAL_MAD_SIGMA = 0.867  # a Gaussian sample minus its 3x3 median: the robust sigma (1.4826 MAD) of that, in sigmas


@dataclass(frozen=True, kw_only=True)
class ObstacleMapConfig:
    voxel_m: float = 0.02              # one obstacle point per voxel of this size
    median_px: int = 3                 # depth median window (1: none)
    reach_m: float = 1.35              # farther points cannot touch the arm (motion.world.REACH_M)
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
               reach_m: float = 1.35) -> np.ndarray:
    """Every valid pixel as a base-frame point within reach (no filtering): the old cloud."""
    pts, _ = backproject(depth_m, intrinsics)
    pts = apply(T_base_cam, pts)
    return pts[np.linalg.norm(pts, axis=1) < reach_m]


def build_obstacle_map(depth_m: np.ndarray, intrinsics: CameraIntrinsics, T_base_cam: np.ndarray, *,
                       exclude: Callable[[np.ndarray], np.ndarray] | None = None, fixtures: Sequence = (),
                       config: ObstacleMapConfig = ObstacleMapConfig()) -> ObstacleMap:
    """The supported obstacle points of one depth image (metres, 0 = no return). `exclude`
    maps base-frame points to a mask of those to leave out (the robot and its load); the points
    of `fixtures` (scene objects: those of FIXTURE_CATEGORIES count), registered to them, are left
    out too (`without_fixtures`)."""
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
                                    max(CLOUD_EXPLAINED_M, clearance), config)
        dropped["fixture"], centres = int(np.count_nonzero(on)), centres[~on]
    return ObstacleMap(centres, config.voxel_m, clearance, dropped, turn)


def fixture_boxes(objects: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centres (n, 3), rotations (n, 3, 3), half sizes (n, 3)) of the fixtures among `objects`
    (FIXTURE_CATEGORIES; a fixture of parts, a shelf, by its parts), in the base frame."""
    out = []
    for o in objects:
        if o.category not in FIXTURE_CATEGORIES or getattr(o, "held", False):
            continue
        parts = o.extra.get("parts") if isinstance(o.extra, dict) else None
        for p in parts or [{"center": o.center, "size": o.size, "rotation": o.rotation}]:
            R = np.eye(3) if p.get("rotation") is None else np.asarray(p["rotation"], float).reshape(3, 3)
            out.append((np.asarray(p["center"], float).reshape(3), R, np.asarray(p["size"], float).reshape(3) / 2))
    if not out:
        return np.empty((0, 3)), np.empty((0, 3, 3)), np.empty((0, 3))
    c, R, h = zip(*out)
    return np.array(c), np.array(R), np.array(h)


def without_fixtures(points: np.ndarray, camera_m, boxes, margin_m: float,
                     config: ObstacleMapConfig = ObstacleMapConfig()) -> tuple[np.ndarray, float]:
    """(which of `points` the fixture `boxes` explain, how far the frame is turned, degrees): the
    points turned about the camera by `fixture_registration` lying within `margin_m` of a box."""
    camera = np.asarray(camera_m, float).reshape(3)
    turn = fixture_registration(points, camera, boxes, config)
    moved = camera + (np.asarray(points, float) - camera) @ turn.T
    on = np.zeros(len(moved), bool)
    for c, R, h in zip(*boxes):
        on |= np.all(np.abs((moved - c) @ R) <= h + margin_m, axis=1)
    return on, float(np.degrees(Rotation.from_matrix(turn).magnitude()))


def fixture_registration(points: np.ndarray, camera_m, boxes, config: ObstacleMapConfig = ObstacleMapConfig()) -> np.ndarray:
    """The small rotation about the camera (3x3) that lays the points near the fixture boxes'
    faces onto them: Gauss-Newton on the point-to-face distances, Cauchy-weighted (a book on a
    board is no board) in a band shrinking from fixture_band_m to 0.4 of it. The identity when
    fewer than min_fixture_points points lie near a face, when the turn found exceeds
    max_turn_deg, or when it does not bring the points nearer their faces."""
    camera = np.asarray(camera_m, float).reshape(3)
    pts = np.asarray(points, float).reshape(-1, 3)
    pts = pts[::max(1, len(pts) // REGISTRATION_POINTS)]      # three unknowns: a few thousand points tell them
    omega = np.zeros(3)
    before = None
    for band in config.fixture_band_m * np.array([1.0, 0.7, 0.5, 0.4, 0.4]):
        q = camera + Rotation.from_rotvec(omega).apply(pts - camera)
        r, n = face_distances(q, boxes, band)
        ok = np.isfinite(r)
        if np.count_nonzero(ok) < config.min_fixture_points:
            return np.eye(3)
        if before is None:
            before = float(np.median(np.abs(r[ok])))
        A = np.cross(q[ok] - camera, n[ok])               # d(distance)/d(omega) for a small turn
        w = 1.0 / (1.0 + (r[ok] / (0.25 * band)) ** 2)
        H = (A * w[:, None]).T @ A + 1e-3 * np.trace(A.T @ A) / 3 * np.eye(3)   # a direction no face fixes stays put
        omega = omega + np.linalg.solve(H, -(A * w[:, None]).T @ r[ok])
    q = camera + Rotation.from_rotvec(omega).apply(pts - camera)
    r, _ = face_distances(q, boxes, config.fixture_band_m)
    ok = np.isfinite(r)
    after = float(np.median(np.abs(r[ok]))) if np.count_nonzero(ok) >= config.min_fixture_points else np.inf
    if np.degrees(np.linalg.norm(omega)) > config.max_turn_deg or not after < before:
        return np.eye(3)
    return Rotation.from_rotvec(omega).as_matrix()


def face_distances(points: np.ndarray, boxes, band_m: float) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the signed distance (outside positive) to the nearest face of the boxes
    (centres, rotations, half sizes) it lies over or under, and that face's outward normal; NaN
    where no face is within `band_m`, or the nearest box is nearest at an edge or a corner."""
    centres, rotations, halves = boxes
    local = np.stack([(points - c) @ R for c, R in zip(centres, rotations)], axis=1)    # (n, b, 3)
    past = np.abs(local) - halves[None]
    axis = np.argmax(past, axis=2)                                                      # (n, b)
    beyond = np.count_nonzero(past > 0, axis=2)
    dist = np.take_along_axis(past, axis[..., None], 2)[..., 0]
    dist = np.where(beyond <= 1, dist, np.nan)                                          # over a face, or inside
    far = ~(np.abs(dist) <= band_m)
    dist = np.where(far, np.inf, dist)
    b = np.argmin(np.abs(dist), axis=1)
    idx = np.arange(len(points))
    d = dist[idx, b]
    k = axis[idx, b]
    sign = np.sign(local[idx, b, k])
    normal = rotations[b, :, k] * np.where(sign == 0, 1.0, sign)[:, None]
    return np.where(np.isfinite(d), d, np.nan), normal


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
