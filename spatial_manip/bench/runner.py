"""`spatial-manip bench`: generated tasks through the real ROS graph, one graph per worker in
its own ROS_DOMAIN_ID, with a progress bar. Writes DIR/results.json (one record per episode),
DIR/report.md (the sensing profile of every figure, TSR and SE overall and per family, unintended contacts per episode overall and
by motion phase, timing percentiles) with PNG plots, and
DIR/index.html (the trace viewer). Deterministic for a seed; resumable (finished episodes are
kept in DIR/episodes/*.jsonl and skipped on the next run)."""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from spatial_manip.bench.domains import hold_domains
from spatial_manip.bench.worker import default_catalogue, exit_on_sigterm, run_worker
from spatial_manip.cli import output_dir, positive_int
from spatial_manip.parameters import DEFAULT_SEGMENTER
from spatial_manip.progress import progress
from spatial_manip.sim import object_sets
from spatial_manip.sim import sensing as sensing_mod
from spatial_manip.sim.sensing import EFFECTS, SensingProfile
from spatial_manip.bench.trace_page import render_index
from spatial_manip.sim import tasks as T
from spatial_manip.sim.metrics import contacts_summary, episode_contacts, format_contacts, step_efficiency, unintended_contacts


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", default="smoke", help="task suite (see `spatial-manip tasks --help`)")
    object_sets.add_objects_argument(p)
    p.add_argument("--episodes", type=positive_int, default=10, help="number of tasks")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=positive_int, default=1, help="parallel graphs (each in its own ROS domain)")
    p.add_argument("--out", required=True, type=output_dir, help="output directory (re-run to resume)")
    p.add_argument("--segmenter", default=DEFAULT_SEGMENTER, help="perception backend: classical | ground_truth")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="run workers as local processes, or as Ray tasks (ray must be installed)")
    p.add_argument("--goal-timeout", type=float, default=120.0,
                   help="seconds a goal may run before the worker cancels it (default 120; more on a loaded machine)")
    p.add_argument("--catalogue", choices=("library", "episode"), default=None,
                   help="what the planner is told may be in the scene: library (every enrolled object, most absent; "
                        "the default) | episode (this episode's objects with true sizes: a diagnostic, and the "
                        "default with --segmenter ground_truth, whose names come from the episode)")
    sensing_mod.add_arguments(p)


def check_sensing(out: Path, profile: SensingProfile) -> None:
    """A run directory holds episodes of one sensing profile: the first run writes it to
    DIR/sensing.json, and resuming with another profile is refused."""
    path = out / "sensing.json"
    want = profile.to_dict()
    if path.is_file():
        had = json.loads(path.read_text())
        if (had.get("profile"), had.get("off")) != (want["profile"], want["off"]):
            raise SystemExit(f"{out} holds episodes run with sensing {had.get('profile')!r} (off: {had.get('off')}), "
                             f"not {profile.label!r}; use another --out, or the same --sensing and --sensing-off")
    path.write_text(json.dumps(want, indent=1))


def sensing_lines(profile: SensingProfile) -> list[str]:
    """report.md's statement of the sensing profile behind every figure in it."""
    on = [e for e in EFFECTS if profile.enabled(e)]
    lines = [f"Sensing profile: **{profile.label}** (sim/sensing.py). "
             + ("Effects on: " + "; ".join(f"{e}: {EFFECTS[e]}" for e in on) if on else
                "No effect on: clean depth, exact extrinsics, the nominal arm, fixed lighting.")]
    if profile.scale > 1:
        lines.append(f"Every noise and error above is scaled by {profile.scale:g}.")
    if profile.off and profile.scale > 0:
        lines.append(f"Switched off for diagnosis: {', '.join(sorted(profile.off))}.")
    return lines + [""]


def prepare_tasks(suite: str, episodes: int, seed: int, out: Path) -> list[dict]:
    """Generate (or reuse, for resume) the task suite; each record gets its scene's absolute path."""
    tasks_file = out / "tasks" / "tasks.jsonl"
    if not tasks_file.is_file():
        T.write(out / "tasks", T.generate(suite, episodes, seed))
    records = [json.loads(line) for line in tasks_file.read_text().splitlines() if line.strip()]
    for r in records:
        r["scene_path"] = str((tasks_file.parent / r["scene"]).resolve())
    return records


