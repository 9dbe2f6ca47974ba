"""`spatial-manip espire-server --bench N`: the server in a child process, N episodes of the
model-free HighlightDriver over ZeroMQ, then the figures: episodes/hour, the environment-update
time the server reports (observation render, MOVE execution) and client round trips per request
type. The driver's pixels come from the goal box, so the rates measure the server, not a VLM."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

ESPIRE_UPDATE_S = 11.65     # ESPIRE Table 9: Isaac Sim on a GPU, seconds per environment update


def server_command(args, max_episodes: int | None) -> list[str]:
    cmd = [sys.executable, "-m", "spatial_manip.cli", "espire-server", "--host", args.host,
           "--server-port", str(args.server_port), "--client-port", str(args.client_port), "--quiet"]
    if args.tasks:
        cmd += ["--tasks", *args.tasks]
    else:
        cmd += ["--suite", args.suite, "--seed", str(args.seed)]
        cmd += ["--count", str(args.count)] if args.count else []
        cmd += ["--pool", str(args.pool)] if args.pool else []
    if max_episodes is not None:
        cmd += ["--max-episodes", str(max_episodes)]
    return cmd


def start_server(cmd: list[str], ready_timeout_s: float = 300.0) -> subprocess.Popen:
    """Start the server and wait for its 'serving' line (task generation comes first)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy())
    deadline = time.monotonic() + ready_timeout_s
    for line in proc.stdout:
        if "serving:" in line:
            return proc
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError(f"espire-server did not start: {' '.join(cmd)} (exit {proc.wait()})")


def run_bench(args) -> int:
    from spatial_manip.espire.client import EspireProtocolClient, HighlightDriver

    n = int(args.bench)
    if n < 1:
        raise SystemExit("--bench needs at least 1 episode")
    proc = start_server(server_command(args, n))
    logs = []
    try:
        with EspireProtocolClient(args.host, args.server_port, args.client_port) as c:
            tasks = c.call("GET_TASK_LIST")["tasks"]
        t0 = time.perf_counter()
        for i in range(n):
            # a new client (new sid) per episode, as ESPIRE's start() does
            with EspireProtocolClient(args.host, args.server_port, args.client_port) as c:
                logs.append(HighlightDriver(c).run(tasks[i % len(tasks)]))
            print(f"  episode {i + 1}/{n} {logs[-1].task_id}: localized={logs[-1].localized} moved={logs[-1].moved} "
                  f"finish_goal={logs[-1].finish_goal} ({logs[-1].wall_s:.1f} s)", flush=True)
        wall = time.perf_counter() - t0
    finally:
        out, _ = proc.communicate(timeout=60)
    print(report(logs, wall))
    print("server side:\n" + "\n".join(line for line in out.splitlines() if line.startswith("  ") or "espire-server:" in line))
    return 0


def report(logs: list, wall_s: float) -> str:
    ups = [u for lg in logs for u in lg.update_s]
    rt: dict = {}
    for lg in logs:
        for k, v in lg.round_trips.items():
            rt.setdefault(k, []).extend(v)
    lines = [f"espire bench: {len(logs)} episodes in {wall_s:.1f} s = {3600 * len(logs) / wall_s:.0f} episodes/hour "
             f"(one client, model-free driver)",
             f"  localization met {sum(lg.localized for lg in logs)}/{len(logs)}, execution goal met "
             f"{sum(lg.moved for lg in logs)}/{len(logs)}, finish_goal {sum(lg.finish_goal for lg in logs)}/{len(logs)}"]
    if ups:
        med = float(np.median(ups))
        lines.append(f"  environment update (server): median {1000 * med:.0f} ms, p95 {1000 * np.percentile(ups, 95):.0f} ms "
                     f"over {len(ups)} updates; ESPIRE {ESPIRE_UPDATE_S} s -> {ESPIRE_UPDATE_S / med:.0f}x faster")
    for k, v in sorted(rt.items()):
        lines.append(f"  round trip {k:<18} median {1000 * np.median(v):7.1f} ms  p95 {1000 * np.percentile(v, 95):7.1f} ms  n={len(v)}")
    return "\n".join(lines)
