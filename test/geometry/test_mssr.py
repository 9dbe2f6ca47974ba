"""MSSR numeric modules: cardinal calibration, relative camera movement, relative object position."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.mssr import (COMPASS, calibrate_directions, compass_direction,
                                         relative_camera_movement, relative_object_position)
from spatial_manip.geometry.synthetic import look_at
from spatial_manip.geometry.transforms import invert, make_transform


def test_north_along_plus_y_matches_absolute_frame():
    f = calibrate_directions([0.0, 1.0, 0.3], [0.0, 0.0, 0.0], "north")
    np.testing.assert_allclose(f.north, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(f.east, rel.frame_axes("absolute").right, atol=1e-12)
    np.testing.assert_allclose(f.west, [-1, 0, 0], atol=1e-12)
    assert compass_direction([2, 0.1, 0], [0, 0, 0], f) == "east"
    assert compass_direction([-1, -1.1, 0], [0, 0, 0], f, eight=True) == "southwest"


@settings(max_examples=80, deadline=None)
@given(st.floats(-math.pi, math.pi), st.sampled_from(sorted(COMPASS)), st.floats(0.1, 3.0))
def test_calibration_statement_is_reproduced(angle, word, r):
    anchor = np.array([0.3, -0.2, 0.0])
    target = anchor + [r * math.cos(angle), r * math.sin(angle), 0.5]
    f = calibrate_directions(target, anchor, word)
    assert compass_direction(target, anchor, f, eight=True) == word
    np.testing.assert_allclose(np.cross(f.north, f.east), [0, 0, -1], atol=1e-9)  # east is clockwise from above


def test_calibration_rejects_coincident_and_unknown():
    with pytest.raises(ValueError, match="same ground position"):
        calibrate_directions([0, 0, 1], [0, 0, 0])
    with pytest.raises(ValueError, match="compass"):
        calibrate_directions([0, 1, 0], [0, 0, 0], "upwards")


def test_relative_camera_movement():
    cam0 = look_at([0, 0, 1], [1, 0, 1])       # looking along +x, level
    moved = cam0 @ make_transform(t=[0.2, -0.1, 1.0])  # right 0.2, up 0.1, forward 1 (optical frame)
    m = relative_camera_movement(cam0, moved)
    assert (m["forward"], m["right"], m["up"]) == pytest.approx((1.0, 0.2, 0.1))
    assert m["rotate_right"] == pytest.approx(0, abs=1e-9)
    turned = look_at([0, 0, 1], [1, -1, 1])    # looking 45 deg to the right (-y is right when facing +x)
    assert relative_camera_movement(cam0, turned)["rotate_right"] == pytest.approx(45)
    up = look_at([0, 0, 1], [1, 0, 1 + math.tan(math.radians(10))])
    assert relative_camera_movement(cam0, up)["rotate_up"] == pytest.approx(10)
    rolled = cam0 @ make_transform(Rotation.from_euler("z", 20, degrees=True).as_matrix())
    assert relative_camera_movement(cam0, rolled)["roll_right"] == pytest.approx(20)
    # MSSR's world-to-camera extrinsics give the same answer
    w = relative_camera_movement(invert(cam0), invert(turned), world_to_camera=True)
    assert w["rotate_right"] == pytest.approx(45)


def test_relative_object_position():
    cam = look_at([0, 0, 1], [1, 0, 1])
    p = relative_object_position(cam, [2.0, -0.5, 1.3])  # ahead 2, right 0.5, up 0.3
    assert (p["forward"], p["right"], p["up"]) == pytest.approx((2.0, 0.5, 0.3))
    assert p["distance"] == pytest.approx(math.sqrt(4 + 0.25 + 0.09))
    assert relative_object_position(invert(cam), [2.0, -0.5, 1.3], world_to_camera=True)["right"] == pytest.approx(0.5)
