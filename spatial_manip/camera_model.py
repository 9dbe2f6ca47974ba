"""Pinhole camera model: intrinsics, back-projection and projection (camera optical frame:
x right, y down, z forward, metres)."""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
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
        object.__setattr__(self, "distortion", tuple(float(c) for c in self.distortion))
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

    @classmethod
    def from_camera_info(cls, info) -> "CameraIntrinsics":
        """From a sensor_msgs/CameraInfo message or a dict with its fields (k, d, width, height,
        distortion_model); upper-case K/D as in ROS 1 dicts also work."""
        get = (lambda k: info.get(k, info.get(k.upper()))) if isinstance(info, dict) else (lambda k: getattr(info, k, None))
        k, w, h = get("k"), get("width"), get("height")
        if k is None or w is None or h is None:
            raise ValueError(f"camera_info needs 'k' (9 numbers), 'width' and 'height'; got keys "
                             f"{sorted(info) if isinstance(info, dict) else type(info).__name__}")
        d = tuple(float(x) for x in (get("d") if get("d") is not None else ()))
        model = str(get("distortion_model") or "plumb_bob")
        if model not in DISTORTION_MODELS:
            raise ValueError(f"distortion model {model!r} is not supported; use one of {DISTORTION_MODELS}")
        return cls.from_K(np.asarray(k, float), int(w), int(h), distortion_model=model,
                          distortion=_five(d))

    @classmethod
    def from_realsense(cls, rs_intr) -> "CameraIntrinsics":
        """From a pyrealsense2.intrinsics (duck-typed: fx fy ppx ppy width height model coeffs)."""
        name = getattr(rs_intr.model, "name", str(rs_intr.model)).split(".")[-1]
        model = _RS_MODELS.get(name)
        if model is None:
            raise ValueError(f"RealSense distortion {name!r} is not supported; expected one of {sorted(_RS_MODELS)}")
        return cls(int(rs_intr.width), int(rs_intr.height), float(rs_intr.fx), float(rs_intr.fy),
                   float(rs_intr.ppx), float(rs_intr.ppy), model, _five(rs_intr.coeffs))

    @property
    def has_distortion(self) -> bool:
        return any(abs(float(c)) > 0 for c in self.distortion)

    def to_camera_info(self) -> dict:
        return {"width": self.width, "height": self.height, "k": self.K.reshape(-1).tolist(),
                "d": [float(c) for c in self.distortion], "distortion_model": self.distortion_model}

    def scaled(self, width: int, height: int) -> "CameraIntrinsics":
        sx, sy = width / self.width, height / self.height
        return CameraIntrinsics(width, height, self.fx * sx, self.fy * sy, self.cx * sx, self.cy * sy,
                                self.distortion_model, self.distortion)


# plumb_bob = OpenCV/ROS Brown-Conrady (k1, k2, p1, p2, k3) mapping ideal -> distorted;
# inverse_brown_conrady = librealsense's variant whose polynomial maps distorted -> ideal.
DISTORTION_MODELS = ("plumb_bob", "inverse_brown_conrady")
_RS_MODELS = {"none": "plumb_bob", "brown_conrady": "plumb_bob", "modified_brown_conrady": "plumb_bob",
              "inverse_brown_conrady": "inverse_brown_conrady"}


def _five(coeffs) -> tuple:
    c = [float(x) for x in coeffs][:5]
    return tuple(c + [0.0] * (5 - len(c)))


def _brown(xy: np.ndarray, d) -> np.ndarray:
    """Brown-Conrady polynomial on normalised coordinates (N, 2), as OpenCV's projectPoints
    applies it; written out because projectPoints takes 450 ms on a 640x480 frame, this 10 ms."""
    k1, k2, p1, p2, k3 = d
    x, y = xy[:, 0], xy[:, 1]
    r2 = x * x + y * y
    radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
    return np.stack([x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x),
                     y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y], axis=1)


_INVERSE_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-12)


