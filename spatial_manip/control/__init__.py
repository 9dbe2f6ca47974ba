"""Arm control: kinematics, safety envelope, Arm/Gripper protocols and backends, primitives.

Importing the package registers the `arm` and `gripper` backend roles (see base.py); SDKs
(ur_rtde, mujoco) are imported only by the backend that needs them.
"""
from spatial_manip.control import base as _base  # noqa: F401  (registers the backend roles)
