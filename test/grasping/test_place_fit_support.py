"""fit_place turns the held book until it rests (geometry.support): a rotation whose set-down
would stand inside a neighbour is skipped, and a refusal counts them and says why."""
import numpy as np
import pytest

from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.support import check_support
from spatial_manip.grasping.place_fit import fit_place
from spatial_manip.scene import Scene, SceneObject, Viewpoint

SIZE = np.array([0.16, 0.022, 0.23])
TABLE = SceneObject("table", "table", "table", [0.6, 0.0, -0.35], [0.6, 1.4, 0.7])
# a mug whose side is 3 cm from the place point along world x: the book standing with its 16 cm
# width along x would be inside it, turned to stand along y it is clear
MUG = SceneObject("mug", "mug", "reference", [0.45 + 0.03 + 0.045, 0.1, 0.05], [0.09, 0.09, 0.1])


def _edge_grasp() -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = [0.0, 0.0, SIZE[2] / 2 - 0.02]
    return T


def _rests_in(scene):
    def rests(T_obj):
        check_support(scene, SceneObject("book", "book", "book", T_obj[:3, 3], SIZE, T_obj[:3, :3]))
    return rests


def test_a_rotation_inside_a_neighbour_is_skipped_for_one_that_rests():
    T_place = np.eye(4)
    T_place[:3, 3] = [0.45, 0.1, SIZE[2] / 2]
    scene = Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [TABLE, MUG])
    T_free, _ = fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03)
    with pytest.raises(UnreachableError, match="inside the mug"):       # the closest rotation to the asked one
        _rests_in(scene)(T_free)
    T_obj, _ = fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03, rests=_rests_in(scene))
    _rests_in(scene)(T_obj)
    assert np.allclose(T_obj[:2, 3], [0.45, 0.1])


def test_no_rotation_that_rests_is_unreachable_saying_why():
    T_place = np.eye(4)
    T_place[:3, 3] = [0.6, 0.72, SIZE[2] / 2]          # its middle 2 cm beyond the table's side edge
    scene = Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [TABLE])
    with pytest.raises(UnreachableError, match=r"\d+ would not rest there \(the first: no support under the book"):
        fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03, rests=_rests_in(scene))
