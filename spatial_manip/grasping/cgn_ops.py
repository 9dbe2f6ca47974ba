"""Point-cloud operators Contact-GraspNet (`cgn-pytorch`) takes from torch_geometric, in numpy/scipy/torch.

torch_geometric's `fps`, `radius` and `knn_interpolate` call the compiled `torch_cluster`
extension, which does not install on CPU-only machines here. These are drop-in equivalents with
the same signatures and index conventions; `PointNetConv` and `global_max_pool` are plain-torch
copies of torch_geometric's (same parameter names, so the checkpoint's state_dict loads).

`torch_geometric_standin()` builds a `torch_geometric` module tree from them for the
contact_graspnet backend to place in `sys.modules` when the real package is absent.
"""
from __future__ import annotations

import math
import types

import numpy as np
import torch
from scipy.spatial import cKDTree


def _batches(batch: torch.Tensor | None, n: int):
    """(batch value, indices) pairs; a missing batch vector means one cloud."""
    if batch is None:
        return [(0, np.arange(n))]
    b = batch.detach().cpu().numpy()
    return [(v, np.nonzero(b == v)[0]) for v in np.unique(b)]


def fps(src: torch.Tensor, batch: torch.Tensor | None = None, ratio: float = 0.5,
        random_start: bool = False, generator: np.random.Generator | None = None) -> torch.Tensor:
    """Farthest point sampling: ceil(ratio * n) indices per cloud (global indices), first the start
    point, then each next point farthest from those chosen (torch_cluster's order and count).

    The start is index 0 unless random_start (then drawn from `generator`): deterministic by default.
    """
    if not 0 < ratio <= 1:
        raise ValueError(f"fps ratio must be in (0, 1], got {ratio}")
    pos = src.detach().cpu().numpy().astype(np.float64)
    out = []
    for _, idx in _batches(batch, len(pos)):
        p = pos[idx]
        m = int(math.ceil(len(p) * ratio))
        start = int((generator or np.random.default_rng()).integers(len(p))) if random_start else 0
        chosen = np.empty(m, np.int64)
        chosen[0] = start
        d = np.sum((p - p[start]) ** 2, axis=1)
        for i in range(1, m):  # inherently sequential; each step is vectorised over the cloud
            nxt = int(np.argmax(d))
            chosen[i] = nxt
            np.minimum(d, np.sum((p - p[nxt]) ** 2, axis=1), out=d)
        out.append(idx[chosen])
    return torch.from_numpy(np.concatenate(out)).to(src.device)


def radius(x: torch.Tensor, y: torch.Tensor, r: float, batch_x: torch.Tensor | None = None,
           batch_y: torch.Tensor | None = None, max_num_neighbors: int = 32, num_workers: int = 1):
    """For each point of y, up to `max_num_neighbors` points of x (same batch) closer than r.

    Returns (row, col): row indexes y, col indexes x, grouped by row. Like torch_cluster's CUDA
    kernel, the neighbours kept are the first ones by index in x (a uniform random subset of the
    ball when x is in random order, as Contact-GraspNet's shuffled cloud is), not the nearest.
    """
    px, py = x.detach().cpu().numpy(), y.detach().cpu().numpy()
    rows, cols = [], []
    bx = dict(_batches(batch_x, len(px)))
    for v, iy in _batches(batch_y, len(py)):
        ix = bx.get(v)
        if ix is None or len(ix) == 0 or len(iy) == 0:
            continue
        lists = cKDTree(px[ix]).query_ball_point(py[iy], np.nextafter(r, 0), workers=-1, return_sorted=True)
        kept = [lst[:max_num_neighbors] for lst in lists]
        counts = np.fromiter((len(k) for k in kept), np.int64, len(kept))
        if counts.sum() == 0:
            continue
        rows.append(np.repeat(iy, counts))
        cols.append(ix[np.concatenate([np.asarray(k, np.int64) for k in kept])])
    row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    col = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    return torch.from_numpy(row).to(x.device), torch.from_numpy(col).to(x.device)


