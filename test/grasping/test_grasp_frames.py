"""The grasp service on recorded realistic first looks (frames/, written by
`python -m spatial_manip.bench.record_frames`; frame.json says why each was kept): the service as
grasp_node builds it on the simulator's arm (grasp_stability.make_service), given the frame's
depth and, as grasp_stability gives them, the simulator's boxes of the target and its neighbours
(the grasp service's own answer, apart from perception's; in the failed episodes perception's
boxes stood within 2 cm of these).

- pick-63-00012: a book leaning on its wedge, away from the camera. Its only grasps pinch its
  top edge across its thickness, and every squared one (approaching down the book's plane)
  swept its knuckle through the box of the bicycle sculpture beside it (GRASP_FAILED, all
  candidates colliding); a slab's grasps tilted about their closing axis pass beside it.
- objects-86-00000: the 8.5 cm white bowl; a chord across its inside slipped out.
- pick-63-00004: a small book lying on its pedestal. Its squared pinch at the end nearest the
  robot has no arm configuration 10 cm back from it, only at a shorter stand-off (GRASP_FAILED,
  none reachable).
- pick-101-00000 (and -00010, the same scene): a book leaning on its wedge between the succulents
  and the armento rider. Its squared top pinch swept its knuckle through the rider, the one
  tilted 40 degrees put the wrist in the succulents at all eight arm configurations of its
  pre-grasp (GRASP_FAILED, none reachable, reported as the nearest one's 'upper_arm_link touches
  table'); tilted 20 degrees it passes between.
- pick-110-00009: a book standing in its holder behind the succulents (from the camera). Perception's
  box of the plant ends at the foliage the camera saw, 6 cm short of its hidden far side; on that
  box the kept grasp's pre-grasp and approach put the wrist in the plant (session 38 and 39: a
  pre_grasp contact). The motion check tries the neighbours' hidden sides first.
- pick-110-00012: the small red book lying on its pedestal, a 4 cm strip of its 11.3 cm width
  seen: its top grasp across the width closed on nothing (session 38, realistic and ideal).
- pick-112-00001: the small white book lying on its pedestal beside an alarm clock perception boxed
  as a thin book, 1-2.5 cm short of its hidden sides: a kept grasp's wrist went through it (session 39:
  the pads touched it). In the cautious world every neighbour stands NEIGHBOUR_MARGIN_M larger.
- objects-109-00000: the standing barbecue-sauce bottle (5 x 3.3 cm, 11.4 cm tall), 1.5 m away, on
  perception's box (the front the camera saw, 1 cm nearer the camera and 1.2 cm short at the
  back): its side grasp closing along the view swept the far finger along the hidden back and
  knocked the bottle over (session 36, twice).
"""
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from spatial_manip.bench import record_frames
from spatial_manip.bench.grasp_stability import make_service
from spatial_manip.control.config import arm_overrides, load_arm_config
from spatial_manip.control.primitives import STAND_OFF_FRACTIONS, back_off
from spatial_manip.grasping.antipodal import tilted_off_box
from spatial_manip.grasping.base import ObjectBox
from spatial_manip.grasping.motion_check import MotionCheck, MotionCheckConfig
from spatial_manip.grasping.service import GraspService, TargetBox
from spatial_manip.motion.batch_kinematics import ik_near_many
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.factory import make_planner
from spatial_manip.motion import world as world_module
from spatial_manip.motion.world import CollisionWorld
from spatial_manip.scene import Scene

FRAMES = Path(__file__).parent / "frames"
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def service():
    return make_service()


def _request(name):
    """The frame's observation, the target's box and the scene the service is given."""
    look, _ = record_frames.load(FRAMES / name)
    target = look.truth.get(look.task.answer[0])
    box = TargetBox(np.asarray(target.center, float), np.asarray(target.size, float),
                    np.asarray(target.rotation, float), target.id)
    return look.obs, box, look.truth


def _propose(service, name, q_now=None, **proposer):
    obs, box, scene = _request(name)
    saved = service.proposer.config
    service.proposer.config = dataclasses.replace(saved, **proposer)
    try:
        return service.propose_for_box(obs.depth_m, obs.intrinsics, obs.T_base_cam, box, scene=scene,
                                       q_now=q_now), box
    finally:
        service.proposer.config = saved


