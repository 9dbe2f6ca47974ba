"""One benchmark worker: its own ROS graph (sim, grasp and planner nodes started by the
pip-only launcher) in its own ROS_DOMAIN_ID, and a real action client that runs each assigned
task: reset the simulator to the task, send the instruction, ask the simulator to judge the
final state. Each finished episode is appended as one JSON line, so a run can resume.

    python -m spatial_manip.bench.worker --tasks CHUNK.jsonl --out RESULTS.jsonl --domain 42
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from spatial_manip.parameters import DEFAULT_SEGMENTER
from spatial_manip.sim import sensing as sensing_mod
from spatial_manip.sim.metrics import unintended_contacts
from spatial_manip.sim.sensing import SensingProfile
from spatial_manip.bringup.goal_client import send_goal, spinning_node, wait_future
from spatial_manip.bringup.graph import load_graph
from spatial_manip.bringup.launcher import Launcher


def sim_node_sensing(profile: SensingProfile) -> dict:
    """sim_node's parameters for a sensing profile (no empty `sensing_off`: rcl cannot parse
    `-p name:=` with nothing after it)."""
    params = {"sensing": profile.name}
    if profile.off:
        params["sensing_off"] = ",".join(sorted(profile.off))
    return params


def episode_record(task: dict, report, check, backends: dict, elapsed_s: float) -> dict:
    """The results.json record of one episode (issue #6's fields; `unintended_contacts`
    {"total", "by_phase"} from the final state's contact monitor, issue #21, None when the
    simulator did not measure them)."""
    r = report.result
    trace_path = r.trace_path if r is not None else ""
    stage_times = {}
    if trace_path and Path(trace_path).is_file():
        stage_times = json.loads(Path(trace_path).read_text()).get("stage_times_s", {})
    moves = sum(1 for f in report.feedback if f.stage == "moving")
    golden = int(task.get("golden_steps", 4))
    success = bool(check is not None and check.success and r is not None)
    if r is not None and not r.success and r.error_code:
        category = r.error_code.lower()
    elif check is not None and not check.success:
        category = check.failure_category or "unknown"
    else:
        category = "" if success else "no_result"
    final_state = json.loads(check.final_state_json) if check is not None and check.final_state_json else None
    contacts = unintended_contacts(final_state)     # None: the simulator did not measure them
    return {
        "task_id": task["id"], "suite": task.get("suite"), "action": task.get("action"), "family": task.get("family"),
        "difficulty": task.get("difficulty"), "instruction": task["instruction"], "backends": backends,
        "success": success, "failure_category": category,
        "planner_success": bool(r is not None and r.success), "planner_error": r.error_code if r else report.status,
        "planner_targets": list(r.target_ids) if r else [], "answer": task.get("answer", []),
        "steps": moves * golden, "golden_steps": golden, "time_s": round(elapsed_s, 3),
        "stage_times_s": stage_times, "check_message": check.message if check else "",
        "final_state": final_state,
        "unintended_contacts": {"total": contacts["total"], "by_phase": contacts["by_phase"]} if contacts else None,
        "trace_path": trace_path,
    }


def skipped_record(task: dict, category: str, reason: str, backends: dict, elapsed_s: float) -> dict:
    """The record of an episode that never ran to a verdict (the reset was refused, or the
    episode raised): kept in results.json with its reason, left out of TSR by the report."""
    return {
        "task_id": task["id"], "suite": task.get("suite"), "action": task.get("action"), "family": task.get("family"),
        "difficulty": task.get("difficulty"), "instruction": task.get("instruction", ""), "backends": backends,
        "success": False, "skipped": True, "failure_category": category, "skip_reason": reason,
        "planner_success": False, "planner_error": "", "planner_targets": [], "answer": task.get("answer", []),
        "steps": 0, "golden_steps": int(task.get("golden_steps", 4)), "time_s": round(elapsed_s, 3),
        "stage_times_s": {}, "check_message": reason, "final_state": None, "unintended_contacts": None,
        "trace_path": "",
    }


def run_worker(tasks: list[dict], out_path: Path, *, segmenter: str, sensing: SensingProfile, graph: str = "sim",
               goal_timeout_s: float = 120.0, log_path: Path | None = None, catalogue: str = "library") -> None:
    log = open(log_path, "a") if log_path else sys.stdout
    params = {"planner_node": {"segmenter": segmenter, "trace_dir": str(out_path.parent / "traces"),
                               "trace_keep_goals": 0},     # every episode's trace: the report links them
              "sim_node": {**sim_node_sensing(sensing), "catalogue": catalogue}}
    # a record's `backends` say what made its figure: the sensing profile with the rest
    backends = {"segmenter": segmenter, "planner": "program", "grasp": "antipodal", "arm": "sim",
                "sensing": sensing.label, "catalogue": catalogue}
    nodes = Graph(graph, params, log)
    try:
        with spinning_node("spatial_manip_bench_worker") as node:
            _run_tasks(node, tasks, out_path, backends, goal_timeout_s, nodes)
    finally:
        nodes.stop()


class Graph:
    """The worker's ROS graph, started again when one of its nodes has died (a node that dies
    would otherwise turn every later episode into a 60 s wait for its server)."""

    MAX_RESTARTS = 3

    def __init__(self, name: str, params: dict, log):
        self.spec, self.params, self.log, self.restarts = load_graph(name), params, log, 0
        self.launcher = self._start()

    def _start(self):
        launcher = Launcher(self.spec, params=self.params, out=self.log)
        launcher.start()
        return launcher

    def processes(self) -> dict:
        """Node name -> its process (subprocess.Popen)."""
        # the launcher keeps its processes private; reading them is all a client needs here
        return {r.spec.name: r.proc for r in self.launcher._running}

    def dead(self) -> list[str]:
        """The nodes that have exited, with their exit codes."""
        return [f"{name} (exit code {p.poll()})" for name, p in self.processes().items() if p.poll() is not None]

    def ensure_running(self) -> bool:
        """True when the graph was started again (its services must be waited for)."""
        dead = self.dead()
        if not dead:
            return False
        if self.restarts >= self.MAX_RESTARTS:
            raise RuntimeError(f"the worker's graph died {self.restarts + 1} times (last: {', '.join(dead)}); "
                               "see the worker log")
        self.restarts += 1
        print(f"[worker] {', '.join(dead)} died; restarting the graph ({self.restarts}/{self.MAX_RESTARTS})",
              file=sys.stderr)
        self.stop()
        self.launcher = self._start()
        return True

    def stop(self) -> None:
        self.launcher.request_stop()
        self.launcher.shutdown()


def _run_tasks(node, tasks: list[dict], out_path: Path, backends: dict, goal_timeout_s: float,
               graph: Graph) -> None:
    from spatial_manip_interfaces.srv import CheckSuccess, ResetTask

    reset = node.create_client(ResetTask, "/sim/reset_task")
    check = node.create_client(CheckSuccess, "/sim/check_success")
    planner_revision = WorkspaceRevision(node)
    if not reset.wait_for_service(timeout_sec=90.0):
        raise RuntimeError("the sim node did not come up within 90 s")
    for task in tasks:
        t0 = time.monotonic()
        if graph.ensure_running() and not reset.wait_for_service(timeout_sec=90.0):
            raise RuntimeError("the restarted sim node did not come up within 90 s")
        try:
            rec = _run_episode(node, task, reset, check, planner_revision, backends, goal_timeout_s, t0)
        except Exception as e:  # noqa: BLE001 -- one episode's failure must not end the run
            print(f"[worker] episode {task.get('id')} raised {type(e).__name__}: {e}; recorded as skipped",
                  file=sys.stderr)
            rec = skipped_record(task, "episode_error", f"{type(e).__name__}: {e}", backends, time.monotonic() - t0)
        with open(out_path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def _run_episode(node, task: dict, reset, check, planner_revision, backends: dict, goal_timeout_s: float,
                 t0: float) -> dict:
    """Reset the simulator to `task`, send its instruction, judge the end state: the episode's
    record. A reset the simulator refuses gives a skipped record with the simulator's reason."""
    from spatial_manip_interfaces.srv import CheckSuccess, ResetTask

    scene_json = Path(task["scene_path"]).read_text()
    if not wait_until_planner_free(node, goal_timeout_s):
        raise TimeoutError(f"the planner was still busy with the previous goal {goal_timeout_s:g} s after it was "
                           "canceled")
    res = wait_future(reset.call_async(ResetTask.Request(task_json=json.dumps(task), scene_json=scene_json,
                                                         seed=int(task.get("scene_seed", 0)))), 60.0)
    if res is None or not res.success:
        reason = res.message if res is not None else "the sim node did not answer /sim/reset_task within 60 s"
        print(f"[worker] reset to task {task['id']} failed: {reason}; skipping it", file=sys.stderr)
        return skipped_record(task, "reset_failed", reason, backends, time.monotonic() - t0)
    if not planner_revision.wait(lambda r: r.endswith(f":{task['id']}"), timeout_s=10.0):
        print(f"[worker] the planner had not taken task {task['id']}'s workspace after 10 s: "
              "sending the goal anyway", file=sys.stderr)
    report = send_goal(node, task["instruction"], timeout_s=goal_timeout_s, server_timeout_s=60.0)
    if report.interrupted:      # Ctrl-C or SIGTERM mid-goal: the client canceled it; the run stops, unscored
        raise KeyboardInterrupt(f"interrupted during task {task['id']}")
    verdict = wait_future(check.call_async(CheckSuccess.Request()), 30.0)
    return episode_record(task, report, verdict, backends, time.monotonic() - t0)


