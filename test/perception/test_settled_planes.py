"""A configured support surface is read at the height the depth shows it (planes.settled_on_depth):
the camera's pose and depth registration carry errors the configuration does not."""
import numpy as np

from spatial_manip.perception.planes import known_plane, settled_on_depth


def _board(z, rng, n=3000, x=(0.75, 1.15), y=(-0.4, 0.4), sigma=0.002):
    return np.column_stack([rng.uniform(*x, n), rng.uniform(*y, n), z + rng.normal(0, sigma, n)])


def test_a_board_seen_17_mm_above_its_configured_height_is_read_where_the_depth_shows_it():
    rng = np.random.default_rng(1)
    board = known_plane(-0.092, (0.75, -0.4), (1.15, 0.4))
    lying_book = _board(-0.092 + 0.017 + 0.02, rng, n=800, x=(0.8, 0.95), y=(-0.1, 0.1))
    beside = _board(-0.3, rng, n=2000, x=(-1.0, 0.5))                 # the floor in front: not over the board
    cloud = np.vstack([_board(-0.092 + 0.017, rng), lying_book, beside])
    settled = settled_on_depth(board, cloud, camera_m=[-1.38, -0.2, 0.40])
    assert abs(settled.z0 - (-0.075)) < 0.002, settled.z0
    assert settled.footprint is board.footprint and abs(board.z0 + 0.092) < 1e-12   # the configured one is kept


def test_a_board_is_kept_where_configured_when_the_camera_sees_its_underside_or_hardly_sees_it():
    rng = np.random.default_rng(2)
    board = known_plane(0.636, (0.75, -0.4), (1.15, 0.4))
    underside = _board(0.636 - 0.02, rng)
    assert settled_on_depth(board, underside, camera_m=[-1.38, -0.2, 0.40]) is board
    low = known_plane(-0.092, (0.75, -0.4), (1.15, 0.4))
    assert settled_on_depth(low, _board(-0.08, rng, n=20), camera_m=[-1.38, -0.2, 0.40]) is low
    far_off = _board(-0.092 + 0.05, rng)                               # beyond the band: another surface
    assert settled_on_depth(low, far_off, camera_m=[-1.38, -0.2, 0.40]) is low
