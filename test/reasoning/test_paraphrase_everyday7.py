"""The hand-worked geometry the `everyday7` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import numpy as np

from hand_worked import assert_clear, assert_faces, assert_in_slots, left_to_right, next_to_pairs, placed
from spatial_manip.bench.paraphrase_everyday7 import EVERYDAY7_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return placed(EVERYDAY7_SCENES[key]())


def _by_id(key):
    return {o.id: o for o in EVERYDAY7_SCENES[key]().objects}


def test_the_next_to_pairs_are_the_hand_worked_ones():
    expected = {"garden7": {("potB", "twine"), ("apple", "can"), ("bag", "spray")}, "craft7": {("marker", "paintR")}}
    for key, pairs in expected.items():
        assert next_to_pairs(_objects(key)) == pairs, key
    garden, craft = _by_id("garden7"), _by_id("craft7")
    for objs, ref, nearest in ((garden, "spray", "bag"), (garden, "twine", "potB"), (craft, "marker", "paintR"),
                               (craft, "machine", "glue")):
        others = [o for o in objs.values() if o.category != "table" and o.id != ref]
        ranked = sorted(others, key=lambda o: rel.distance(o, objs[ref]))
        assert ranked[0].id == nearest, ref
        assert rel.distance(ranked[1], objs[ref]) - rel.distance(ranked[0], objs[ref]) > 0.015, ref


def test_left_to_right_and_the_closest_to_the_viewer():
    orders = {"garden7": ["twine", "apple", "potB", "can", "trowel", "potS", "seeds", "gloves", "spray", "bag",
                          "shears"],
              "craft7": ["paintB", "yarnP", "machine", "scissors", "glue", "yarnB", "ribbon", "pencil", "tin",
                         "marker", "paintR"]}
    for key, expected in orders.items():
        assert [o.id for o in left_to_right(_objects(key))] == expected, key
    scene = EVERYDAY7_SCENES["garden7"]()
    for viewpoint in (scene.viewer, scene.robot):
        ranked = sorted(_objects("garden7"), key=lambda o: rel.distance(o, viewpoint))
        assert [o.id for o in ranked[:2]] == ["trowel", "gloves"]
        assert rel.distance(ranked[1], viewpoint) - rel.distance(ranked[0], viewpoint) > 0.03


def test_sizes_colours_and_the_speakers_side():
    garden = _by_id("garden7")
    assert [o.id for o in rel.size_superlative(_objects("garden7"), "tallest")] == ["spray"]
    assert [o.id for o in rel.size_superlative(_objects("garden7"), "biggest")] == ["bag"]
    assert [o.id for o in rel.size_superlative([garden["potB"], garden["potS"]], "smaller")] == ["potS"]
    red = [o.id for o in _objects("garden7") if "red" in o.extra["colour_names"]]
    assert red == ["apple", "trowel", "shears"]
    assert [o.id for o in _objects("garden7") if "white" in o.extra["colour_names"]] == ["spray"]
    viewer = EVERYDAY7_SCENES["garden7"]().viewer
    axes = rel.frame_axes("relative", viewer=viewer)
    sector = {o.id: rel.direction_of(o, axes) for o in _objects("garden7")}
    assert (sector["potB"], sector["potS"]) == ("left", "front")
    assert [i for i in red if sector[i] == "right"] == ["shears"]
    craft = _by_id("craft7")
    assert rel.direction_of(craft["paintR"], axes) == "right" and rel.direction_of(craft["paintB"], axes) == "front"


def test_what_the_can_and_the_machine_face_and_their_own_sides():
    """The watering can's spout faces the viewer's right and the sewing machine faces the viewer:
    among the pots (the yarn balls) one lies in each one's front sector, and it is the closest of them
    before its front (the can's potS is the closest object of all; the machine's is the glue stick,
    outside its front sector); the machine's own left holds paintR and its own right paintB."""
    for key, facer, kind, faced in (("garden7", "can", "flower pot", "potS"), ("craft7", "machine", "yarn ball", "yarnP")):
        objs, ref = _objects(key), _by_id(key)[facer]
        assert_faces(objs, ref, kind, faced)
        axes = rel.frame_axes("intrinsic", reference=ref)
        before = [o for o in objs if o.id != facer and rel.is_in_front_of(o, ref, axes)]
        nearest = rel.closest(before, ref)[0]
        assert (nearest.id, rel.in_direction(nearest, "front", axes)) == {"can": ("potS", True),
                                                                           "machine": ("glue", False)}[facer]
    can_axes = rel.frame_axes("intrinsic", reference=_by_id("garden7")["can"])
    assert np.allclose(can_axes.right, [-1, 0, 0], atol=1e-9)     # the can's own right: towards the viewer
    craft = _by_id("craft7")
    machine_axes = rel.frame_axes("intrinsic", reference=craft["machine"])
    assert np.allclose(machine_axes.right, [0, 1, 0], atol=1e-9)  # the machine's own right: the viewer's left
    assert rel.is_left_of(craft["paintR"], craft["machine"], machine_axes)
    assert rel.is_right_of(craft["paintB"], craft["machine"], machine_axes)


