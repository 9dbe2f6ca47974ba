"""A look registered to the cell's fixtures (geometry.registration), on
recorded realistic first looks whose sensing draw (the depth's shift against colour, the
calibration's error) is known from their scene seed: the turn found is the turn the draw gave."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.bench import record_frames
from spatial_manip.geometry.registration import RegistrationConfig, fixture_boxes, fixture_registration, register_frame
from spatial_manip.scene import FIXTURE_CATEGORIES
from spatial_manip.sim.sensing import sensing_profile

TEST = Path(__file__).resolve().parents[1]


def register_look(obs, fixtures):
    reg = register_frame(obs.depth_m, obs.intrinsics, obs.T_base_cam, fixtures)
    return (replace(obs, T_base_cam=reg.apply(obs.T_base_cam)) if reg.kept else obs), reg


def _look(path: Path):
    """(the look, its fixtures, the turn its sensing draw gave the depth, in the camera frame)."""
    look, _ = record_frames.load(path)
    draw = sensing_profile("realistic").draw(int(json.loads((path / "frame.json").read_text())["task"]["scene_seed"]))
    du, dv = draw.depth_shift_px
    K = look.obs.intrinsics
    shift = Rotation.from_rotvec([dv / K.fy, 0, 0]) * Rotation.from_rotvec([0, -du / K.fx, 0])
    true = Rotation.from_matrix(draw.T_cam_error[:3, :3]).inv() * shift
    return look, [o for o in look.workspace.objects if o.category in FIXTURE_CATEGORIES], true


@pytest.mark.parametrize("name", ["motion/frames/place-78-00007", "perception/frames/place-81-00001",
                                  "perception/frames/place-82-00001"])
def test_a_shelf_look_is_turned_back_by_the_turn_its_draw_gave(name):
    """A shelf 2.5 m away fixes all three axes: 0.22-0.44 deg of turn, 0.07 deg or less left; the
    camera's position is not moved, and the boards' returns come down onto the boards."""
    look, fixtures, true = _look(TEST / name)
    registered, reg = register_look(look.obs, fixtures)
    assert reg.kept and reg.points > 1000
    left = (Rotation.from_matrix(reg.in_camera).inv() * true).magnitude()
    assert np.degrees(left) < 0.07 < 0.2 < np.degrees(true.magnitude())
    assert np.allclose(registered.T_base_cam[:3, 3], look.obs.T_base_cam[:3, 3])
    assert reg.residual_after_m < reg.residual_before_m
    assert registered.depth_m is look.obs.depth_m       # the same frame, only its extrinsics corrected


def test_a_table_alone_fixes_the_tilt_not_the_turn_about_the_vertical():
    """objects-78-00000 (the depth 3 px down): the table's top fixes the turn about the camera's
    horizontal axis (0.36 deg, 0.09 or less left); about the vertical a plane holds nothing, and the
    fit's prior keeps it near none instead of following the noise."""
    look, fixtures, true = _look(TEST / "perception/frames/objects-78-00000")
    _, reg = register_look(look.obs, fixtures)
    left = (Rotation.from_matrix(reg.in_camera).inv() * true).magnitude()
    assert reg.kept and np.degrees(left) < 0.1 < 0.3 < np.degrees(true.magnitude())


def test_no_turn_without_fixtures_or_past_the_bound():
    look, fixtures, _ = _look(TEST / "motion/frames/place-78-00007")
    registered, reg = register_look(look.obs, [])
    assert not reg.kept and registered is look.obs and reg.to_dict()["why"] == "no fixture configured"
    T = look.obs.T_base_cam
    turned = T[:3, 3] + (np.stack([[0.9, 0.0, -0.1], [0.9, 0.3, -0.1]]) - T[:3, 3]) @ Rotation.from_rotvec(
        [0, 0, np.radians(5)]).as_matrix().T
    few = fixture_registration(turned, T[:3, 3], fixture_boxes(fixtures), RegistrationConfig())
    assert not few.kept and "fewer than" in few.why
