"""Pinhole camera model: intrinsics, back-projection and projection (camera optical frame:
x right, y down, z forward, metres)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class CameraIntrinsics:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    distortion_model: str = "plumb_bob"
    distortion: tuple = field(default=(0.0, 0.0, 0.0, 0.0, 0.0))

    def __post_init__(self):
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"image size must be positive, got {self.width}x{self.height}")
        if not (self.fx > 0 and self.fy > 0 and np.isfinite([self.cx, self.cy]).all()):
            raise ValueError(f"focal lengths must be positive and centre finite, got fx={self.fx} fy={self.fy}")

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1.0]])

    @classmethod
    def from_K(cls, K, width: int, height: int, **kw) -> "CameraIntrinsics":
        K = np.asarray(K, float).reshape(3, 3)
        return cls(width, height, K[0, 0], K[1, 1], K[0, 2], K[1, 2], **kw)

    @classmethod
    def from_fovy(cls, width: int, height: int, fovy_deg: float) -> "CameraIntrinsics":
        """Square pixels, centred principal point (as MuJoCo renders): fy = 0.5 H / tan(fovy/2)."""
        f = 0.5 * height / np.tan(np.radians(fovy_deg) / 2)
        return cls(width, height, f, f, (width - 1) / 2, (height - 1) / 2)

    def scaled(self, width: int, height: int) -> "CameraIntrinsics":
        sx, sy = width / self.width, height / self.height
        return CameraIntrinsics(width, height, self.fx * sx, self.fy * sy, self.cx * sx, self.cy * sy,
                                self.distortion_model, self.distortion)


def valid_depth_mask(depth_m: np.ndarray, min_m: float = 0.05, max_m: float = 10.0) -> np.ndarray:
    """Pixels with a usable depth: finite, and within the sensor's range (0 means no return)."""
    d = np.asarray(depth_m)
    with np.errstate(invalid="ignore"):
        return np.isfinite(d) & (d > min_m) & (d < max_m)


def backproject(depth_m: np.ndarray, intr: CameraIntrinsics, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Points (N, 3) in the camera optical frame for valid pixels, and their (N, 2) pixel (u, v).

    Vectorised; invalid, zero and out-of-range depth is dropped. `mask` restricts to a region.
    """
    d = np.asarray(depth_m, dtype=np.float32)
    if d.shape != (intr.height, intr.width):
        raise ValueError(f"depth is {d.shape[1]}x{d.shape[0]} but the intrinsics are {intr.width}x{intr.height}")
    ok = valid_depth_mask(d)
    if mask is not None:
        ok &= np.asarray(mask, bool)
    v, u = np.nonzero(ok)
    z = d[v, u].astype(np.float64)
    x = (u - intr.cx) * z / intr.fx
    y = (v - intr.cy) * z / intr.fy
    return np.stack([x, y, z], axis=1), np.stack([u, v], axis=1)


def project(points_cam: np.ndarray, intr: CameraIntrinsics) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (N, 2) float of camera-frame points, and a mask of those in front of
    the camera and inside the image."""
    p = np.atleast_2d(np.asarray(points_cam, float))
    z = p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = intr.fx * p[:, 0] / z + intr.cx
        v = intr.fy * p[:, 1] / z + intr.cy
    inside = (z > 0) & (u >= -0.5) & (u < intr.width - 0.5) & (v >= -0.5) & (v < intr.height - 0.5)
    return np.stack([u, v], axis=1), inside
