"""The hand-worked geometry the `everyday6` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import numpy as np

from hand_worked import left_to_right, next_to_pairs
from spatial_manip.bench.paraphrase_everyday6 import EVERYDAY6_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return [o for o in EVERYDAY6_SCENES[key]().objects if o.category not in ("table", "shelf")]


def _by_id(key):
    return {o.id: o for o in EVERYDAY6_SCENES[key]().objects}


def test_the_next_to_pairs_are_the_hand_worked_ones():
    for key, expected in (("lab6", {("gloves", "rack")}), ("toys6", {("crayon", "duck")})):
        assert next_to_pairs(_objects(key)) == expected, key


def test_left_to_right_and_the_closest_to_the_viewer():
    orders = {"lab6": ["beaker", "flask", "pliers", "iron", "fan", "multimeter", "tape", "gloves", "rack"],
              "toys6": ["ballS", "teddy", "ballL", "blockG", "car", "blockY", "box", "crayon", "duck"]}
    for key, expected in orders.items():
        assert [o.id for o in left_to_right(_objects(key))] == expected, key
    viewer = EVERYDAY6_SCENES["lab6"]().viewer
    by_distance = sorted(_objects("lab6"), key=lambda o: rel.distance(o, viewer))
    assert [o.id for o in by_distance[:2]] == ["pliers", "gloves"]
    assert rel.distance(by_distance[1], viewer) - rel.distance(by_distance[0], viewer) > 0.03


def test_what_the_fan_and_the_car_face_and_their_own_sides():
    """The fan faces the viewer's right and the car faces the viewer: one object in each one's front
    sector, which is also the closest object before its front; nothing on the fan's own left."""
    for key, facer, faced in (("lab6", "fan", "tape"), ("toys6", "car", "blockG")):
        objs, ref = _objects(key), _by_id(key)[facer]
        axes = rel.frame_axes("intrinsic", reference=ref)
        others = [o for o in objs if o.id != facer]
        assert [o.id for o in others if rel.in_direction(o, "front", axes)] == [faced], key
        before = [o for o in others if rel.is_in_front_of(o, ref, axes)]
        assert [o.id for o in rel.closest(before, ref)] == [faced], key
    fan = _by_id("lab6")["fan"]
    fan_axes = rel.frame_axes("intrinsic", reference=fan)
    assert not [o.id for o in _objects("lab6") if rel.is_left_of(o, fan, fan_axes)]
    assert np.allclose(fan_axes.right, [-1, 0, 0], atol=1e-9)    # the fan's own right: towards the viewer
    car = _by_id("toys6")["car"]
    car_axes = rel.frame_axes("intrinsic", reference=car)
    blocks = [o for o in _objects("toys6") if o.label == "block"]
    assert [o.id for o in blocks if rel.is_left_of(o, car, car_axes)] == ["blockY"]


def test_the_bathroom_shelf_slots():
    scene = EVERYDAY6_SCENES["bath6_held"]()
    slots, objs = {r.id: r for r in scene.regions}, {o.id: o for o in scene.objects}
    for oid, slot in {"cup": "r1c1", "shampoo": "r1c2", "soap": "r2c2", "towel": "r3c1"}.items():
        assert rel.point_in_box(objs[oid].center, slots[slot]), oid
    assert {r.id for r in scene.regions if rel.is_empty(r)} == {"r2c1", "r3c2"}
    axes = rel.frame_axes("relative", viewer=scene.viewer)
    assert [r.id for r in rel.next_to(scene.regions, objs["soap"], axes)] == ["r2c1"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["cup"], axes, below=True)] == ["r2c1"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["soap"], axes, below=True)] == ["r3c2"]


def test_the_metric_places_that_leave_the_table():
    """The far side of each place keyed UNREACHABLE is off the table (x 0.2..1.2, y -0.8..0.8)."""
    lab, toys = _by_id("lab6"), _by_id("toys6")
    off = [(lab["rack"], [0, -1, 0], 0.20), (lab["flask"], [1, 0, 0], 0.40), (lab["fan"], [1, 0, 0], 0.20),
           (toys["duck"], [0, -1, 0], 1.0)]
    for ref, direction, gap in off:
        centre = rel.offset_position(ref, direction, gap, 0.015)
        assert not (0.2 <= centre[0] <= 1.2 and -0.8 <= centre[1] <= 0.8), ref.id


def test_the_after_sets_closest_to_the_fan_and_its_own_back():
    lab = _by_id("lab6")
    fan = lab["fan"]
    others = [o for o in _objects("lab6") if o.id != "fan"]
    assert [o.id for o in rel.closest(others, fan)] == ["iron"]
    assert rel.distance(lab["tape"], fan) - rel.distance(lab["iron"], fan) > 0.1
    axes = rel.frame_axes("intrinsic", reference=fan)
    assert np.allclose(rel.metric_direction("behind", axes, attached=True), [0, 1, 0], atol=1e-9)
