"""The hand-worked geometry the `everyday8` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import numpy as np

from hand_worked import assert_clear, assert_faces, assert_in_slots, left_to_right, next_to_pairs, placed
from spatial_manip.bench.paraphrase_everyday8 import EVERYDAY8_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return placed(EVERYDAY8_SCENES[key]())


def _by_id(key):
    return {o.id: o for o in EVERYDAY8_SCENES[key]().objects}


def _viewer_axes():
    return rel.frame_axes("relative", viewer=EVERYDAY8_SCENES["trolley8"]().viewer)


def test_the_next_to_pairs_and_the_closest_are_the_hand_worked_ones():
    expected = {"trolley8": {("dish", "syringe"), ("gauze", "sharps")},
                "picnic8": {("appleR", "basket"), ("napkins", "plate")}}
    for key, pairs in expected.items():
        assert next_to_pairs(_objects(key)) == pairs, key
    trolley, picnic = _by_id("trolley8"), _by_id("picnic8")
    for objs, ref, nearest in ((trolley, "sharps", "gauze"), (picnic, "plate", "napkins"),
                               (picnic, "speaker", "appleG"), (picnic, "basket", "appleR")):
        others = [o for o in objs.values() if o.category != "table" and o.id != ref]
        ranked = sorted(others, key=lambda o: rel.distance(o, objs[ref]))
        assert ranked[0].id == nearest, ref
        assert rel.distance(ranked[1], objs[ref]) - rel.distance(ranked[0], objs[ref]) >= 0.03, ref


def test_left_to_right_and_the_closest_to_the_viewer():
    orders = {"trolley8": ["sanit", "masks", "pillB", "thermo", "monitor", "pillS", "dish", "syringe", "gauze",
                           "steth", "sharps"],
              "picnic8": ["glasses", "basket", "cooler", "appleR", "appleG", "banana", "speaker", "cupB", "cupR",
                          "ketchup", "plate", "napkins"]}
    for key, expected in orders.items():
        assert [o.id for o in left_to_right(_objects(key))] == expected, key
    scene = EVERYDAY8_SCENES["trolley8"]()
    for viewpoint in (scene.viewer, scene.robot):
        ranked = sorted(_objects("trolley8"), key=lambda o: rel.distance(o, viewpoint))
        assert [o.id for o in ranked[:2]] == ["thermo", "dish"]
        assert rel.distance(ranked[1], viewpoint) - rel.distance(ranked[0], viewpoint) > 0.03


def test_sizes_colours_and_the_speakers_side():
    trolley, picnic = _by_id("trolley8"), _by_id("picnic8")
    for key, tallest, biggest in (("trolley8", "sharps", "sharps"), ("picnic8", "cooler", "cooler")):
        assert [o.id for o in rel.size_superlative(_objects(key), "tallest")] == [tallest]
        assert [o.id for o in rel.size_superlative(_objects(key), "biggest")] == [biggest]
    assert [o.id for o in rel.size_superlative([trolley["pillB"], trolley["pillS"]], "bigger")] == ["pillB"]
    assert [o.id for o in rel.size_superlative([picnic["cupB"], picnic["cupR"]], "bigger")] == ["cupB"]

    def coloured(key, colour):
        return [o.id for o in _objects(key) if colour in o.extra["colour_names"]]
    assert coloured("trolley8", "blue") == ["sanit", "masks"]
    assert coloured("trolley8", "white") == ["sanit", "thermo", "syringe", "gauze"]
    assert coloured("trolley8", "red") == coloured("trolley8", "yellow") == ["sharps"]
    assert coloured("picnic8", "red") == ["appleR", "cupR", "ketchup"]
    assert coloured("picnic8", "black") == ["glasses", "speaker"]
    axes = _viewer_axes()
    sector = {key: {o.id: rel.direction_of(o, axes) for o in _objects(key)} for key in ("trolley8", "picnic8")}
    assert [i for i, s in sector["trolley8"].items() if s == "right"] == ["steth"]
    assert [i for i, s in sector["trolley8"].items() if s == "left"] == ["masks"]
    assert [i for i, s in sector["picnic8"].items() if s == "left"] == ["glasses", "appleR"]
    assert [i for i, s in sector["picnic8"].items() if s == "right"] == ["cupR", "napkins"]
    assert (sector["picnic8"]["appleG"], sector["picnic8"]["cupB"]) == ("front", "front")


def test_what_the_monitor_and_the_speaker_face_and_their_own_sides():
    """The monitor faces the viewer and the speaker the viewer's left: of the pill bottles (the
    apples) one lies in each one's front sector, and it is the closest of them before its front
    (the speaker's appleG is the closest object before it of all); pillB lies on the monitor's own
    right both ways (left of it and in its right sector)."""
    for key, facer, kind, faced in (("trolley8", "monitor", "pill bottle", "pillS"),
                                    ("picnic8", "speaker", "apple", "appleG")):
        assert_faces(_objects(key), _by_id(key)[facer], kind, faced)
    speaker = _by_id("picnic8")["speaker"]
    speaker_axes = rel.frame_axes("intrinsic", reference=speaker)
    before = [o for o in _objects("picnic8") if o.id != "speaker" and rel.is_in_front_of(o, speaker, speaker_axes)]
    assert [o.id for o in rel.closest(before, speaker)] == ["appleG"]
    assert np.allclose(speaker_axes.right, [1, 0, 0], atol=1e-9)     # the speaker's own right: away from the viewer
    trolley = _by_id("trolley8")
    monitor_axes = rel.frame_axes("intrinsic", reference=trolley["monitor"])
    assert np.allclose(monitor_axes.right, [0, 1, 0], atol=1e-9)     # the monitor's own right: the viewer's left
    assert rel.is_right_of(trolley["pillB"], trolley["monitor"], monitor_axes)
    assert rel.direction_of(trolley["pillB"], monitor_axes) == "right"


def test_the_metric_places_on_and_off_the_table():
    """Each place keyed UNREACHABLE is off the table (x 0.2..1.2, y -0.8..0.8); each place expected
    on it lands clear of every other object."""
    trolley, picnic = _by_id("trolley8"), _by_id("picnic8")
    view = _viewer_axes()
    monitor_axes = rel.frame_axes("intrinsic", reference=trolley["monitor"])
    speaker_axes = rel.frame_axes("intrinsic", reference=picnic["speaker"])
    off = [(trolley["sharps"], rel.metric_direction("right", view, False), 0.30, 0.03),
           (picnic["speaker"], rel.metric_direction("right", speaker_axes, True), 0.20, 0.03)]
    for ref, direction, gap, half in off:
        centre = rel.offset_position(ref, direction, gap, half)
        assert not (0.2 <= centre[0] <= 1.2 and -0.8 <= centre[1] <= 0.8), ref.id
    # (scene, reference, direction, gap, the placed object's half extent along it, the spot, the moved object)
    on = [(trolley, "dish", rel.metric_direction("left", view, False), 0.10, 0.03, [0.60, 0.04], None),
          (trolley, "syringe", rel.metric_direction("behind", view, False), 0.15, 0.03, [1.09, -0.22], None),
          (trolley, "monitor", rel.metric_direction("front", monitor_axes, True), 0.10, 0.03, [0.82, 0.10], None),
          (trolley, "monitor", rel.metric_direction("left", monitor_axes, True), 0.10, 0.03, [1.00, -0.105], None),
          (trolley, "pillB", rel.metric_direction("right", view, False), 0.10, 0.02, [0.75, 0.27], "pillS"),
          (picnic, "banana", rel.metric_direction("right", view, False), 0.10, 0.02, [0.55, -0.12], None),
          (picnic, "appleG", rel.metric_direction("front", view, False), 0.15, 0.03, [0.63, 0.12], None),
          (picnic, "speaker", rel.metric_direction("left", speaker_axes, True), 0.10, 0.03, [0.77, -0.10], None),
          (picnic, "speaker", rel.metric_direction("front", speaker_axes, True), 0.10, 0.02, [1.00, 0.07], None),
          (picnic, "speaker", rel.metric_direction("right", view, False), 0.10, 0.02, [1.00, -0.27], None),
          (picnic, "cupB", rel.metric_direction("left", view, False), 0.10, 0.035, [0.75, -0.14], "cupR")]
    for objs, ref, direction, gap, half, spot, moved in on:
        centre = rel.offset_position(objs[ref], direction, gap, half)
        assert np.allclose(centre[:2], spot, atol=1e-6), ref
        assert_clear(objs.values(), spot, half, 0.05, skip=(ref, moved))
    for objs, a, b in ((trolley, "thermo", "dish"), (picnic, "appleG", "cupB")):
        mid = (objs[a].center[:2] + objs[b].center[:2]) / 2
        assert_clear(objs.values(), mid, 0.03, 0.05)


def test_the_laundry_shelf_slots():
    scene = EVERYDAY8_SCENES["laundry8_held"]()
    assert_in_slots(scene, {"detergent": "r1c1", "softener": "r1c3", "towels": "r2c1", "pegs": "r2c2",
                            "iron": "r3c2", "stain": "r3c3"})
    slots, objs = {r.id: r for r in scene.regions}, {o.id: o for o in scene.objects}
    assert {r.id for r in scene.regions if rel.is_empty(r)} == {"r1c2", "r2c3", "r3c1"}
    assert rel.is_full(slots["r2c1"]) and rel.is_partly_occupied(slots["r1c3"])
    axes = rel.frame_axes("relative", viewer=scene.viewer)
    assert [r.id for r in rel.next_to(scene.regions, objs["pegs"], axes)] == ["r2c1", "r2c3"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["softener"], axes, below=True)] == ["r2c3"]
    shelved = [o for o in scene.objects if o.category != "shelf" and not o.held]
    assert [o.id for o in rel.directly_above(shelved, objs["iron"], axes)] == ["pegs"]
    assert [r.id for r in scene.regions
            if rel.is_between(r, objs["detergent"], objs["softener"], same_level=True)] == ["r1c2"]
    assert rel.shelf_column(scene.regions, "middle", axes) == 2 and rel.shelf_column(scene.regions, "left", axes) == 1