def wait_until_planner_free(node, limit_s: float, poll_s: float = 2.0) -> bool:
    """Whether the planner takes goals again within `limit_s`. A goal that timed out is canceled,
    but the planner may still be winding it down: the next episode's reset would move the world
    under it and its goal be refused BUSY (on a loaded machine, every later episode of a worker
    was, one after the other). An empty instruction is the probe: refused BUSY while a goal runs,
    INVALID_GOAL at once (nothing planned, nothing moved) when the planner is free."""
    deadline = time.monotonic() + limit_s
    while True:
        probe = send_goal(node, "", dry_run=True, timeout_s=30.0, server_timeout_s=60.0)
        if probe.result is None or probe.result.error_code != "BUSY":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)


class WorkspaceRevision:
    """The workspace revision the planner has taken in (its latched acknowledgement): goals sent
    before it matches a reset would be planned on the previous world."""

    def __init__(self, node, topic: str = "/spatial_manip/planner/workspace_revision"):
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from std_msgs.msg import String

        self._value, self._changed = "", threading.Condition()
        node.create_subscription(String, topic, self._on_revision,
                                 QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))

    def _on_revision(self, msg) -> None:
        with self._changed:
            self._value = msg.data
            self._changed.notify_all()

    @property
    def value(self) -> str:
        with self._changed:
            return self._value

    def wait(self, accept, timeout_s: float) -> bool:
        """Whether a revision for which `accept(revision)` is true arrives within `timeout_s`."""
        with self._changed:
            return self._changed.wait_for(lambda: accept(self._value), timeout=timeout_s)


