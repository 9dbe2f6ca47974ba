"""Each node refuses a bad configuration at start-up with one line naming the file, the key and
the value, and exit status 1: no traceback, no node that starts and fails its first goal."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy")

PARAMS = Path(__file__).resolve().parents[2] / "config" / "params"


def refusal(node: str, *ros_args: str) -> str:
    """The node's output; it must have exited 1 with one refusal line as its last."""
    proc = subprocess.run([sys.executable, "-m", f"spatial_manip.nodes.{node}", "--ros-args", *ros_args],
                          capture_output=True, text=True, timeout=90, env={**os.environ, "ROS_DOMAIN_ID": "57"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in out, out
    assert "refused to start: " in out.strip().splitlines()[-1], out
    return out


def test_arm_node_refuses_a_speed_cap_over_the_robots_own(tmp_path):
    """25 m/s under a 50 m/s cap started, then failed INTERNAL 'not within [0;3]' at the first motion."""
    arm = tmp_path / "arm.yaml"
    arm.write_text((PARAMS / "arm.yaml").read_text().replace("  speed_m_s: 0.25", "  speed_m_s: 25.0")
                   .replace("max_tcp_speed_m_s: 0.5", "max_tcp_speed_m_s: 50.0"))
    out = refusal("arm_node", "-p", f"config_file:={arm}")
    assert all(n in out for n in [str(arm), "max_tcp_speed_m_s", "50.0", "3.0"]), out


def test_grasp_node_refuses_a_wrong_type(tmp_path):
    grasp = tmp_path / "grasp.yaml"
    grasp.write_text((PARAMS / "grasp.yaml").read_text().replace("    max_width_m: 0.085", "    max_width_m: wide"))
    out = refusal("grasp_node", "-p", f"config_file:={grasp}")
    assert all(n in out for n in [str(grasp), "max_width_m", "'wide'"]), out


def test_planner_node_refuses_a_misspelt_segmenter_at_start_up():
    """It was found only at the first goal."""
    out = refusal("planner_node", "-p", "segmenter:=clasical")
    assert all(n in out for n in ["segmenter", "'clasical'", "classical"]), out


def test_planner_node_reads_perception_yaml_and_refuses_an_unknown_key(tmp_path):
    perception = tmp_path / "perception.yaml"
    perception.write_text((PARAMS / "perception.yaml").read_text().replace("plane_inlier_m: 0.008", "plane_inlier: 0.008"))
    out = refusal("planner_node", "-p", f"perception_config_file:={perception}")
    assert all(n in out for n in [str(perception), "segmenter.classical", "plane_inlier", "0.008"]), out


def test_sim_node_refuses_an_unknown_parameter_of_its_params_file(tmp_path):
    """A misspelt name in a ROS params file is ignored by ROS (sim.yaml's own speed_mps was)."""
    params = tmp_path / "sim.yaml"
    params.write_text("sim_node:\n  ros__parameters:\n    camera_rte_hz: 5.0\n")
    out = refusal("sim_node", "--params-file", str(params))
    assert all(n in out for n in [str(params), "camera_rte_hz", "5.0", "camera_rate_hz"]), out


def test_cell_tf_node_refuses_a_calibration_in_millimetres(tmp_path):
    """It declared its parameters its own way and turned a bad calibration into INVALID_GOAL."""
    cal = tmp_path / "cell.yaml"
    cal.write_text("T_base_camera: {translation: [1200, 0, 800], rotation_xyzw: [0, 0, 0, 1]}\n")
    out = refusal("cell_tf_node", "-p", f"calibration_file:={cal}")
    assert all(n in out for n in [str(cal), "translation", "1200"]), out
    assert "unknown parameter calibraton_file" in refusal("cell_tf_node", "-p", f"calibraton_file:={cal}")


def test_arm_node_refuses_a_model_preset_the_controller_contradicts():
    """ur_type:=ur5 (CB3 kinematics, 125 Hz) against a controller reporting 5.11 (e-series)."""
    from emulator_ports import ports_free

    if not ports_free():
        pytest.skip("a UR controller or emulator already serves the fixed UR ports here")
    emu = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "ur-emulator", "--quiet", "--no-gripper"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert emu.stdout.readline().strip() == "[ur-emulator] ready"
        out = refusal("arm_node", "-p", "arm.backend:=ur_rtde", "-p", "arm.host:=127.0.0.1", "-p", "ur_type:=ur5")
    finally:
        emu.terminate()
        emu.wait(10)
    assert all(n in out for n in ["'ur5'", "5.11", "e-series", "ur_type:=ur5e"]), out
