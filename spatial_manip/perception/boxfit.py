"""Oriented box of an object's points, aware of the plane it rests on.

INTERIM: the geometry core's `spatial_manip.geometry.boxes.box_2d_to_box_3d` replaces this
once it lands; every backend calls `fit_box` only, so the swap is one function.

The box's z axis is the support normal, its footprint is the minimum-area rectangle of the
points projected onto the plane (a single view sees the top and the near sides, whose
projections fall on the footprint's edges), its bottom is the plane when the object touches
it (the underside is never visible) and its top a high percentile of the heights.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from spatial_manip.perception.base import OrientedBox

_TRIM_PCT = 0.5   # percent trimmed at each end of each extent: edge pixels and depth noise


def fit_box(points_base: np.ndarray, *, normal=(0.0, 0.0, 1.0), plane_d: float | None = None,
            max_gap_m: float = 0.03) -> OrientedBox:
    """Oriented box of (N, 3) points in the base frame.

    `normal`, `plane_d` describe the support plane n . p + d = 0 (None: no plane known, the
    bottom is the lowest point). When the lowest point is within `max_gap_m` of the plane the
    box extends down to it."""
    p = np.asarray(points_base, float)
    if len(p) < 3:
        raise ValueError(f"need at least 3 points to fit a box, got {len(p)}")
    n = np.asarray(normal, float)
    n = n / np.linalg.norm(n)
    e1 = np.cross(n, [0.0, 1.0, 0.0]) if abs(n[0]) < 0.9 else np.cross(n, [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    uv = np.stack([p @ e1, p @ e2], axis=1)
    h = p @ n + (plane_d if plane_d is not None else 0.0)

    angle = _min_area_angle(uv)
    c, s = np.cos(angle), np.sin(angle)
    ax = np.array([c, s])
    ay = np.array([-s, c])
    a, b = uv @ ax, uv @ ay
    a_lo, a_hi = np.percentile(a, [_TRIM_PCT, 100 - _TRIM_PCT])
    b_lo, b_hi = np.percentile(b, [_TRIM_PCT, 100 - _TRIM_PCT])
    h_lo, h_hi = np.percentile(h, [_TRIM_PCT, 100 - _TRIM_PCT])
    if plane_d is not None and h_lo < max_gap_m:
        h_lo = 0.0
    length, width = a_hi - a_lo, b_hi - b_lo
    x_dir, y_dir = ax, ay
    mid_a, mid_b = (a_lo + a_hi) / 2, (b_lo + b_hi) / 2
    if width > length:          # x is the longer side in the plane
        length, width = width, length
        x_dir, y_dir = ay, -ax
    x3 = x_dir[0] * e1 + x_dir[1] * e2
    if x3[0] < 0 or (abs(x3[0]) < 1e-9 and x3[1] < 0):   # a canonical sign: x points away from the robot
        x3 = -x3
    y3 = np.cross(n, x3)
    R = np.stack([x3, y3, n], axis=1)
    centre_plane = (mid_a * ax + mid_b * ay)
    centre = centre_plane[0] * e1 + centre_plane[1] * e2 + n * ((h_lo + h_hi) / 2 - (plane_d or 0.0))
    size = np.array([max(length, 1e-4), max(width, 1e-4), max(h_hi - h_lo, 1e-4)])
    return OrientedBox(centre, size, R)


def _min_area_angle(uv: np.ndarray) -> float:
    """Angle of the minimum-area bounding rectangle of 2D points (rotating calipers over the
    convex hull's edge directions)."""
    try:
        hull = uv[ConvexHull(uv).vertices]
    except (QhullError, ValueError):
        return 0.0       # degenerate (collinear) footprint: any angle fits
    edges = np.diff(np.vstack([hull, hull[:1]]), axis=0)
    angles = np.unique(np.mod(np.arctan2(edges[:, 1], edges[:, 0]), np.pi / 2))
    c, s = np.cos(angles), np.sin(angles)
    a = hull @ np.stack([c, s])          # (H, A)
    b = hull @ np.stack([-s, c])
    area = (a.max(0) - a.min(0)) * (b.max(0) - b.min(0))
    return float(angles[int(np.argmin(area))])
