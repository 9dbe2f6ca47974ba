"""The hand-worked geometry the `everyday11` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import numpy as np

from hand_worked import assert_clear, assert_in_slots, left_to_right, next_to_pairs, placed
from spatial_manip.bench.paraphrase_everyday11 import EVERYDAY11_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return placed(EVERYDAY11_SCENES[key]())


def _by_id(key):
    return {o.id: o for o in EVERYDAY11_SCENES[key]().objects}


def _viewer_axes():
    return rel.frame_axes("relative", viewer=EVERYDAY11_SCENES["school11"]().viewer)


def _ids(objs):
    return [o.id for o in objs]


def test_next_to_and_the_closest_are_the_hand_worked_ones():
    assert next_to_pairs(_objects("school11")) == {("markerB", "pear")}
    assert next_to_pairs(_objects("music11")) == {("sheets", "uke"), ("picks", "uke"), ("harmonica", "uke"),
                                                  ("metronome", "uke"), ("headphones", "maracaR")}
    # (scene, reference, the closest other object): each at most 30 cm off and 3 cm clear of the next
    for key, ref, nearest in (("school11", "pear", "markerB"), ("school11", "ruler", "pencase"),
                              ("music11", "metronome", "uke"), ("music11", "headphones", "maracaR")):
        objs = _by_id(key)
        others = [o for o in _objects(key) if o.id != ref]
        ranked = sorted(others, key=lambda o: rel.distance(o, objs[ref]))
        assert ranked[0].id == nearest, ref
        assert rel.distance(ranked[1], objs[ref]) - rel.distance(ranked[0], objs[ref]) >= 0.03, ref
        assert rel.distance(ranked[0], objs[ref]) <= rel.NEXT_TO_SAID_MAX_M, ref
    school = _by_id("school11")
    markers = [school["markerR"], school["markerB"]]
    assert _ids(rel.closest(markers, school["pear"])) == ["markerB"]


def test_left_to_right_and_closest_to_you():
    orders = {"school11": ["ruler", "lunchbox", "pencase", "calc", "markerR", "glue", "banana", "laptop", "bottle",
                           "eraser", "markerB", "pear", "crayons", "protractor", "pencil"],
              "music11": ["maracaG", "sheets", "picks", "uke", "harmonica", "metronome", "mug", "rosin", "capo",
                          "maracaR", "headphones", "recorder", "fork", "sticks"]}
    for key, expected in orders.items():
        objs = _objects(key)
        assert _ids(left_to_right(objs)) == expected, key
        ys = sorted(o.center[1] for o in objs)
        assert min(b - a for a, b in zip(ys, ys[1:])) >= 0.07 - 1e-9, key
    axes = _viewer_axes()
    school, music = _objects("school11"), _objects("music11")
    assert _ids(rel.leftmost(school, axes, 2)) == ["lunchbox"]
    assert _ids(rel.rightmost(school, axes, 3)) == ["crayons"]
    assert _ids(rel.rightmost(school, axes)) == ["pencil"]
    assert _ids(rel.leftmost(music, axes, 3)) == ["picks"]
    scene = EVERYDAY11_SCENES["school11"]()
    for viewpoint in (scene.viewer, scene.robot):
        for objs, nearest in ((school, "banana"), (music, "capo")):
            assert rel.clearly_ranked(objs, lambda o: rel.distance(o, viewpoint))
            assert _ids(rel.closest(objs, viewpoint)) == [nearest]


def test_sizes_colours_halves_and_the_viewers_sides():
    school, music = _by_id("school11"), _by_id("music11")
    assert _ids(rel.size_superlative(_objects("school11"), "tallest")) == ["bottle"]
    assert _ids(rel.size_superlative(_objects("music11"), "biggest")) == ["uke"]
    assert _ids(rel.size_superlative([music["maracaG"], music["maracaR"]], "bigger")) == ["maracaR"]

    def main_colour(key, colour):
        return [o.id for o in _objects(key) if o.extra["colour_names"][0] == colour]
    assert main_colour("school11", "yellow") == ["ruler", "banana", "crayons", "pencil"]
    assert main_colour("school11", "white") == ["glue"]
    assert main_colour("school11", "pink") == ["eraser"]
    assert main_colour("school11", "blue") == ["pencase", "bottle"]
    assert main_colour("school11", "black") == ["calc", "markerB"]
    assert main_colour("music11", "black") == ["metronome", "capo", "headphones"]
    assert main_colour("music11", "orange") == ["rosin"]
    assert main_colour("music11", "gray") == ["harmonica", "fork"]
    assert main_colour("minibar11", "green") == ["beer", "wine"]
    table = school["table"]
    # "the X on the left / right": the one X in that half of the table
    for objs, ids, word, inside in ((school, ("markerR", "markerB"), "left", "markerR"),
                                    (school, ("banana", "pear"), "left", "banana"),
                                    (school, ("pencase", "bottle"), "left", "pencase"),
                                    (school, ("calc", "markerB"), "right", "markerB"),
                                    (music, ("maracaG", "maracaR"), "right", "maracaR"),
                                    (music, ("harmonica", "fork"), "right", "fork")):
        assert [i for i in ids if rel.part_of(objs[i], table, word)] == [inside], (ids, word)
    axes = _viewer_axes()
    for key, ids in (("school11", ["ruler", "calc"]), ("music11", ["maracaG", "picks"])):
        objs = _objects(key)
        assert [o.id for o in objs if rel.direction_of(o, axes) == "left"] == ids, key
        assert all(rel.direction_offset_deg(o, "left", axes) <= 40.0 for o in objs if o.id in ids)


def test_the_laptop_and_the_metronome_are_read_in_their_own_frames():
    """The laptop faces the viewer (its own left is the viewer's right); the metronome faces the
    viewer's right (its own right is towards the viewer). Where the two frames differ the keys
    follow the object's own (`relations.default_frame`), and both of its readings (half-plane and
    sector) agree."""
    school, music = _by_id("school11"), _by_id("music11")
    view = _viewer_axes()
    laptop = rel.frame_axes("intrinsic", reference=school["laptop"])
    assert np.allclose(laptop.right, [0, 1, 0], atol=1e-9)
    assert rel.default_frame(school["laptop"], EVERYDAY11_SCENES["school11"]().viewer).attached_to == "laptop"
    for ids, word, expected in ((("markerR", "markerB"), "left", "markerB"), (("markerR", "markerB"), "right", "markerR"),
                                (("banana", "pear"), "left", "pear")):
        half = rel.is_left_of if word == "left" else rel.is_right_of
        assert [i for i in ids if half(school[i], school["laptop"], laptop)] == [expected]
        assert [i for i in ids if rel.in_direction(school[i], word, laptop, school["laptop"])] == [expected]
        assert rel.direction_offset_deg(school[expected], word, laptop, school["laptop"]) <= 40.0
    # from the viewer the other marker and the other fruit are the left ones
    assert rel.is_left_of(school["markerR"], school["laptop"], view)
    assert rel.is_left_of(school["banana"], school["laptop"], view)
    metro = rel.frame_axes("intrinsic", reference=music["metronome"])
    assert np.allclose(metro.forward, [0, -1, 0], atol=1e-9) and np.allclose(metro.right, [-1, 0, 0], atol=1e-9)
    maracas = ("maracaG", "maracaR")
    assert [i for i in maracas if rel.is_in_front_of(music[i], music["metronome"], metro)] == ["maracaR"]
    assert rel.in_direction(music["maracaR"], "front", metro, music["metronome"])
    assert rel.direction_offset_deg(music["maracaR"], "front", metro, music["metronome"]) <= 40.0
    assert all(rel.is_in_front_of(music[i], music["metronome"], view) for i in maracas)
    black = [o for o in _objects("music11") if o.extra["colour_names"][0] == "black" and o.id != "metronome"]
    assert [o.id for o in black if rel.is_right_of(o, music["metronome"], metro)] == ["capo"]
    assert [o.id for o in black if rel.in_direction(o, "right", metro, music["metronome"])] == ["capo"]
    assert [o.id for o in black if rel.is_right_of(o, music["metronome"], view)] == ["capo", "headphones"]


def test_the_metric_places_on_and_off_the_table():
    """Each place keyed UNREACHABLE is off the table (x 0.2..1.2, y -0.8..0.8); each place expected
    on it lands where the key says and clear of every other object."""
    school, music = _by_id("school11"), _by_id("music11")
    view = _viewer_axes()
    laptop = rel.frame_axes("intrinsic", reference=school["laptop"])
    metro = rel.frame_axes("intrinsic", reference=music["metronome"])
    off = [(school["ruler"], rel.metric_direction("left", view, False), 0.20, 0.03),
           (school["lunchbox"], rel.metric_direction("behind", view, False), 0.30, 0.03),
           (music["metronome"], rel.metric_direction("left", metro, True), 0.20, 0.03),
           (music["sheets"], rel.metric_direction("behind", view, False), 0.30, 0.03)]
    for ref, direction, gap, half in off:
        centre = rel.offset_position(ref, direction, gap, half)
        assert not (0.2 <= centre[0] <= 1.2 and -0.8 <= centre[1] <= 0.8), ref.id
    # (scene, reference, direction, gap, the placed object's half extent along it, the spot, the moved object)
    on = [(school, "pencase", rel.metric_direction("right", view, False), 0.10, 0.03, [0.60, 0.31], None),
          (school, "laptop", rel.metric_direction("left", laptop, True), 0.10, 0.03, [1.00, -0.295], None),
          (school, "laptop", rel.metric_direction("front", laptop, True), 0.10, 0.03, [0.75, 0.0], None),
          (school, "laptop", rel.metric_direction("front", view, False), 0.10, 0.03, [0.75, 0.0], None),
          (school, "eraser", rel.metric_direction("front", view, False), 0.05, 0.03, [0.295, -0.22], None),
          (school, "pear", rel.metric_direction("right", view, False), 0.10, 0.01, [0.75, -0.545], "eraser"),
          (school, "laptop", rel.metric_direction("front", laptop, True), 0.10, 0.015, [0.765, 0.0], "glue"),
          (music, "mug", rel.metric_direction("right", view, False), 0.05, 0.03, [0.60, -0.105], None),
          (music, "metronome", rel.metric_direction("front", metro, True), 0.10, 0.03, [1.00, -0.06], None),
          (music, "metronome", rel.metric_direction("right", metro, True), 0.05, 0.03, [0.87, 0.12], None),
          (music, "recorder", rel.metric_direction("left", view, False), 0.10, 0.03, [0.40, -0.305], None),
          (music, "mug", rel.metric_direction("left", view, False), 0.10, 0.015, [0.60, 0.18], "harmonica")]
    for objs, ref, direction, gap, half, spot, moved in on:
        centre = rel.offset_position(objs[ref], direction, gap, half)
        assert np.allclose(centre[:2], spot, atol=1e-6), ref
        assert 0.2 + half <= spot[0] <= 1.2 - half and -0.8 + half <= spot[1] <= 0.8 - half, ref
        assert_clear(objs.values(), spot, half, 0.05, skip=(ref, moved))
    # the laptop's own left and the viewer's give two different spots, both on the table
    assert np.allclose(rel.offset_position(school["laptop"], rel.metric_direction("left", view, False), 0.10,
                                           0.03)[:2], [1.00, 0.295])
    for objs, a, b in ((school, "lunchbox", "laptop"), (music, "mug", "capo")):
        mid = (objs[a].center[:2] + objs[b].center[:2]) / 2
        assert_clear(objs.values(), mid, 0.03, 0.05)


def test_the_minibar_slots():
    scene = EVERYDAY11_SCENES["minibar11_held"]()
    assert_in_slots(scene, {"water": "r1c1", "cola": "r1c3", "juice": "r1c4", "choc": "r2c2", "crisps": "r2c3",
                            "beer": "r2c4", "icebucket": "r3c1", "wine": "r3c2", "chocbox": "r3c4"})
    objs = {o.id: o for o in scene.objects}
    free = [r for r in scene.regions if rel.is_empty(r)]
    assert {r.id for r in free} == {"r1c2", "r2c1", "r3c3"}
    assert {r.id for r in scene.regions if rel.is_full(r)} == {"r3c1"}
    axes = rel.frame_axes("relative", viewer=scene.viewer)
    assert [r.id for r in rel.next_to(scene.regions, objs["water"], axes)] == ["r1c2"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["icebucket"], axes)] == ["r2c1"]
    assert [r.id for r in rel.directly_above(scene.regions, objs["crisps"], axes, below=True)] == ["r3c3"]
    assert [r.id for r in rel.directly_beside(scene.regions, objs["wine"], "right", axes)] == ["r3c3"]
    assert [r.id for r in scene.regions
            if rel.is_between(r, objs["water"], objs["cola"], same_level=True)] == ["r1c2"]
    assert [r.id for r in rel.rightmost(free, axes)] == ["r3c3"]
    assert rel.shelf_row(scene.regions, "middle") == 2
    assert {r.id for r in free if r.row == 2 and r.col == 1} == {"r2c1"}
    try:
        rel.shelf_column(scene.regions, "middle", axes)
        raise AssertionError("four columns have a middle one")
    except ValueError as e:
        assert "no single middle" in str(e)
    shelved = [o for o in scene.objects if o.category != "shelf" and not o.held]
    assert _ids(rel.directly_above(shelved, objs["crisps"], axes)) == ["cola"]
    assert _ids(rel.directly_above(shelved, objs["juice"], axes, below=True)) == ["beer"]
    middle, bottom = (rel.shelf_row(scene.regions, w) for w in ("middle", "bottom"))
    on_row = {row: [o for o in shelved if any(rel.point_in_box(o.center, r) for r in scene.regions if r.row == row)]
              for row in (middle, bottom)}
    assert _ids(rel.leftmost(on_row[middle], axes)) == ["choc"]
    assert _ids(rel.rightmost(on_row[bottom], axes)) == ["chocbox"]
    bottles = [objs["water"], objs["wine"]]
    assert _ids(rel.size_superlative(bottles, "taller")) == ["wine"]
