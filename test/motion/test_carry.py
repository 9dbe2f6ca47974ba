"""The carry pose (issues 37/38): home is where a holding arm takes what it holds before a look only
when, on the layout the scene describes, it is clear of every keep-out and body by a margin and
hides less of the scene from the camera than the arm where it is; ArmPlans.home refuses the carry
otherwise, and the arm stays where it is. The arm poses, the held objects and the cells are those
of the benchmark episodes that motivated it (books place 85/86, objects 89; realistic, 179b716)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ompl")
pytest.importorskip("pinocchio")

from spatial_manip.control.config import load_arm_config  # noqa: E402
from spatial_manip.errors import UnreachableError  # noqa: E402
from spatial_manip.motion.arm_plans import ArmPlans, scene_world  # noqa: E402
from spatial_manip.motion.carry import CARRY_CLEAR_M, carry_refusal, hidden_share, view_points  # noqa: E402
from spatial_manip.motion.factory import make_planner  # noqa: E402
from spatial_manip.motion.world import Attached  # noqa: E402
from spatial_manip.scene import Scene, SceneObject, Viewpoint  # noqa: E402

STOW_Q = np.array([0.0, 0.5, 1.0, -3.0, 0.0, 0.0])      # sim_node's home_q: hanging low behind the base
TURNED = np.diag([-1.0, -1.0, 1.0])


@pytest.fixture(scope="module")
def planner():
    return make_planner(load_arm_config(None, {"arm.backend": "sim"}), {"seed": 5})


def _T(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _table_cell():
    """objects-89-00013: the can held where the scene began, the camera high on the table's far
    left; at that pose the upper arm hid 52% of the newton's cradle."""
    table = SceneObject("table", "table", "table", [0.55, 0.0, -0.35], [0.6, 1.4, 0.7], rotation=TURNED)
    can = Attached("can_held", np.array([0.066, 0.084, 0.071]),
                   _T([[0, 1, 0], [1, 0, 0], [0, 0, -1]], [0.0, 0.0, 0.011]))
    camera = Viewpoint((-0.643, 0.548, 0.715), (0.738, -0.326, -0.591))
    q0 = np.array([-3.495, -2.163, 1.96, -1.305, -1.578, -0.42])
    return Scene(viewer=camera, robot=Viewpoint((0, 0, 0), (1, 0, 0)), objects=[table]), can, q0


def _shelf_cell():
    """place-85-00000: the book held in front of the shelf, the camera level with the robot's base
    behind it; home hangs between the two and hides the lowest board's middle (the newton's cradle
    there, two thirds behind the robot's stand already)."""
    shelf = SceneObject("shelf", "shelf", "shelf", [0.975, 0.055, 0.035], [0.45, 1.64, 1.87], rotation=TURNED)
    book = Attached("book_11", np.array([0.115, 0.018, 0.181]),
                    _T([[0, 0, -1], [0, 1, 0], [1, 0, 0]], [0.0, 0.0, 0.027]))
    camera = Viewpoint((-1.42, -0.101, 0.346), (0.99, 0.064, -0.128))
    q0 = np.array([-3.211, -0.502, 2.451, -5.076, -1.233, -2.637])
    return Scene(viewer=camera, robot=Viewpoint((0, 0, 0), (1, 0, 0)), objects=[shelf]), book, q0


def test_over_a_table_home_is_a_carry_pose_and_uncovers_what_the_arm_hid(planner):
    scene, can, q0 = _table_cell()
    world = scene_world(scene, can)
    assert carry_refusal(planner.robot, planner.envelope, world, scene, q0, STOW_Q) is None
    points = view_points(scene)
    camera = np.asarray(scene.viewer.position)
    now = hidden_share(planner.robot, planner.envelope, q0, can, camera, points)
    there = hidden_share(planner.robot, planner.envelope, STOW_Q, can, camera, points)
    assert now > 0.3 and there < 0.05, (now, there)
    transit = ArmPlans(planner).home(q0, STOW_Q, scene, can)      # planned with the can on the gripper
    np.testing.assert_allclose(transit.path.waypoints[-1], STOW_Q, atol=1e-6)


def test_before_a_shelf_home_hides_as_much_so_the_arm_stays(planner):
    scene, book, q0 = _shelf_cell()
    why = carry_refusal(planner.robot, planner.envelope, scene_world(scene, book), scene, q0, STOW_Q)
    assert why is not None and "would hide" in why
    with pytest.raises(UnreachableError, match="home is no carry pose for book_11"):
        ArmPlans(planner).home(q0, STOW_Q, scene, book)
    # with nothing in the fingers home is home, whatever it hides (the look before a pick)
    assert ArmPlans(planner).home(q0, STOW_Q, scene, None).path is not None


def test_a_carry_pose_inside_the_stands_keep_out_or_near_a_body_is_refused(planner):
    """place-85-00013 began with the forearm 1 cm from the robot's stand (inside its square keep-out
    until 97c6c94 made it round): every motion from there refused its start, so no carry may end
    that near a keep-out; nor where any body comes nearer than the margin."""
    shelf, book, q_shelf = _shelf_cell()
    in_keep_out = np.array([-3.82, -0.27, 2.48, -5.51, -1.11, -0.35])
    why = carry_refusal(planner.robot, planner.envelope, scene_world(shelf, book), shelf, q_shelf, in_keep_out)
    assert why is not None and "keep_out:robot_stand" in why
    scene, can, q0 = _table_cell()
    T_home = planner.envelope.kin.fk(STOW_Q)
    near = np.asarray(T_home[:3, 3]) + T_home[:3, :3] @ (can.T_tcp_object[:3, 3]) + [0.0, 0.0, -0.06]
    crowded = scene.with_objects(list(scene.objects) + [SceneObject("box_1", "box", "box", near, [0.3, 0.3, 0.02])])
    why = carry_refusal(planner.robot, planner.envelope, scene_world(crowded, can), crowded, q0, STOW_Q)
    assert why is not None and f"not clear by {CARRY_CLEAR_M:.2f} m" in why


def test_a_scene_without_a_viewer_checks_only_safety(planner):
    scene, can, q0 = _shelf_cell()
    blind = Scene(viewer=Viewpoint((0.0, 0.0, 0.0), (1.0, 0.0, 0.0)), robot=scene.robot, objects=scene.objects)
    assert carry_refusal(planner.robot, planner.envelope, scene_world(blind, can), blind, q0, STOW_Q) is None
