"""One tree's side of `cloud_layer_timing`: run as a script by path, with that tree first on
PYTHONPATH, so `spatial_manip` below is the tree's own code (today's, or a baseline revision's
from before the point-cloud layer). Only the standard library and numpy are imported at the top:
anything of the project's differs between the two trees and is found by `_ops`.

    python spatial_manip/bench/cloud_layer_probe.py INPUTS_DIR OUT.json REPEATS
"""
from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path

import numpy as np

VOXEL_M = 0.005          # the grasp proposer's grid
PLANE_TOL_M = 0.006      # the hand-written RANSAC's default band


def _has(module: str) -> bool:
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        return False


def _ops() -> dict:
    """Each operation as a function of the frame's inputs, on this tree's own code: the layer's
    (geometry.pointcloud, camera_model over OpenCV) or the hand-written code it replaced."""
    layer = _has("spatial_manip.geometry.pointcloud")
    cam = importlib.import_module("spatial_manip.camera_model" if _has("spatial_manip.camera_model")
                                  else "spatial_manip.geometry.camera")
    boxes = importlib.import_module("spatial_manip.geometry.boxes")
    if layer:
        pc = importlib.import_module("spatial_manip.geometry.pointcloud")

        def plane(p):
            fit = pc.fit_plane(p, threshold_m=PLANE_TOL_M, seed=0)
            return None if fit is None else (fit.normal, fit.offset, fit.n_inliers)
        voxel, normals = pc.voxel_downsample, pc.estimate_normals
    else:
        co = importlib.import_module("spatial_manip.grasping.cloud_ops")

        def plane(p):
            return co.fit_plane_ransac(p, threshold_m=PLANE_TOL_M, rng=np.random.default_rng(0))
        voxel, normals = co.voxel_downsample, co.estimate_normals

    def support(p):
        fit = boxes.fit_support_plane(p, np.random.default_rng(0))
        return None if fit is None else (np.asarray(fit.normal, float), float(fit.d), int(fit.inliers))

    perception = importlib.import_module("spatial_manip.perception")
    importlib.import_module("spatial_manip.grasping")       # registers the "grasp" role
    return {"layer": layer, "intrinsics": cam.CameraIntrinsics, "backproject": cam.backproject,
            "voxel": voxel, "normals": normals, "plane": plane, "support": support,
            "observation": importlib.import_module("spatial_manip.observation").RGBDObservation,
            "scene": importlib.import_module("spatial_manip.scene").Scene, "hints": perception.SegmentationHints,
            # built once: the stages' times are of their calls, as a running node makes them
            "segmenter": perception.make_segmenter("classical"),
            "proposer": importlib.import_module("spatial_manip.registry").make("grasp", "antipodal")}


def _timed(fn, repeats: int):
    """(median seconds over `repeats` calls after one warm-up, the last call's answer)."""
    out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def _plane_json(fit):
    return None if fit is None else {"normal": np.asarray(fit[0], float).tolist(), "offset": float(fit[1]),
                                     "inliers": int(fit[2])}


def _stages(d, ws_path: Path, ops: dict):
    """The classical segmenter's and the antipodal proposer's calls on this frame."""
    w, h = (int(v) for v in d["size"])
    obs = ops["observation"](d["rgb"], d["depth_m"], ops["intrinsics"].from_K(d["K"], w, h), d["T_base_cam"])
    hints = ops["hints"].from_scene(ops["scene"].load(ws_path))
    return ((lambda: ops["segmenter"].segment(obs, hints=hints)),
            (lambda: ops["proposer"].get_grasp(d["points_cam"], d["colors_cam"], target_mask=d["target_mask"],
                                               up=d["up_cam"])))


def probe_frame(npz: Path, ws_path: Path, ops: dict, repeats: int) -> dict:
    d = {k: v for k, v in np.load(npz).items()}
    w, h = (int(v) for v in d["size"])
    distorted = ops["intrinsics"].from_K(d["K"], w, h, distortion=tuple(float(c) for c in d["distortion"]))
    pts, down = d["points_base"], d["points_down"]
    row = {"frame": npz.stem, "points": int(len(pts))}
    row["backproject_s"], _ = _timed(lambda: ops["backproject"](d["depth_m"], distorted), repeats)
    row["voxel_s"], kept = _timed(lambda: ops["voxel"](pts, VOXEL_M), repeats)
    row["voxels"] = int(len(kept))
    row["normals_s"], nrm = _timed(lambda: ops["normals"](down, 16, d["viewpoint"]), repeats)
    row["plane_s"], fit = _timed(lambda: ops["plane"](pts), repeats)
    row["plane"] = _plane_json(fit)
    row["support_plane_s"], sup = _timed(lambda: ops["support"](pts), repeats)
    row["support_plane"] = _plane_json(sup)
    segment, grasp = _stages(d, ws_path, ops)
    row["segment_s"], dets = _timed(segment, repeats)
    row["detections"] = [np.asarray(det.box.center, float).tolist() for det in dets]
    row["grasp_s"], row["grasps"] = None, None
    if d["target_mask"].any():          # a pick's target object (a place's answer is a slot)
        row["grasp_s"], answer = _timed(grasp, repeats)
        grasps = answer[0] if isinstance(answer, tuple) else answer     # AnyGrasp's (GraspGroup, cloud)
        row["grasps"] = int(len(grasps))
    np.save(npz.with_name(f"{npz.stem}.normals.{'layer' if ops['layer'] else 'hand'}.npy"), np.asarray(nrm))
    return row


def main(argv: list[str]) -> int:
    inputs, out, repeats = Path(argv[0]), Path(argv[1]), int(argv[2])
    ops = _ops()
    rows = []
    for npz in sorted(inputs.glob("*.npz")):
        rows.append(probe_frame(npz, npz.with_suffix(".workspace.json"), ops, repeats))
        print(f"  [{'layer' if ops['layer'] else 'hand-written'}] {npz.stem}: segment {rows[-1]['segment_s'] * 1e3:.0f} ms,"
              f" grasp {(rows[-1]['grasp_s'] or 0.0) * 1e3:.0f} ms", flush=True)
    out.write_text(json.dumps({"layer": ops["layer"], "frames": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
