"""Euclidean clustering of a point cloud: voxels (the point-cloud layer's grid), then connected
components of the radius graph of voxel centres (scipy cKDTree + csgraph), and a colour split
of clusters that hold two touching objects of different colours."""
from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from spatial_manip.geometry.noise import L515Noise
from spatial_manip.geometry.pointcloud import SENSOR, VoxelGrid

# A cluster stands out of the floor's or table's depth noise when its top (the TOP_QUANTILE of its
# points' heights above their plane, each in units of the sensor's range error as it falls on the
# vertical at that point's range and viewing angle) exceeds NOISE_SIGMAS. A speck of noise is the
# tail of that Gaussian above the candidate threshold: on the recorded realistic frames, specks
# 2-4 m away top out at 3.1-3.5 sigma; a book 15 mm thick lying 1.5 m away stands at 6.
NOISE_SIGMAS = 4.5
TOP_QUANTILE = 0.9


class Voxels:
    """Points grouped into voxels: `inverse[i]` is point i's voxel, `centres` and `rgb` are per
    voxel, `height` the mean height above the point's support plane per voxel (None when not given)."""

    def __init__(self, points: np.ndarray, rgb: np.ndarray, voxel_m: float, height: np.ndarray | None = None):
        grid = VoxelGrid(points, voxel_m)
        self.inverse, self.counts = grid.inverse, grid.counts
        self.centres, self.rgb = grid.mean(points), grid.mean(rgb)
        self.height = None if height is None else grid.mean(height)


def components(centres: np.ndarray, radius_m: float, subset: np.ndarray | None = None) -> np.ndarray:
    """Connected-component label of each centre (or of `subset` indices) in the radius graph."""
    pts = centres if subset is None else centres[subset]
    if len(pts) == 0:
        return np.zeros(0, int)
    pairs = cKDTree(pts).query_pairs(radius_m, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs), bool), (pairs[:, 0], pairs[:, 1])), shape=(len(pts), len(pts)))
    return connected_components(graph, directed=False)[1]


def colour_features(rgb: np.ndarray) -> np.ndarray:
    """Chromaticity (shading-free) plus a damped brightness, per row of 0-255 RGB."""
    c = np.asarray(rgb, float) / 255.0
    s = np.maximum(c.sum(axis=1, keepdims=True), 1e-6)
    return np.hstack([c / s * 2.0, 0.3 * c.mean(axis=1, keepdims=True)])


def split_by_colour(centres: np.ndarray, rgb: np.ndarray, members: np.ndarray, *, radius_m: float,
                    min_voxels: int, min_distance: float, depth: int = 2) -> list[np.ndarray]:
    """Split one cluster (voxel indices `members`) where it is two spatially coherent parts of
    clearly different colour; recursive up to `depth` times. Returns lists of voxel indices."""
    if depth <= 0 or len(members) < 2 * min_voxels:
        return [members]
    f = colour_features(rgb[members])
    # Two-means with a deterministic farthest-point start.
    c0 = f[np.argmax(np.linalg.norm(f - f.mean(0), axis=1))]
    c1 = f[np.argmax(np.linalg.norm(f - c0, axis=1))]
    for _ in range(8):
        lab = np.linalg.norm(f - c1, axis=1) < np.linalg.norm(f - c0, axis=1)
        if lab.all() or not lab.any():
            return [members]
        c0, c1 = f[~lab].mean(0), f[lab].mean(0)
    if np.linalg.norm(c0 - c1) < min_distance:
        return [members]
    parts = []
    for side in (~lab, lab):
        idx = members[side]
        if len(idx) < min_voxels:
            return [members]
        comp = components(centres, radius_m, idx)
        main = np.argmax(np.bincount(comp))
        if np.mean(comp == main) < 0.8:       # scattered speckle, not an object: keep whole
            return [members]
        parts.append(idx)
    out = []
    for p in parts:
        out.extend(split_by_colour(centres, rgb, p, radius_m=radius_m, min_voxels=min_voxels,
                                   min_distance=min_distance, depth=depth - 1))
    return out


def vertical_noise_m(points: np.ndarray, camera: np.ndarray, sensor: L515Noise = SENSOR) -> np.ndarray:
    """Per point, the standard deviation of its height from the sensor's range noise: the range
    sigma at its distance times the vertical share of its ray (a floor seen at a grazing angle
    reads its range error mostly sideways)."""
    ray = np.asarray(points, float) - np.asarray(camera, float)
    rng = np.maximum(np.linalg.norm(ray, axis=1), 1e-9)
    return sensor.sigma_m(rng) * np.abs(ray[:, 2]) / rng


def frame_noise(points: np.ndarray, planes, camera: np.ndarray, *, sensor: L515Noise = SENSOR,
                band_sigmas: float = 10.0, min_points: int = 200, min_scale: float = 1.5) -> L515Noise:
    """The sensor's noise as this frame has it: `sensor` scaled by the spread of the support
    planes' own points about them (the median absolute deviation of their heights, in units of
    each point's nominal vertical noise, within `band_sigmas` of the plane), never below nominal.
    A harsher camera (or the harsh sensing profile, twice the noise) raises the bar a speck must
    clear, which the nominal model alone left at half its height. A spread under `min_scale` is
    the nominal model's own misfit, not a noisier camera (1.0-1.25 on realistic frames of seeds
    81-83, 1.7-1.9 on harsh ones), and keeps nominal. `planes`: objects with
    `height(points)` and `covers(points)` (perception.planes.Plane)."""
    pts = np.asarray(points, float)
    ratios = []
    sigma = np.maximum(vertical_noise_m(pts, camera, sensor), 1e-6) if len(pts) else np.zeros(0)
    for plane in planes:
        r = plane.height(pts) / sigma
        keep = plane.covers(pts) & (np.abs(r) < band_sigmas)
        ratios.append(r[keep] - np.median(r[keep]) if keep.any() else r[:0])
    r = np.concatenate(ratios) if ratios else np.zeros(0)
    if len(r) < min_points:
        return sensor
    scale = 1.4826 * float(np.median(np.abs(r)))
    return sensor.scaled(scale) if scale >= min_scale else sensor


def stands_out_of_noise(points: np.ndarray, height_m: np.ndarray, camera: np.ndarray, *,
                        sigmas: float = NOISE_SIGMAS, sensor: L515Noise = SENSOR) -> bool:
    """Whether a cluster (its base-frame `points` and their `height_m` above their support plane)
    stands on the plane rather than being a speck of the plane's own depth noise: its top, in
    units of each point's vertical noise (`vertical_noise_m`), reaches `sigmas`."""
    if len(points) == 0:
        return False
    ratio = np.asarray(height_m, float) / np.maximum(vertical_noise_m(points, camera, sensor), 1e-6)
    return bool(np.quantile(ratio, TOP_QUANTILE) >= sigmas)