def _brown_inverse(xy_target: np.ndarray, d) -> np.ndarray:
    """The xy whose Brown polynomial is `xy_target`: OpenCV's iterative undistortion (20
    iterations at most; its default 5 leaves 1e-4 of a strong lens's edge)."""
    src = np.ascontiguousarray(xy_target, dtype=np.float64).reshape(-1, 1, 2)
    out = cv2.undistortPointsIter(src, np.eye(3), np.asarray(d, float), None, None, _INVERSE_CRITERIA)
    return out.reshape(-1, 2)


def undistort_normalized(xy_distorted: np.ndarray, intr: CameraIntrinsics) -> np.ndarray:
    """Ideal normalised coordinates (x/z, y/z) of distorted normalised coordinates."""
    return _through_distortion(xy_distorted, intr, distort=False)


def distort_normalized(xy_ideal: np.ndarray, intr: CameraIntrinsics) -> np.ndarray:
    return _through_distortion(xy_ideal, intr, distort=True)


def _through_distortion(xy, intr: CameraIntrinsics, *, distort: bool) -> np.ndarray:
    """Brown's formula distorts plumb_bob coordinates; librealsense's inverse_brown_conrady model
    is the other way round (its formula undistorts), so each direction is the other's inverse."""
    xy = np.asarray(xy, float).reshape(-1, 2)
    if not intr.has_distortion:
        return xy
    formula_distorts = intr.distortion_model != "inverse_brown_conrady"
    through = _brown if distort == formula_distorts else _brown_inverse
    out = np.full_like(xy, np.nan)
    finite = np.isfinite(xy).all(axis=1)        # a point at z = 0 has no image: it stays NaN
    if finite.any():
        out[finite] = through(xy[finite], intr.distortion)
    return out


def undistort_points(pixels: np.ndarray, intr: CameraIntrinsics) -> np.ndarray:
    """Pixels (N, 2) as an ideal pinhole camera with the same K would have seen them."""
    uv = np.asarray(pixels, float).reshape(-1, 2)
    xy = np.stack([(uv[:, 0] - intr.cx) / intr.fx, (uv[:, 1] - intr.cy) / intr.fy], axis=1)
    xy = undistort_normalized(xy, intr)
    return np.stack([xy[:, 0] * intr.fx + intr.cx, xy[:, 1] * intr.fy + intr.cy], axis=1)


def pixel_rays(u: np.ndarray, v: np.ndarray, intr: CameraIntrinsics) -> tuple[np.ndarray, np.ndarray]:
    """Normalised ray coordinates (x/z, y/z) of pixel centres, distortion removed."""
    x = (np.asarray(u, float) - intr.cx) / intr.fx
    y = (np.asarray(v, float) - intr.cy) / intr.fy
    if intr.has_distortion:
        xy = undistort_normalized(np.stack([x.ravel(), y.ravel()], axis=1), intr)
        x, y = xy[:, 0].reshape(x.shape), xy[:, 1].reshape(y.shape)
    return x, y


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
    z = d[ok].astype(np.float64)
    if intr.has_distortion:
        rx, ry = pixel_rays(u, v, intr)
    else:  # per-column and per-row factors: two small tables instead of per-pixel arithmetic
        rx = ((np.arange(intr.width) - intr.cx) / intr.fx)[u]
        ry = ((np.arange(intr.height) - intr.cy) / intr.fy)[v]
    out = np.empty((z.size, 3))
    np.multiply(rx, z, out=out[:, 0])
    np.multiply(ry, z, out=out[:, 1])
    out[:, 2] = z
    return out, np.stack([u, v], axis=1)


def project(points_cam: np.ndarray, intr: CameraIntrinsics) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (N, 2) float of camera-frame points, and a mask of those in front of
    the camera and inside the image."""
    p = np.atleast_2d(np.asarray(points_cam, float))
    z = p[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        xy = np.stack([p[:, 0] / z, p[:, 1] / z], axis=1)
    if intr.has_distortion:
        xy = distort_normalized(xy, intr)
    u = intr.fx * xy[:, 0] + intr.cx
    v = intr.fy * xy[:, 1] + intr.cy
    inside = (z > 0) & (u >= -0.5) & (u < intr.width - 0.5) & (v >= -0.5) & (v < intr.height - 0.5)
    return np.stack([u, v], axis=1), inside
