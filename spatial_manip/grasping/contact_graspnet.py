"""`contact_graspnet`: Contact-GraspNet (Sundermeyer et al., ICRA 2021) through PyPI `cgn-pytorch`.

OPTIONAL, never the default: the checkpoint shipped inside the `cgn-pytorch` wheel carries
NVIDIA's non-commercial licence (research and evaluation only). Install the extras with
`pip install -r requirements-contact-graspnet.txt` and `pip install --no-deps cgn-pytorch==0.4.3`
(its declared pins are years old), then select `grasp.backend: contact_graspnet`.

How it runs here: torch_geometric's compiled point ops do not install on CPU-only machines, so
`cgn_ops` supplies fps / radius / knn_interpolate (and PointNetConv when torch_geometric is
absent); cgn_pytorch's visualisation-only `meshcat` import gets an inert stand-in. All of it is
placed in `sys.modules` by this module only, at load time; nothing is written to site-packages.

Pipeline: clean the cloud; pick the target as `antipodal` does (target_mask, else lims, else the
points above the support plane); subsample the scene to 20k points in random order (as
Contact-GraspNet does); rotate into a gravity-aligned frame centred on the cloud's mean (the
checkpoint was trained on world-frame, mean-centred tabletop clouds); 2048 farthest-point
centres; one grasp per centre; keep those whose contact lies on the target; convert to the
graspnetAPI convention in the camera frame; re-measure width and centring from the target points
between the pads (`refine_with_cloud`; the width head predicts ~0 on our scenes); NMS; best first.

Gripper conventions. CGN (Panda hand frame): x = baseline (closing), z = approach, origin at the
hand base `gripper_depth` (0.1034 m) behind the contact, the contact being one finger's contact
point. graspnetAPI/ours: x = approach, y = closing, t = grasp point with the fingertips `depth`
past it. R_ours = R_cgn @ CGN_TO_GRASPNET; the fingertips go `tip_margin_m` past the midpoint of
the two contacts (the Panda pads sit ~9 mm before the fingertips); t = tips - depth * approach.
"""
from __future__ import annotations

import importlib
import importlib.resources
import importlib.util
import sys
import threading
import types
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from spatial_manip.errors import BackendUnavailableError, InvalidGoalError
from spatial_manip.grasping.base import lims_mask, validate_cloud
from spatial_manip.geometry.pointcloud import fit_plane, range_tolerance_m, voxel_downsample
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping import cgn_ops

INSTALL = ("pip install -r requirements-contact-graspnet.txt && pip install --no-deps cgn-pytorch==0.4.3 "
           "(weights: NVIDIA non-commercial licence; or use the default backend `antipodal`)")
# columns: our approach (x) = CGN z, our closing (y) = CGN x, our z = CGN y
CGN_TO_GRASPNET = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
CGN_GRIPPER_DEPTH_M = 0.1034   # hand base -> contact, the value the checkpoint was trained with
CGN_WIDTH_CLAMP_M = 0.2        # cgn clamps widths to gripper_width / 2: keep that clamp out of the way


PLANE_TOL_M = 0.006   # support-plane inliers: at least this, else 3 sigma of the sensor's range noise

@dataclass(frozen=True, kw_only=True)
class ContactGraspNetConfig:
    max_points: int = 20000          # Contact-GraspNet's input size: a random subset beyond it
    num_centres: int = 2048          # grasp hypotheses (FPS centres), as trained
    min_score: float = 0.3           # sigmoid confidence threshold
    tip_margin_m: float = 0.01       # fingertips this far past the contacts' midpoint along the approach
    depth_m: float = 0.02            # grasp point = fingertips - depth_m * approach
    object_height_m: float = 0.008   # object mask: points this far above the support plane (at least its noise band)
    scene_voxel_m: float = 0.006     # support-plane fit resolution
    top_k: int = 50
    nms_translation_m: float = 0.02
    nms_rotation_deg: float = 30.0
    refine_with_cloud: bool = True  # re-measure width and centre from the target points between the pads
    seed: int = 0
    checkpoint_path: str = ""        # empty: the checkpoint inside the cgn-pytorch wheel
    torch_threads: int = 0           # 0: torch's default

    def __post_init__(self):
        if self.max_points < 512 or self.num_centres < 16:
            raise ValueError(f"max_points must be >= 512 and num_centres >= 16, got {self.max_points}, {self.num_centres}")
        if not 0 <= self.min_score < 1:
            raise ValueError(f"min_score must be in [0, 1), got {self.min_score}")
        for k in ("tip_margin_m", "depth_m", "object_height_m", "scene_voxel_m"):
            if not getattr(self, k) >= 0 or getattr(self, k) > 0.2:
                raise ValueError(f"{k} must be in [0, 0.2] metres, got {getattr(self, k)}")


