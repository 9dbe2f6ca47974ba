"""'less than / more than / between ... cm' have one definition (relations.in_distance_band): the task
generator's answer set, the checker that tests it and the planner on an exact scene agree at the
band's ends (the checker judges a pick by the generator's answer set: each generated band task is
judged with every book in the gripper) ("less than v" and "more than v" leave v itself out, "v to w" keeps both ends).
Session 34's review: the planner had read "less than v" as "at most v" while the generator's was strict."""
import dataclasses

import numpy as np
import pytest

from spatial_manip.errors import TargetNotFoundError
from spatial_manip.geometry import relations as rel
from spatial_manip.reasoning.examples import table_scene
from spatial_manip.reasoning.program import execute
from spatial_manip.sim.checker import check_task
from spatial_manip.sim.families import FAMILIES, _threshold_test
from spatial_manip.sim.tasks import evaluate


def _held(scene, book_id):
    """The scene after a pick of `book_id`: held and 10 cm above where it lay."""
    return scene.with_objects(dataclasses.replace(o, held=True, center=o.center + [0.0, 0.0, 0.1])
                              if o.id == book_id else o for o in scene.objects)


def test_the_band_leaves_out_the_stated_value_of_less_than_and_more_than_and_keeps_a_ranges_ends():
    assert not rel.in_distance_band(0.30, "LessThan", 0.30) and rel.in_distance_band(0.2999, "LessThan", 0.30)
    assert not rel.in_distance_band(0.30, "MoreThan", 0.30) and rel.in_distance_band(0.3001, "MoreThan", 0.30)
    assert rel.in_distance_band(0.30, "Range", 0.30, 0.55) and rel.in_distance_band(0.55, "Range", 0.30, 0.55)
    assert not rel.in_distance_band((0.29, 0.40), "Range", 0.30, 0.55), "all of an interval must lie inside"
    assert rel.in_distance_band((0.0, 0.1), "LessThan", 0.30), "touching is less than any distance"
    with pytest.raises(ValueError):
        rel.distance_band("Range", 0.3)


@pytest.mark.parametrize("word", ["LessThan", "MoreThan", "Range"])
def test_generator_checker_and_planner_agree_on_a_book_exactly_at_the_stated_distance(word):
    scene = table_scene()
    books = scene.by_category("book")
    dist = {b.id: rel.distance(b, scene.robot) for b in books}
    ordered = sorted(dist, key=dist.get)
    for at in ordered:                                  # each book in turn stands exactly on the boundary
        v = dist[at]
        w = max(dist.values()) + 0.1 if word == "Range" else None
        args = f"{v!r}, {w!r}" if w is not None else f"{v!r}"
        test = _threshold_test(word, v, w)
        answer = {b for b in ordered if test(dist[b])}
        assert answer == {b for b in ordered if rel.in_distance_band(dist[b], word, v, w)}
        assert (at in answer) == (word == "Range"), (word, at, answer)
        try:
            planned = set(execute(f"pick(unique(filterDist${word}({args}, filterBook(TABLE), robot)))", scene).targets)
        except TargetNotFoundError:                     # an empty answer set
            planned = set()
        assert planned == answer, (word, v, planned, answer)


def _band(program) -> tuple[str, float, float | None, str]:
    """The word, stated values and reference of a task's filterDist node."""
    body = program.args[0].args[0]                      # pick(unique(filterDist$Word(v[, w], source, ref)))
    assert body.op == "filterDist", program
    values = [a for a in body.args if isinstance(a, float)]
    return body.rel, values[0], (values[1] if len(values) > 1 else None), body.args[-1].name


@pytest.mark.parametrize("word", ["LessThan", "MoreThan", "Range"])
def test_the_checker_accepts_a_generated_band_task_for_exactly_the_books_the_band_holds(word):
    """Each task the generator poses (its answer set and checks, tasks.evaluate) judged by the
    checker with each book of the scene in the gripper in turn: success for exactly the books
    whose distance in_distance_band puts inside, and those are what the planner takes."""
    scene = table_scene()
    books = scene.by_category("book")
    family = next(f for f in FAMILIES if f.key == f"pick:Distance/{word}")
    judged = 0
    for variant in family.variants(scene):
        task = evaluate(family, variant, scene)
        if task is None:
            continue
        band, v, w, ref_name = _band(variant.program)
        ref = scene.get(ref_name) if ref_name not in ("viewer", "robot") else getattr(scene, ref_name)
        inside = {b.id for b in books if rel.in_distance_band(rel.distance(b, ref), band, v, w)}
        accepted = {b.id for b in books if check_task(task, _held(scene, b.id), scene).success}
        assert accepted == inside and 0 < len(inside) < len(books), (str(variant.program), accepted, inside)
        assert set(execute(variant.program, scene).targets) == inside, str(variant.program)
        judged += 1
    assert judged >= 3, f"the generator posed only {judged} {word} tasks on the table scene"


def test_within_and_farther_than_contradict_at_one_value():
    assert not any(rel.in_distance_band(d, "LessThan", 0.3) and rel.in_distance_band(d, "MoreThan", 0.3)
                   for d in np.linspace(0.0, 1.0, 1001))
