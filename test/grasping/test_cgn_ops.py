"""The torch_geometric stand-in ops for Contact-GraspNet against brute-force references."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from spatial_manip.grasping import cgn_ops  # noqa: E402


@pytest.fixture
def clouds():
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.1, 0.1, (300, 3)).astype(np.float32)
    y = x[rng.choice(300, 40, replace=False)] + rng.normal(0, 0.01, (40, 3)).astype(np.float32)
    return x, y


def _fps_brute(p, m, start=0):
    chosen = [start]
    for _ in range(m - 1):
        d = np.min(((p[:, None, :] - p[None, chosen, :]) ** 2).sum(-1), axis=1)
        chosen.append(int(np.argmax(d)))
    return np.array(chosen)


def test_fps_matches_brute_force_and_counts_like_torch_cluster(clouds):
    x, _ = clouds
    idx = cgn_ops.fps(torch.from_numpy(x), None, ratio=0.1).numpy()
    assert len(idx) == 30 and len(set(idx)) == 30
    np.testing.assert_array_equal(idx, _fps_brute(x.astype(np.float64), 30))
    assert len(cgn_ops.fps(torch.from_numpy(x[:101]), None, ratio=0.1)) == 11  # ceil


def test_fps_per_batch_returns_global_indices(clouds):
    x, _ = clouds
    batch = torch.from_numpy(np.repeat([0, 1], 150))
    idx = cgn_ops.fps(torch.from_numpy(x), batch, ratio=0.2).numpy()
    assert len(idx) == 60
    assert np.all(idx[:30] < 150) and np.all(idx[30:] >= 150)
    np.testing.assert_array_equal(idx[30:] - 150, _fps_brute(x[150:].astype(np.float64), 30))


@pytest.mark.parametrize("max_nb", [5, 1000])
def test_radius_keeps_the_first_neighbours_by_index(clouds, max_nb):
    x, y = clouds
    r = 0.03
    row, col = cgn_ops.radius(torch.from_numpy(x), torch.from_numpy(y), r, max_num_neighbors=max_nb)
    row, col = row.numpy(), col.numpy()
    assert np.all(np.diff(row) >= 0)
    d = np.linalg.norm(y[:, None, :] - x[None, :, :], axis=-1)
    for i in range(len(y)):
        expected = np.nonzero(d[i] < r)[0][:max_nb]
        np.testing.assert_array_equal(col[row == i], expected)


def test_radius_respects_batches():
    x = torch.tensor([[0.0, 0, 0], [0.01, 0, 0], [0.0, 0, 0]])
    y = torch.tensor([[0.0, 0, 0]])
    row, col = cgn_ops.radius(x, y, 0.1, torch.tensor([0, 0, 1]), torch.tensor([1]))
    assert row.tolist() == [0] and col.tolist() == [2]


def test_knn_interpolate_is_inverse_square_distance_weighting(clouds):
    x, y = clouds
    feats = np.random.default_rng(0).normal(size=(len(x), 4)).astype(np.float32)
    out = cgn_ops.knn_interpolate(torch.from_numpy(feats), torch.from_numpy(x), torch.from_numpy(y), k=3).numpy()
    d2 = ((y[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    nb = np.argsort(d2, axis=1)[:, :3]
    w = 1.0 / np.maximum(np.take_along_axis(d2, nb, 1), 1e-16)
    ref = (feats[nb] * w[..., None]).sum(1) / w.sum(1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    # fewer source points than k: uses what there is
    one = cgn_ops.knn_interpolate(torch.ones(1, 2), torch.zeros(1, 3), torch.from_numpy(y), k=3)
    assert one.shape == (len(y), 2) and torch.allclose(one, torch.ones_like(one))


def test_pointnet_conv_max_aggregates_with_torch_geometric_self_loops():
    lin = torch.nn.Linear(4, 2)
    conv = cgn_ops.PointNetConv(lin)
    assert set(conv.state_dict()) == {"local_nn.weight", "local_nn.bias"}
    rng = np.random.default_rng(1)
    pos_src = torch.from_numpy(rng.normal(size=(6, 3)).astype(np.float32))
    pos_dst = pos_src[[4, 5]]
    x = torch.from_numpy(rng.normal(size=(6, 1)).astype(np.float32))
    # edges (source j, target i): 4->0 (same index? no), 0->0 is dropped then re-added, 5->1
    edge_index = torch.tensor([[4, 0, 5, 3], [0, 0, 1, 1]])
    out = conv(x, (pos_src, pos_dst), edge_index)
    # torch_geometric: drop src == dst, add (i, i) for i < min(6, 2)
    edges = [(4, 0), (5, 1), (3, 1), (0, 0), (1, 1)]
    ref = torch.full((2, 2), -np.inf)
    with torch.no_grad():
        for j, i in edges:
            m = lin(torch.cat([x[j], pos_src[j] - pos_dst[i]]))
            ref[i] = torch.maximum(ref[i], m)
    torch.testing.assert_close(out.detach(), ref)


def test_global_max_pool_per_batch():
    x = torch.tensor([[1.0, 5.0], [3.0, 2.0], [-1.0, -2.0]])
    out = cgn_ops.global_max_pool(x, torch.tensor([0, 0, 1]))
    torch.testing.assert_close(out, torch.tensor([[3.0, 5.0], [-1.0, -2.0]]))
