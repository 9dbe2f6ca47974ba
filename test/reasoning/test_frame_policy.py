"""Frames said out loud, and no pose added (issue 20).

An alarm clock whose front perception could not observe (`has_front`, not oriented) sits at
(1.0, -0.3); the planner assumes its front faces the camera (world -x), so its own right is world
+y, the camera's left. The camera looks along +x, so the camera's right is world -y.
"""
import json
import subprocess
import sys

import numpy as np
import pytest

from spatial_manip.geometry import relations as rel
from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.planner import ProgramPlannerConfig, make_planner
from spatial_manip.scene import SceneObject

CLOCK_Y = -0.3


def _scene(observed_front=False, held_pose="upright"):
    s = ex.table_scene()
    # the large tilted book stands where these places go, and they would be refused (geometry.support)
    s.objects = [o for o in s.objects if o.id != "b_large_tilt"]
    clock = SceneObject("clock", "alarm clock", "reference", [1.0, CLOCK_Y, 0.81], [0.12, 0.06, 0.12],
                        ex.rot_z(180) if observed_front else np.eye(3), observed_front,
                        extra={} if observed_front else {"has_front": True})
    held = ex.book("held_book", 0.3, 0.0, held_pose)
    held.held = True
    s.objects += [clock, held]
    return s


def _plan(text, scene=None, **cfg):
    return make_planner("program", **cfg).plan(scene or _scene(), text)


def test_default_reads_the_assumed_front_as_espire_does_and_says_so():
    res = _plan("place it 10 cm to the right of the alarm clock")
    assert res.ok, res.error
    assert res.program.startswith("place(metric$Right(0.1, clock, clock)")
    assert res.place_pose.position[1] > CLOCK_Y + 0.1          # its own right: the camera's left
    assert any("assumed" in n and "camera's left" in n for n in res.notes), res.notes
    frames = [e for e in res.trace if e["event"] == "frame"]
    assert frames and frames[0]["frame"] == "intrinsic" and "unnamed_frame=intrinsic" in frames[0]["why"]
    assert "assumed" in res.message and res.to_json()["notes"] == res.notes


def test_viewer_policy_uses_the_camera_frame():
    res = _plan("place it 10 cm to the right of the alarm clock", unnamed_frame="viewer")
    assert res.ok and res.program.startswith("place(metric$Right(0.1, clock, viewer)")
    assert res.place_pose.position[1] < CLOCK_Y - 0.1          # the camera's right
    assert any("unnamed_frame=viewer" in n for n in res.notes), res.notes


def test_ask_policy_refuses_and_asks_which_side():
    res = _plan("place it 10 cm to the right of the alarm clock", unnamed_frame="ask")
    assert not res.ok and res.error["code"] == "AMBIGUOUS"
    msg = res.error["message"]
    assert "its own right" in msg and "camera's right" in msg and "from my point of view" in msg
    assert any(e["event"] == "error" for e in res.trace)


def test_ask_policy_plans_when_the_frame_is_named():
    res = _plan("place it 10 cm to the right of the alarm clock from my point of view", unnamed_frame="ask")
    assert res.ok and "clock, viewer)" in res.program
    assert res.notes == []                     # a frame the user named needs no note


def test_ask_policy_plans_front_where_both_readings_agree():
    res = _plan("place it 10 cm in front of the alarm clock", unnamed_frame="ask")
    assert res.ok and res.place_pose.position[0] < 1.0 - 0.1   # nearer the camera either way
    assert any("agree" in n for n in res.notes)


def test_observed_front_is_not_called_assumed():
    res = _plan("place it 10 cm to the right of the alarm clock", _scene(observed_front=True), unnamed_frame="ask")
    assert res.ok and res.program.startswith("place(metric$Right(0.1, clock, clock)")
    assert res.notes and not any("assumed" in n for n in res.notes)


def test_reference_without_front_uses_the_camera_and_says_so():
    res = _plan("place it 10 cm to the right of the jar", unnamed_frame="ask")
    assert res.ok and "jar, viewer)" in res.program
    assert any("no front" in n for n in res.notes)


def test_bad_policy_is_a_clear_config_error():
    with pytest.raises(ValueError, match="unnamed_frame must be one of intrinsic, viewer, ask"):
        ProgramPlannerConfig(unnamed_frame="sideways")


@pytest.mark.parametrize("held_pose", ["upright", "flat"])
def test_place_without_pose_word_keeps_the_held_pose_class(held_pose):
    from spatial_manip.transforms import quat_to_matrix

    res = _plan("place it 10 cm to the right of the jar", _scene(held_pose=held_pose))
    assert res.ok and "pose=keep" in res.program and "upright" not in res.program
    R = quat_to_matrix(res.place_pose.orientation)
    held = next(o for o in _scene(held_pose=held_pose).objects if o.held)
    placed = SceneObject("p", "book", "book", res.place_pose.position, held.size, R)
    assert rel.book_pose_class(placed) == held_pose
    kept = [s for e in res.trace if e["event"] == "execute" for s in e["steps"] if s["node"] == "pose=keep"]
    assert kept and kept[0]["pose_class"] == held_pose


def test_slot_place_without_pose_word_adds_none():
    res = make_planner("program").plan(ex.shelf_scene(), "put the book in an empty slot")
    assert res.ok and res.program.endswith("pose=keep)")


def test_a_pose_word_still_sets_the_pose():
    res = _plan("place it lying flat 10 cm to the right of the jar")
    assert res.ok and "pose=flat" in res.program


def test_plan_cli_prints_the_frame_note_and_reads_the_policy(tmp_path):
    scene, cfg = tmp_path / "s.json", tmp_path / "c.yaml"
    _scene().save(scene)
    cfg.write_text("planner:\n  program:\n    unnamed_frame: viewer\n")
    base = [sys.executable, "-m", "spatial_manip.cli", "plan", "--scene", str(scene),
            "--instruction", "place it 10 cm to the right of the alarm clock"]
    p = subprocess.run(base + ["--json", "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    out = json.loads(p.stdout)
    assert p.returncode == 0 and "clock, viewer)" in out["program"] and "unnamed_frame=viewer" in out["notes"][0]
    p = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "note:" in p.stdout and "assumed" in p.stdout