def load_done(out: Path) -> dict[str, dict]:
    """The finished episodes' records by task id. A task recorded twice (a resumed run) keeps
    the record that ran to a verdict over a skipped one. A worker may be writing its next record
    while the progress bar reads: only whole lines (ended by their newline) are records."""
    done = {}
    for f in sorted((out / "episodes").glob("*.jsonl")):
        text = f.read_text()
        for line in text[:text.rfind("\n") + 1].splitlines():
            if line.strip():
                rec = json.loads(line)
                prev = done.get(rec["task_id"])
                if prev is None or prev.get("skipped"):
                    done[rec["task_id"]] = rec
    return done


def needs_run(rec: dict | None) -> bool:
    """Whether a resumed run runs this task again: never run, or stopped by an error of the run
    itself (an episode that raised). A refused reset is the task's own and would fail again."""
    return rec is None or rec.get("failure_category") == "episode_error"


def run_local(chunks: list[list[dict]], out: Path, segmenter: str, total: int, done: int,
              sensing: SensingProfile, goal_timeout_s: float = 120.0, catalogue: str = "library") -> None:
    procs = []
    for i, (chunk, dom) in enumerate(zip(chunks, hold_domains(len(chunks)))):
        if not chunk:
            continue
        cf = out / "todo" / f"w{i}.jsonl"     # not under episodes/: only results live there
        cf.parent.mkdir(exist_ok=True)
        cf.write_text("".join(json.dumps(t) + "\n" for t in chunk))
        cmd = [sys.executable, "-m", "spatial_manip.bench.worker", "--tasks", str(cf),
               "--out", str(out / "episodes" / f"w{i}.{int(time.time())}.jsonl"), "--domain", str(dom),
               "--segmenter", segmenter, "--log", str(out / f"worker{i}.log"),
               "--sensing", sensing.name, "--sensing-off", ",".join(sorted(sensing.off)),
               "--goal-timeout", str(goal_timeout_s), "--catalogue", catalogue]
        procs.append(subprocess.Popen(cmd, env={**os.environ, "ROS_DOMAIN_ID": str(dom)}))
    exit_on_sigterm()
    try:
        with progress(total=total, initial=done, desc="episodes", unit="ep") as bar:
            while any(p.poll() is None for p in procs):
                n = len(load_done(out))
                if n != bar.n:          # an idle bar is not redrawn (a log file keeps every redraw)
                    bar.update(n - bar.n)
                time.sleep(1.0)
            bar.update(len(load_done(out)) - bar.n)
    finally:
        _stop_workers(procs)
    failed = [i for i, p in enumerate(procs) if p.returncode != 0]
    if failed:
        print(f"[bench] worker(s) {failed} exited with an error; see {out}/worker*.log. "
              "Re-run the same command to resume.", file=sys.stderr)


