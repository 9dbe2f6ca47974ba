"""Workspace capture end to end on MuJoCo renders (L515 depth noise): the captured table and
fixture boxes against the simulator's own, the written file loading as the planner loads it,
and check-workspace naming what moved."""
import json
import re

import numpy as np
import pytest
import yaml

from spatial_manip.perception import SegmentationHints
from spatial_manip.perception.classical import ClassicalSegmenter
from spatial_manip.scene import Scene
from spatial_manip.workspace.capture import WorkspaceCaptureError, capture_workspace, merge_into, select_fixtures
from spatial_manip.workspace.check import check_workspace
from spatial_manip.sim.capture_cell import accuracy_report, demo_cell, render_cell
from spatial_manip.workspace.sources import load_observation, save_observation

CM = 0.01
# The holder's far wall stands 2.5 cm behind the near one as the camera looks: only its top
# edge is seen, so its box is short (measured 2.3 cm off). Every other part is in full view.
OCCLUDED = {"holder:1"}


@pytest.fixture(scope="module")
def cell():
    truth = demo_cell()
    obs = render_cell(truth, seed=0)
    return truth, obs, capture_workspace(obs)


def test_table_and_fixtures_match_the_simulator_within_a_centimetre(cell):
    truth, _, cap = cell
    report = accuracy_report(cap.scene, truth)
    assert abs(report["table_top_error_m"]) < CM
    assert report["table_size_error_m"] < CM
    assert report["table_centre_xy_error_m"] < CM
    assert cap.floor_z == pytest.approx(truth.extra["ground_z"], abs=CM)
    assert not cap.notes                    # the whole table is in view: no truncated extent
    rows = {r["part"]: r for r in report["parts"]}
    assert set(rows) == {"pedestal:0", "holder:0", "holder:1", "block:0"}
    for name, row in rows.items():
        assert row["found"], name
        limit = 3 * CM if name in OCCLUDED else CM
        assert row["centre_error_m"] < limit, (name, row)
        if name not in OCCLUDED:
            assert row["size_error_m"] < CM, (name, row)
    # the holder's two walls are one fixture with two parts, as the simulator's support is
    holder = next(o for o in cap.scene.objects if len(o.extra.get("parts", [])) == 2)
    assert rows["holder:0"]["captured_as"].split(":")[0] == holder.id


def test_written_file_loads_as_the_planner_loads_it_and_hides_the_fixtures(cell, tmp_path):
    _, obs, cap = cell
    path = tmp_path / "workspace.json"
    cap.scene.save(path)
    ws = Scene.load(path)
    hints = SegmentationHints.from_scene(ws)
    assert len(hints.fixtures) == 1 + 4          # the table and the four fixture parts
    assert {o.category for o in ws.objects} == {"table", "support"}
    # with the captured fixtures known, the classical segmenter finds nothing on a cleared table
    assert ClassicalSegmenter().segment(obs, hints=hints) == []
    # ...and without them, the fixtures would have been taken for objects
    assert len(ClassicalSegmenter().segment(obs)) >= 3


def test_check_names_the_fixture_that_moved_and_the_one_that_is_gone(cell):
    truth, _, cap = cell
    same = check_workspace(cap.scene, render_cell(truth, seed=1))
    assert same.ok, same.text()
    moved_obs = render_cell(demo_cell(moved={"pedestal": (0.05, 0.0), "block": (0.0, 0.5)}), seed=2)
    report = check_workspace(cap.scene, moved_obs, tolerance_m=0.02)
    assert not report.ok
    pedestal = _captured_id(cap.scene, truth.get("pedestal").center)
    block = _captured_id(cap.scene, truth.get("block").center)
    by_id = {f.id: f for f in report.findings if f.status != "unexpected"}
    assert by_id[pedestal].status == "moved"
    assert by_id[pedestal].distance_m == pytest.approx(0.05, abs=CM)
    assert re.match(rf"{pedestal!r} \(fixture\) moved [45]\.\d cm: seen at", by_id[pedestal].message)
    assert by_id[block].status == "missing"
    assert {f.status for f in report.findings if f.id not in (pedestal, block)} <= {"ok", "table_ok", "unexpected"}
    assert any(f.status == "unexpected" for f in report.findings)   # the block, 50 cm away
    assert "2 problem(s)" in report.text()


