"""`spatial-manip latency-bench`: how long a person waits (issue 42).

Runs N goals of a suite through one sim graph (one worker) and measures, from the client's side:
- each stage's time (perceiving, reasoning, grasping, moving, verifying: feedback to feedback);
- goal accepted -> first arm motion (the first feedback to the first joint change on /joint_states),
  and of it, the moving stage's start -> first arm motion (the arm server's planning before it moves);
- arm stopped -> result (the last joint change to the result's arrival).

Prints median and p95 of each. `--baseline REF` runs the same tasks on the code of git revision REF
(a temporary worktree, the same venv and interfaces) in the same invocation and prints the ratio
current / baseline, since the development machines are too noisy for absolute figures alone.

    spatial-manip latency-bench --goals 10 --seed 40 --baseline HEAD~1 --out outputs/latency
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from spatial_manip.bench.runner import prepare_tasks
from spatial_manip.bench.domains import hold_domains
from spatial_manip.bench.revisions import worktree
from spatial_manip.bench.sim_session import sim_session
from spatial_manip.bench.worker import WorkspaceRevision
from spatial_manip.bringup.goal_client import send_goal, wait_future
from spatial_manip.sim import sensing

MOTION_RAD = 2e-3          # a joint change larger than this is arm motion (the sim's settle noise is far below)
STAGES = ("perceiving", "reasoning", "grasping", "moving", "verifying", "reflecting")
MEASURES = ("accepted_to_first_motion_s", "moving_to_first_motion_s", "arm_stopped_to_result_s", "goal_total_s")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--goals", type=int, default=10, help="goals to time (at least 1)")
    p.add_argument("--suite", default="pick", help="task suite the goals are drawn from")
    p.add_argument("--seed", type=int, default=40, help="task seed")
    p.add_argument("--segmenter", default="classical")
    p.add_argument("--domain", type=int, default=None, help="ROS_DOMAIN_ID of the bench's own graph (the baseline's "
                   "is the next one; default: two free ones no other measurement on this machine holds)")
    p.add_argument("--baseline", default="", help="git revision to time on the same tasks, for ratios (e.g. HEAD~1)")
    p.add_argument("--baseline-first", action="store_true",
                   help="time the baseline before the current code (the side timed second meets whatever load the "
                        "machine has then; run both orders on a busy machine and report both)")
    p.add_argument("--think-s", type=float, default=0.0,
                   help="seconds between a reset and its goal, as a person looks at the table and types (0: at "
                        "once, the hardest case for a planner that looks ahead while idle; a baseline revision whose "
                        "bench has no think time sends at once, and the summary says so)")
    p.add_argument("--out", required=True, help="output directory (tasks, latency.json)")
    sensing.add_arguments(p)


class MotionTimes:
    """The first and last times joint readings showed the arm moving: a reading more than
    MOTION_RAD from the reference (the first reading, then each one that moved), so a slow motion
    counts too; comparing each reading with the one before missed it (at 30 readings a second a
    slow transit moves under MOTION_RAD between two, and the first motion was seen late)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self._reference, self.first, self.last = None, None, None

    def note(self, q: np.ndarray, now: float) -> None:
        if self._reference is None:
            self._reference = q
        elif np.max(np.abs(q - self._reference)) > MOTION_RAD:
            self.first = self.first or now
            self.last, self._reference = now, q


class MotionWatch:
    """The times at which /joint_states first and last showed the arm moving since `arm()`."""

    def __init__(self, node):
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        self._lock = threading.Lock()
        self._times = MotionTimes()
        node.create_subscription(JointState, "/joint_states", self._on_state, qos_profile_sensor_data)

    @property
    def first(self) -> float | None:
        return self._times.first

    @property
    def last(self) -> float | None:
        return self._times.last

    def arm(self) -> None:
        with self._lock:
            self._times.reset()

    def _on_state(self, msg) -> None:
        with self._lock:
            self._times.note(np.asarray(msg.position[:6], float), time.monotonic())


def stage_durations(marks: list[tuple[float, str]], t_end: float) -> dict[str, float]:
    """Seconds spent in each stage, from the feedback marks (time, stage) and the result's time."""
    out: dict[str, float] = {}
    for (t, stage), (t_next, _) in zip(marks, marks[1:] + [(t_end, "")]):
        out[stage] = out.get(stage, 0.0) + (t_next - t)
    return out


