"""box_2d_to_box_3d: a pixel box or mask plus calibrated depth -> an oriented 3D box in `base`.

Steps (all vectorised, on the crop around the object only):
1. back-project the crop's valid pixels and move them to the base frame;
2. find the local support plane in a ring of pixels around the crop (RANSAC, normal near
   gravity's up) and drop points lying on it (with a plain box, that is the table inside it);
3. keep the largest 4-connected pixel component, then reject outliers: depth farther than a few
   robust spreads (MAD) from the median, and points with few 3D neighbours (flying pixels);
4. fit two boxes: yaw about the plane normal (objects lying or standing on the plane) extended
   down to the plane, since the camera sees only the top and the faces turned to it; and a full
   orientation (PCA axes refined by a minimum-area rectangle) for tilted objects. Keep the box
   whose surface explains the visible points better, preferring the yaw box on a near tie.

The box axes follow scene.SceneObject: columns of `rotation` are the object's x (its longer
horizontal side), y and z (the axis nearest gravity's up), `size` the extents along them.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage
from scipy.spatial import ConvexHull, QhullError

from spatial_manip.camera_model import pixel_rays, valid_depth_mask
from spatial_manip.geometry.pointcloud import fit_plane
from spatial_manip.transforms import box_corners, rpy_to_matrix
from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import SceneObject

UP = np.array([0.0, 0.0, 1.0])


class BoxFitError(ValueError):
    """Too few usable depth points in the region to fit a box; the message says how many."""


@dataclass(frozen=True)
class BoxFitConfig:
    min_points: int = 30
    max_points: int = 6000            # fit on an even subsample above this (speed)
    plane_tol_m: float = 0.006        # points this close to the support plane belong to it
    plane_max_tilt_deg: float = 25.0  # a support plane's normal is within this of gravity's up
    ring_px: int = 12                 # width of the ring around the region used to find the plane
    max_rest_gap_m: float = 0.30      # extend the box to a plane at most this far below its lowest point
    mad_k: float = 4.0                # depth outliers: |d - median| > mad_k * 1.4826 MAD + mad_floor_m
    mad_floor_m: float = 0.01
    min_neighbours: int = 4           # flying pixels: fewer of the 8 pixel neighbours within the radius
    neighbour_radius_floor_m: float = 0.008  # radius = max(3 pixel footprints, this)
    trim: float = 0.004               # quantile trimmed from each end when measuring extents
    prefer_yaw_ratio: float = 0.6     # the full box wins only if its residual < ratio x the yaw box's
    seed: int = 0

    def __post_init__(self):
        if self.min_points < 4 or self.max_points < self.min_points:
            raise ValueError(f"need 4 <= min_points <= max_points, got {self.min_points}, {self.max_points}")
        if not 0 <= self.trim < 0.25:
            raise ValueError(f"trim is a quantile per side in [0, 0.25), got {self.trim}")


@dataclass
class SupportPlane:
    """Plane n . p + d = 0 in base, n pointing up (away from the object's support)."""

    normal: np.ndarray
    d: float
    inliers: int = 0

    def height(self, p: np.ndarray) -> np.ndarray:
        return p @ self.normal + self.d

    def to_dict(self) -> dict:
        return {"normal": self.normal.tolist(), "d": float(self.d), "inliers": int(self.inliers)}


@dataclass
class Box3D:
    center: np.ndarray          # base frame, metres
    size: np.ndarray            # extents along the box's own x, y, z
    rotation: np.ndarray        # columns: box axes in base (world = R @ local)
    mode: str                   # "yaw" (about the support normal), "full" (tilted) or "gravity" (no plane)
    n_points: int               # points that survived outlier rejection
    n_region: int               # valid depth pixels in the region (a plain box includes the table)
    quality: float              # 0..1, see _quality
    residual_m: float           # median distance of the points to the box surface
    support_plane: SupportPlane | None = None
    points: np.ndarray = field(default=None, repr=False)  # (n, 3) base-frame points used
    pixels: np.ndarray = field(default=None, repr=False)  # (n, 2) their (u, v)

    @property
    def yaw_rad(self) -> float:
        return float(np.arctan2(self.rotation[1, 0], self.rotation[0, 0]))

    def corners(self) -> np.ndarray:
        return box_corners(self.center, self.size, self.rotation)

    def to_scene_object(self, id: str, label: str, category: str | None = None, **kw):
        extra = {"quality": self.quality, "n_points": self.n_points, "fit_mode": self.mode}
        return SceneObject(id=id, label=label, category=category or label, center=self.center.copy(),
                           size=self.size.copy(), rotation=self.rotation.copy(), extra=extra, **kw)

    def to_dict(self) -> dict:
        return {"center": self.center.tolist(), "size": self.size.tolist(), "rotation": self.rotation.tolist(),
                "yaw_deg": float(np.degrees(self.yaw_rad)), "mode": self.mode, "n_points": self.n_points,
                "n_region": self.n_region, "quality": round(float(self.quality), 4),
                "residual_m": float(self.residual_m), "frame_id": "base",
                "support_plane": self.support_plane.to_dict() if self.support_plane else None}


# --- region handling ------------------------------------------------------------------------

def _region(obs_shape, box=None, mask=None):
    """Crop (y0, y1, x0, x1) and the region mask within it."""
    h, w = obs_shape
    if mask is not None:
        m = np.asarray(mask, bool)
        if m.shape != (h, w):
            raise ValueError(f"mask is {m.shape} but the image is {(h, w)}")
        ys, xs = np.nonzero(m)
        if ys.size == 0:
            raise BoxFitError("the mask is empty")
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        return (y0, y1, x0, x1), m[y0:y1, x0:x1]
    if box is None:
        raise ValueError("give a pixel box [x0, y0, x1, y1] or a mask")
    x0, y0, x1, y1 = (int(round(float(c))) for c in np.asarray(box, float).reshape(4))
    x0, x1 = max(0, min(x0, x1)), min(w, max(x0, x1))
    y0, y1 = max(0, min(y0, y1)), min(h, max(y0, y1))
    if x1 - x0 < 2 or y1 - y0 < 2:
        raise BoxFitError(f"the box {list(map(float, np.ravel(box)))} covers fewer than 2x2 pixels of the {w}x{h} image")
    return (y0, y1, x0, x1), np.ones((y1 - y0, x1 - x0), bool)


def _points(obs: RGBDObservation, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Base-frame points of the pixels (ys, xs) (their depth must be valid)."""
    z = obs.depth_m[ys, xs].astype(np.float64)
    rx, ry = pixel_rays(xs, ys, obs.intrinsics)
    pc = np.stack([rx * z, ry * z, z], axis=1)
    T = obs.T_base_cam
    return pc @ T[:3, :3].T + T[:3, 3]


def _ring_points(obs, crop, ring_px: int, exclude: np.ndarray | None, max_n: int = 600) -> np.ndarray:
    h, w = obs.depth_m.shape
    y0, y1, x0, x1 = crop
    Y0, Y1, X0, X1 = max(0, y0 - ring_px), min(h, y1 + ring_px), max(0, x0 - ring_px), min(w, x1 + ring_px)
    sub = obs.depth_m[Y0:Y1, X0:X1]
    ok = valid_depth_mask(sub)
    ok[y0 - Y0:y1 - Y0, x0 - X0:x1 - X0] = False
    if exclude is not None:  # other pixels known to be the object (mask input)
        ok &= ~exclude[Y0:Y1, X0:X1]
    ys, xs = np.nonzero(ok)
    step = max(1, ys.size // max_n)
    ys, xs = ys[::step] + Y0, xs[::step] + X0
    return _points(obs, ys, xs)


# --- plane, rectangles, residuals ----------------------------------------------------------

def fit_support_plane(points: np.ndarray, rng: np.random.Generator, tol_m: float = 0.006,
                      max_tilt_deg: float = 25.0, iterations: int = 64, up=UP) -> SupportPlane | None:
    """RANSAC plane (the point-cloud layer's) whose normal is within max_tilt_deg of `up`,
    refined by least squares; None unless it holds 30 % of the points (and at least 15)."""
    p = np.asarray(points, float)
    if len(p) < 20:
        return None
    plane = fit_plane(p, threshold_m=tol_m, iterations=iterations, seed=int(rng.integers(2 ** 31)), up=up,
                      max_tilt_deg=max_tilt_deg)
    if plane is None or plane.n_inliers < max(15, 0.3 * len(p)):
        return None
    return SupportPlane(plane.normal, plane.offset, plane.n_inliers)


def min_area_rect_angle(xy: np.ndarray) -> float:
    """Angle of the minimum-area enclosing rectangle's first side (rotating calipers on the hull)."""
    try:
        hull = xy[ConvexHull(xy).vertices]
    except (QhullError, ValueError):
        hull = xy
    e = np.diff(np.vstack([hull, hull[:1]]), axis=0)
    ang = np.unique(np.mod(np.arctan2(e[:, 1], e[:, 0]), np.pi / 2))
    c, s = np.cos(ang), np.sin(ang)
    u = hull[:, 0, None] * c + hull[:, 1, None] * s
    v = -hull[:, 0, None] * s + hull[:, 1, None] * c
    area = np.ptp(u, axis=0) * np.ptp(v, axis=0)
    return float(ang[int(np.argmin(area))])


def _extent(q: np.ndarray, trim: float) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.quantile(q, [trim, 1 - trim], axis=0) if trim > 0 else (q.min(0), q.max(0))
    return lo, hi


def surface_residual(local: np.ndarray, half: np.ndarray) -> float:
    """Median distance of points (in the box frame) to the box's surface. Written column by
    column: numpy's reductions along a row of three (`norm(axis=1)`, `min(axis=1)`) cost 2.4x
    these, the same numbers, and a look runs this 3 000 times (issue 42)."""
    a = np.abs(local)
    out = np.maximum(a - half, 0)
    outside = np.sqrt(out[:, 0] * out[:, 0] + out[:, 1] * out[:, 1] + out[:, 2] * out[:, 2])
    below = half - a
    inside = np.minimum(np.minimum(below[:, 0], below[:, 1]), below[:, 2])
    return _median(np.where(outside > 0, outside, np.maximum(inside, 0)))


def _median(values: np.ndarray) -> float:
    """np.median of a 1-D array, the same number (NaN too) at a fifth of its cost on the few
    hundred values a box fit measures 30 000 times a look (numpy's generic reduction machinery
    was most of it; issue 42)."""
    n = values.size
    if n == 0:
        return float("nan")
    h = n // 2
    part = np.partition(values, [h - 1, h, n - 1] if n > 1 else [0])
    if np.isnan(part[-1]):
        return float("nan")
    return float(part[h]) if n % 2 else float((part[h - 1] + part[h]) / 2)


def _basis_about(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ref = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = ref - (ref @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def _box_from_axes(p, R, trim, plane=None, top_noise_m=0.0):
    """Centre and size of points p in the frame R (columns); optionally extend down to a plane.
    `top_noise_m`: the depth noise on the top, whose upper tail would otherwise raise the top."""
    local = p @ R
    lo, hi = _extent(local, trim)
    if plane is not None:  # R[:, 2] is the plane normal, and n . p = -d on the plane: the bottom
        lo[2] = -plane.d
        hi[2] = max(hi[2] - 2.0 * top_noise_m, lo[2] + 1e-4)
    centre_local = (lo + hi) / 2
    return R @ centre_local, hi - lo, local - centre_local


def _canonical(R: np.ndarray, size: np.ndarray, up=UP) -> tuple[np.ndarray, np.ndarray]:
    """Reorder axes: z nearest `up` (pointing up), x the longer remaining side; right-handed."""
    iz = int(np.argmax(np.abs(R.T @ up)))
    rest = [i for i in range(3) if i != iz]
    ix, iy = sorted(rest, key=lambda i: -size[i])
    z = R[:, iz] * np.sign(R[:, iz] @ up or 1.0)
    x = R[:, ix]
    y = np.cross(z, x)
    return np.stack([x, y, z], axis=1), size[[ix, iy, iz]]


def _yaw_box(p, n, cfg, plane, top_noise_m=0.0):
    e1, e2 = _basis_about(n)
    ang = min_area_rect_angle(np.stack([p @ e1, p @ e2], axis=1))
    x = np.cos(ang) * e1 + np.sin(ang) * e2
    R = np.stack([x, np.cross(n, x), n], axis=1)
    centre, size, local = _box_from_axes(p, R, cfg.trim, plane=plane, top_noise_m=top_noise_m)
    return centre, size, R, local


def _full_box(p, cfg):
    """The box on the points' principal axes: (centre, size, R, surface residual)."""
    c = p.mean(axis=0)
    axes = np.linalg.svd(p - c, full_matrices=False)[2]
    thin = axes[2]
    e1, e2 = _basis_about(thin)
    ang = min_area_rect_angle(np.stack([p @ e1, p @ e2], axis=1))
    x = np.cos(ang) * e1 + np.sin(ang) * e2
    R = np.stack([x, np.cross(thin, x), thin], axis=1)
    centre, size, local = _box_from_axes(p, R, cfg.trim)
    return centre, size, R, surface_residual(local, size / 2)


LEAN_STEP_DEG = 5.0


def _leaning_box(p, R_yaw, cfg):
    """The box leaning about one of the yaw box's horizontal axes (by up to 85 deg either way)
    whose faces the points lie on best: (centre, size, R, surface residual). A book leaning on a
    wedge, seen by its top and side edges, has no face for principal axes to find, but its
    edges lie on the faces of the box leaning with it."""
    best = None
    for R in leaning_frames(R_yaw, LEAN_STEP_DEG):
        centre, size, local = _box_from_axes(p, R, cfg.trim)
        res = surface_residual(local, size / 2)
        if best is None or res < best[3]:
            best = (centre, size, R, res)
    return best


def leaning_frames(R_yaw: np.ndarray, step_deg: float) -> list[np.ndarray]:
    """The upright frame `R_yaw` turned about its x axis, then about its y axis, by every
    multiple of `step_deg` strictly between -90 and 90 degrees except 0 (from lying one way to
    lying the other)."""
    return list(R_yaw @ _lean_turns(float(step_deg)))


@functools.lru_cache(maxsize=8)
def _lean_turns(step_deg: float) -> np.ndarray:
    """The turns `leaning_frames` applies, made once per step: building them from Euler angles
    for every frame cost 2 ms a box, 30 000 scipy rotations a look (issue 42)."""
    turns = []
    for axis in (0, 1):
        for deg in np.arange(-90.0 + step_deg, 90.0 - 1e-9, step_deg):
            if abs(deg) < 1e-9:
                continue
            a = np.radians(deg)
            turns.append(rpy_to_matrix(a, 0.0, 0.0) if axis == 0 else rpy_to_matrix(0.0, a, 0.0))
    turns = np.stack(turns)
    turns.setflags(write=False)
    return turns


# --- outliers ------------------------------------------------------------------------------

def _largest_component(m: np.ndarray) -> np.ndarray:
    lab, n = ndimage.label(m)
    if n <= 1:
        return m
    counts = np.bincount(lab.ravel())
    counts[0] = 0
    return lab == int(np.argmax(counts))


def _mad_inliers(depth: np.ndarray, cfg: BoxFitConfig) -> np.ndarray:
    med = np.median(depth)
    mad = np.median(np.abs(depth - med)) * 1.4826
    return np.abs(depth - med) <= cfg.mad_k * mad + cfg.mad_floor_m


def _neighbour_counts(P: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """For an organised point image P (h, w, 3; NaN = none), how many of the 8 pixel neighbours
    lie within `radius` (h, w) in 3D. Flying pixels float between surfaces and have few."""
    h, w = P.shape[:2]
    Q = np.full((h + 2, w + 2, 3), np.nan)
    Q[1:-1, 1:-1] = P
    count = np.zeros((h, w), np.int8)
    r2 = radius ** 2
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy or dx:
                diff = Q[1 + dy:h + 1 + dy, 1 + dx:w + 1 + dx] - P
                with np.errstate(invalid="ignore"):
                    count += np.einsum("ijk,ijk->ij", diff, diff) < r2
    return count


def _quality(n_used: int, n_candidates: int, residual_m: float) -> float:
    """Fraction kept by outlier rejection x surface fit (1 cm residual -> 0.37) x enough points
    (saturates at 200)."""
    return float((n_used / max(n_candidates, 1)) * np.exp(-residual_m / 0.01) * min(1.0, n_used / 200))


# --- the tool -------------------------------------------------------------------------------

def box_2d_to_box_3d(obs: RGBDObservation, box=None, mask=None, *, config: BoxFitConfig | None = None,
                     support_plane: SupportPlane | bool | None = None) -> Box3D:
    """Oriented 3D box in `base` of the object in a pixel box [x0, y0, x1, y1] (x right, y down,
    exclusive ends) or a boolean mask. `support_plane`: a known plane, False to ignore planes,
    None (default) to find one around the region."""
    cfg = config or BoxFitConfig()
    crop, region = _region(obs.depth_m.shape, box, mask)
    y0, y1, x0, x1 = crop
    depth = obs.depth_m[y0:y1, x0:x1]
    ok = region & valid_depth_mask(depth)
    n_region = int(ok.sum())
    if n_region < cfg.min_points:
        raise BoxFitError(f"only {n_region} valid depth pixels in the region, need {cfg.min_points}: "
                          "the object may be too small, too far, or out of the depth sensor's range")
    # work on an even pixel grid of at most about max_points points (speed at high resolution)
    s = max(1, int(np.ceil(np.sqrt(n_region / cfg.max_points))))
    ok, depth = ok[::s, ::s], depth[::s, ::s]
    ys, xs = np.nonzero(ok)
    p = _points(obs, ys * s + y0, xs * s + x0)
    plane = support_plane if isinstance(support_plane, SupportPlane) else None
    if support_plane is None:
        ring = _ring_points(obs, crop, cfg.ring_px, np.asarray(mask, bool) if mask is not None else None)
        plane = fit_support_plane(ring, np.random.default_rng(cfg.seed), cfg.plane_tol_m, cfg.plane_max_tilt_deg)
    keep = _mad_inliers(depth[ys, xs], cfg)
    if plane is not None:  # drop the support surface itself (a plain box holds table too)
        keep &= plane.height(p) > cfg.plane_tol_m
    grid = np.zeros_like(ok)
    grid[ys[keep], xs[keep]] = True
    grid = _largest_component(grid)
    P = np.full(ok.shape + (3,), np.nan)
    P[ys, xs] = p
    P[~grid] = np.nan
    footprint = depth / obs.intrinsics.fx * s  # metres between neighbouring grid points
    counts = _neighbour_counts(P, np.maximum(3.0 * footprint, cfg.neighbour_radius_floor_m))
    n_candidates = int(grid.sum())
    grid &= counts >= cfg.min_neighbours
    ys, xs = np.nonzero(grid)
    if len(ys) < cfg.min_points:
        raise BoxFitError(f"only {len(ys)} points remain after removing the support plane and outliers "
                          f"(from {n_region} valid pixels), need {cfg.min_points}")
    top_noise = _top_noise(P, plane)
    return _fit(P[ys, xs], np.stack([xs * s + x0, ys * s + y0], axis=1), n_region, n_candidates, plane, cfg,
                top_noise)


def _top_noise(P: np.ndarray, plane: SupportPlane | None) -> float:
    """Depth noise on the object's top, from height differences of neighbouring grid points in its
    upper tenth (a smooth top differs by ~0 noiseless; by sqrt(2) sigma with noise)."""
    if plane is None:
        return 0.0
    h = plane.height(P.reshape(-1, 3)).reshape(P.shape[:2])
    with np.errstate(invalid="ignore"):
        top = h > np.nanquantile(h, 0.9) if np.isfinite(h).sum() >= 20 else np.zeros(h.shape, bool)
    dh = np.concatenate([np.abs(np.diff(h, axis=a))[(top[1:] & top[:-1]) if a == 0 else (top[:, 1:] & top[:, :-1])]
                         for a in (0, 1)])
    return float(np.median(dh) / (0.6745 * np.sqrt(2))) if dh.size >= 10 else 0.0


def _fit(p, pixels, n_region, n_candidates, plane, cfg, top_noise_m=0.0) -> Box3D:
    if plane is not None and np.quantile(plane.height(p), cfg.trim) > cfg.max_rest_gap_m:
        plane = None  # too far below to be what the object rests on (e.g. it is held)
    n = plane.normal if plane is not None else UP
    c_y, s_y, R_y, loc_y = _yaw_box(p, n, cfg, plane, top_noise_m)
    res_y = surface_residual(loc_y, s_y / 2)
    res_f = np.inf
    if res_y > cfg.plane_tol_m / 2:  # the yaw box does not explain the surface: try a full orientation
        c_f, s_f, R_f, res_f = min((_full_box(p, cfg), _leaning_box(p, R_y, cfg)), key=lambda b: b[3])
    if res_f < cfg.prefer_yaw_ratio * res_y:
        centre, size, R, res, mode = c_f, s_f, R_f, res_f, "full"
    else:
        centre, size, R, res, mode = c_y, s_y, R_y, res_y, ("yaw" if plane is not None else "gravity")
    R, size = _canonical(R, size)
    return Box3D(centre, size, R, mode, len(p), n_region, _quality(len(p), n_candidates, res), res,
                 plane, p, pixels)