def _stop_workers(procs, grace_s: float = 20.0) -> None:
    """Stop the workers still running (the run was interrupted): each stops its graph first."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        p.terminate()
    deadline = time.monotonic() + grace_s
    for p in live:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


RAY_HINT = ("--backend ray needs Ray on every node: pip install -r requirements.txt (ray==2.60.0). Without "
            "RAY_ADDRESS it starts a Ray cluster on this machine; to use a cluster, source scripts/env.sh, run "
            "`ray start --head` (and `ray start --address=HEAD:6379` on the other machines), then "
            "RAY_ADDRESS=HEAD:6379 spatial-manip bench --backend ray ...")


def run_ray(chunks: list[list[dict]], out: Path, segmenter: str, sensing: SensingProfile, goal_timeout_s: float = 120.0,
            catalogue: str = "library") -> None:
    """Each chunk as one Ray task (one CPU) that runs a worker's graph on whichever node Ray
    picks. Connects to the cluster at RAY_ADDRESS, or starts one on this machine."""
    try:
        import ray
    except ImportError as e:
        raise SystemExit(RAY_HINT) from e
    if os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"])
    else:       # a private cluster for this run: no dashboard to start on a small machine
        ray.init(include_dashboard=False)
    try:
        work = ray.remote(num_cpus=1)(ray_chunk)
        stamp = int(time.time())
        planned = {}
        for i, (chunk, dom) in enumerate(zip(chunks, hold_domains(len(chunks)))):
            if chunk:
                path = out / "episodes" / f"r{i}.{stamp}.jsonl"
                planned[work.remote(chunk, dom, str(path), segmenter, str(out / f"worker{i}.log"),
                                    sensing.to_dict(), goal_timeout_s, catalogue)] = path
        failed = []
        for ref, path in planned.items():
            try:
                res = ray.get(ref)
            except ray.exceptions.RayError as e:   # as run_local: the others' episodes are kept
                failed.append(f"{path.name}: {str(e).splitlines()[-1] if str(e) else type(e).__name__}")
                continue
            if not path.exists():       # written on another machine: keep its records here
                path.write_text("".join(json.dumps(r) + "\n" for r in res["records"]))
                print(f"[bench] {len(res['records'])} episodes ran on {res['host']}; their traces stay "
                      f"there ({Path(res['path']).parent}/traces)", file=sys.stderr)
        if failed:
            print(f"[bench] Ray task(s) failed ({'; '.join(failed)}); see {out}/worker*.log. "
                  "Re-run the same command to resume.", file=sys.stderr)
    finally:
        ray.shutdown()


def ray_chunk(chunk: list[dict], domain: int, episodes_path: str, segmenter: str, log_path: str,
              sensing: dict, goal_timeout_s: float = 120.0, catalogue: str = "library") -> dict:
    """The body of one Ray task: run a worker on `chunk` in ROS domain `domain`. It writes where
    the driver asked when that directory is here (this machine, or a shared filesystem), else
    in a temporary directory, and returns its records either way."""
    path, log = Path(episodes_path), Path(log_path)
    if not path.parent.is_dir():
        local = Path(tempfile.mkdtemp(prefix="spatial_manip_bench_"))
        (local / "episodes").mkdir()
        path, log = local / "episodes" / path.name, local / log.name
    os.environ["ROS_DOMAIN_ID"] = str(domain)     # before rclpy.init and before the graph starts
    run_worker(chunk, path, segmenter=segmenter, log_path=log,
               sensing=sensing_mod.sensing_profile(sensing["profile"], sensing["off"]), goal_timeout_s=goal_timeout_s,
               catalogue=catalogue)
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return {"path": str(path), "host": socket.gethostname(), "records": records}


def percentiles(xs) -> dict:
    if not len(xs):
        return {}
    a = np.asarray(xs, float)
    return {"p50": round(float(np.percentile(a, 50)), 3), "p90": round(float(np.percentile(a, 90)), 3),
            "p95": round(float(np.percentile(a, 95)), 3), "max": round(float(a.max()), 3)}


def summarize(records: list[dict]) -> dict:
    """TSR and SE over the episodes that ran; skipped ones (a refused reset, an episode that
    raised) are counted apart with their reasons, not as failures of the stack."""
    def block(rs):
        n = len(rs)
        ok = sum(r["success"] for r in rs)
        se = [step_efficiency(r["success"], r["steps"], r["golden_steps"]) for r in rs]
        return {"episodes": n, "successes": ok, "tsr": round(ok / n, 4) if n else 0.0,
                "se": round(float(np.mean(se)), 4) if n else 0.0}

    def contacts(rs):
        return contacts_summary(episode_contacts(r) for r in rs)

    skipped = [r for r in records if r.get("skipped")]
    records = [r for r in records if not r.get("skipped")]
    fams = sorted({r["family"] for r in records})
    cats: dict[str, int] = {}
    for r in records:
        if not r["success"]:
            cats[r["failure_category"]] = cats.get(r["failure_category"], 0) + 1
    stages = sorted({s for r in records for s in r["stage_times_s"]})
    return {"overall": block(records),
            "by_action": {a: block([r for r in records if r.get("action") == a]) for a in ("pick", "place", "metric")},
            "by_family": {f: block([r for r in records if r["family"] == f]) for f in fams},
            "failures": cats, "time_s": percentiles([r["time_s"] for r in records]),
            "stage_time_s": {s: percentiles([r["stage_times_s"].get(s, 0.0) for r in records]) for s in stages},
            "skipped": [{"task_id": r["task_id"], "category": r["failure_category"], "reason": r.get("skip_reason", "")}
                        for r in skipped],
            # issue #21: per episode, overall / per action / per family (None per episode: not measured)
            "unintended_contacts": {"overall": contacts(records),
                                    "by_action": {a: contacts([r for r in records if r.get("action") == a])
                                                  for a in ("pick", "place", "metric")},
                                    "by_family": {f: contacts([r for r in records if r["family"] == f]) for f in fams},
                                    "events": contact_events(records)}}


def contact_events(records: list[dict], limit: int = 50) -> list[dict]:
    """The first `limit` unintended contact events of the run, each with its task id (from the
    final states the simulator exported; see sim/contacts.py)."""
    out = []
    for r in records:
        c = unintended_contacts(r.get("final_state"))
        for e in (c or {}).get("events", []):
            if len(out) >= limit:
                return out
            out.append({"task_id": r["task_id"], **e})
    return out


def _contacts_cell(c: dict) -> str:
    return "not measured" if not c["measured"] else f"{c['per_episode']:.2f}"


def contact_lines(s: dict) -> list[str]:
    """report.md's section on unintended contacts (issue #21; goal 0 in the pick and place suites)."""
    c = s["unintended_contacts"]["overall"]
    lines = ["## Unintended contacts", "",
             "Contacts of the arm, the gripper or the held object with anything but the task's target and "
             "its support, counted once per touch by the simulator's contact monitor (sim/contacts.py). "
             "Goal: 0 in the pick and place suites.", "",
             format_contacts(c).capitalize(), ""]
    if not c["measured"]:
        return lines
    lines += ["| phase | contacts | per episode |", "|---|---|---|"]
    lines += [f"| {p} | {b['total']} | {b['per_episode']:.2f} |" for p, b in c["by_phase"].items()]
    lines.append("")
    events = s["unintended_contacts"]["events"]
    if events:
        lines += [f"Contacts ({len(events)} of {c['total']} listed):", ""]
        for e in events:
            bodies = " with ".join(str(b) for b in e.get("bodies", []))
            lines.append(f"- {e['task_id']}: {e.get('phase', '?')}: {bodies} at {e.get('position', '?')} "
                         f"(t {e.get('time_s', '?')} s)")
        lines.append("")
    return lines


