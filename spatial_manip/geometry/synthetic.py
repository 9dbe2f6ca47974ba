"""Analytic RGB-D frames of boxes on a table: the ground truth for accuracy tests and benchmarks.

A vectorised ray caster (slab test per box, ray-plane for the table); depth is the planar
z-depth of the optical frame, exactly as a RealSense or MuJoCo depth image. No lighting: each
box has one flat colour, the table another, so colour-based segmentation has an edge to find.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import look_at
from spatial_manip.observation import RGBDObservation


@dataclass
class SynthBox:
    center: np.ndarray
    size: np.ndarray
    rotation: np.ndarray
    color: tuple = (200, 60, 40)


def render(intr: CameraIntrinsics, T_base_cam: np.ndarray, boxes: list[SynthBox], table_z: float | None = 0.0,
           table_color=(150, 150, 150), max_depth_m: float = 10.0) -> RGBDObservation:
    """Render depth (metres, 0 = no return), rgb and segmentation (box index, -1 table/none)."""
    v, u = np.mgrid[0:intr.height, 0:intr.width]
    d_cam = np.stack([(u.ravel() - intr.cx) / intr.fx, (v.ravel() - intr.cy) / intr.fy,
                      np.ones(u.size)], axis=1)  # z = 1: the ray parameter is the z-depth
    R, o = T_base_cam[:3, :3], T_base_cam[:3, 3]
    d = d_cam @ R.T
    best = np.full(u.size, np.inf)
    seg = np.full(u.size, -1, np.int32)
    if table_z is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (table_z - o[2]) / d[:, 2]
        best = np.where(t > 0, t, np.inf)
    for i, b in enumerate(boxes):
        idx = _candidate_pixels(intr, T_base_cam, b)  # only rays near the box's image (speed)
        if idx is None:
            continue
        t = _ray_box(o, d[idx], b)
        hit = t < best[idx]
        best[idx[hit]], seg[idx[hit]] = t[hit], i
    depth = np.where(best < max_depth_m, best, 0.0).astype(np.float32).reshape(intr.height, intr.width)
    colors = np.array([b.color for b in boxes] + [table_color], np.uint8)
    rgb = colors[np.where(seg >= 0, seg, len(boxes))].reshape(intr.height, intr.width, 3)
    rgb[depth == 0] = 0
    return RGBDObservation(rgb=rgb, depth_m=depth, intrinsics=intr, T_base_cam=T_base_cam,
                           segmentation=seg.reshape(intr.height, intr.width),
                           segment_ids={i: f"box{i}" for i in range(len(boxes))})


def _candidate_pixels(intr, T_base_cam, b: SynthBox):
    """Flat indices of the pixels inside the image rectangle of the box's corners (all pixels when
    a corner is behind the camera), or None when the box is entirely behind it."""
    s = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    corners = b.center + (s * np.asarray(b.size) / 2) @ np.asarray(b.rotation).T
    pc = (corners - T_base_cam[:3, 3]) @ T_base_cam[:3, :3]
    if np.all(pc[:, 2] <= 0):
        return None
    if np.any(pc[:, 2] <= 1e-6):
        return np.arange(intr.width * intr.height)
    u = intr.fx * pc[:, 0] / pc[:, 2] + intr.cx
    v = intr.fy * pc[:, 1] / pc[:, 2] + intr.cy
    u0, u1 = int(np.clip(np.floor(u.min()) - 1, 0, intr.width)), int(np.clip(np.ceil(u.max()) + 2, 0, intr.width))
    v0, v1 = int(np.clip(np.floor(v.min()) - 1, 0, intr.height)), int(np.clip(np.ceil(v.max()) + 2, 0, intr.height))
    if u1 <= u0 or v1 <= v0:
        return None
    vv, uu = np.mgrid[v0:v1, u0:u1]
    return (vv * intr.width + uu).ravel()


def _ray_box(o: np.ndarray, d: np.ndarray, b: SynthBox) -> np.ndarray:
    """Entry parameter of rays o + t d into an oriented box (inf where missed)."""
    R = np.asarray(b.rotation, float)
    ol = (o - b.center) @ R
    dl = d @ R
    half = np.asarray(b.size, float) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (-half - ol) / dl
        t2 = (half - ol) / dl
    tmin = np.nanmax(np.minimum(t1, t2), axis=1)
    tmax = np.nanmin(np.maximum(t1, t2), axis=1)
    return np.where((tmax >= tmin) & (tmin > 0), tmin, np.inf)


def random_lying_box(rng: np.random.Generator, table_z: float = 0.0, xy_range=((0.35, 0.65), (-0.2, 0.2)),
                     size_range=((0.06, 0.22), (0.04, 0.15), (0.02, 0.08))) -> SynthBox:
    """A box resting on the table with a random yaw (a book lying flat, a carton)."""
    size = np.array([rng.uniform(*r) for r in size_range])
    size[:2] = np.sort(size[:2])[::-1]
    if size[0] - size[1] < 0.01:  # keep x the clearly longer side so yaw is well defined
        size[0] = size[1] + 0.01
    yaw = rng.uniform(-np.pi, np.pi)
    c = np.array([rng.uniform(*xy_range[0]), rng.uniform(*xy_range[1]), table_z + size[2] / 2])
    color = tuple(int(x) for x in rng.integers(30, 256, 3))
    return SynthBox(c, size, Rotation.from_euler("z", yaw).as_matrix(), color)


def random_camera(rng: np.random.Generator, target=(0.5, 0.0, 0.0), distance=(0.6, 1.1),
                  elevation_deg=(40, 80)) -> np.ndarray:
    """A camera looking at the table from in front or the side (as an eye-to-hand L515)."""
    el = np.radians(rng.uniform(*elevation_deg))
    az = rng.uniform(-np.pi, np.pi)
    r = rng.uniform(*distance)
    t = np.asarray(target, float) + rng.normal(0, 0.03, 3) * [1, 1, 0]
    eye = t + r * np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    return look_at(eye, t)


def box_pixel_bounds(obs: RGBDObservation, index: int, pad_px: int = 4) -> list[int] | None:
    """[x0, y0, x1, y1] of a rendered box's visible pixels, padded (None if not visible)."""
    ys, xs = np.nonzero(obs.segmentation == index)
    if ys.size == 0:
        return None
    h, w = obs.depth_m.shape
    return [max(0, xs.min() - pad_px), max(0, ys.min() - pad_px), min(w, xs.max() + 1 + pad_px),
            min(h, ys.max() + 1 + pad_px)]
