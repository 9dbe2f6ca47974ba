"""Success checker and metrics on hand-made final scenes."""
import math

import numpy as np
import pytest

from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint
from spatial_manip.sim import metrics
from spatial_manip.sim.checker import CheckSpecError, check_constraints, check_task


def rot_z(deg):
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def rot_y(deg):
    a = math.radians(deg)
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def book(bid, center, pose="flat", held=False, tilt=None):
    # size: length, width, thickness on z -> lying flat with identity rotation
    R = np.eye(3)
    if pose == "upright":
        R = rot_y(90)  # thin axis (z) becomes horizontal
    if tilt is not None:
        R = rot_y(90 - tilt)  # tilt from upright
    return SceneObject(bid, "book", "book", center, [0.2, 0.14, 0.02], R, held=held)


def scene(objects, regions=()):
    return Scene(Viewpoint([-0.3, 0, 1.2], [1, 0, -0.5]), Viewpoint([0, 0, 0], [1, 0, 0]),
                 list(objects), list(regions))


JAR = SceneObject("jar", "ceramic jar", "reference", [0.6, 0.0, 0.79], [0.06, 0.06, 0.08])
SLOT_A = Region("s1", "slot", [0.7, 0.3, 1.0], [0.3, 0.4, 0.35], row=1, col=1)
SLOT_B = Region("s2", "slot", [0.7, -0.2, 1.0], [0.3, 0.4, 0.35], row=1, col=2)


def test_pick_success_wrong_object_no_grasp_and_not_lifted():
    init = scene([book("b1", [0.5, 0.1, 0.76]), book("b2", [0.5, -0.1, 0.76])])
    spec = [{"type": "held", "ids": ["b1"]}]
    ok = scene([book("b1", [0.5, 0.1, 0.9], held=True), book("b2", [0.5, -0.1, 0.76])])
    assert check_constraints(spec, ok, init) == (True, None, "holding b1")
    wrong = scene([book("b1", [0.5, 0.1, 0.76]), book("b2", [0.5, -0.1, 0.9], held=True)])
    assert check_constraints(spec, wrong, init)[1] == "wrong_object"
    assert check_constraints(spec, init, init)[1] == "no_grasp"
    low = scene([book("b1", [0.5, 0.1, 0.77], held=True), book("b2", [0.5, -0.1, 0.76])])
    assert check_constraints(spec, low, init)[1] == "not_lifted"
    fell = scene([book("b1", [0.5, 0.1, 0.01]), book("b2", [0.5, -0.1, 0.76])])
    assert check_constraints(spec, fell, init)[1] == "dropped"


def test_place_in_region_with_pose():
    spec = [{"type": "released", "object": "b"}, {"type": "in_regions", "object": "b", "regions": ["s1"]},
            {"type": "pose", "object": "b", "pose": "upright"}]
    good = scene([book("b", [0.7, 0.3, 0.93], "upright")], [SLOT_A, SLOT_B])
    ok, cat, msg = check_constraints(spec, good, None)
    assert ok and cat is None and "s1" in msg
    other = scene([book("b", [0.7, -0.2, 0.93], "upright")], [SLOT_A, SLOT_B])
    ok, cat, msg = check_constraints(spec, other, None)
    assert (ok, cat) == (False, "not_in_region") and "s2" in msg
    flat = scene([book("b", [0.7, 0.3, 0.85], "flat")], [SLOT_A, SLOT_B])
    assert check_constraints(spec, flat, None)[1] == "tilt"
    held = scene([book("b", [0.7, 0.3, 0.93], "upright", held=True)], [SLOT_A, SLOT_B])
    assert check_constraints(spec, held, None)[1] == "not_released"
    floor = scene([book("b", [0.7, 0.3, 0.01], "flat")], [SLOT_A, SLOT_B])
    assert check_constraints(spec, floor, None)[1] == "dropped"