def test_the_metric_places_on_and_off_the_table():
    """Each place keyed UNREACHABLE is off the table (x 0.2..1.2, y -0.8..0.8); each place expected
    on it lands clear of every other object."""
    garden, craft = _by_id("garden7"), _by_id("craft7")
    can_axes = rel.frame_axes("intrinsic", reference=garden["can"])
    machine_axes = rel.frame_axes("intrinsic", reference=craft["machine"])
    viewer_axes = rel.frame_axes("relative", viewer=EVERYDAY7_SCENES["garden7"]().viewer)
    off = [(garden["can"], rel.metric_direction("left", can_axes, True), 0.20, 0.03),
           (garden["gloves"], rel.metric_direction("right", viewer_axes, False), 0.50, 0.03),
           (craft["machine"], rel.metric_direction("behind", machine_axes, True), 0.20, 0.02),
           (craft["paintR"], rel.metric_direction("right", viewer_axes, False), 0.30, 0.02)]
    for ref, direction, gap, half in off:
        centre = rel.offset_position(ref, direction, gap, half)
        assert not (0.2 <= centre[0] <= 1.2 and -0.8 <= centre[1] <= 0.8), ref.id
    on = [(garden, garden["potB"], rel.metric_direction("right", viewer_axes, False), 0.10, 0.03, [0.50, 0.32]),
          (garden, garden["potS"], rel.metric_direction("front", viewer_axes, False), 0.15, 0.03, [0.72, 0.02]),
          (garden, garden["can"], rel.metric_direction("right", can_axes, True), 0.10, 0.03, [0.80, 0.42]),
          (garden, garden["seeds"], rel.metric_direction("behind", viewer_axes, False), 0.15, 0.03, [0.945, -0.12]),
          (craft, craft["yarnB"], rel.metric_direction("right", viewer_axes, False), 0.10, 0.02, [0.58, -0.275]),
          (craft, craft["machine"], rel.metric_direction("front", machine_axes, True), 0.10, 0.02, [0.74, 0.35]),
          (craft, craft["machine"], rel.metric_direction("left", machine_axes, True), 0.10, 0.02, [0.95, 0.04])]
    for objs, ref, direction, gap, half, spot in on:
        centre = rel.offset_position(ref, direction, gap, half)
        assert np.allclose(centre[:2], spot, atol=1e-6), ref.id
        assert_clear(objs.values(), spot, half, 0.02, skip=(ref.id,))


def test_the_garage_shelf_slots():
    scene = EVERYDAY7_SCENES["garage7_held"]()
    assert_in_slots(scene, {"paint": "r1c1", "spraycan": "r1c3", "toolbox": "r2c2", "rags": "r2c3", "tape": "r3c1",
                            "oil": "r3c3"})
    slots, objs = {r.id: r for r in scene.regions}, {o.id: o for o in scene.objects}
    assert {r.id for r in scene.regions if rel.is_empty(r)} == {"r1c2", "r2c1", "r3c2"}
    assert not rel.is_partly_occupied(slots["r2c3"])        # full
    axes = rel.frame_axes("relative", viewer=scene.viewer)
    assert [r.id for r in rel.next_to(scene.regions, objs["toolbox"], axes)] == ["r2c1", "r2c3"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["paint"], axes, below=True)] == ["r2c1"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["toolbox"], axes)] == ["r1c2"]
    assert [r.id for r in scene.regions if rel.is_between(r, objs["paint"], objs["spraycan"], same_level=True)] == ["r1c2"]
