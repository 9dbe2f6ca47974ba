"""`spatial-manip evaluate BAG...`: re-run perception + planning offline on every recorded
instruction at the observation the robot had, compare with the recording, print a table and
write JSON. Exit code 1 when any instruction plans differently (a regression check)."""
from __future__ import annotations

import json

from spatial_manip.bags.evaluate import OfflinePlan, evaluate_bags, format_table
from spatial_manip.errors import SpatialManipError
from spatial_manip.parameters import DEFAULT_SEGMENTER
from spatial_manip.perception import make_segmenter, perceive_with_workspace
from spatial_manip.reasoning.compound import plan_compound
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.progress import progress


def add_arguments(p) -> None:
    p.add_argument("bags", nargs="+", help="bags recorded with `spatial-manip record` (folders or files)")
    p.add_argument("--segmenter", default=DEFAULT_SEGMENTER, help=f"perception backend (default {DEFAULT_SEGMENTER})")
    p.add_argument("--planner", default="program", help="planner backend (default program)")
    p.add_argument("--json", default="evaluation.json", help="report file (default evaluation.json)")


def real_plan_fn(segmenter: str = DEFAULT_SEGMENTER, planner: str = "program"):
    """The planner core as planner_node runs it: segment -> scene -> (compound) plan."""
    seg, pl = make_segmenter(segmenter), make_planner(planner)

    def plan_one(scene, text, kind, obs):
        result = pl.plan(scene, text, observation=obs, task_kind=kind)
        if not result.ok:
            raise SpatialManipError(result.error["message"], result.error["code"])
        return result

    def plan(obs, instruction: str, task_kind: str, workspace=None) -> OfflinePlan:
        try:
            scene = perceive_with_workspace(seg, obs, workspace)
            pick, place = plan_compound(scene, instruction, task_kind, lambda s, t, k: plan_one(s, t, k, obs))
        except SpatialManipError as e:
            return OfflinePlan(False, error_code=e.code.value, message=e.message)
        targets = (pick.targets if pick else []) + (place.targets if place else [])
        xyz = None
        if place is not None and place.place_pose is not None:
            xyz = [float(v) for v in place.place_pose.position]
        elif pick is not None and pick.targets:
            obj = next((o for o in scene.objects if o.id == pick.targets[0]), None)
            xyz = [float(v) for v in obj.center] if obj is not None else None
        return OfflinePlan(True, targets, xyz)
    return plan


def run(args) -> int:
    try:
        plan_fn = real_plan_fn(args.segmenter, args.planner)
        rows = evaluate_bags(args.bags, plan_fn, progress=lambda it, desc: progress(it, desc=desc, unit="goal"))
    except SpatialManipError as e:
        print(f"evaluate: {e}")
        return 2
    print(format_table(rows))
    with open(args.json, "w") as f:
        json.dump({"bags": args.bags, "segmenter": args.segmenter, "planner": args.planner,
                   "results": [c.to_dict() for c in rows]}, f, indent=2)
    print(f"wrote {args.json}")
    return 0 if all(c.verdict == "same" for c in rows) else 1
