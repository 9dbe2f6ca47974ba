"""Every benchmark figure states its sensing profile: report.md, summary.json, each record's
backends and its trace page; a run directory holds one profile, and resuming it under another is
refused; the worker hands the profile to sim_node as its parameters."""
import json

import pytest

from spatial_manip.bench import runner
from spatial_manip.bench.trace_page import render_trace
from spatial_manip.bench.worker import sim_node_sensing, skipped_record
from spatial_manip.sim.sensing import sensing_profile

DIAGNOSIS = sensing_profile("realistic", "arm_kinematics,misregistration")


def test_the_report_states_the_profile_and_the_effects_switched_off(tmp_path):
    rec = skipped_record({"id": "t1", "instruction": "x"}, "", "", {"sensing": DIAGNOSIS.label}, 1.0)
    rec.update(skipped=False, success=True, failure_category="", family="F", action="pick")
    report = runner.write_report([rec], tmp_path, "pick", DIAGNOSIS).read_text()
    assert "Sensing profile: **realistic (off: arm_kinematics, misregistration)**" in report
    assert "depth_noise: L515 depth noise" in report and "calibration: the given camera extrinsics" in report
    assert "Switched off for diagnosis: arm_kinematics, misregistration." in report
    assert "arm_kinematics: the simulated arm" not in report
    s = json.loads((tmp_path / "summary.json").read_text())["sensing"]
    assert s["profile"] == "realistic" and s["off"] == ["arm_kinematics", "misregistration"]
    harsh = runner.write_report([rec], tmp_path, "pick", sensing_profile("harsh")).read_text()
    assert "Sensing profile: **harsh**" in harsh and "scaled by 2" in harsh
    ideal = runner.write_report([rec], tmp_path, "pick", sensing_profile("ideal")).read_text()
    assert "Sensing profile: **ideal**" in ideal and "No effect on" in ideal


def test_a_run_directory_keeps_one_profile(tmp_path):
    runner.check_sensing(tmp_path, DIAGNOSIS)
    runner.check_sensing(tmp_path, sensing_profile("realistic", "misregistration,arm_kinematics"))  # same, resumed
    with pytest.raises(SystemExit, match=r"holds episodes run with sensing 'realistic'.*not 'ideal'.*another --out"):
        runner.check_sensing(tmp_path, sensing_profile("ideal"))


def test_the_worker_passes_the_profile_to_sim_node():
    assert sim_node_sensing(DIAGNOSIS) == {"sensing": "realistic", "sensing_off": "arm_kinematics,misregistration"}
    assert sim_node_sensing(sensing_profile("harsh")) == {"sensing": "harsh"}


def test_the_trace_page_states_the_profile(tmp_path):
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"goal": {"instruction": "pick the red book"}, "events": [], "outcome": {"success": True}}))
    assert "sensing profile: harsh" in render_trace(trace, sensing="harsh").read_text()
    rec = {"task_id": "t1", "success": True, "backends": {"sensing": DIAGNOSIS.label}}
    assert f"sensing profile: {DIAGNOSIS.label}" in render_trace(trace, episode=rec).read_text()
    assert "sensing profile: not recorded" in render_trace(trace).read_text()