def write_report(records: list[dict], out: Path, title: str, sensing: SensingProfile) -> Path:
    import matplotlib  # optional (requirements-bench.txt): only when a report is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = summarize(records)
    s["sensing"] = sensing.to_dict()
    fams = list(s["by_family"])
    fig, ax = plt.subplots(figsize=(8, max(3, 0.3 * len(fams))))
    ax.barh(fams, [s["by_family"][f]["tsr"] * 100 for f in fams], color="#4c78a8")
    ax.set_xlabel("task success rate (%)")
    ax.set_xlim(0, 100)
    fig.tight_layout()
    fig.savefig(out / "success_by_family.png", dpi=100)
    plt.close(fig)
    stages = list(s["stage_time_s"])
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ran = [r for r in records if not r.get("skipped")]
    ax.boxplot([[r["stage_times_s"].get(st, 0.0) for r in ran] for st in stages] or [[0]],
               tick_labels=stages or ["-"])
    ax.set_ylabel("seconds")
    fig.tight_layout()
    fig.savefig(out / "time_per_stage.png", dpi=100)
    plt.close(fig)

    o = s["overall"]
    skipped = f" ({len(s['skipped'])} more skipped, listed below)" if s["skipped"] else ""
    lines = [f"# {title}", "", *sensing_lines(sensing), f"{o['episodes']} episodes{skipped}: TSR {o['tsr'] * 100:.1f}%, SE {o['se']:.3f}, "
             f"unintended contacts per episode {_contacts_cell(s['unintended_contacts']['overall'])}", "",
             "| group | episodes | TSR | SE | unintended contacts / episode |", "|---|---|---|---|---|"]
    uc = s["unintended_contacts"]
    for name, b, c in ([(a, b, uc["by_action"][a]) for a, b in s["by_action"].items()]
                       + [(f, b, uc["by_family"][f]) for f, b in s["by_family"].items()]):
        if b["episodes"]:
            lines.append(f"| {name} | {b['episodes']} | {b['tsr'] * 100:.1f}% | {b['se']:.3f} | {_contacts_cell(c)} |")
    lines += ["", "Failures: " + (", ".join(f"{k} {v}" for k, v in sorted(s["failures"].items())) or "none"), ""]
    lines += contact_lines(s)
    if s["skipped"]:
        lines += [f"Skipped (not in TSR): {len(s['skipped'])} episode(s)", ""]
        lines += [f"- {k['task_id']}: {k['category']}: {k['reason']}" for k in s["skipped"]] + [""]
    lines += [f"Time per episode (s): {s['time_s']}", "", "| stage | p50 | p90 | p95 | max |", "|---|---|---|---|---|"]
    for st, p in s["stage_time_s"].items():
        lines.append(f"| {st} | {p['p50']} | {p['p90']} | {p['p95']} | {p['max']} |")
    lines += ["", "![success by family](success_by_family.png)", "", "![time per stage](time_per_stage.png)", ""]
    (out / "report.md").write_text("\n".join(lines))
    (out / "summary.json").write_text(json.dumps(s, indent=1))
    return out / "report.md"