def _motion_checked(service, planner) -> GraspService:
    """`service` with a motion check on `planner`, on budgets no loaded machine runs out: under CI's
    load the cautious check stopped at its 1.5 s with one grasp kept, and the measured world's
    second (through the clock) made up the two. These tests judge the worlds, not the budget."""
    unhurried = MotionCheck(planner, MotionCheckConfig(time_budget_s=60.0, plan_budget_s=10.0))
    return GraspService(service.proposer, service.gripper, service.config, service.kinematics, unhurried)


def test_the_book_on_its_wedge_is_grasped_by_a_tilted_top_pinch(service):
    res, _ = _propose(service, "pick-63-00012", slab_tilts_deg=())
    assert not res.success and "collide" in res.message, res.message
    res, box = _propose(service, "pick-63-00012")
    assert res.success, res.message
    slab = ObjectBox(box.center, box.size, box.rotation)
    assert tilted_off_box(res.grasps.rotation_matrices, slab, min(service.proposer.config.slab_tilts_deg)).all()
    # each closes across the book's thickness, its pads on the top edge
    thickness = box.rotation[:, int(np.argmin(box.size))]
    assert np.all(np.abs(res.grasps.rotation_matrices[:, :, 1] @ thickness) > 0.99)


def test_the_lying_books_near_end_pinch_is_kept_at_a_shorter_stand_off(service):
    res, _ = _propose(service, "pick-63-00004", slab_tilts_deg=())
    assert res.success, res.message
    tcp = service.gripper.tcp_poses(res.grasps.matrices(), res.grasps.depths)
    full = ik_near_many(service.kinematics, [back_off(T, service.config.approach_distance_m) for T in tcp],
                        service.config.reference_q)
    shortest = ik_near_many(service.kinematics,
                            [back_off(T, STAND_OFF_FRACTIONS[-1] * service.config.approach_distance_m) for T in tcp],
                            service.config.reference_q)
    assert np.isnan(full).any(axis=1).any(), "some kept grasp has no arm configuration at the full stand-off"
    assert not np.isnan(shortest).any()


def test_the_book_on_its_wedge_between_two_neighbours_is_reached_by_a_shallower_tilt(service):
    """pick-101-00000: from the joints the frame was taken at (the arm stowed), the motion check
    as grasp_node runs it on the simulator's arm keeps a grasp tilted 20 degrees, where squared
    and 40 degrees alone every candidate met a neighbour."""
    res, _ = _propose(service, "pick-101-00000", slab_tilts_deg=(40.0,))
    assert not res.success and "collide" in res.message, res.message
    joints = record_frames.load(FRAMES / "pick-101-00000")[0].joints
    planner = make_planner(load_arm_config(None, arm_overrides("sim", "")))
    checked = _motion_checked(service, planner)
    res, box = _propose(checked, "pick-101-00000", q_now=joints)
    assert res.success and res.motion.kept and not res.motion.skipped, res.message
    slab = ObjectBox(box.center, box.size, box.rotation)
    assert tilted_off_box(res.grasps.rotation_matrices, slab, 20.0).all()
    assert not tilted_off_box(res.grasps.rotation_matrices, slab, 40.0).any(), "20 degrees off the book's axes"


@pytest.mark.parametrize("name", ["objects-79-00008", "objects-79-00014"])
def test_a_bowls_and_a_mugs_wall_is_pinched_at_its_rim(service, name):
    """objects-79-00008: the 3.5 cm white bowl (8.5 cm across): every pass-1 width ran across the
    bowl, its inside and far wall too, so no candidate pinched its wall: all collided (GRASP_FAILED),
    or, on perception's box, a chord closed on nothing. objects-79-00014: the mug's 9 cm body is
    wider than the 2F-85's 8.5 cm: its oblique grasps across it slipped. A finger-wide gap the
    camera saw empty beside the seed (the vessel's inside) sets the wall apart: the best grasp
    pinches it at the rim, narrow, its closing axis across the wall, on the box's side."""
    res, box = _propose(service, name)
    assert res.success, res.message
    T = res.grasps.matrices()[0]
    assert float(res.grasps.widths[0]) < 0.035
    half = np.sort(box.size[:2])[0] / 2
    off = T[:2, 3] - box.center[:2]
    assert np.linalg.norm(off) > half - 0.02, "on the wall, not across the middle"
    closing = T[:3, 1]
    assert abs(closing[2]) < 0.5 and abs(closing[:2] @ off / np.linalg.norm(off)) > 0.6, "across the wall"


