"""Setting a held book down as it is held: fingers above the support, pose class kept."""
import numpy as np
import pytest

from spatial_manip.control.config import load_kinematics
from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.relations import book_pose_class
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.place_fit import finger_points, fit_place
from types import SimpleNamespace

SIZE = np.array([0.16, 0.022, 0.23])      # width, thickness, height (GT book axes)


def _edge_grasp() -> np.ndarray:
    """TCP holding the book's top edge (+z of the book) from above, pinching the thickness (y)."""
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])      # approach (tcp z) = -book z, closing = book y
    T[:3, 3] = [0.0, 0.0, SIZE[2] / 2 - 0.02]   # fingertips 2 cm inside the top edge
    return T


def test_upright_place_keeps_fingers_above_the_table_and_the_class():
    T_place = np.eye(4)
    T_place[:3, 3] = [0.45, 0.1, SIZE[2] / 2]
    T_obj, T_tcp = fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03,
                             kinematics=load_kinematics(backend="sim"))
    assert book_pose_class(SimpleNamespace(rotation=T_obj[:3, :3], size=SIZE)) == "upright"
    assert np.allclose(T_obj[:2, 3], [0.45, 0.1])
    assert finger_points(T_tcp, 0.03, GripperGeometry())[:, 2].min() > 0.0
    assert np.allclose(T_obj @ _edge_grasp(), T_tcp)


def test_a_flat_place_with_an_edge_grasp_turns_the_gripped_edge_up_or_refuses():
    """Laid flat, the edge grasp puts a finger under the book: never returned."""
    T_place = np.eye(4)
    T_place[:3, :3] = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])   # thickness vertical
    T_place[:3, 3] = [0.45, 0.1, SIZE[1] / 2]
    try:
        _, T_tcp = fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03)
    except UnreachableError as e:
        assert "finger into the support" in str(e)
    else:
        assert finger_points(T_tcp, 0.03, GripperGeometry())[:, 2].min() > 0.0


def test_out_of_reach_is_a_clear_error():
    T_place = np.eye(4)
    T_place[:3, 3] = [2.5, 0.0, SIZE[2] / 2]
    with pytest.raises(UnreachableError, match="no arm IK solution"):
        fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03, kinematics=load_kinematics(backend="sim"))