@pytest.mark.parametrize("tilt, ok", [(30, True), (38, True), (42, False), (19, False)])
def test_tilt_within_ten_degrees(tilt, ok):
    spec = [{"type": "tilt", "object": "b", "deg": 30}]
    s = scene([book("b", [0.7, 0.3, 0.93], tilt=tilt)])
    assert check_constraints(spec, s)[0] is ok


@pytest.mark.parametrize("gap, ok", [(0.10, True), (0.06, True), (0.14, True), (0.04, False), (0.17, False)])
def test_metric_placement_tolerance_and_side(gap, ok):
    # Book lying flat to the viewer's right (-y) of the jar, boundary gap `gap`.
    y = -(0.03 + gap + 0.07)
    s = scene([JAR, book("b", [0.6, y, 0.76])])
    spec = [{"type": "distance", "object": "b", "reference": "jar", "value_m": 0.1, "tol_m": 0.05},
            {"type": "direction", "object": "b", "reference": "jar", "word": "right", "frame": "relative"}]
    res = check_constraints(spec, s)
    assert res.success is ok and (ok or res.failure_category == "distance")
    left = scene([JAR, book("b", [0.6, -y, 0.76])])
    if ok:  # same distance, other side
        assert check_constraints(spec, left).failure_category == "wrong_direction"


def test_distance_three_centimetres_and_in_area():
    s = scene([book("b", [1.0, 0.0, 0.76])])
    spec = {"type": "distance", "object": "b", "reference": "robot"}
    d = math.hypot(0.9, 0.75)  # nearest boundary point (0.9, 0, 0.75) to the robot base at the origin
    assert check_constraints([dict(spec, value_m=d + 0.02)], s).success
    assert not check_constraints([dict(spec, value_m=d + 0.04)], s).success
    area = {"center": [1.0, 0.05, 0.8], "size": [0.1, 0.1, 0.2]}
    assert check_constraints([{"type": "in_area", "object": "b", "area": area}], s).success
    far = dict(area, center=[1.0, 0.2, 0.8])
    assert check_constraints([{"type": "in_area", "object": "b", "area": far}], s).failure_category == "not_in_region"


def test_malformed_specs_raise():
    s = scene([book("b", [1.0, 0.0, 0.76])])
    with pytest.raises(CheckSpecError):
        check_constraints([], s)
    with pytest.raises(CheckSpecError):
        check_constraints([{"type": "levitate"}], s)
    with pytest.raises(CheckSpecError):
        check_constraints([{"type": "pose", "object": "nope", "pose": "flat"}], s)
    with pytest.raises(CheckSpecError):
        check_task({"id": "t"}, s)


def test_metrics_tsr_se_budget_and_aggregation():
    assert metrics.step_budget(4) == 18
    assert metrics.step_efficiency(True, 8, 4) == 0.5
    assert metrics.step_efficiency(True, 3, 4) == 1.0
    assert metrics.step_efficiency(False, 4, 4) == 0.0
    rs = [metrics.EpisodeResult("a", "i", True, 4, 4, family="F1", difficulty="easy"),
          metrics.EpisodeResult("b", "i", True, 8, 4, family="F1", difficulty="hard"),
          metrics.EpisodeResult("c", "i", False, 30, 4, "timeout", family="F2", difficulty="easy")]
    s = metrics.summarize(rs)
    assert s.episodes == 3 and s.successes == 2
    assert s.tsr == pytest.approx(2 / 3) and s.se == pytest.approx(0.5) and s.se_success == pytest.approx(0.75)
    assert s.failures == {"timeout": 1}
    by = metrics.aggregate(rs, "family")
    assert by["F1"].tsr == 1.0 and by["F2"].tsr == 0.0
    assert rs[2].over_budget and not rs[0].over_budget
    assert "F2" in metrics.report_table(rs)
    with pytest.raises(ValueError):
        metrics.EpisodeResult("d", "i", False, 1, 4)
    with pytest.raises(ValueError):
        metrics.EpisodeResult("d", "i", False, 1, 4, "no_such_category")
    assert metrics.EpisodeResult.from_dict(rs[1].to_dict()) == rs[1]
