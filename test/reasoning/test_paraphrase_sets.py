"""Every held-out set of the paraphrase evaluation (issue 38) is well formed and gets no wrong plan:
each is large enough and its instructions distinct, every expected id names an object or slot of its
scene, the set written after the tuning shares no instruction with the one before it, and the
embedded planner returns no plan that would move the arm wrongly. Checks of one set's hand-worked
geometry stay in that set's own test file."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from spatial_manip.bench import paraphrase_eval as pe
from spatial_manip.bench.paraphrase_everyday import EVERYDAY_AFTER, EVERYDAY_CASES, everyday_set
from spatial_manip.bench.paraphrase_everyday3 import EVERYDAY3_AFTER, EVERYDAY3_CASES, EVERYDAY3_SCENES
from spatial_manip.bench.paraphrase_everyday4 import EVERYDAY4_AFTER, EVERYDAY4_CASES, EVERYDAY4_SCENES
from spatial_manip.bench.paraphrase_everyday5 import EVERYDAY5_CASES, EVERYDAY5_SCENES
from spatial_manip.bench.paraphrase_everyday6 import EVERYDAY6_AFTER, EVERYDAY6_CASES, EVERYDAY6_SCENES
from spatial_manip.bench.paraphrase_everyday7 import EVERYDAY7_CASES, EVERYDAY7_SCENES
from spatial_manip.bench.paraphrase_everyday8 import EVERYDAY8_CASES, EVERYDAY8_SCENES
from spatial_manip.bench.paraphrase_everyday9 import EVERYDAY9_CASES, EVERYDAY9_SCENES
from spatial_manip.bench.paraphrase_everyday10 import EVERYDAY10_CASES, EVERYDAY10_SCENES
from spatial_manip.bench.paraphrase_everyday11 import EVERYDAY11_CASES, EVERYDAY11_SCENES
from spatial_manip.bench.paraphrase_objects import OBJECT_CASES, OBJECT_SCENES


@dataclass
class HeldOutSet:
    cases: list
    scenes: dict
    min_size: int
    after: list = field(default_factory=list)      # written after the reader was tuned on `cases`
    min_understood: float = 0.0
    # instructions the planner got wrong when the set was measured, before the reader changed for
    # it: tolerated until the reader's fix, which should empty this; no other wrong plan is
    wrong_now: tuple = ()


SETS = {
    "everyday2": HeldOutSet(EVERYDAY_CASES, {**pe.SCENES, **everyday_set()[1]}, 40, EVERYDAY_AFTER),
    "everyday3": HeldOutSet(EVERYDAY3_CASES, EVERYDAY3_SCENES, 60, EVERYDAY3_AFTER),
    # 91.8% and 1 wrong plan before the reader changed for it (f5531a1); its after set 80.0% and 1
    # wrong plan before the reader changed for that (7023e6b)
    "everyday4": HeldOutSet(EVERYDAY4_CASES, EVERYDAY4_SCENES, 60, EVERYDAY4_AFTER, min_understood=0.97),
    # 95.3%, 0 wrong plans, written after the reader's changes for everyday4 and its after set (10d1359)
    "everyday5": HeldOutSet(EVERYDAY5_CASES, EVERYDAY5_SCENES, 40, min_understood=0.95),
    # 92.6% and 1 wrong plan, written without reading the reader, before it changed for it (94df053);
    # its after set 97.4%, 0 wrong plans before any change for it (at 79d56ab)
    "everyday6": HeldOutSet(EVERYDAY6_CASES, EVERYDAY6_SCENES, 60, EVERYDAY6_AFTER, min_understood=0.97),
    # 82.4%, 0 wrong plans, written without reading the reader, before any change for it (at 2b6d5f1):
    # 96.5% after the reader's change for it, 100% after session 30's (test_reader_rules_everyday7)
    "everyday7": HeldOutSet(EVERYDAY7_CASES, EVERYDAY7_SCENES, 80, min_understood=0.99),
    # 84.2% and 3 wrong plans, written without reading the reader, before any change for it (at
    # ba329c9); 100% after the reader's change for it, two answers re-keyed (its docstring)
    "everyday8": HeldOutSet(EVERYDAY8_CASES, EVERYDAY8_SCENES, 80, min_understood=0.97),
    # 89.1%, 0 wrong plans, written without reading the reader, before any change for it (at
    # 5d83c69): the 12 misses are listed in its docstring; 99.1% after the reader's change for it
    "everyday9": HeldOutSet(EVERYDAY9_CASES, EVERYDAY9_SCENES, 100, min_understood=0.97),
    # 82.6% and 2 wrong plans (the clementine not read as a fruit), written without reading the
    # reader, before any change for it (at 0e971af); 84.1% on the 113 left after two keys found
    # wrong by hand were taken out (its docstring); 100% after the reader's change for it
    "everyday10": HeldOutSet(EVERYDAY10_CASES, EVERYDAY10_SCENES, 110, min_understood=0.99),
    # 90.6% and 1 wrong plan ("the chocolate" took the bar, not AMBIGUOUS with the box of
    # chocolates), written without reading the reader, before any change for it (at e6daf9d); 100%
    # after the reader's change for it (test_reader_rules_everyday11)
    "everyday11": HeldOutSet(EVERYDAY11_CASES, EVERYDAY11_SCENES, 110, min_understood=0.99),
    # 96.8% at commit 364d02d; 21.9% before the planner read objects
    "objects": HeldOutSet(OBJECT_CASES, OBJECT_SCENES, 150, min_understood=0.95),
}
REFUSALS = (None, pe.AMBIGUOUS, pe.NOT_FOUND, pe.NOT_UNDERSTOOD, pe.UNREACHABLE)


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_set_is_large_and_its_instructions_distinct(name):
    s = SETS[name]
    texts = [(scene, text) for scene, text, _ in s.cases + s.after]
    assert len(s.cases) >= s.min_size
    assert len(set(texts)) == len(texts)
    assert not {t for _, t, _ in s.after} & {t for _, t, _ in s.cases}, "the after set repeats an instruction"


@pytest.mark.parametrize("name,scene_key", [(n, k) for n, s in sorted(SETS.items())
                                            for k in sorted({k for k, _, _ in s.cases + s.after})])
def test_expected_answers_name_things_in_their_scene(name, scene_key):
    s = SETS[name]
    scene = s.scenes[scene_key]()
    ids = {o.id for o in scene.objects} | {r.id for r in scene.regions}
    for key, text, exp in s.cases + s.after:
        if key != scene_key:
            continue
        named = set(exp.pick or ()) | set(exp.place or ())
        assert named <= ids, f"{text!r} expects {sorted(named - ids)}, not in scene {key!r}"
        assert exp.refuse in REFUSALS


@pytest.mark.parametrize("name,part", [(n, p) for n, s in sorted(SETS.items()) for p in ("cases", "after")
                                       if getattr(s, p)])
def test_no_wrong_plans(name, part):
    s = SETS[name]
    cases = getattr(s, part)
    summary, rows = pe.evaluate(cases)
    assert summary["instructions"] == len(cases)
    assert {text for _, text, _ in pe.wrong_plans(rows)} <= set(s.wrong_now)
    if part == "cases":
        assert summary["understood_rate"] >= s.min_understood


def test_every_scene_key_names_one_scene():
    """Cases name their scene by key: a key two sets share would run one set's instructions on the
    other's scene (everyday4's first "pantry" did, until renamed)."""
    builders = pe.scene_builders()
    for s in SETS.values():
        assert {k for k, _, _ in s.cases + s.after} <= set(builders)


def test_a_not_found_key_names_what_is_missing_and_a_refusal_for_another_reason_is_no_pass():
    """Every TARGET_NOT_FOUND key of every set names what its reason must say (the missing word,
    slot or rank): a refusal with the right code for another reason ("'third' is not in the scene"
    for "the thrid bottle from the left") is not a correct refusal."""
    keys = [(k, t, e) for cases in [pe.CASES, OBJECT_CASES] + [s.cases + s.after for s in SETS.values()]
            for k, t, e in cases if e is not None and e.refuse == pe.NOT_FOUND]
    assert keys and all(e.says for _, _, e in keys), [t for _, t, e in keys if not e.says]
    scene = pe.scene_builders()["kitchen"]()
    assert pe.run_case(scene, "take the thrid bottle from the left", pe.X(pe.NOT_FOUND, "RankLeftMost(3")).kind \
        == "refused_ok"
    out = pe.run_case(scene, "take the thrid bottle from the left", pe.X(pe.NOT_FOUND, "'third'"))
    assert out.kind == "refused" and "another reason" in out.detail, out
