"""arm.yaml is checked when it is loaded: each bad file found by trying one on arm_node is a
ConfigError naming the file, the key and the value (they ended in tracebacks, or started and
failed the first motion)."""
from pathlib import Path

import pytest

from spatial_manip.control.config import load_arm_config
from spatial_manip.errors import ConfigError

ARM = (Path(__file__).resolve().parents[2] / "config" / "params" / "arm.yaml").read_text()


def without_safety(text: str) -> str:
    return text[:text.index("\nsafety:")] + text[text.index("\nprimitives:"):]


def _line_of(text: str) -> int:
    """The 1-based line of arm.yaml holding `text` (where a YAML error there is reported)."""
    return next(i for i, line in enumerate(ARM.splitlines(), 1) if text in line)


@pytest.mark.parametrize("edit, names", [
    (lambda t: t.replace("workspace_min_m: [-0.20,", "workspace_min_m: [-0.20, [,"), ["not valid YAML", f"line {_line_of('workspace_min_m: [-0.20,')}"]),
    (without_safety, ["'safety'"]),
    # 25 m/s under a 50 m/s cap started, then ur_rtde refused the first move: "not within [0;3]"
    (lambda t: t.replace("  speed_m_s: 0.25", "  speed_m_s: 25.0").replace("max_tcp_speed_m_s: 0.5", "max_tcp_speed_m_s: 50.0"),
     ["max_tcp_speed_m_s", "50.0", "3.0"]),
    (lambda t: t.replace("max_joint_speed_rad_s: 1.5", "max_joint_speed_rad_s: 6.0"), ["max_joint_speed_rad_s", "6.0", "3.14"]),
    (lambda t: t.replace("  speed_m_s: 0.25", "  speed_m_s: 0.8"), ["primitives.speed_m_s", "0.8", "(0, 0.5]"]),
    (lambda t: t.replace("  speed_m_s: 0.25", "  sped_m_s: 0.25"), ["primitives", "sped_m_s", "0.25"]),
    (lambda t: t.replace("  speed_m_s: 0.25", "  speed_m_s: fast"), ["speed_m_s", "'fast'", "a number"]),
    (lambda t: t.replace("max_tcp_speed_m_s: 0.5", "max_tcp_sped_m_s: 0.5"), ["safety", "max_tcp_sped_m_s"]),
    (lambda t: t.replace("  backend: ur_rtde ", "  backend: ur_rtd "), ["arm.backend", "'ur_rtd'", "ur_rtde"]),
    (lambda t: t.replace("backend: robotiq_socket", "backend: robotiq_sockt"), ["arm.gripper.backend", "robotiq_sockt"]),
    (lambda t: t.replace("    frequency_hz: 500.0", "    frequncy_hz: 500.0"), ["arm.ur_rtde", "frequncy_hz", "500.0"]),
    # these three were dropped without a word: the arm ran with no TCP offset or UR's DH values
    (lambda t: t.replace("\n  tcp_offset:", "\n  tcp_ofset:", 1), ["kinematics", "tcp_ofset"]),
    (lambda t: t.replace("ur5e: {d1: 0.1625,", "ur5e: {d_1: 0.1625,"), ["kinematics.dh.ur5e", "d_1"]),
    (lambda t: t.replace("\n    max: [ 6.2832,", "\n    maximum: [ 6.2832,"), ["kinematics.joint_limits", "maximum"]),
    (lambda t: t.replace("model: ur5e                      #", "model: ur3                      #"), ["kinematics.model", "ur3"]),
])
def test_a_bad_arm_yaml_is_refused_naming_file_key_and_value(tmp_path, edit, names):
    path = tmp_path / "arm.yaml"
    path.write_text(edit(ARM))
    with pytest.raises(ConfigError) as e:
        load_arm_config(path)
    assert e.value.message.startswith(str(path)) and "\n" not in e.value.message
    for name in names:
        assert name in e.value.message


def test_the_shipped_arm_files_load():
    for backend in ("ur_rtde", "sim"):
        load_arm_config(None, {"arm.backend": backend})
    load_arm_config(Path(__file__).resolve().parents[2] / "config" / "gazebo" / "arm.yaml")
