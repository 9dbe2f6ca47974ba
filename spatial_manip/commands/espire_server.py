"""`spatial-manip espire-server`: serve ESPIRE's evaluation protocol over our MuJoCo world.

ESPIRE's own client (spatigen/espire-eval) and its model drivers connect unchanged: its
config.yaml's defaults (server port 6001, client port 6000, 127.0.0.1) match ours.
`--bench N` instead runs N episodes per model-free driver (the oracle and random clicks) against a
server in a child process and prints their pick and place rates beside ESPIRE's Table 9, the
environment-update time and the per-request latencies.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time

from spatial_manip.bench.espire_bench import run_bench
from spatial_manip.espire import feasible
from spatial_manip.espire.server import EspireServer
from spatial_manip.scene import Scene
from spatial_manip.sim import sensing, tasks
from spatial_manip.sim.tasks import SUITES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (p.description or "") + (
        ". WARNING: whoever connects moves the simulated arm; the server binds to 127.0.0.1 unless "
        "--host says otherwise, and has no authentication.")
    p.add_argument("--suite", default="smoke", choices=sorted(SUITES), help="task suite, as `spatial-manip tasks` (default smoke)")
    p.add_argument("--count", type=int, default=None, help="number of tasks (default: the suite's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the task generator (same seed, same tasks)")
    p.add_argument("--pool", type=int, default=None, help="scenes per scene kind (default: count/3, 9..45)")
    p.add_argument("--tasks", nargs="+", default=None, metavar="TASKS_JSONL",
                   help="serve these tasks.jsonl files (from `spatial-manip tasks --out`) instead of generating")
    p.add_argument("--tasks-out", default=None, metavar="DIR",
                   help="write the served tasks (after the feasibility filter) to DIR/tasks.jsonl and DIR/scenes/, "
                        "for `--tasks` and `espire-eval --cell-config` on exactly these tasks")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; 0.0.0.0 lets any host on the network move the arm)")
    p.add_argument("--server-port", type=int, default=6001, help="port the server receives on (client's server.port, default 6001)")
    p.add_argument("--client-port", type=int, default=6000, help="port the server publishes replies on (client's client.port, default 6000)")
    p.add_argument("--session-timeout", type=float, default=600.0,
                   help="seconds of silence after which another session may take over an unfinished task (default 600); "
                        "a client's sockets opening or closing never end its session")
    sensing.add_arguments(p, default="ideal")      # ideal: ESPIRE's clean renders
    p.add_argument("--max-episodes", type=int, default=None, help="exit after this many END_TASKs (default: serve until Ctrl-C)")
    p.add_argument("--quiet", action="store_true", help="print errors and the summary only, not a line per request")
    p.add_argument("--bench", type=int, default=None, metavar="N",
                   help="benchmark: run N episodes per driver against a server in a child process, print figures")
    p.add_argument("--driver", default="oracle,random",
                   help="with --bench: comma-separated model-free drivers, 'oracle' (clicks the marked goal: the "
                        "ceiling) and 'random' (random pixels: the floor); default both")


def load_tasks(args, profile, log=print) -> list:
    """The served tasks: generated or read, then only those the oracle completes with the
    server's arm (espire/feasible.py), as ESPIRE filters its instances."""
    if args.tasks:
        out = []
        for path in args.tasks:
            out += [(t, Scene.load(p)) for t, p in tasks.load(path)]
        return feasible.feasible(out, log, profile)
    count = args.count or tasks.SUITES[args.suite].default_count
    return feasible.generate_feasible(args.suite, count, args.seed, args.pool, log, profile)


def run(args) -> int:
    if args.bench is not None:
        return run_bench(args)
    profile = sensing.from_args(args)
    t0 = time.perf_counter()
    try:
        items = load_tasks(args, profile)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not items:
        print("error: none of the tasks can be completed by the server's arm (see the 'dropped' lines); "
              "try another --seed or more --count", file=sys.stderr)
        return 2
    if args.tasks_out:
        print(f"[espire] wrote the served tasks to {tasks.write(args.tasks_out, items)}", flush=True)
    print(f"[espire] {len(items)} tasks ready in {time.perf_counter() - t0:.1f} s "
          f"({', '.join(sorted({t.action for t, _ in items}))}); sensing {args.sensing}"
          + (f" without {args.sensing_off}" if args.sensing_off else ""), flush=True)
    try:
        server = EspireServer(items, host=args.host, server_port=args.server_port, client_port=args.client_port,
                              session_timeout_s=args.session_timeout, verbose=not args.quiet,
                              log=lambda s: print(s, flush=True), sensing=profile)
    except Exception as e:     # zmq.ZMQError: port in use, bad address
        print(f"error: cannot bind {args.host}:{args.server_port}/{args.client_port}: {e}", file=sys.stderr)
        return 2
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print(f"[espire] serving: requests on {server.endpoints[0]} (PULL), replies on {server.endpoints[1]} (PUB); "
          "one session at a time", flush=True)
    try:
        server.serve(max_episodes=args.max_episodes, should_stop=lambda: bool(stop))
    except KeyboardInterrupt:
        pass
    finally:
        print(server.stats.summary(), flush=True)
        server.close()
    return 0
