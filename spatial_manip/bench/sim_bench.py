"""`spatial-manip sim-bench`: time one environment update of the MuJoCo world (apply a motion, let
physics settle, render RGB, depth and segmentation), the unit ESPIRE reports at 11.65 s."""
from __future__ import annotations

import time

import numpy as np

from spatial_manip.progress import progress
from spatial_manip.sim.layouts import sample_scene
from spatial_manip.sim.world import SimConfig, SimWorld

ESPIRE_UPDATE_S = 11.65


def add_arguments(p) -> None:
    p.add_argument("--updates", type=int, default=30, help="environment updates to time (default 30)")
    p.add_argument("--kind", choices=("tabletop", "shelf"), default="tabletop")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--step-m", type=float, default=0.03, help="TCP displacement per update (default 0.03 m)")


def run(args) -> int:
    if args.updates < 1:
        raise SystemExit("--updates must be at least 1")
    t0 = time.perf_counter()
    world = SimWorld(sample_scene(args.kind, args.seed), config=SimConfig(width=args.width, height=args.height),
                     seed=args.seed)
    build_s = time.perf_counter() - t0
    try:
        world.render()                        # first render creates the GL context: not an update
        T0 = world.tcp_pose()
        total, motion, render = [], [], []
        for i in progress(range(args.updates), desc="sim updates", unit="update"):
            T = T0.copy()
            T[1, 3] += args.step_m * (1 if i % 2 == 0 else -1) * 0.5
            T[2, 3] += args.step_m * (0.5 if i % 4 < 2 else -0.5)
            a = time.perf_counter()
            world.move_tcp(T, speed_mps=0.25)      # moves, then settles the physics
            b = time.perf_counter()
            obs = world.render()                   # RGB + depth + segmentation
            c = time.perf_counter()
            assert obs.segmentation is not None
            total.append(c - a), motion.append(b - a), render.append(c - b)
    finally:
        world.close()
    med, p95 = float(np.median(total)), float(np.percentile(total, 95))
    print(f"sim-bench: {args.kind} seed {args.seed}, {args.width}x{args.height}, {args.updates} updates "
          f"(TCP step {args.step_m * 100:.1f} cm), model build {build_s:.2f} s")
    print(f"  update (motion + settle + render): median {med * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")
    print(f"  motion + settle: median {np.median(motion) * 1000:.1f} ms;  render RGB+depth+seg: median "
          f"{np.median(render) * 1000:.1f} ms, p95 {np.percentile(render, 95) * 1000:.1f} ms")
    print(f"  ESPIRE reports {ESPIRE_UPDATE_S:.2f} s per update: {ESPIRE_UPDATE_S / med:.0f}x faster "
          f"(target: median well under 0.5 s -> {'met' if med < 0.5 else 'NOT met'})")
    return 0
