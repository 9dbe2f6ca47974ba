"""The proposer's gripper model against the real 2F-85 (the simulator's MuJoCo model, posed at each
proposed grasp with the fingers open as the arm opens them): issue 38's mugs' low side grasps put
the base and the knuckle linkage into the table, and the approach stopped 4-7 cm short; a book's
edge pinch over a pedestal's overhang must stay (the gripper body clears the table there)."""
import numpy as np
import pytest

from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.registry import make
from spatial_manip.transforms import look_at

from real_gripper import gripper_points, inside_box
from synthetic import render_boxes
from test_grasp_fixtures import BOOK, PEDESTAL, _scene

SIDE_COS = 0.5        # an approach within 30 degrees of horizontal is a side grasp


def _grasps(boxes, target, T_base_cam=None, scene=None, **proposer):
    depth, intr, T, _ = render_boxes(boxes, **({} if T_base_cam is None else {"T_base_cam": T_base_cam}))
    service = GraspService(make("grasp", "antipodal", **proposer), GripperGeometry(), ServiceConfig(max_grasps=50))
    res = service.propose_for_box(depth, intr, T, TargetBox(np.array(target[0]), np.array(target[1]), np.eye(3), "t"),
                                  scene=scene)
    assert res.success, res.message
    return service.gripper, res.grasps


def _real_body(gripper: GripperGeometry, g) -> np.ndarray:
    """The real gripper's body at and behind its fingertips' plane (the pads' tips, which swing
    4.5-18 mm past the TCP as the fingers close, are not modelled by the proposer yet)."""
    tcp = g.translation + g.depth * g.approach
    body = gripper_points(np.eye(3), np.zeros(3), float(gripper.opening_m(g.width)))
    return gripper_points(g.rotation_matrix, tcp, float(gripper.opening_m(g.width)))[body[:, 0] <= 0.0]


@pytest.mark.parametrize("eye", [(0.0, 0.0, 0.55), (0.1, -0.3, 0.35)])
def test_a_mugs_side_grasps_keep_the_real_gripper_out_of_the_table(eye):
    """A mug's body (7 x 7 x 9 cm, upright), seen from above and from the side: every grasp
    proposed leaves the real gripper's base, knuckles and fingers above the table at its full
    depth, and side grasps are still offered (high enough on the mug). With the model smaller
    than the real body (palm 6 cm high, no knuckles) a grasp put it 8 mm and 1 mm into the table."""
    mug = ((0.55, 0.0, 0.045), (0.07, 0.07, 0.09))
    gripper, gg = _grasps([mug], mug, T_base_cam=look_at(eye, (0.55, 0.0, 0.05)))
    assert any(abs(g.approach[2]) < SIDE_COS for g in gg), "no side grasp offered on the mug"
    for g in gg:
        lowest = _real_body(gripper, g)[:, 2].min()
        assert lowest > 0.0, f"grasp at TCP {np.round(g.translation + g.depth * g.approach, 3)} approach " \
                             f"{np.round(g.approach, 2)}: the real gripper reaches {lowest * 100:.1f} cm into the table"


def test_a_books_edge_pinch_over_a_pedestal_stays_and_clears_table_and_pedestal():
    """The lying book overhanging its pedestal by 3 cm (test_grasp_fixtures): the edge pinch
    (a level approach, closing across the 1.6 cm thickness) is still offered, and the real
    gripper's knuckles, open as the arm opens them, pass 1 cm above the table under it (fully
    open they would reach 4 mm from it)."""
    gripper, gg = _grasps([PEDESTAL, BOOK], BOOK, scene=_scene())
    pinches = [g for g in gg if abs(g.approach[2]) < 0.2 and abs(g.closing_axis[2]) > 0.9]
    assert pinches, "the book's edge pinch is gone"
    for g in pinches:
        body = _real_body(gripper, g)
        assert body[:, 2].min() > 0.0, f"the real gripper reaches {-body[:, 2].min() * 100:.1f} cm into the table"
        assert not inside_box(body, *PEDESTAL).any(), "the real gripper's body enters the pedestal"
