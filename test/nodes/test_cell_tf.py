"""cell_tf_node: the calibration as static TF, the calibrated robot description and the arm's
TF from /joint_states, checked in the core and over real DDS (a separate listener process that
joins after the node published, as RViz does)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from spatial_manip.geometry.calibration import HandEyeCalibration, load_calibration
from spatial_manip.transforms import make_transform
from spatial_manip.workspace import cell_tf

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
Q = [0.3, -1.2, 1.5, -0.7, 1.2, 0.4]
T_CAL = make_transform(Rotation.from_euler("xyz", [-2.3, 0.05, 1.4]).as_matrix(), [1.05, -0.32, 0.74])


def _chain(transforms, link: str) -> tuple[str, np.ndarray]:
    """Compose child -> root through (parent, child, T) triples: the root and root <- link."""
    by_child = {c: (p, T) for p, c, T in transforms}
    T = np.eye(4)
    while link in by_child:
        parent, T_link = by_child[link]
        T, link = T_link @ T, parent
    return link, T


@pytest.fixture()
def calibration_file(tmp_path):
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump({"mode": "eye_to_hand", "T_base_camera": {"matrix": T_CAL.tolist()}}))
    return path


def test_description_carries_the_calibration_and_the_arm_matches_pinocchio(calibration_file):
    from spatial_manip.motion.robot import RobotModel, description_paths

    cal = load_calibration(calibration_file)
    joints = cell_tf.parse_joints(cell_tf.calibrated_description(cal))
    fixed = cell_tf.fixed_transforms(joints)
    assert ("base", "camera_color_optical_frame") in [(p, c) for p, c, _ in fixed]
    root, T_cam = _chain(fixed, "camera_color_optical_frame")
    assert root == "base" and np.allclose(T_cam, T_CAL, atol=1e-7)
    root, T_tool0 = _chain(fixed + cell_tf.joint_transforms(joints, dict(zip(JOINTS, Q))), "tool0")
    assert root == "base"
    assert np.allclose(T_tool0, RobotModel(*description_paths("ur5e", "eye_to_hand")).fk_tool0(np.array(Q)), atol=1e-9)


def test_eye_in_hand_camera_hangs_from_tool0():
    T = make_transform(Rotation.from_euler("z", 0.2).as_matrix(), [-0.09, 0.01, 0.05])
    cal = HandEyeCalibration("eye_in_hand", T)
    assert cell_tf.calibration_transform(cal)[:2] == ("tool0", "camera_color_optical_frame")
    joints = cell_tf.parse_joints(cell_tf.calibrated_description(cal, "ur5"))
    camera = [(p, T_) for p, c, T_ in cell_tf.fixed_transforms(joints) if c == "camera_color_optical_frame"]
    assert len(camera) == 1 and camera[0][0] == "tool0" and np.allclose(camera[0][1], T, atol=1e-7)


def _node_env(extra: dict) -> dict:
    return {**os.environ, **extra, "PYTHONUNBUFFERED": "1"}


def test_node_publishes_the_calibration_over_dds_to_a_late_listener(calibration_file):
    from tf2_msgs_build import tf2_msgs_env

    env = _node_env(tf2_msgs_env())
    node = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.cell_tf_node", "--ros-args",
                             "-p", f"calibration_file:={calibration_file}"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for_line(node, "static TF base -> camera_color_optical_frame", 20)
        # the listener starts after the publication: transient-local must still deliver it
        out = subprocess.run([sys.executable, str(HELPERS / "tf_listener.py"), json.dumps(Q), "15"], env=env,
                             capture_output=True, text=True, timeout=40)
    finally:
        node.send_signal(signal.SIGINT)
        node.wait(timeout=10)
    assert out.returncode == 0, out.stdout + out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    cam = [t for t in got["static"] if t["child"] == "camera_color_optical_frame"]
    assert len(cam) == 1 and cam[0]["parent"] == "base"
    T = make_transform(Rotation.from_quat(cam[0]["xyzw"]).as_matrix(), cam[0]["xyz"])
    assert np.allclose(T, T_CAL, atol=1e-6)
    assert 'name="base_camera_optical"' in got["description"] and "<robot" in got["description"]
    # the arm's moving joints from /joint_states, with the fixed ones: tool0 where FK puts it
    moving = [(t["parent"], t["child"], make_transform(Rotation.from_quat(t["xyzw"]).as_matrix(), t["xyz"]))
              for t in got["tf"] + got["static"]]
    root, T_tool0 = _chain(moving, "tool0")
    from spatial_manip.motion.robot import RobotModel, description_paths

    assert root == "base"
    assert np.allclose(T_tool0, RobotModel(*description_paths("ur5e", "eye_to_hand")).fk_tool0(np.array(Q)), atol=1e-6)


def _wait_for_line(proc, text: str, timeout_s: float) -> None:
    deadline, seen = time.monotonic() + timeout_s, []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"cell_tf_node never logged {text!r}; it printed:\n{''.join(seen)}")


def test_node_without_a_calibration_file_stops_with_a_message():
    r = subprocess.run([sys.executable, "-m", "spatial_manip.nodes.cell_tf_node"], env=_node_env({}),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "calibration_file" in r.stderr
