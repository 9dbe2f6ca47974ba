"""Configured support surfaces (shelf slot floors) next to fitted planes."""
import numpy as np

from spatial_manip.perception.base import SLOT_WALL_M, SegmentationHints
from spatial_manip.perception.planes import known_plane, with_known_planes
from spatial_manip.scene import Region, Scene, Viewpoint


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
