"""`spatial-manip geometry-bench`: how fast the geometry core is on this machine.

Measures (median and p95 over repeats, milliseconds):
- back-projection of a 1024x768 depth frame (`camera.backproject`);
- `box_2d_to_box_3d` per object at 640x480 and 1024x768, on ray-cast boxes lying on a table
  seen from random eye-to-hand poses (optionally with the L515 noise model).
Each is compared with a straightforward per-pixel Python loop doing the same pixels' work in the
same process (back-projection, or back-projection to base plus min/max extents for a box), so
the ratio means something on a loaded machine. Targets: <= 5 ms per object at 640x480 and
<= 10 ms at 1024x768.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from spatial_manip.geometry import synthetic as S
from spatial_manip.geometry.boxes import BoxFitError, box_2d_to_box_3d
from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.progress import progress

TARGET_MS = {(640, 480): 5.0, (1024, 768): 10.0}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--objects", type=int, default=30, help="objects (scenes) per resolution (default 30)")
    p.add_argument("--repeats", type=int, default=5, help="timed calls per object / frame (default 5)")
    p.add_argument("--baseline-objects", type=int, default=3, help="objects run through the Python loop (slow)")
    p.add_argument("--noise", action="store_true", help="apply the L515 noise model to the depth")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")


def _stats(times_s) -> dict:
    t = np.asarray(times_s) * 1000
    return {"median_ms": float(np.median(t)), "p95_ms": float(np.percentile(t, 95)), "n": int(t.size)}


def _timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def loop_backproject(depth: np.ndarray, intr: CameraIntrinsics) -> list:
    """The baseline: one pixel at a time, in Python."""
    pts = []
    for v in range(depth.shape[0]):
        for u in range(depth.shape[1]):
            z = float(depth[v, u])
            if z > 0.05 and z < 10.0:
                pts.append(((u - intr.cx) * z / intr.fx, (v - intr.cy) * z / intr.fy, z))
    return pts


def loop_box(obs, box) -> tuple:
    """The baseline for a box: back-project the box's pixels to base one by one, track extents."""
    x0, y0, x1, y1 = box
    R, t, i = obs.T_base_cam[:3, :3].tolist(), obs.T_base_cam[:3, 3].tolist(), obs.intrinsics
    lo, hi = [np.inf] * 3, [-np.inf] * 3
    for v in range(y0, y1):
        for u in range(x0, x1):
            z = float(obs.depth_m[v, u])
            if not (0.05 < z < 10.0):
                continue
            pc = ((u - i.cx) * z / i.fx, (v - i.cy) * z / i.fy, z)
            for k in range(3):
                pb = R[k][0] * pc[0] + R[k][1] * pc[1] + R[k][2] * pc[2] + t[k]
                lo[k], hi[k] = min(lo[k], pb), max(hi[k], pb)
    return lo, hi


def _scenes(w: int, h: int, n: int, rng: np.random.Generator, noise: bool):
    intr = CameraIntrinsics.from_fovy(w, h, 55)
    while n > 0:
        b = S.random_lying_box(rng)
        obs = S.render(intr, S.random_camera(rng), [b])
        seg = obs.segmentation == 0
        bb = S.box_pixel_bounds(obs, 0, pad_px=max(4, w // 100))
        if bb is None or seg.sum() < 300 or seg[[0, -1]].any() or seg[:, [0, -1]].any():
            continue
        if noise:
            obs.depth_m = L515Noise().apply(obs.depth_m, rng)
        n -= 1
        yield b, obs, bb


def bench_backprojection(repeats: int, rng) -> dict:
    intr = CameraIntrinsics.from_fovy(1024, 768, 55)
    obs = S.render(intr, S.random_camera(rng), [S.random_lying_box(rng)])
    fast = _stats(_timed(lambda: backproject(obs.depth_m, intr), max(repeats, 10)))
    slow = _stats(_timed(lambda: loop_backproject(obs.depth_m, intr), 1))
    return {"resolution": "1024x768", **fast, "python_loop_ms": slow["median_ms"],
            "speedup_vs_loop": slow["median_ms"] / fast["median_ms"]}


def bench_boxes(w: int, h: int, args, rng) -> dict:
    times, loop_times, errors, failures = [], [], [], 0
    scenes = _scenes(w, h, args.objects, rng, args.noise)
    for k, (truth, obs, bb) in enumerate(progress(scenes, total=args.objects, desc=f"box_2d_to_box_3d {w}x{h}",
                                              leave=False)):
        box_2d_to_box_3d(obs, bb)  # warm caches (first call of a crop size)
        try:
            times += _timed(lambda: box_2d_to_box_3d(obs, bb), args.repeats)
            errors.append(float(np.linalg.norm(box_2d_to_box_3d(obs, bb).center - truth.center)))
        except BoxFitError:
            failures += 1
        if k < args.baseline_objects:
            loop_times += _timed(lambda: loop_box(obs, bb), 1)
    s = _stats(times)
    loop_ms = float(np.median(loop_times)) * 1000 if loop_times else float("nan")
    return {"resolution": f"{w}x{h}", **s, "target_ms": TARGET_MS[(w, h)],
            "meets_target": s["median_ms"] <= TARGET_MS[(w, h)], "python_loop_ms": loop_ms,
            "speedup_vs_loop": loop_ms / s["median_ms"], "centre_error_median_mm": 1000 * float(np.median(errors)),
            "centre_error_p95_mm": 1000 * float(np.percentile(errors, 95)), "failures": failures}


def run(args) -> int:
    rng = np.random.default_rng(args.seed)
    report = {"noise": bool(args.noise), "backprojection": bench_backprojection(args.repeats, rng),
              "box_2d_to_box_3d": [bench_boxes(w, h, args, rng) for w, h in ((640, 480), (1024, 768))]}
    bp = report["backprojection"]
    print(f"back-projection 1024x768: median {bp['median_ms']:.2f} ms, p95 {bp['p95_ms']:.2f} ms "
          f"(python loop {bp['python_loop_ms']:.0f} ms, x{bp['speedup_vs_loop']:.0f})")
    for r in report["box_2d_to_box_3d"]:
        print(f"box_2d_to_box_3d {r['resolution']}: median {r['median_ms']:.2f} ms, p95 {r['p95_ms']:.2f} ms per "
              f"object (target {r['target_ms']:.0f} ms: {'met' if r['meets_target'] else 'MISSED'}); python loop "
              f"{r['python_loop_ms']:.0f} ms, x{r['speedup_vs_loop']:.0f}; centre error median "
              f"{r['centre_error_median_mm']:.1f} mm, p95 {r['centre_error_p95_mm']:.1f} mm; {r['failures']} failures")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0
