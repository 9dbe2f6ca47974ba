"""grasp.yaml is checked when it is loaded: a wrong type (it ended in a traceback), an unknown
key or a misspelt backend is a ConfigError naming the file, the key and the value."""
from pathlib import Path

import pytest

from spatial_manip.errors import ConfigError
from spatial_manip.grasping.gripper import load_grasp_config
from spatial_manip.grasping.motion_check import load_motion_check_config

GRASP = (Path(__file__).resolve().parents[2] / "config" / "params" / "grasp.yaml").read_text()


@pytest.mark.parametrize("old, new, names", [
    ("    max_width_m: 0.085", "    max_width_m: wide", ["grasp.gripper", "max_width_m", "'wide'"]),
    ("    num_seeds: 96", "    num_seeds: many", ["grasp.antipodal", "num_seeds", "'many'", "integer"]),
    ("    finger_length_m: 0.045", "    finger_lenght_m: 0.045", ["grasp.gripper", "finger_lenght_m", "0.045"]),
    ("    num_seeds: 96", "    num_seed: 96", ["grasp.antipodal", "num_seed", "96"]),
    ("    plan_budget_s: 0.5", "    plan_budgt_s: 0.5", ["grasp.motion_check", "plan_budgt_s", "0.5"]),
    ("  backend: antipodal ", "  backend: antipodl ", ["grasp.backend", "'antipodl'", "contact_graspnet"]),
    ("    num_seeds: 96", "    num_seeds: [96", ["not valid YAML", "line"]),
    ("[0.0, 1.0, 0.0], [-1.0", "[0.0, 1.0], [-1.0", ["grasp_to_tcp_rotation", "[0.0, 1.0]"]),
    ("    knuckle_reach_closed_m: 0.062", "    knuckle_reach_closed_m: 0.09", ["knuckle_reach_closed_m (0.09)", "knuckle_reach_m"]),
    ("    base_offset_m: 0.10", "    base_offset_m: 0.30", ["base_offset_m (0.3)", "palm_length_m"]),
    ("    open_margin_m: 0.02", "    open_margin_m: -0.02", ["open_margin_m", "-0.02"]),
])
def test_a_bad_grasp_yaml_is_refused_naming_file_key_and_value(tmp_path, old, new, names):
    path = tmp_path / "grasp.yaml"
    assert old in GRASP
    path.write_text(GRASP.replace(old, new))
    with pytest.raises(ConfigError) as e:
        load_grasp_config(path)
        load_motion_check_config(path)
    assert e.value.message.startswith(str(path)) and "\n" not in e.value.message
    for name in names:
        assert name in e.value.message


def test_a_backend_named_on_the_command_line_is_checked_and_gets_its_section():
    path = Path(__file__).resolve().parents[2] / "config" / "params" / "grasp.yaml"
    assert load_grasp_config(path, "contact_graspnet")[2]["min_score"] == 0.3
    with pytest.raises(ConfigError, match="'antipodl'"):
        load_grasp_config(path, "antipodl")
