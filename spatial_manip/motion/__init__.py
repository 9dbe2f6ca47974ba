"""Collision-aware motion: the robot description (URDF/SRDF), a collision world built from the
perceived scene and depth cloud, and joint-space planners behind the `MotionPlanner` protocol.

ROS-free; the nodes and the grasp service call `make_planner(...)` and `CollisionWorld`.
"""
