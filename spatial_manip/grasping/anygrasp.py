"""`anygrasp`: adapter to the AnyGrasp SDK (graspnet/anygrasp_sdk) when its `gsnet` module and
licence are present. The SDK is licensed per machine and never a dependency of this project.

Getting it: request a licence at https://github.com/graspnet/anygrasp_sdk (form in its README;
the feature id comes from its `license_registration` tool and changes under Docker/WSL), put
the `gsnet` .so for your Python on PYTHONPATH, the licence folder and the checkpoint (sent by
e-mail) on disk, then select `grasp.backend: anygrasp` with `checkpoint_path` and `license_dir`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from spatial_manip.errors import BackendUnavailableError
from spatial_manip.grasping.base import validate_cloud
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.grasping.gripper import GripperGeometry

HOW_TO_GET = ("AnyGrasp needs the licensed SDK: request a licence at https://github.com/graspnet/anygrasp_sdk, "
              "put its `gsnet` module on PYTHONPATH and pass checkpoint_path and license_dir; or use the "
              "default backend `antipodal` (no licence needed)")


@dataclass(frozen=True, kw_only=True)
class AnyGraspConfig:
    checkpoint_path: str = ""
    license_dir: str = "license"
    max_gripper_width_m: float = 0.085   # the SDK clamps to 0.1
    gripper_height_m: float = 0.03
    top_down_grasp: bool = False

    def __post_init__(self):
        if not 0 < self.max_gripper_width_m <= 0.1:
            raise ValueError(f"max_gripper_width_m must be in (0, 0.1] metres, got {self.max_gripper_width_m}")


class AnyGraspProposer:
    """Calls `gsnet.AnyGrasp.get_grasp` and converts its graspnetAPI GraspGroup to ours."""

    def __init__(self, net, config: AnyGraspConfig):
        self._net, self.config = net, config

    def get_grasp(self, points, colors=None, lims=None, apply_object_mask=True, dense_grasp=False,
                  collision_detection=True, *, target_mask=None, up=None, object_id: int = -1,
                  target_box=None, obstacles=None):
        """AnyGrasp's own call; `target_mask` keeps the grasps near the target (`up`,
        `target_box` and `obstacles` are for the geometric backend, ignored here)."""
        pts, cols, ok = validate_cloud(points, colors)
        cols = np.zeros_like(pts, np.float32) if cols is None else np.asarray(cols, np.float32)
        gg, cloud = self._net.get_grasp(pts.astype(np.float32), cols, lims=lims, apply_object_mask=apply_object_mask,
                                        dense_grasp=dense_grasp, collision_detection=collision_detection)
        if gg is None or len(gg) == 0:
            return GraspGroup(note="AnyGrasp returned no grasp"), pts
        ours = GraspGroup(np.asarray(gg.grasp_group_array, np.float64))
        if target_mask is not None:  # keep grasps near the target's points
            from scipy.spatial import cKDTree
            tgt = pts[np.asarray(target_mask, bool)[ok]]
            if len(tgt):
                d, _ = cKDTree(tgt).query(ours.translations)
                ours = ours[d < 0.02]
        return ours.nms().sort_by_score(), np.asarray(getattr(cloud, "points", pts))


def make_anygrasp(*, gripper: GripperGeometry | dict | None = None, **config) -> AnyGraspProposer:
    cfg = AnyGraspConfig(**config)
    try:
        from gsnet import AnyGrasp  # the licensed SDK, only here
    except ImportError as e:
        raise BackendUnavailableError(f"the AnyGrasp SDK module `gsnet` is not importable ({e}). {HOW_TO_GET}") from e
    if not cfg.checkpoint_path or not Path(cfg.checkpoint_path).is_file():
        raise BackendUnavailableError(f"AnyGrasp checkpoint {cfg.checkpoint_path!r} not found. {HOW_TO_GET}")
    if not Path(cfg.license_dir).is_dir():
        raise BackendUnavailableError(f"AnyGrasp licence folder {cfg.license_dir!r} not found. {HOW_TO_GET}")
    net = AnyGrasp(SimpleNamespace(checkpoint_path=cfg.checkpoint_path, max_gripper_width=cfg.max_gripper_width_m,
                                   gripper_height=cfg.gripper_height_m, top_down_grasp=cfg.top_down_grasp, debug=False))
    try:
        net.load_net()
    except Exception as e:  # the SDK raises bare exceptions for licence problems
        raise BackendUnavailableError(f"AnyGrasp failed to load (licence or checkpoint): {e}. {HOW_TO_GET}") from e
    return AnyGraspProposer(net, cfg)
