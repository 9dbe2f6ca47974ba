"""Test-wide environment: ROS 2 discovery kept on this machine, a random domain per run,
headless MuJoCo. Set before any test imports rclpy or mujoco, and inherited by every process
a test starts."""
import os
import random

import pytest

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # Jazzy and later
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")                     # Humble
# A distinct domain per run (and per xdist worker) so concurrent runs never see each other.
os.environ["ROS_DOMAIN_ID"] = os.environ.get("SM_TEST_DOMAIN_ID") or str(random.SystemRandom().randint(1, 101))


@pytest.fixture(scope="session")
def vga_recording(tmp_path_factory):
    """A 12-frame 640x480 synthetic L515 recording (0.25 mm depth units): the camera tests' and
    camera_node's."""
    from spatial_manip.camera.synthetic import SyntheticConfig, build_recording  # after the env above

    path = tmp_path_factory.mktemp("rec") / "vga.db3"
    return build_recording(str(path), SyntheticConfig(n_frames=12, distinct_frames=4))
