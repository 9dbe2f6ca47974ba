"""Record benchmark tasks' first looks as regression frames (issue 37): an episode that motivated
a perception rule, or that perception still names wrongly, becomes a frame in the repository that
a test perceives again, instead of a comment citing the episode.

A frame is a folder named after its task:
- observation.npz: the colour and depth image as sim_node publishes them (depth in whole
  millimetres, the sensing profile's noise and calibration error), `workspace.sources`' format;
- workspace.json: what the planner is told (the catalogue: the enrolled library by default);
- truth.json: the simulator's scene, read only by the scoring (never by perception);
- frame.json: the task, the arm's pose, the objects the task needs and how much of each is in
  view, the sensing profile, the command that recorded it, and why it was kept (`--why`).

    python -m spatial_manip.bench.record_frames --suite pick --seed 52 --count 6 --only pick-52-00005 \\
        --sensing realistic --why "the white book leaning on its wedge was named the brown mug" \\
        --out test/perception/frames

test/perception/test_recorded_frames.py perceives each frame with the agent's perceive stage and
scores it as `reference_bench` scores a live task.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from spatial_manip.bench.reference_bench import SUITES, FirstLook, _quiet_stderr, first_look
from spatial_manip.scene import Scene
from spatial_manip.sim import sensing
from spatial_manip.sim import tasks as T
from spatial_manip.sim.library import library_for
from spatial_manip.workspace.sources import load_observation, save_observation

TASK_FIELDS = ("id", "suite", "action", "instruction", "program", "answer", "scene_seed")


def record(look: FirstLook, out_dir: str | Path, *, sensing_label: str, why: str, command: str = "") -> Path:
    """Write `look` as a frame folder under `out_dir`; returns the folder."""
    folder = Path(out_dir) / look.task.id
    folder.mkdir(parents=True, exist_ok=True)
    save_observation(look.obs, folder / "observation.npz")
    look.workspace.save(folder / "workspace.json")
    look.truth.save(folder / "truth.json")
    meta = {"task": {k: getattr(look.task, k) for k in TASK_FIELDS},
            "tcp_pose": np.round(look.tcp_pose, 6).tolist(), "joints": np.round(look.joints, 6).tolist(),
            "refs": list(look.refs), "visible": {k: round(float(v), 4) for k, v in look.visible.items()},
            "sensing": sensing_label, "why": why, "command": command}
    (folder / "frame.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder


def load(folder: str | Path) -> tuple[FirstLook, dict]:
    """A recorded frame as the FirstLook the bench scores, and its frame.json."""
    folder = Path(folder)
    meta = json.loads((folder / "frame.json").read_text())
    look = FirstLook(task=SimpleNamespace(**meta["task"]), obs=load_observation(folder / "observation.npz"),
                     workspace=Scene.load(folder / "workspace.json"), truth=Scene.load(folder / "truth.json"),
                     tcp_pose=np.asarray(meta["tcp_pose"], float), joints=np.asarray(meta["joints"], float),
                     refs=list(meta["refs"]), visible=dict(meta["visible"]))
    return look, meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True, choices=SUITES)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True, help="tasks the generator makes for the seed (as the bench's)")
    ap.add_argument("--only", nargs="+", required=True, help="the task ids to record (e.g. pick-52-00005)")
    ap.add_argument("--catalogue", choices=("library", "episode"), default="library")
    ap.add_argument("--why", required=True, help="what this frame shows: the rule it motivated or the wrong name")
    ap.add_argument("--out", default="test/perception/frames")
    sensing.add_arguments(ap, default="realistic")
    args = ap.parse_args(argv)
    profile = sensing.from_args(args)
    with _quiet_stderr():
        items = {t.id: (t, s) for t, s in T.generate(args.suite, args.count, args.seed)}
    unknown = sorted(set(args.only) - set(items))
    if unknown:
        print(f"record_frames: {', '.join(unknown)} not among the {args.count} {args.suite} tasks of seed {args.seed} "
              f"({', '.join(sorted(items))}): give the task's seed and a --count past its index", file=sys.stderr)
        return 2
    command = "python -m spatial_manip.bench.record_frames " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    for task_id in args.only:
        task, scene = items[task_id]
        look = first_look(task, scene, catalogue=args.catalogue, library=library_for(args.catalogue), profile=profile)
        print(record(look, args.out, sensing_label=profile.label, why=args.why, command=command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
