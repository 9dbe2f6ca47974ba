"""Horizontal support planes (table tops, shelf boards, the floor) from a point cloud in the
base frame: seeded RANSAC (the point-cloud layer's, open3d) with the normal constrained near +z,
refined by least squares, and each plane's footprint on a coarse grid so "above this plane"
means above its surface, not beside it. Given the camera's position, the inlier band follows the
sensor's range noise at the cloud's range (2 sigma, never below `inlier_m`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import ndimage
from scipy.spatial import ConvexHull, QhullError

from spatial_manip.geometry.pointcloud import fit_plane, range_tolerance_m

UP = np.array([0.0, 0.0, 1.0])
PLANE_SIGMAS = 2.0     # a plane's inlier band: this many sigmas of range noise at the cloud's range
# A level surface seen from above hides what lies under it. A fitted plane through whose footprint
# the camera sees, within SEEN_UNDER_M below it, as many points as SEEN_THROUGH_SHARE of its own
# inliers is a slice across the objects standing on a lower surface (their tops and sides at one
# height), seen through between them, not a surface: a plane tilted 2.7 degrees through three
# books' tops on pedestals, a gray bookend and a 15 cm sphere's middle, 8 cm above the table, passed
# the area test; the sphere's middle band was taken for surface, its lower half for a shelf's
# panel reaching up to it, and it was seen as its 2.6 cm cap (ideal sensing). Through such a slice
# the camera saw 0.65 of its inliers' count within 15 cm under it; through the table top it sees
# at most 0.2 (plinths and the floor's near edge past the table's edge), through shelf boards 0.07.
SEEN_UNDER_M = 0.15
SEEN_THROUGH_SHARE = 0.4


@dataclass
class Plane:
    """n . p + d = 0 with unit normal n pointing up; `footprint` marks grid cells it covers."""

    normal: np.ndarray
    d: float
    n_inliers: int
    footprint: np.ndarray        # (nx, ny) bool over the grid below
    origin_xy: np.ndarray        # grid origin (x, y) in metres
    cell_m: float

    def height(self, points: np.ndarray) -> np.ndarray:
        """Signed distance of (N, 3) points above the plane."""
        return points @ self.normal + self.d

    @property
    def z0(self) -> float:
        """Height of the plane at x = y = 0 (for sorting and reports)."""
        return float(-self.d / self.normal[2])

    def covers(self, points: np.ndarray) -> np.ndarray:
        """Which points lie over (or under) the plane's footprint."""
        ij = np.floor((points[:, :2] - self.origin_xy) / self.cell_m).astype(int)
        nx, ny = self.footprint.shape
        ok = (ij[:, 0] >= 0) & (ij[:, 0] < nx) & (ij[:, 1] >= 0) & (ij[:, 1] < ny)
        out = np.zeros(len(points), bool)
        out[ok] = self.footprint[ij[ok, 0], ij[ok, 1]]
        return out


def fit_horizontal_planes(points: np.ndarray, rng: np.random.Generator, *, max_planes: int = 4,
                          inlier_m: float = 0.008, max_tilt_deg: float = 10.0, iterations: int = 150,
                          min_inliers: int = 400, min_fraction: float = 0.04,
                          min_area_m2: float = 0.1, cell_m: float = 0.02, camera_m=None) -> list[Plane]:
    """Up to `max_planes` near-horizontal planes, most supported first.

    `points` should be a downsampled cloud (a few tens of thousands of points) in the base
    frame. A plane needs `min_inliers` and `min_fraction` of the cloud, and one connected patch
    of at least `min_area_m2` (so the tops of books, even coplanar ones, are not supports).
    `camera_m` (the camera's position, base frame) widens the inlier band to the sensor's range
    noise at the cloud's median range."""
    pts = np.asarray(points, float)
    if camera_m is not None and len(pts):
        rng_m = float(np.median(np.linalg.norm(pts - np.asarray(camera_m, float).reshape(3), axis=1)))
        inlier_m = float(range_tolerance_m(rng_m, sigmas=PLANE_SIGMAS, floor_m=inlier_m))
    planes: list[Plane] = []
    remaining = pts
    need = max(min_inliers, int(min_fraction * len(pts)))
    for _ in range(max_planes + 3):       # rejected candidates (object tops) also use up an attempt
        if len(planes) >= max_planes or len(remaining) < need:
            break
        model = _level_plane(remaining, int(rng.integers(2 ** 31)), inlier_m, max_tilt_deg, iterations)
        if model is None:
            break
        inl = np.abs(remaining @ model[0] + model[1]) < inlier_m
        if inl.sum() < need:
            break
        patch = inl & _largest_patch(remaining, inl, cell_m)
        n, d = _refine(remaining[patch])
        inl = np.abs(remaining @ n + d) < inlier_m
        patch = _largest_patch(remaining, inl, cell_m)
        area = len(np.unique(np.floor(remaining[patch, :2] / cell_m), axis=0)) * cell_m ** 2
        if patch.sum() >= need and area >= min_area_m2:
            # The footprint spans every piece of the surface (a floor cut up by table legs)
            plane = _with_footprint(n, d, remaining[inl], cell_m)
            if camera_m is None or not _seen_through(plane, pts, np.asarray(camera_m, float).reshape(3), inlier_m):
                planes.append(plane)
        remaining = remaining[~inl]
    return sorted(planes, key=lambda p: -p.n_inliers)


