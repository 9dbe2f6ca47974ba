"""Point clouds of an observation in the base frame, full or subsampled by pixel stride."""
from __future__ import annotations

import numpy as np

from spatial_manip.camera_model import backproject
from spatial_manip.transforms import apply
from spatial_manip.observation import RGBDObservation


def base_cloud(obs: RGBDObservation, mask: np.ndarray, *, stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) base-frame points of the pixels in `mask` (valid depth only), every `stride`-th
    row and column, and their (N, 2) integer pixel coordinates (u, v)."""
    m = np.asarray(mask, bool)
    if stride > 1:
        sub = np.zeros_like(m)
        sub[::stride, ::stride] = m[::stride, ::stride]
        m = sub
    pts_cam, uv = backproject(obs.depth_m, obs.intrinsics, m)
    return apply(obs.T_base_cam, pts_cam), uv.astype(np.int64)


def pixels_to_mask(uv: np.ndarray, shape: tuple) -> np.ndarray:
    m = np.zeros(shape, bool)
    m[uv[:, 1], uv[:, 0]] = True
    return m
