"""The point-cloud layer against the hand-written code it replaced, per frame, in one run (issue 41).

`geometry/pointcloud.py` (open3d's normals and plane RANSAC, a numpy voxel grid) and the camera
model over OpenCV took over hand-written voxel grids, PCA normals, three RANSAC plane fits and a
Brown inverse. This bench times both on the same L515-like frames: the current tree, and a
baseline revision from before the layer checked out in a temporary worktree and run by this venv
(`cloud_layer_probe.py` is each tree's side). Two levels:
- the operations the layer took over: back-projection through lens distortion, the voxel grid,
  normals, the dominant plane, the support plane under an object;
- the stages a user waits for: the classical segmenter's `segment` and the antipodal proposer's
  `get_grasp` per frame. These differ by everything else that changed since the baseline, too.
Answers are compared beside the times (voxels, plane angle and offset, normals, detections
matched to the simulator's truth, grasps found), so speed is never bought with answers.

    python -m spatial_manip.bench.cloud_layer_timing                      # the recorded frames
    python -m spatial_manip.bench.cloud_layer_timing --suite pick --seed 90 --count 8
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from spatial_manip.bench import record_frames
from spatial_manip.bench.perception_bench import matched_centre_errors
from spatial_manip.bench.reference_bench import SUITES, _quiet_stderr, first_look
from spatial_manip.bench.revisions import REPO_ROOT, worktree
from spatial_manip.camera_model import backproject
from spatial_manip.geometry.pointcloud import voxel_downsample
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.sim import sensing
from spatial_manip.sim import tasks as T
from spatial_manip.sim.library import library_for

BEFORE_THE_LAYER = "25aa592^"       # the commit before geometry/pointcloud.py was added
PROBE = Path(__file__).with_name("cloud_layer_probe.py")
# a colour camera's Brown coefficients of the L515's order (k1, k2, p1, p2, k3): the recorded
# frames are rectified, so the back-projection is timed through this instead of zeros
DISTORTION = (0.12, -0.25, 0.001, -0.001, 0.1)
MATCH_GATE_M = 0.05
OPERATIONS = ("backproject", "voxel", "normals", "plane", "support_plane")
STAGES = ("segment", "grasp")


def frame_inputs(look, out: Path) -> None:
    """What both trees are given for one frame: the image, its cloud in the base and camera
    frames, the target's mask, and the workspace the planner is told (written beside it)."""
    obs, intr = look.obs, look.obs.intrinsics
    pts_cam, uv = backproject(obs.depth_m, intr)
    T = np.asarray(obs.T_base_cam, float)
    pts_base = pts_cam @ T[:3, :3].T + T[:3, 3]
    colors = obs.rgb[uv[:, 1], uv[:, 0]].astype(np.float32) / 255.0
    answer = list(look.task.answer or [])
    # only a pick's answer is an object to grasp: a place's is a shelf slot, and its box masked the
    # shelf's boards as a "pick target" (the two recorded place frames' 'no grasp' of 10/12)
    picked = look.task.action == "pick" and answer and answer[0] in look.truth.ids()
    target = look.truth.get(answer[0]) if picked else None
    mask = points_in_box(pts_base, target, 0.005) if target is not None else np.zeros(len(pts_base), bool)
    np.savez(out.with_suffix(".npz"), rgb=obs.rgb, depth_m=obs.depth_m, K=intr.K, size=np.array([intr.width, intr.height]),
             T_base_cam=T, distortion=np.array(DISTORTION), points_base=pts_base,
             points_down=pts_base[voxel_downsample(pts_base, 0.005)], viewpoint=T[:3, 3],
             points_cam=pts_cam, colors_cam=colors, target_mask=mask, up_cam=T[:3, :3].T @ [0.0, 0.0, 1.0])
    look.workspace.save(out.with_suffix(".workspace.json"))
    (out.with_suffix(".truth.json")).write_text(json.dumps(
        [np.asarray(look.truth.get(i).center, float).tolist() for i in look.refs if look.visible.get(i, 0.0) > 0.5]))


def looks(args):
    if args.suite:
        profile = sensing.from_args(args)
        with _quiet_stderr():
            items = T.generate(args.suite, args.count, args.seed)
        for task, scene in items:
            yield first_look(task, scene, library=library_for("library"), profile=profile)
    else:
        for folder in sorted(p for p in Path(args.frames).iterdir() if (p / "frame.json").exists()):
            yield record_frames.load(folder)[0]


def run_tree(env: dict | None, cwd: Path, inputs: Path, out: Path, repeats: int) -> dict:
    subprocess.run([sys.executable, str(PROBE), str(inputs), str(out), str(repeats)], cwd=cwd, env=env, check=True)
    return json.loads(out.read_text())


