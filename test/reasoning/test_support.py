"""No release without support (issue 35 item 2) and refusing impossible metric places (issue 38).

The support check itself (geometry.support) on hand-built boxes, then the planner on the issues'
examples, on the example table scene (reasoning.examples: table top at z 0.75, x 0.3..1.1,
y -0.7..0.7, the robot at the origin facing +x) with a rubik's cube, a geosphere sculpture, a mug
and an apple added where the table is free.
"""
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.support import (MAX_OVERHANG_M, check_support, overlap_depth, resting_surface,
                                            surfaces)
from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint

TOP = ex.TABLE_TOP


def _table(*objects, regions=()) -> Scene:
    table = SceneObject("table", "table", "table", [0.7, 0.0, TOP / 2], [0.8, 1.4, TOP], ex.rot_z(180), True)
    return Scene(Viewpoint([0, 0, 1.3], [1, 0, -0.5]), Viewpoint([0, 0, 0], [1, 0, 0]), [table, *objects], list(regions))


def _book(x, y, bottom=TOP, pose="upright", id_="b"):
    """A 15 x 3 x 22 cm book whose bottom is at `bottom`."""
    R = ex.rot_x(90.0) if pose == "flat" else np.eye(3)
    half = float(np.abs(R.T @ [0, 0, 1.0]) @ (np.array([0.15, 0.03, 0.22]) / 2))
    return SceneObject(id_, "book", "book", [x, y, bottom + half], [0.15, 0.03, 0.22], R)


CUBE = SceneObject("cube", "rubik's cube", "reference", [0.6, -0.1, TOP + 0.03], [0.06, 0.06, 0.06])


# --- the support function ------------------------------------------------------------------------
def test_a_book_on_the_table_rests_on_the_table():
    assert check_support(_table(), _book(0.7, 0.0)).owner_id == "table"


def test_a_book_in_mid_air_is_refused_naming_the_surface_below_and_the_gap():
    with pytest.raises(UnreachableError, match=r"no support under the book at 0\.50 m above the table: the nearest "
                                               r"surface below it is the table at z 0\.75 m"):
        check_support(_table(), _book(0.7, 0.0, bottom=TOP + 0.5))


def test_a_book_off_the_table_is_refused_saying_how_far_beyond_the_edge():
    with pytest.raises(UnreachableError, match=r"no support under the book at \(0\.70, 0\.90\): it is 0\.20 m "
                                               r"beyond the edge of the table"):
        check_support(_table(), _book(0.7, 0.9))


def test_a_footprint_may_overhang_the_table_edge_a_little_but_not_more():
    inside_edge = 0.7 - 0.11          # flat, the book is 22 cm across y: its side on the table's edge
    assert check_support(_table(), _book(0.7, inside_edge + MAX_OVERHANG_M - 0.01, pose="flat"))
    with pytest.raises(UnreachableError, match="hang 7 cm over the edge of the table"):
        check_support(_table(), _book(0.7, inside_edge + 0.07, pose="flat"))


def test_a_small_object_carries_a_book_whose_middle_is_over_it_and_not_one_near_its_edge():
    scene = _table(CUBE)
    assert check_support(scene, _book(0.6, -0.1, bottom=TOP + 0.06, pose="flat")).owner_id == "cube"
    with pytest.raises(UnreachableError, match=r"middle would be 0\.5 cm from the edge of the rubik's cube \(cube\)'s "
                                               "top.*tip off"):
        check_support(scene, _book(0.6, -0.1 + 0.025, bottom=TOP + 0.06, pose="flat"))


def test_a_place_inside_another_object_is_refused_and_touching_one_is_not():
    mug = SceneObject("mug", "mug", "reference", [0.7, 0.1, TOP + 0.05], [0.09, 0.09, 0.1])
    with pytest.raises(UnreachableError, match=r"would be inside the mug \(mug\): their boxes overlap by 3 cm"):
        check_support(_table(mug), _book(0.7, 0.1 - 0.045 - 0.015 + 0.04))
    assert check_support(_table(mug), _book(0.7, 0.1 - 0.045 - 0.015 - 0.002)).owner_id == "table"


def test_a_tilted_box_carries_nothing_and_the_floor_is_no_place():
    tilted = SceneObject("t", "book", "book", [0.7, 0.0, TOP + 0.1], [0.2, 0.04, 0.29], ex.rot_x(45.0))
    floor = SceneObject("floor", "floor", "floor", [0.0, 0.0, -0.05], [4.0, 4.0, 0.1])
    assert [s.owner_id for s in surfaces(_table(tilted, floor))] == ["table"]


