"""TOPP-RA timing: within the caps at every sample, at rest at both ends, through the waypoints."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("toppra")

from spatial_manip.motion.timing import time_parameterise  # noqa: E402


@pytest.mark.parametrize("seed", range(6))
def test_random_paths_meet_the_caps_and_end_at_rest(seed):
    rng = np.random.default_rng(seed)
    waypoints = np.cumsum(rng.uniform(-1.0, 1.0, (int(rng.integers(2, 6)), 6)), axis=0)
    t, q, qd, qdd = time_parameterise(waypoints, 1.5, 3.0, 0.008)
    assert np.all(np.abs(qd) <= 1.5) and np.all(np.abs(qdd) <= 3.0)
    np.testing.assert_allclose(q[[0, -1]], waypoints[[0, -1]], atol=1e-9)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-6)
    assert np.all(np.diff(t) > 0) and np.diff(t).max() <= 0.008 + 1e-12
    # the motion is the path: each waypoint is passed close by (spline through densified points)
    for w in waypoints:
        assert np.min(np.max(np.abs(q - w), axis=1)) < 0.02


def test_a_zero_length_path_is_one_sample_at_rest():
    t, q, qd, qdd = time_parameterise(np.zeros((2, 6)), 1.5, 3.0, 0.008)
    assert len(t) == 1 and np.all(qd == 0) and np.all(qdd == 0)