def _captured_id(scene: Scene, centre) -> str:
    fixtures = [o for o in scene.objects if o.category == "support"]
    return min(fixtures, key=lambda o: np.linalg.norm(o.center[:2] - np.asarray(centre)[:2])).id


def test_cli_capture_from_a_saved_observation_with_a_calibration_file(cell, tmp_path, capsys):
    from spatial_manip.cli import main

    truth, obs, _ = cell
    npz, cal, out = tmp_path / "obs.npz", tmp_path / "cal.yaml", tmp_path / "ws.json"
    save_observation(obs, npz)
    cal.write_text(yaml.safe_dump({"mode": "eye_to_hand", "T_base_camera": {"matrix": obs.T_base_cam.tolist()}}))
    assert np.array_equal(load_observation(npz).depth_m, obs.depth_m)
    rc = main(["capture-workspace", "--observation", str(npz), "--calibration", str(cal), "--out", str(out),
               "--exclude", "fixture_2"])
    assert rc == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "table: top at z = " in text and f"workspace written to {out}" in text
    ws = Scene.load(out)
    assert [o.id for o in ws.objects if o.category == "support"] == ["fixture_1", "fixture_3"]
    assert abs(accuracy_report(ws, truth)["table_top_error_m"]) < CM
    # check-workspace on the same look: everything in place, exit 0
    rc = main(["check-workspace", str(out), "--observation", str(npz), "--calibration", str(cal)])
    printed = capsys.readouterr().out
    # fixture_2 was excluded from the file, so it is seen but unexpected (not a problem)
    assert rc == 0, printed
    assert "something the file does not list" in printed


def test_cli_refuses_an_unknown_fixture_id_and_a_missing_observation(cell, tmp_path, capsys):
    from spatial_manip.cli import main

    _, obs, _ = cell
    npz = tmp_path / "obs.npz"
    save_observation(obs, npz)
    assert main(["capture-workspace", "--observation", str(npz), "--only", "fixture_9"]) == 1
    assert "no captured fixture 'fixture_9'" in capsys.readouterr().err
    assert main(["capture-workspace", "--observation", str(tmp_path / "nope.npz")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_recapture_keeps_the_names_catalogue_and_slots_of_the_old_file(cell):
    _, _, cap = cell
    old = cap.scene.to_dict()
    named = next(o for o in old["objects"] if o["id"] == "fixture_3")
    named.update(id="pedestal_left", label="pedestal")
    old["objects"].append({"id": "book_red", "label": "book", "category": "book", "center": [0, 0, 0],
                           "size": [0.15, 0.02, 0.22], "extra": {"catalogue": True}})
    old["regions"] = [{"id": "slot_r1c1", "kind": "slot", "center": [0.9, 0, 0.3], "size": [0.3, 0.3, 0.3]}]
    merged = merge_into(Scene.from_dict(json.loads(json.dumps(old))), cap.scene)
    ids = [o.id for o in merged.objects]
    assert "pedestal_left" in ids and "fixture_3" not in ids and "book_red" in ids
    assert merged.get("pedestal_left").label == "pedestal"
    assert [r.id for r in merged.regions] == ["slot_r1c1"]
    SegmentationHints.from_scene(merged)     # still loads as a workspace


def test_select_fixtures_keeps_only_the_marked_ones(cell):
    _, _, cap = cell
    kept = select_fixtures(cap.scene, only=["fixture_1"])
    assert [o.id for o in kept.objects] == ["table", "fixture_1"]
    with pytest.raises(WorkspaceCaptureError, match="fixture_7"):
        select_fixtures(cap.scene, exclude=["fixture_7"])
