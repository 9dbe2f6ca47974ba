"""`spatial-manip tasks`: generate a task suite (tasks.jsonl + one scene file per task)."""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from spatial_manip.cli import output_dir, positive_int
from spatial_manip.sim import object_sets, sdf_export, tasks
from spatial_manip.sim.tasks import SUITES
from spatial_manip.progress import progress


def add_arguments(p: argparse.ArgumentParser) -> None:
    names = "; ".join(f"{s.name}: {s.help} (default count {s.default_count})" for s in SUITES.values())
    p.add_argument("--suite", default="smoke", choices=sorted(SUITES), help=f"suite name. {names}")
    p.add_argument("--count", type=positive_int, default=None, help="number of tasks (default: the suite's)")
    p.add_argument("--seed", type=int, default=0, help="seed: the same seed gives the same tasks and scenes")
    p.add_argument("--out", required=True, type=output_dir, help="output folder: writes OUT/tasks.jsonl and OUT/scenes/<id>.json")
    p.add_argument("--pool", type=positive_int, default=None, help="scenes per scene kind (default: count/3, 9..45)")
    object_sets.add_objects_argument(p)
    p.add_argument("--sdf", action="store_true",
                   help="also write each scene's Gazebo world beside it: OUT/scenes/<id>.sdf (+ .calibration.yaml)")


def run(args) -> int:
    count = args.count if args.count is not None else SUITES[args.suite].default_count
    try:
        object_sets.add_folders(args.objects)
        gen = tasks.Generator(args.suite, count, args.seed, args.pool)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with progress(total=count, desc=f"tasks[{args.suite}]", unit="task") as bar:
        items = list(gen.generate(bar.update))
    path = tasks.write(args.out, items)
    if args.sdf:
        for task, scene in items:
            sdf_export.write_world(scene, (path.parent / task.scene).with_suffix(".sdf"))
        urdf = sdf_export.default_robot_urdf()
        print(f"wrote {len(items)} SDF worlds beside the scenes (robot: {urdf})")
        if not urdf.is_file() or sdf_export.urdf_links_without_inertial(urdf):
            print(f"warning: {urdf} is missing or has links without <inertial>; Gazebo cannot load the robot")
    fams = Counter(t.family_key for t, _ in items)
    levels = Counter(t.difficulty for t, _ in items)
    print(f"wrote {len(items)} tasks of {len(fams)} families to {path} "
          f"(difficulty: {dict(sorted(levels.items()))})")
    missing = [f.key for f in gen.families if f.key not in fams]
    if missing:
        print(f"note: no compatible scene in the pool for {missing}; try a larger --count or --pool")
    return 0 if len(items) == count else 1
