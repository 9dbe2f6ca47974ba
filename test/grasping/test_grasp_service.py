"""GraspService's arm-link clearance: a grasp the fingers fit is still refused when the arm's
wrist would be in the table there."""
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial import cKDTree

from spatial_manip.control.config import load_home_q, load_kinematics
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, ServiceConfig, _arm_model


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


def _service(clearance):
    return GraspService(FixedGrasps(_grasps()), GripperGeometry(),
                        ServiceConfig(link_clearance_m=clearance, reference_q=load_home_q(backend="sim")),
                        kinematics=load_kinematics(backend="sim"))


def test_a_grasp_that_puts_the_wrist_in_the_table_is_refused():
    res = _service(0.01).propose_for_cloud(_table(), np.eye(4))
    assert res.success, res.message
    assert len(res.grasps) == 1 and res.grasps.approaches[0][2] < -0.9      # only the top-down grasp


def test_without_link_clearance_both_grasps_are_kept():
    res = _service(None).propose_for_cloud(_table(), np.eye(4))
    assert res.success and len(res.grasps) == 2


def test_the_refusal_says_why():
    svc = _service(0.01)
    svc.proposer = FixedGrasps(_grasps()[np.array([0])])
    res = svc.propose_for_cloud(_table(), np.eye(4))
    assert not res.success and res.error_code == "GRASP_FAILED"
    assert "1 with the arm's links in the scene" in res.message


def test_the_workspace_box_keeps_the_grasps_inside_it_and_none_keeps_every_one():
    """The box is the arm's safety workspace its caller passes (grasp_node: load_workspace); no
    default box stands beside it."""
    assert ServiceConfig().workspace_min_m is None and ServiceConfig().workspace_max_m is None
    low = ServiceConfig(link_clearance_m=None, reference_q=load_home_q(backend="sim"),
                        workspace_min_m=(-0.2, -0.75, -0.05), workspace_max_m=(0.95, 0.75, 0.2))
    svc = GraspService(FixedGrasps(_grasps()), GripperGeometry(), low, kinematics=load_kinematics(backend="sim"))
    res = svc.propose_for_cloud(_table(), np.eye(4))
    assert res.success and res.grasps.translations[:, 2].tolist() == [0.03]     # the one at 25 cm is above it
    with pytest.raises(ValueError, match="both its mins and maxes or neither"):
        ServiceConfig(workspace_min_m=(-0.2, -0.75, -0.05))
    with pytest.raises(ValueError, match="3 mins below 3 maxes"):
        ServiceConfig(workspace_min_m=(0.0, 0.0, 0.0), workspace_max_m=(1.0, 1.0, 0.0))


def test_bad_link_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="link_clearance_m"):
        ServiceConfig(link_clearance_m=-0.01)
    with pytest.raises(ValueError, match="reference_q"):
        ServiceConfig(reference_q=(0.0, 1.0, float("nan"), 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="reference_q"):
        ServiceConfig(reference_q=(0.0, 1.0))


def test_the_link_check_holds_the_wrist_housing_the_dh_chain_capsules_missed():
    """A scene point on the sim's wrist_3 housing behind its joint (4.5 cm back along its axis,
    2.5 cm out: inside the Menagerie capsule) lies more than 5 cm from the DH chain, where the
    old capsule check looked: the arm model's bodies hold it; 3 cm past them nothing is hit."""
    svc = _service(0.01)
    q = np.array(load_home_q(backend="sim"))
    arm = _arm_model(svc.kinematics)
    data = arm.model.createData()
    pin.forwardKinematics(arm.model, data, q)
    M = data.oMi[arm.model.getJointId("wrist_3_joint")]
    on_housing = M.translation + M.rotation @ np.array([0.025, 0.0, -0.045])
    chain = svc.kinematics.joint_origins(q)[2:]
    t = np.linspace(0, 1, 200)[:, None]
    nearest = min(np.linalg.norm(a + t * (b - a) - on_housing, axis=1).min() for a, b in zip(chain[:-1], chain[1:]))
    assert nearest > 0.05, "the premise: the old 5 cm capsules around the DH chain miss this point"
    assert not svc._links_clear(q, cKDTree(on_housing[None]))
    outside = M.translation + M.rotation @ np.array([0.046 + 0.03, 0.0, -0.045])
    assert svc._links_clear(q, cKDTree(outside[None]))


def test_a_neighbour_in_the_nearest_configurations_way_leaves_another_configuration():
    """A point on the forearm of the top-down grasp's configuration nearest home (a standing book
    beside the target, say) blocks that configuration only: another branch of the arm reaches the
    grasp and its pre-grasp clear of it, so the grasp goes on to the motion check (pick-63-00011)."""
    svc = _service(0.01)
    svc.proposer = FixedGrasps(_grasps()[np.array([1])])
    tcp = svc.gripper.tcp_poses(svc.proposer.grasps.matrices(), svc.proposer.grasps.depths)[0]
    q_near = svc.kinematics.ik(tcp, svc.config.reference_q)
    arm = _arm_model(svc.kinematics)
    data = arm.model.createData()
    pin.forwardKinematics(arm.model, data, q_near)
    elbow, wrist = (data.oMi[arm.model.getJointId(j)].translation for j in ("elbow_joint", "wrist_1_joint"))
    on_forearm = (elbow + wrist) / 2
    tree = cKDTree(on_forearm[None])
    assert not svc._links_clear(q_near, tree), "the premise: the point is on the nearest configuration's forearm"
    assert svc._some_configuration_clear([tcp, *svc._pre_grasps(tcp)], tree)
    res = svc.propose_for_cloud(np.vstack([_table(), on_forearm]), np.eye(4))
    assert res.success and len(res.grasps) == 1, res.message
