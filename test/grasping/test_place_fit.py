"""Setting a held book down as it is held: fingers above the support, pose class kept."""
import numpy as np
import pytest

from spatial_manip.control.config import load_kinematics
from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.relations import book_pose_class
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.place_fit import REGRASP_STEP_M, finger_points, fit_place, keeps_its_up, shallower_grasps
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


def _slot_scene():
    """One shelf slot 0.75..1.19 m out along x, floor at z=0.1, open towards the robot (-x)."""
    from spatial_manip.scene import Region, Scene, Viewpoint
    yaw180 = np.diag([-1.0, -1.0, 1.0])
    slot = Region("slot_r2c1", "slot", center=[0.97, 0.0, 0.272], size=[0.44, 0.6, 0.344], rotation=yaw180)
    robot = Viewpoint(np.zeros(3), np.array([1.0, 0, 0]))
    return Scene(robot, robot, [], [slot]), slot


def test_a_slot_place_slides_in_from_the_open_side_held_from_the_front():
    from spatial_manip.control.primitives import back_off
    from spatial_manip.grasping.place_fit import slot_entry
    scene, slot = _slot_scene()
    T_place = np.eye(4)
    T_place[:3, 3] = [0.97, 0.0, 0.1 + SIZE[2] / 2]
    entry = slot_entry(scene, T_place)
    assert np.allclose(entry.direction, [1, 0, 0]) and entry.front == pytest.approx(0.75)
    T_obj, T_tcp = fit_place(T_place, SIZE, _edge_grasp(), width_m=0.03, entry=entry,
                             kinematics=load_kinematics(backend="sim"))
    near = T_obj[0, 3] - np.abs(T_obj[0, :3]) @ (SIZE / 2)
    assert near == pytest.approx(0.75 + entry.inset_m)                  # just inside the opening
    assert T_tcp[0, 3] < T_obj[0, 3]                                    # the gripper on the robot's side
    pre = back_off(T_tcp, entry.approach_m(T_obj, SIZE), entry.direction)
    far_at_pre = pre[0, 3] - T_tcp[0, 3] + T_obj[0, 3] + np.abs(T_obj[0, :3]) @ (SIZE / 2)
    assert far_at_pre == pytest.approx(0.75 - entry.clearance_m)        # all of it in front of the slot
    assert np.allclose(pre[1:3, 3], T_tcp[1:3, 3])                      # a horizontal slide


def _flat_in_slot(size, width_m: float):
    """fit_place of a book laid flat (thickness vertical) in the test slot, held by its width
    edge (-x of the book) pinching the thickness: (T_obj, T_tcp, the slot's entry)."""
    from spatial_manip.grasping.place_fit import slot_entry
    scene, _ = _slot_scene()
    T_place = np.eye(4)
    T_place[:3, :3] = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    T_place[:3, 3] = [0.97, 0.0, 0.1 + size[1] / 2]
    entry = slot_entry(scene, T_place)
    side_grasp = np.eye(4)
    side_grasp[:3, :3] = np.array([[0, 0, 1.0], [0, 1.0, 0], [-1.0, 0, 0]])
    side_grasp[:3, 3] = [-size[0] / 2 + 0.03, 0, 0]
    return (*fit_place(T_place, size, side_grasp, width_m=width_m, entry=entry), entry)


def test_a_flat_slot_place_overhangs_the_edge_so_the_lower_finger_stays_out():
    T_obj, T_tcp, entry = _flat_in_slot(SIZE, width_m=0.03)
    pts = finger_points(T_tcp, 0.03, GripperGeometry())
    below = pts[pts[:, 2] < T_obj[2, 3] - SIZE[1] / 2]                   # the finger under the book
    assert len(below) and below[:, 0].max() < entry.front                 # is in front of the floor board
    assert T_obj[0, 3] > entry.front + entry.min_rest_m                   # still resting on the floor


def test_a_thick_book_laid_flat_in_a_slot_keeps_the_opening_finger_out_of_the_board():
    """A 4 cm book held by its edge clears the floor board at the holding width, but the fingers
    open fully to let go (and the arm planner checks them open, pads reaching 19 mm past the TCP):
    the lower one must stay in front of the opening, so the book overhangs the edge
    (place-7-00013: every straight slide in was refused, finger on the board)."""
    T_obj, T_tcp, entry = _flat_in_slot(np.array([0.228, 0.04, 0.299]), width_m=0.04)
    opened = finger_points(T_tcp, GripperGeometry().max_width_m, GripperGeometry())
    below = opened[opened[:, 2] < 0.1]                                      # opened below the board's top
    assert len(below) and below[:, 0].max() + 0.019 < entry.front           # pads included, in front of it
    assert T_obj[0, 3] > entry.front + entry.min_rest_m                     # still resting on the floor


