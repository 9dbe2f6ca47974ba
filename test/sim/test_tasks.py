"""Task generator: every family generates, answers agree with the executor and relations.py,
determinism, balance, and the CLI's files."""
import json
from collections import Counter

import pytest

from spatial_manip.geometry import relations as rel
from spatial_manip.reasoning import program as P
from spatial_manip.scene import Scene
from spatial_manip.sim import families as fam
from spatial_manip.sim import tasks
from spatial_manip.sim.checker import check_task
from pools import pools_built_once


# the `big` pool's setup is charged to the first test that uses it: 188 s at load 10, and past the
# suite's 300 s at load 20-28 (session 26)
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def big():
    # DirectLeft/DirectRight place tasks are feasible in ~5% of shelf scenes (few slots are
    # reachable), so the shelf pool must be large enough to contain some (48). The tabletop and
    # metric kinds' 9 scenes still give every family and a balanced count: each pool scene builds
    # and renders a MuJoCo world, and 48 of every kind took this fixture 296 s at load 10 (16 of
    # them 74 s of CPU, 9 of them 58 s, session 39). The generator is given these pools instead
    # of building the 16 per kind it asks for
    with pools_built_once(sizes={"shelf": 48, "metric": 9, "tabletop": 9}):
        gen = tasks.Generator("all", 200, seed=11, pool_size=16)
    return gen, list(gen.generate())


def test_every_family_generates(big):
    gen, items = big
    got = Counter(t.family_key for t, _ in items)
    missing = [f.key for f in fam.FAMILIES if f.key not in got]
    assert not missing, f"families without a task: {missing}"
    # Table 10 coverage: every aspect for pick and place, three frames, near and distant references
    assert {t.aspect for t, _ in items if t.action == "pick"} == {"Attribute", "Distance", "Relationship", "Orientation"}
    assert {t.frame for t, _ in items} >= {"relative", "intrinsic", "absolute"}
    kinds = {t.reference_kind for t, _ in items}
    assert {"near", "distant", "viewer", "robot"} <= kinds
    assert {True, False} <= {t.extra.get("oriented_reference") for t, _ in items}


def test_answers_match_execution_and_are_proper_subsets(big):
    _, items = big
    for t, scene in items:
        res = P.execute(t.program, scene)
        assert res.targets == t.answer or t.family.startswith("Metric/"), t.id
        if t.action == "pick":
            books = [o.id for o in scene.objects if o.category == "book" and not o.held]
            assert t.answer and set(t.answer) < set(books), t.id
        elif not t.family.startswith("Metric/"):
            assert t.answer and set(t.answer) <= {r.id for r in scene.regions}
            assert tasks.feasible_slots(scene, t.answer, "flat" if "lying flat" in t.instruction else "upright") \
                or tasks.feasible_slots(scene, t.answer, "upright"), t.id
        for i in t.answer:
            scene.get(i)          # ids in the answer exist in the scene


def test_answers_agree_with_relations_directly(big):
    """Spot-check families against relations.py without the executor."""
    _, items = big
    seen = set()
    for t, scene in items:
        books = [o for o in scene.objects if o.category == "book" and not o.held]
        if t.family_key == "pick:Orientation/Flat":
            assert t.answer == [o.id for o in books if rel.book_pose_class(o) == "flat"]
        elif t.family_key == "pick:Relationship/LeftMost" and t.reference == "viewer":
            axes = rel.frame_axes("relative", viewer=scene.viewer)
            assert t.answer == [o.id for o in rel.leftmost(books, axes)]
        elif t.family_key == "pick:Distance/Closest" and t.reference == "robot":
            assert t.answer == [o.id for o in rel.closest(books, scene.robot)]
        else:
            continue
        seen.add(t.family_key)
    assert seen, "no task of the spot-checked families"


def test_balanced_counts(big):
    gen, items = big
    per_family = Counter(t.family_key for t, _ in items)
    n_t = -(-200 // len(gen.families))          # Algorithm 1's per-family quota N_t
    assert max(per_family.values()) <= n_t and min(per_family.values()) >= 1
    assert sum(v >= n_t - 2 for v in per_family.values()) >= 0.8 * len(per_family)
    levels = Counter(t.difficulty for t, _ in items)
    assert set(levels) == set(tasks.LEVELS)
    assert max(levels.values()) <= 2 * min(levels.values())


def test_deterministic_for_a_seed():
    # 2-scene pools: building a pool scene's MuJoCo world and render is nearly all the time (6.5 s
    # of CPU a generation with 3 scenes per kind, 3.3 s with 2; still 10 tasks of 6 families)
    a = tasks.generate("smoke", 10, seed=5, pool_size=2)
    b = tasks.generate("smoke", 10, seed=5, pool_size=2)
    assert [t.to_dict() for t, _ in a] == [t.to_dict() for t, _ in b]
    assert [s.to_dict() for _, s in a] == [s.to_dict() for _, s in b]
    c = tasks.generate("smoke", 10, seed=6, pool_size=2)
    assert [t.to_dict() for t, _ in a] != [t.to_dict() for t, _ in c]


def test_unknown_suite_and_bad_count():
    with pytest.raises(ValueError, match="unknown suite"):
        tasks.Generator("nope", 5, 0)
    with pytest.raises(ValueError):
        tasks.Generator("pick", 0, 0)


def test_cli_writes_tasks_and_scenes(tmp_path):
    from spatial_manip.cli import main
    assert main(["tasks", "--suite", "smoke", "--count", "8", "--seed", "2", "--out", str(tmp_path), "--pool", "2"]) in (0, 1)
    lines = (tmp_path / "tasks.jsonl").read_text().splitlines()
    assert len(lines) == 8
    for (t, path) in tasks.load(tmp_path / "tasks.jsonl"):
        scene = Scene.load(path)
        assert set(t.answer) <= set(scene.ids())
        assert json.loads(json.dumps(t.to_dict()))["id"] == t.id
        # the initial state is not already a success (except nothing: picks start with nothing held)
        assert not check_task(t.to_dict(), scene, scene).success
