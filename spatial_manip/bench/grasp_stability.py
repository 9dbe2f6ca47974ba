"""How stable the grasp service's answer is between frames of one still scene (issues 38, 36).

A pick that succeeded locally got GRASP_FAILED ('all 240 candidate grasps collide') on a frame of
the same still scene taken a moment later (8cc677a): a proposer whose answer flips with the
depth noise is fragile. This renders each pick task's scene several times under a sensing
profile (each render draws the depth noise anew; the profile's calibration and registration
errors are the episode's, fixed), asks the grasp service for the target on every frame, and
reports how often a grasp is found and how far the top grasp moves between frames.

The target's box is the simulator's (not perception's), so the figure is the grasp service's
own sensitivity to the depth noise, apart from perception's; the motion stage is off (no arm
joints given), IK and the links' clearance are on, as grasp_node's.

    python -m spatial_manip.bench.grasp_stability --suite objects --seed 63 --count 16 --frames 6
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

from spatial_manip.camera.types import metres_to_mm
from spatial_manip.control.config import load_home_q, load_kinematics, load_workspace
from spatial_manip.control.primitives import pre_grasp_poses
from spatial_manip.errors import UnreachableError
from spatial_manip.grasping.gripper import load_grasp_config
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.motion.batch_kinematics import ik_near_many
from spatial_manip.paths import params_file
from spatial_manip.registry import make
from spatial_manip.sim import sensing
from spatial_manip.sim import tasks as T
from spatial_manip.sim.world import STOW_Q, SimConfig, SimWorld
import spatial_manip.grasping  # noqa: F401  (registers the role)

SAME_POSITION_M = 0.01       # two top grasps within this and SAME_ANGLE_DEG are the same grasp
SAME_ANGLE_DEG = 20.0
APPROACH_M = 0.10            # pre-grasp back-off and lift, as the pick's


def make_service() -> GraspService:
    """The service as grasp_node builds it from grasp.yaml under the simulator (the sim arm's
    kinematics, TCP and home: the real cell's put the IK and link check on another TCP and
    branch than the arm that executes), without the motion stage."""
    gripper, backend, cfg = load_grasp_config(params_file("grasp.yaml"), "")
    return GraspService(make("grasp", backend, gripper=gripper, **cfg), gripper,
                        _sim_config(), kinematics=load_kinematics(backend="sim"))


def _sim_config() -> ServiceConfig:
    lo, hi = load_workspace(backend="sim")      # the sim arm's safety workspace, as grasp_node's
    return ServiceConfig(workspace_min_m=lo, workspace_max_m=hi, reference_q=load_home_q(backend="sim"))


def grasp_angle_deg(Ra: np.ndarray, Rb: np.ndarray) -> float:
    """The rotation between two grasp frames, a parallel gripper's half-turn about its approach
    counted as the same grasp."""
    flip = np.diag([1.0, -1.0, -1.0])
    angles = [np.degrees(np.arccos(np.clip((np.trace(Ra.T @ Rb @ F) - 1) / 2, -1, 1))) for F in (np.eye(3), flip)]
    return float(min(angles))


def frames_of(world, n_frames: int):
    """`n_frames` depth renders of the world as sim_node publishes them (whole mm), each with its
    intrinsics and the camera pose the observation gives."""
    out = []
    for _ in range(n_frames):
        obs = world.render()
        out.append((metres_to_mm(obs.depth_m).astype(np.float32) * 0.001, obs.intrinsics, obs.T_base_cam))
    return out


def holds(world, scene, seed: int, tcp: np.ndarray, opening_m: float, target_id: str, kinematics=None) -> bool:
    """Whether the grasp at `tcp` lifts `target_id` 10 cm in the simulator, from a fresh reset
    with the arm at home: above the pre-grasp, down the approach, open as the agent opens,
    close, straight up (a simple path, not the motion planner's: this measures the grasp, not
    the path). With `kinematics` (the service's), the arm goes above the pre-grasp on the joints
    the service checked (nearest home), as the pick's plan does: the simulator's own IK from home
    took a mug's side grasp on the other wrist branch and put wrist_2 on the table."""
    home = np.asarray(load_home_q(backend="sim"), float)
    world.reset(scene, seed)
    world.pose_arm(home)                                 # where a pick starts, above the table
    pres = pre_grasp_poses(tcp, APPROACH_M)
    pre = pres[0]
    try:
        if kinematics is not None:
            # the longest stand-off the arm reaches, as the service and the pick take it
            q_pres = ik_near_many(kinematics, pres, home)
            reached = [j for j, q in enumerate(q_pres) if not np.isnan(q).any()]
            if not reached:
                return False
            pre, q_pre = pres[reached[0]], q_pres[reached[0]]
            q_up = ik_near_many(kinematics, [_raised(pre, APPROACH_M)], q_pre)[0]
            if np.isnan(q_up).any() or not world.move_joints(q_up):
                return False
        if not world.move_tcp(_raised(pre, APPROACH_M)) or not world.move_tcp(pre):
            return False
        world.set_gripper(opening_m)
        world.move_tcp(tcp, speed_mps=0.05)
        world.close_gripper()
        world.move_tcp(_raised(tcp, APPROACH_M), speed_mps=0.05)
    except UnreachableError:
        return False
    return world.held_object_id() == target_id


def _raised(T: np.ndarray, d: float) -> np.ndarray:
    out = T.copy()
    out[2, 3] += d
    return out


def measure_task(service, task, scene, profile, n_frames: int, execute: bool = False) -> dict:
    world = SimWorld(scene, config=SimConfig(sensing=profile), seed=int(task.scene_seed))
    try:
        if scene.held_object() is None:
            world.pose_arm(STOW_Q)
        truth = world.export_scene()
        frames = frames_of(world, n_frames)
        target = truth.get(task.answer[0])
        box = TargetBox(np.asarray(target.center, float), np.asarray(target.size, float),
                        np.asarray(target.rotation, float), target.id)
        tops, notes, held = [], [], []
        for depth, intr, T_base_cam in frames:
            res = service.propose_for_box(depth, intr, T_base_cam, box, scene=truth)
            notes.append(res.message if not res.success else "")
            if not res.success:
                tops.append(None)
                continue
            # where the fingers close (the TCP at the grasp's depth), and the grasp's axes
            tcp = service.gripper.tcp_poses(res.grasps.matrices()[:1], res.grasps.depths[:1])[0]
            tops.append((tcp[:3, 3], res.grasps.rotation_matrices[0]))
            if execute:
                opening = float(service.gripper.opening_m(res.grasps.widths[0]))     # as the agent opens
                held.append(holds(world, scene, int(task.scene_seed), tcp, opening, target.id, service.kinematics))
    finally:
        world.close()
    found = [t for t in tops if t is not None]
    pairs = list(itertools.combinations(found, 2))
    dist = [float(np.linalg.norm(a[0] - b[0])) for a, b in pairs]
    ang = [grasp_angle_deg(a[1], b[1]) for a, b in pairs]
    same = [d <= SAME_POSITION_M and g <= SAME_ANGLE_DEG for d, g in zip(dist, ang)]
    return {"task": task.id, "target": target.id, "label": target.label, "frames": n_frames, "found": len(found),
            "held": int(sum(held)) if execute else None, "pairs": len(pairs), "same_pairs": int(sum(same)),
            "top_move_m": {"median": float(np.median(dist)) if dist else None, "max": max(dist, default=None)},
            "top_turn_deg": {"median": float(np.median(ang)) if ang else None, "max": max(ang, default=None)},
            "failures": [n for n in notes if n]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="objects")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=16, help="tasks the generator makes for the seed (as the bench's)")
    ap.add_argument("--frames", type=int, default=6, help="renders of each scene (a new depth-noise draw each)")
    ap.add_argument("--only", nargs="*", default=None, help="task ids to measure (default: every pick)")
    ap.add_argument("--execute", action="store_true",
                    help="also try each frame's top grasp in the simulator (lift 10 cm) and count the holds")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    sensing.add_arguments(ap, default="realistic")
    args = ap.parse_args(argv)
    if args.frames < 2:
        ap.error(f"--frames must be at least 2 to compare frames, got {args.frames}")
    profile = sensing.from_args(args)
    service = make_service()
    rows = []
    for task, scene in T.generate(args.suite, args.count, args.seed):
        if task.action != "pick" or (args.only and task.id not in args.only):
            continue
        r = measure_task(service, task, scene, profile, args.frames, args.execute)
        rows.append(r)
        move, turn = r["top_move_m"]["max"], r["top_turn_deg"]["max"]
        moved = "-" if move is None else f"{move * 100:.1f} cm"
        turned = "-" if turn is None else f"{turn:.0f} deg"
        held = "" if r["held"] is None else f", held {r['held']}/{r['found']}"
        why = f"  | {r['failures'][0][:110]}" if r["failures"] else ""
        print(f"{r['task']} {r['label']:<14} found {r['found']}/{r['frames']}{held}  same top {r['same_pairs']}/{r['pairs']}"
              f"  top moved max {moved}  turned max {turned}{why}", flush=True)
    found = sum(r["found"] for r in rows)
    frames = sum(r["frames"] for r in rows)
    same, pairs = sum(r["same_pairs"] for r in rows), sum(r["pairs"] for r in rows)
    held = f"; the top grasp held on {sum(r['held'] for r in rows)}/{found}" if args.execute else ""
    print(f"[grasp-stability] {args.suite} seed {args.seed}, sensing {profile.label}, {args.frames} frames a task: "
          f"a grasp found on {found}/{frames} frames; the same top grasp (within {SAME_POSITION_M * 100:.0f} cm, "
          f"{SAME_ANGLE_DEG:.0f} deg) on {same}/{pairs} frame pairs{held}")
    if args.out:
        Path(args.out).write_text(json.dumps({"suite": args.suite, "seed": args.seed, "frames": args.frames,
                                              "sensing": profile.to_dict(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
