"""Two implementations of every task family, checked against each other.

The task generator (`sim/families.py`) computes each variant's answer with its own code from
`geometry.relations`; the planner parses the instruction and executes a program
(`reasoning/program.py`). Neither calls the other, so a bug in how either composes the words shows
here as a disagreement.

1. Every variant a family poses on the pool scenes: the program written into it as its label,
   executed by the planner, selects exactly the generator's answer (or, for a metric placement,
   the generator's set-down position).
2. Every generated task: the planner reads the instruction (through the JSON round trip a user's
   scene file takes) back into the task's answer. A task taking a reference with a front in the
   viewer's frame says so in its words: with none, the reference's own frame is meant
   (`relations.default_frame`, ESPIRE A.1), and the shelf's left/right/clock phrasings once left
   them out, which made such tasks unanswerable as worded.

Measured on the `all` suite (300 tasks) for seeds 0, 1 and 2: 37,314 variants and 900 tasks, no
disagreement.
"""
import numpy as np
import pytest

from spatial_manip.errors import TargetNotFoundError, UnreachableError
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.reasoning.program import execute
from spatial_manip.scene import Scene
from spatial_manip.sim import tasks as T

def _planner_reading(program, scene, metric: bool):
    """What the planner's executor makes of a program: its answer ids, or for a metric
    placement its set-down position; [] when nothing satisfies it, "no support" when the held
    book would not rest there (geometry.support)."""
    try:
        res = execute(program, scene)
    except TargetNotFoundError:
        return []
    except UnreachableError:
        return "no support"
    return list(res.place_pose.position) if metric else sorted(res.targets)


def _variant_disagreements(suite: str, count: int, seed: int) -> tuple[int, list]:
    """(variants checked, [(family, program, generator's answer, planner's answer)])."""
    gen = T.Generator(suite, count, seed)
    checked, wrong = 0, []
    for f in gen.families:
        metric = f.action == "metric"
        for pool_scene in gen.pools[T.SCENE_KIND[f.action]]:
            for v in f.variants(pool_scene.scene):
                got = _planner_reading(v.program, pool_scene.scene, metric)
                if metric and got == "no support":    # refused: the generator must not pose it as a task either
                    mine = "no support" if T.evaluate(f, v, pool_scene.scene) is None else "a task"
                    same = mine == got
                elif metric:          # the task stores its pose to 1 um
                    mine = v.metric["place_pose"]["position"]
                    same = len(got) == 3 and np.allclose(got, mine, atol=1e-5)
                else:
                    mine = sorted(v.answer)
                    same = got == mine
                checked += 1
                if not same:
                    wrong.append((f.key, str(v.program), mine, got))
    return checked, wrong


def test_smoke_variants_agree_with_the_executor():
    checked, wrong = _variant_disagreements("smoke", 12, seed=1)
    assert checked >= 150
    assert not wrong, wrong[:5]


@pytest.mark.slow
@pytest.mark.timeout(1200)      # minutes of pure Python, like the whole-suite case below
def test_all_variants_agree_with_the_executor():
    checked, wrong = _variant_disagreements("all", 90, seed=3)      # a 30-scene pool per kind
    assert checked > 3000
    assert not wrong, wrong[:5]


VIEWER_WORDS = ("your point of view", "as you see it")


def _check_suite(suite: str, count: int, seed: int) -> int:
    planner = make_planner("program")
    checked = 0
    for task, scene in T.generate(suite, count, seed):
        scene = Scene.from_dict(scene.to_dict())
        kind = "pick" if task.action == "pick" else "place"
        res = planner.plan(scene, task.instruction, task_kind=kind)
        viewer_frame_of_a_front = (task.frame == "relative" and task.extra.get("oriented_reference")
                                   and task.reference not in (None, "viewer", "robot"))
        # with no frame words a reference with a front means its own frame (ESPIRE A.1), so a task
        # meaning the viewer's must say so
        assert not viewer_frame_of_a_front or any(w in task.instruction for w in VIEWER_WORDS), task.instruction
        assert res.ok, (task.id, task.instruction, task.program, res.error)
        if task.action == "metric":
            assert res.program.split(", pose=")[0] == task.program.split(", pose=")[0], (task.instruction, res.program)
            assert np.allclose(res.place_pose.position, task.place_pose["position"], atol=0.02), task.instruction
        else:
            assert sorted(res.targets) == sorted(task.answer), (task.instruction, task.program, res.program)
        checked += 1
    return checked


def test_smoke_suite_equivalence():
    assert _check_suite("smoke", 12, seed=1) == 12


@pytest.mark.slow
@pytest.mark.timeout(1200)      # 218 s alone at load 10; it hit the default 300 s at load 15
def test_whole_suite_equivalence():
    assert _check_suite("all", 300, seed=0) == 300
