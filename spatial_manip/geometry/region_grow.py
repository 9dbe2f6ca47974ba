"""A classical region grower: the object mask in a pixel box, or around a seed pixel, from depth
discontinuities, colour edges and the support plane. Pure numpy/scipy, no learned model.

Pixels are cut where a 4-neighbour jumps in depth (more than `depth_jump_m` + `depth_jump_rel`
x range) or in colour (more than `color_tol` in RGB), and where they lie on the support plane
found around the region (an object on a table is depth-continuous with it at the contact line;
the plane test separates them). The grown region is the connected component holding the seed
(or, for a box, the largest component touching the box's central half), then widened by one
pixel to take back its own border pixels.

The perception layer wraps this behind its Segmenter protocol; this function stays standalone.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from spatial_manip.geometry.boxes import _points, _ring_points, fit_support_plane
from spatial_manip.camera_model import valid_depth_mask
from spatial_manip.observation import RGBDObservation


@dataclass(frozen=True)
class RegionGrowConfig:
    depth_jump_m: float = 0.008
    depth_jump_rel: float = 0.01
    color_tol: float = 60.0          # Euclidean RGB distance between neighbours
    plane_tol_m: float = 0.006
    use_plane: bool = True
    window_px: int = 120             # half-size of the search window around a seed point
    min_area_px: int = 20
    seed: int = 0

    def __post_init__(self):
        if self.depth_jump_m <= 0 or self.color_tol <= 0 or self.window_px < 4:
            raise ValueError("depth_jump_m and color_tol must be > 0 and window_px >= 4")


def _crop(shape, box, point, window):
    h, w = shape
    if box is not None:
        x0, y0, x1, y1 = (int(round(float(c))) for c in np.asarray(box, float).reshape(4))
        x0, x1, y0, y1 = max(0, min(x0, x1)), min(w, max(x0, x1)), max(0, min(y0, y1)), min(h, max(y0, y1))
    else:
        u, v = (int(round(float(c))) for c in np.asarray(point, float).reshape(2))
        if not (0 <= u < w and 0 <= v < h):
            raise ValueError(f"seed pixel ({u}, {v}) is outside the {w}x{h} image")
        x0, x1, y0, y1 = max(0, u - window), min(w, u + window + 1), max(0, v - window), min(h, v + window + 1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        raise ValueError(f"the region {box} covers fewer than 2x2 pixels")
    return y0, y1, x0, x1


def _cuts(depth, rgb, ok, cfg):
    """Pixels with a depth or colour edge to a 4-neighbour (or no valid depth)."""
    d = np.where(ok, depth, np.nan).astype(np.float64)
    c = rgb.astype(np.float32)
    cut = ~ok
    for axis in (0, 1):
        dd = np.abs(np.diff(d, axis=axis))
        tol = cfg.depth_jump_m + cfg.depth_jump_rel * np.fmin(
            np.take(d, range(d.shape[axis] - 1), axis=axis), np.take(d, range(1, d.shape[axis]), axis=axis))
        dc = np.sqrt((np.diff(c, axis=axis) ** 2).sum(axis=-1))
        with np.errstate(invalid="ignore"):
            edge = (dd > tol) | (dc > cfg.color_tol)
        lo = [slice(None)] * 2
        hi = [slice(None)] * 2
        lo[axis], hi[axis] = slice(0, -1), slice(1, None)
        cut[tuple(lo)] |= edge
        cut[tuple(hi)] |= edge
    return cut


def object_segmentation(obs: RGBDObservation, box=None, point=None, *,
                        config: RegionGrowConfig | None = None) -> np.ndarray:
    """Boolean (H, W) mask of the object in pixel box [x0, y0, x1, y1] or at seed pixel (u, v).
    Raises ValueError when neither is given or nothing object-like is found there."""
    cfg = config or RegionGrowConfig()
    if box is None and point is None:
        raise ValueError("give a pixel box [x0, y0, x1, y1] or a seed point [u, v]")
    y0, y1, x0, x1 = _crop(obs.depth_m.shape, box, point, cfg.window_px)
    depth, rgb = obs.depth_m[y0:y1, x0:x1], obs.rgb[y0:y1, x0:x1]
    ok = valid_depth_mask(depth)
    if cfg.use_plane and ok.any():
        plane = fit_support_plane(_ring_points(obs, (y0, y1, x0, x1), 12, None), np.random.default_rng(cfg.seed),
                                  cfg.plane_tol_m)
        if box is None:  # a seed window is mostly table: fit the plane inside it instead
            ys, xs = np.nonzero(ok)
            step = max(1, ys.size // 800)
            inner = _points(obs, ys[::step] + y0, xs[::step] + x0)
            plane = fit_support_plane(inner, np.random.default_rng(cfg.seed), cfg.plane_tol_m) or plane
        if plane is not None:
            ys, xs = np.nonzero(ok)
            on_plane = plane.height(_points(obs, ys + y0, xs + x0)) <= cfg.plane_tol_m
            ok[ys[on_plane], xs[on_plane]] = False
    core = ~_cuts(depth, rgb, ok, cfg)
    labels, n = ndimage.label(core)
    if n == 0:
        raise ValueError("no object-like region found: every pixel is an edge, the support plane, or has no depth")
    label = _pick(labels, n, box, point, (y0, x0))
    region = labels == label
    # take back the object's own border pixels (cut because their other neighbour is an edge)
    grown = ndimage.binary_dilation(region) & ok & _similar(depth, rgb, region, cfg)
    mask = np.zeros(obs.depth_m.shape, bool)
    mask[y0:y1, x0:x1] = region | grown
    if mask.sum() < cfg.min_area_px:
        raise ValueError(f"the grown region has only {int(mask.sum())} pixels (minimum {cfg.min_area_px})")
    return mask


def _similar(depth, rgb, region, cfg):
    d_med = np.median(depth[region])
    c_med = np.median(rgb[region].reshape(-1, 3), axis=0)
    near = np.abs(depth - d_med) < max(0.05, 5 * np.std(depth[region]))
    return near & (np.sqrt(((rgb.astype(np.float32) - c_med) ** 2).sum(-1)) < 2 * cfg.color_tol)


def _pick(labels, n, box, point, origin) -> int:
    counts = np.bincount(labels.ravel(), minlength=n + 1)
    counts[0] = 0
    if point is not None:
        u, v = (int(round(float(c))) for c in np.asarray(point, float).reshape(2))
        lab = labels[v - origin[0], u - origin[1]]
        if lab:
            return int(lab)
        # seed on an edge pixel: the largest component within a few pixels of it
        win = labels[max(0, v - origin[0] - 3):v - origin[0] + 4, max(0, u - origin[1] - 3):u - origin[1] + 4]
        near = np.unique(win[win > 0])
        if near.size == 0:
            raise ValueError(f"the seed pixel ({u}, {v}) is on the support plane, an edge, or has no depth")
        return int(near[np.argmax(counts[near])])
    h, w = labels.shape
    centre = labels[h // 4:h - h // 4, w // 4:w - w // 4]
    cand = np.unique(centre[centre > 0])
    if cand.size == 0:
        cand = np.arange(1, n + 1)
    return int(cand[np.argmax(counts[cand])])
