"""Configured support surfaces (shelf slot floors, fixture tops) next to fitted planes, and the
footprints of fitted ones."""
import re

import numpy as np
import pytest

from spatial_manip.perception.base import SLOT_WALL_M, SegmentationHints
from spatial_manip.perception.planes import (box_top_plane, fit_horizontal_planes, known_plane, support_of,
                                             with_known_planes)
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint


def test_a_fitted_plane_that_is_a_configured_one_is_not_kept_twice():
    board = known_plane(0.30, (0.75, -0.4), (1.15, 0.4))
    same = known_plane(0.305, (0.7, -0.4), (1.2, 0.4))      # the same board, fitted
    floor = known_plane(-0.9, (-1.0, -2.0), (2.0, 2.0))
    planes = with_known_planes([same, floor], [board])
    assert [p is board for p in planes] == [True, False] and planes[1] is floor   # `same` dropped
    assert board.covers(np.array([[0.9, 0.0, 0.4], [0.5, 0.0, 0.4]])).tolist() == [True, False]


def test_slot_floors_are_hints_without_the_band_along_the_walls():
    yaw180 = np.diag([-1.0, -1.0, 1.0])                     # open towards -x (the robot)
    slot = Region("slot_r2c1", "slot", center=[0.97, 0.0, 0.272], size=[0.44, 0.6, 0.344], rotation=yaw180)
    robot = Viewpoint(np.zeros(3), np.array([1.0, 0, 0]))
    (z, lo, hi), = SegmentationHints.from_scene(Scene(robot, robot, [], [slot])).supports
    assert abs(z - 0.1) < 1e-9
    np.testing.assert_allclose(lo, [0.75, -0.3 + SLOT_WALL_M])          # the open front is kept
    np.testing.assert_allclose(hi, [1.19 - SLOT_WALL_M, 0.3 - SLOT_WALL_M])


def _rz(deg):
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def test_a_pedestal_top_is_a_support_plane_over_its_rotated_face():
    plane = box_top_plane([0.5, 0.1, 0.035], [0.20, 0.10, 0.07], _rz(30))
    assert abs(plane.z0 - 0.07) < 1e-9
    along_long_side = 0.5 + 0.08 * np.cos(np.radians(30)), 0.1 + 0.08 * np.sin(np.radians(30))
    beyond_the_corner = 0.5 + 0.09, 0.1 - 0.06
    assert plane.covers(np.array([[0.5, 0.1], along_long_side, beyond_the_corner])).tolist() == [True, True, False]


def test_tilted_or_narrow_fixtures_hold_nothing():
    tilted = np.array([[1, 0, 0], [0, np.cos(0.6), -np.sin(0.6)], [0, np.sin(0.6), np.cos(0.6)]])
    assert box_top_plane([0.5, 0.0, 0.1], [0.2, 0.1, 0.2], tilted) is None       # a book wedge's ramp
    assert box_top_plane([0.5, 0.0, 0.035], [0.13, 0.015, 0.07], np.eye(3)) is None  # a holder's wall


def _grid_points(x0, x1, y0, y1, z, step=0.01):
    x, y = np.meshgrid(np.arange(x0, x1, step), np.arange(y0, y1, step))
    return np.column_stack([x.ravel(), y.ravel(), np.full(x.size, z)])


def test_a_table_footprint_spans_an_occluded_edge_but_not_a_distant_slice_at_its_height():
    table = _grid_points(0.25, 0.85, -0.7, 0.7, 0.0)
    arm_shadow = (table[:, 0] < 0.45) & (np.abs(table[:, 1]) < 0.15)      # hidden up to the front edge
    statue_slice = _grid_points(1.6, 1.75, -0.3, -0.29, 0.0)                # a pot crossing z = 0 behind it
    cloud = np.vstack([table[~arm_shadow], statue_slice])
    plane, = fit_horizontal_planes(cloud, np.random.default_rng(0), max_planes=1)
    probe = np.array([[0.30, 0.0], [0.6, 0.5], [1.65, -0.3]])
    assert plane.covers(probe).tolist() == [True, True, False]
    # so the slice is not table surface: above a floor, it stays a candidate object point
    floor = known_plane(-0.7, (-1.0, -2.0), (3.0, 2.0))
    sup, _ = support_of(np.array([[1.65, -0.3, 0.003], [0.3, 0.0, 0.003]]), [plane, floor], min_height_m=0.007)
    assert sup.tolist() == [1, -1]


