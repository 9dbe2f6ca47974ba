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

`--demo-noise-seed N` records the first look of `spatial-manip demo`'s scene instead (its default
instruction, the noise draws of seed N), as a task whose answer is the book the words pick;
`--demo-frame K` records the K-th frame of those draws instead of the first (K = 0): a live demo's
first look takes whichever frame the camera stream has reached, so its noise varies between runs.
`--frame K` does the same for generated tasks: a bench's place task looks after its pick, and
its look has taken the episode's second frame (K = 1; place-80-00004 at 71af7a5).

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
from spatial_manip.reasoning.compound import plan_compound
from spatial_manip.reasoning.planner import make_planner
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


def demo_task(noise_seed: int, seed: int = 0, frame: int = 0):
    """(task, scene) of `spatial-manip demo`'s default: its scene (demo.find_scene from `seed`),
    the instruction, the book it picks and the reference it names, drawn with `noise_seed`; the
    task's id names `frame` when it is not the first."""
    from spatial_manip.bench import demo              # the demo's client pulls in the ROS graph's modules

    scene_seed, scene = demo.find_scene(demo.DEFAULT_INSTRUCTION, seed)
    planner = make_planner("program")
    pick, _ = plan_compound(scene, demo.DEFAULT_INSTRUCTION, "auto",
                                lambda sc, text, kind: planner.plan(sc, text, task_kind=kind))
    named = [o.id for o in scene.objects if o.category == "reference" and o.label in demo.DEFAULT_INSTRUCTION]
    task = SimpleNamespace(id=f"demo-{scene_seed}-noise{noise_seed}" + (f"-frame{frame}" if frame else ""),
                           suite="demo", action="pick",
                           instruction=demo.DEFAULT_INSTRUCTION, program=f"pick and place by {', '.join(named)}",
                           answer=list(pick.targets), scene_seed=int(noise_seed))
    return task, scene


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=SUITES)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--count", type=int, help="tasks the generator makes for the seed (as the bench's)")
    ap.add_argument("--only", nargs="+", default=[], help="the task ids to record (e.g. pick-52-00005)")
    ap.add_argument("--demo-noise-seed", type=int, help="record the demo scene's first look with these noise draws "
                                                        "instead of generated tasks")
    ap.add_argument("--demo-frame", type=int, default=0, help="with --demo-noise-seed: record this frame of the "
                                                             "draws (0: the first), as a live look may take")
    ap.add_argument("--frame", type=int, default=0, help="with --suite: record this frame of the episode's draws "
                                                        "(0: the first), as the bench's look may take")
    ap.add_argument("--catalogue", choices=("library", "episode"), default="library")
    ap.add_argument("--why", required=True, help="what this frame shows: the rule it motivated or the wrong name")
    ap.add_argument("--out", default="test/perception/frames")
    sensing.add_arguments(ap, default="realistic")
    args = ap.parse_args(argv)
    profile = sensing.from_args(args)
    command = "python -m spatial_manip.bench.record_frames " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    if args.demo_noise_seed is not None:
        if args.demo_frame < 0:
            ap.error(f"--demo-frame is a frame count >= 0, got {args.demo_frame}")
        task, scene = demo_task(args.demo_noise_seed, frame=args.demo_frame)
        look = first_look(task, scene, catalogue=args.catalogue, library=library_for(args.catalogue), profile=profile,
                          skip=args.demo_frame)
        print(record(look, args.out, sensing_label=profile.label, why=args.why, command=command))
        return 0
    if args.frame < 0:
        ap.error(f"--frame is a frame count >= 0, got {args.frame}")
    if not (args.suite and args.seed is not None and args.count and args.only):
        ap.error("give --suite, --seed, --count and --only (the generated tasks to record), or --demo-noise-seed")
    with _quiet_stderr():
        items = {t.id: (t, s) for t, s in T.generate(args.suite, args.count, args.seed)}
    unknown = sorted(set(args.only) - set(items))
    if unknown:
        print(f"record_frames: {', '.join(unknown)} not among the {args.count} {args.suite} tasks of seed {args.seed} "
              f"({', '.join(sorted(items))}): give the task's seed and a --count past its index", file=sys.stderr)
        return 2
    for task_id in args.only:
        task, scene = items[task_id]
        look = first_look(task, scene, catalogue=args.catalogue, library=library_for(args.catalogue), profile=profile,
                          skip=args.frame)
        print(record(look, args.out, sensing_label=profile.label, why=args.why, command=command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