def look_of(trace_path: str) -> dict | None:
    """The goal's first look as its trace (the result's trace_path, a trace.json) tells it:
    reused or taken, age, homing and looking times; None when the trace has none (an older
    revision's, or none written)."""
    try:
        events = json.loads(Path(trace_path).read_text())["events"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return next(({k: v for k, v in e.items() if k not in ("kind", "t_s")} for e in events if e.get("kind") == "look"),
                None)


def time_goal(node, task, reset, revision, watch, think_s: float = 0.0) -> dict:
    from spatial_manip_interfaces.srv import ResetTask

    res = wait_future(reset.call_async(ResetTask.Request(task_json=json.dumps(task),
                                                         scene_json=Path(task["scene_path"]).read_text(),
                                                         seed=int(task.get("scene_seed", 0)))), 60.0)
    if res is None or not res.success:
        return {"id": task["id"], "skipped": True}
    revision.wait(lambda r: r.endswith(f":{task['id']}"), timeout_s=10.0)
    time.sleep(think_s)
    marks: list[tuple[float, str]] = []

    def on_feedback(fb):
        if not marks or marks[-1][1] != fb.stage:
            marks.append((time.monotonic(), fb.stage))

    watch.arm()
    report = send_goal(node, task["instruction"], timeout_s=180.0, server_timeout_s=60.0, on_feedback=on_feedback)
    t_result = time.monotonic()
    rec = {"id": task["id"], "success": bool(report.result is not None and report.result.success),
           "stages": stage_durations(marks, t_result), "goal_total_s": t_result - marks[0][0] if marks else None}
    look = look_of(report.result.trace_path) if report.result is not None else None
    if look is not None:
        rec["look"] = look
    if marks and watch.first:
        rec["accepted_to_first_motion_s"] = watch.first - marks[0][0]
        rec["arm_stopped_to_result_s"] = t_result - watch.last
        moving = next((t for t, stage in marks if stage == "moving"), None)
        if moving is not None and watch.first >= moving:
            rec["moving_to_first_motion_s"] = watch.first - moving
    return rec


def moving_to_first_motion(rec: dict) -> float | None:
    """The moving stage's start -> first arm motion: as measured, or for a record of a revision that
    did not measure it, its first motion less the stages before moving, when the goal had one attempt
    (no `reflecting`: those stages all came before the motion)."""
    if rec.get("moving_to_first_motion_s") is not None:
        return rec["moving_to_first_motion_s"]
    first, stages = rec.get("accepted_to_first_motion_s"), rec.get("stages", {})
    if first is None or "moving" not in stages or "reflecting" in stages:
        return None
    return first - sum(stages.get(s, 0.0) for s in ("perceiving", "reasoning", "grasping"))


def run_goals(tasks: list[dict], segmenter: str, out: Path, profile=None, think_s: float = 0.0) -> list[dict]:
    """Time the tasks on one sim graph; `profile` (a SensingProfile) sets sim_node's sensing,
    None leaves sim_node's default (realistic; what a baseline revision's own run_goals does)."""
    from spatial_manip_interfaces.srv import ResetTask

    records = []
    with sim_session(out, segmenter, profile, "spatial_manip_latency") as (_graph, node):
        reset = node.create_client(ResetTask, "/sim/reset_task")
        revision, watch = WorkspaceRevision(node), MotionWatch(node)
        if not reset.wait_for_service(timeout_sec=90.0):
            raise RuntimeError("the sim node did not come up within 90 s; see graph.log")
        for k, task in enumerate(tasks, 1):
            rec = time_goal(node, task, reset, revision, watch, think_s)
            records.append(rec)
            first = rec.get("accepted_to_first_motion_s")
            print(f"[latency] {k}/{len(tasks)} {task['id']} "
                  f"{'ok' if rec.get('success') else 'fail'} first motion "
                  f"{'-' if first is None else f'{first:.2f} s'}{_look_words(rec.get('look'))}", flush=True)
    return records


def _look_words(look: dict | None) -> str:
    if look is None:
        return ""
    return f", look {'reused' if look.get('reused') else 'taken'} ({look.get('age_s', 0):.2f} s old)"


def looks_reused(records: list[dict]) -> str:
    """'k of n looks reused' over the records whose trace said (an old revision's say nothing)."""
    told = [r["look"] for r in records if r.get("look") is not None]
    return f"{sum(bool(t.get('reused')) for t in told)} of {len(told)} goals reasoned on a look taken before them" \
        if told else "no trace said whether its look was reused"


def goals_that_moved(records: list[dict]) -> str:
    """How many goals the first motion's figures rest on: a goal that failed before the arm moved
    has none, and a p95 of 3 goals is their slowest (session 34's seed 81: 3 of 6 on one side)."""
    done = [r for r in records if not r.get("skipped")]
    moved = sum(r.get("accepted_to_first_motion_s") is not None for r in done)
    return f"{moved} of {len(done)} goals reached the arm's first motion (the first motion's median and p95 are theirs)"


def where_looks_went(records: list[dict]) -> str:
    """The median of each part of the looks the goals took (their traces' `observe_s` and
    `perceive_s`: waiting for the frame, masking the arm, the segmenter's own laps), in seconds;
    "" when no trace said (an older revision's)."""
    taken = [r["look"] for r in records if r.get("look") and not r["look"].get("reused")]
    parts: dict[str, list[float]] = {}
    for look in taken:
        for name, value in {"observe": look.get("observe_s"), **(look.get("perceive_s") or {})}.items():
            if isinstance(value, (int, float)):
                parts.setdefault(name, []).append(float(value))
    if not parts:
        return ""
    medians = ", ".join(f"{name} {np.median(values):.2f}" for name, values in parts.items())
    return f"where {len(taken)} looks taken went (median s): {medians}"


def slowest_goals(records: list[dict], count: int = 2) -> list[str]:
    """Where the `count` slowest goals' wait for the first motion went, one line each (the p95 is
    theirs): waiting for an idle look under way, the rest of perceiving (homing, the change test or
    a look of its own), reasoning, grasping (a few hundredths when the grasps were ready ahead, the
    proposal's whole time when not), and the moving stage's start to the motion (the arm server's
    checks)."""
    timed = sorted((r for r in records if r.get("accepted_to_first_motion_s") is not None),
                   key=lambda r: -r["accepted_to_first_motion_s"])
    lines = []
    for r in timed[:count]:
        stages, look = r.get("stages", {}), r.get("look") or {}
        waited = float(look.get("waited_s") or 0.0)
        parts = [f"waiting for a look under way {waited:.2f}"] if waited else []
        parts.append(f"perceiving {stages.get('perceiving', 0.0) - waited:.2f}"
                     + (f" (look {'reused' if look.get('reused') else 'taken'})" if look else ""))
        parts += [f"{stage} {stages[stage]:.2f}" for stage in ("reasoning", "grasping") if stage in stages]
        moving = moving_to_first_motion(r)
        if moving is not None:
            parts.append(f"moving -> first motion {moving:.2f}")
        lines.append(f"{r['id']}: first motion {r['accepted_to_first_motion_s']:.2f} s = " + ", ".join(parts))
    return lines


def summarize(records: list[dict]) -> dict[str, tuple[float, float, int]]:
    """{measure: (median, p95, n)} over the records that have it."""
    out = {}
    done = [r for r in records if not r.get("skipped")]
    columns = {m: [r[m] for r in done if r.get(m) is not None] for m in MEASURES}
    columns["moving_to_first_motion_s"] = [v for v in map(moving_to_first_motion, done) if v is not None]
    for stage in STAGES:
        columns[stage] = [r["stages"][stage] for r in done if stage in r["stages"]]
    for name, values in columns.items():
        if values:
            out[name] = (float(np.median(values)), float(np.percentile(values, 95)), len(values))
    return out


def print_table(current: dict, baseline: dict | None, successes: tuple[int, int | None, int] | None) -> None:
    """The measures' median and p95 (and the baseline's, with the ratio), then the successes:
    (current, baseline or None, goals)."""
    head = f"{'measure':28s} {'median':>8s} {'p95':>8s} {'n':>3s}"
    if baseline:
        head += f" {'base med':>9s} {'base p95':>9s} {'ratio med':>10s}"
    print(head)
    for name, (med, p95, n) in current.items():
        line = f"{name:28s} {med:7.2f}s {p95:7.2f}s {n:3d}"
        if baseline and name in baseline:
            bmed, bp95, _ = baseline[name]
            line += f" {bmed:8.2f}s {bp95:8.2f}s {med / bmed if bmed else float('nan'):9.2f}x"
        print(line)
    if successes:
        base = f", {successes[1]} (baseline)" if successes[1] is not None else ""
        print(f"successes: {successes[0]} of {successes[2]} (current){base}")


def run_baseline(revision: str, args, tasks_file: Path, out: Path) -> tuple[list[dict], float]:
    """The same tasks timed on `revision`'s code, in a temporary git worktree run by this venv,
    and the seconds it waited between a reset and its goal."""
    with worktree(revision) as (tree, env):
        env["ROS_DOMAIN_ID"] = str(args.domain + 1)
        # the same think time when the revision's run_goals takes one (older ones send at once)
        script = ("import inspect,json,sys;from pathlib import Path;from spatial_manip.bench import latency as L;"
                  "t=[json.loads(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip()];"
                  "k={'think_s':float(sys.argv[4])} if 'think_s' in inspect.signature(L.run_goals).parameters else {};"
                  "Path(sys.argv[3],'think_s').write_text(str(k.get('think_s',0.0)));"
                  "Path(sys.argv[3],'records.json').write_text(json.dumps(L.run_goals(t,sys.argv[2],Path(sys.argv[3]),**k)))")
        (out / "baseline").mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-c", script, str(tasks_file), args.segmenter, str(out / "baseline"),
                        str(args.think_s)], cwd=tree, env=env, check=True)
        return (json.loads((out / "baseline" / "records.json").read_text()),
                float((out / "baseline" / "think_s").read_text()))


