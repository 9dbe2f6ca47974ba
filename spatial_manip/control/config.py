"""Loading config/params/arm.yaml into plain dicts, and the shared grasp->TCP convention."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from spatial_manip.errors import InvalidGoalError

_REPO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "params" / "arm.yaml"


def default_config_path() -> Path:
    """config/params/arm.yaml of the source tree, else the installed share/ copy."""
    if _REPO_CONFIG.is_file():
        return _REPO_CONFIG
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory("spatial_manip")) / "config" / "params" / "arm.yaml"
    except Exception:  # noqa: BLE001 - no ament index here: the source path is the answer
        return _REPO_CONFIG


def load_arm_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> dict:
    """The arm configuration as a dict; `overrides` use dotted keys ("arm.backend": "sim")."""
    import yaml

    p = Path(path) if path else default_config_path()
    if not p.is_file():
        raise InvalidGoalError(f"arm config {p} does not exist; pass an arm.yaml path (see config/params/arm.yaml)")
    cfg = yaml.safe_load(p.read_text()) or {}
    cfg = copy.deepcopy(cfg)
    for key, value in (overrides or {}).items():
        node = cfg
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    backend = cfg.get("arm", {}).get("backend")
    section = (cfg.get("arm", {}).get(backend) or {}) if backend else {}
    _merge(cfg, section.get("overrides") or {})  # e.g. the sim model's own TCP offset
    return cfg


def _merge(dst: dict, src: Mapping) -> None:
    for k, v in src.items():
        if isinstance(v, Mapping) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = copy.deepcopy(v)


def grasp_to_tcp_rotation(cfg: Mapping) -> np.ndarray:
    """The fixed 3x3 rotation R with T_base_tcp = T_base_grasp @ R (from primitives.grasp_to_tcp_rotation)."""
    vals = np.asarray(cfg.get("primitives", {}).get("grasp_to_tcp_rotation",
                                                     [0, 0, 1, 0, 1, 0, -1, 0, 0]), float).reshape(-1)
    if vals.size != 9:
        raise InvalidGoalError(f"grasp_to_tcp_rotation needs 9 numbers (row-major 3x3), got {vals.size}")
    R = vals.reshape(3, 3)
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise InvalidGoalError(f"grasp_to_tcp_rotation must be a proper rotation, got {R.tolist()}")
    return R


def grasp_to_tcp(T_base_grasp: np.ndarray, R_grasp_tcp: np.ndarray) -> np.ndarray:
    """TCP pose for a graspnetAPI-convention grasp pose (approach +x -> TCP approach +z)."""
    T = np.array(T_base_grasp, float)
    T[:3, :3] = T[:3, :3] @ R_grasp_tcp
    return T


def load_kinematics(path: str | Path | None = None, backend: str = ""):
    """The arm's URKinematics (model, limits, TCP offset) from arm.yaml; `backend` picks that
    file's per-backend overrides (the simulated UR5e's own TCP offset)."""
    from spatial_manip.control.kinematics import URKinematics
    return URKinematics.from_config(_for_backend(path, backend)["kinematics"])


def load_home_q(path: str | Path | None = None, backend: str = "") -> tuple:
    """The arm's home joints (primitives.home_q in arm.yaml, with `backend`'s overrides): where
    motions start, so the IK branch they end on is the one nearest these."""
    return tuple(float(v) for v in _for_backend(path, backend)["primitives"]["home_q"])


def _for_backend(path, backend: str) -> dict:
    """arm.yaml with `backend`'s overrides merged in ("" = the file's own backend)."""
    return load_arm_config(path or None, {"arm.backend": backend} if backend else None)
