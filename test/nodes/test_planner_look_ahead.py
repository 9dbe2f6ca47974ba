"""planner_node looks ahead across real processes and real DDS (issue 42): on the sim graph, a
goal that comes while the arm stands where the last look saw it reasons on that look, and its
trace says so with the look's age. Dry runs, so the arm never moves; the freshness limit is
raised for the test only, since a look takes many seconds on a loaded CI machine."""
import json
import subprocess
import sys
import time

import pytest

from ros_helpers import client_node, launched, wait_for
from spatial_manip.bench.worker import WorkspaceRevision

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def _dry_run(instruction: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "spatial_manip.cli", "goal", instruction, "--dry-run", "--json",
                          "--timeout", "240", "--server-timeout", "120"], capture_output=True, text=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _looks(trace_path: str) -> list[dict]:
    events = json.loads(open(trace_path).read())["events"]
    return [e for e in events if e["kind"] == "look"]


def test_a_goal_reuses_the_look_taken_before_it_while_the_arm_stood_still(tmp_path):
    log = tmp_path / "launch.log"
    with launched("sim", "planner_node.look_max_age_s=60", f"planner_node.trace_dir={tmp_path / 'traces'}",
                  log_path=log):
        assert wait_for(lambda: "ready: spatial_manip/execute_instruction" in log.read_text(), 120), log.read_text()
        # the planner says ready before sim_node has started: a first goal sent then looked with
        # no workspace (and no joints) yet, so the second rightly took its own look. Wait until
        # the planner acknowledges the sim's workspace, and its joint states have had time to come
        with client_node("look_ahead_test") as node:
            revision = WorkspaceRevision(node)
            assert revision.wait(bool, 120), "the planner never acknowledged the sim's workspace\n" + log.read_text()
        time.sleep(2.0)
        first = _dry_run("pick the leftmost book")
        second = _dry_run("pick the rightmost book")
    assert first["trace_path"] and second["trace_path"], (first, second)
    look = _looks(second["trace_path"])[0]
    assert look["reused"] is True and look["reason"].startswith("fresh"), look
    assert 0.0 < look["age_s"] <= 60.0 and look["look_s"] < 5.0, look