def _seen_through(plane: Plane, points: np.ndarray, camera: np.ndarray, band_m: float) -> bool:
    """Whether the camera, above `plane`, sees through its footprint SEEN_THROUGH_SHARE of its
    inliers' count of `points` lying between its inlier band and SEEN_UNDER_M under it."""
    camera_height = float(plane.height(camera[None])[0])
    if camera_height <= 0:
        return False                    # seen from below: nothing under it is in view through it
    h = plane.height(points)
    under = (h < -band_m) & (h > -SEEN_UNDER_M)
    # where the ray from the camera to each point under the plane crosses it
    t = camera_height / (camera_height - h[under])
    crossing = camera + t[:, None] * (points[under] - camera)
    return np.count_nonzero(plane.covers(crossing)) >= SEEN_THROUGH_SHARE * plane.n_inliers


def known_plane(z: float, xy_min, xy_max, cell_m: float = 0.02) -> Plane:
    """A configured horizontal surface at height `z` over the rectangle xy_min..xy_max."""
    lo = np.asarray(xy_min, float)
    shape = tuple(np.maximum(np.ceil((np.asarray(xy_max, float) - lo) / cell_m).astype(int), 1))
    return Plane(np.array([0.0, 0.0, 1.0]), -float(z), 0, np.ones(shape, bool), lo, cell_m)


def settled_on_depth(plane: Plane, points: np.ndarray, camera_m, *, band_m: float = 0.03, bin_m: float = 0.002,
                     min_points: int = 50) -> Plane:
    """A configured level surface moved to the height the depth shows it at: the densest height
    (`bin_m` bins) of the points over its footprint within the band its range allows
    (`settle_band_m`, at most `band_m`). The camera's pose and its depth-to-colour registration
    carry errors the configuration does not (depth shifted 5 px lifts a shelf board 2.4 m away by
    17 mm), and heights above the surface must be read in the depth's own frame, or the whole board
    stands above its plane as a row of objects. Unchanged when the camera is not above the surface
    (it sees the underside) or too few points show it."""
    camera = np.asarray(camera_m, float).reshape(3)
    if float(camera[2]) <= plane.z0 + band_m:
        return plane
    band_m = settle_band_m(plane, camera, most_m=band_m)
    pts = np.asarray(points, float)
    h = plane.height(pts)
    near = pts[(np.abs(h) < band_m) & plane.covers(pts)]
    if len(near) < min_points:
        return plane
    h = plane.height(near)
    counts, edges = np.histogram(h, bins=np.arange(-band_m, band_m + bin_m, bin_m))
    k = int(np.argmax(counts))
    at = h[(h >= edges[k] - bin_m) & (h <= edges[k + 1] + bin_m)]
    return replace(plane, d=plane.d - float(np.median(at)) * plane.normal[2])


STANDS_ON_M = 0.01         # settled_known_planes: a fixture's bottom this close to a surface stands on it


def settled_known_planes(planes: list[Plane], bottoms: list, points: np.ndarray, camera_m) -> list[Plane]:
    """Each configured level surface moved to the height the depth shows it at (settled_on_depth);
    one the depth cannot show, a pedestal's top under the book it holds, takes the correction of the
    settled surface its fixture stands on (its bottom, `bottoms[i]`, within STANDS_ON_M of that
    surface, over its footprint; None: not a fixture's top): the camera's pose error lifts a
    pedestal as it lifts the table around it. Left at its configured height, the pedestal's top lay
    9 mm under the depth's (the demo's scene, realistic calibration): the lying book's box reached
    down to it, 2.8 cm thick for 1.6 cm, and the grasps' lower knuckles, set under that box, met the
    table on 6 of 8 frames of the demo's first look (GRASP_FAILED; frame demo-1446-noise1446-frame1)."""
    settled = [settled_on_depth(p, points, camera_m) for p in planes]
    shown = [(p, s) for p, s in zip(planes, settled) if s is not p]
    out = []
    for plane, own, bottom in zip(planes, settled, bottoms):
        base = None if own is not plane or bottom is None else _stood_on(plane, float(bottom), shown)
        out.append(own if base is None else replace(plane, d=plane.d + (base[1].d - base[0].d)))
    return out


