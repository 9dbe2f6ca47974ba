import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.bench.grasp_stability import grasp_angle_deg


def test_a_half_turn_about_the_approach_is_the_same_grasp():
    """A parallel gripper closing from either side is one grasp: the stability figure must not
    count a 180-degree turn about the approach (the grasp frame's x) as the top grasp moving."""
    R = Rotation.from_euler("xyz", [10, 40, -20], degrees=True).as_matrix()
    flipped = R @ np.diag([1.0, -1.0, -1.0])
    assert grasp_angle_deg(R, flipped) == pytest.approx(0.0, abs=1e-4)
    assert grasp_angle_deg(R, R) == pytest.approx(0.0, abs=1e-4)


def test_a_turn_of_the_approach_is_measured():
    R = np.eye(3)
    tilted = Rotation.from_euler("z", 30, degrees=True).as_matrix()     # the approach (x) turns 30 degrees
    assert grasp_angle_deg(R, tilted) == pytest.approx(30.0, abs=1e-3)
    about_approach = Rotation.from_euler("x", 50, degrees=True).as_matrix()
    assert grasp_angle_deg(R, about_approach) == pytest.approx(50.0, abs=1e-3)
