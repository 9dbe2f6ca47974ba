"""Vectorised point-cloud operations the grasp backends share (numpy/scipy only)."""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree


def voxel_downsample(points: np.ndarray, voxel_m: float) -> np.ndarray:
    """Indices of one point per occupied voxel (the first seen), so callers can carry attributes."""
    if len(points) == 0 or voxel_m <= 0:
        return np.arange(len(points))
    keys = np.floor(points / voxel_m).astype(np.int64)
    keys -= keys.min(axis=0)
    dims = keys.max(axis=0) + 1
    flat = (keys[:, 0] * dims[1] + keys[:, 1]) * dims[2] + keys[:, 2]
    _, first = np.unique(flat, return_index=True)
    return np.sort(first)


def estimate_normals(points: np.ndarray, k: int = 16, viewpoint=(0.0, 0.0, 0.0),
                     tree: cKDTree | None = None) -> np.ndarray:
    """Unit normals by PCA over the k nearest neighbours, oriented toward `viewpoint` (the camera)."""
    n = len(points)
    if n < 3:
        return np.tile([0.0, 0.0, -1.0], (n, 1))
    k = int(min(k, n))
    tree = tree or cKDTree(points)
    _, idx = tree.query(points, k=k, workers=-1)
    nb = points[idx]                                   # (n, k, 3)
    nb = nb - nb.mean(axis=1, keepdims=True)
    cov = np.einsum("nki,nkj->nij", nb, nb)
    _, vecs = np.linalg.eigh(cov)                      # ascending eigenvalues
    normals = vecs[:, :, 0]
    flip = np.einsum("ij,ij->i", normals, np.asarray(viewpoint, float) - points) < 0
    normals[flip] *= -1
    return normals


def fit_plane_ransac(points: np.ndarray, *, threshold_m: float = 0.006, iterations: int = 128,
                     rng: np.random.Generator, sample_size: int = 3000):
    """Dominant plane (unit normal n, offset d with n.p + d = 0) and its inlier count; None if < 3 points.

    All hypotheses are scored at once on a random subsample (no Python loop over points).
    """
    if len(points) < 3:
        return None
    sub = points if len(points) <= sample_size else points[rng.choice(len(points), sample_size, replace=False)]
    tri = sub[rng.integers(0, len(sub), size=(iterations, 3))]
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    norm = np.linalg.norm(nrm, axis=1)
    good = norm > 1e-9
    if not good.any():
        return None
    nrm, tri = nrm[good] / norm[good, None], tri[good]
    d = -np.einsum("ij,ij->i", nrm, tri[:, 0])
    counts = (np.abs(sub @ nrm.T + d) < threshold_m).sum(axis=0)
    best = int(np.argmax(counts))
    n, d0 = nrm[best], d[best]
    # refine by least squares on the inliers of the whole cloud
    inl = points[np.abs(points @ n + d0) < threshold_m]
    if len(inl) >= 3:
        c = inl.mean(axis=0)
        _, _, vt = np.linalg.svd(inl - c, full_matrices=False)
        n = vt[2] * (1 if vt[2] @ n >= 0 else -1)
        d0 = -n @ c
    return n, float(d0), int(len(inl))
