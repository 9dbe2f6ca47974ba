"""The point-cloud layer (geometry.pointcloud) on synthetic clouds with known answers."""
import numpy as np
import pytest

from spatial_manip.geometry import pointcloud as pc

pytest.importorskip("open3d")


def _table(rng, n=4000, z=0.0, noise=0.001):
    xy = rng.uniform(-0.3, 0.3, (n, 2))
    return np.column_stack([xy, z + rng.normal(0, noise, n)])


def test_voxel_grid_groups_points_and_means_attributes():
    pts = np.array([[0.001, 0.001, 0.001], [0.009, 0.002, 0.0], [0.015, 0.0, 0.0], [-0.001, 0, 0]])
    grid = pc.VoxelGrid(pts, 0.01)
    assert len(grid) == 3
    assert grid.inverse[0] == grid.inverse[1] != grid.inverse[2]
    assert sorted(grid.counts.tolist()) == [1, 1, 2]
    means = grid.mean(pts[:, 0])
    assert means[grid.inverse[0]] == pytest.approx(0.005)
    assert pc.voxel_downsample(pts, 0.01).tolist() == [0, 2, 3]
    assert pc.voxel_downsample(pts, 0.0).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="voxel_m"):
        pc.VoxelGrid(pts, 0.0)


def test_voxel_centroids_one_per_voxel():
    rng = np.random.default_rng(0)
    pts = rng.uniform(0, 0.1, (5000, 3))
    cents = pc.voxel_centroids(pts, 0.05)
    assert 1 <= len(cents) <= 27 and np.all(cents >= 0) and np.all(cents <= 0.1)


def test_normals_of_a_plane_face_the_viewpoint():
    rng = np.random.default_rng(1)
    pts = _table(rng, 2000, noise=0.0)
    n = pc.estimate_normals(pts, k=16, viewpoint=(0, 0, 1.0))
    assert np.all(n[:, 2] > 0.99)
    n = pc.estimate_normals(pts, k=16, viewpoint=(0, 0, -1.0))
    assert np.all(n[:, 2] < -0.99)


def test_fit_plane_finds_the_table_under_clutter_and_is_seeded():
    rng = np.random.default_rng(2)
    table = _table(rng, z=0.1)
    clutter = rng.uniform([-0.1, -0.1, 0.1], [0.1, 0.1, 0.3], (1500, 3))
    pts = np.vstack([table, clutter])
    plane = pc.fit_plane(pts, threshold_m=0.005, seed=3)
    assert plane is not None and abs(abs(plane.normal[2]) - 1) < 1e-3
    assert abs(abs(plane.offset) - 0.1) < 0.002
    assert plane.inliers[:len(table)].mean() > 0.95 and plane.inliers[len(table):].mean() < 0.1
    again = pc.fit_plane(pts, threshold_m=0.005, seed=3)
    assert np.allclose(again.normal, plane.normal) and again.offset == plane.offset
    assert pc.fit_plane(pts[:2], threshold_m=0.005) is None


def test_fit_plane_with_up_skips_a_bigger_wall():
    rng = np.random.default_rng(4)
    wall = np.column_stack([rng.uniform(-0.3, 0.3, 6000), np.full(6000, 0.3), rng.uniform(0, 0.6, 6000)])
    board = _table(rng, 2000, z=0.2, noise=0.0005)
    plane = pc.fit_plane(np.vstack([wall, board]), threshold_m=0.004, up=(0, 0, 1), max_tilt_deg=20, seed=0)
    assert plane is not None and plane.normal[2] > 0.99 and plane.offset == pytest.approx(-0.2, abs=0.002)
    assert pc.fit_plane(wall, threshold_m=0.004, up=(0, 0, 1), max_tilt_deg=20, max_planes=1) is None


def test_outlier_filters_drop_lone_points_and_keep_surfaces():
    rng = np.random.default_rng(5)
    surface = _table(rng, 3000, noise=0.0005)
    lone = rng.uniform([-0.3, -0.3, 0.2], [0.3, 0.3, 0.5], (30, 3))
    pts = np.vstack([surface, lone])
    keep = pc.radius_inliers(pts, radius_m=0.03, min_neighbours=4)
    assert keep[:3000].mean() > 0.99 and not keep[3000:].any()
    keep = pc.statistical_inliers(pts, neighbours=20, std_ratio=2.0)
    assert keep[:3000].mean() > 0.95 and keep[3000:].mean() < 0.2
    assert pc.radius_inliers(np.empty((0, 3)), radius_m=0.02, min_neighbours=4).shape == (0,)


def test_dbscan_separates_two_blobs_and_marks_noise():
    rng = np.random.default_rng(6)
    a = rng.normal([0, 0, 0], 0.005, (300, 3))
    b = rng.normal([0.2, 0, 0], 0.005, (300, 3))
    lone = np.array([[0.1, 0.3, 0.3]])
    labels = pc.dbscan_labels(np.vstack([a, b, lone]), eps_m=0.01, min_points=5)
    assert len(set(labels[:300])) == 1 and len(set(labels[300:600])) == 1 and labels[0] != labels[300]
    assert labels[-1] == -1