# ---------------------------------------------------------------------------- loading
_LOCK = threading.Lock()
_MODELS: dict[str, object] = {}


def _meshcat_standin() -> dict[str, types.ModuleType]:
    """cgn_pytorch imports meshcat at module level for its viewer only; inference never calls it."""
    def _unavailable(name):
        raise AttributeError(f"meshcat.{name}: visualisation is not available (stand-in installed by "
                             "spatial_manip.grasping.contact_graspnet; pip install meshcat for the viewer)")
    root, geom = types.ModuleType("meshcat"), types.ModuleType("meshcat.geometry")
    root.__getattr__ = geom.__getattr__ = _unavailable
    root.geometry = geom
    return {"meshcat": root, "meshcat.geometry": geom}


def _import_cgn():
    """Import cgn_pytorch with our point ops patched in; BackendUnavailableError naming the install."""
    for mod in ("torch", "trimesh", "yaml"):
        if importlib.util.find_spec(mod) is None:
            raise BackendUnavailableError(f"contact_graspnet needs `{mod}`, which is not installed. {INSTALL}")
    if importlib.util.find_spec("cgn_pytorch") is None:
        raise BackendUnavailableError(f"contact_graspnet needs the `cgn_pytorch` package. {INSTALL}")

    if importlib.util.find_spec("meshcat") is None:
        sys.modules.update(_meshcat_standin())
    if importlib.util.find_spec("importlib_resources") is None:  # the stdlib module has the same `files`
        sys.modules["importlib_resources"] = importlib.resources
    if "torch_geometric" not in sys.modules and importlib.util.find_spec("torch_geometric") is None:
        sys.modules.update(cgn_ops.torch_geometric_standin())
    try:
        pointnet2 = importlib.import_module("cgn_pytorch.pointnet2")
        cgn_mod = importlib.import_module("cgn_pytorch.contact_graspnet")
        config_utils = importlib.import_module("cgn_pytorch.util.config_utils")
    except ImportError as e:
        raise BackendUnavailableError(f"cgn_pytorch failed to import ({e}). {INSTALL}") from e
    # the real torch_geometric's versions need the compiled torch_cluster: ours everywhere
    pointnet2.fps, pointnet2.radius, pointnet2.knn_interpolate = cgn_ops.fps, cgn_ops.radius, cgn_ops.knn_interpolate
    return cgn_mod.CGN, config_utils


def load_model(checkpoint_path: str = ""):
    """The CGN network in eval mode on the CPU, loaded once per process and checkpoint."""
    with _LOCK:
        if checkpoint_path in _MODELS:
            return _MODELS[checkpoint_path]
        CGN, config_utils = _import_cgn()
        import torch

        path = checkpoint_path or str(importlib.resources.files("cgn_pytorch").joinpath("checkpoints/current.pth"))
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)["state_dict"]
        except (OSError, KeyError, RuntimeError) as e:
            raise BackendUnavailableError(f"cannot load the Contact-GraspNet checkpoint {path!r}: {e}. {INSTALL}") from e
        model = CGN(config_utils.load_config(), torch.device("cpu"))
        model.load_state_dict(state)
        model.eval()
        _MODELS[checkpoint_path] = model
        return model


# ---------------------------------------------------------------------------- conversion
def cgn_to_graspnet(poses: np.ndarray, contacts: np.ndarray, widths: np.ndarray, *, tip_margin_m: float,
                    depth_m: float) -> tuple[np.ndarray, np.ndarray]:
    """CGN (N, 4, 4) hand poses + contacts + widths -> our (N, 3, 3) rotations and grasp points.

    Same frame in and out. The fingertips go tip_margin_m past the contacts' midpoint along the
    approach; the grasp point is depth_m behind the fingertips.
    """
    R_cgn = poses[:, :3, :3]
    R = R_cgn @ CGN_TO_GRASPNET
    approach, closing = R[:, :, 0], R[:, :, 1]
    mid = contacts + 0.5 * widths[:, None] * closing
    t = mid + (tip_margin_m - depth_m) * approach
    return R, t


def gravity_frame(up: np.ndarray) -> np.ndarray:
    """R_world_cam: rows are world axes (z = up) written in the camera frame."""
    z = up / np.linalg.norm(up)
    x = np.cross([0.0, 1.0, 0.0], z) if abs(z[1]) < 0.9 else np.cross([1.0, 0.0, 0.0], z)
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(z, x), z])


