"""The hand-worked geometry the `everyday10` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from hand_worked import assert_clear, assert_in_slots, left_to_right, next_to_pairs, placed
from spatial_manip.bench.paraphrase_everyday10 import EVERYDAY10_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return placed(EVERYDAY10_SCENES[key]())


def _by_id(key):
    return {o.id: o for o in EVERYDAY10_SCENES[key]().objects}


def _viewer_axes():
    return rel.frame_axes("relative", viewer=EVERYDAY10_SCENES["bedside10"]().viewer)


def test_the_next_to_pairs_and_the_closest_are_the_hand_worked_ones():
    expected = {"bedside10": {("clock", "glass")}, "florist10": {("pot", "vaseT")}}
    for key, pairs in expected.items():
        assert next_to_pairs(_objects(key)) == pairs, key
    bed, flo = _by_id("bedside10"), _by_id("florist10")
    for objs, ref, nearest in ((bed, "clock", "glass"), (bed, "glass", "clock"), (bed, "lamp", "mugG"),
                               (flo, "vaseT", "pot")):
        others = [o for o in objs.values() if o.category != "table" and o.id != ref]
        ranked = sorted(others, key=lambda o: rel.distance(o, objs[ref]))
        assert ranked[0].id == nearest, ref
        assert rel.distance(ranked[1], objs[ref]) - rel.distance(ranked[0], objs[ref]) >= 0.03, ref
        assert rel.distance(ranked[0], objs[ref]) <= rel.NEXT_TO_SAID_MAX_M, ref


def test_left_to_right_closest_and_farthest():
    orders = {"bedside10": ["clementine", "lamp", "case", "mugG", "phone", "clock", "glass", "tray", "mugY",
                            "tissues", "cream", "apple", "pills", "candle"],
              "florist10": ["bucket", "can", "vaseS", "vaseT", "roses", "pot", "tulips", "ribbon", "shears",
                            "mister", "paper"]}
    for key, expected in orders.items():
        objs = _objects(key)
        assert [o.id for o in left_to_right(objs)] == expected, key
        ys = sorted(o.center[1] for o in objs)
        assert min(b - a for a, b in zip(ys, ys[1:])) >= 0.07 - 1e-9, key
    axes = _viewer_axes()
    bed, flo = _objects("bedside10"), _objects("florist10")
    assert [o.id for o in rel.leftmost(bed, axes, 2)] == ["lamp"]
    assert [o.id for o in rel.rightmost(bed, axes, 3)] == ["apple"]
    assert [o.id for o in rel.leftmost(flo, axes, 3)] == ["vaseS"]
    assert [o.id for o in rel.rightmost(flo, axes, 2)] == ["mister"]
    for key, ids, left in (("bedside10", ("mugG", "mugY"), "mugG"), ("bedside10", ("clementine", "pills"),
                                                                     "clementine"),
                           ("florist10", ("roses", "tulips"), "roses"), ("florist10", ("vaseS", "vaseT"), "vaseS")):
        group = [o for o in _objects(key) if o.id in ids]
        assert [o.id for o in rel.leftmost(group, axes)] == [left]
    scene = EVERYDAY10_SCENES["bedside10"]()
    flowers = [o for o in flo if o.id in ("roses", "tulips")]
    for viewpoint in (scene.viewer, scene.robot):
        assert rel.clearly_ranked(bed, lambda o: rel.distance(o, viewpoint))
        assert [o.id for o in rel.closest(bed, viewpoint)] == ["mugY"]
        assert [o.id for o in rel.farthest(bed, viewpoint)] == ["candle"]
        assert [o.id for o in rel.closest(flowers, viewpoint)] == ["tulips"]


def test_sizes_colours_and_the_viewers_sides():
    bed, flo = _by_id("bedside10"), _by_id("florist10")
    assert [o.id for o in rel.size_superlative(_objects("bedside10"), "tallest")] == ["lamp"]
    assert [o.id for o in rel.size_superlative(_objects("florist10"), "biggest")] == ["bucket"]
    assert [o.id for o in rel.size_superlative([bed["mugG"], bed["mugY"]], "bigger")] == ["mugG"]
    assert [o.id for o in rel.size_superlative([flo["vaseS"], flo["vaseT"]], "taller")] == ["vaseT"]

    def main_colour(key, colour):
        return [o.id for o in _objects(key) if o.extra["colour_names"][0] == colour]
    assert main_colour("bedside10", "orange") == ["clementine", "pills"]
    assert main_colour("bedside10", "purple") == ["case", "candle"]
    assert main_colour("bedside10", "black") == ["phone", "clock"]
    assert main_colour("bedside10", "white") == ["lamp", "tissues"]
    assert main_colour("bedside10", "pink") == ["cream"]
    assert main_colour("bedside10", "blue") == ["glass"]
    assert main_colour("florist10", "brown") == ["pot", "paper"]
    assert main_colour("florist10", "green") == ["can"]
    assert main_colour("florist10", "blue") == ["vaseT"]
    assert main_colour("cabinet10", "blue") == ["icepack"]
    axes = _viewer_axes()
    for key, side, ids in (("bedside10", "left", ["clementine", "case"]), ("bedside10", "right", ["pills"]),
                           ("florist10", "right", ["mister"])):
        objs = _objects(key)
        assert [o.id for o in objs if rel.direction_of(o, axes) == side] == ids, (key, side)
        # no bearing asked about lies within 5 degrees of its sector's edge
        for o in objs:
            if o.id in ids:
                assert rel.direction_offset_deg(o, side, axes) <= 40.0, o.id


def test_what_lies_before_the_alarm_clocks_face():
    """The clock faces the viewer's left: the clementine and the green mug lie in its front sector
    and before its face, the apple and the yellow mug behind it; from the viewer all four are nearer
    than the clock."""
    bed = _by_id("bedside10")
    clock = bed["clock"]
    own = rel.frame_axes("intrinsic", reference=clock)
    assert np.allclose(own.forward, [0, 1, 0], atol=1e-9) and np.allclose(own.right, [1, 0, 0], atol=1e-9)
    assert rel.default_frame(clock, EVERYDAY10_SCENES["bedside10"]().viewer).attached_to == "clock"
    view = _viewer_axes()
    for front, back in (("clementine", "apple"), ("mugG", "mugY")):
        assert rel.in_direction(bed[front], "front", own) and rel.is_in_front_of(bed[front], clock, own)
        assert rel.direction_offset_deg(bed[front], "front", own) <= 40.0
        assert not rel.in_direction(bed[back], "front", own) and not rel.is_in_front_of(bed[back], clock, own)
        assert rel.is_in_front_of(bed[front], clock, view) and rel.is_in_front_of(bed[back], clock, view)
    fruit = [replace(bed[i], label="fruit") for i in ("clementine", "apple")]
    assert [o.id for o in fruit if rel.is_in_front_of(o, clock, own)] == ["clementine"]


def test_the_metric_places_on_and_off_the_table():
    """Each place keyed UNREACHABLE is off the table (x 0.2..1.2, y -0.8..0.8); each place expected
    on it lands where the key says and clear of every other object."""
    bed, flo = _by_id("bedside10"), _by_id("florist10")
    view = _viewer_axes()
    clock = rel.frame_axes("intrinsic", reference=bed["clock"])
    can = rel.frame_axes("intrinsic", reference=flo["can"])
    off = [(bed["candle"], rel.metric_direction("right", view, False), 0.30, 0.035),
           (bed["lamp"], rel.metric_direction("behind", view, False), 0.20, 0.035),
           (flo["can"], rel.metric_direction("left", can, True), 0.30, 0.04),
           (flo["vaseT"], rel.metric_direction("behind", view, False), 0.10, 0.04)]
    for ref, direction, gap, half in off:
        centre = rel.offset_position(ref, direction, gap, half)
        assert not (0.2 <= centre[0] <= 1.2 and -0.8 <= centre[1] <= 0.8), ref.id
    # (scene, reference, direction, gap, the placed object's half extent along it, the spot, the moved object)
    on = [(bed, "lamp", rel.metric_direction("right", view, False), 0.10, 0.035, [1.05, 0.315], None),
          (bed, "clock", rel.metric_direction("front", clock, True), 0.15, 0.035, [0.98, 0.305], None),
          (bed, "clock", rel.metric_direction("left", clock, True), 0.05, 0.035, [0.825, 0.08], None),
          (bed, "tissues", rel.metric_direction("front", view, False), 0.10, 0.035, [0.745, -0.36], None),
          (bed, "phone", rel.metric_direction("left", view, False), 0.10, 0.035, [0.45, 0.32], "glass"),
          (flo, "can", rel.metric_direction("front", can, True), 0.10, 0.04, [0.79, 0.50], None),
          (flo, "can", rel.metric_direction("left", can, True), 0.10, 0.04, [0.50, 0.70], None),
          (flo, "can", rel.metric_direction("right", can, True), 0.05, 0.04, [0.50, 0.35], None),
          (flo, "roses", rel.metric_direction("right", view, False), 0.10, 0.04, [0.68, -0.15], None),
          (flo, "tulips", rel.metric_direction("left", view, False), 0.10, 0.035, [0.40, -0.035], "mister")]
    for objs, ref, direction, gap, half, spot, moved in on:
        centre = rel.offset_position(objs[ref], direction, gap, half)
        assert np.allclose(centre[:2], spot, atol=1e-6), ref
        assert 0.2 + half <= spot[0] <= 1.2 - half and -0.8 + half <= spot[1] <= 0.8 - half, ref
        assert_clear(objs.values(), spot, half, 0.05, skip=(ref, moved))
    # from the viewer, before the clock and before the can would be elsewhere
    assert np.allclose(rel.offset_position(bed["clock"], rel.metric_direction("front", view, False), 0.15, 0.035)[:2],
                       [0.725, 0.08])
    assert np.allclose(rel.offset_position(flo["can"], rel.metric_direction("front", view, False), 0.10, 0.04)[:2],
                       [0.21, 0.50])
    for objs, a, b, half in ((bed, "case", "mugG", 0.035), (flo, "tulips", "ribbon", 0.04)):
        mid = (objs[a].center[:2] + objs[b].center[:2]) / 2
        assert_clear(objs.values(), mid, half, 0.05)


def test_the_first_aid_cabinet_slots():
    scene = EVERYDAY10_SCENES["cabinet10_held"]()
    assert_in_slots(scene, {"thermo": "r1c1", "scissors": "r1c3", "bandage": "r2c2", "plasters": "r2c3",
                            "kit": "r3c1", "icepack": "r3c2"})
    objs = {o.id: o for o in scene.objects}
    assert {r.id for r in scene.regions if rel.is_empty(r)} == {"r1c2", "r2c1", "r3c3"}
    assert {r.id for r in scene.regions if rel.is_full(r)} == {"r3c1"}
    axes = rel.frame_axes("relative", viewer=scene.viewer)
    assert [r.id for r in rel.next_to(scene.regions, objs["thermo"], axes)] == ["r1c2"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["thermo"], axes, below=True)] == ["r2c1"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["plasters"], axes, below=True)] == ["r3c3"]
    shelved = [o for o in scene.objects if o.category != "shelf" and not o.held]
    assert [o.id for o in rel.directly_above(shelved, objs["scissors"], axes, below=True)] == ["plasters"]
    assert [o.id for o in rel.directly_above(shelved, objs["icepack"], axes)] == ["bandage"]
    assert [r.id for r in scene.regions
            if rel.is_between(r, objs["thermo"], objs["scissors"], same_level=True)] == ["r1c2"]
    assert rel.shelf_row(scene.regions, "middle") == 2 and rel.shelf_column(scene.regions, "middle", axes) == 2
    assert rel.shelf_column(scene.regions, "left", axes) == 1
    empty = {r.id for r in scene.regions if rel.is_empty(r)}
    assert {r.id for r in scene.regions if r.col == 1} & empty == {"r2c1"}
