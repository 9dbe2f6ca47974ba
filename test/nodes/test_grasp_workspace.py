"""grasp_node keeps grasps inside the arm's safety workspace (arm.yaml's safety.workspace_*, with
the chosen backend's overrides): a lab sets one workspace, and a grasp outside it is one the arm's
envelope would refuse."""
import pytest

from spatial_manip.control.config import load_arm_config
from spatial_manip.parameters import defaults

pytest.importorskip("rclpy")

from spatial_manip.nodes.grasp_node import GraspNode  # noqa: E402


def _box(arm_yaml: dict) -> tuple[tuple, tuple]:
    safety = arm_yaml["safety"]
    return tuple(safety["workspace_min_m"]), tuple(safety["workspace_max_m"])


@pytest.mark.parametrize("backend", ["", "sim"])
def test_the_grasp_box_is_the_arms_safety_workspace(backend):
    config = GraspNode.service_config({**defaults("grasp_node"), "arm_backend": backend})
    lo, hi = _box(load_arm_config(None, {"arm.backend": backend} if backend else None))
    assert (config.workspace_min_m, config.workspace_max_m) == (lo, hi)


def test_a_cells_own_workspace_reaches_the_grasp_box(tmp_path):
    """The real cell's arm.yaml is the only place its workspace is written."""
    from spatial_manip.paths import params_file

    arm = tmp_path / "arm.yaml"
    arm.write_text(params_file("arm.yaml").read_text().replace("workspace_max_m: [ 0.95,  0.75,  0.90]",
                                                               "workspace_max_m: [ 0.70,  0.50,  0.60]"))
    config = GraspNode.service_config({**defaults("grasp_node"), "arm_config_file": str(arm)})
    assert config.workspace_max_m == (0.70, 0.50, 0.60)
    assert config.workspace_min_m == (-0.20, -0.75, -0.05)