def knn_interpolate(x: torch.Tensor, pos_x: torch.Tensor, pos_y: torch.Tensor, batch_x: torch.Tensor | None = None,
                    batch_y: torch.Tensor | None = None, k: int = 3, num_workers: int = 1) -> torch.Tensor:
    """Features of x at pos_y: inverse-squared-distance weights over the k nearest points of x
    (same batch; fewer if the batch has fewer), as torch_geometric.nn.knn_interpolate."""
    px, py = pos_x.detach().cpu().numpy(), pos_y.detach().cpu().numpy()
    y_idx, x_idx = [], []
    bx = dict(_batches(batch_x, len(px)))
    for v, iy in _batches(batch_y, len(py)):
        ix = bx.get(v)
        if ix is None or len(ix) == 0:
            continue
        kk = min(k, len(ix))
        _, nb = cKDTree(px[ix]).query(py[iy], k=kk, workers=-1)
        nb = nb.reshape(len(iy), kk)
        y_idx.append(np.repeat(iy, kk))
        x_idx.append(ix[nb.reshape(-1)])
    yi = torch.from_numpy(np.concatenate(y_idx)).to(x.device)
    xi = torch.from_numpy(np.concatenate(x_idx)).to(x.device)
    with torch.no_grad():
        diff = pos_x[xi] - pos_y[yi]
        w = 1.0 / torch.clamp((diff * diff).sum(dim=-1, keepdim=True), min=1e-16)
    num = torch.zeros(len(py), x.shape[1], dtype=x.dtype, device=x.device).index_add_(0, yi, x[xi] * w)
    den = torch.zeros(len(py), 1, dtype=w.dtype, device=x.device).index_add_(0, yi, w)
    return num / den


def _scatter_max(src: torch.Tensor, index: torch.Tensor, size: int) -> torch.Tensor:
    """Row-wise max of src grouped by index; empty groups are 0 (torch_geometric's max aggregation)."""
    out = torch.zeros(size, src.shape[1], dtype=src.dtype, device=src.device)
    return out.scatter_reduce(0, index[:, None].expand_as(src), src, reduce="amax", include_self=False)


def global_max_pool(x: torch.Tensor, batch: torch.Tensor | None, size: int | None = None) -> torch.Tensor:
    if batch is None:
        return x.max(dim=0, keepdim=True).values
    return _scatter_max(x, batch, int(batch.max()) + 1 if size is None else size)


class PointNetConv(torch.nn.Module):
    """torch_geometric's PointNetConv: out_i = global_nn(max_j local_nn([x_j, pos_j - pos_i])).

    Self loops are handled as torch_geometric does (the checkpoint was trained that way): edges
    whose source and target indices are equal are dropped and an edge (i, i) is added for every
    i < min(n_source, n_target), even when source and target are different point sets.
    """

    def __init__(self, local_nn=None, global_nn=None, add_self_loops: bool = True, **kwargs):
        super().__init__()
        self.local_nn, self.global_nn, self.add_self_loops = local_nn, global_nn, add_self_loops

    def forward(self, x, pos, edge_index: torch.Tensor) -> torch.Tensor:
        x_src = x[0] if isinstance(x, tuple) else x
        pos_src, pos_dst = pos if isinstance(pos, tuple) else (pos, pos)
        src, dst = edge_index[0], edge_index[1]
        if self.add_self_loops:
            keep = src != dst
            loop = torch.arange(min(pos_src.shape[0], pos_dst.shape[0]), device=src.device)
            src, dst = torch.cat([src[keep], loop]), torch.cat([dst[keep], loop])
        msg = pos_src[src] - pos_dst[dst]
        if x_src is not None:
            msg = torch.cat([x_src[src], msg], dim=1)
        if self.local_nn is not None:
            msg = self.local_nn(msg)
        out = _scatter_max(msg, dst, pos_dst.shape[0])
        return self.global_nn(out) if self.global_nn is not None else out


def torch_geometric_standin() -> dict[str, types.ModuleType]:
    """Modules `torch_geometric`, `.nn`, `.nn.conv` exposing only what cgn_pytorch imports."""
    root, nn, conv = (types.ModuleType(n) for n in ("torch_geometric", "torch_geometric.nn", "torch_geometric.nn.conv"))
    for m in (root, nn, conv):
        m.__spatial_manip_standin__ = True
    conv.PointNetConv = PointNetConv
    nn.fps, nn.radius, nn.knn_interpolate, nn.global_max_pool, nn.conv = fps, radius, knn_interpolate, global_max_pool, conv
    nn.PointNetConv = PointNetConv
    root.nn = nn
    return {"torch_geometric": root, "torch_geometric.nn": nn, "torch_geometric.nn.conv": conv}
