"""The project's one point-cloud layer: voxel grids, normals, plane segmentation, outlier
removal and clustering on (N, 3) float arrays, over open3d.

Every function takes and returns numpy arrays (indices or masks where a caller carries
per-point attributes such as colour), so callers never hold open3d objects. open3d is imported
on first use (about 1 s), not with this module. Points are cast to float64 before
`Vector3dVector`: its float32 path is ~250x slower. RANSAC is seeded through
`o3d.utility.random.seed`, so a seed reproduces a plane.

The voxel grid that must map every point to its voxel (`VoxelGrid`) stays in numpy: open3d's
`voxel_down_sample_and_trace` gives the same mapping 4-10x slower (measured on a 290k-point
frame), and its `voxel_down_sample` (centroids) is used where no mapping is needed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from spatial_manip.geometry.noise import L515Noise

SENSOR = L515Noise()     # the sensor model whose range error sets the tolerances below


def _o3d():
    import open3d as o3d

    return o3d


def preload_point_cloud_library() -> None:
    """Import open3d now, at a node's start-up, so that the first request needing it does not wait
    for it (1-3 s on a loaded machine); nothing when it is missing (its first user says so)."""
    try:
        _o3d()
    except ImportError:
        pass


def to_open3d(points: np.ndarray):
    """An open3d PointCloud of (N, 3) points (cast to float64 first: the float32 path is slow)."""
    o3d = _o3d()
    pts = np.ascontiguousarray(np.asarray(points, dtype=np.float64).reshape(-1, 3))
    return o3d.geometry.PointCloud(o3d.utility.Vector3dVector(pts))


# ---- sensor error ----------------------------------------------------------------------------

def range_tolerance_m(range_m, *, sigmas: float = 3.0, floor_m: float = 0.0, sensor: L515Noise = SENSOR):
    """A distance tolerance that follows the sensor's range error: `sigmas` standard deviations
    of its depth noise at that range (never below floor_m). Works on scalars and arrays."""
    return np.maximum(floor_m, sigmas * sensor.sigma_m(np.asarray(range_m, float)))


def depth_edge_pixels(depth_m: np.ndarray, *, min_jump_m: float = 0.02, sigmas: float = 8.0,
                      sensor: L515Noise = SENSOR, only: np.ndarray | None = None) -> np.ndarray:
    """Pixels whose 3x3 neighbourhood (valid returns only) spans more depth than the sensor's
    noise explains there (`sigmas` standard deviations at the pixel's range, never below
    min_jump_m): the ring at a depth discontinuity, where a sensor's returns mix the surfaces in
    front and behind (flying pixels). `only` (a boolean mask of the image's shape): test those
    pixels alone (the rest are False), in time that grows with their number rather than the
    image's (a whole 640x480 frame took 0.35 s at load 29 where a few hundred pixels were asked about)."""
    depth = np.asarray(depth_m, float)
    valid = depth > 0
    if only is not None:
        return _edge_pixels_at(depth, valid & np.asarray(only, bool), min_jump_m, sigmas, sensor)
    near = ndimage.minimum_filter(np.where(valid, depth, np.inf), size=3, mode="nearest")
    far = ndimage.maximum_filter(np.where(valid, depth, -np.inf), size=3, mode="nearest")
    span = np.where(valid, far - near, 0.0)
    return valid & (span > _edge_jump_m(depth, min_jump_m, sigmas, sensor))


def _edge_jump_m(depth: np.ndarray, min_jump_m: float, sigmas: float, sensor: L515Noise) -> np.ndarray:
    """The depth span across a pixel's neighbourhood beyond which it is a depth edge."""
    return np.maximum(min_jump_m, sigmas * sensor.sigma_m(depth))


def _edge_pixels_at(depth: np.ndarray, asked: np.ndarray, min_jump_m: float, sigmas: float,
                    sensor: L515Noise) -> np.ndarray:
    """depth_edge_pixels at the `asked` pixels (valid ones) alone: each one's 3x3 neighbourhood
    gathered from the image padded by its own border values (the filters' "nearest" mode)."""
    out = np.zeros(depth.shape, bool)
    rows, cols = np.nonzero(asked)
    if len(rows) == 0:
        return out
    padded = np.pad(depth, 1, mode="edge")
    window = np.stack([padded[rows + 1 + dr, cols + 1 + dc] for dr in (-1, 0, 1) for dc in (-1, 0, 1)], axis=1)
    seen = window > 0
    span = np.where(seen, window, -np.inf).max(axis=1) - np.where(seen, window, np.inf).min(axis=1)
    out[rows, cols] = span > _edge_jump_m(depth[rows, cols], min_jump_m, sigmas, sensor)
    return out


def in_box_along_rays(points: np.ndarray, origin, box, *, along_m, margin_m: float = 0.0) -> np.ndarray:
    """Which (N, 3) points could be on or in an oriented box (`center`, `size`, `rotation`)
    given where a depth sensor at `origin` measured them: each point may lie up to `along_m`
    (scalar or (N,)) nearer or farther along its ray, the way range noise moves it, and
    `margin_m` off it sideways. A wall seen face-on reads a centimetre and more in front of
    and behind its plane at 1.5 m; a book standing beside a bookend is not moved into it."""
    pts = np.asarray(points, float).reshape(-1, 3)
    out = np.zeros(len(pts), bool)
    if len(pts) == 0:
        return out
    R = np.asarray(box.rotation, float)
    centre = np.asarray(box.center, float)
    half = np.asarray(box.size, float) / 2 + margin_m
    t_all = np.broadcast_to(np.asarray(along_m, float), (len(pts),))
    # only a point within its `along` of the box's axis-aligned bounds can reach the box: the
    # exact ray test runs on those (a fixture is a small part of a view)
    near = np.flatnonzero(np.all(np.abs(pts - centre) <= (np.abs(R) @ half)[None, :] + t_all[:, None], axis=1))
    pts, t = pts[near], t_all[near]
    rays = pts - np.asarray(origin, float)
    rays /= np.maximum(np.linalg.norm(rays, axis=1, keepdims=True), 1e-12)
    p = (pts - centre) @ R
    d = rays @ R
    lo, hi = -t.copy(), t.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(3):
            flat = np.abs(d[:, k]) < 1e-12
            a = (-half[k] - p[:, k]) / d[:, k]
            b = (half[k] - p[:, k]) / d[:, k]
            enter, leave = np.minimum(a, b), np.maximum(a, b)
            inside = np.abs(p[:, k]) <= half[k]
            lo = np.where(flat, np.where(inside, lo, np.inf), np.maximum(lo, enter))
            hi = np.where(flat, np.where(inside, hi, -np.inf), np.minimum(hi, leave))
    out[near] = lo <= hi
    return out


# ---- voxel grids -----------------------------------------------------------------------------

class VoxelGrid:
    """Points grouped into cubic voxels of `voxel_m`: `inverse[i]` is point i's voxel, `counts`
    the points per voxel, `first` the first point of each voxel (in voxel order), and `mean`
    averages any per-point attribute per voxel."""

    def __init__(self, points: np.ndarray, voxel_m: float):
        if not voxel_m > 0:
            raise ValueError(f"voxel_m must be > 0, got {voxel_m}")
        pts = np.asarray(points, float).reshape(-1, 3)
        keys = np.floor(pts / voxel_m).astype(np.int64)
        if len(keys):
            keys -= keys.min(axis=0)
            span = keys.max(axis=0) + 1
        else:
            span = np.ones(3, np.int64)
        # one integer key per voxel is far faster to unique than rows
        flat = (keys[:, 0] * span[1] + keys[:, 1]) * span[2] + keys[:, 2]
        _, self.first, inverse, self.counts = np.unique(flat, return_index=True, return_inverse=True,
                                                        return_counts=True)
        self.inverse = inverse.reshape(-1)
        self.voxel_m = float(voxel_m)

    def __len__(self) -> int:
        return len(self.counts)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """Per-voxel mean of per-point values ((N,) or (N, k))."""
        v = np.asarray(values, float)
        n = len(self.counts)
        if v.ndim == 1:
            return np.bincount(self.inverse, v, n) / self.counts
        return np.stack([np.bincount(self.inverse, v[:, k], n) for k in range(v.shape[1])], 1) / self.counts[:, None]


def voxel_downsample(points: np.ndarray, voxel_m: float) -> np.ndarray:
    """Indices of one point per occupied voxel (the first seen, in increasing order), so callers
    can carry attributes. voxel_m <= 0 keeps every point."""
    if len(points) == 0 or voxel_m <= 0:
        return np.arange(len(points))
    return np.sort(VoxelGrid(points, voxel_m).first)


def voxel_centroids(points: np.ndarray, voxel_m: float) -> np.ndarray:
    """The centroid of each occupied voxel (open3d's voxel_down_sample)."""
    if len(points) == 0:
        return np.empty((0, 3))
    return np.asarray(to_open3d(points).voxel_down_sample(float(voxel_m)).points)


# ---- normals ---------------------------------------------------------------------------------

def estimate_normals(points: np.ndarray, k: int = 16, viewpoint=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Unit normals by PCA over the k nearest neighbours, oriented toward `viewpoint` (the camera)."""
    n = len(points)
    if n < 3:
        return np.tile([0.0, 0.0, -1.0], (n, 1))
    o3d = _o3d()
    pcd = to_open3d(points)
    pcd.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(int(min(k, n))))
    normals = np.asarray(pcd.normals).copy()
    flip = np.einsum("ij,ij->i", normals, np.asarray(viewpoint, float) - np.asarray(points, float)) < 0
    normals[flip] *= -1
    return normals


# ---- planes ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plane:
    normal: np.ndarray        # unit normal n, with n.p + offset = 0 on the plane
    offset: float
    inliers: np.ndarray       # bool mask over the points given

    @property
    def n_inliers(self) -> int:
        return int(self.inliers.sum())

    def distance(self, points: np.ndarray) -> np.ndarray:
        return np.asarray(points, float) @ self.normal + self.offset


def fit_plane(points: np.ndarray, *, threshold_m: float, iterations: int = 128, seed: int = 0,
              up=None, max_tilt_deg: float = 90.0, max_planes: int = 3, sample_size: int = 4000) -> Plane | None:
    """The dominant plane by RANSAC (open3d's segment_plane) on a seeded subsample of at most
    `sample_size` points (enough to rank hypotheses; the whole cloud costs ~10x more), refined
    by least squares on its inliers in the whole cloud; None with fewer than 3 points or no
    plane found.

    With `up`, the plane's normal must lie within max_tilt_deg of it (flipped to point along
    it): a steeper plane's inliers are set aside and the next plane is tried, up to
    `max_planes` times (a shelf's back wall may hold more points than its board)."""
    pts = np.asarray(points, float).reshape(-1, 3)
    if len(pts) < 3:
        return None
    o3d = _o3d()
    o3d.utility.random.seed(int(seed))
    rng = np.random.default_rng(int(seed))
    sub = pts if len(pts) <= sample_size else pts[rng.choice(len(pts), sample_size, replace=False)]
    u = None if up is None else np.asarray(up, float) / np.linalg.norm(up)
    left = np.arange(len(sub))
    for _ in range(max(1, max_planes)):
        if len(left) < 3:
            return None
        model, idx = to_open3d(sub[left]).segment_plane(float(threshold_m), 3, int(iterations))
        if len(idx) < 3:
            return None
        normal, offset = _refine(sub[left[np.asarray(idx)]], np.asarray(model[:3], float) if u is None else u)
        if u is not None and normal @ u < np.cos(np.radians(max_tilt_deg)):
            left = np.delete(left, idx)
            continue
        inliers = np.abs(pts @ normal + offset) < threshold_m
        normal, offset = _refine(pts[inliers], normal)
        return Plane(normal, offset, np.abs(pts @ normal + offset) < threshold_m)
    return None


def _refine(inliers: np.ndarray, near: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares plane through inliers (smallest principal axis), its normal on the side of
    `near` (the hypothesis, or the up axis)."""
    c = inliers.mean(axis=0)
    n = np.linalg.svd(inliers - c, full_matrices=False)[2][2]
    n = n if n @ near >= 0 else -n
    return n, float(-n @ c)


# ---- outliers and clusters -------------------------------------------------------------------

def radius_inliers(points: np.ndarray, *, radius_m: float, min_neighbours: int) -> np.ndarray:
    """Mask of points with at least `min_neighbours` others within radius_m (a point is
    supported by its neighbours; a lone return is noise)."""
    n = len(points)
    if n == 0:
        return np.zeros(0, bool)
    # open3d counts the point itself among its neighbours
    _, kept = to_open3d(points).remove_radius_outlier(int(min_neighbours) + 1, float(radius_m))
    mask = np.zeros(n, bool)
    mask[np.asarray(kept, int)] = True
    return mask


def statistical_inliers(points: np.ndarray, *, neighbours: int = 20, std_ratio: float = 2.0) -> np.ndarray:
    """Mask of points whose mean distance to their neighbours is within std_ratio standard
    deviations of the cloud's average."""
    n = len(points)
    if n <= neighbours:
        return np.ones(n, bool)
    _, kept = to_open3d(points).remove_statistical_outlier(int(neighbours), float(std_ratio))
    mask = np.zeros(n, bool)
    mask[np.asarray(kept, int)] = True
    return mask


def dbscan_labels(points: np.ndarray, *, eps_m: float, min_points: int) -> np.ndarray:
    """DBSCAN cluster label per point (-1: noise)."""
    if len(points) == 0:
        return np.zeros(0, int)
    return np.asarray(to_open3d(points).cluster_dbscan(float(eps_m), int(min_points)), int)
