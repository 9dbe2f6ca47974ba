"""Grasping: `GraspGroup` (graspnetAPI layout) and `GraspProposer` backends, role "grasp".

Backends: `antipodal` (default, geometric, no weights), `contact_graspnet` (optional, PyPI
`cgn-pytorch`, NVIDIA non-commercial weights: requirements-contact-graspnet.txt), `anygrasp`
(optional, the licensed `gsnet` SDK).
"""
from spatial_manip.grasping.base import GraspProposer  # noqa: F401
from spatial_manip.grasping.grasp_group import Grasp, GraspGroup  # noqa: F401
from spatial_manip.registry import register_role

BACKENDS = {
    "antipodal": "spatial_manip.grasping.antipodal:AntipodalProposer",
    "contact_graspnet": "spatial_manip.grasping.contact_graspnet:make_contact_graspnet",
    "anygrasp": "spatial_manip.grasping.anygrasp:make_anygrasp",
}
CONFIGS = {   # what each backend's section of grasp.yaml holds
    "antipodal": "spatial_manip.grasping.antipodal:AntipodalConfig",
    "contact_graspnet": "spatial_manip.grasping.contact_graspnet:ContactGraspNetConfig",
    "anygrasp": "spatial_manip.grasping.anygrasp:AnyGraspConfig",
}
register_role("grasp", BACKENDS, CONFIGS)
DEFAULT_BACKEND = "antipodal"
