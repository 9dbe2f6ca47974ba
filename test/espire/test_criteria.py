"""ESPIRE's success criteria as the server applies them (espire_criteria), on hand-made final
scenes: a placed book's pose is judged by its angle, within +-10 degrees (ESPIRE A.4)."""
import dataclasses
import math

import numpy as np
import pytest

from spatial_manip.espire.episode import espire_criteria
from spatial_manip.geometry import relations as rel
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint
from spatial_manip.sim.checker import check_task
from spatial_manip.sim.tasks import Task

SLOT = Region("slot_r1c1", "slot", [0.7, 0.3, 1.0], [0.3, 0.4, 0.35], row=1, col=1)


def _book_tilted(deg: float) -> SceneObject:
    """A book in the slot, tilted `deg` from standing (its thin z axis turned about y)."""
    a = math.radians(90.0 - deg)
    R = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    return SceneObject("book_a", "book", "book", [0.7, 0.3, 0.95], [0.2, 0.14, 0.02], R)


def _scene(book: SceneObject) -> Scene:
    return Scene(Viewpoint([-0.3, 0, 1.2], [1, 0, -0.5]), Viewpoint([0, 0, 0], [1, 0, 0]), [book], [SLOT])


def _place_task(extra_checks=()) -> Task:
    check = [{"type": "released", "object": "book_a"},
             {"type": "in_regions", "object": "book_a", "regions": ["slot_r1c1"]}, *extra_checks]
    return Task(id="place-0-00000", suite="place", action="place", family="Relationship/Left",
                family_key="place:Relationship/Left", aspect="relationship", granularity="coarse",
                difficulty="easy", instruction="place the book in a slot on the left of the shelf",
                program="", answer=["slot_r1c1"], golden_steps=1, scene="", check=check, held="book_a")


@pytest.mark.parametrize("tilt_deg, met", [(0.0, True), (8.0, True), (15.0, False), (19.0, False)])
def test_a_book_the_words_give_no_pose_must_stand_within_10_degrees(tilt_deg, met):
    """ESPIRE's place prompt asks for the vertical manner and A.4 scores the final tilt within
    +-10 degrees: a book leaning 15 degrees in the right slot (which relations.book_pose_class
    still calls upright, up to 20) is a failure."""
    crit = espire_criteria(_place_task())
    final = _scene(_book_tilted(tilt_deg))
    assert check_task(crit, final, final).success is met


@pytest.mark.parametrize("tilt_deg, met", [(90.0, True), (82.0, True), (75.0, False)])
def test_a_book_laid_flat_must_lie_within_10_degrees_of_flat(tilt_deg, met):
    crit = espire_criteria(_place_task([{"type": "pose", "object": "book_a", "pose": "flat"}]))
    final = _scene(_book_tilted(tilt_deg))
    assert check_task(crit, final, final).success is met


def test_a_tilted_pose_keeps_its_class_check():
    """'place it at a tilt' names no angle: the pose class stays the criterion."""
    crit = espire_criteria(_place_task([{"type": "pose", "object": "book_a", "pose": "tilted"}]))
    assert {"type": "pose", "object": "book_a", "pose": "tilted"} in crit["check"]
    assert check_task(crit, _scene(_book_tilted(45.0)), None).success
    assert not check_task(crit, _scene(_book_tilted(0.0)), None).success


def _book_on_a_corner(lean_deg: float) -> SceneObject:
    """A standing book turned `lean_deg` within its cover's plane (about its thin axis, which
    stays horizontal): it stands on a corner, not on an edge."""
    a = math.radians(lean_deg)
    turn = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    return dataclasses.replace(_book_tilted(0.0), rotation=turn @ _book_tilted(0.0).rotation)


@pytest.mark.parametrize("lean_deg, met", [(0.0, True), (8.0, True), (15.0, False), (30.0, False),
                                           (90.0, True)])
def test_a_book_leaning_within_its_covers_plane_is_tilted_by_that_lean(lean_deg, met):
    """ESPIRE A.2 measures a tilt between the up axis and the book's upright axis: a book on a
    corner, 15 degrees off its edge, is as tilted as one leaning back 15 degrees (the thin axis
    alone called it 0). Standing on its other edge (90: the long side down) it stands upright."""
    final = _scene(_book_on_a_corner(lean_deg))
    assert rel.book_tilt_deg(final.objects[0]) == pytest.approx(min(lean_deg, 90.0 - lean_deg), abs=1e-6)
    assert check_task(espire_criteria(_place_task()), final, final).success is met


@pytest.mark.parametrize("deg", [0.0, 15.0, 45.0, 75.0, 90.0])
def test_a_book_leaning_back_keeps_its_tilt(deg):
    assert rel.book_tilt_deg(_book_tilted(deg)) == pytest.approx(deg, abs=1e-6)
