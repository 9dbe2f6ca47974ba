"""Each node refuses a bad configuration at start-up with one line naming the file, the key and
the value, and exit status 1: no traceback, no node that starts and fails its first goal."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from concurrent_runs import ConcurrentRuns, selected_params
from ros_helpers import private_domain_id

pytest.importorskip("rclpy")

PARAMS = Path(__file__).resolve().parents[2] / "config" / "params"
ENV = {**os.environ, "ROS_DOMAIN_ID": str(private_domain_id())}


def _node(node: str, *ros_args: str) -> list[str]:
    return [sys.executable, "-m", f"spatial_manip.nodes.{node}", "--ros-args", *ros_args]


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=90, env=ENV)


def refusal(done: subprocess.CompletedProcess) -> str:
    """The node's output; it must have exited 1 with one refusal line as its last."""
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    assert "refused to start: " in out.strip().splitlines()[-1], out
    return out


def _speed_cap(t: Path):
    """25 m/s under a 50 m/s cap started, then failed INTERNAL 'not within [0;3]' at the first motion."""
    arm = t / "arm.yaml"
    arm.write_text((PARAMS / "arm.yaml").read_text().replace("  speed_m_s: 0.25", "  speed_m_s: 25.0")
                   .replace("max_tcp_speed_m_s: 0.5", "max_tcp_speed_m_s: 50.0"))
    return _node("arm_node", "-p", f"config_file:={arm}"), [str(arm), "max_tcp_speed_m_s", "50.0", "3.0"]


def _grasp_type(t: Path):
    grasp = t / "grasp.yaml"
    grasp.write_text((PARAMS / "grasp.yaml").read_text().replace("    max_width_m: 0.085", "    max_width_m: wide"))
    return _node("grasp_node", "-p", f"config_file:={grasp}"), [str(grasp), "max_width_m", "'wide'"]


def _segmenter(t: Path):
    """It was found only at the first goal."""
    return _node("planner_node", "-p", "segmenter:=clasical"), ["segmenter", "'clasical'", "classical"]


def _perception_key(t: Path):
    perception = t / "perception.yaml"
    perception.write_text((PARAMS / "perception.yaml").read_text().replace("plane_inlier_m: 0.008", "plane_inlier: 0.008"))
    return (_node("planner_node", "-p", f"perception_config_file:={perception}"),
            [str(perception), "segmenter.classical", "plane_inlier", "0.008"])


def _library_missing(t: Path):
    return (_node("planner_node", "-p", f"library_file:={t / 'cell.json'}"),
            ["library_file", "cell.json", "does not exist", "spatial-manip enroll"])


def _library_not_a_library(t: Path):
    """A workspace file given as the library: the planner would have started with no catalogue."""
    ws = t / "workspace.json"
    ws.write_text('{"viewer": {}, "robot": {}, "objects": []}')
    return _node("planner_node", "-p", f"library_file:={ws}"), ["library_file", "workspace.json", "spatial_manip.library/1"]


def _sim_params_file(t: Path):
    """A misspelt name in a ROS params file is ignored by ROS (sim.yaml's own speed_mps was)."""
    params = t / "sim.yaml"
    params.write_text("sim_node:\n  ros__parameters:\n    camera_rte_hz: 5.0\n")
    return _node("sim_node", "--params-file", str(params)), [str(params), "camera_rte_hz", "5.0", "camera_rate_hz"]


def _calibration_mm(t: Path):
    """cell_tf_node declared its parameters its own way and turned a bad calibration into INVALID_GOAL."""
    cal = t / "cell.yaml"
    cal.write_text("T_base_camera: {translation: [1200, 0, 800], rotation_xyzw: [0, 0, 0, 1]}\n")
    return _node("cell_tf_node", "-p", f"calibration_file:={cal}"), [str(cal), "translation", "1200"]


def _calibration_misspelt(t: Path):
    cal = t / "cell.yaml"
    cal.write_text("T_base_camera: {translation: [1.2, 0, 0.8], rotation_xyzw: [0, 0, 0, 1]}\n")
    return _node("cell_tf_node", "-p", f"calibraton_file:={cal}"), ["unknown parameter calibraton_file"]


# case -> (argv and the words the refusal names, from a scratch folder)
CASES = {
    "arm_node: a speed cap over the robot's own": _speed_cap,
    "grasp_node: a wrong type": _grasp_type,
    "planner_node: a misspelt segmenter, at start-up": _segmenter,
    "planner_node: an unknown key of perception.yaml": _perception_key,
    "planner_node: a library_file that does not exist": _library_missing,
    "planner_node: a library_file that is no library": _library_not_a_library,
    "sim_node: an unknown parameter of its params file": _sim_params_file,
    "cell_tf_node: a calibration in millimetres": _calibration_mm,
    "cell_tf_node: a misspelt parameter name": _calibration_misspelt,
}


@pytest.fixture(scope="module")
def started(request, tmp_path_factory):
    """Every selected case's node, started together: case -> the words its refusal must name."""
    runs, words = ConcurrentRuns(), {}
    for case in selected_params(request, "test_a_node_refuses_a_bad_configuration_at_start_up", "case"):
        argv, words[case] = CASES[case](tmp_path_factory.mktemp("case"))
        runs.start(case, argv, timeout=90, env=ENV)
    yield runs, words
    runs.close()


@pytest.mark.parametrize("case", CASES)
def test_a_node_refuses_a_bad_configuration_at_start_up(case, started):
    runs, words = started
    out = refusal(runs.result(case))
    assert all(w in out for w in words[case]), out


def test_arm_node_refuses_a_model_preset_the_controller_contradicts():
    """ur_type:=ur5 (CB3 kinematics, 125 Hz) against a controller reporting 5.11 (e-series)."""
    from emulator_ports import ports_free, start_emulator

    if not ports_free():
        pytest.skip("a UR controller or emulator already serves the fixed UR ports here")
    emu = start_emulator("--no-gripper")
    try:
        out = refusal(_run(_node("arm_node", "-p", "arm.backend:=ur_rtde", "-p", "arm.host:=127.0.0.1",
                                  "-p", "ur_type:=ur5")))
    finally:
        emu.terminate()
        emu.wait(10)
    assert all(n in out for n in ["'ur5'", "5.11", "e-series", "ur_type:=ur5e"]), out