def test_a_slice_across_object_tops_the_camera_sees_the_table_through_is_no_surface():
    # strips of object tops 8 cm above the table, 2 cm apart (one empty cell: one patch of 0.18 m2),
    # and the table seen between them: a surface would hide the table under it (planes.SEEN_THROUGH_SHARE)
    camera = np.array([-0.8, 0.0, 0.9])
    tops = np.vstack([_grid_points(x, x + 0.02, -0.3, 0.3, 0.08) for x in np.arange(0.3, 0.9, 0.04)])
    table = _grid_points(0.1, 1.0, -0.7, 0.7, 0.0)
    between = ((table[:, 0] - 0.3) % 0.04 >= 0.02) | (np.abs(table[:, 1]) > 0.3) | (table[:, 0] < 0.3)
    cloud = np.vstack([table[between], tops])
    sliced = fit_horizontal_planes(cloud, np.random.default_rng(0), max_planes=2)
    assert sorted(round(p.z0, 2) for p in sliced) == [0.0, 0.08]          # without the camera: taken for a surface
    planes = fit_horizontal_planes(cloud, np.random.default_rng(0), max_planes=2, camera_m=camera)
    assert [round(p.z0, 2) for p in planes] == [0.0]
    # a board at that height, whose top hides the table under it, stays a surface
    board = _grid_points(0.3, 0.9, -0.3, 0.3, 0.08)
    hidden = table[(table[:, 0] < 0.3) | (np.abs(table[:, 1]) > 0.3) | (table[:, 0] > 0.9)]
    planes = fit_horizontal_planes(np.vstack([hidden, board]), np.random.default_rng(0), max_planes=2, camera_m=camera)
    assert sorted(round(p.z0, 2) for p in planes) == [0.0, 0.08]


def test_fixtures_are_hints_with_their_parts_and_are_not_expected():
    robot = Viewpoint(np.zeros(3), np.array([1.0, 0, 0]))
    part = {"center": [0.5, 0.0, 0.035], "size": [0.2, 0.1, 0.07], "rotation": np.eye(3).tolist()}
    pedestal = SceneObject("support_1", "pedestal", "support", np.array([0.5, 0.0, 0.035]), np.array([0.2, 0.1, 0.07]),
                           extra={"parts": [part]})
    book = SceneObject("book_1", "book", "book", np.zeros(3), np.array([0.15, 0.02, 0.22]))
    hints = SegmentationHints.from_scene(Scene(robot, robot, [pedestal, book], []))
    assert [e.id for e in hints.expected] == ["book_1"]
    (fixture,) = hints.fixtures
    np.testing.assert_allclose(fixture.size, [0.2, 0.1, 0.07])


@pytest.mark.parametrize("part, says", [
    ({"center": [0.5, 0.0], "size": [0.2, 0.1, 0.07], "rotation": np.eye(3).tolist()}, "'center' must be 3 numbers"),
    ({"center": [0.5, 0.0, 0.0], "size": [0.2, 0.1, 0.07], "rotation": [1.0, 0.0]}, "'rotation' must be 9 numbers"),
    ({"center": [0.5, 0.0, float("nan")], "size": [0.2, 0.1, 0.07], "rotation": np.eye(3).tolist()}, "non-finite"),
    ({"center": [0.5, 0.0, 0.0], "size": [0.2, 0.0, 0.07], "rotation": np.eye(3).tolist()}, "'size' must be positive"),
])
def test_a_malformed_fixture_part_is_refused_by_name(part, says):
    robot = Viewpoint(np.zeros(3), np.array([1.0, 0, 0]))
    pedestal = SceneObject("support_1", "pedestal", "support", np.zeros(3), np.ones(3) * 0.1, extra={"parts": [part]})
    with pytest.raises(ValueError, match=re.escape("object 'support_1': parts[0]") + ".*" + re.escape(says)):
        SegmentationHints.from_scene(Scene(robot, robot, [pedestal], []))


def test_a_fixture_part_without_a_rotation_stands_square():
    robot = Viewpoint(np.zeros(3), np.array([1.0, 0, 0]))
    part = {"center": [0.5, 0.0, 0.035], "size": [0.2, 0.1, 0.07]}
    pedestal = SceneObject("support_1", "pedestal", "support", np.zeros(3), np.ones(3) * 0.1, extra={"parts": [part]})
    (fixture,) = SegmentationHints.from_scene(Scene(robot, robot, [pedestal], [])).fixtures
    np.testing.assert_allclose(fixture.size, [0.2, 0.1, 0.07])
    np.testing.assert_allclose(fixture.rotation, np.eye(3))


def test_a_floor_that_is_a_small_share_of_the_view_is_still_found():
    # A shelf seen from the front: vertical panels fill the view and the floor is 14 % of it.
    # Three random points rarely all lie on the floor, so the fullest heights are tried too.
    rng = np.random.default_rng(3)
    floor = np.column_stack([rng.uniform(0.7, 1.4, 2000), rng.uniform(-0.8, 0.8, 2000), np.full(2000, -0.9)])
    panels = np.column_stack([np.repeat([0.75, 0.8, 1.2], 4000), rng.uniform(-0.9, 0.9, 12000),
                              rng.uniform(-0.9, 1.0, 12000)])
    cloud = np.vstack([floor, panels]) + rng.normal(0, 0.001, (14000, 3))
    planes = fit_horizontal_planes(cloud, np.random.default_rng(0))
    assert [round(p.z0, 2) for p in planes] == [-0.9]
