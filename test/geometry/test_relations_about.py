"""'about N' has one definition (relations.is_about): ESPIRE's band for the task generator and the
checker, widened by a measurement's error for the planner on a perceived scene."""
import numpy as np
import pytest

from spatial_manip.geometry import relations as rel
from spatial_manip.scene import SceneObject


def test_about_with_no_error_is_espires_band_and_an_error_widens_it():
    assert rel.is_about(0.329, 0.30) and not rel.is_about(0.3301, 0.30)
    assert rel.is_about(0.3301, 0.30, error_m=0.01) and not rel.is_about(0.345, 0.30, error_m=0.01)
    assert rel.about_miss_m(0.345, 0.30) == pytest.approx(0.015)


def test_a_length_seen_in_part_is_an_interval_that_may_reach_the_band():
    assert rel.length_off_m((0.20, 0.29), 0.35) == pytest.approx(0.06)
    assert not rel.is_about((0.20, 0.31), 0.35) and rel.is_about((0.20, 0.32), 0.35)


def test_a_distance_to_an_object_seen_in_part_is_at_most_the_boxes_and_may_be_less():
    """`distance_interval`: two boxes 1 m apart along x hold objects no farther apart than that,
    nearer by what may reach past each box; `outside_band_m` is 0 only for an interval wholly
    inside the band ("more than 95 cm": sure at [1.0, 1.0], not at [0.7, 1.0])."""
    a = SceneObject("a", "book", "book", [0.0, 0.0, 0.0], [0.2, 0.2, 0.2], np.eye(3))
    b = SceneObject("b", "lamp", "reference", [1.2, 0.0, 0.0], [0.2, 0.2, 0.2], np.eye(3))
    assert rel.distance_interval(a, b) == pytest.approx((1.0, 1.0))
    assert rel.distance_interval(a, b, 0.1, 0.2) == pytest.approx((0.7, 1.0))
    assert rel.outside_band_m((1.0, 1.0), 0.95, np.inf) == 0.0
    assert rel.outside_band_m((0.7, 1.0), 0.95, np.inf) == pytest.approx(0.25)
    assert rel.outside_band_m(0.28, 0.30, 0.55) == pytest.approx(0.02)
    assert rel.outside_band_m((0.25, 0.60), 0.30, 0.55) == pytest.approx(0.10)
