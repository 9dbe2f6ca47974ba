"""The trace viewer in a real browser: Debian's headless Chromium driven by Playwright.

A small benchmark output directory is written by the code a benchmark run uses (task
generation, the pipeline's Trace with PNG images rendered by the MuJoCo camera, the worker's
episode records judged by the success checker, and `spatial-manip bench` resuming a finished
run to write results.json, report.md and index.html). The pages are then opened from file://
URLs: the index lists the episodes, its filters hide the right rows, a row opens its trace page,
every image on a trace page loads, and a failed episode's page names its failure category."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (scripts/setup.sh installs it from requirements.txt)")
CHROMIUM = os.environ.get("SM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

from spatial_manip.bench import runner  # noqa: E402
from spatial_manip.bench.worker import episode_record  # noqa: E402
from spatial_manip.bringup.goal_client import GoalReport  # noqa: E402
from spatial_manip.errors import GraspFailedError  # noqa: E402
from spatial_manip.transforms import make_transform  # noqa: E402
from spatial_manip.grasping.grasp_group import GraspGroup  # noqa: E402
from spatial_manip.pipeline import (Decision, Grasped, InstructionPipeline, Perceived, Placed, SetDown,  # noqa: E402
                                    Verified, validate_goal)
from spatial_manip.reasoning.orientation import draw_arrows  # noqa: E402
from spatial_manip.scene import Scene  # noqa: E402
from spatial_manip.sim import tasks as T  # noqa: E402
from spatial_manip.sim.checker import check_task  # noqa: E402

pytestmark = pytest.mark.slow   # about 6 s: four MuJoCo renders and a browser start
SUITE, EPISODES, SEED = "smoke", 4, 0


class ScriptedAgent:
    """A unit-test agent: the observation is a real MuJoCo render of the task's scene, the scene
    is the task's ground truth, and how the goal ends is scripted per episode."""

    def __init__(self, task: dict, scene: Scene, fail: str = ""):
        self.task, self.scene, self.fail = task, scene, fail

    def observe(self, cancel):
        from spatial_manip.sim.world import SimConfig, SimWorld

        world = SimWorld(self.scene, config=SimConfig())
        try:
            return world.render()
        finally:
            world.close()

    def perceive(self, obs):
        return Perceived(obs, self.scene)

    def reason(self, seen, goal, reflection, trace):
        scene, obs = seen.scene, seen.observation
        t = self.task
        place_T = None
        if t["place_pose"]:
            from spatial_manip.transforms import quat_to_matrix

            place_T = make_transform(quat_to_matrix(t["place_pose"]["orientation"]), t["place_pose"]["position"])
        pick_id = t["check"][0]["ids"][0] if t["action"] == "pick" else None
        anchor = place_T[:3, 3] if place_T is not None else scene.get(pick_id or t["held"]).center
        overlay = draw_arrows(obs.rgb, obs.T_base_cam, obs.intrinsics, anchor, list(np.eye(3)), 0.1)
        trace.image("target", overlay, "the chosen target with the base axes")
        return Decision(t["action"], (pick_id or t["held"],), pick_id=pick_id, place_pose=place_T,
                        program=t["program"])

    def clear_view(self, cancel):
        pass

    def check_place(self, decision, seen, cancel=None):
        pass

    def propose_grasps(self, decision, seen):
        return GraspGroup.from_parts(scores=[0.8], widths=0.03, heights=0.02, depths=0.0, rotations=np.eye(3),
                                     translations=np.zeros(3), frame_id="base")

    def pick(self, grasps, decision, cancel):
        if self.fail == "grasp":
            raise GraspFailedError(f"the fingers closed on nothing at {decision.pick_id}")
        return Grasped(object_id=decision.pick_id, tcp_pose=np.eye(4), score=0.8, width=0.03)

    def set_down(self, decision, grasped, cancel):
        return SetDown(object_id=decision.target_ids[0], object_pose=decision.place_pose,
                       tcp_pose=decision.place_pose, size=None)

    def place(self, decision, set_down, cancel):
        return Placed(set_down=set_down)

    def verify_on_frame(self, placed, obs):
        return None          # never confirmed on the frame alone: the full look and verify

    def verify(self, decision, placed, goal, after):
        if self.fail == "verify":
            return Verified(False, "distance", "the book stands 31 cm from the reference, not 20 cm")
        return Verified(True, "", "looks right")

    def held_id(self):
        return None

    def stop_motion(self):
        pass


def _final_scene(task: dict, scene: Scene, picked: bool) -> Scene:
    """The state the checker judges: the answer book lifted in the gripper, or nothing moved."""
    if not picked:
        return scene
    want = task["check"][0]["ids"][0]
    return scene.with_objects(replace(o, held=True, center=o.center + [0, 0, 0.12]) if o.id == want else o
                              for o in scene.objects)


