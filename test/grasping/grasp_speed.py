"""The grasp service's time on the recorded frames (frames/), this tree's code against another
revision's grasping modules in the same process, alternating (the machine is too noisy for
figures from different runs), and whether both return the same grasps (within 1e-6: the support plane's fit varies in the last digits
between calls of one revision) (issue 42).

    python test/grasping/grasp_speed.py --before main --rounds 5

The other revision's `grasping/service.py` and `grasping/antipodal.py` are loaded from git under
other module names; everything else they import is this tree's. Prints each frame's median
seconds before and after, and the ratio of the summed medians (after / before).
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from spatial_manip.bench import record_frames
from spatial_manip.bench.grasp_stability import make_service
from spatial_manip.grasping.service import TargetBox

FRAMES = Path(__file__).parent / "frames"
REPO = Path(__file__).resolve().parents[2]


def _module_at(revision: str, path: str, name: str):
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{revision}:{path}"], check=True, capture_output=True,
                            text=True).stdout
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return module


def baseline_service(revision: str):
    """grasp_stability.make_service's service, built from `revision`'s service and proposer."""
    service_mod = _module_at(revision, "spatial_manip/grasping/service.py", "_before_service")
    antipodal_mod = _module_at(revision, "spatial_manip/grasping/antipodal.py", "_before_antipodal")
    now = make_service()
    proposer = antipodal_mod.AntipodalProposer(gripper=now.gripper)
    proposer.config = antipodal_mod.AntipodalConfig(**{k: getattr(now.proposer.config, k)
                                                        for k in antipodal_mod.AntipodalConfig.__dataclass_fields__})
    config = service_mod.ServiceConfig(**{k: getattr(now.config, k) for k in service_mod.ServiceConfig.__dataclass_fields__})
    return service_mod.GraspService(proposer, now.gripper, config, kinematics=now.kinematics), service_mod.TargetBox


def _requests():
    for folder in sorted(FRAMES.iterdir()):
        look, _ = record_frames.load(folder)
        t = look.truth.get(look.task.answer[0])
        yield folder.name, look, (np.asarray(t.center, float), np.asarray(t.size, float),
                                  np.asarray(t.rotation, float), t.id)


def _same(a, b) -> bool:
    ga, gb = a.grasps, b.grasps
    if a.error_code != b.error_code or len(ga) != len(gb):
        return False
    return len(ga) == 0 or all(np.allclose(x, y, atol=1e-6) for x, y in (
        (ga.translations, gb.translations), (ga.rotation_matrices, gb.rotation_matrices), (ga.widths, gb.widths),
        (ga.scores, gb.scores), (ga.depths, gb.depths)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="main", help="the revision to compare against (default: main)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    after = make_service()
    before, BeforeBox = baseline_service(args.before)
    total_b, total_a, differ = 0.0, 0.0, []
    for name, look, (c, s, R, oid) in _requests():
        obs = look.obs
        times = {"before": [], "after": []}
        results = {}
        for _ in range(args.rounds):
            for label, service, box in (("before", before, BeforeBox(c, s, R, oid)), ("after", after, TargetBox(c, s, R, oid))):
                t0 = time.perf_counter()
                results[label] = service.propose_for_box(obs.depth_m, obs.intrinsics, obs.T_base_cam, box, scene=look.truth)
                times[label].append(time.perf_counter() - t0)
        mb, ma = float(np.median(times["before"])), float(np.median(times["after"]))
        total_b, total_a = total_b + mb, total_a + ma
        same = _same(results["before"], results["after"])
        if not same:
            differ.append(name)
        print(f"{name:<18} before {mb:.3f} s  after {ma:.3f} s  ratio {ma / mb:.2f}  same grasps: {same}", flush=True)
    print(f"[grasp-speed] {args.rounds} rounds, {args.before} -> this tree: summed medians {total_b:.3f} s -> "
          f"{total_a:.3f} s, ratio {total_a / total_b:.2f}; grasps differ on {differ or 'no frame'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