def run(args) -> int:
    out = Path(args.out).resolve()
    (out / "episodes").mkdir(parents=True, exist_ok=True)
    sensing = sensing_mod.from_args(args)
    check_sensing(out, sensing)
    object_sets.add_folders(args.objects)     # before the workers start: they inherit the folders
    tasks = prepare_tasks(args.suite, args.episodes, args.seed, out)
    args.catalogue = args.catalogue or default_catalogue(args.segmenter)
    done = load_done(out)
    todo = [t for t in tasks if needs_run(done.get(t["id"]))]
    print(f"[bench] {len(tasks)} tasks, {len(tasks) - len(todo)} done, {len(todo)} to run on {args.workers} worker(s)")
    chunks = [todo[i::max(1, args.workers)] for i in range(max(1, args.workers))]
    if todo:
        if args.backend == "ray":
            run_ray(chunks, out, args.segmenter, sensing, args.goal_timeout, args.catalogue)
        else:
            run_local(chunks, out, args.segmenter, len(tasks), len(tasks) - len(todo), sensing, args.goal_timeout,
                      args.catalogue)
    done = load_done(out)
    order = {t["id"]: i for i, t in enumerate(tasks)}
    records = sorted((r for r in done.values() if r["task_id"] in order), key=lambda r: order[r["task_id"]])
    for r in records:       # per episode, also for records written before the worker added it
        c = episode_contacts(r)
        r["unintended_contacts"] = c
    (out / "results.json").write_text(json.dumps(records, indent=1))
    report = write_report(records, out, f"{args.suite}: {len(records)} episodes, seed {args.seed}, "
                                         f"segmenter {args.segmenter}, catalogue {args.catalogue}, sensing {sensing.label}, "
                                         f"goal timeout {args.goal_timeout:g} s", sensing)
    render_index(records, out, title=f"benchmark {args.suite} (seed {args.seed}, sensing {sensing.label})")
    summary = summarize(records)
    s = summary["overall"]
    print(f"[bench] sensing {sensing.label}: TSR {s['tsr'] * 100:.1f}% ({s['successes']}/{s['episodes']}), "
          f"SE {s['se']:.3f}")
    print(f"[bench] {format_contacts(summary['unintended_contacts']['overall'])}")
    for k in summary["skipped"]:
        print(f"[bench] skipped {k['task_id']} ({k['category']}): {k['reason']}", file=sys.stderr)
    print(f"[bench] wrote {out / 'results.json'}, {report}, {out / 'index.html'}")
    return 0 if len(records) == len(tasks) else 1
