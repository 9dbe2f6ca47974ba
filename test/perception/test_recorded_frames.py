"""Perception on recorded frames (issue 37): each folder under frames/ is a benchmark task's first
look, written by `python -m spatial_manip.bench.record_frames` (its frame.json says why it was kept
and the command that recorded it). The agent's perceive stage runs on it as reference_bench runs a
live task, with the catalogue the planner was told, and is scored against the recorded truth:
every object the task needs named at its place (`expect.named`), those perception leaves between
candidates named at their place once the instruction's words choose (`expect.named_by_words`,
labelling.name_from_words, as the agent does before it plans; `expect.named_by_words_within_m`:
within that distance of their centre; `expect.not_misnamed_by_words`: nothing named after them
away from them once the words choose; `expect.also_named`: objects the task does not need named
at their place, whose name kept them from rivalling a needed one), and no name given where no
such object stands beyond those frame.json lists as known (`expect.known_wrong_names`, with
why): a new wrong name fails, and a fixed one is to be struck from the list. `expect.plans_answer`:
the agent's reasoning on the look then takes the task's answer (reference_bench.plan_look), where
a rule of the planner's had refused it."""
from pathlib import Path

import numpy as np
import pytest

from spatial_manip.bench import record_frames
from spatial_manip.bench.reference_bench import (GATE_M, SIZE_GATE, FirstLook, TaskResult, perceive_look, plan_look,
                                                 score_perception)
from spatial_manip.paths import config_dir
from spatial_manip.perception import load_segmenter_config
from spatial_manip.perception.labelling import name_from_words

FRAMES = sorted(p for p in (Path(__file__).parent / "frames").glob("*") if (p / "frame.json").is_file())


@pytest.fixture(scope="module")
def classical_config():
    return load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")[1]


@pytest.mark.slow
@pytest.mark.parametrize("folder", FRAMES, ids=[p.name for p in FRAMES])
def test_a_recorded_frame_is_named_as_its_truth_says(folder, classical_config):
    look, meta = record_frames.load(folder)
    expect = meta.get("expect", {})
    res = TaskResult(look.task.id, look.task.instruction)
    agent, seen = perceive_look(look, classical_config, res)
    needed = expect.get("named", look.refs)
    assert {gid: res.refs[gid] for gid in needed} == dict.fromkeys(needed, "ok"), meta["why"]
    known = set(expect.get("known_wrong_names", ()))
    assert set(res.wrong_names) <= known, f"new wrong names {sorted(set(res.wrong_names) - known)}"
    by_words = expect.get("named_by_words", [])
    if by_words:
        # unnamed near it, or nowhere near: a piece's own box may lie off the object's centre, and
        # the words' name brings the catalogue box posed for it (catalogue_fit._pose_tied_candidates)
        left = {gid: res.refs[gid] for gid in by_words if res.refs[gid] not in ("ok", "label:object", "missing")}
        assert not left, f"perception alone names wrongly or loses what the words were to name: {left}"
        words = TaskResult(look.task.id, look.task.instruction)
        score_perception(words, name_from_words(seen.scene, look.task.instruction)[0], look)
        assert {gid: words.refs[gid] for gid in by_words} == dict.fromkeys(by_words, "ok"), meta["why"]
    for gid in expect.get("not_misnamed_by_words", []):
        # the words name nothing after it away from it (a tie they may not settle: it is not found)
        g = look.truth.get(gid)
        gate = max(GATE_M, SIZE_GATE * float(np.max(g.size)))
        named = name_from_words(seen.scene, look.task.instruction)[0]
        far = [float(np.linalg.norm(o.center - g.center)) for o in named.objects if o.label == g.label]
        assert all(d <= gate for d in far), (gid, far, meta["why"])
    for gid in expect.get("also_named", []):
        g = look.truth.get(gid)
        gate = max(GATE_M, SIZE_GATE * float(np.max(g.size)))
        at = [float(np.linalg.norm(o.center - g.center)) for o in seen.scene.objects if o.label == g.label]
        assert at and min(at) <= gate, (gid, at, meta["why"])
    near_words = expect.get("named_by_words_within_m", {})
    if near_words:
        # named by the words with its piece's own box (a near object's catalogue box is not posed
        # for them): within the given distance of the truth's centre, where the reference bench's
        # 5 cm gate may not reach
        named = name_from_words(seen.scene, look.task.instruction)[0]
        for gid, within_m in near_words.items():
            g = look.truth.get(gid)
            d = [float(np.linalg.norm(o.center - g.center)) for o in named.objects if o.label == g.label]
            assert d and min(d) <= within_m, (gid, d, meta["why"])
    if expect.get("plans_answer"):
        plan_look(agent, seen, look, res)
        assert res.correct, (res.error, meta["why"])


def test_a_frame_reads_back_as_it_was_recorded(tmp_path):
    from types import SimpleNamespace

    from spatial_manip.perception.synthetic import default_objects, render_tabletop

    obs, scene = render_tabletop(default_objects())
    task = SimpleNamespace(id="pick-0-00000", suite="pick", action="pick", instruction="take the red book",
                           program="pick(x)", answer=["x"], scene_seed=3)
    look = FirstLook(task, obs, scene, scene, np.eye(4), np.zeros(6), [scene.objects[0].id], {scene.objects[0].id: 0.5})
    folder = record_frames.record(look, tmp_path, sensing_label="ideal", why="a test", command="cmd")
    back, meta = record_frames.load(folder)
    assert folder.name == "pick-0-00000" and meta["why"] == "a test" and meta["sensing"] == "ideal"
    assert np.array_equal(back.obs.rgb, obs.rgb) and np.allclose(back.obs.depth_m, obs.depth_m)
    assert np.allclose(back.obs.T_base_cam, obs.T_base_cam) and back.task.instruction == "take the red book"
    assert back.refs == look.refs and back.visible == look.visible
    assert [o.id for o in back.truth.objects] == [o.id for o in scene.objects]
