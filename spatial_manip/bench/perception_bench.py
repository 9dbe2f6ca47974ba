"""Perception benchmark: speed and accuracy of segmenters on frames with known answers.

The planner benchmark calls `run(...)`; `python -m spatial_manip.bench.perception_bench` prints the
same figures. Without frames it renders MuJoCo tabletop scenes (perception.synthetic). Timing
is per `segment()` call after one warm-up; accuracy matches detections to the ground-truth
objects by centre (one-to-one, gated), so it needs no labels. The ground_truth backend, run on
the same frames in the same process, is the baseline the ratio is against.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from spatial_manip.observation import RGBDObservation
from spatial_manip.perception import SegmentationHints, make_segmenter
from spatial_manip.perception.base import UNREPORTED_CATEGORIES
from spatial_manip.perception.synthetic import SyntheticObject, default_objects, render_tabletop
from spatial_manip.scene import Scene


@dataclass
class BackendFigures:
    backend: str
    times_s: list = field(default_factory=list)
    found: int = 0
    expected: int = 0
    false_positives: int = 0
    centre_errors_m: list = field(default_factory=list)

    def summary(self) -> dict:
        t = np.asarray(self.times_s) if self.times_s else np.array([np.nan])
        e = np.asarray(self.centre_errors_m) if self.centre_errors_m else np.array([np.nan])
        return {"backend": self.backend, "calls": len(self.times_s),
                "median_ms": float(np.median(t) * 1e3), "p95_ms": float(np.percentile(t, 95) * 1e3),
                "recall": self.found / max(self.expected, 1), "false_positives": self.false_positives,
                "centre_err_mean_cm": float(np.mean(e) * 100), "centre_err_max_cm": float(np.max(e) * 100)}


def default_frames(*, noise_m: float = 0.0, seed: int = 0) -> list[tuple[RGBDObservation, Scene]]:
    """Three 640x480 tabletop renders (top view, side view, touching books), optionally with
    Gaussian depth noise of `noise_m` and 2 % dropped pixels."""

    frames = [render_tabletop(default_objects()),
              render_tabletop(default_objects(), camera_pos=(0.25, 0.7, 1.2)),
              render_tabletop([SyntheticObject("red book", (0.2, 0.14, 0.022), (0.65, 0.07), 0, (0.85, 0.12, 0.1, 1), "book"),
                               SyntheticObject("blue book", (0.2, 0.14, 0.022), (0.65, -0.07), 0, (0.1, 0.25, 0.85, 1), "book")])]
    if noise_m > 0:
        rng = np.random.default_rng(seed)
        noisy = []
        for obs, scene in frames:
            d = obs.depth_m + rng.normal(0, noise_m, obs.depth_m.shape).astype(np.float32)
            d[rng.random(d.shape) < 0.02] = 0.0
            noisy.append((replace(obs, depth_m=d), scene))
        frames = noisy
    return frames


def run(*, backends: Sequence[str] = ("classical",), frames=None, repeats: int = 5,
        configs: dict | None = None, baseline: str | None = "ground_truth",
        match_gate_m: float = 0.05, use_hints: bool = True) -> dict:
    """Time and score each backend on `frames` (pairs of observation and ground-truth scene).

    Returns {"backends": [summary per backend], "baseline": name, "ratio_vs_baseline":
    {backend: median time / baseline median}, "frames": n}."""
    frames = default_frames() if frames is None else list(frames)
    configs = configs or {}
    names = list(dict.fromkeys(list(backends) + ([baseline] if baseline else [])))
    figures = {}
    for name in names:
        seg = make_segmenter(name, **configs.get(name, {}))
        fig = BackendFigures(name)
        for obs, scene in frames:
            hints = SegmentationHints.from_scene(scene) if use_hints else None
            if name == "ground_truth" and obs.segmentation is None:
                continue
            seg.segment(obs, hints=hints)          # warm-up (imports, caches)
            for _ in range(repeats):
                t0 = time.perf_counter()
                dets = seg.segment(obs, hints=hints)
                fig.times_s.append(time.perf_counter() - t0)
            _score(fig, dets, scene, match_gate_m)
        figures[name] = fig
    base = figures.get(baseline) if baseline else None
    base_med = np.median(base.times_s) if base and base.times_s else None
    return {"frames": len(frames), "baseline": baseline,
            "backends": [figures[n].summary() for n in names],
            "ratio_vs_baseline": {n: float(np.median(figures[n].times_s) / base_med)
                                  for n in names if base_med and figures[n].times_s}}


def _score(fig: BackendFigures, dets, scene: Scene, gate_m: float) -> None:
    truth = [o for o in scene.objects if o.category not in UNREPORTED_CATEGORIES]
    fig.expected += len(truth)
    if not dets or not truth:
        fig.false_positives += len(dets)
        return
    errors = matched_centre_errors([d.box.center for d in dets], [o.center for o in truth], gate_m)
    fig.found += len(errors)
    fig.false_positives += len(dets) - len(errors)
    fig.centre_errors_m.extend(errors.tolist())


def matched_centre_errors(found, truth, gate_m: float) -> np.ndarray:
    """Found centres matched one-to-one to true ones (the assignment of least total distance),
    the distances of the pairs within `gate_m`."""
    if not len(found) or not len(truth):
        return np.empty(0)
    dist = np.linalg.norm(np.asarray(found, float)[:, None] - np.asarray(truth, float)[None], axis=2)
    rows, cols = linear_sum_assignment(dist)
    pair = dist[rows, cols]
    return pair[pair <= gate_m]


def format_report(result: dict) -> str:
    lines = [f"perception benchmark: {result['frames']} frames, baseline {result['baseline']}",
             f"{'backend':<14}{'median ms':>10}{'p95 ms':>9}{'recall':>8}{'FP':>4}{'err mean cm':>12}{'err max cm':>11}{'x baseline':>11}"]
    for s in result["backends"]:
        ratio = result["ratio_vs_baseline"].get(s["backend"], float("nan"))
        lines.append(f"{s['backend']:<14}{s['median_ms']:>10.1f}{s['p95_ms']:>9.1f}{s['recall']:>8.2f}"
                     f"{s['false_positives']:>4d}{s['centre_err_mean_cm']:>12.2f}{s['centre_err_max_cm']:>11.2f}{ratio:>11.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", nargs="+", default=["classical"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--noise-m", type=float, default=0.0, help="Gaussian depth noise (metres)")
    args = ap.parse_args(argv)
    print(format_report(run(backends=args.backends, repeats=args.repeats,
                            frames=default_frames(noise_m=args.noise_m))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
