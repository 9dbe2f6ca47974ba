"""The `everyday3` held-out set of the paraphrase evaluation (issue 38) is well formed: at least 60
distinct instructions, every expected id names an object or slot of its scene, and the hand-worked
geometry its answers rest on holds."""
from __future__ import annotations

import pytest

from spatial_manip.bench import paraphrase_eval as pe
from spatial_manip.bench.paraphrase_everyday3 import EVERYDAY3_AFTER, EVERYDAY3_CASES, EVERYDAY3_SCENES
from spatial_manip.geometry import relations as rel


def test_the_set_is_large_and_its_instructions_distinct():
    texts = [(scene, text) for scene, text, _ in EVERYDAY3_CASES]
    assert len(EVERYDAY3_CASES) >= 60
    assert len(set(texts)) == len(texts)


@pytest.mark.parametrize("scene_key", sorted(EVERYDAY3_SCENES))
def test_expected_answers_name_things_in_their_scene(scene_key):
    scene = EVERYDAY3_SCENES[scene_key]()
    ids = {o.id for o in scene.objects} | {r.id for r in scene.regions}
    for key, text, exp in EVERYDAY3_CASES + EVERYDAY3_AFTER:
        if key != scene_key:
            continue
        named = set(exp.pick or ()) | set(exp.place or ())
        assert named <= ids, f"{text!r} expects {sorted(named - ids)}, not in scene {key!r}"
        assert exp.refuse in (None, pe.AMBIGUOUS, pe.NOT_FOUND, pe.NOT_UNDERSTOOD, pe.UNREACHABLE)


def test_the_next_to_pairs_are_the_hand_worked_ones():
    """Only apple-mugD and bowl-box stand within next-to distance on the counter, bookR-pen on the desk."""
    for key, expected in (("counter", {("apple", "mugD"), ("bowl", "box")}), ("desk3", {("bookR", "pen")})):
        objs = [o for o in EVERYDAY3_SCENES[key]().objects if o.category != "table"]
        pairs = {tuple(sorted((a.id, b.id))) for i, a in enumerate(objs) for b in objs[i + 1:] if rel.is_next_to(a, b)}
        assert pairs == expected, key


def test_every_shelf_object_stands_in_its_slot():
    scene = EVERYDAY3_SCENES["shelf3"]()
    slots = {r.id: r for r in scene.regions}
    where = {"jar": "r1c1", "mug": "r1c4", "cereal": "r2c2", "bottle": "r2c4"}
    for o in scene.objects:
        if o.id in where:
            assert rel.point_in_box(o.center, slots[where[o.id]]), o.id


@pytest.mark.parametrize("cases", [EVERYDAY3_CASES, EVERYDAY3_AFTER], ids=["everyday3", "everyday3_after"])
def test_no_wrong_plans_on_the_everyday3_sets(cases):
    summary, rows = pe.evaluate(cases)
    wrong = pe.wrong_plans(rows)
    assert summary["instructions"] == len(cases)
    assert not wrong


def test_the_after_set_is_new():
    assert not {t for _, t, _ in EVERYDAY3_AFTER} & {t for _, t, _ in EVERYDAY3_CASES}
