"""`spatial-manip bench` end to end through the real ROS graph, once with local worker processes
and once as Ray tasks on a real Ray cluster on this machine (started here, joined by the CLI
through RAY_ADDRESS as a user's cluster would be): the same results for the same tasks. The task
list holds two generated smoke tasks and two that cannot run, each in a different worker, so each
backend also shows that a refused reset and an episode that raises are recorded as skipped and
that the worker goes on to its next task (issue 20)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import ray

from spatial_manip.sim import layouts, tasks

pytestmark = [pytest.mark.slow, pytest.mark.ros]

SEED = 3                           # smoke seed 3 starts with a pick and a shelf place
COLLIDING_SHELF_SEED = 4223554195  # a shelf whose initial arm pose collides (test/sim/test_tasks_reset.py)
# what does not depend on timing or on where the run happened: the tasks served, what was
# skipped and why, and the plan. Not "steps": how many grasps an episode tries depends on how many
# the grasp service's motion check gets through in its time budget. Not the execution's outcome
# either: which frame a goal perceives depends on timing (a look reused or taken again), and the
# grasps proposed on it can differ; a fresh clone at 6ab6801 saw smoke-2-00000's pick succeed
# locally and end GRASP_FAILED on Ray ('all 240 candidate grasps collide'). Both runs must still
# carry every episode to a result (asserted per record below).
DETERMINISTIC = ("task_id", "action", "family", "instruction", "skipped", "planner_targets", "answer",
                 "golden_steps")
# a goal's limit here bounds only a hang: an episode of these took up to 107 s at load 9-23 against the
# bench's default 120 s goal timeout, and a goal canceled at its limit records no plan (a pick with no
# planner_targets failed a loaded whole-suite run, session 41)
GOAL_TIMEOUT_S = 300


def _write_tasks(*outs):
    """tasks/tasks.jsonl as `bench` writes it (and reuses on a re-run) in each of `outs`: [pick,
    refused reset, missing scene file, place]. Two workers take [0, 2] and [1, 3]. Generated once
    for both runs, over 3-scene pools (the default 9 per kind built 27 MuJoCo scenes for two tasks)."""
    (pick, s_pick), (place, s_place) = tasks.generate("smoke", 2, SEED, pool_size=3)
    refused = tasks.Task.from_dict({**place.to_dict(), "id": f"smoke-{SEED}-refused", "scene": "scenes/refused.json"})
    missing = tasks.Task.from_dict({**pick.to_dict(), "id": f"smoke-{SEED}-missing", "scene": "scenes/missing.json"})
    colliding = layouts.sample_shelf(np.random.default_rng(COLLIDING_SHELF_SEED), layout="panels")
    for out in outs:
        tasks.write(out / "tasks", [(pick, s_pick), (refused, colliding), (missing, s_pick), (place, s_place)])
        (out / "tasks" / missing.scene).unlink()
    assert (pick.action, place.action, place.scene_kind) == ("pick", "place", "shelf")
    return [pick.id, refused.id, missing.id, place.id]


def _bench(out, *extra, env=None):
    cmd = [sys.executable, "-m", "spatial_manip.cli", "bench", "--suite", "smoke", "--episodes", "4", "--seed",
           str(SEED), "--workers", "2", "--segmenter", "ground_truth", "--sensing", "ideal", "--out", str(out),
           "--goal-timeout", str(GOAL_TIMEOUT_S), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=2 * GOAL_TIMEOUT_S, env={**os.environ, **(env or {})})
    assert p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return json.loads((out / "results.json").read_text()), p


def _ray_head(tries: int = 3):
    """ray.init, tried again when Ray's fixed 30 s wait for its raylet to register runs out: it did
    on a machine at load 26 (a fresh-clone run beside two benchmarks), before any test code ran."""
    for attempt in range(tries):
        try:
            return ray.init(num_cpus=2, include_dashboard=False)
        except Exception as e:
            ray.shutdown()
            if "timed out during startup" not in str(e) or attempt == tries - 1:
                raise


@pytest.fixture(scope="module")
def ray_cluster():
    """A Ray head on this machine (GCS, raylet, two CPUs); its address, as `ray start --head` prints."""
    ctx = _ray_head()
    try:
        yield ctx.address_info["gcs_address"]
    finally:
        ray.shutdown()


@pytest.mark.timeout(4 * GOAL_TIMEOUT_S + 300)   # two bench runs
def test_local_and_ray_backends_give_the_same_results_and_skip_what_cannot_run(tmp_path, ray_cluster):
    local_out, ray_out = tmp_path / "local", tmp_path / "ray"
    ids = _write_tasks(local_out, ray_out)
    local, _ = _bench(local_out)
    on_ray, p = _bench(ray_out, "--backend", "ray", env={"RAY_ADDRESS": ray_cluster})

    assert [r["task_id"] for r in local] == ids
    pick, refused, missing, place = local
    assert refused["skipped"] and refused["failure_category"] == "reset_failed"
    assert "initial arm pose collides" in refused["skip_reason"]
    assert missing["skipped"] and missing["failure_category"] == "episode_error"
    assert "FileNotFoundError" in missing["skip_reason"]
    for ran in (pick, place):       # the place ran after the refused reset, in the same worker
        assert not ran.get("skipped") and ran["trace_path"] and ran["final_state"] is not None
    assert pick["planner_targets"], pick
    report = (local_out / "report.md").read_text()
    assert "2 episodes (2 more skipped, listed below)" in report and f"- {refused['task_id']}: reset_failed" in report

    # the Ray run: episodes written by Ray tasks into the same layout, the same outcome per task
    assert sorted(f.name[:2] for f in (ray_out / "episodes").glob("*.jsonl")) == ["r0", "r1"]
    assert "Connecting to existing Ray cluster" in p.stderr + p.stdout
    assert [{k: r.get(k) for k in DETERMINISTIC} for r in on_ray] == [{k: r.get(k) for k in DETERMINISTIC} for r in local]
    for r in on_ray:
        assert r.get("skipped") or (r["trace_path"] and r["final_state"] is not None and "success" in r), r