def test_range_tolerance_follows_the_sensor_model():
    near, far = pc.range_tolerance_m([0.5, 2.0])
    assert far > near > 0
    assert pc.range_tolerance_m(0.5, sigmas=3.0) == pytest.approx(3 * pc.SENSOR.sigma_m(0.5))
    assert pc.range_tolerance_m(0.5, floor_m=0.05) == pytest.approx(0.05)


def test_in_box_along_rays_allows_range_error_along_the_ray_only():
    """A wall seen face-on from 1.6 m: its points read up to ~1.5 cm in front of or behind it
    (L515 range noise) and are the wall's; a point beside it is not moved into it by the same
    allowance, since range noise moves a point along its ray, not across."""
    from types import SimpleNamespace

    wall = SimpleNamespace(center=np.array([1.6, 0.0, 0.0]), size=np.array([0.01, 1.0, 1.0]), rotation=np.eye(3))
    camera = np.zeros(3)
    in_front = np.array([[1.595 - 0.01, 0.1, 0.0]])      # 1 cm in front of the wall's face, on a ray into it
    beside = np.array([[1.6, 0.52, 0.0]])                # 2 cm past its side, seen across the ray
    assert pc.in_box_along_rays(in_front, camera, wall, along_m=0.015).all()
    assert not pc.in_box_along_rays(in_front, camera, wall, along_m=0.005).any()
    assert not pc.in_box_along_rays(beside, camera, wall, along_m=0.015, margin_m=0.004).any()
    assert pc.in_box_along_rays(beside, camera, wall, along_m=0.0, margin_m=0.02).all()
    inside = np.array([[1.6, 0.0, 0.0]])
    assert pc.in_box_along_rays(inside, camera, wall, along_m=np.zeros(1)).all()
    assert pc.in_box_along_rays(np.empty((0, 3)), camera, wall, along_m=0.01).shape == (0,)


def _every_point_along_rays(pts, origin, box, along_m, margin_m):
    """in_box_along_rays without its prefilter: the exact ray test on every point."""
    R = np.asarray(box.rotation, float)
    rays = pts - origin
    rays /= np.linalg.norm(rays, axis=1, keepdims=True)
    p, d = (pts - box.center) @ R, rays @ R
    half = np.asarray(box.size) / 2 + margin_m
    lo, hi = -along_m.copy(), along_m.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(3):
            a, b = (-half[k] - p[:, k]) / d[:, k], (half[k] - p[:, k]) / d[:, k]
            lo, hi = np.maximum(lo, np.minimum(a, b)), np.minimum(hi, np.maximum(a, b))
    return lo <= hi


def test_in_box_along_rays_tests_only_points_near_the_box_and_finds_the_same_ones():
    """Its prefilter (a point farther than its allowance from the box's bounds cannot reach it)
    changes no answer: random points around a turned box, each with its own allowance."""
    from types import SimpleNamespace

    from spatial_manip.transforms import rpy_to_matrix

    rng = np.random.default_rng(5)
    box = SimpleNamespace(center=np.array([0.8, 0.1, 0.3]), size=np.array([0.3, 0.05, 0.4]),
                          rotation=rpy_to_matrix(0.3, -0.2, 0.9))
    camera = np.array([0.0, -0.4, 1.2])
    pts = box.center + rng.uniform(-0.4, 0.4, (50_000, 3))
    along = rng.uniform(0.0, 0.05, len(pts))
    got = pc.in_box_along_rays(pts, camera, box, along_m=along, margin_m=0.004)
    assert 1000 < got.sum() < len(pts) // 2
    assert np.array_equal(got, _every_point_along_rays(pts, camera, box, along, 0.004))


def test_depth_edge_pixels_mark_the_ring_at_a_jump_not_noise_on_a_surface():
    """A step of 10 cm at 1.5 m is an edge (its flying pixels live there); L515 noise on a flat
    surface at that range (5 mm sigma) is not."""
    from spatial_manip.geometry.noise import L515Noise

    depth = np.full((40, 40), 1.5)
    depth[:, 20:] = 1.6
    noisy = L515Noise(flying_prob=0.0, edge_hole_prob=0.0, hole_blob_prob=0.0).apply(depth, np.random.default_rng(0))
    edge = pc.depth_edge_pixels(noisy)
    assert edge[:, 19:21].mean() > 0.95
    assert edge[:, :17].mean() < 0.01 and edge[:, 23:].mean() < 0.01
    assert not pc.depth_edge_pixels(np.zeros((5, 5))).any()


def test_depth_edge_pixels_asked_at_some_pixels_are_the_whole_images_there():
    """`only`: the same verdict at the asked pixels (those at the image's border, beside holes
    and on the step among them), False elsewhere."""
    from spatial_manip.geometry.noise import L515Noise

    rng = np.random.default_rng(3)
    depth = np.full((30, 50), 1.2)
    depth[8:20, 10:25] = 1.1
    noisy = L515Noise().apply(depth, rng)          # flying pixels and holes too
    noisy[0, :5] = 0.0
    asked = rng.random(noisy.shape) < 0.3
    asked[0, :], asked[:, -1] = True, True
    whole = pc.depth_edge_pixels(noisy)
    assert 20 < (whole & asked).sum() < asked.sum()
    assert np.array_equal(pc.depth_edge_pixels(noisy, only=asked), whole & asked)
    assert not pc.depth_edge_pixels(noisy, only=np.zeros(noisy.shape, bool)).any()