def _stood_on(plane: Plane, bottom_z: float, shown: list[tuple[Plane, Plane]]) -> tuple[Plane, Plane] | None:
    """The (configured, settled) surface at `bottom_z` under `plane`'s footprint's centre, if any."""
    cells = np.argwhere(plane.footprint)
    if not len(cells):
        return None
    centre = np.append(plane.origin_xy + (cells.mean(axis=0) + 0.5) * plane.cell_m, bottom_z)[None]
    under = [(c, s) for c, s in shown if c.covers(centre)[0] and abs(c.height(centre)[0]) <= STANDS_ON_M]
    return min(under, key=lambda cs: abs(cs[0].height(centre)[0]), default=None)


SETTLE_M_PER_M2 = 0.004   # settle_band_m: a level surface's height error per squared metre of range


def settle_band_m(plane: Plane, camera: np.ndarray, *, least_m: float = 0.01, most_m: float = 0.03) -> float:
    """How far the depth may show a configured surface from its configured height: a pixel's
    misregistration moves a level surface's height by about its range times its range over the
    camera's height, so the error grows with the square of the range (17 mm at 2.4 m). Beyond it
    the densest height is something lying on the surface: a book covering a 15 cm pedestal whole
    moved the pedestal's plane 27 mm up to the book's top at 1.2 m, and the book became part of
    the surface (pick-86-00000)."""
    cells = np.argwhere(plane.footprint)
    centre = plane.origin_xy + ((cells.mean(axis=0) if len(cells) else 0.0) + 0.5) * plane.cell_m
    range_m = float(np.linalg.norm(np.append(centre, plane.z0) - camera))
    return float(np.clip(SETTLE_M_PER_M2 * range_m ** 2, least_m, most_m))


def box_top_plane(center, size, rotation, *, cell_m: float = 0.02, max_tilt_deg: float = 10.0,
                  min_side_m: float = 0.05) -> Plane | None:
    """The level top face of a configured box (a pedestal, a plinth) as a support plane, its
    footprint the grid cells whose centres lie on the face; None when the box is tilted or its
    top is narrower than `min_side_m` (a holder's wall holds nothing)."""
    c, s, R = (np.asarray(a, float) for a in (center, size, rotation))
    up = int(np.argmax(np.abs(R[2])))
    if abs(R[2, up]) < np.cos(np.radians(max_tilt_deg)):
        return None
    sides = [k for k in range(3) if k != up]
    if min(s[sides]) < min_side_m:
        return None
    top_z = float(c[2] + abs(R[2]) @ s / 2)
    signs = np.array([[a, b] for a in (-1, 1) for b in (-1, 1)], float)
    corners = c[:2] + (signs * s[sides] / 2) @ R[:2, sides].T
    lo = corners.min(axis=0)
    shape = tuple(np.maximum(np.ceil((corners.max(axis=0) - lo) / cell_m).astype(int), 1))
    centres = lo + (np.indices(shape).reshape(2, -1).T + 0.5) * cell_m
    local = (centres - c[:2]) @ R[:2, sides]
    on_face = np.all(np.abs(local) <= s[sides] / 2, axis=1).reshape(shape)
    return Plane(np.array([0.0, 0.0, 1.0]), -top_z, 0, on_face, lo, cell_m)


def with_known_planes(fitted: list[Plane], known: list[Plane], *, same_m: float = 0.02) -> list[Plane]:
    """The configured planes, plus each fitted one that is not one of them (a different height,
    or beside them): the table top, the floor."""
    def duplicate(p: Plane) -> bool:
        probe = np.column_stack([p.origin_xy + (np.argwhere(p.footprint) + 0.5) * p.cell_m,
                                 np.full(int(p.footprint.sum()), p.z0)])
        return any(abs(p.z0 - k.z0) < same_m and k.covers(probe).mean() > 0.5 for k in known)
    return known + [p for p in fitted if not duplicate(p)]


