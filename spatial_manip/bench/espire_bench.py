"""`spatial-manip espire-server --bench N`: the server in a child process, N episodes of each
model-free driver (`--driver oracle,random`) over ZeroMQ on the same tasks, then the figures:
pick and place success per driver beside ESPIRE's Table 9, the environment-update time the
server reports (observation render, MOVE execution), episodes/hour and client round trips.

The oracle clicks the goal box the server draws (the ceiling the server and its arm allow); the
random driver clicks uniform random pixels (the floor). On place tasks the oracle's MOVE also
carries the pose the task asks for (protocol.SET_DOWN_DELTAS), which the server executes; the
random driver sends no `rotation_delta`, as ESPIRE's stock client does. Neither is a VLM. The
server sets the book down only at a point on the placement area it marks (ESPIRE places only "on
the target area"), releases it there (physics says where it ends) and holds ESPIRE's trial
budget (episode.py). Success is given as ESPIRE's `analyze` prints it both ways: the goal met at
END_TASK ("finish_goal") and only where a LOCALIZE hit an answer too ("localized & goal"); the
supplementary does not say which of the two Table 9 reports."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from spatial_manip.espire.client import DRIVERS, EspireProtocolClient, make_driver

REPLY_TIMEOUT_S = 300.0    # a loaded machine: a reply this late means the server is gone
ESPIRE_UPDATE_S = 11.65     # ESPIRE Table 9: Isaac Sim on a GPU, seconds per environment update
# ESPIRE supplementary, Table 9 (w/o reflection): success (%) on pick and on place
ESPIRE_TABLE9 = {"Gemini2.5-Pro": (34.06, 15.70), "InternVL3-78B": (17.26, 9.67), "RoboBrain2.0-7B": (10.87, 8.64),
                 "Qwen3-VL-8B": (29.32, 12.41), "Qwen3-VL-30B-A3B": (32.15, 20.00), "Qwen3-VL-235B-A22B": (26.76, 19.34)}


def server_command(args, max_episodes: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "spatial_manip.cli", "espire-server", "--host", args.host,
           "--server-port", str(args.server_port), "--client-port", str(args.client_port), "--quiet"]
    if args.tasks:
        cmd += ["--tasks", *args.tasks]
    else:
        cmd += ["--suite", args.suite, "--seed", str(args.seed)]
        cmd += ["--count", str(args.count)] if args.count else []
        cmd += ["--pool", str(args.pool)] if args.pool else []
    cmd += ["--tasks-out", args.tasks_out] if getattr(args, "tasks_out", None) else []
    cmd += ["--sensing", args.sensing] + (["--sensing-off", args.sensing_off] if args.sensing_off else [])
    if max_episodes is not None:
        cmd += ["--max-episodes", str(max_episodes)]
    return cmd


def start_server(cmd: list[str], ready_timeout_s: float = 900.0) -> subprocess.Popen:
    """Start the server and wait for its 'serving' line (task generation and the feasibility
    filter come first)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy())
    deadline = time.monotonic() + ready_timeout_s
    for line in proc.stdout:
        if "serving:" in line:
            return proc
        if line.startswith(("[espire]", "error")):
            print(line.rstrip(), flush=True)
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError(f"espire-server did not start: {' '.join(cmd)} (exit {proc.wait()})")


def parse_drivers(text: str) -> list[str]:
    names = [n.strip() for n in str(text).split(",") if n.strip()]
    bad = [n for n in names if n not in DRIVERS]
    if not names or bad:
        raise SystemExit(f"--driver: expected a comma-separated list of {sorted(DRIVERS)}, got {text!r}")
    return names


