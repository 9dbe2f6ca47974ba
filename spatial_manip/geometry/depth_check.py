"""Is a box's object there, by the depth image alone: where the camera would see an object
occupying an oriented box, does its depth land inside that box? What verification asks first
after a set-down (issue 42: the result follows the arm's stop without perceiving the scene);
too little evidence means "look properly", never "failed"."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial_manip.camera_model import pixel_rays, project
from spatial_manip.transforms import apply, invert
from spatial_manip.observation import RGBDObservation

GRID = 10              # points per box axis projected into the image (GRID**3, duplicate pixels merged): a
                       # book 2.3 m away covers ~40x60 pixels, and 6 per axis gave it under 40 distinct ones
CORE_MIN = 0.3         # a core keeps at least this share of the box's extent along each axis


@dataclass(frozen=True)
class DepthEvidence:
    """What the depth shows where a box's object would be seen, in pixels."""

    inside: int         # a return inside the box: the object (or something in its place)
    behind: int         # a return beyond it: the camera sees through where the object would be
    in_front: int       # a return nearer: something hides it (an arm, a shelf board), which says nothing

    def share_seen(self) -> float:
        """Of the pixels that say anything about the box, the share that shows something in it."""
        told = self.inside + self.behind
        return self.inside / told if told else 0.0


def depth_evidence(obs: RGBDObservation, T_box: np.ndarray, size, *, grow_m: float, lift_m: float,
                   core_m: float = 0.0) -> DepthEvidence:
    """Each pixel onto which the box's interior projects (its core `core_m` in from every face,
    keeping at least CORE_MIN of it: an object set down a little off its pose, or seen through a
    calibration's error from afar, still covers its core), by where its depth point lies: inside
    the box grown by `grow_m` and at least `lift_m` above its lowest corner (the surface under
    the object is not the object), beyond the box along its ray (an absent object shows what is
    behind or under it), or nearer (hidden). Pixels without depth count nowhere."""
    T_box, half = np.asarray(T_box, float), np.asarray(size, float) / 2
    core = np.maximum(half - core_m, CORE_MIN * half)
    ticks = (np.arange(GRID) + 0.5) / GRID * 2 - 1
    unit = np.stack(np.meshgrid(ticks, ticks, ticks, indexing="ij"), axis=-1).reshape(-1, 3)
    in_cam = apply(invert(obs.T_base_cam), apply(T_box, unit * core))
    uv, inside = project(in_cam, obs.intrinsics)
    pixels, first = np.unique(np.round(uv[inside]).astype(int), axis=0, return_index=True)
    if not len(pixels):
        return DepthEvidence(0, 0, 0)
    u, v = pixels[:, 0], pixels[:, 1]
    z = np.asarray(obs.depth_m, float)[v, u]
    x, y = pixel_rays(u, v, obs.intrinsics)
    seen = apply(obs.T_base_cam, np.stack([x * z, y * z, z], axis=1))               # base frame
    corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float) * half
    bottom = float(apply(T_box, corners)[:, 2].min())
    valid = z > 0
    hit = valid & np.all(np.abs(apply(invert(T_box), seen)) <= half + grow_m, axis=1) & (seen[:, 2] >= bottom + lift_m)
    beyond = valid & ~hit & (z > in_cam[inside][first, 2])       # farther than the box's middle along the ray
    return DepthEvidence(int(hit.sum()), int(beyond.sum()), int((valid & ~hit & ~beyond).sum()))
