"""spatial_manip: spatial-instruction pick and place.

Layers: a ROS-free core (geometry, tools, perception, reasoning, grasping, control, sim, bench,
bags), thin rclpy adapters in `nodes`, and `bringup` for starting graphs with or without
`ros2 launch`. Only `nodes` and `bringup` touch ROS.
"""
__version__ = "0.1.0"