def default_catalogue(segmenter: str) -> str:
    """The enrolled library, except for the ground-truth segmenter: a diagnostic whose names come
    from the episode, so it is paired with the episode's own catalogue."""
    return "episode" if segmenter == "ground_truth" else "library"


def exit_on_sigterm() -> None:
    """SIGTERM (`kill`, a scheduler's time limit) ends this process as an exception does, so its
    `finally` blocks stop what it started: a worker killed so used to leave its graph's nodes
    running, each bound to a ROS domain the next run may draw again."""
    def _exit(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, _exit)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tasks", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--segmenter", default=DEFAULT_SEGMENTER)
    ap.add_argument("--goal-timeout", type=float, default=120.0, help="seconds a goal may run before it is canceled")
    sensing_mod.add_arguments(ap)
    ap.add_argument("--catalogue", choices=("library", "episode"), default=None,
                    help="default: the library, or the episode's own with the ground_truth segmenter")
    ap.add_argument("--log")
    a = ap.parse_args(argv)
    exit_on_sigterm()
    os.environ["ROS_DOMAIN_ID"] = str(a.domain)  # before rclpy.init and before the graph starts
    tasks = [json.loads(line) for line in Path(a.tasks).read_text().splitlines() if line.strip()]
    run_worker(tasks, Path(a.out), segmenter=a.segmenter, sensing=sensing_mod.from_args(a),
               goal_timeout_s=a.goal_timeout, log_path=Path(a.log) if a.log else None, catalogue=a.catalogue or default_catalogue(a.segmenter))
    return 0


if __name__ == "__main__":
    sys.exit(main())