# ---------------------------------------------------------------------------- proposer
class ContactGraspNetProposer:
    """Contact-GraspNet grasps in the camera frame; see the module docstring (non-commercial weights)."""

    def __init__(self, model, *, gripper: GripperGeometry, config: ContactGraspNetConfig):
        self._model, self.gripper, self.config = model, gripper, config

    def get_grasp(self, points, colors=None, lims=None, apply_object_mask=True, dense_grasp=False,
                  collision_detection=True, *, target_mask=None, up=None, object_id: int = -1,
                  target_box=None, obstacles=None):
        """AnyGrasp's call plus `target_mask` and `up`, as `antipodal` (`target_box` and `obstacles`
        are antipodal's alone: the network completes hidden sides from what it learned). `dense_grasp` keeps every
        grasp above the threshold (no top_k cut). CGN's confidence already reflects collisions with
        the scene it sees; `collision_detection` adds no separate check."""
        import torch

        cfg, g = self.config, self.gripper
        rng = np.random.default_rng(cfg.seed)
        pts, _, ok = validate_cloud(points, colors)
        tmask = _checked_target_mask(points, ok, target_mask)
        scene = pts[voxel_downsample(pts, cfg.scene_voxel_m)]
        plane_tol = float(range_tolerance_m(np.median(np.linalg.norm(scene, axis=1)), floor_m=PLANE_TOL_M))
        plane = fit_plane(scene if tmask is None or (~tmask).sum() < 3 else pts[~tmask], threshold_m=plane_tol,
                          seed=cfg.seed)
        up_vec = _up_vector(up, plane, pts)
        if tmask is None:
            if lims is not None:
                tmask = lims_mask(pts, lims)
            elif apply_object_mask and plane is not None:
                tmask = np.sign(plane.normal @ up_vec) * plane.distance(pts) > max(cfg.object_height_m, plane_tol)
            else:
                tmask = np.ones(len(pts), bool)
        if not tmask.any():
            return GraspGroup(note="no target points after cropping/masking: nothing to grasp"), pts

        # random order (and a random subset beyond max_points), as Contact-GraspNet feeds its net
        sub = rng.permutation(len(pts))[: cfg.max_points]
        cloud, on_target = pts[sub], tmask[sub]
        R_wc = gravity_frame(up_vec)
        mean = cloud.mean(axis=0)
        cloud_w = (cloud - mean) @ R_wc.T
        if cfg.torch_threads:
            torch.set_num_threads(cfg.torch_threads)

        pos = torch.from_numpy(cloud_w.astype(np.float32))
        batch = torch.zeros(len(pos), dtype=torch.long)
        with torch.no_grad(), warnings.catch_warnings():
            # cgn_pytorch calls torch.cross without dim (deprecated); harmless for its 3-vectors
            warnings.filterwarnings("ignore", message=".*torch.cross without specifying the dim.*")
            centres = cgn_ops.fps(pos, batch, min(1.0, cfg.num_centres / len(pos)))
            contacts, poses, logits, widths, _, _ = self._model(
                pos[:, 3:], pcd_poses=pos, batch=batch, idxs=centres,
                gripper_depth=CGN_GRIPPER_DEPTH_M, gripper_width=CGN_WIDTH_CLAMP_M)
        score = torch.sigmoid(logits).reshape(-1).numpy().astype(np.float64)
        contacts = contacts.reshape(-1, 3).numpy().astype(np.float64)
        poses = poses.reshape(-1, 4, 4).numpy().astype(np.float64)
        widths = widths.reshape(-1).numpy().astype(np.float64)

        keep = on_target[centres.numpy()] & (score >= cfg.min_score)
        n_target, n_conf = int(on_target[centres.numpy()].sum()), int(keep.sum())
        keep &= widths <= g.max_width_m  # wider than the gripper opens: not executable
        if not keep.any():
            return GraspGroup(note=f"Contact-GraspNet: {n_target} of {len(score)} centres on the target, {n_conf} above "
                                   f"score {cfg.min_score}, none narrower than the {g.max_width_m:.3f} m opening"), pts
        R_w, t_w = cgn_to_graspnet(poses[keep], contacts[keep], widths[keep],
                                   tip_margin_m=cfg.tip_margin_m, depth_m=cfg.depth_m)
        R_c = np.einsum("ji,njk->nik", R_wc, R_w)          # R_wc^T @ R_w
        t_c = t_w @ R_wc + mean
        widths = widths[keep]
        if cfg.refine_with_cloud:
            t_c, widths = refine_with_cloud(R_c, t_c, widths, pts[tmask], g, tip_margin_m=cfg.tip_margin_m, depth_m=cfg.depth_m)
        gg = GraspGroup.from_parts(scores=score[keep], widths=np.clip(widths, g.min_width_m, g.max_width_m),
                                   heights=g.finger_height_m, depths=cfg.depth_m, rotations=R_c, translations=t_c,
                                   object_ids=object_id)
        if lims is not None and target_mask is not None:
            gg = gg[lims_mask(gg.translations, lims)]
        gg = gg.nms(cfg.nms_translation_m, np.deg2rad(cfg.nms_rotation_deg))
        if not dense_grasp:
            gg = gg[: cfg.top_k]
        if len(gg) == 0:
            gg = GraspGroup(note="no Contact-GraspNet grasp left inside lims")
        return gg, pts