def run_bench(args) -> int:
    n = int(args.bench)
    if n < 1:
        raise SystemExit(f"--bench needs at least 1 episode, got {n}")
    drivers = parse_drivers(getattr(args, "driver", "oracle"))
    proc = start_server(server_command(args, n * len(drivers)))
    logs: dict = {d: [] for d in drivers}
    try:
        with EspireProtocolClient(args.host, args.server_port, args.client_port, timeout_s=REPLY_TIMEOUT_S) as c:
            tasks = c.call("GET_TASK_LIST")["tasks"]
        t0 = time.perf_counter()
        for name in drivers:
            for i in range(n):
                # a new client (new sid) per episode, as ESPIRE's start() does
                with EspireProtocolClient(args.host, args.server_port, args.client_port, timeout_s=REPLY_TIMEOUT_S) as c:
                    lg = make_driver(name, c, seed=args.seed * 1000 + i).run(tasks[i % len(tasks)])
                logs[name].append(lg)
                print(f"  {name} {i + 1}/{n} {lg.task_id}: localized={lg.localized} moved={lg.moved} "
                      f"finish_goal={lg.finish_goal} ({lg.wall_s:.1f} s)", flush=True)
        wall = time.perf_counter() - t0
    finally:
        out, _ = proc.communicate(timeout=120)
    what = f"suite {args.suite} seed {args.seed}" if not args.tasks else "tasks " + " ".join(args.tasks)
    print(report(logs, wall, f"{what}; sensing {args.sensing}" + (f" without {args.sensing_off}" if args.sensing_off else "")))
    print("server side:\n" + "\n".join(line for line in out.splitlines()
                                       if line.startswith("  ") or "espire-server:" in line or "feasible" in line))
    return 0


def _rate(logs: list, action: str, attr: str) -> str:
    sel = [lg for lg in logs if lg.action == action]
    if not sel:
        return "   -   "
    k = sum(bool(getattr(lg, attr)) for lg in sel)
    return f"{k}/{len(sel)} ({100 * k / len(sel):.0f}%)"


def report(logs: dict, wall_s: float, what: str) -> str:
    every = [lg for v in logs.values() for lg in v]
    lines = [(f"espire bench ({what}; SET_TASK rotation [null, null, null]; a place MOVE sets the book "
              f"down only on the marked placement area, at its point, in the pose its driver chose; "
              f"ESPIRE's budget of 3 LOCALIZE and 5 MOVE): {len(every)} episodes "
              f"in {wall_s:.1f} s = {3600 * len(every) / max(wall_s, 1e-9):.0f} episodes/hour (one client at a time)")]
    cols = [(a, k, f"{a}: {label}") for a in ("pick", "place")
            for k, label in (("localized", "localized"), ("finish_goal", "finish_goal"), ("localized_and_finished", "localized & goal"))]
    lines.append(f"  {'driver':<10} " + " ".join(f"{head:>23}" for _, _, head in cols))
    for name, lgs in logs.items():
        lines.append(f"  {name:<10} " + " ".join(f"{_rate(lgs, a, k):>23}" for a, k, _ in cols))
    lines.append("  ESPIRE Table 9 (success, w/o reflection): " + ", ".join(
        f"{m} pick {p:.1f}% place {q:.1f}%" for m, (p, q) in ESPIRE_TABLE9.items()))
    ups = [u for lg in every for u in lg.update_s]
    if ups:
        med = float(np.median(ups))
        lines.append(f"  environment update (server): median {1000 * med:.0f} ms, p95 {1000 * np.percentile(ups, 95):.0f} ms "
                     f"over {len(ups)} updates; ESPIRE {ESPIRE_UPDATE_S} s -> {ESPIRE_UPDATE_S / med:.0f}x faster")
    rt: dict = {}
    for lg in every:
        for k, v in lg.round_trips.items():
            rt.setdefault(k, []).extend(v)
    for k, v in sorted(rt.items()):
        lines.append(f"  round trip {k:<18} median {1000 * np.median(v):7.1f} ms  p95 {1000 * np.percentile(v, 95):7.1f} ms  n={len(v)}")
    return "\n".join(lines)
