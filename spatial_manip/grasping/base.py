"""The `GraspProposer` protocol (AnyGrasp's call signature) and the input checks every backend shares."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from spatial_manip.errors import InvalidGoalError
from spatial_manip.grasping.grasp_group import GraspGroup

MIN_POINTS = 50            # fewer points than this cannot support a grasp hypothesis
MM_DEPTH_THRESHOLD_M = 20  # a mean depth beyond 20 "metres" is a millimetre cloud, not a far scene


@runtime_checkable
class GraspProposer(Protocol):
    """6-DoF grasps from a camera-frame point cloud, as AnyGrasp's `get_grasp`.

    points: (N, 3) float metres in the camera optical frame; colors: (N, 3) in [0, 1] or None.
    lims: [xmin, xmax, ymin, ymax, zmin, zmax] bounding the grasp points (camera frame).
    Returns (GraspGroup in the camera frame, the cloud used). An empty group carries a `note`.
    """

    def get_grasp(self, points, colors, lims=None, apply_object_mask=True, dense_grasp=False,
                  collision_detection=True, **kw) -> tuple[GraspGroup, np.ndarray]: ...


@dataclass(frozen=True)
class ObjectBox:
    """The target's perceived box in the proposer's (camera) frame: centre, full size and
    rotation (columns = box axes). The camera sees an object's front only; the box (fitted by
    perception, completed from the enrolled object's size) says how far it reaches behind."""

    center: np.ndarray
    size: np.ndarray
    rotation: np.ndarray

    def chords(self, points: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each line `points[i] + s * directions[i]` (unit directions) enters and leaves the
        box: (s_in, s_out), NaN for a line that misses it."""
        p = (np.asarray(points, float) - self.center) @ self.rotation
        d = np.asarray(directions, float) @ self.rotation
        half = np.asarray(self.size, float) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (-half - p) / d, (half - p) / d
        parallel = np.abs(d) < 1e-12
        # a line parallel to a slab is inside it everywhere or nowhere
        lo = np.where(parallel, np.where(np.abs(p) <= half, -np.inf, np.inf), np.minimum(t1, t2))
        hi = np.where(parallel, np.where(np.abs(p) <= half, np.inf, -np.inf), np.maximum(t1, t2))
        s_in, s_out = lo.max(axis=1), hi.min(axis=1)
        miss = ~(s_in < s_out)
        return np.where(miss, np.nan, s_in), np.where(miss, np.nan, s_out)


def validate_cloud(points, colors=None, *, min_points: int = MIN_POINTS) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Check and clean a cloud: returns (finite points float64, matching colours, kept mask).

    Raises InvalidGoalError for wrong shapes, millimetre units, or too few finite points.
    """
    p = np.asarray(points)
    if p.ndim != 2 or p.shape[1] != 3:
        raise InvalidGoalError(f"points must be an (N, 3) array in metres, got shape {p.shape}")
    if not np.issubdtype(p.dtype, np.number):
        raise InvalidGoalError(f"points must be numeric, got dtype {p.dtype}")
    p = p.astype(np.float64, copy=False)
    ok = np.isfinite(p).all(axis=1)
    n_ok = int(ok.sum())
    if n_ok < min_points:
        raise InvalidGoalError(f"the cloud has {n_ok} finite points (of {p.shape[0]}); a grasp needs at least "
                               f"{min_points}: check the depth image, the crop box and the target mask")
    mean_depth = float(np.mean(np.abs(p[ok, 2])))
    if mean_depth > MM_DEPTH_THRESHOLD_M:
        raise InvalidGoalError(f"mean depth is {mean_depth:.1f}: the cloud looks like millimetres; "
                               "divide by 1000 (points must be metres in the camera frame)")
    c = None
    if colors is not None:
        c = np.asarray(colors)
        if c.shape != p.shape:
            raise InvalidGoalError(f"colors must match points {p.shape}, got {c.shape}")
        c = c[ok]
    return p[ok], c, ok


def lims_mask(points: np.ndarray, lims) -> np.ndarray:
    """Points inside [xmin, xmax, ymin, ymax, zmin, zmax]."""
    lo_hi = np.asarray(lims, float).reshape(-1)
    if lo_hi.shape != (6,) or not np.all(np.isfinite(lo_hi)):
        raise InvalidGoalError(f"lims must be 6 finite numbers [xmin, xmax, ymin, ymax, zmin, zmax], got {lims!r}")
    lo, hi = lo_hi[0::2], lo_hi[1::2]
    if np.any(lo > hi):
        raise InvalidGoalError(f"lims must have min <= max on each axis, got {lo_hi.tolist()}")
    return np.all((points >= lo) & (points <= hi), axis=1)
