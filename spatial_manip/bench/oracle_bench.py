"""`spatial-manip oracle`: run the ground-truth oracle on generated tasks, write OUT/results.json."""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from spatial_manip.progress import progress
from spatial_manip.scene import Scene
from spatial_manip.sim import metrics, oracle, sensing, tasks
from spatial_manip.sim.oracle import KinematicWorld, SimWorldAdapter


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", required=True, help="tasks.jsonl written by `spatial-manip tasks`")
    p.add_argument("--out", required=True, help="output folder for results.json")
    p.add_argument("--world", default="auto", choices=["auto", "mujoco", "kinematic"],
                   help="mujoco: SimWorld; kinematic: the labelled kinematic fallback; auto: mujoco")
    sensing.add_arguments(p)   # the oracle reads no camera: of the profile, the arm's kinematic error reaches it


def _world_factory(name: str, profile):
    """(task -> (scene -> world)), and the world's label."""
    if name in ("auto", "mujoco"):   # mujoco is a runtime requirement (sim.oracle imports it): auto is mujoco
        return (lambda task: lambda scene: SimWorldAdapter(scene, sensing=profile, seed=task.scene_seed),
                f"mujoco, sensing {profile.label}")
    return (lambda task: KinematicWorld), "kinematic (fallback, no physics, no sensing)"


def run(args) -> int:
    profile = sensing.from_args(args)
    factory, label = _world_factory(args.world, profile)
    items = tasks.load(args.tasks)
    results = []
    t0 = time.perf_counter()
    for task, path in progress(items, desc=f"oracle[{label.split()[0].rstrip(',')}]", unit="ep"):
        results.append(oracle.solve(task, Scene.load(path), factory(task)))
    wall = time.perf_counter() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    s = metrics.summarize(results)
    doc = {"world": label, "sensing": profile.to_dict(), "summary": s.to_dict(), "episodes_per_hour": 3600 * len(results) / max(wall, 1e-9),
           "episodes": [r.to_dict() for r in results]}
    (out / "results.json").write_text(json.dumps(doc, indent=1))
    print(metrics.report_table(results, "difficulty"))
    print(f"world: {label}")
    print(f"TSR {100 * s.tsr:.1f}% ({s.successes}/{s.episodes}), SE {s.se:.2f}, "
          f"{doc['episodes_per_hour']:.0f} episodes/hour; failures {s.failures}")
    print(f"wrote {out / 'results.json'}")
    return 0
