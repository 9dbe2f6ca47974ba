"""GraspService with the cell's fixtures: a book lying on a pedestal overhangs it at one end only.
The camera sees the book's top, not what is under it; the scene's support box says the pedestal
is there, so the lower finger of an edge pinch goes under the overhang and nowhere else (issue 36:
the demo's realistic top grasp pinched a long side where the pedestal reaches past the book)."""
from types import SimpleNamespace

import numpy as np

from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.registry import make
from spatial_manip.scene import SceneObject

from synthetic import render_boxes

PEDESTAL = ((0.52, 0.0, 0.035), (0.12, 0.14, 0.07))
BOOK = ((0.49, 0.0, 0.078), (0.18, 0.12, 0.016))       # overhangs the pedestal by 3 cm toward the camera (-x)


def _scene():
    def obj(oid, category, box):
        return SceneObject(oid, oid, category, np.array(box[0]), np.array(box[1]), np.eye(3))
    # the service reads a scene's objects only (no motion check here)
    return SimpleNamespace(objects=[obj("pedestal", "support", PEDESTAL), obj("book", "book", BOOK)])


def _propose(scene, spacing, **proposer):
    depth, intr, T, _ = render_boxes([PEDESTAL, BOOK])
    service = GraspService(make("grasp", "antipodal", **proposer), GripperGeometry(),
                           ServiceConfig(fixture_spacing_m=spacing, max_grasps=50))
    res = service.propose_for_box(depth, intr, T, TargetBox(np.array(BOOK[0]), np.array(BOOK[1]), np.eye(3), "book"),
                                  scene=scene)
    assert res.success, res.message
    return res.grasps


def _lower_finger_in_pedestal(gg) -> np.ndarray:
    """Whether each grasp's lower finger, open as on the way in, reaches into the pedestal."""
    c, s = np.asarray(PEDESTAL[0]), np.asarray(PEDESTAL[1])
    hits = []
    for g in gg:
        down = -g.closing_axis if g.closing_axis[2] > 0 else g.closing_axis
        tip = g.translation + g.approach * g.depth + down * (0.085 / 2 + 0.006)
        hits.append(bool(np.all(np.abs(tip - c) <= s / 2)))
    return np.array(hits)


def test_the_fixture_keeps_the_lower_finger_out_of_the_pedestal():
    # grasps as sampled (not squared to the book, test_grasp_square): some pinch goes into the pedestal without it
    assert _lower_finger_in_pedestal(_propose(None, 0.01, square_thin_ratio=0.0)).any()
    assert not _lower_finger_in_pedestal(_propose(_scene(), 0.01, square_thin_ratio=0.0)).any()
    assert not _lower_finger_in_pedestal(_propose(_scene(), 0.01)).any()


def test_the_fixture_points_stay_out_of_the_target_box():
    service = GraspService(make("grasp", "antipodal"), GripperGeometry())
    box = TargetBox(np.array(BOOK[0]), np.array(BOOK[1]), np.eye(3), "book")
    pts = service._fixture_points(_scene(), box)
    assert len(pts) > 100
    local = np.abs(pts - np.asarray(BOOK[0]))
    assert not np.any(np.all(local < np.asarray(BOOK[1]) / 2, axis=1))
    assert np.all(pts[:, 2] <= 0.07 + 1e-9)            # the pedestal's volume, nothing above it


def test_a_stop_asked_inside_the_antipodal_proposal_ends_it_at_its_next_step():
    """The service hands its stop to the proposer (`checkpoint`): grasp_node's job ahead that a
    request for another object replaced stops between the proposal's steps (plane, normals, pass 1,
    pass 2), not after the whole proposal, so it no longer shares the GIL with the request."""
    depth, intr, T, _ = render_boxes([PEDESTAL, BOOK])
    service = GraspService(make("grasp", "antipodal"), GripperGeometry(), ServiceConfig(max_grasps=50))
    box = TargetBox(np.array(BOOK[0]), np.array(BOOK[1]), np.eye(3), "book")
    asked = []

    def should_stop():
        asked.append(1)
        return len(asked) >= 2           # the first ask is before proposing, the second inside it

    service.should_stop = should_stop
    res = service.propose_for_box(depth, intr, T, box, scene=_scene())
    assert not res.success and res.error_code == "CANCELED" and "no longer wanted" in res.message
    assert len(asked) == 2
    service.should_stop = lambda: False
    assert service.propose_for_box(depth, intr, T, box, scene=_scene()).success