def test_a_slot_floor_carries_a_book_beside_one_already_standing_in_the_slot():
    slot = Region("slot_1", "slot", [0.9, 0.0, 1.0], [0.3, 0.4, 0.3])
    standing = _book(0.9, 0.0, bottom=0.85, id_="in_slot")
    placed = _book(0.9, 0.0, bottom=0.85, id_="held")
    assert check_support(_table(standing, regions=[slot]), placed).owner_id == "slot_1"


def test_overlap_depth_is_the_smallest_projection_overlap():
    a = SceneObject("a", "x", "x", [0, 0, 0], [0.2, 0.2, 0.2])
    b = SceneObject("b", "x", "x", [0.15, 0.0, 0.0], [0.2, 0.2, 0.2])
    assert overlap_depth(a, b) == pytest.approx(0.05)
    assert overlap_depth(a, SceneObject("c", "x", "x", [0.3, 0, 0], [0.2, 0.2, 0.2])) == 0.0


def test_resting_surface_says_what_a_seen_object_rests_on_or_how_high_it_floats():
    surface, gap = resting_surface(_table(), _book(0.7, 0.0, bottom=TOP + 0.01))
    assert surface.owner_id == "table" and gap == pytest.approx(0.01)
    surface, gap = resting_surface(_table(), _book(0.7, 0.0, bottom=TOP + 0.2))
    assert surface is None and gap == pytest.approx(0.2)


# --- the planner on the issues' examples -------------------------------------------------------------
def _scene():
    s = ex.held_table_scene()
    s.objects += [CUBE,
                  SceneObject("geo", "geosphere sculpture", "reference", [0.5, 0.3, TOP + 0.075], [0.15, 0.15, 0.15]),
                  SceneObject("mug", "mug", "reference", [0.6, -0.2, TOP + 0.05], [0.1, 0.1, 0.1]),
                  SceneObject("apple", "apple", "reference", [0.8, -0.4, TOP + 0.04], [0.08, 0.08, 0.08])]
    return s


PLANNER = make_planner("program")


@pytest.mark.parametrize("text,why", [
    ("place the book 50 cm above the rubik's cube",
     r"no support under the book at 0\.50 m above the rubik's cube \(cube\): the nearest surface below it is the "
     r"rubik's cube \(cube\) at z 0\.81 m, so it would fall"),
    ("place the book 20 cm above the jar", r"0\.20 m above the ceramic jar \(jar\)"),
    ("place the book 15 cm to the right of the robot", r"no support under the book at \(0\.00, -0\.1[67]\): it is 0\.30 m "
                                                       r"beyond the edge of the table"),
    ("put it a metre to the left of the mug", r"at \(0\.60, 0\.8[67]\): it is 0\.1[67] m beyond the edge of the table"),
    ("place it 1.5 m behind the apple", r"at \(2\.42, -0\.40\): it is 1\.31 m beyond the edge of the table"),
])
def test_places_with_nothing_to_rest_on_are_unreachable_at_planning(text, why):
    res = PLANNER.plan(_scene(), text)
    assert not res.ok and res.error["code"] == "UNREACHABLE", res.error
    assert res.program is not None and res.place_pose is None
    assert re.search(why, res.error["message"]), res.error["message"]


def test_a_pick_and_place_fifty_centimetres_above_the_sculpture_is_refused_before_the_pick():
    s = _scene()
    s.objects = [o for o in s.objects if not o.held]
    res = PLANNER.plan(s, "pick the leftmost book and put it 50 cm above the geosphere sculpture")
    assert res.error["code"] == "UNREACHABLE" and "0.50 m above the geosphere sculpture (geo)" in res.error["message"]


@pytest.mark.parametrize("text,rests_on", [
    ("place the book on top of the rubik's cube", "cube"),
    ("put the book above the jar", "jar"),          # no distance: "above X" means on top of X
    ("place the book 10 cm to the right of the jar", "table"),
])
def test_supported_places_are_planned_and_say_what_they_rest_on(text, rests_on):
    res = PLANNER.plan(_scene(), text)
    assert res.ok, res.error
    steps = next(e for e in res.trace if e["event"] == "execute")["steps"]
    assert [s["ids"] for s in steps if s["node"] == "support"] == [[rests_on]]