def _largest_patch(pts: np.ndarray, inl: np.ndarray, cell_m: float) -> np.ndarray:
    """Inliers in the largest 8-connected patch of occupied grid cells (gaps of one cell bridged)."""
    out = np.zeros(len(pts), bool)
    if not inl.any():
        return out
    xy = pts[inl, :2]
    lo = xy.min(axis=0)
    ij = np.floor((xy - lo) / cell_m).astype(int)
    grid = np.zeros(tuple(ij.max(axis=0) + 1), bool)
    grid[ij[:, 0], ij[:, 1]] = True
    # Far, grazing surfaces sample sparser than a cell: bridge one empty cell before labelling.
    labels, n = ndimage.label(ndimage.binary_dilation(grid, structure=np.ones((3, 3))), structure=np.ones((3, 3)))
    if n <= 1:
        out[inl] = True
        return out
    lab = labels[ij[:, 0], ij[:, 1]]
    out[np.flatnonzero(inl)] = lab == np.argmax(np.bincount(lab)[1:]) + 1
    return out


def _level_plane(pts, seed: int, inlier_m, max_tilt_deg, iterations, level_hypotheses: int = 5):
    """Best near-horizontal plane (n, d) by inlier count: the point-cloud layer's RANSAC plane
    (normal within max_tilt_deg of +z), or one of the most populated heights as a level plane.

    The heights matter when no surface dominates the view (a shelf seen from the front, the
    floor 14 % of the cloud): RANSAC's best plane is then often a wall, set aside by the tilt."""
    hypotheses = [(UP, -z) for z in _populated_heights(pts[:, 2], inlier_m, level_hypotheses)]
    plane = fit_plane(pts, threshold_m=inlier_m, iterations=iterations, seed=seed, up=UP, max_tilt_deg=max_tilt_deg)
    if plane is not None:
        hypotheses.insert(0, (plane.normal, plane.offset))
    if not hypotheses:
        return None
    counts = [np.count_nonzero(np.abs(pts @ n + d) < inlier_m) for n, d in hypotheses]
    n, d = hypotheses[int(np.argmax(counts))]
    return n, float(d)


def _populated_heights(z: np.ndarray, bin_m: float, count: int) -> np.ndarray:
    """Centres of the `count` fullest height bins (`bin_m` wide) of a cloud."""
    if not len(z) or count < 1:
        return np.zeros(0)
    lo = float(z.min())
    hist = np.bincount(((z - lo) / bin_m).astype(int))
    top = np.argsort(hist)[::-1][:count]
    return lo + (top[hist[top] > 0] + 0.5) * bin_m


def _refine(inliers: np.ndarray):
    """Least-squares plane through inliers (smallest principal axis), normal up."""
    c = inliers.mean(axis=0)
    _, _, vt = np.linalg.svd(inliers - c, full_matrices=False)
    n = vt[2] if vt[2, 2] >= 0 else -vt[2]
    return n, float(-n @ c)


def _with_footprint(n, d, inliers, cell_m, min_piece_m2: float = 0.02) -> Plane:
    lo = inliers[:, :2].min(axis=0) - cell_m
    ij = np.floor((inliers[:, :2] - lo) / cell_m).astype(int)
    shape = tuple(ij.max(axis=0) + 2)
    grid = np.zeros(shape, bool)
    grid[ij[:, 0], ij[:, 1]] = True
    # A detached sliver is something else crossing the plane's height (the pot of a shrub on a
    # plinth behind the table), not a piece of this surface: keep the largest piece and those
    # of at least `min_piece_m2`.
    labels, n_pieces = ndimage.label(ndimage.binary_dilation(grid, structure=np.ones((3, 3))), structure=np.ones((3, 3)))
    if n_pieces > 1:
        cells = np.bincount(labels[grid], minlength=n_pieces + 1)
        keep = cells * cell_m ** 2 >= min_piece_m2
        keep[np.argmax(cells)] = True
        keep[0] = False
        grid &= keep[labels]
    # Objects (and the arm) occlude the surface under them, up to its edge: table tops, boards
    # and floors are convex, so their footprint is the convex hull of what is seen.
    grid = _convex_fill(grid)
    grid = ndimage.binary_dilation(grid, iterations=1)
    return Plane(n, d, int(len(inliers)), grid, lo, cell_m)


