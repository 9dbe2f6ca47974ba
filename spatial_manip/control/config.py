"""Loading config/params/arm.yaml (checked at load: every section through its config
dataclass, the backends' names, the speeds against the caps and the caps against the UR's own
limits), and the shared grasp->TCP convention."""
from __future__ import annotations

import copy
import dataclasses
import functools
import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from spatial_manip.config import build, read_yaml, section
from spatial_manip.control.base import ARM_BACKENDS, GRIPPER_BACKENDS
from spatial_manip.control.fjt_arm import make_arm as make_fjt_arm
from spatial_manip.control.kinematics import URKinematics
from spatial_manip.control.primitives import PrimitivesConfig
from spatial_manip.control.safety import SafetyConfig
from spatial_manip.control.ur_rtde_arm import URRtdeConfig
from spatial_manip.geometry.reach import Reach
from spatial_manip.errors import ConfigError, InvalidGoalError
from spatial_manip.paths import params_file

MOTION_BACKENDS = ("ompl",)


# Defined here rather than in motion/: arm.yaml is checked whole at load, and motion/ sits above control/.
@dataclasses.dataclass(frozen=True, kw_only=True)
class MotionConfig:
    """The `motion` section of arm.yaml (every key optional): the motion planner's settings."""

    backend: str = "ompl"
    mount: str = "eye_to_hand"          # which URDF: eye_to_hand | eye_in_hand
    time_budget_s: float = 1.0          # per plan() call, search and smoothing together
    padding_m: float = 0.01             # planning keeps this clearance; the final check needs 0
    plan_step_rad: float = 0.03         # joint-space collision-check spacing while searching
    verify_step_rad: float = 0.01       # spacing of the final check of the timed trajectory
    simplify_s: float = 0.05            # OMPL shortcutting / smoothing time
    cloud_voxel_m: float = 0.02
    speed_scale: float = 1.0            # fraction of the envelope's joint speed/accel caps
    sample_dt_s: float = 0.008          # timed samples (125 Hz, a CB3's servoJ rate)
    seed: int | None = None             # OMPL's RNG, for repeatable plans in tests and benches
    keep_out_bodies: bool = True        # the envelope's keep-out boxes block every link, not only the TCP

    def __post_init__(self):
        if self.backend not in MOTION_BACKENDS:
            raise InvalidGoalError(f"motion.backend must be one of {MOTION_BACKENDS}, got {self.backend!r}")
        for f in ("time_budget_s", "plan_step_rad", "verify_step_rad", "simplify_s", "cloud_voxel_m", "sample_dt_s"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InvalidGoalError(f"motion.{f} must be a positive number, got {v!r}")
        if not (0.0 <= self.padding_m < 0.1):
            raise InvalidGoalError(f"motion.padding_m must be within 0..0.1 m, got {self.padding_m!r}")
        if self.seed is not None and not (isinstance(self.seed, int) and self.seed > 0):
            raise InvalidGoalError(f"motion.seed must be a positive integer (OMPL refuses 0), got {self.seed!r}")
        if not (0.0 < self.speed_scale <= 1.0):
            raise InvalidGoalError(f"motion.speed_scale must be within (0, 1], got {self.speed_scale!r}")

    @classmethod
    def from_config(cls, cfg: Mapping | None) -> "MotionConfig":
        return build(cls, cfg, "motion")


def default_config_path() -> Path:
    """config/params/arm.yaml of the source tree, else the installed share/ copy."""
    return params_file("arm.yaml")


def load_arm_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> dict:
    """The arm configuration as a dict; `overrides` use dotted keys ("arm.backend": "sim").
    A ConfigError naming the file, the key and the value when any section is wrong."""
    p = Path(path) if path else default_config_path()
    cfg = read_yaml(p)
    for key, value in (overrides or {}).items():
        node = cfg
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    _apply_preset(cfg, str(p))
    backend = cfg.get("arm", {}).get("backend")
    chosen = (cfg.get("arm", {}).get(backend) or {}) if backend else {}
    _merge(cfg, chosen.get("overrides") or {})  # e.g. the sim model's own TCP offset
    check_arm_config(cfg, str(p))
    return cfg


def _apply_preset(cfg: dict, where: str) -> None:
    """Merge the preset arm.model names (the UR5's or the UR5e's kinematics and RTDE rate)."""
    model = (cfg.get("arm") or {}).get("model")
    if model is None:
        return
    presets = cfg.get("presets") or {}
    if model not in presets:
        raise ConfigError(f"{where}: arm.model: {model!r} is not one of the presets {', '.join(sorted(presets))} "
                          "(each sets kinematics.model and the RTDE rate)")
    _merge(cfg, presets[model])


def check_arm_config(cfg: Mapping, where: str) -> None:
    """Build every section's config dataclass once, so a wrong key, type or value stops the
    node that reads the file at start-up instead of failing its first motion."""
    arm = section(cfg, "arm", where)
    _one_of(arm.get("backend"), ARM_BACKENDS, f"{where}: arm.backend")
    _one_of(section(arm, "gripper", f"{where}: arm", required=False).get("backend", "none"),
            [*GRIPPER_BACKENDS, "none"], f"{where}: arm.gripper.backend")
    if arm["backend"] == "ur_rtde":
        build(URRtdeConfig, section(arm, "ur_rtde", f"{where}: arm", required=False), f"{where}: arm.ur_rtde",
              ignore=("overrides",))
    if arm["backend"] == "ur_driver":     # its settings, checked without connecting
        _checked(lambda values: make_fjt_arm(**values), dict(section(arm, "ur_driver", f"{where}: arm", required=False),
                                                             model=cfg.get("kinematics", {}).get("model", "ur5")), where)
    safety = _checked(SafetyConfig.from_config, section(cfg, "safety", where), where)
    primitives = _checked(PrimitivesConfig.from_config, section(cfg, "primitives", where), where)
    _checked(URKinematics.from_config, section(cfg, "kinematics", where), where)
    reach_rule(cfg, where)
    _checked(MotionConfig.from_config, section(cfg, "motion", where, required=False), where)
    _speeds_within_caps(primitives, safety, where)


def _checked(make, values: dict, where: str):
    try:
        return make(values)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e.message}") from e
    except (InvalidGoalError, KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {getattr(e, 'message', e)}") from e


def _one_of(name, names, key: str) -> None:
    if name not in names:
        raise ConfigError(f"{key}: {name!r} is not one of {', '.join(sorted(names))}")


def _speeds_within_caps(primitives, safety, where: str) -> None:
    """The primitives' speeds under the safety caps: the envelope would silently cap them."""
    for speed, cap in (("speed_m_s", "max_tcp_speed_m_s"), ("accel_m_s2", "max_tcp_accel_m_s2"),
                       ("joint_speed_rad_s", "max_joint_speed_rad_s"), ("joint_accel_rad_s2", "max_joint_accel_rad_s2")):
        if getattr(primitives, speed) > getattr(safety, cap):
            raise ConfigError(f"{where}: primitives.{speed}: {getattr(primitives, speed)} is over safety.{cap} "
                              f"({getattr(safety, cap)}); accepted: (0, {getattr(safety, cap)}]")


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


def load_kinematics(path: str | Path | None = None, backend: str = "", model: str = ""):
    """The arm's URKinematics (model, limits, TCP offset) from arm.yaml; `backend` picks that
    file's per-backend overrides (the simulated UR5e's own TCP offset), `model` its preset."""
    return URKinematics.from_config(_for_backend(path, backend, model)["kinematics"])


REACH_KEYS = ("reach_m", "slot_reach_m")     # arm.yaml's `reach` section (optional: geometry.reach's defaults)


def reach_rule(cfg: Mapping, where: str) -> Reach:
    """The reach rule (geometry.reach) of the arm `cfg` (a whole arm.yaml) configures: its
    shoulder at the model's DH d1, its `reach` section's figures, and its safety workspace box,
    so no set-down the envelope would refuse counts as reached."""
    figures = section(cfg, "reach", where, required=False)
    unknown = sorted(set(figures) - set(REACH_KEYS))
    if unknown:
        raise ConfigError(f"{where}: reach: unknown key {unknown[0]!r}; known: {', '.join(REACH_KEYS)}")
    kinematics = _checked(URKinematics.from_config, section(cfg, "kinematics", where), where)
    workspace = _checked(SafetyConfig.from_config, section(cfg, "safety", where), where).workspace
    return build(Reach, {**figures, "shoulder_z_m": kinematics.d1, "workspace_min_m": tuple(workspace.min_m),
                         "workspace_max_m": tuple(workspace.max_m)}, f"{where}: reach")


@functools.lru_cache(maxsize=8)
def load_reach(path: str = "", backend: str = "", model: str = "") -> Reach:
    """The reach rule (geometry.reach) of the arm arm.yaml configures: `backend`'s overrides (the
    simulator's UR5e, its own figures and workspace), `model` its preset ("" = its arm.model);
    read once per arguments."""
    return reach_rule(_for_backend(path, backend, model), str(path or default_config_path()))


def load_home_q(path: str | Path | None = None, backend: str = "", model: str = "") -> tuple:
    """The arm's home joints (primitives.home_q in arm.yaml, with `backend`'s overrides): where
    motions start, so the IK branch they end on is the one nearest these."""
    return tuple(float(v) for v in _for_backend(path, backend, model)["primitives"]["home_q"])


def load_workspace(path: str | Path | None = None, backend: str = "", model: str = "") -> tuple[tuple, tuple]:
    """The TCP's allowed box (safety.workspace_min_m, _max_m in arm.yaml, with `backend`'s
    overrides), base frame: the one workspace a cell sets, read by whoever keeps the arm in it."""
    workspace = SafetyConfig.from_config(_for_backend(path, backend, model)["safety"]).workspace
    return tuple(workspace.min_m), tuple(workspace.max_m)


def arm_overrides(backend: str = "", model: str = "") -> dict:
    """load_arm_config's overrides choosing a backend and a model preset ("" = the file's)."""
    return {**({"arm.backend": backend} if backend else {}), **({"arm.model": model} if model else {})}


def _for_backend(path, backend: str, model: str = "") -> dict:
    """arm.yaml with `backend`'s overrides merged in ("" = the file's own backend)."""
    return load_arm_config(path or None, arm_overrides(backend, model) or None)
