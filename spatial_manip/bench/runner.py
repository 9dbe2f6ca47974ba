"""`spatial-manip bench`: generated tasks through the real ROS graph, one graph per worker in
its own ROS_DOMAIN_ID, with a progress bar. Writes DIR/results.json (one record per episode),
DIR/report.md (TSR and SE overall and per family, timing percentiles) with PNG plots, and
DIR/index.html (the trace viewer). Deterministic for a seed; resumable (finished episodes are
kept in DIR/episodes/*.jsonl and skipped on the next run)."""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", default="smoke", help="task suite (see `spatial-manip tasks --help`)")
    p.add_argument("--episodes", type=int, default=10, help="number of tasks")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="parallel graphs (each in its own ROS domain)")
    p.add_argument("--out", required=True, help="output directory (re-run to resume)")
    p.add_argument("--segmenter", default="classical", help="perception backend: classical | ground_truth")
    p.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="run workers as local processes, or as Ray tasks (ray must be installed)")


def prepare_tasks(suite: str, episodes: int, seed: int, out: Path) -> list[dict]:
    """Generate (or reuse, for resume) the task suite; each record gets its scene's absolute path."""
    from spatial_manip.sim import tasks as T

    tasks_file = out / "tasks" / "tasks.jsonl"
    if not tasks_file.is_file():
        T.write(out / "tasks", T.generate(suite, episodes, seed))
    records = [json.loads(line) for line in tasks_file.read_text().splitlines() if line.strip()]
    for r in records:
        r["scene_path"] = str((tasks_file.parent / r["scene"]).resolve())
    return records


def load_done(out: Path) -> dict[str, dict]:
    done = {}
    for f in sorted((out / "episodes").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                done[rec["task_id"]] = rec
    return done


def _domain_ids(k: int) -> list[int]:
    base = random.SystemRandom().randint(1, 100 - k)
    return [base + i for i in range(k)]


def run_local(chunks: list[list[dict]], out: Path, segmenter: str, total: int, done: int) -> None:
    from tqdm import tqdm

    procs = []
    for i, (chunk, dom) in enumerate(zip(chunks, _domain_ids(len(chunks)))):
        if not chunk:
            continue
        cf = out / "todo" / f"w{i}.jsonl"     # not under episodes/: only results live there
        cf.parent.mkdir(exist_ok=True)
        cf.write_text("".join(json.dumps(t) + "\n" for t in chunk))
        cmd = [sys.executable, "-m", "spatial_manip.bench.worker", "--tasks", str(cf),
               "--out", str(out / "episodes" / f"w{i}.{int(time.time())}.jsonl"), "--domain", str(dom),
               "--segmenter", segmenter, "--log", str(out / f"worker{i}.log")]
        procs.append(subprocess.Popen(cmd, env={**os.environ, "ROS_DOMAIN_ID": str(dom)}))
    with tqdm(total=total, initial=done, desc="episodes", unit="ep") as bar:
        while any(p.poll() is None for p in procs):
            n = len(load_done(out))
            bar.update(n - bar.n)
            time.sleep(1.0)
        bar.update(len(load_done(out)) - bar.n)
    failed = [i for i, p in enumerate(procs) if p.returncode != 0]
    if failed:
        print(f"[bench] worker(s) {failed} exited with an error; see {out}/worker*.log. "
              "Re-run the same command to resume.", file=sys.stderr)


def run_ray(chunks: list[list[dict]], out: Path, segmenter: str) -> None:
    try:
        import ray
    except ImportError as e:
        raise SystemExit("--backend ray needs Ray: pip install 'ray==2.60.0' (then `ray start --head` on a "
                         "cluster, or nothing for local mode)") from e
    ray.init(ignore_reinit_error=True, address=os.environ.get("RAY_ADDRESS"))

    @ray.remote(num_cpus=1)
    def work(chunk, i, dom):
        from spatial_manip.bench.worker import run_worker

        os.environ["ROS_DOMAIN_ID"] = str(dom)
        run_worker(chunk, out / "episodes" / f"r{i}.{int(time.time())}.jsonl", segmenter=segmenter,
                   log_path=out / f"worker{i}.log")
        return i

    ray.get([work.remote(c, i, d) for i, (c, d) in enumerate(zip(chunks, _domain_ids(len(chunks)))) if c])


def percentiles(xs) -> dict:
    if not len(xs):
        return {}
    a = np.asarray(xs, float)
    return {"p50": round(float(np.percentile(a, 50)), 3), "p90": round(float(np.percentile(a, 90)), 3),
            "p95": round(float(np.percentile(a, 95)), 3), "max": round(float(a.max()), 3)}


def summarize(records: list[dict]) -> dict:
    from spatial_manip.sim.metrics import step_efficiency

    def block(rs):
        n = len(rs)
        ok = sum(r["success"] for r in rs)
        se = [step_efficiency(r["success"], r["steps"], r["golden_steps"]) for r in rs]
        return {"episodes": n, "successes": ok, "tsr": round(ok / n, 4) if n else 0.0,
                "se": round(float(np.mean(se)), 4) if n else 0.0}

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
            "stage_time_s": {s: percentiles([r["stage_times_s"].get(s, 0.0) for r in records]) for s in stages}}


