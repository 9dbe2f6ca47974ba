"""A place that names no pose keeps the way a non-book rests (issue 38): a carton or a bottle
carried on its side is set down on its side, not stood on its end (seed 61: three places judged
tipped 90 deg, their planned pose standing the carried carton or bottle on its end)."""
import math

import numpy as np
import pytest

from spatial_manip.geometry import relations as rel
from spatial_manip.transforms import quat_to_matrix
from spatial_manip.reasoning.examples import held_table_scene
from spatial_manip.reasoning.program import execute, resting_rotation
from spatial_manip.scene import SceneObject


def _rz(deg):
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def _rx(deg):
    a = math.radians(deg)
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def _holding(obj_size, R, category):
    s = held_table_scene()
    book = s.held_object()
    s.objects.remove(book)
    s.objects.append(SceneObject("held", category, category, book.center, obj_size, R, held=True))
    return s


LYING_CARTON = (0.054, 0.144, 0.055)          # LIBERO's orange juice carton as its file lays it


@pytest.mark.parametrize("yaw_deg", [0.0, 30.0, -75.0])
def test_a_carton_carried_on_its_side_is_set_down_on_its_side_keeping_its_yaw(yaw_deg):
    held_R = _rz(yaw_deg) @ _rx(6.0)           # swung a little in the fingers
    scene = _holding(LYING_CARTON, held_R, "carton")
    res = execute("place(metric$Near(0.05, jar), pose=keep)", scene)
    R = quat_to_matrix(res.place_pose.orientation)
    placed = SceneObject("p", "carton", "carton", res.place_pose.position, LYING_CARTON, R)
    assert rel.is_standing(placed) and rel.tilt_deg(placed) < 0.5            # its own up stays up
    assert float(R[:, 0] @ held_R[:, 0]) > math.cos(math.radians(7.0))    # the yaw it hangs with
    # it rests on the table: its centre half its own height (5.5 cm) above the top
    assert res.place_pose.position[2] == pytest.approx(rel.support_top(scene.objects, res.place_pose.position, 0.0)
                                                       + LYING_CARTON[2] / 2, abs=0.003)
    kept = [t for t in res.trace if t.get("node") == "pose=keep"]
    assert kept and kept[0]["pose_class"] == "resting" and "face it rests on" in kept[0]["why"]


def test_a_named_pose_still_stands_it_up_and_a_book_keeps_its_class():
    scene = _holding(LYING_CARTON, np.eye(3), "carton")
    R = quat_to_matrix(execute("place(metric$Near(0.05, jar), pose=upright)", scene).place_pose.orientation)
    long_axis = R[:, int(np.argmax(LYING_CARTON))]
    assert abs(long_axis @ rel.UP) > 0.99                                 # asked for: on its end
    book = execute("place(metric$Near(0.05, jar), pose=keep)", held_table_scene())
    assert [t["pose_class"] for t in book.trace if t.get("node") == "pose=keep"] == ["upright"]


def test_an_upside_down_object_stays_upside_down_and_a_slot_squares_it_to_its_walls():
    R = resting_rotation(_rz(20.0) @ _rx(172.0))
    assert R[:, 2] @ rel.UP == pytest.approx(-1.0, abs=1e-9)           # the face it rests on stays down
    slot = np.eye(3)
    squared = resting_rotation(_rz(20.0) @ _rx(3.0), slot)
    assert abs(squared[:, 0] @ slot[:, 0]) == pytest.approx(1.0, abs=1e-9)   # 20 deg turned back to 0, not 90
    assert squared[:, 0] @ slot[:, 0] > 0
    assert np.allclose(squared @ squared.T, np.eye(3), atol=1e-9)

