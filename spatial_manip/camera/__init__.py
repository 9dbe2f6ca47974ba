"""RGB-D camera sources (ROS-free).

Backends are registered under the role "camera"; the SDK of a backend is imported only when
that backend is built:

    src = make("camera", "realsense", source="file", file_path="run.db3", real_time=False)
"""
from spatial_manip.registry import register_role

BACKENDS = {
    "realsense": "spatial_manip.camera.realsense:make_realsense_source",
}
register_role("camera", BACKENDS)
