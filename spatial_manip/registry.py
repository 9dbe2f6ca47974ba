"""Backends chosen by a config string: one registry per role, one backend per file.

A backend module registers a factory under a name; `make(role, name, **config)` imports the
module only when that backend is asked for, so an optional SDK (pyrealsense2, ur_rtde, gsnet,
torch) is imported only by the backend that needs it.

    # spatial_manip/grasping/__init__.py
    BACKENDS = {"antipodal": "spatial_manip.grasping.antipodal:AntipodalProposer", ...}
    register_role("grasp", BACKENDS)
    proposer = make("grasp", "antipodal", max_width_m=0.085)
"""
from __future__ import annotations

import importlib
from typing import Any, Mapping

_ROLES: dict[str, dict[str, str]] = {}
_CONFIGS: dict[str, dict[str, str]] = {}


def register_role(role: str, backends: Mapping[str, str], configs: Mapping[str, str] | None = None) -> None:
    """Declare the backends of a role as name -> "module:attribute" (attribute is a factory),
    and optionally each backend's config dataclass the same way (what its YAML section holds)."""
    _ROLES.setdefault(role, {}).update(backends)
    _CONFIGS.setdefault(role, {}).update(configs or {})


def config_class(role: str, name: str):
    """The config dataclass of backend `name` of `role` (importing its module), or None."""
    resolve(role, name)                    # an unknown name is refused here
    module_name, _, attr = _CONFIGS[role].get(name, ":").partition(":")
    return getattr(importlib.import_module(module_name), attr) if module_name else None


def backend_names(role: str) -> list[str]:
    return sorted(_ROLES.get(role, {}))


def resolve(role: str, name: str):
    """The factory of backend `name` for `role`, importing its module now."""
    if role not in _ROLES:
        raise KeyError(f"unknown role {role!r}; known roles: {sorted(_ROLES)}")
    table = _ROLES[role]
    if name not in table:
        raise ValueError(f"unknown {role} backend {name!r}; choose one of {sorted(table)}")
    module_name, _, attr = table[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def make(role: str, name: str, **config: Any):
    """Build backend `name` of `role` with keyword configuration."""
    return resolve(role, name)(**config)
