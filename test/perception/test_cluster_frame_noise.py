"""The speck filter reads the frame's own depth noise (cluster.frame_noise), not only the L515's
nominal model: under the harsh profile specks of the floor's noise stand twice as high."""
import numpy as np

from spatial_manip.geometry.noise import L515Noise
from spatial_manip.perception.cluster import stands_out_of_noise, vertical_noise_m

CAMERA = np.array([-0.8, 0.4, 0.7])


def _patch(centre_xy, z_m, side_m=0.1, n=400, seed=0):
    rng = np.random.default_rng(seed)
    xy = np.asarray(centre_xy) + rng.uniform(-side_m / 2, side_m / 2, (n, 2))
    return np.column_stack([xy, np.full(n, z_m)]), rng


class _Level:
    """A level support plane at `z` over everything (perception.planes.Plane's two methods)."""

    def __init__(self, z):
        self.z = z

    def height(self, points):
        return points[:, 2] - self.z

    def covers(self, points):
        return np.ones(len(points), bool)


def test_the_frame_s_own_noise_raises_the_bar_a_speck_must_clear():
    """Under the harsh profile (twice the L515's noise) the floor's specks 2-4 m away top out near
    twice as high: measured against the nominal model they passed as objects. The frame's noise,
    read from its support plane's spread, refuses them; a clean or nominal frame keeps nominal."""
    from spatial_manip.perception.cluster import frame_noise
    floor_z = -0.69
    floor, rng = _patch((1.8, 1.0), floor_z, side_m=1.5, n=4000, seed=3)
    nominal = L515Noise()
    sigma = vertical_noise_m(floor, CAMERA, nominal)
    harsh_floor = floor.copy()
    harsh_floor[:, 2] += 2.0 * sigma * rng.standard_normal(len(floor))
    noise = frame_noise(harsh_floor, [_Level(floor_z)], CAMERA)
    assert 1.8 < noise.sigma_m(2.0) / nominal.sigma_m(2.0) < 2.2
    speck, _ = _patch((1.8, 1.0), floor_z, side_m=0.05, n=60, seed=4)     # its noise's tail: 2.5-3.3 of its sigmas
    height = 2.0 * vertical_noise_m(speck, CAMERA, nominal) * rng.uniform(2.5, 3.3, len(speck))
    assert stands_out_of_noise(speck, height, CAMERA)                    # the nominal model's verdict
    assert not stands_out_of_noise(speck, height, CAMERA, sensor=noise)
    clean = floor.copy()
    assert frame_noise(clean, [_Level(floor_z)], CAMERA) == nominal
