import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.bench.grasp_stability import grasp_angle_deg
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, TargetBox
from spatial_manip.registry import make
from spatial_manip.transforms import look_at

from synthetic import render_boxes


def test_a_half_turn_about_the_approach_is_the_same_grasp():
    """A parallel gripper closing from either side is one grasp: the stability figure must not
    count a 180-degree turn about the approach (the grasp frame's x) as the top grasp moving."""
    R = Rotation.from_euler("xyz", [10, 40, -20], degrees=True).as_matrix()
    flipped = R @ np.diag([1.0, -1.0, -1.0])
    assert grasp_angle_deg(R, flipped) == pytest.approx(0.0, abs=1e-4)
    assert grasp_angle_deg(R, R) == pytest.approx(0.0, abs=1e-4)


def test_a_turn_of_the_approach_is_measured():
    R = np.eye(3)
    tilted = Rotation.from_euler("z", 30, degrees=True).as_matrix()     # the approach (x) turns 30 degrees
    assert grasp_angle_deg(R, tilted) == pytest.approx(30.0, abs=1e-3)
    about_approach = Rotation.from_euler("x", 50, degrees=True).as_matrix()
    assert grasp_angle_deg(R, about_approach) == pytest.approx(50.0, abs=1e-3)


def test_the_top_grasp_of_a_carton_holds_its_place_across_noise_draws():
    """Issue 38/36: a grasp proposer whose answer flips between two frames of one still scene is
    fragile. A lying carton (5.4 x 14.3 x 5.5 cm) beside a mug-sized block, seen from 1.05 m
    through four draws of the L515's noise (seeded): every frame gets a grasp, closing across
    the carton's 5.4 cm and centred on it, never on the neighbour."""
    carton, neighbour = ((0.5, 0.0, 0.0275), (0.054, 0.143, 0.055)), ((0.5, 0.13, 0.05), (0.09, 0.09, 0.10))
    depth, intr, T, _ = render_boxes([carton, neighbour], T_base_cam=look_at((-0.2, 0.3, 0.75), (0.5, 0.0, 0.0)),
                                     table_half=(0.4, 0.6))
    service = GraspService(make("grasp", "antipodal"), GripperGeometry())
    box = TargetBox(np.array(carton[0]), np.array(carton[1]), np.eye(3), "carton")
    for draw in range(4):
        noisy = L515Noise().apply(depth, np.random.default_rng(draw)).astype(np.float32)
        res = service.propose_for_box(noisy, intr, T, box)
        assert res.success, f"draw {draw}: {res.message}"
        top = service.gripper.tcp_poses(res.grasps.matrices()[:1], res.grasps.depths[:1])[0]
        assert abs(top[0, 1]) > np.cos(np.deg2rad(30)), f"draw {draw}: closing {top[:3, 1].round(2)}"
        offset = top[:3, 3] - carton[0]
        assert abs(offset[0]) < 0.01 and abs(offset[1]) < 0.05, f"draw {draw}: TCP {offset.round(3)} off the carton's middle"
