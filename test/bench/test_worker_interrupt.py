"""A goal interrupted by Ctrl-C or SIGTERM stops the run: it is not scored as a failed episode
(the soak used to carry on with its next goal after `kill`)."""
import types

import pytest

from spatial_manip.bench import worker


def test_an_interrupted_goal_stops_the_run_unscored(monkeypatch, tmp_path):
    scene = tmp_path / "scene.json"
    scene.write_text("{}")
    monkeypatch.setattr(worker, "wait_until_planner_free", lambda node, timeout: True)
    monkeypatch.setattr(worker, "wait_future", lambda future, timeout: types.SimpleNamespace(success=True))
    monkeypatch.setattr(worker, "send_goal", lambda node, text, **kw: types.SimpleNamespace(interrupted=True))
    reset = check = types.SimpleNamespace(call_async=lambda request: None)
    revision = types.SimpleNamespace(wait=lambda predicate, timeout_s: True)
    task = {"id": "pick-1-00000", "instruction": "take the leftmost book", "scene_path": str(scene)}
    with pytest.raises(KeyboardInterrupt, match="pick-1-00000"):
        worker._run_episode(None, task, reset, check, revision, {}, 5.0, 0.0)
