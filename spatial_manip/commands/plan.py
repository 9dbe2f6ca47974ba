"""`spatial-manip plan`: plan one instruction on a scene file (the planner node's code path).

    spatial-manip plan --scene scene.json --instruction "take the leftmost book" --json

Exit status 0 when it planned; 1 with the error object when it could not (TARGET_NOT_FOUND,
AMBIGUOUS, NOT_UNDERSTOOD, INVALID_GOAL, ...); 2 for a bad command line.
"""
from __future__ import annotations

import json
import sys

import yaml

from spatial_manip.errors import InvalidGoalError, SpatialManipError
from spatial_manip.reasoning.planner import PlanResult, make_planner
from spatial_manip.scene import Scene, SceneFormatError


def add_arguments(p) -> None:
    p.add_argument("--scene", required=True, help="scene file (JSON; its format is spatial_manip/scene.py's docstring; "
                   "`spatial-manip tasks --out DIR` writes one per task in DIR/scenes/)")
    p.add_argument("--instruction", required=True, help="the instruction in English")
    p.add_argument("--json", action="store_true", help="print one JSON object (action, targets, place_pose, program, error, notes; "
                   "a pick and place in one instruction adds steps)")
    p.add_argument("--backend", default="program", help="planner backend: program (default), openai, transformers")
    p.add_argument("--task-kind", default="auto", choices=["auto", "pick", "place"],
                   help="pick or place when the instruction has no verb (default: place if the robot holds a book)")
    p.add_argument("--config", help="YAML with backend settings (see config/params/planner_backends.yaml)")
    p.add_argument("--trace", action="store_true", help="also print the trace (with --json: under 'trace')")


def _backend_config(path: str | None, backend: str) -> dict:
    if not path:
        return {}

    with open(path) as f:
        data = yaml.safe_load(f) or {}
    return dict((data.get("planner") or data).get(backend) or {})


def run(args) -> int:
    try:
        scene = Scene.load(args.scene)
        planner = make_planner(args.backend, **_backend_config(args.config, args.backend))
        result = planner.plan(scene, args.instruction, task_kind=args.task_kind)
    except SceneFormatError as e:
        result = PlanResult.failure(InvalidGoalError(f"bad scene file: {e}"))
    except (ValueError, TypeError) as e:       # unknown backend name, bad config keys
        result = PlanResult.failure(InvalidGoalError(str(e)))
    except SpatialManipError as e:             # e.g. a backend that is unavailable here
        result = PlanResult.failure(e)
    if args.json:
        out = result.to_json()
        if args.trace:
            out["trace"] = result.trace
        print(json.dumps(out))
    else:
        _print_human(result, args.trace)
    return 0 if result.ok else 1


def _print_human(result, show_trace: bool) -> None:
    if result.program:
        print(f"program:    {result.program}")
    if not result.ok:
        print(f"error:      {result.error['code']}: {result.error['message']}", file=sys.stderr)
        return
    print(f"action:     {result.action}")
    for step in result.steps or [result]:
        what = f"{step.action} " if result.steps else ""
        print(f"targets:    {what}{', '.join(step.targets) or '-'}")
        if step.place_pose is not None:
            d = step.place_pose.to_dict()
            print(f"place_pose: position {d['position']} orientation (xyzw) {d['orientation']}")
    for note in result.notes:
        print(f"note:       {note}")
    print(f"time:       {result.elapsed_s * 1000:.1f} ms")
    if show_trace:
        for ev in result.trace:
            print(f"  {json.dumps(ev)}")
