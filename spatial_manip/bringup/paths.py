"""Moved to `spatial_manip.paths` (nodes and the core need it, and bringup sits above them).
Kept while `sim/sdf_export.py` imports `config_dir` from here."""
from spatial_manip.paths import config_dir, resolve_config  # noqa: F401
