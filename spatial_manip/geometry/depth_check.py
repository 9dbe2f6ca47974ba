"""Is a box's object there, by the depth image alone: where the camera would see an object
occupying an oriented box, does its depth land inside that box? What verification asks first
after a set-down (issue 42: the result follows the arm's stop without perceiving the scene);
a share below the caller's bar means "look properly", never "failed"."""
from __future__ import annotations

import numpy as np

from spatial_manip.geometry.camera import pixel_rays, project
from spatial_manip.geometry.transforms import apply, invert
from spatial_manip.observation import RGBDObservation

GRID = 6               # points per box axis projected into the image (GRID**3, duplicate pixels merged)


def share_seen_in_box(obs: RGBDObservation, T_box: np.ndarray, size, *, grow_m: float, lift_m: float) -> float:
    """Of the pixels onto which the box's interior projects, the share whose depth point lies
    inside the box grown by `grow_m` and at least `lift_m` above its lowest corner (the surface
    under the object is not the object). An absent object shows what is behind or under it there
    (outside); the arm in the way shows something nearer (outside too). 0.0 when the box
    projects onto no pixel."""
    T_box, half = np.asarray(T_box, float), np.asarray(size, float) / 2
    ticks = (np.arange(GRID) + 0.5) / GRID * 2 - 1
    unit = np.stack(np.meshgrid(ticks, ticks, ticks, indexing="ij"), axis=-1).reshape(-1, 3)
    uv, inside = project(apply(invert(obs.T_base_cam), apply(T_box, unit * half)), obs.intrinsics)
    pixels = np.unique(np.round(uv[inside]).astype(int), axis=0)
    if not len(pixels):
        return 0.0
    u, v = pixels[:, 0], pixels[:, 1]
    z = np.asarray(obs.depth_m, float)[v, u]
    x, y = pixel_rays(u, v, obs.intrinsics)
    seen = apply(obs.T_base_cam, np.stack([x * z, y * z, z], axis=1))               # base frame
    corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float) * half
    bottom = float(apply(T_box, corners)[:, 2].min())
    hit = (z > 0) & np.all(np.abs(apply(invert(T_box), seen)) <= half + grow_m, axis=1) & (seen[:, 2] >= bottom + lift_m)
    return float(hit.mean())
