"""The recorded realistic frames (test/perception/frames) as cloud_layer_timing gives them to the
antipodal proposer with the real 2F-85's body: the pick targets with the fewest grasps still get
one, and a place frame's answer (a shelf slot) is no pick target. Masked as one, the slot's box
held the shelf's boards, every candidate's palm met them, and the bench counted 'no grasp on 2 of
12 pick targets'; the body is right to refuse that, and still does."""
from pathlib import Path

import numpy as np
import pytest

from spatial_manip.bench import record_frames
from spatial_manip.bench.cloud_layer_timing import frame_inputs
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.registry import make

FRAMES = Path(__file__).resolve().parents[1] / "perception" / "frames"


def _frame(tmp_path, name):
    look = record_frames.load(FRAMES / name)[0]
    frame_inputs(look, tmp_path / name)
    return look, dict(np.load(tmp_path / f"{name}.npz"))


def _grasps(d, mask):
    gg, _ = make("grasp", "antipodal").get_grasp(d["points_cam"], d["colors_cam"], target_mask=mask, up=d["up_cam"])
    return gg


@pytest.mark.parametrize("name", ["pick-82-00005", "pick-83-00001"])
def test_the_recorded_pick_targets_with_the_fewest_grasps_still_get_one(tmp_path, name):
    _, d = _frame(tmp_path, name)
    assert d["target_mask"].sum() > 100, "the pick's book is masked as its target"
    gg = _grasps(d, d["target_mask"])
    assert len(gg) > 0, gg.note


def test_a_place_frame_has_no_pick_target_and_its_shelf_slot_is_refused_as_one(tmp_path):
    look, d = _frame(tmp_path, "place-82-00001")
    assert look.task.action == "place" and not d["target_mask"].any()
    slot = look.truth.get(look.task.answer[0])
    gg = _grasps(d, points_in_box(d["points_base"], slot, 0.005))
    assert len(gg) == 0 and "collide" in gg.note
