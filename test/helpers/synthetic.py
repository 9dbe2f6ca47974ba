"""Analytic depth rendering of boxes on a table for grasp tests (no simulator, no randomness).

World = base frame (z up). The camera looks at the table from the front and above.
"""
from __future__ import annotations

import numpy as np

from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.transforms import look_at


def render_boxes(boxes, *, table_z=0.0, table_half=(0.4, 0.5), T_base_cam=None, intr=None):
    """Depth (metres) of axis-aligned boxes [(center, size), ...] on a finite table top.

    Returns (depth, intr, T_base_cam, label image: -1 none, 0 table, i+1 box i).
    """
    intr = intr or CameraIntrinsics.from_fovy(320, 240, 55.0)
    T = look_at((0.0, 0.0, 0.55), (0.5, 0.0, 0.0)) if T_base_cam is None else T_base_cam
    v, u = np.mgrid[0:intr.height, 0:intr.width]
    d_cam = np.stack([(u - intr.cx) / intr.fx, (v - intr.cy) / intr.fy, np.ones_like(u, float)], -1).reshape(-1, 3)
    d = d_cam @ T[:3, :3].T
    o = T[:3, 3]
    best = np.full(len(d), np.inf)
    label = np.full(len(d), -1)
    # table top: z = table_z, within x in [0.5 +- hx], y in [+- hy]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (table_z - o[2]) / d[:, 2]
        hit = o + t[:, None] * d
        ok = (t > 0) & (np.abs(hit[:, 0] - 0.5) <= table_half[0]) & (np.abs(hit[:, 1]) <= table_half[1])
    best[ok], label[ok] = t[ok], 0
    for i, (c, s) in enumerate(boxes):
        lo, hi = np.asarray(c) - np.asarray(s) / 2, np.asarray(c) + np.asarray(s) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (lo - o) / d, (hi - o) / d
        tn = np.nanmax(np.minimum(t1, t2), axis=1)
        tf = np.nanmin(np.maximum(t1, t2), axis=1)
        ok = (tn <= tf) & (tn > 0) & (tn < best)
        best[ok], label[ok] = tn[ok], i + 1
    z_cam = np.where(np.isfinite(best), best, 0.0)  # d_cam has z = 1, so t is the optical depth
    depth = z_cam.reshape(intr.height, intr.width).astype(np.float32)
    return depth, intr, T, label.reshape(intr.height, intr.width)


def box_scene(boxes, **kw):
    """Camera-frame cloud, per-point labels, T_base_cam, up (camera frame)."""
    depth, intr, T, label = render_boxes(boxes, **kw)
    pts, uv = backproject(depth, intr)
    lab = label[uv[:, 1], uv[:, 0]]
    up_cam = T[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    return pts, lab, T, up_cam
