"""Unintended contacts in the benchmark report (issue #21): read from the final state the simulator
exports (contacts = {"by_phase", "events"}, as sim_node writes it), shown per episode (results record, index page),
per group and per phase in report.md and in the printed summary; episodes without it are "not
measured", never 0."""
import json
from types import SimpleNamespace

from spatial_manip.bench import runner
from spatial_manip.bench.trace_page import render_index
from spatial_manip.bench.worker import episode_record, skipped_record
from spatial_manip.sim import metrics
from spatial_manip.sim.sensing import IDEAL

BACKENDS = {"segmenter": "ground_truth"}


def _task(tid: str, action: str = "pick", family: str = "Attribute/Small") -> dict:
    return {"id": tid, "suite": "smoke", "action": action, "family": family, "instruction": f"do {tid}",
            "answer": ["book_1"], "golden_steps": 4}


def _final_state(by_phase: dict | None, events=()) -> dict:
    """A final state as sim_node's /sim/check_success exports it."""
    s = {"viewer": {}, "robot": {}, "objects": [], "regions": []}
    if by_phase is not None:
        s["contacts"] = {"by_phase": by_phase, "events": list(events)}
    return s


def _episode(tid: str, by_phase: dict | None, events=(), action: str = "pick", **kw) -> dict:
    """A record as the worker writes it, from a synthetic /sim/check_success answer."""
    result = SimpleNamespace(success=True, error_code="", trace_path="", target_ids=["book_1"])
    report = SimpleNamespace(result=result, feedback=[SimpleNamespace(stage="moving")], status="succeeded")
    check = SimpleNamespace(success=True, failure_category="", message="judged",
                            final_state_json=json.dumps(_final_state(by_phase, events, **kw)))
    return episode_record(_task(tid, action), report, check, BACKENDS, 2.0)


HIT = {"phase": "approach", "bodies": ["gripper_right_pad", "book_2"], "kind": "gripper", "time_s": 5.06,
       "position": [0.48, -0.5, 0.107]}


def test_final_state_contacts_are_read_per_episode():
    assert metrics.unintended_contacts(_final_state({"approach": 1, "lift": 0}, [HIT])) == \
        {"total": 1, "by_phase": {"approach": 1, "lift": 0}, "events": [HIT]}
    assert metrics.unintended_contacts(_final_state({"home": 2}))["total"] == 2
    assert metrics.unintended_contacts(_final_state(None)) is None and metrics.unintended_contacts(None) is None
    rec = _episode("t1", {"pre_grasp": 0, "approach": 1, "lift": 0}, [HIT])
    assert rec["unintended_contacts"] == {"total": 1, "by_phase": {"pre_grasp": 0, "approach": 1, "lift": 0}}
    assert _episode("t2", None)["unintended_contacts"] is None
    assert skipped_record(_task("t3"), "reset_failed", "x", BACKENDS, 0.1)["unintended_contacts"] is None
    # a record written before the field existed: read from its final state
    old = dict(rec)
    del old["unintended_contacts"]
    assert metrics.episode_contacts(old) == rec["unintended_contacts"]


def test_report_shows_contacts_per_episode_overall_by_phase_and_group(tmp_path, capsys):
    records = [_episode("t1", {"pre_grasp": 0, "approach": 1, "lift": 0}, [HIT]),
               _episode("t2", {"pre_grasp": 0, "approach": 0, "lift": 0}),
               _episode("t3", {"carry": 0, "descend": 0, "open": 0, "retreat": 0, "home": 2}, action="place"),
               _episode("t4", None, action="place"),
               skipped_record(_task("t5"), "reset_failed", "collides", BACKENDS, 0.1)]
    s = runner.summarize(records)
    c = s["unintended_contacts"]
    assert c["overall"]["measured"] == 3 and c["overall"]["not_measured"] == 1 and c["overall"]["total"] == 3
    assert c["overall"]["per_episode"] == 1.0 and c["overall"]["episodes_with_contacts"] == 2
    assert c["overall"]["by_phase"]["approach"] == {"total": 1, "per_episode": round(1 / 3, 4)}
    assert c["overall"]["by_phase"]["home"] == {"total": 2, "per_episode": round(2 / 3, 4)}
    assert c["by_action"]["pick"]["per_episode"] == 0.5 and c["by_action"]["place"]["per_episode"] == 2.0
    assert c["by_action"]["metric"]["measured"] == 0
    assert c["events"] == [{"task_id": "t1", **HIT}]
    assert s["overall"] == {"episodes": 4, "successes": 4, "tsr": 1.0, "se": s["overall"]["se"]}   # unchanged shape

    report = runner.write_report(records, tmp_path, "smoke", IDEAL).read_text()
    assert "TSR 100.0%, SE 1.000, unintended contacts per episode 1.00" in report
    assert "| group | episodes | TSR | SE | unintended contacts / episode |" in report
    assert "| pick | 2 | 100.0% | 1.000 | 0.50 |" in report and "| place | 2 | 100.0% | 1.000 | 2.00 |" in report
    assert "## Unintended contacts" in report
    assert "Unintended contacts per episode 1.00 (approach 0.33, home 0.67; 2 of 3 episodes had any; " \
           "1 not measured)" in report
    assert "| approach | 1 | 0.33 |" in report and "| home | 2 | 0.67 |" in report and "| lift | 0 | 0.00 |" in report
    assert "Contacts (1 of 3 listed):" in report
    assert "- t1: approach: gripper_right_pad with book_2 at [0.48, -0.5, 0.107] (t 5.06 s)" in report
    assert json.loads((tmp_path / "summary.json").read_text())["unintended_contacts"]["overall"]["total"] == 3

    page = render_index(records, tmp_path).read_text()
    assert "<th>unintended contacts</th>" in page
    assert "<td class='contacts'>1</td>" in page and "<td class='contacts'>not measured</td>" in page


def test_no_measured_episode_reads_not_measured(tmp_path):
    records = [_episode("t1", None), _episode("t2", None, action="place")]
    s = runner.summarize(records)
    assert s["unintended_contacts"]["overall"]["per_episode"] is None
    assert metrics.format_contacts(s["unintended_contacts"]["overall"]) == "unintended contacts per episode: not measured"
    report = runner.write_report(records, tmp_path, "smoke", IDEAL).read_text()
    assert "unintended contacts per episode not measured" in report
    assert "| pick | 1 | 100.0% | 1.000 | not measured |" in report
    assert "Unintended contacts per episode: not measured" in report and "| phase |" not in report