def test_no_slot_entry_on_an_open_surface():
    from spatial_manip.grasping.place_fit import slot_entry
    scene, _ = _slot_scene()
    T_place = np.eye(4)
    T_place[:3, 3] = [0.45, 0.1, SIZE[2] / 2]
    assert slot_entry(scene, T_place) is None and slot_entry(None, T_place) is None


def test_other_places_along_a_slot_stay_clear_of_its_walls_and_contents_nearest_the_robot_first():
    from spatial_manip.grasping.place_fit import SLOT_MARGIN_M, slot_positions
    from spatial_manip.scene import SceneObject
    scene, slot = _slot_scene()          # 0.6 m wide: y in [-0.3, 0.3]
    scene.robot.position[:] = [0.0, 0.4, 0.0]          # the robot off to the slot's +y side
    standing = SceneObject("book_9", "book", "book", [0.85, -0.2, 0.19], [0.15, 0.03, 0.18])
    scene = scene.with_objects([standing])
    T_place = np.eye(4)
    T_place[:3, 3] = [0.97, 0.0, 0.1 + SIZE[2] / 2]
    out = slot_positions(scene, slot, T_place, SIZE, limit=20)
    ys = [T[1, 3] for T in out]
    half = SIZE[1] / 2 + SLOT_MARGIN_M          # upright: the thickness lies across the slot
    assert ys and 0.0 not in ys                                           # the planned one is not repeated
    assert all(-0.3 + half <= y <= 0.3 - half for y in ys)                # inside the walls
    assert all(abs(y + 0.2) >= 0.015 + half for y in ys)                  # clear of the book standing there
    assert ys == sorted(ys, reverse=True)                                  # nearest the robot first
    assert all(np.allclose(T[[0, 2], 3], T_place[[0, 2], 3]) and np.allclose(T[:3, :3], np.eye(3)) for T in out)
    assert len(slot_positions(scene, slot, T_place, SIZE)) == 4           # a few at most by default



CARTON = np.array([0.054, 0.143, 0.055])        # a lying milk carton: 5.4 x 5.5 cm across, 14.3 cm long


def _carton_top_grasp() -> np.ndarray:
    """TCP pinching the carton across its 5.4 cm (x) from above, 2 cm down from its top."""
    T = np.eye(4)
    T[:3, :3] = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])   # closing x, approach -z
    T[:3, 3] = [0.0, 0.0, CARTON[2] / 2 - 0.02]
    return T


class _OnlyFromTheSide:
    """An arm that reaches a TCP only when its approach (z) is horizontal (a far place)."""

    def ik_all(self, T):
        return [np.zeros(6)] if abs(np.asarray(T)[2, 2]) < 0.3 else []


def test_a_chunky_object_is_never_turned_onto_another_face_to_be_reached():
    """objects-88-00001: the carton's square section read 'flat' on either face, and where its
    top-down hold was out of reach it was rolled onto its side to be held from the side (tipped
    90 deg). A chunky object keeps the face it is asked to rest on, whatever the words left
    open: refused instead; where the arm reaches, set down as asked."""
    T_place = np.eye(4)
    T_place[:3, 3] = [0.45, 0.1, CARTON[2] / 2]
    T_obj, _ = fit_place(T_place, CARTON, _carton_top_grasp(), width_m=0.054, any_pose_class=True)
    assert T_obj[2, 2] > 0.99
    with pytest.raises(UnreachableError, match="no arm IK solution"):
        fit_place(T_place, CARTON, _carton_top_grasp(), width_m=0.054, kinematics=_OnlyFromTheSide(),
                  any_pose_class=True)
    # a book is a slab: its pose class, not its face, is what is kept (turned over, or stood up when
    # the words left it open)
    assert keeps_its_up(CARTON) and not keeps_its_up(SIZE)


def test_shallower_grasps_slide_the_grasp_out_towards_its_edge_while_the_fingers_stay_on():
    """place-85-00009's grasp: 3 cm in from the book's 10.9 cm side edge, across its thickness."""
    T = np.array([[0, 0, 1.0, -0.0247], [0, -1.0, 0, 0], [1.0, 0, 0, 0], [0, 0, 0, 1]])
    size = [0.109, 0.017, 0.186]
    out = shallower_grasps(T, size)
    assert len(out) == 3
    for k, S in enumerate(out, 1):
        np.testing.assert_allclose(S[:3, :3], T[:3, :3])
        np.testing.assert_allclose(S[:3, 3], T[:3, 3] - [k * REGRASP_STEP_M, 0, 0], atol=1e-12)
        assert 0.0545 + S[0, 3] >= GripperGeometry().min_depth_m      # the TCP still that far in
    at_edge = T.copy()
    at_edge[0, 3] = -0.0545 + GripperGeometry().min_depth_m
    assert shallower_grasps(at_edge, size) == []