def write_report(records: list[dict], out: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = summarize(records)
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
    ax.boxplot([[r["stage_times_s"].get(st, 0.0) for r in records] for st in stages] or [[0]],
               tick_labels=stages or ["-"])
    ax.set_ylabel("seconds")
    fig.tight_layout()
    fig.savefig(out / "time_per_stage.png", dpi=100)
    plt.close(fig)

    o = s["overall"]
    lines = [f"# {title}", "", f"{o['episodes']} episodes: TSR {o['tsr'] * 100:.1f}%, SE {o['se']:.3f}", "",
             "| group | episodes | TSR | SE |", "|---|---|---|---|"]
    for name, b in list(s["by_action"].items()) + list(s["by_family"].items()):
        if b["episodes"]:
            lines.append(f"| {name} | {b['episodes']} | {b['tsr'] * 100:.1f}% | {b['se']:.3f} |")
    lines += ["", "Failures: " + (", ".join(f"{k} {v}" for k, v in sorted(s["failures"].items())) or "none"), "",
              f"Time per episode (s): {s['time_s']}", "", "| stage | p50 | p90 | p95 | max |", "|---|---|---|---|---|"]
    for st, p in s["stage_time_s"].items():
        lines.append(f"| {st} | {p['p50']} | {p['p90']} | {p['p95']} | {p['max']} |")
    lines += ["", "![success by family](success_by_family.png)", "", "![time per stage](time_per_stage.png)", ""]
    (out / "report.md").write_text("\n".join(lines))
    (out / "summary.json").write_text(json.dumps(s, indent=1))
    return out / "report.md"


def run(args) -> int:
    from spatial_manip.bench.trace_page import render_index

    out = Path(args.out).resolve()
    (out / "episodes").mkdir(parents=True, exist_ok=True)
    tasks = prepare_tasks(args.suite, args.episodes, args.seed, out)
    done = load_done(out)
    todo = [t for t in tasks if t["id"] not in done]
    print(f"[bench] {len(tasks)} tasks, {len(done)} done, {len(todo)} to run on {args.workers} worker(s)")
    chunks = [todo[i::max(1, args.workers)] for i in range(max(1, args.workers))]
    if todo:
        if args.backend == "ray":
            run_ray(chunks, out, args.segmenter)
        else:
            run_local(chunks, out, args.segmenter, len(tasks), len(done))
    done = load_done(out)
    order = {t["id"]: i for i, t in enumerate(tasks)}
    records = sorted((r for r in done.values() if r["task_id"] in order), key=lambda r: order[r["task_id"]])
    (out / "results.json").write_text(json.dumps(records, indent=1))
    report = write_report(records, out, f"{args.suite}: {len(records)} episodes, seed {args.seed}, "
                                         f"segmenter {args.segmenter}")
    render_index(records, out, title=f"benchmark {args.suite} (seed {args.seed})")
    s = summarize(records)["overall"]
    print(f"[bench] TSR {s['tsr'] * 100:.1f}% ({s['successes']}/{s['episodes']}), SE {s['se']:.3f}")
    print(f"[bench] wrote {out / 'results.json'}, {report}, {out / 'index.html'}")
    return 0 if len(records) == len(tasks) else 1
