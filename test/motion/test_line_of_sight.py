"""The camera's line of sight past the arm, on the UR5e's collision model: seed 51's camera
behind the robot and the arm waiting at the sim's home. A book set down in the shelf's lower
middle is behind the robot's base from there (place-51-00000: judged failed while it stood in the
slot); one on an upper shelf or to the side is in full view."""
import numpy as np
import pytest

from spatial_manip.motion.line_of_sight import box_points, visible_fraction
from spatial_manip.motion.robot import RobotModel, description_paths
from spatial_manip.sim.world import STOW_Q, TOOL0_TCP

CAMERA = np.array([-1.335, -0.091, 0.59])      # place-51-00000's camera (base frame)
BOOK = np.array([0.15, 0.03, 0.22])            # an upright book's box (m)


@pytest.fixture(scope="module")
def robot():
    return RobotModel(*description_paths("ur5e"), T_tool0_tcp=TOOL0_TCP)


def test_a_book_behind_the_robots_base_is_hidden_and_one_beside_it_in_view(robot):
    behind = visible_fraction(robot, STOW_Q, CAMERA, [0.89, 0.04, -0.10], BOOK, np.eye(3))
    above = visible_fraction(robot, STOW_Q, CAMERA, [0.89, 0.04, 0.50], BOOK, np.eye(3))
    aside = visible_fraction(robot, STOW_Q, CAMERA, [0.89, -0.60, 0.20], BOOK, np.eye(3))
    assert behind < 0.1 and above == 1.0 and aside == 1.0


def test_only_the_arm_counts_and_its_pose_matters(robot):
    """place-51-00009's book, from its camera: hidden by the arm waiting at home, in view with
    the arm turned a quarter turn away."""
    camera, place = np.array([-1.43, -0.28, 0.35]), np.array([0.89, -0.04, -0.07])
    turned = STOW_Q + np.radians([-90, 0, 0, 0, 0, 0])
    assert visible_fraction(robot, turned, camera, place, BOOK, np.eye(3)) > 0.9
    assert visible_fraction(robot, STOW_Q, camera, place, BOOK, np.eye(3)) < 0.1


def test_the_traced_points_fill_the_box():
    R = np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])
    pts = box_points([1.0, 2.0, 3.0], [0.4, 0.2, 0.1], R)
    local = (pts - [1.0, 2.0, 3.0]) @ R
    assert pts.shape == (64, 3) and np.all(np.abs(local) < [0.2, 0.1, 0.05])
    assert np.allclose(pts.mean(axis=0), [1.0, 2.0, 3.0])