def test_no_grasp_closes_across_the_bowls_seen_empty_middle(service):
    """objects-86-00000 (and -88-00000): the 8.5 cm white bowl's grasps closing across its inside
    (two rims, 7 cm apart, through its middle) slipped out during the lift or closed on nothing.
    Jaws that span a gap the camera saw empty are scored as an edge pinch: none of the kept ones
    closes 6 cm or more within 2 cm of the bowl's middle; the wall's own pinch leads."""
    res, box = _propose(service, "objects-86-00000")
    assert res.success, res.message
    T = res.grasps.matrices()
    off = np.linalg.norm(T[:, :2, 3] - box.center[:2], axis=1)
    assert not np.any((res.grasps.widths > 0.06) & (off < 0.02)), np.c_[res.grasps.widths, off].round(3)
    assert float(res.grasps.widths[0]) < 0.05


# perception's box of the barbecue-sauce bottle on frame objects-109-00000 (classical segmenter at
# dde15b5, to the mm): centre, size, rotation in the base frame; the simulator's box is 5 x 3.3 cm
SEEN_BBQ_BOTTLE = ([0.439, 0.277, 0.054], [0.035, 0.027, 0.11], [[0.6, -0.8, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]])


def _motion_checked_beside_the_truth(service, frame: str, target_id: str, *, true_neighbour: str,
                                     look_answer: str | None = None):
    """For a recorded frame and the scene perception made of it (data/<frame>-seen.json): the look,
    that scene, the target's box (asserted within 3 cm of the simulator's `look_answer`, by default
    the task's answer), a grasp
    service with a motion check, and a probe of the simulator's box of `true_neighbour`."""
    look, _ = record_frames.load(FRAMES / frame)
    scene = Scene.from_dict(json.loads((DATA / f"{frame}-seen.json").read_text()))
    target = scene.get(target_id)
    assert np.linalg.norm(target.center - look.truth.get(look_answer or look.task.answer[0]).center) < 0.03
    box = TargetBox(target.center, target.size, target.rotation, target.id)
    planner = make_planner(load_arm_config(None, arm_overrides("sim", "")), {"seed": 1})
    checked = _motion_checked(service, planner)
    neighbour = look.truth.get(true_neighbour)
    truth = CollisionWorld()
    truth.add_box(neighbour.id, neighbour.center, neighbour.size, neighbour.rotation)
    return look, scene, box, checked, CollisionChecker(planner.robot, truth, planner.envelope, 0.0)


def _finger_sweep_clearance_m(service, grasps, body: ObjectBox, approach_m: float) -> np.ndarray:
    """(n, 2): per grasp, how close each finger's inner face comes to `body` (an upright elliptic
    cylinder inscribed in the box: a bottle's section) over its straight approach from approach_m
    back, across the pad's height; negative = the finger sweeps through the body."""
    tcp = service.gripper.tcp_poses(grasps.matrices(), grasps.depths)
    half = service.gripper.opening_m(grasps.widths) / 2
    R = grasps.rotation_matrices
    back = np.linspace(-approach_m, 0.0, 41)[:, None, None]
    height = np.linspace(-1, 1, 5)[None, :, None] * service.gripper.finger_height_m / 2
    semi = np.asarray(body.size, float) / 2
    out = np.zeros((len(grasps), 2))
    for i in range(len(grasps)):
        for j, side in enumerate((-1, 1)):
            p = tcp[i, :3, 3] + side * half[i] * R[i, :, 1] + back * R[i, :, 0] + height * R[i, :, 2]
            q = (p.reshape(-1, 3) - body.center) @ body.rotation
            radial = (np.hypot(q[:, 0] / semi[0], q[:, 1] / semi[1]) - 1) * min(semi[:2])
            out[i, j] = np.maximum(radial, np.abs(q[:, 2]) - semi[2]).min()
    return out


def test_a_standing_bottles_far_finger_clears_its_hidden_back(service):
    """On perception's box, short at the back, the top grasp's far finger swept the bottle's hidden
    back (0 mm from it) and knocked it over; the far finger of a tall target's grasp that closes
    toward its hidden back opens hidden_side_slack_m past the box: the best grasps' fingers pass
    the bottle's body with room to spare on both sides (against the simulator's box's section)."""
    look, _ = record_frames.load(FRAMES / "objects-109-00000")
    truth = look.truth.get(look.task.answer[0])
    body = ObjectBox(np.asarray(truth.center, float), np.asarray(truth.size, float), np.asarray(truth.rotation, float))
    seen = TargetBox(*(np.asarray(v, float) for v in SEEN_BBQ_BOTTLE), truth.id)
    approach = service.config.approach_distance_m
    saved = service.proposer.config
    try:
        service.proposer.config = dataclasses.replace(saved, hidden_side_slack_m=0.0)
        res = service.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, seen, scene=look.truth)
        assert res.success, res.message
        assert _finger_sweep_clearance_m(service, res.grasps[:1], body, approach).min() < 0.003, "the frame's failure"
    finally:
        service.proposer.config = saved
    res = service.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, seen, scene=look.truth)
    assert res.success, res.message
    clearance = _finger_sweep_clearance_m(service, res.grasps[:3], body, approach)
    assert clearance[0].min() > 0.008, clearance.round(3)
    assert clearance.min() > 0.005, clearance.round(3)


