"""GraspService's arm-link clearance: a grasp the fingers fit is still refused when the arm's
wrist would be in the table there."""
import numpy as np
import pytest

from spatial_manip.control.config import load_home_q, load_kinematics
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, ServiceConfig


def _table(z=0.0):
    x, y = np.meshgrid(np.arange(0.1, 0.9, 0.01), np.arange(-0.6, 0.6, 0.01))
    return np.column_stack([x.ravel(), y.ravel(), np.full(x.size, z)])


class FixedGrasps:
    """Proposer double: returns the given grasps whatever the cloud."""

    def __init__(self, grasps):
        self.grasps = grasps

    def get_grasp(self, points, colors=None, **kw):
        return self.grasps, None


def _grasps():
    down = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])     # approach (x) = -z, closing y
    sideways = np.eye(3)                                      # approach +x, 3 cm over the table
    return GraspGroup.from_parts(scores=[0.9, 0.8], widths=[0.04, 0.04], heights=[0.02, 0.02], depths=[0.02, 0.02],
                                 rotations=np.stack([sideways, down]),
                                 translations=np.array([[0.45, -0.2, 0.03], [0.5, -0.2, 0.25]]))


def _service(radius):
    return GraspService(FixedGrasps(_grasps()), GripperGeometry(),
                        ServiceConfig(link_radius_m=radius, reference_q=load_home_q(backend="sim")),
                        kinematics=load_kinematics(backend="sim"))


def test_a_grasp_that_puts_the_wrist_in_the_table_is_refused():
    res = _service(0.05).propose_for_cloud(_table(), np.eye(4))
    assert res.success, res.message
    assert len(res.grasps) == 1 and res.grasps.approaches[0][2] < -0.9      # only the top-down grasp


def test_without_link_clearance_both_grasps_are_kept():
    res = _service(0.0).propose_for_cloud(_table(), np.eye(4))
    assert res.success and len(res.grasps) == 2


def test_the_refusal_says_why():
    svc = _service(0.05)
    svc.proposer = FixedGrasps(_grasps()[np.array([0])])
    res = svc.propose_for_cloud(_table(), np.eye(4))
    assert not res.success and res.error_code == "GRASP_FAILED"
    assert "1 with the arm's links in the scene" in res.message


def test_bad_link_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="link_radius_m"):
        ServiceConfig(link_radius_m=-0.01)
    with pytest.raises(ValueError, match="reference_q"):
        ServiceConfig(reference_q=(0.0, 1.0, float("nan"), 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="reference_q"):
        ServiceConfig(reference_q=(0.0, 1.0))