def _plane_gap(a: dict | None, b: dict | None) -> tuple[float, float] | None:
    """(degrees between the normals, mm between the offsets), normals taken the same way up."""
    if a is None or b is None:
        return None
    na, nb = np.asarray(a["normal"]), np.asarray(b["normal"])
    sign = 1.0 if na @ nb >= 0 else -1.0
    angle = float(np.degrees(np.arccos(np.clip(abs(na @ nb), -1.0, 1.0))))
    return angle, abs(a["offset"] - sign * b["offset"]) * 1e3


def report(current: dict, baseline: dict, inputs: Path, revision: str) -> str:
    rows_c, rows_b = current["frames"], baseline["frames"]
    lines = [f"{len(rows_c)} frames; per frame, median of the repeats; ratio = layer / hand-written ({revision})",
             f"{'':<16}{'hand ms med':>12}{'p95':>8}{'layer ms med':>14}{'p95':>8}{'ratio':>8}"]
    for name in OPERATIONS + STAGES:
        timed = [(rb[f"{name}_s"], rc[f"{name}_s"]) for rb, rc in zip(rows_b, rows_c) if rc[f"{name}_s"] is not None]
        b, c = (np.array(t) * 1e3 for t in zip(*timed))
        lines.append(f"{name:<16}{np.median(b):>12.1f}{np.percentile(b, 95):>8.1f}{np.median(c):>14.1f}"
                     f"{np.percentile(c, 95):>8.1f}{np.median(c) / np.median(b):>8.2f}")
    lines.append("answers:")
    voxels = sum(rb["voxels"] == rc["voxels"] for rb, rc in zip(rows_b, rows_c))
    lines.append(f"  voxel grid: the same number of voxels on {voxels}/{len(rows_c)} frames")
    for name in ("plane", "support_plane"):
        gaps = [g for g in (_plane_gap(rb[name], rc[name]) for rb, rc in zip(rows_b, rows_c)) if g]
        if gaps:
            g = np.array(gaps)
            lines.append(f"  {name}: normals {np.median(g[:, 0]):.2f} deg apart (max {g[:, 0].max():.2f}),"
                         f" offsets {np.median(g[:, 1]):.1f} mm (max {g[:, 1].max():.1f}) on {len(g)} frames")
    angles = []
    for rc in rows_c:
        hand = np.load(inputs / f"{rc['frame']}.normals.hand.npy")
        layer = np.load(inputs / f"{rc['frame']}.normals.layer.npy")
        angles.append(np.degrees(np.arccos(np.clip(np.einsum("ij,ij->i", hand, layer), -1, 1))))
    angles = np.concatenate(angles)
    lines.append(f"  normals: median {np.median(angles):.2f} deg apart, {np.mean(angles > 10) * 100:.1f}% more than 10 deg")
    for label, rows in (("hand-written", rows_b), ("layer", rows_c)):
        truth = [json.loads((inputs / f"{r['frame']}.truth.json").read_text()) for r in rows]
        found = sum(len(matched_centre_errors(r["detections"], t, MATCH_GATE_M)) for r, t in zip(rows, truth))
        dets = sum(len(r["detections"]) for r in rows)
        picks = [r["grasps"] for r in rows if r["grasps"] is not None]
        lines.append(f"  {label:<13} segment: {found}/{sum(map(len, truth))} objects the task needs found (half in view"
                     f" or more), {dets} detections; grasp: a grasp on {sum(g > 0 for g in picks)}/{len(picks)} pick"
                     f" targets, {sum(picks)} grasps")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BEFORE_THE_LAYER, help="the revision with the hand-written code")
    ap.add_argument("--frames", default=str(REPO_ROOT / "test" / "perception" / "frames"),
                    help="recorded frame folders (record_frames); ignored with --suite")
    ap.add_argument("--suite", choices=SUITES, help="render fresh first looks of this suite's tasks instead")
    ap.add_argument("--seed", type=int, default=90)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=1, help="timed calls per operation and frame, after a warm-up")
    ap.add_argument("--work", default="", help="keep the frames and both trees' results in this folder")
    sensing.add_arguments(ap, default="realistic")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cloud-layer-") as tmp:
        inputs = Path(args.work or tmp)
        inputs.mkdir(parents=True, exist_ok=True)
        for look in looks(args):
            frame_inputs(look, inputs / look.task.id)
        if not any(inputs.glob("*.npz")):
            print(f"cloud_layer_timing: no frames in {args.frames}", file=sys.stderr)
            return 2
        print(f"frames ready; hand-written code at {args.baseline}, then the layer at HEAD's tree", flush=True)
        with worktree(args.baseline) as (tree, env):
            baseline = run_tree(env, tree, inputs, inputs / "baseline.json", args.repeats)
        current = run_tree(None, REPO_ROOT, inputs, inputs / "current.json", args.repeats)
        if baseline["layer"] or not current["layer"]:
            print(f"cloud_layer_timing: {args.baseline} already has the point-cloud layer (or HEAD lacks it): "
                  "nothing to compare", file=sys.stderr)
            return 2
        print(report(current, baseline, inputs, args.baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