def test_the_book_behind_the_plant_is_reached_clear_of_its_hidden_foliage(service, monkeypatch):
    """The kept grasp's pre-grasp and approach, planned around the scene perception made of the
    frame (data/pick-110-00009-seen.json: the agent's perceive stage at 2e9f1c2, the plant's box 7 cm
    deep where the plant is 15 cm), against the simulator's box of the plant: in the plant when the
    measured boxes alone decide, clear of it when the neighbours' hidden sides are tried first."""
    look, scene, box, checked, probe = _motion_checked_beside_the_truth(
        service, "pick-110-00009", "book_yellow_medium", true_neighbour="near_2")   # book_2, the task's answer

    def touches_at_the_grasp() -> list:
        res = checked.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, box, 1, scene=scene,
                                      q_now=look.joints)
        assert res.success, res.message
        k = res.motion.kept[0]
        return [p for q in [res.motion.paths[k].waypoints[-1], *res.motion.approaches[k]] if (p := probe.contact(q))]

    with monkeypatch.context() as m:
        m.setattr(CollisionWorld, "with_hidden_sides", lambda self, scene, keep=(): self)
        assert touches_at_the_grasp(), "the frame's failure: the measured boxes' grasp reaches into the plant"
    assert touches_at_the_grasp() == []


def test_a_lying_book_wider_than_the_opening_seen_as_a_strip_is_pinched_across_its_thickness(service):
    """pick-110-00012: the small red book (11.3 cm wide, 1.5 cm thick) lying on its pedestal, of
    which the camera saw a 4 cm strip of its top. Half the fingers' depth below its top (in the
    pedestal) the line across the pads missed its box and the seen strip was taken for its width:
    the best grasp closed from above across its 11.3 cm, both fingers on the book, and closed on
    nothing (realistic and ideal sensing); another, at the book's end, its pads half past it, did
    the same. A slab's grasp opens across its box: every kept grasp closes across the book's
    thickness."""
    res, box = _propose(service, "pick-110-00012")
    assert res.success, res.message
    R = res.grasps.rotation_matrices
    thickness = box.rotation[:, int(np.argmin(box.size))]
    assert np.all(np.abs(R[:, :, 1] @ thickness) > 0.99), (R[:, :, 1] @ box.rotation).round(2)


def test_the_book_beside_the_clock_named_a_book_is_reached_clear_of_the_clock(service, monkeypatch):
    """pick-112-00001: the small white book lying on its pedestal beside an alarm clock that perception
    (the bench's look at 63052f2, data/pick-112-00001-seen.json) boxed as a 2.6 cm thick medium book, 6 cm
    nearer the camera than the clock and 1-2.5 cm short of its hidden sides; a book's box keeps its hidden
    side. On the measured boxes the best two grasps include one whose wrist goes through the clock (the
    simulator's box of it); with the neighbours NEIGHBOUR_MARGIN_M larger in the cautious world, the two
    kept pass it by a centimetre and more."""
    look, scene, box, checked, probe = _motion_checked_beside_the_truth(
        service, "pick-112-00001", "book_white_small", look_answer="book_4", true_neighbour="near_1")
    assert scene.get("book_red_medium").category == "book"       # the clock, named a book

    def kept_touching(padding_m: float) -> list:
        """Per kept grasp, the configurations at its pre-grasp and along its approach within padding_m of the clock."""
        res = checked.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, box, 2, scene=scene,
                                      q_now=look.joints)
        assert res.success and len(res.motion.kept) == 2, res.message
        probe.set_padding(padding_m)
        return [sum(probe.contact(q) is not None for q in [res.motion.paths[k].waypoints[-1], *res.motion.approaches[k]])
                for k in res.motion.kept]

    with monkeypatch.context() as m:
        m.setattr(world_module, "NEIGHBOUR_MARGIN_M", 0.0)
        assert any(kept_touching(0.0)), "the frame's failure: a kept grasp's wrist goes through the clock"
    assert kept_touching(0.01) == [0, 0]
