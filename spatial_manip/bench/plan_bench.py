"""`spatial-manip plan-bench`: time the planner per instruction (target: < 50 ms median for the
`program` backend on a scene file).

By default it plans ESPIRE Table 10's example instructions on the built-in example scenes
(`reasoning/examples.py`), each `--repeat` times, and prints median and p95 per instruction and
overall, plus the ratio against a baseline measured in the same process (loading the scene
file alone), so a slow machine shows up as a slow baseline rather than a slow planner.

    spatial-manip plan-bench [--scene FILE --instruction TEXT ...] [--repeat 20]
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.scene import Scene
from spatial_manip.progress import progress


def add_arguments(p) -> None:
    p.add_argument("--scene", action="append", default=[], help="scene file (repeatable); default: built-in scenes")
    p.add_argument("--instruction", action="append", default=[],
                   help="instruction (repeatable), planned on every --scene; default: Table 10's examples")
    p.add_argument("--repeat", type=int, default=20, help="runs per instruction (default 20)")
    p.add_argument("--backend", default="program")
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _cases(args) -> list[tuple[str, str]]:
    """(scene file, instruction) pairs."""
    if args.scene:
        if not args.instruction:
            raise SystemExit("plan-bench: --scene needs at least one --instruction")
        return [(s, i) for s in args.scene for i in args.instruction]

    tmp = Path(tempfile.mkdtemp(prefix="plan_bench_"))
    files = {"table": tmp / "table.json", "shelf": tmp / "shelf.json", "held": tmp / "held_table.json"}
    ex.table_scene().save(files["table"])
    ex.shelf_scene().save(files["shelf"])
    ex.held_table_scene().save(files["held"])
    return ([(str(files["table"]), i) for i in ex.TABLE_INSTRUCTIONS]
            + [(str(files["shelf"]), i) for i in ex.SHELF_INSTRUCTIONS]
            + [(str(files["held"]), i) for i in ex.METRIC_INSTRUCTIONS])


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def run(args) -> int:

    if args.repeat < 1:
        raise SystemExit("plan-bench: --repeat must be at least 1")
    planner = make_planner(args.backend)
    cases = _cases(args)
    rows, all_ms, base_ms, failures = [], [], [], 0
    for scene_file, text in progress(cases, desc="plan-bench", unit="instr"):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            Scene.load(scene_file)                     # baseline: reading the scene file
            t1 = time.perf_counter()
            res = planner.plan(Scene.load(scene_file), text)   # what `plan` does: load + plan
            t2 = time.perf_counter()
            base_ms.append((t1 - t0) * 1e3)
            times.append((t2 - t1) * 1e3)
        failures += 0 if res.ok else 1
        all_ms += times
        rows.append({"scene": Path(scene_file).name, "instruction": text, "ok": res.ok,
                     "median_ms": statistics.median(times), "p95_ms": _pct(times, 0.95)})
    summary = {"instructions": len(rows), "runs": len(all_ms), "failed": failures,
               "median_ms": statistics.median(all_ms), "p95_ms": _pct(all_ms, 0.95),
               "baseline_load_median_ms": statistics.median(base_ms)}
    summary["ratio_vs_baseline"] = summary["median_ms"] / max(summary["baseline_load_median_ms"], 1e-9)
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}))
        return 0
    for r in rows:
        flag = "" if r["ok"] else "  (planning error)"
        print(f"{r['median_ms']:7.2f} {r['p95_ms']:7.2f} ms  [{r['scene']}] {r['instruction']}{flag}")
    print(f"overall: median {summary['median_ms']:.2f} ms, p95 {summary['p95_ms']:.2f} ms over "
          f"{summary['runs']} runs of {summary['instructions']} instructions (target < 50 ms median); "
          f"scene-load baseline {summary['baseline_load_median_ms']:.2f} ms, ratio {summary['ratio_vs_baseline']:.1f}x; "
          f"{failures} instructions ended in a planning error")
    return 0
