"""spatial_manip: spatial-instruction pick and place.

Layers: a ROS-free core built on `camera_model`, `transforms`, `observation` and `scene` (geometry,
tools, perception, reasoning, grasping, motion, control, sim, bags, ...), thin rclpy adapters in
`nodes`, and above them the tools no core package imports: `bringup` (graphs, with or without
`ros2 launch`), `commands`, `bench` and `devtools`. ROS is imported by `nodes`, `bringup`, the
tools that drive a graph, and in the core only by the arm backend for the UR ROS driver
(control/trajectory_arm.py and fjt_arm.py, when that backend is chosen).
"""
__version__ = "0.1.0"

from spatial_manip.rendering import choose_gl_backend as _choose_gl_backend

# Before anything imports MuJoCo (the CLI, every node, the bench workers): headless GL by default.
_choose_gl_backend(strict=False)