def test_n_cm_from_x_takes_a_direction_where_the_book_rests():
    """The jar stands 20 cm from the table's back edge: its freest side is behind it, off the table."""
    res = PLANNER.plan(_scene(), "place the book 15 cm from the jar")
    assert res.ok, res.error
    assert res.place_pose.position[0] < 1.1 and res.place_pose.position[2] == pytest.approx(TOP + 0.11)


def test_plan_cli_refuses_with_the_reason(tmp_path):
    path = tmp_path / "scene.json"
    _scene().save(path)
    p = subprocess.run([sys.executable, "-m", "spatial_manip.cli", "plan", "--scene", str(path), "--json",
                        "--instruction", "place the book 50 cm above the rubik's cube"],
                       capture_output=True, text=True, timeout=60)
    out = json.loads(p.stdout)
    assert p.returncode == 1 and out["error"]["code"] == "UNREACHABLE" and "no support" in out["error"]["message"]


def test_the_slot_between_two_objects_on_a_shelf_is_the_one_between_not_theirs():
    """Issue 38: 'between the cereal box and the jar' returned three slots, the two they stand in too."""
    s = ex.shelf_scene()          # row 2's slots: y 0.45 (0.30 wide), 0.0 (0.45), -0.45 (0.30); floor z 0.81
    s.objects += [SceneObject("cereal", "cereal box", "reference", [0.9, 0.52, 0.93], [0.07, 0.06, 0.24]),
                  SceneObject("jar2", "jar", "reference", [0.9, -0.52, 0.87], [0.1, 0.1, 0.12])]
    res = PLANNER.plan(s, "put it between the cereal box and the jar")
    assert res.ok and res.targets == ["slot_r2c2"], (res.program, res.targets, res.error)


def _shelf_with_books(*ys):
    s = ex.shelf_scene()          # row 1's floor is at z 1.16
    s.objects += [SceneObject(f"bk{i}", "book", "book", [0.9, y, 1.16 + 0.11], [0.15, 0.03, 0.22])
                  for i, y in enumerate(ys, 1)]
    return s


def test_next_to_the_book_with_two_books_on_the_shelf_is_ambiguous_naming_them():
    """Issue 38: it chose the slot closest to the viewer (the words' book was dropped)."""
    res = PLANNER.plan(_shelf_with_books(0.40, -0.45), "put it next to the book")
    assert res.error["code"] == "AMBIGUOUS" and "['bk1', 'bk2']" in res.error["message"], res.error
    res = PLANNER.plan(_shelf_with_books(0.40), "put it next to the book")
    assert res.ok and res.program == "place(unique(filterDist$NextTo(filterSlot(SHELF), bk1)), pose=keep)"
    assert res.targets == ["slot_r1c2"], "the slot beside the book's, not the one it stands in (r1c1)"


def _table_and_shelf():
    """The example table with a mug on it and a one-row shelf behind it (x 1.3..1.6) holding a clock."""
    s = ex.table_scene()
    s.objects = [o for o in s.objects if o.id not in ("b_back_up", "frame")]
    s.objects += [SceneObject("mug", "mug", "reference", [0.6, -0.3, TOP + 0.05], [0.09, 0.09, 0.1]),
                  SceneObject("shelf", "shelf", "shelf", [1.45, 0.0, 0.75], [0.3, 1.4, 1.5], ex.rot_z(180), True),
                  SceneObject("clock2", "alarm clock", "reference", [1.45, 0.45, 1.21], [0.08, 0.1, 0.1])]
    s.regions = [Region(f"slot_r1c{c}", "slot", [1.45, y, 1.325], [0.28, 0.4, 0.33], 1, c)
                 for c, y in ((1, 0.45), (2, 0.0), (3, -0.45))]
    return s


@pytest.mark.parametrize("text,place", [
    # issue 38: it chose the shelf's slots behind the table; the mug stands on the table
    ("grab the tilted book and then put it behind the mug", "place(metric$Behind(0.05, mug, viewer), pose=keep)"),
    ("take the tilted book and put it in a slot behind the mug",
     "place(unique(filterOri$Behind(filterSlot(SHELF), mug, viewer)), pose=keep)"),
    ("take the tilted book and put it next to the alarm clock",          # the clock stands in a slot
     "place(unique(filterDist$NextTo(filterSlot(SHELF), clock2)), pose=keep)"),
])
def test_a_place_beside_something_on_the_table_stays_on_the_table_unless_a_slot_is_named(text, place):
    res = PLANNER.plan(_table_and_shelf(), text)
    assert res.ok and res.program.split(" ; ")[1] == place, (res.program, res.error)