def refine_with_cloud(R: np.ndarray, t: np.ndarray, widths: np.ndarray, target: np.ndarray, g: GripperGeometry, *,
                      tip_margin_m: float, depth_m: float, voxel_m: float = 0.004, margin_m: float = 0.004,
                      k: int = 256):
    """Width and centring from the target points the pads would close on.

    The checkpoint's width head often predicts ~0 on our scenes, which centres the gripper on its
    contact. Per grasp: target points inside the finger slab (|z| <= pad height / 2, x within the
    finger depth behind the tips) from just behind CGN's contact to a full opening beyond it along
    the closing axis (which CGN points from its contact toward the other) give the object's extent;
    the grasp is re-centred on it and the width is that extent plus a margin on each side.
    Grasps with fewer than 3 such points keep CGN's values.
    """
    tgt = target[voxel_downsample(target, voxel_m)]
    a, b = R[:, :, 0], R[:, :, 1]
    contact = t + (depth_m - tip_margin_m) * a - 0.5 * widths[:, None] * b
    centre = contact + 0.5 * g.max_width_m * b
    reach = float(np.linalg.norm([g.max_width_m / 2 + margin_m, g.max_depth_m, g.finger_height_m / 2]))
    kk = min(k, len(tgt))
    d, idx = cKDTree(tgt).query(centre, k=kk, distance_upper_bound=reach, workers=-1)
    d, idx = d.reshape(len(t), kk), idx.reshape(len(t), kk)
    valid = np.isfinite(d)
    q = np.matmul(tgt[np.where(valid, idx, 0)] - contact[:, None, :], R)
    x, y, z = q[..., 0], q[..., 1], q[..., 2]
    inside = valid & (np.abs(z) <= g.finger_height_m / 2) & (y >= -margin_m) & (y <= g.max_width_m) \
        & (x <= tip_margin_m) & (x >= tip_margin_m - g.max_depth_m)
    ok = inside.sum(axis=1) >= 3
    ymin = np.where(inside, y, np.inf).min(axis=1)
    ymax = np.where(inside, y, -np.inf).max(axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf where nothing is between the pads: not selected
        mid_y = np.where(ok, (ymin + ymax) / 2, 0.5 * widths)
        width = np.where(ok, ymax - ymin + 2 * margin_m, widths)
    return contact + mid_y[:, None] * b + (tip_margin_m - depth_m) * a, width


def _checked_target_mask(points, ok, target_mask):
    if target_mask is None:
        return None
    m = np.asarray(target_mask)
    n = np.asarray(points).shape[0]
    if m.dtype != bool or m.shape != (n,):
        raise InvalidGoalError(f"target_mask must be a bool array of shape ({n},), got {m.dtype} {m.shape}")
    return m[ok]


def _up_vector(up, plane, pts) -> np.ndarray:
    """Camera-frame up: given, else the support plane's normal toward the camera, else toward the camera."""
    if up is not None:
        u = np.asarray(up, float).reshape(3)
        if not np.all(np.isfinite(u)) or np.linalg.norm(u) < 1e-9:
            raise InvalidGoalError(f"up must be a finite non-zero 3-vector, got {up!r}")
        return u / np.linalg.norm(u)
    if plane is not None:
        return plane.normal if plane.offset > 0 else -plane.normal
    m = pts.mean(axis=0)
    return -m / max(np.linalg.norm(m), 1e-9)


def make_contact_graspnet(*, gripper: GripperGeometry | dict | None = None, **config) -> ContactGraspNetProposer:
    """Registry factory: BackendUnavailableError (with the install command) when the extras are missing."""
    cfg = ContactGraspNetConfig(**config)
    g = gripper if isinstance(gripper, GripperGeometry) else GripperGeometry(**(gripper or {}))
    return ContactGraspNetProposer(load_model(cfg.checkpoint_path), gripper=g, config=cfg)
