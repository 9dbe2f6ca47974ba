"""Test-wide environment: ROS 2 discovery kept on this machine, a random domain per run,
headless MuJoCo. Set before any test imports rclpy or mujoco, and inherited by every process
a test starts."""
import os
import random

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # Jazzy and later
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")                     # Humble
# A distinct domain per run (and per xdist worker) so concurrent runs never see each other.
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SM_TEST_DOMAIN_ID") or str(random.SystemRandom().randint(1, 101))
