"""Memory and file-descriptor soak of the simulated graph (issue 24): many reset-and-goal cycles
through the same sim, planner and grasp nodes, sampling each node's resident memory, open file
descriptors and threads after every goal.

    spatial-manip soak --goals 200 --seed 11 --out outputs/soak

Prints a line per goal and every `--report-every` goals a table of every node's RSS, fds and
threads; at the end a table per node: after the first goal (the baseline), after goal 14, the peak
and the last, with the growth over the second half of the run per 100 goals (a leak grows without
bound; a cache fills and stays flat). Writes soak.csv and soak.png.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import psutil

from spatial_manip.bench.runner import prepare_tasks
from spatial_manip.bench.domains import hold_domains
from spatial_manip.bench.sim_session import command_main, prepare_output, refuse, sim_session
from spatial_manip.bench.worker import WorkspaceRevision, _run_episode
from spatial_manip.perception import segmenter_names
from spatial_manip.sim import sensing
from spatial_manip.sim.sensing import SensingProfile
from spatial_manip.sim.tasks import SUITES

MB = 1024 * 1024
REPORT_EVERY = 20


class NodeUsage(NamedTuple):
    rss_mb: float
    fds: int
    threads: int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--goals", type=int, default=200, help="reset-and-goal cycles (at least 2)")
    p.add_argument("--suite", default="all", help="task suite the goals are drawn from")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--segmenter", default="classical")
    p.add_argument("--domain", type=int, default=None, help="ROS_DOMAIN_ID of the soak's own graph (default: one "
                   "no other measurement on this machine holds)")
    p.add_argument("--report-every", type=int, default=REPORT_EVERY,
                   help="goals between the tables of every node's RSS, fds and threads (default %(default)s)")
    p.add_argument("--out", required=True, help="output directory (tasks, soak.csv, soak.png)")
    sensing.add_arguments(p)


def node_usage(graph) -> dict[str, NodeUsage]:
    """{node name: its resident MB, open file descriptors and threads} of each running node,
    counting the processes it started (a node's renderer or sandbox lives in its own process)."""
    out = {}
    for name, popen in graph.processes().items():
        try:
            proc = psutil.Process(popen.pid)
            procs = [proc] + proc.children(recursive=True)
            out[name] = NodeUsage(sum(p.memory_info().rss for p in procs) / MB, sum(p.num_fds() for p in procs),
                                  sum(p.num_threads() for p in procs))
        except psutil.NoSuchProcess:
            out[name] = NodeUsage(float("nan"), 0, 0)
    return out


def growth_per_100(goals: np.ndarray, values: np.ndarray) -> float:
    """Least-squares slope of `values` over the second half of the run, per 100 goals: what a
    leak adds; a cache filled in the first goals adds nothing here."""
    half = goals >= goals.max() / 2
    if half.sum() < 2:
        return float("nan")
    return float(np.polyfit(goals[half], values[half], 1)[0] * 100)


def summary_rows(samples: list[dict]) -> list[dict]:
    """One row per node: baseline (goal 1), goal 14, peak, last, growth per 100 goals (RSS, fds,
    threads)."""
    rows = []
    for name in samples[0]["usage"]:
        goals = np.array([s["goal"] for s in samples], float)
        rss = np.array([s["usage"][name][0] for s in samples])
        fds = np.array([s["usage"][name][1] for s in samples], float)
        threads = np.array([s["usage"][name][2] for s in samples], float)
        at14 = rss[min(13, len(rss) - 1)]
        rows.append({"node": name, "rss_first_mb": rss[0], "rss_goal14_mb": at14, "rss_peak_mb": np.nanmax(rss),
                     "rss_last_mb": rss[-1], "rss_growth_mb_per_100": growth_per_100(goals, rss),
                     "fds_first": int(fds[0]), "fds_last": int(fds[-1]), "fds_growth_per_100": growth_per_100(goals, fds),
                     "threads_first": int(threads[0]), "threads_last": int(threads[-1]),
                     "threads_growth_per_100": growth_per_100(goals, threads)})
    return rows


def print_summary(rows: list[dict], successes: int, goals: int, elapsed_s: float) -> None:
    print(f"\n[soak] {goals} goals in {elapsed_s / 60:.1f} min, {successes} succeeded")
    print(f"{'node':14s} {'RSS goal 1':>11s} {'goal 14':>9s} {'peak':>9s} {'last':>9s} {'MB/100 goals':>13s}"
          f" {'fds 1':>6s} {'fds last':>8s} {'fds/100':>8s} {'thr 1':>6s} {'thr last':>8s} {'thr/100':>8s}")
    for r in rows:
        print(f"{r['node']:14s} {r['rss_first_mb']:9.0f}MB {r['rss_goal14_mb']:7.0f}MB {r['rss_peak_mb']:7.0f}MB "
              f"{r['rss_last_mb']:7.0f}MB {r['rss_growth_mb_per_100']:+13.1f} {r['fds_first']:6d} {r['fds_last']:8d} "
              f"{r['fds_growth_per_100']:+8.1f} {r['threads_first']:6d} {r['threads_last']:8d} "
              f"{r['threads_growth_per_100']:+8.1f}")


def usage_table(goal: int, successes: int, usage: dict[str, NodeUsage]) -> str:
    """The periodic report: every node's RSS, fds and threads after `goal` goals."""
    lines = [f"[soak] after goal {goal} ({successes} succeeded):"]
    lines += [f"[soak]   {name:14s} {u.rss_mb:7.0f} MB {u.fds:5d} fds {u.threads:4d} threads" for name, u in usage.items()]
    return "\n".join(lines)


def write_outputs(samples: list[dict], out: Path) -> None:
    names = list(samples[0]["usage"])
    with open(out / "soak.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["goal", "elapsed_s", "success", "error_code"]
                   + [f"{n}_{k}" for n in names for k in ("rss_mb", "fds", "threads")])
        for s in samples:
            w.writerow([s["goal"], round(s["elapsed_s"], 1), int(s["success"]), s.get("error_code", "")]
                       + [v for n in names for v in (round(s["usage"][n][0], 1), s["usage"][n][1], s["usage"][n][2])])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_mem, ax_fd) = plt.subplots(1, 2, figsize=(11, 4))
    goals = [s["goal"] for s in samples]
    for n in names:
        ax_mem.plot(goals, [s["usage"][n][0] for s in samples], label=n)
        ax_fd.plot(goals, [s["usage"][n][1] for s in samples], label=n)
    ax_mem.set(xlabel="goal", ylabel="resident memory (MB)", title="memory per node")
    ax_fd.set(xlabel="goal", ylabel="open file descriptors", title="file descriptors per node")
    ax_mem.legend()
    fig.tight_layout()
    fig.savefig(out / "soak.png", dpi=100)
    plt.close(fig)


