"""spatial_manip: spatial-instruction pick and place.

Layers: a ROS-free core (geometry, tools, perception, reasoning, grasping, control, sim, bench,
bags), thin rclpy adapters in `nodes`, and `bringup` for starting graphs with or without
`ros2 launch`. Only `nodes` and `bringup` touch ROS.
"""
__version__ = "0.1.0"

from spatial_manip.rendering import choose_gl_backend as _choose_gl_backend

# Before anything imports MuJoCo (the CLI, every node, the bench workers): headless GL by default.
_choose_gl_backend(strict=False)
