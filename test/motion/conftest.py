"""The real cell's arm and planner, shared by the motion tests that plan on it (a module that needs
another planner defines its own `planner`)."""
import numpy as np
import pytest


@pytest.fixture(scope="module")
def arm_cfg():
    from spatial_manip.control.config import load_arm_config

    return load_arm_config()             # the real cell: UR5e, 2F-85 TCP 0.15 m, camera-stand keep-out


@pytest.fixture(scope="module")
def planner(arm_cfg):
    from spatial_manip.motion.factory import make_planner

    return make_planner(arm_cfg, {"seed": 5})


@pytest.fixture(scope="module")
def home(arm_cfg):
    return np.asarray(arm_cfg["primitives"]["home_q"], float)
