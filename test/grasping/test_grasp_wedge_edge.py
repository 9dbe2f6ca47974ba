"""The grasp service on a book leaning on its wedge edge-on to the camera (frames/pick-121-00014,
written by `python -m spatial_manip.bench.record_frames`; frame.json says why it was kept).

The small pink book (1.6 cm thick) leans on its wedge 1.7 m from the camera, its faces almost
along the view: the camera sees its top edge as a strip of a pixel or two, 2-7 mm across its
thickness, and every pinch of its free top (8 cm of it stands above the wedge) was refused as
"one face seen" (narrower than min_object_width_m). The grasps left were low on its face, their
fingers in the wedge's filled box, which was the level hull of its slanted parts: every one
collided (GRASP_FAILED three times, session 41). A slab's box puts both faces a pinch across
its thickness closes on, and a fixture is filled by its parts, as the motion check's world
holds it.

As in test_grasp_frames, the service is grasp_node's on the simulator's arm (make_service);
the boxes are the simulator's (the grasp service's own answer), or perception's of the frame
(data/pick-121-00014-seen.json: the agent's perceive stage on the frame, classical segmenter,
at 45a7f98; the live episode's were within 2 mm of it).
"""
import json
from pathlib import Path

import numpy as np
import pytest

from spatial_manip.bench import record_frames
from spatial_manip.bench.grasp_stability import make_service
from spatial_manip.grasping.service import GraspService, TargetBox
from spatial_manip.scene import Scene

FRAMES = Path(__file__).parent / "frames"
DATA = Path(__file__).parent / "data"
FRAME = "pick-121-00014"


@pytest.fixture(scope="module")
def service():
    return make_service()


@pytest.fixture(scope="module")
def look():
    return record_frames.load(FRAMES / FRAME)[0]


def _box(o) -> TargetBox:
    return TargetBox(np.asarray(o.center, float), np.asarray(o.size, float), np.asarray(o.rotation, float), o.id)


def _wedge_parts(look) -> list:
    """The simulator's parts of the book's wedge (the support that holds the task's answer)."""
    wedge = next(o for o in look.truth.objects if o.category == "support"
                 and o.extra.get("supports") == look.task.answer[0])
    return [(np.asarray(p["center"], float), np.asarray(p["size"], float), np.asarray(p["rotation"], float))
            for p in wedge.extra["parts"]]


def _outside_m(points: np.ndarray, part) -> np.ndarray:
    """How far each point lies outside the box `part` (negative: that deep inside it)."""
    c, size, R = part
    d = np.abs((points - c) @ R) - size / 2
    return np.linalg.norm(np.maximum(d, 0.0), axis=1) + np.minimum(d.max(axis=1), 0.0)


def _finger_points(service: GraspService, grasps, approach_m: float) -> list[np.ndarray]:
    """Per grasp, points filling both fingers (their pads' length, thickness and height) at each
    step of the straight approach from approach_m back to the grasp, open as the arm opens them."""
    g = service.gripper
    tcp = g.tcp_poses(grasps.matrices(), grasps.depths)
    half = g.opening_m(grasps.widths) / 2
    R = grasps.rotation_matrices
    back = np.linspace(-approach_m, 0.0, 21)
    along = np.linspace(-g.finger_length_m, 0.0, 6)
    across = np.linspace(0.0, g.finger_thickness_m, 3)
    height = np.linspace(-1, 1, 3) * g.finger_height_m / 2
    out = []
    for i in range(len(grasps)):
        x, y, z = (a.ravel() for a in np.meshgrid(np.add.outer(back, along).ravel(), across, height, indexing="ij"))
        sides = [side * (half[i] + y) for side in (-1, 1)]
        out.append(np.concatenate([tcp[i, :3, 3] + np.outer(x, R[i, :, 0]) + np.outer(s, R[i, :, 1])
                                   + np.outer(z, R[i, :, 2]) for s in sides]))
    return out


def _assert_top_pinches_clear_of_the_wedge(service, look, res, box: TargetBox):
    assert res.success, res.message
    R = res.grasps.rotation_matrices
    thickness = box.rotation[:, int(np.argmin(box.size))]
    assert np.all(np.abs(R[:, :, 1] @ thickness) > 0.99), (R[:, :, 1] @ box.rotation).round(2)
    # on the book's free top: the fingertips above the wedge's top end, along the book's length upward
    length = box.rotation[:, int(np.argmax(box.size))] * np.sign(box.rotation[2, int(np.argmax(box.size))])
    tips = service.gripper.tcp_poses(res.grasps.matrices(), res.grasps.depths)[:, :3, 3]
    wedge_top = max(float(np.abs(length @ R_p) @ (s / 2) + c @ length) for c, s, R_p in _wedge_parts(look))
    assert np.all(tips @ length > wedge_top), (tips @ length - wedge_top).round(3)
    # every finger, all the way in, clear of the wedge's parts by a few millimetres
    for fingers in _finger_points(service, res.grasps, service.config.approach_distance_m):
        assert min(_outside_m(fingers, part).min() for part in _wedge_parts(look)) > 0.003


def test_the_edge_on_books_top_is_pinched_across_its_thickness_clear_of_its_wedge(service, look):
    """On the simulator's boxes: the kept grasps pinch the book's free top across its thickness,
    their fingers clear of the wedge on the way in."""
    box = _box(look.truth.get(look.task.answer[0]))
    res = service.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, box, scene=look.truth)
    _assert_top_pinches_clear_of_the_wedge(service, look, res, box)


def test_the_edge_on_book_is_grasped_on_the_scene_perception_made_of_it(service, look):
    """On perception's boxes (the live episode's failure: all candidates collided), the same."""
    scene = Scene.from_dict(json.loads((DATA / f"{FRAME}-seen.json").read_text()))
    target = scene.get("book_pink_small")
    assert np.linalg.norm(target.center - look.truth.get(look.task.answer[0]).center) < 0.03
    box = _box(target)
    res = service.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, box, scene=scene)
    _assert_top_pinches_clear_of_the_wedge(service, look, res, box)


def test_a_fixture_is_filled_by_its_parts_not_their_hull(service, look):
    """The wedge's fill for the fingers lies in its parts: none of it in the space its level hull
    adds beside the book's free top (where the hull's fill stopped every pinch short)."""
    box = _box(look.truth.get(look.task.answer[0]))
    filled = service._fixture_points(look.truth, box)
    parts = _wedge_parts(look)
    near_wedge = np.min([_outside_m(filled, p) for p in parts], axis=0)
    hull = next(o for o in look.truth.objects if o.extra.get("supports") == look.task.answer[0])
    in_hull = np.all(np.abs((filled - hull.center) @ hull.rotation) <= hull.size / 2, axis=1)
    assert in_hull.sum() > 100, "the wedge is filled"
    assert near_wedge[in_hull].max() <= 1e-9, "a filled point in the hull outside every part"