def _convex_fill(grid: np.ndarray) -> np.ndarray:
    """The cells whose centres lie in the convex hull of the occupied cells' corners."""
    occupied = np.argwhere(grid)
    corners = (occupied[:, None, :] + np.array([[0, 0], [0, 1], [1, 0], [1, 1]])[None]).reshape(-1, 2)
    try:
        hull = ConvexHull(np.unique(corners, axis=0).astype(float))
    except QhullError:            # all cells in one row or column: nothing to fill
        return grid
    centres = np.indices(grid.shape).reshape(2, -1).T + 0.5
    # inside = on the inner side of every facet (a few tens of half-planes, all cells at once)
    inside = np.all(centres @ hull.equations[:, :2].T + hull.equations[:, 2] <= 1e-9, axis=1)
    return grid | inside.reshape(grid.shape)


def support_of(points: np.ndarray, planes: list[Plane], *, min_height_m: float) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the index of the highest plane it stands above (covered by its footprint
    and at least `min_height_m` over it), or -1; and its height above that plane.

    Points lying on a plane's surface (within `min_height_m` of it, over its footprint, which
    reaches a cell past its edge) are surface, never object; beside it they may be an object
    crossing its height (a statue on a plinth behind the table)."""
    best = np.full(len(points), -1)
    best_h = np.full(len(points), np.nan)
    best_z = np.full(len(points), -np.inf)
    on_surface = np.zeros(len(points), bool)
    for k, p in enumerate(planes):
        h = p.height(points)
        near = np.abs(h) <= min_height_m
        near[near] = p.covers(points[near])
        on_surface |= near
        ok = (h > min_height_m) & (p.z0 > best_z)
        ok[ok] = p.covers(points[ok])
        best[ok], best_h[ok], best_z[ok] = k, h[ok], p.z0
    best[on_surface] = -1
    return best, best_h


def plane_under(points: np.ndarray, planes: list[Plane], *, tolerance_m: float = 0.01) -> Plane | None:
    """The highest plane whose footprint holds the points' centroid and that lies no higher than
    their lowest point (+ tolerance): the surface the object rests on."""
    if not planes or len(points) == 0:
        return None
    centroid = points.mean(axis=0, keepdims=True)
    best = None
    for p in planes:
        if p.covers(centroid)[0] and np.min(p.height(points)) > -tolerance_m:
            if best is None or p.z0 > best.z0:
                best = p
    return best


def height_images(depth_m: np.ndarray, intr, T_base_cam: np.ndarray, planes: list[Plane]) -> np.ndarray:
    """(P, H, W) float32 height of every pixel's point above each plane, straight from the depth
    image (invalid depth gives meaningless values: mask them)."""
    return _affine_images(depth_m, intr, T_base_cam, [(p.normal, p.d) for p in planes])


def surface_image(depth_m: np.ndarray, intr, T_base_cam: np.ndarray, planes: list[Plane], heights: np.ndarray,
                  min_height_m: float) -> np.ndarray:
    """(H, W) bool: pixels on a plane's surface, the image form of `support_of`'s rule (within
    `min_height_m` of the plane and over its footprint)."""
    xy = _affine_images(depth_m, intr, T_base_cam, [((1.0, 0.0, 0.0), 0.0), ((0.0, 1.0, 0.0), 0.0)])
    out = np.zeros(depth_m.shape, bool)
    flat = out.reshape(-1)
    for p, h in zip(planes, heights):
        idx = np.flatnonzero(np.abs(h) <= min_height_m)
        flat[idx[p.covers(np.column_stack([xy[0].reshape(-1)[idx], xy[1].reshape(-1)[idx]]))]] = True
    return out


def _affine_images(depth_m: np.ndarray, intr, T_base_cam: np.ndarray, forms) -> np.ndarray:
    """(K, H, W) float32 value of n . p + d at every pixel's base-frame point p, for each (n, d):
    n . (R z r(u, v) + t) + d = z (R^T n) . r(u, v) + (n . t + d) is linear in u and v, so no
    point cloud is built."""
    h, w = depth_m.shape
    u = (np.arange(w, dtype=np.float32) - intr.cx) / intr.fx
    v = (np.arange(h, dtype=np.float32) - intr.cy) / intr.fy
    R, t = T_base_cam[:3, :3], T_base_cam[:3, 3]
    out = np.empty((len(forms), h, w), np.float32)
    z = np.nan_to_num(depth_m.astype(np.float32, copy=False))
    for k, (n, d) in enumerate(forms):
        n = np.asarray(n, float)
        m = (R.T @ n).astype(np.float32)
        k_img = m[0] * u[None, :] + m[1] * v[:, None] + m[2]
        out[k] = z * k_img + np.float32(n @ t + d)
    return out
