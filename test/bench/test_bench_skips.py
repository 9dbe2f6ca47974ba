"""Episodes that never reach a verdict (a reset the simulator refuses, an episode that raised)
are kept in results.json as skipped with their reason, left out of TSR and listed in report.md;
a resumed run keeps a refused reset and runs an errored episode again."""
import json

from spatial_manip.bench import runner
from spatial_manip.bench.worker import skipped_record
from spatial_manip.sim.sensing import IDEAL

BACKENDS = {"segmenter": "ground_truth"}


def _task(tid: str, action: str = "pick") -> dict:
    return {"id": tid, "suite": "smoke", "action": action, "family": "Attribute/Small", "instruction": f"do {tid}",
            "answer": ["book_1"], "golden_steps": 4}


def _ran(tid: str, success: bool) -> dict:
    rec = skipped_record(_task(tid), "", "", BACKENDS, 3.0)     # the same fields, then as an episode that ran
    rec.update(skipped=False, success=success, failure_category="" if success else "grasp_failed",
               steps=4, stage_times_s={"perceive": 0.5}, check_message="judged")
    return rec


def test_skipped_records_say_why_and_stay_out_of_tsr(tmp_path):
    refused = skipped_record(_task("t2"), "reset_failed", "the scene's initial arm pose collides (a with b)",
                             BACKENDS, 0.2)
    assert refused["skipped"] and not refused["success"] and refused["check_message"] == refused["skip_reason"]
    records = [_ran("t1", True), refused, _ran("t3", False)]
    s = runner.summarize(records)
    assert s["overall"] == {"episodes": 2, "successes": 1, "tsr": 0.5, "se": s["overall"]["se"]}
    assert s["failures"] == {"grasp_failed": 1}
    assert s["skipped"] == [{"task_id": "t2", "category": "reset_failed", "reason": refused["skip_reason"]}]
    report = runner.write_report(records, tmp_path, "smoke", IDEAL).read_text()
    assert "2 episodes (1 more skipped, listed below): TSR 50.0%" in report
    assert "- t2: reset_failed: the scene's initial arm pose collides (a with b)" in report
    assert json.loads((tmp_path / "summary.json").read_text())["skipped"][0]["task_id"] == "t2"


def test_resume_reruns_errors_but_not_refused_resets(tmp_path):
    (tmp_path / "episodes").mkdir()
    first = [skipped_record(_task("t1"), "episode_error", "TimeoutError: x", BACKENDS, 1.0),
             skipped_record(_task("t2"), "reset_failed", "collides", BACKENDS, 1.0), _ran("t3", False)]
    (tmp_path / "episodes" / "w0.1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first))
    done = runner.load_done(tmp_path)
    assert [t for t in ("t1", "t2", "t3", "t4") if runner.needs_run(done.get(t))] == ["t1", "t4"]
    # the re-run's verdict replaces the error, wherever its file sorts
    (tmp_path / "episodes" / "r0.0.jsonl").write_text(json.dumps(_ran("t1", True)) + "\n")
    done = runner.load_done(tmp_path)
    assert done["t1"]["success"] and not done["t1"]["skipped"]
    assert done["t2"]["failure_category"] == "reset_failed"


def test_a_record_still_being_written_is_not_read(tmp_path):
    """The progress bar reads the episode files while a worker writes: a record cut short (objects
    85 once ended the whole bench with 'Unterminated string') is read once its line is whole."""
    (tmp_path / "episodes").mkdir()
    f = tmp_path / "episodes" / "w0.1.jsonl"
    whole, partial = json.dumps(_ran("t1", True)) + "\n", json.dumps(_ran("t2", False))
    f.write_text(whole + partial[:40])
    assert list(runner.load_done(tmp_path)) == ["t1"]
    f.write_text(whole + partial + "\n")
    assert list(runner.load_done(tmp_path)) == ["t1", "t2"]