def _episode(task: dict, out: Path, fail: str, picked: bool) -> dict:
    from spatial_manip_interfaces.action import ExecuteInstruction
    from spatial_manip_interfaces.srv import CheckSuccess

    scene = Scene.load(task["scene_path"])
    feedback = []
    pipe = InstructionPipeline(ScriptedAgent(task, scene, fail), trace_dir=str(out / "traces" / task["id"]),
                               feedback=lambda st, d, p, a: feedback.append(
                                   ExecuteInstruction.Feedback(stage=st.value, detail=d, progress=p, attempt=a)))
    o = pipe.run(validate_goal(task["instruction"], "auto"), threading.Event())
    result = ExecuteInstruction.Result(success=o.success, error_code=o.error_code, message=o.message,
                                       target_ids=o.target_ids, trace_path=o.trace_path, attempts=o.attempts)
    report = GoalReport(True, "succeeded" if o.success else "aborted", result, feedback)
    final = _final_scene(task, scene, picked)
    verdict = check_task(task, final, scene)
    check = CheckSuccess.Response(success=verdict.success, failure_category=verdict.failure_category or "",
                                  message=verdict.message, final_state_json=json.dumps(final.to_dict()))
    return episode_record(task, report, check, {"segmenter": "ground_truth", "planner": "scripted"}, 1.0)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("bench") / "run"
    (out / "episodes").mkdir(parents=True)
    # two scenes per kind: the same four tasks (two picks, two places) as the bench's default pool of
    # nine, which costs a minute of MuJoCo builds; prepare_tasks then reuses them as a resumed run does
    T.write(out / "tasks", T.generate(SUITE, EPISODES, SEED, pool_size=2))
    tasks = runner.prepare_tasks(SUITE, EPISODES, SEED, out)
    # how each generated task ends: (scripted failure in the pipeline, answer book lifted at the end)
    script = {"pick": [("", True), ("grasp", False)], "place": [("", False), ("verify", False)]}
    records = []
    for t in tasks:
        fail, picked = script[t["action"]].pop(0)
        records.append(_episode(t, out, fail, picked))
    (out / "episodes" / "w0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    parser = argparse.ArgumentParser()
    runner.add_arguments(parser)       # every option at its default, as the command line gives it
    args = parser.parse_args(["--suite", SUITE, "--episodes", str(EPISODES), "--seed", str(SEED), "--workers", "1",
                              "--out", str(out), "--segmenter", "ground_truth", "--backend", "local"])
    assert runner.run(args) == 0   # everything is done: the run only writes its outputs
    records = json.loads((out / "results.json").read_text())
    assert {r["success"] for r in records} == {True, False}
    assert len({r["failure_category"] for r in records if not r["success"]}) >= 2
    return out, records


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context()
    pg = ctx.new_page()
    pg.set_default_timeout(5000)   # local files: anything slower is a failure, not a wait
    pg.console_errors = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    yield pg
    ctx.close()


def _visible_ids(page) -> list[str]:
    return page.eval_on_selector_all(
        "#episodes tr[data-family]", "rs => rs.filter(r => r.offsetParent !== null).map(r => r.cells[0].textContent)")


def test_index_lists_episodes_and_filters(bench_dir, page):
    out, records = bench_dir
    page.goto((out / "index.html").as_uri())
    ids = [r["task_id"] for r in records]
    assert _visible_ids(page) == ids
    assert page.text_content("#count") == str(len(ids))

    page.select_option("#success", "no")
    failed = [r["task_id"] for r in records if not r["success"]]
    assert _visible_ids(page) == failed and page.text_content("#count") == str(len(failed))
    page.select_option("#success", "yes")
    assert _visible_ids(page) == [r["task_id"] for r in records if r["success"]]
    page.select_option("#success", "")

    fam = records[1]["family"]
    page.select_option("#family", fam)
    assert _visible_ids(page) == [r["task_id"] for r in records if r["family"] == fam]
    page.select_option("#family", "")

    for cat in {r["failure_category"] for r in records if not r["success"]}:
        page.select_option("#category", cat)
        assert _visible_ids(page) == [r["task_id"] for r in records if r["failure_category"] == cat]
    page.select_option("#category", "")
    assert _visible_ids(page) == ids
    assert page.console_errors == []


def test_each_trace_page_opens_from_the_index_with_its_images_and_outcome(bench_dir, page):
    out, records = bench_dir
    tasks = {t["id"]: t for t in runner.prepare_tasks(SUITE, EPISODES, SEED, out)}
    for r in records:
        page.goto((out / "index.html").as_uri())
        page.click(f"#episodes tr:has(td:text-is('{r['task_id']}')) a")
        page.wait_for_load_state("load")
        assert page.url.endswith("/index.html") and "/traces/" in page.url
        assert page.text_content("h1") == r["instruction"]
        imgs = page.eval_on_selector_all("img", "is => is.map(i => [i.getAttribute('alt'), i.complete, i.naturalWidth])")
        # the observation, the test's arrows, the decision overlay and, after a pick, the grasp
        # overlay; after a place at a pose, the new look at where it was set down
        placed_at_pose = r["action"] == "place" and tasks[r["task_id"]]["place_pose"]
        want = ["observation", "target", "overlay_decision"] + (["overlay_grasp"] if r["action"] == "pick" else []) \
            + (["overlay_after"] if placed_at_pose else [])
        assert [alt for alt, _, _ in imgs] == want, (r["action"], r["failure_category"], imgs)
        assert all(done and width > 0 for _, done, width in imgs), imgs
        episode = page.text_content("#episode")
        if r["success"]:
            assert "success" in episode.lower()
        else:
            assert r["failure_category"] in episode, (r["failure_category"], episode)
            assert "fail" in page.get_attribute("#episode", "class")
        assert page.console_errors == []
