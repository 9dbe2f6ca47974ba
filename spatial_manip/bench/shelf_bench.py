"""How well `capture-workspace --shelf` finds a shelf's boards and slots, against the simulator's
own boxes over generated shelf scenes (every layout, several seeds, L515 depth noise).

    python -m spatial_manip.bench.shelf_bench --seeds 0 1 2 3 4
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from spatial_manip.workspace.shelf import capture_shelf
from spatial_manip.sim.capture_cell import render_cell, shelf_accuracy, shelf_cell


def run_one(layout: str, seed: int, noise_seed: int = 0) -> dict:
    truth = shelf_cell(layout, seed)
    cap = capture_shelf(render_cell(truth, seed=noise_seed))
    return {"layout": layout, "seed": seed, "notes": cap.notes, **shelf_accuracy(cap.scene, truth)}


def scene_line(r: dict, label: str | None = None) -> str:
    found = [s for s in r["slots"] if s["found"]]
    full = [s for s in found if not s["truncated"]]
    board = np.abs(r["board_errors_m"]) if r["board_errors_m"] else np.zeros(1)
    centre = [s["centre_error_m"] for s in full] or [0.0]
    label = label or f"{r['layout']:>6} seed {r['seed']:>2}"
    return (f"{label}: slots {len(found)}/{len(r['slots'])} found, "
            f"{len(r['spurious'])} spurious; boards max {1000 * board.max():.1f} mm; slot centre max "
            f"{1000 * max(centre):.1f} mm, IoU min {min([s['iou'] for s in full] or [1.0]):.2f}, size max "
            f"{1000 * max([s['size_error_m'] for s in full] or [0.0]):.1f} mm"
            + (f" ({len(found) - len(full)} cut by the image)" if len(found) > len(full) else ""))


def summary(results: list[dict]) -> str:
    slots = [s for r in results for s in r["slots"]]
    full = [s for s in slots if s["found"] and not s["truncated"]]
    boards = np.abs([e for r in results for e in r["board_errors_m"]])
    centre = np.array([s["centre_error_m"] for s in full])
    return (f"all: {sum(s['found'] for s in slots)}/{len(slots)} slots found, "
            f"{sum(len(r['spurious']) for r in results)} spurious; board height error median "
            f"{1000 * np.median(boards):.1f} mm, max {1000 * boards.max():.1f} mm ({len(boards)} faces); slot centre "
            f"median {1000 * np.median(centre):.1f} mm, max {1000 * centre.max():.1f} mm; IoU median "
            f"{np.median([s['iou'] for s in full]):.2f}, min {min(s['iou'] for s in full):.2f}; size error max "
            f"{1000 * max(s['size_error_m'] for s in full):.1f} mm ({len(full)} slots in full view)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layouts", nargs="+", default=["panels", "grid", "combo"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    args = p.parse_args(argv)
    results = []
    for layout in args.layouts:
        for seed in args.seeds:
            try:
                results.append(run_one(layout, seed))
            except Exception as e:     # a failed capture is a result of the bench, not its end
                print(f"{layout:>6} seed {seed:>2}: capture failed: {e}")
                continue
            print(scene_line(results[-1]))
    if results:
        print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
