"""The `everyday2` set of the paraphrase evaluation (issue 38) is well formed: at least 40
distinct instructions, every expected id names an object or slot of its scene, and no plan is wrong."""
from __future__ import annotations

import pytest

from spatial_manip.bench import paraphrase_eval as pe
from spatial_manip.bench.paraphrase_everyday import EVERYDAY_AFTER, EVERYDAY_CASES, everyday_set

SCENES = everyday_set()[1]


def test_the_set_is_large_and_its_instructions_distinct():
    texts = [(scene, text) for scene, text, _ in EVERYDAY_CASES]
    assert len(EVERYDAY_CASES) >= 40
    assert len(set(texts)) == len(texts)


@pytest.mark.parametrize("scene_key", sorted({k for k, _, _ in EVERYDAY_CASES + EVERYDAY_AFTER}))
def test_expected_answers_name_things_in_their_scene(scene_key):
    builders = {**pe.SCENES, **SCENES}
    scene = builders[scene_key]()
    ids = {o.id for o in scene.objects} | {r.id for r in scene.regions}
    for key, text, exp in EVERYDAY_CASES + EVERYDAY_AFTER:
        if key != scene_key:
            continue
        named = set(exp.pick or ()) | set(exp.place or ())
        assert named <= ids, f"{text!r} expects {sorted(named - ids)}, not in scene {key!r}"
        assert exp.refuse in (None, pe.AMBIGUOUS, pe.NOT_FOUND, pe.NOT_UNDERSTOOD)


def test_the_mug_rests_on_the_yellow_book():
    objs = {o.id: o for o in SCENES["desk"]().objects}
    book_top = objs["bookC"].center[2] + 0.02
    assert objs["mug"].center[2] - objs["mug"].size[2] / 2 == pytest.approx(book_top)


@pytest.mark.parametrize("cases", [EVERYDAY_CASES, EVERYDAY_AFTER], ids=["everyday2", "everyday2_after"])
def test_no_wrong_plans_on_the_everyday_sets(cases):
    summary, rows = pe.evaluate(cases)
    wrong = pe.wrong_plans(rows)
    assert summary["instructions"] == len(cases)
    assert not wrong


def test_the_after_set_is_new():
    assert not {t for _, t, _ in EVERYDAY_AFTER} & {t for _, t, _ in EVERYDAY_CASES}
