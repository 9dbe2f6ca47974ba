"""The hand-worked geometry the `everyday9` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from hand_worked import assert_clear, assert_faces, assert_in_slots, next_to_pairs, placed
from spatial_manip.bench.paraphrase_everyday9 import EVERYDAY9_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return placed(EVERYDAY9_SCENES[key]())


def _by_id(key):
    return {o.id: o for o in EVERYDAY9_SCENES[key]().objects}


def _viewer_axes():
    return rel.frame_axes("relative", viewer=EVERYDAY9_SCENES["camp9"]().viewer)


def test_the_next_to_pairs_and_the_closest_are_the_hand_worked_ones():
    expected = {"camp9": {("pot", "stove"), ("bottle", "orange")}, "bakery9": {("jam", "register")}}
    for key, pairs in expected.items():
        assert next_to_pairs(_objects(key)) == pairs, key
    camp, bakery = _by_id("camp9"), _by_id("bakery9")
    for objs, ref, nearest in ((camp, "stove", "pot"), (camp, "bottle", "orange"), (camp, "lantern", "stove"),
                               (bakery, "register", "jam")):
        others = [o for o in objs.values() if o.category != "table" and o.id != ref]
        ranked = sorted(others, key=lambda o: rel.distance(o, objs[ref]))
        assert ranked[0].id == nearest, ref
        assert rel.distance(ranked[1], objs[ref]) - rel.distance(ranked[0], objs[ref]) >= 0.03, ref


def test_left_to_right_closest_and_farthest():
    """Left to right (the camp's pear and camera level, one rank: no ordinal counts across them)."""
    orders = {"camp9": ["orange", "lantern", "bottle", "mugB", "stove", "plate", "pot", "mugRW", "torch", "pear",
                        "camera", "knife", "spray", "banana"],
              "bakery9": ["basket", "loafB", "loafS", "baguette", "honey", "register", "jam", "croissant", "donut",
                          "tray", "cupcake", "knife"]}
    for key, expected in orders.items():
        assert [o.id for o in sorted(_objects(key), key=lambda o: -o.center[1])] == expected, key
    axes = _viewer_axes()
    camp = _objects("camp9")
    assert [o.id for o in rel.leftmost(camp, axes, 4)] == ["mugB"]
    assert [o.id for o in rel.rightmost(camp, axes, 3)] == ["knife"]
    bakery = _objects("bakery9")
    assert [o.id for o in rel.leftmost(bakery, axes, 3)] == ["loafS"]
    assert [o.id for o in rel.rightmost(bakery, axes, 2)] == ["cupcake"]
    scene = EVERYDAY9_SCENES["camp9"]()
    for viewpoint in (scene.viewer, scene.robot):
        assert [o.id for o in rel.closest(camp, viewpoint)] == ["torch"]
        assert [o.id for o in rel.farthest(camp, viewpoint)] == ["spray"]
        jars = [o for o in bakery if o.id in ("honey", "jam")]
        assert [o.id for o in rel.closest(jars, viewpoint)] == ["honey"]


def test_sizes_colours_and_the_viewers_sides():
    camp, bakery = _by_id("camp9"), _by_id("bakery9")
    for key, tallest, biggest in (("camp9", "lantern", "stove"), ("bakery9", "register", "register")):
        assert [o.id for o in rel.size_superlative(_objects(key), "tallest")] == [tallest]
        assert [o.id for o in rel.size_superlative(_objects(key), "biggest")] == [biggest]
    assert [o.id for o in rel.size_superlative([camp["mugB"], camp["mugRW"]], "bigger")] == ["mugB"]
    assert [o.id for o in rel.size_superlative([bakery["loafB"], bakery["loafS"]], "bigger")] == ["loafB"]
    assert [o.id for o in rel.size_superlative([bakery["honey"], bakery["jam"]], "smaller")] == ["jam"]

    def main_colour(key, colour):
        return [o.id for o in _objects(key) if o.extra["colour_names"][0] == colour]
    assert main_colour("camp9", "blue") == ["bottle", "mugB"]
    assert main_colour("camp9", "red") == ["mugRW", "knife"]
    assert main_colour("camp9", "black") == ["pot", "camera"]
    assert main_colour("bakery9", "pink") == ["donut"]
    assert main_colour("bakery9", "gray") == ["tray", "knife"]
    axes = _viewer_axes()
    sector = {o.id: rel.direction_of(o, axes) for o in _objects("camp9")}
    assert [i for i, s in sector.items() if s == "left"] == ["orange", "mugB"]
    assert [i for i, s in sector.items() if s == "right"] == ["knife"]


def test_what_the_camera_and_the_register_face_and_their_own_sides():
    """The camera faces the viewer: the pear straight before its lens is the one fruit in its front
    sector and the closest before it; the orange is the one fruit on its own right (sector and
    side), the banana the one on its own left. The register faces the viewer's right: the jam is
    on its own left, the honey on its own right."""
    camp, bakery = _by_id("camp9"), _by_id("bakery9")
    camera, register = camp["camera"], bakery["register"]
    fruit = [replace(camp[i], label="fruit") for i in ("orange", "pear", "banana")]
    assert_faces(fruit + [camera], camera, "fruit", "pear")
    cam = rel.frame_axes("intrinsic", reference=camera)
    assert np.allclose(cam.right, [0, 1, 0], atol=1e-9)
    for word, side, expected in (("left", rel.is_left_of, "banana"), ("right", rel.is_right_of, "orange")):
        assert [o.id for o in fruit if rel.in_direction(o, word, cam)] == [expected]
        assert [o.id for o in fruit if side(o, camera, cam)] == [expected]
    reg = rel.frame_axes("intrinsic", reference=register)
    assert np.allclose(reg.right, [-1, 0, 0], atol=1e-9)
    jars = [bakery["jam"], bakery["honey"]]
    for word, side, expected in (("left", rel.is_left_of, "jam"), ("right", rel.is_right_of, "honey")):
        assert [o.id for o in jars if rel.in_direction(o, word, reg)] == [expected]
        assert [o.id for o in jars if side(o, register, reg)] == [expected]


def test_the_metric_places_on_and_off_the_table():
    """Each place keyed UNREACHABLE is off the table (x 0.2..1.2, y -0.8..0.8); each place expected
    on it lands clear of every other object."""
    camp, bakery = _by_id("camp9"), _by_id("bakery9")
    view = _viewer_axes()
    cam = rel.frame_axes("intrinsic", reference=camp["camera"])
    reg = rel.frame_axes("intrinsic", reference=bakery["register"])
    off = [(camp["lantern"], rel.metric_direction("behind", view, False), 0.30, 0.03),
           (camp["banana"], rel.metric_direction("right", view, False), 0.20, 0.03),
           (bakery["knife"], rel.metric_direction("right", view, False), 0.25, 0.035)]
    for ref, direction, gap, half in off:
        centre = rel.offset_position(ref, direction, gap, half)
        assert not (0.2 <= centre[0] <= 1.2 and -0.8 <= centre[1] <= 0.8), ref.id
    # (scene, reference, direction, gap, the placed object's half extent along it, the spot, the moved object)
    on = [(camp, "mugRW", rel.metric_direction("right", view, False), 0.10, 0.03, [0.70, -0.19], None),
          (camp, "knife", rel.metric_direction("behind", view, False), 0.15, 0.03, [0.59, -0.55], None),
          (camp, "camera", rel.metric_direction("left", cam, True), 0.05, 0.03, [1.08, -0.445], None),
          (camp, "orange", rel.metric_direction("front", view, False), 0.10, 0.03, [0.38, 0.68], None),
          (camp, "lantern", rel.metric_direction("front", view, False), 0.10, 0.04, [0.88, 0.62], "mugRW"),
          (bakery, "register", rel.metric_direction("behind", reg, True), 0.10, 0.035, [0.85, 0.36], None),
          (bakery, "register", rel.metric_direction("front", reg, True), 0.10, 0.035, [0.85, -0.16], None),
          (bakery, "jam", rel.metric_direction("right", view, False), 0.05, 0.035, [1.12, -0.10], None),
          (bakery, "donut", rel.metric_direction("left", view, False), 0.10, 0.035, [0.35, -0.115], "cupcake")]
    for objs, ref, direction, gap, half, spot, moved in on:
        centre = rel.offset_position(objs[ref], direction, gap, half)
        assert np.allclose(centre[:2], spot, atol=1e-6), ref
        assert_clear(objs.values(), spot, half, 0.05, skip=(ref, moved))
    for objs, a, b, half in ((camp, "torch", "pear", 0.03), (bakery, "donut", "croissant", 0.035)):
        mid = (objs[a].center[:2] + objs[b].center[:2]) / 2
        assert_clear(objs.values(), mid, half, 0.05)


def test_the_pet_shelf_slots():
    scene = EVERYDAY9_SCENES["pets9_held"]()
    assert_in_slots(scene, {"treats": "r1c2", "shampoo": "r1c4", "brush": "r2c1", "bowl": "r2c3", "ball": "r2c4",
                            "dogfood": "r3c1", "litter": "r3c2", "leash": "r3c4"})
    objs = {o.id: o for o in scene.objects}
    assert {r.id for r in scene.regions if rel.is_empty(r)} == {"r1c1", "r1c3", "r2c2", "r3c3"}
    assert {r.id for r in scene.regions if rel.is_full(r)} == {"r3c1"}
    axes = rel.frame_axes("relative", viewer=scene.viewer)
    assert [r.id for r in rel.next_to(scene.regions, objs["brush"], axes)] == ["r2c2"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["brush"], axes)] == ["r1c1"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["bowl"], axes, below=True)] == ["r3c3"]
    shelved = [o for o in scene.objects if o.category != "shelf" and not o.held]
    assert [o.id for o in rel.directly_above(shelved, objs["leash"], axes)] == ["ball"]
    assert [r.id for r in scene.regions
            if rel.is_between(r, objs["treats"], objs["shampoo"], same_level=True)] == ["r1c3"]
    assert rel.shelf_row(scene.regions, "middle") == 2
