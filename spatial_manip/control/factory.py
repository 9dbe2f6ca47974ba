"""Build the configured Arm and Gripper from arm.yaml (their MotionPrimitives, which plan with
motion/, come from motion.arm_plans.make_primitives)."""
from __future__ import annotations

from typing import Mapping

from spatial_manip.control import base  # noqa: F401  (registers the roles)
from spatial_manip.registry import make


def make_arm_from_config(cfg: Mapping, **extra):
    """The `arm.backend` Arm; the backend's section `arm.<backend>` plus the TCP offset."""
    name = cfg["arm"]["backend"]
    kw = {k: v for k, v in (cfg["arm"].get(name) or {}).items() if k != "overrides"}
    kw.setdefault("tcp_offset", list(cfg["kinematics"].get("tcp_offset", [0, 0, 0, 0, 0, 0])))
    if name == "ur_driver":        # the driver tells nothing of the arm's kinematics: the preset's model
        kw.setdefault("model", cfg["kinematics"]["model"])
    kw.update(extra)
    return make("arm", name, **kw)


def make_gripper_from_config(cfg: Mapping, **extra):
    """The `arm.gripper.backend` Gripper, or None for `none` (e.g. the sim arm brings its own)."""
    g = dict(cfg["arm"].get("gripper") or {})
    name = g.pop("backend", "none")
    if name in ("none", "", None):
        return None
    g.update(extra)
    return make("gripper", name, **g)
