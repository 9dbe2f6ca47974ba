"""Build a motion planner from arm.yaml: `kinematics` (model, limits, TCP), `safety` (the
envelope and its joint caps) and the optional `motion` section (MotionConfig)."""
from __future__ import annotations

import importlib
from typing import Mapping

from spatial_manip.control.config import MotionConfig
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.motion.base import MotionPlanner
from spatial_manip.motion.robot import RobotModel, description_paths

# backend name -> "module:class"; one file per backend
BACKEND_CLASSES = {"ompl": "spatial_manip.motion.ompl_backend:OmplPlanner"}


def make_planner(arm_cfg: Mapping, overrides: Mapping | None = None) -> MotionPlanner:
    """The planner arm.yaml asks for (`motion.backend`, default "ompl"); `overrides` are merged
    over the `motion` section (e.g. {"seed": 0} in tests)."""
    config = MotionConfig.from_config({**dict(arm_cfg.get("motion") or {}), **dict(overrides or {})})
    envelope = SafetyEnvelope.from_config(arm_cfg)
    model = str(arm_cfg["kinematics"].get("model", "ur5e")).lower()
    robot = RobotModel(*description_paths(model, config.mount), T_tool0_tcp=envelope.kin.T_tool0_tcp)
    module, cls = BACKEND_CLASSES[config.backend].split(":")
    return getattr(importlib.import_module(module), cls)(robot, envelope, config)
