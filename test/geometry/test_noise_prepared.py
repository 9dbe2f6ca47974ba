"""L515Noise on a prepared clean depth (a camera watching a still scene prepares it once): the
same frames, draw for draw, as noise applied to the depth itself, and the clean depth untouched;
hole blobs grown around their seeds as ndimage's dilation grows them."""
import numpy as np
from scipy import ndimage

from spatial_manip.geometry.noise import L515Noise, _diamonds


def _depth() -> np.ndarray:
    rng = np.random.default_rng(0)
    d = np.full((120, 160), 1.2)
    d[30:80, 40:110] = 0.9                       # a box: depth edges, flying pixels, edge holes
    d[rng.random(d.shape) < 0.01] = 0.0          # no return
    d[0:2, :] = np.nan
    return d


def test_noise_on_a_prepared_depth_is_the_noise_on_the_depth_draw_for_draw():
    d = _depth()
    for k in (1.0, 2.0):
        noise = L515Noise(hole_blob_prob=0.01).scaled(k)
        clean = noise.prepare(d)
        kept = clean.depth_m.copy()
        for seed in range(3):
            a = noise.apply(d, np.random.default_rng(seed))
            b = noise.apply_to(clean, np.random.default_rng(seed))
            assert a.dtype == b.dtype == np.float32 and np.array_equal(a, b)
        assert np.array_equal(clean.depth_m, kept)
        first, second = (noise.apply_to(clean, rng) for rng in [np.random.default_rng(5)] * 2)
        assert not np.array_equal(first, second)   # each frame draws its own


def test_hole_blobs_grow_around_their_seeds_as_a_dilation_would():
    for seed in range(10):
        seeds = np.random.default_rng(seed).random((40, 50)) < 0.03
        seeds[0, 0] = seeds[-1, -1] = True       # at the image's corners
        for radius in (1, 2, 3):
            assert np.array_equal(_diamonds(seeds, radius), ndimage.binary_dilation(seeds, iterations=radius))