def soak(tasks: list[dict], out: Path, segmenter: str, profile: SensingProfile, samples: list[dict],
         report_every: int = REPORT_EVERY) -> None:
    """Run every task once through one graph, appending a sample to `samples` after each goal
    (filled as it goes: a soak stopped early keeps what it measured)."""
    from spatial_manip_interfaces.srv import CheckSuccess, ResetTask

    backends = {"segmenter": segmenter, "planner": "program", "grasp": "antipodal", "arm": "sim",
                "sensing": profile.label}
    successes, t_start = 0, time.monotonic()
    with sim_session(out, segmenter, profile, "spatial_manip_soak") as (graph, node):
        reset = node.create_client(ResetTask, "/sim/reset_task")
        check = node.create_client(CheckSuccess, "/sim/check_success")
        revision = WorkspaceRevision(node)
        if not reset.wait_for_service(timeout_sec=90.0):
            raise RuntimeError("the sim node did not come up within 90 s; see graph.log")
        for k, task in enumerate(tasks, 1):
            dead = graph.dead()
            if dead:
                raise RuntimeError(f"a node died during the soak: {', '.join(dead)}; see graph.log")
            rec = _run_episode(node, task, reset, check, revision, backends, 120.0, time.monotonic())
            successes += bool(rec["success"])
            usage = node_usage(graph)
            code = rec.get("planner_error", "")
            samples.append({"goal": k, "elapsed_s": time.monotonic() - t_start, "success": rec["success"],
                            "error_code": code, "usage": usage})
            print(f"[soak] {k}/{len(tasks)} {'ok  ' if rec['success'] else 'fail'} {code:<16s} "
                  + " | ".join(f"{n} {u.rss_mb:.0f} MB {u.fds} fds {u.threads} thr" for n, u in usage.items()),
                  flush=True)
            if k % report_every == 0 or k == len(tasks):
                print(usage_table(k, successes, usage), flush=True)


def argument_problem(args) -> str:
    """What is wrong with the arguments, before any task is generated or node started ("" = fine)."""

    if args.goals < 2:
        return "--goals must be at least 2"
    if args.report_every < 1:
        return f"--report-every must be at least 1, got {args.report_every}"
    if args.suite not in SUITES:
        return f"unknown --suite {args.suite!r}; choose one of {', '.join(sorted(SUITES))}"
    if args.segmenter not in segmenter_names():
        return f"unknown --segmenter {args.segmenter!r}; choose one of {', '.join(segmenter_names())}"
    return ""


def run(args) -> int:
    problem = argument_problem(args)
    if problem:
        return refuse("soak", problem)
    out = prepare_output(args.out, hold_domains(1, first=args.domain)[0])
    profile = sensing.from_args(args)
    print(f"[soak] generating {args.goals} {args.suite} tasks (seed {args.seed}), sensing {profile.label}", flush=True)
    tasks = prepare_tasks(args.suite, args.goals, args.seed, out)[:args.goals]
    t0, samples = time.monotonic(), []
    try:
        soak(tasks, out, args.segmenter, profile, samples, args.report_every)
    except KeyboardInterrupt:           # Ctrl-C or SIGTERM: the goals measured so far are the result
        print(f"[soak] stopped after {len(samples)} of {len(tasks)} goals", flush=True)
        if len(samples) < 2:
            return 130
    print_summary(summary_rows(samples), sum(bool(s["success"]) for s in samples), len(samples),
                  time.monotonic() - t0)
    write_outputs(samples, out)
    print(f"[soak] wrote {out / 'soak.csv'} and {out / 'soak.png'}")
    return 0 if len(samples) == len(tasks) else 130


def main(argv=None) -> int:
    return command_main("spatial-manip soak", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
