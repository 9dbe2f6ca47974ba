"""'about N' has one definition (relations.is_about): ESPIRE's band for the task generator and the
checker, widened by a measurement's error for the planner on a perceived scene."""
import pytest

from spatial_manip.geometry import relations as rel


def test_about_with_no_error_is_espires_band_and_an_error_widens_it():
    assert rel.is_about(0.329, 0.30) and not rel.is_about(0.3301, 0.30)
    assert rel.is_about(0.3301, 0.30, error_m=0.01) and not rel.is_about(0.345, 0.30, error_m=0.01)
    assert rel.about_miss_m(0.345, 0.30) == pytest.approx(0.015)


def test_a_length_seen_in_part_is_an_interval_that_may_reach_the_band():
    assert rel.length_off_m((0.20, 0.29), 0.35) == pytest.approx(0.06)
    assert not rel.is_about((0.20, 0.31), 0.35) and rel.is_about((0.20, 0.32), 0.35)
