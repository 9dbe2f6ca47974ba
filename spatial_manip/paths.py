"""Where the package's data lives: config/, urdf/ and launch/ of the source tree (development,
editable installs, the pip-only launcher) or of the ament share directory (`colcon build`, with or
without --symlink-install, on a ROS machine), and the interfaces' .msg files. Every node and
library finds its files through these functions, never relative to its own source file."""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

PACKAGE = "spatial_manip"
INTERFACES = "spatial_manip_interfaces"
_SOURCE_ROOT = Path(__file__).resolve().parents[1]   # the repository when run from a source tree


class DataNotFoundError(FileNotFoundError):
    """The package's data directory cannot be found; the message says where it looked."""


def _is_package_root(path: Path) -> bool:
    """A folder holding this package's data: its package.xml beside config/graphs (a
    site-packages folder that merely has a config/ of someone else's is not one)."""
    return (path / "config" / "graphs").is_dir() and (path / "package.xml").is_file()


@functools.lru_cache(maxsize=1)
def share_dir() -> Path:
    """The folder holding config/, urdf/ and launch/: the source tree when this module runs from
    one, else share/spatial_manip of the ament prefix it is installed in (or of the Python prefix
    after a plain pip install)."""
    env = os.environ.get("SPATIAL_MANIP_SHARE")
    if env:
        return Path(env)
    if _is_package_root(_SOURCE_ROOT):
        return _SOURCE_ROOT
    looked = [str(_SOURCE_ROOT)]
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        pass
    else:
        try:
            share = Path(get_package_share_directory(PACKAGE))
        except PackageNotFoundError:
            looked.append(f"the ament index (AMENT_PREFIX_PATH={os.environ.get('AMENT_PREFIX_PATH', '')!r})")
        else:
            if _is_package_root(share):
                return share
            looked.append(str(share))
    prefix_share = Path(sys.prefix) / "share" / PACKAGE    # a plain `pip install .` (setup.py's data_files)
    if _is_package_root(prefix_share):
        return prefix_share
    looked.append(str(prefix_share))
    raise DataNotFoundError(f"cannot find spatial_manip's config/ and urdf/ (looked in {', '.join(looked)}); "
                            "source the colcon install's setup.bash, run from the repository, or set "
                            "SPATIAL_MANIP_SHARE")


def config_dir() -> Path:
    env = os.environ.get("SPATIAL_MANIP_CONFIG")
    return Path(env) if env else share_dir() / "config"


def params_file(name: str) -> Path:
    """A shipped config file of config/params/ (grasp.yaml, arm.yaml, perception.yaml ...)."""
    return config_dir() / "params" / name


def urdf_dir() -> Path:
    return share_dir() / "urdf"


def resolve_config(path: str | os.PathLike) -> Path:
    """A config path as written in a graph file: absolute, or relative to the config dir."""
    p = Path(path)
    return p if p.is_absolute() else config_dir() / p


def resolve_user_file(text: str | os.PathLike) -> Path:
    """A file a user names on the command line or in a launch argument: as given when absolute or
    when it exists from the working directory, else relative to config/ (graph files write
    `calibration/cell.yaml`)."""
    p = Path(text).expanduser()
    return p if p.is_absolute() or p.exists() else resolve_config(p)


def interfaces_dir() -> Path:
    """spatial_manip_interfaces' .msg/.action files: its share directory in any ament prefix
    (installed), else its source folder beside this package."""
    candidates = [Path(p) / "share" / INTERFACES for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    candidates.append(_SOURCE_ROOT / INTERFACES)
    for c in candidates:
        if (c / "msg").is_dir():
            return c
    raise DataNotFoundError(f"cannot find the {INTERFACES} .msg files; looked in {[str(c) for c in candidates]}. "
                            "Build the interfaces (scripts/setup.sh) or run from the repository")
