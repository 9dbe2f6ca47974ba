"""`spatial-manip espire-eval --server HOST:PORT`: our perception + planner as an ESPIRE driver.

Connects to any ESPIRE-protocol server (ours: `spatial-manip espire-server`), plays its tasks
with the pixels our stack chooses (stack_driver.py), writes ESPIRE-client logs that ESPIRE's
analyze.py reads plus DIR/results.jsonl, and prints localization and execution success per
family. `--summarize DIR` prints the table again from a results file.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from spatial_manip.espire.client import EspireProtocolClient
from spatial_manip.espire.stack_driver import StackDriver, StackPolicy, load_results, load_scenes, summarize
from spatial_manip.sim.library import load_default_library


def add_arguments(p) -> None:
    p.add_argument("--server", default="127.0.0.1:6001", metavar="HOST:PORT",
                   help="where the server receives requests (default 127.0.0.1:6001, ESPIRE's config.yaml)")
    p.add_argument("--client-port", type=int, default=6000,
                   help="port the server publishes replies on, same host (default 6000)")
    p.add_argument("--out", default="outputs/espire_eval", help="log folder: DIR/results.jsonl and DIR/<n>_<task>/run.log")
    p.add_argument("--count", type=int, default=None, help="play the first N tasks of the server's list (default all)")
    p.add_argument("--segmenter", default="classical", help="perception backend (default classical)")
    p.add_argument("--planner", default="program", help="planner backend (default program)")
    p.add_argument("--localizing-trials", type=int, default=1,
                   help="LOCALIZE attempts (default 1: the stack is deterministic, a retry repeats its pixel)")
    p.add_argument("--moving-trials", type=int, default=5, help="MOVE attempts, each after a fresh look (default 5, as ESPIRE)")
    p.add_argument("--cell-config", default=None, metavar="TASKS_JSONL",
                   help="give the stack what a lab configures for its cell: the fixtures and the shelf's slots "
                        "(empty: their contents are perceived) from the `spatial-manip tasks` file the server "
                        "serves, the book in the gripper, and the enrolled library (--library) as the catalogue; "
                        "never the episode's objects. Default: none, only observations and the instruction, as a "
                        "model driver gets")
    p.add_argument("--library", default=None, metavar="JSON",
                   help="with --cell-config: the enrolled object library (default config/library/sim_assets.json)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for one reply (default 120)")
    p.add_argument("--summarize", default=None, metavar="DIR", help="only print the per-family table of DIR/results.jsonl")


def run(args) -> int:
    if args.summarize:
        recs = load_results(Path(args.summarize) / "results.jsonl")
        print(summarize(recs))
        return 0
    host, _, port = args.server.rpartition(":")
    if not host or not port.isdigit():
        print(f"error: --server must be HOST:PORT, got {args.server!r}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scenes = load_scenes(args.cell_config) if args.cell_config else None
    library = None
    if scenes is not None:
        try:
            library = load_default_library(args.library)
        except (OSError, ValueError) as e:
            print(f"error: --library: expected an enrolled library JSON (spatial-manip enroll), got {args.library!r}: {e}",
                  file=sys.stderr)
            return 2
    policy = StackPolicy(args.segmenter, args.planner, scenes=scenes, library=library)
    endpoint = dict(host=host, server_port=int(port), client_port=args.client_port, timeout_s=args.timeout)
    try:
        with EspireProtocolClient(**endpoint) as c:
            tasks = c.call("GET_TASK_LIST")["tasks"]
    except TimeoutError:
        print(f"error: no reply from an ESPIRE server at {args.server} (replies on port {args.client_port})",
              file=sys.stderr)
        return 2
    tasks = tasks[: args.count] if args.count else tasks
    mode = "cell configuration + enrolled library" if scenes is not None else "observations + instruction only"
    print(f"[espire-eval] {len(tasks)} tasks from {args.server}; segmenter {args.segmenter}, planner {args.planner}; "
          f"knowledge: {mode}; logs in {out}", flush=True)
    records = []
    t0 = time.perf_counter()
    with open(out / "results.jsonl", "w") as f:
        for i, task in enumerate(tasks):
            # a new client (new session id) per episode, as ESPIRE's start() does
            with EspireProtocolClient(**endpoint) as c:
                rec = StackDriver(c, policy, localizing_trials=args.localizing_trials,
                                  moving_trials=args.moving_trials, log_dir=out).run(task, i)
            rec["knowledge"] = "cell_config" if scenes is not None else "none"
            records.append(rec)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            ch = rec["choices"][0] if rec["choices"] else {}
            loc = sum(bool(r["localize"]) and any(u["success"] for u in r["localize"]) for r in records)
            ex = sum(any(u["success"] for u in r["move"]) for r in records)
            why = f" ({ch.get('error')[:70]})" if ch.get("error") else f" -> {ch.get('target')}"
            print(f"  [{i + 1}/{len(tasks)}] {task['id']} {task.get('family_key', '')}: "
                  f"localized={any(u['success'] for u in rec['localize'])} "
                  f"executed={any(u['success'] for u in rec['move'])} moves={len(rec['move'])}{why} "
                  f"({rec['wall_s']:.1f} s; so far {loc}/{len(records)} localized, {ex}/{len(records)} executed)"
                  + (f" ERROR {rec['error']}" if rec["error"] else ""), flush=True)
    wall = time.perf_counter() - t0
    print(f"[espire-eval] {len(records)} episodes in {wall:.0f} s ({wall / max(1, len(records)):.1f} s each); "
          f"knowledge: {mode}")
    print(summarize(records))
    print(f"[espire-eval] wrote {out / 'results.jsonl'} and one run.log per episode (ESPIRE's analyze.py reads {out})")
    return 0
