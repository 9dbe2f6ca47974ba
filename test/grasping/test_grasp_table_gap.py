"""GraspService against a camera pose off along the vertical: the configured table (the scene's
`table` box, exact in the base frame) and the depth's table around the target say by how much,
and the cloud is moved onto it. A calibration draw put the demo's cloud 8.6 mm low (realistic
sensing, noise draw 7, classical segmenter, library catalogue): the lying book's edge pinch was
placed on the seen book, its lower knuckle swung to 2 mm over the real table, and the motion
check refused every grasp (GRASP_FAILED three times)."""
from types import SimpleNamespace

import numpy as np
import pytest

from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.registry import make
from spatial_manip.scene import SceneObject

from synthetic import render_boxes
from test_grasp_fixtures import BOOK, PEDESTAL

TABLE = SceneObject("table", "table", "table", np.array([0.5, 0.0, -0.02]), np.array([0.8, 1.0, 0.04]), np.eye(3))


def _pedestal():
    return SceneObject("pedestal", "pedestal", "support", np.array(PEDESTAL[0]), np.array(PEDESTAL[1]), np.eye(3))


def _grasp_heights(error_m: float, objects, **config):
    """The proposed grasps' TCP heights over the book's true centre, with the camera believed
    `error_m` higher than it is (its cloud and the book's box seen that much low)."""
    depth, intr, T, _ = render_boxes([PEDESTAL, BOOK])
    believed = T.copy()
    believed[2, 3] -= error_m
    seen = TargetBox(np.array(BOOK[0]) - [0, 0, error_m], np.array(BOOK[1]), np.eye(3), "book")
    service = GraspService(make("grasp", "antipodal"), GripperGeometry(), ServiceConfig(max_grasps=50, **config))
    res = service.propose_for_box(depth, intr, believed, seen, scene=SimpleNamespace(objects=objects))
    assert res.success, res.message
    tcp = res.grasps.translations + res.grasps.depths[:, None] * res.grasps.approaches
    return tcp[:, 2] - BOOK[0][2], service


def test_a_cloud_seen_low_is_moved_onto_the_configured_table():
    low, _ = _grasp_heights(0.009, [_pedestal()])                   # no table in the scene: left as seen
    assert np.median(low) == pytest.approx(-0.009, abs=0.003)
    moved, _ = _grasp_heights(0.009, [_pedestal(), TABLE])
    assert np.abs(moved).max() < 0.004, np.round(moved, 4)


def test_a_clean_cloud_and_a_gap_past_the_limit_are_left_alone():
    clean, _ = _grasp_heights(0.0, [_pedestal(), TABLE])
    assert np.abs(clean).max() < 0.004
    far, _ = _grasp_heights(0.009, [_pedestal(), TABLE], table_gap_max_m=0.005)
    assert np.median(far) == pytest.approx(-0.009, abs=0.003)