def run(args) -> int:
    if args.goals < 1:
        print("spatial-manip latency-bench: --goals must be at least 1", file=sys.stderr)
        return 2
    if not 0.0 <= args.think_s <= 60.0:
        print(f"spatial-manip latency-bench: --think-s must be within 0..60 s, got {args.think_s:g}", file=sys.stderr)
        return 2
    profile = sensing.from_args(args)
    if args.baseline and (profile.name != "realistic" or profile.off):
        print(f"spatial-manip latency-bench: --baseline runs the old revision's graph with sim_node's default "
              f"sensing (realistic), so it cannot be compared under {profile.label!r}; drop --baseline or the "
              "--sensing/--sensing-off options", file=sys.stderr)
        return 2
    args.domain = hold_domains(2, first=args.domain)[0]
    os.environ["ROS_DOMAIN_ID"] = str(args.domain)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = prepare_tasks(args.suite, args.goals, args.seed, out)[:args.goals]
    tasks_file = out / "latency_tasks.jsonl"
    tasks_file.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    baseline, base_think_s = None, None
    if args.baseline and args.baseline_first:
        baseline, base_think_s = run_baseline(args.baseline, args, tasks_file, out)
    current = run_goals(tasks, args.segmenter, out, profile, args.think_s)
    if args.baseline and not args.baseline_first:
        baseline, base_think_s = run_baseline(args.baseline, args, tasks_file, out)
    (out / "latency.json").write_text(json.dumps({"current": current, "baseline": baseline}, indent=1))
    ok = sum(bool(r.get("success")) for r in current)
    print(f"\n[latency] {len(tasks)} goals of {args.suite} (seed {args.seed}), one worker, segmenter {args.segmenter}, "
          f"sensing {profile.label}, {args.think_s:g} s between a reset and its goal"
          + (f" ({base_think_s:g} s on the baseline {args.baseline}, timed "
             f"{'before' if args.baseline_first else 'after'} the current code)" if baseline is not None else ""))
    print_table(summarize(current), summarize(baseline) if baseline else None,
                (ok, sum(bool(r.get("success")) for r in baseline) if baseline else None, len(current)))
    for side, records in (("current", current), ("baseline", baseline or [])):
        if records:
            print(f"{side}: {goals_that_moved(records)}")
    print(f"current: {looks_reused(current)}")
    if where_looks_went(current):
        print(f"current: {where_looks_went(current)}")
    for side, records in (("current", current), ("baseline", baseline or [])):
        for line in slowest_goals(records):
            print(f"{side} slowest: {line}")
    return 0
