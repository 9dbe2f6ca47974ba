"""Grasping: `GraspGroup` (graspnetAPI layout) and `GraspProposer` backends, role "grasp".

Backends: `antipodal` (default, geometric, no weights), `anygrasp` (optional, the licensed
`gsnet` SDK). A `contact_graspnet` backend (PyPI `cgn-pytorch`) is not written yet.
"""
from spatial_manip.grasping.base import GraspProposer  # noqa: F401
from spatial_manip.grasping.grasp_group import Grasp, GraspGroup  # noqa: F401
from spatial_manip.registry import register_role

BACKENDS = {
    "antipodal": "spatial_manip.grasping.antipodal:AntipodalProposer",
    "anygrasp": "spatial_manip.grasping.anygrasp:make_anygrasp",
}
register_role("grasp", BACKENDS)
DEFAULT_BACKEND = "antipodal"
