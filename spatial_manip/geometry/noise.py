"""An L515-like depth noise model, shared by the accuracy tests and the simulator's camera.

What a lidar-style RealSense L515 does to a clean depth image, in order:
- range noise: Gaussian, standard deviation growing with range (sigma = a + b z^2);
- flying pixels: at depth discontinuities the return mixes foreground and background, giving
  points strewn along the ray between the two surfaces;
- holes: no return (0) at some edge pixels and in small random blobs (dark or specular spots);
- quantisation: the ROS driver publishes 16-bit millimetres.

Usage: `noisy = L515Noise().apply(depth_m, rng)` (float32 metres, 0 = no return). Every draw
comes from the Generator passed in, so a seed reproduces a frame exactly. A camera watching a still
scene prepares its clean depth once (`prepare`) and draws each frame's noise on it (`apply_to`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import ndimage


@dataclass(frozen=True)
class L515Noise:
    sigma_base_m: float = 0.0015       # about 2.5-3 mm at 1 m, as the L515's datasheet precision
    sigma_quad_m_per_m2: float = 0.0015
    edge_jump_m: float = 0.02          # a neighbour farther than this marks a depth edge
    flying_prob: float = 0.5           # edge pixels that become flying pixels
    edge_hole_prob: float = 0.15       # edge pixels with no return
    hole_blob_prob: float = 0.0008     # seeds of random hole blobs per pixel
    hole_blob_radius_px: int = 2
    quantum_m: float = 0.001           # 0 disables quantisation

    def __post_init__(self):
        for name in ("sigma_base_m", "sigma_quad_m_per_m2", "edge_jump_m", "quantum_m"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("flying_prob", "edge_hole_prob", "hole_blob_prob"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} is a probability in [0, 1], got {getattr(self, name)}")

    def scaled(self, k: float) -> L515Noise:
        """This model with range noise and the rates of flying pixels and holes times `k`
        (the sensing profile's harsh = 2). Edge pixels stay at most 80% flying, so some edges
        still have holes; the other probabilities stop at 1."""
        if k < 0:
            raise ValueError(f"a noise scale is >= 0, got {k}")
        fly = min(0.8, self.flying_prob * k)
        return replace(self, sigma_base_m=self.sigma_base_m * k, sigma_quad_m_per_m2=self.sigma_quad_m_per_m2 * k,
                       flying_prob=fly, edge_hole_prob=min(1.0 - fly, self.edge_hole_prob * k),
                       hole_blob_prob=min(1.0, self.hole_blob_prob * k))

    def sigma_m(self, z_m: np.ndarray) -> np.ndarray:
        return self.sigma_base_m + self.sigma_quad_m_per_m2 * np.asarray(z_m) ** 2

    def apply(self, depth_m: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.apply_to(self.prepare(depth_m), rng)

    def prepare(self, depth_m: np.ndarray) -> CleanDepth:
        """What a frame's noise takes from its clean depth alone: a camera watching a still scene
        prepares it once and draws each frame's noise on it (`apply_to`)."""
        d = np.asarray(depth_m, np.float64)
        valid = np.isfinite(d) & (d > 0)
        d = np.where(valid, d, 0.0)
        near, far = _edge_neighbours(d, valid)
        return CleanDepth(d, valid, self.sigma_m(d), near, far, far > near + self.edge_jump_m)

    def apply_to(self, clean: CleanDepth, rng: np.random.Generator) -> np.ndarray:
        """One frame's noise on `clean` (float32 metres, 0 = no return); `clean` is left as it was."""
        d, shape = clean.depth_m, clean.depth_m.shape
        out = d + rng.standard_normal(shape) * clean.sigma_m
        fly = clean.edge & (rng.random(shape) < self.flying_prob)
        mix = rng.random(shape)
        out = np.where(fly, clean.near_m + mix * (clean.far_m - clean.near_m), out)
        holes = clean.edge & ~fly & (rng.random(shape) < self.edge_hole_prob / max(1 - self.flying_prob, 1e-9))
        if self.hole_blob_prob > 0:
            holes |= _diamonds(rng.random(shape) < self.hole_blob_prob, self.hole_blob_radius_px)
        out[holes | ~clean.valid] = 0.0
        if self.quantum_m > 0:
            out = np.round(out / self.quantum_m) * self.quantum_m
        return np.maximum(out, 0.0).astype(np.float32)


@dataclass(frozen=True)
class CleanDepth:
    """A clean depth image as L515Noise.apply_to takes it (L515Noise.prepare)."""
    depth_m: np.ndarray         # float64 metres, 0 where there is no return
    valid: np.ndarray           # where there is one
    sigma_m: np.ndarray         # the range noise's standard deviation per pixel
    near_m: np.ndarray          # the nearest and farthest valid depth around each pixel
    far_m: np.ndarray
    edge: np.ndarray            # depth edges: where flying pixels and edge holes come


def _diamonds(seeds: np.ndarray, radius_px: int) -> np.ndarray:
    """`seeds` grown by `radius_px` steps of 4-connected neighbours, as ndimage.binary_dilation
    with its default cross `radius_px` times, for the few seeds of hole blobs: placed around each
    seed instead of filtering the whole image."""
    out = np.zeros_like(seeds)
    v, u = np.nonzero(seeds)
    h, w = seeds.shape
    for dv in range(-radius_px, radius_px + 1):
        for du in range(abs(dv) - radius_px, radius_px - abs(dv) + 1):
            vv, uu = v + dv, u + du
            inside = (vv >= 0) & (vv < h) & (uu >= 0) & (uu < w)
            out[vv[inside], uu[inside]] = True
    return out


def _edge_neighbours(d: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nearest and farthest valid depth in each pixel's 3x3 neighbourhood."""
    big = np.where(valid, d, np.inf)
    small = np.where(valid, d, -np.inf)
    near = ndimage.minimum_filter(big, size=3, mode="nearest")
    far = ndimage.maximum_filter(small, size=3, mode="nearest")
    near = np.where(np.isfinite(near), near, d)
    far = np.where(np.isfinite(far), far, d)
    return near, far
