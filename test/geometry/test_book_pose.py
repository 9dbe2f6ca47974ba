"""A book's pose words and its tilt (ESPIRE A.2) are one definition: `book_pose_class` is bands of
`book_tilt_deg`, whichever way the book leans (back off its edge, or within its cover's plane)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from spatial_manip.geometry import relations as rel
from spatial_manip.geometry import support
from spatial_manip.scene import Scene, SceneObject, Viewpoint

SIZE = np.array([0.15, 0.02, 0.22])      # width, thickness, length: standing, the long side is up


def _book(R) -> SceneObject:
    return SceneObject("b", "book", "book", [0.5, 0.0, 0.2], SIZE, np.asarray(R, float))


def _leaning_back(deg: float) -> SceneObject:
    """Standing on its bottom edge, leaning back about that edge (the cover's width axis)."""
    return _book(Rotation.from_euler("x", deg, degrees=True).as_matrix())


def _on_a_corner(deg: float) -> SceneObject:
    """Standing, turned `deg` within its cover's plane (about its thin axis, which stays level)."""
    return _book(Rotation.from_euler("y", deg, degrees=True).as_matrix())


@pytest.mark.parametrize("lean", [_leaning_back, _on_a_corner])
@pytest.mark.parametrize("deg, tilt, pose", [(0.0, 0.0, "upright"), (15.0, 15.0, "upright"),
                                             (30.0, 30.0, "tilted"), (45.0, 45.0, "tilted")])
def test_a_book_leaning_either_way_is_classed_by_its_tilt(lean, deg, tilt, pose):
    book = lean(deg)
    assert rel.book_tilt_deg(book) == pytest.approx(tilt, abs=1e-6)
    assert rel.book_pose_class(book) == pose


@pytest.mark.parametrize("deg, pose", [(60.0, "tilted"), (75.0, "flat"), (90.0, "flat")])
def test_a_book_leaning_back_far_lies_flat(deg, pose):
    assert rel.book_pose_class(_leaning_back(deg)) == pose


def test_a_book_standing_on_its_long_edge_is_upright_and_one_on_a_corner_past_it_tilted():
    """Turned 90 degrees within its cover it stands on its long side (upright); 60 degrees is its
    long edge 30 degrees off the vertical: tilted 30, as the corner's other side says."""
    assert rel.book_pose_class(_on_a_corner(90.0)) == "upright"
    assert rel.book_tilt_deg(_on_a_corner(60.0)) == pytest.approx(30.0, abs=1e-6)
    assert rel.book_pose_class(_on_a_corner(60.0)) == "tilted"


def test_a_book_leaning_back_within_20_degrees_of_flat_is_flat_however_it_is_turned():
    turned = Rotation.from_euler("z", 37.0, degrees=True) * Rotation.from_euler("x", 72.0, degrees=True)
    assert rel.book_pose_class(_book(turned.as_matrix())) == "flat"


def _across_the_diagonal(deg: float) -> SceneObject:
    """Lying flat, then tipped `deg` about the line halfway between its cover's edges (both edges
    rise the least: each by asin(sin(deg) / sqrt 2))."""
    diagonal = np.array([1.0, 0.0, 1.0]) / math.sqrt(2.0)
    lying = Rotation.from_euler("x", 90.0, degrees=True)
    return _book((Rotation.from_rotvec(np.radians(deg) * (lying.apply(diagonal))) * lying).as_matrix())


@pytest.mark.parametrize("deg, pose", [(0.0, "flat"), (15.0, "flat"), (25.0, "tilted")])
def test_a_book_is_flat_when_its_cover_is_level_enough_to_rest_on(deg, pose):
    """One definition of level (relations.is_level) for a flat book and for what carries an object:
    tipped 25 degrees across its diagonal both cover edges stay within 20 degrees of level (its tilt
    reads 72.6), yet its cover is no surface (geometry.support), and it is not flat either."""
    book = _across_the_diagonal(deg)
    assert rel.book_pose_class(book) == pose
    assert any(s.owner_id == "b" for s in support.surfaces(Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [book]))) == (pose == "flat")
    if deg == 25.0:
        assert rel.book_tilt_deg(book) >= 90.0 - rel.FLAT_MAX_TILT_DEG


@settings(max_examples=200, deadline=None)
@given(st.floats(-math.pi, math.pi), st.floats(-math.pi, math.pi), st.floats(-math.pi, math.pi))
def test_the_pose_class_agrees_with_the_tilt_and_the_covers_level_for_any_rotation(a, b, c):
    book = _book(Rotation.from_euler("zxy", [a, b, c]).as_matrix())
    tilt, pose = rel.book_tilt_deg(book), rel.book_pose_class(book)
    assert 0.0 <= tilt <= 90.0
    cover_off_level = math.degrees(math.acos(min(1.0, abs(float(book.rotation[2, 1])))))    # SIZE's thin axis
    want = ("flat" if cover_off_level <= rel.FLAT_MAX_TILT_DEG else "upright" if tilt <= rel.UPRIGHT_MAX_TILT_DEG
            else "tilted")
    assert pose == want
    # a pose word never contradicts the tilt: flat is at least 90 - FLAT_MAX_TILT_DEG, upright at most UPRIGHT_...
    assert (pose != "flat" or tilt >= 90.0 - rel.FLAT_MAX_TILT_DEG - 1e-9) and (pose != "upright" or tilt <= 20.0)
    # turning the book about the vertical changes neither
    yawed = _book(Rotation.from_euler("z", a + 1.0).as_matrix() @ book.rotation)
    assert rel.book_tilt_deg(yawed) == pytest.approx(tilt, abs=1e-6) and rel.book_pose_class(yawed) == pose
