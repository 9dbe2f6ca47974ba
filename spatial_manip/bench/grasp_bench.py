"""Grasp bench: top-1 grasp success and proposal latency per backend, on the same MuJoCo scenes.

A trial: build a scene, let it settle, render depth + segmentation from an L515-like camera,
back-project to a camera-frame cloud (cropped to the target's neighbourhood), ask the backend,
then execute the top-1 grasp with a free-floating Robotiq 2F-85 on a mocap body: pre-grasp
10 cm back along the approach, move in, close, lift 10 cm, hold 2 s. Success = the object is
still at least 8 cm above where it started.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import mujoco
import numpy as np

from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.transforms import look_at
from spatial_manip.bench.grasp_scenes import HAND_PARK, KINDS, build_scene, _quat
from spatial_manip.grasping.grasp_group import GraspGroup

# Robotiq 2F-85 in its mount frame (measured from the Menagerie model): closing along mount x,
# pad height along mount y, approach along mount z; open fingertips at z = 0.160 m, advancing
# 13 mm as the fingers close fully.
R_GRASP_MOUNT = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
TIP_OPEN_Z, TIP_ADVANCE_M, OPEN_W, CLOSED_W = 0.160, 0.0132, 0.085, 0.0084
L515 = dict(width=640, height=480, fovy_deg=55.0)   # L515 depth: 640x480, about 70 x 55 deg


@dataclass
class TrialResult:
    backend: str
    kind: str
    seed: int
    success: bool
    latency_s: float
    n_points: int
    n_grasps: int
    reason: str = ""
    lift_m: float = 0.0


@dataclass
class BenchConfig:
    stride: int = 2                 # pixel stride for the cloud
    crop_radius_m: float = 0.22     # scene kept around the target (collision context)
    lift_m: float = 0.10
    hold_s: float = 2.0
    success_lift_m: float = 0.08
    settle_s: float = 0.5
    extra: dict = field(default_factory=dict)


def mount_pose_for_grasp(R_grasp: np.ndarray, t: np.ndarray, depth: float, width: float):
    """World pose (R, p) of the gripper mount that puts the open fingertips `depth` past t."""
    a = R_grasp[:, 0]
    advance = TIP_ADVANCE_M * np.clip((OPEN_W - width) / (OPEN_W - CLOSED_W), 0, 1)
    return R_grasp @ R_GRASP_MOUNT, t + (depth - TIP_OPEN_Z - advance) * a


class Trial:
    """One scene, reusable for several backends (rebuilt from the same seed each time)."""

    def __init__(self, kind: str, seed: int, gripper_xml: str, config: BenchConfig):
        self.kind, self.seed, self.cfg = kind, seed, config
        sc = build_scene(kind, np.random.default_rng(seed), gripper_xml)
        self.scene = sc
        cam = sc.spec.worldbody.add_camera(name="cam", pos=sc.eye, fovy=L515["fovy_deg"],
                                           quat=_quat(look_at(sc.eye, sc.look)[:3, :3] @ np.diag([1, -1, -1])))
        del cam
        self.model = sc.spec.compile()
        self.data = mujoco.MjData(self.model)
        self.target = self.model.body(sc.target_body).id
        self.hand_mocap = self.model.body("hand").mocapid[0]
        self.gripper_joint = self.model.joint("gripper_free").id
        self.intr = CameraIntrinsics.from_fovy(L515["width"], L515["height"], L515["fovy_deg"])
        self.T_base_cam = np.eye(4)
        self.T_base_cam[:3, :3] = look_at(sc.eye, sc.look)[:3, :3]
        self.T_base_cam[:3, 3] = sc.eye
        self._settle()
        self.qpos0 = self.data.qpos.copy()

    def _settle(self):
        for _ in range(int(self.cfg.settle_s / self.model.opt.timestep)):
            mujoco.mj_step(self.model, self.data)

    def observe(self, renderer: mujoco.Renderer):
        """Camera-frame cloud around the target and its target mask."""
        renderer.update_scene(self.data, camera="cam")
        renderer.enable_depth_rendering()
        depth = renderer.render().copy()
        renderer.disable_depth_rendering()
        renderer.enable_segmentation_rendering()
        seg = renderer.render()[..., 0].copy()
        renderer.disable_segmentation_rendering()
        far = self.model.vis.map.zfar * self.model.stat.extent
        depth[depth >= 0.99 * far] = 0.0
        s = self.cfg.stride
        depth, seg = depth[::s, ::s], seg[::s, ::s]
        intr = self.intr.scaled(depth.shape[1], depth.shape[0])
        pts, uv = backproject(depth, intr)
        geom_body = self.model.geom_bodyid
        seg_px = seg[uv[:, 1], uv[:, 0]]
        is_target = (seg_px >= 0) & (geom_body[np.clip(seg_px, 0, None)] == self.target)
        centre = self.T_base_cam[:3, :3].T @ (self.data.xpos[self.target] - self.T_base_cam[:3, 3])
        near = np.linalg.norm(pts - centre, axis=1) < self.cfg.crop_radius_m + 0.5 * self._target_extent()
        return pts[near], is_target[near]

    def _target_extent(self) -> float:
        ids = np.nonzero(self.model.geom_bodyid == self.target)[0]
        return float(np.max(self.model.geom_rbound[ids]))

    def execute(self, grasp, R_grasp_base: np.ndarray, t_base: np.ndarray) -> tuple[bool, str, float]:
        m, d, cfg = self.model, self.data, self.cfg
        d.qpos[:] = self.qpos0
        d.qvel[:] = 0
        mujoco.mj_forward(m, d)
        z0 = d.xpos[self.target][2]
        R, p = mount_pose_for_grasp(R_grasp_base, t_base, grasp.depth, grasp.width)
        q = _quat(R)
        pre = p - 0.10 * R_grasp_base[:, 0]
        d.ctrl[:] = 0
        self._move(pre, pre, q, 0.05, teleport=True)
        self._move(pre, p, q, 0.5)
        d.ctrl[:] = 255
        self._move(p, p, q, 0.8)
        self._move(p, p + [0, 0, cfg.lift_m], q, 1.0)
        self._move(p + [0, 0, cfg.lift_m], p + [0, 0, cfg.lift_m], q, cfg.hold_s)
        lift = float(d.xpos[self.target][2] - z0)
        ok = lift >= cfg.success_lift_m
        return ok, "" if ok else f"object lifted {lift * 100:.1f} cm", lift

    def _move(self, a, b, quat, duration_s, teleport=False):
        m, d = self.model, self.data
        n = max(1, int(duration_s / m.opt.timestep))
        d.mocap_quat[self.hand_mocap] = quat
        if teleport:  # put the welded gripper there too, at rest
            d.mocap_pos[self.hand_mocap] = a
            adr = m.jnt_qposadr[self.gripper_joint]
            d.qpos[adr:adr + 3], d.qpos[adr + 3:adr + 7] = a, quat
            d.qvel[m.jnt_dofadr[self.gripper_joint]:m.jnt_dofadr[self.gripper_joint] + 6] = 0
            mujoco.mj_forward(m, d)
        for i in range(n):
            d.mocap_pos[self.hand_mocap] = a + (b - a) * (i + 1) / n
            mujoco.mj_step(m, d)


def run_trial(trial: Trial, backend_name: str, proposer, renderer) -> TrialResult:
    trial.data.qpos[:] = trial.qpos0
    trial.data.qvel[:] = 0
    trial.data.mocap_pos[trial.hand_mocap] = HAND_PARK
    mujoco.mj_forward(trial.model, trial.data)
    pts, mask = trial.observe(renderer)
    up_cam = trial.T_base_cam[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    t0 = time.perf_counter()
    try:
        gg, _ = proposer.get_grasp(pts, None, target_mask=mask, up=up_cam)
        err = ""
    except Exception as e:  # a backend failing on a scene is a failed trial, with the reason
        gg, err = GraspGroup(note=f"{type(e).__name__}: {e}"), f"{type(e).__name__}: {e}"
    latency = time.perf_counter() - t0
    if len(gg) == 0:
        return TrialResult(backend_name, trial.kind, trial.seed, False, latency, len(pts), 0,
                           err or f"no grasp: {gg.note}")
    best = gg.sort_by_score()[0]
    R = trial.T_base_cam[:3, :3] @ best.rotation_matrix
    t = trial.T_base_cam[:3, :3] @ best.translation + trial.T_base_cam[:3, 3]
    ok, why, lift = trial.execute(best, R, t)
    return TrialResult(backend_name, trial.kind, trial.seed, ok, latency, len(pts), len(gg), why, lift)


def summarize(results: list[TrialResult]) -> dict:
    out = {}
    for name in dict.fromkeys(r.backend for r in results):
        rs = [r for r in results if r.backend == name]
        lat = np.array([r.latency_s for r in rs]) * 1000
        per_kind = {k: {"trials": sum(r.kind == k for r in rs), "successes": sum(r.success for r in rs if r.kind == k)}
                    for k in KINDS if any(r.kind == k for r in rs)}
        out[name] = {
            "trials": len(rs), "successes": int(sum(r.success for r in rs)),
            "top1_success_rate": float(np.mean([r.success for r in rs])) if rs else 0.0,
            "latency_ms": {"median": float(np.median(lat)), "p95": float(np.percentile(lat, 95)),
                           "mean": float(lat.mean()), "max": float(lat.max())},
            "mean_points": float(np.mean([r.n_points for r in rs])),
            "per_kind": per_kind,
            "failures": [{"kind": r.kind, "seed": r.seed, "reason": r.reason} for r in rs if not r.success],
        }
    return out
