"""Where the package's config lives: the source tree (editable installs, the pip-only launcher)
or the ament share directory (a colcon install on a ROS machine)."""
from __future__ import annotations

import os
from pathlib import Path


def config_dir() -> Path:
    env = os.environ.get("SPATIAL_MANIP_CONFIG")
    if env:
        return Path(env)
    source = Path(__file__).resolve().parents[1] / "config"
    if source.is_dir():
        return source
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory("spatial_manip")) / "config"
    except Exception as e:  # ament_index missing or package not installed
        raise FileNotFoundError(
            "cannot find spatial_manip's config directory; set SPATIAL_MANIP_CONFIG") from e


def resolve_config(path: str | os.PathLike) -> Path:
    """A config path as written in a graph file: absolute, or relative to the config dir."""
    p = Path(path)
    return p if p.is_absolute() else config_dir() / p
