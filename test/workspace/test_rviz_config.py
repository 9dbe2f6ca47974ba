"""config/rviz/spatial_manip.rviz names what the stack really publishes: the fixed frame of the
calibration, cell_tf_node's description topic (latched), the camera topics of camera.yaml and
grasp_node's marker topics, each with a QoS that matches its publisher."""
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _config():
    return yaml.safe_load((ROOT / "config" / "rviz" / "spatial_manip.rviz").read_text())["Visualization Manager"]


def _displays(kind: str) -> list[dict]:
    return [d for d in _config()["Displays"] if d["Class"] == f"rviz_default_plugins/{kind}"]


def test_fixed_frame_and_robot_model_follow_cell_tf_node():
    from spatial_manip.parameters import defaults
    from spatial_manip.workspace.cell_tf import CAMERA_JOINTS

    assert _config()["Global Options"]["Fixed Frame"] == CAMERA_JOINTS["eye_to_hand"][0] == "base"
    (robot,) = _displays("RobotModel")
    assert robot["Description Source"] == "Topic"
    assert robot["Description Topic"]["Value"] == defaults("cell_tf_node")["description_topic"]
    assert robot["Description Topic"]["Durability Policy"] == "Transient Local"   # published once, latched


def test_camera_displays_use_the_camera_topics():
    params = yaml.safe_load((ROOT / "config" / "params" / "camera.yaml").read_text())["camera_node"]["ros__parameters"]
    (cloud,) = _displays("DepthCloud")
    assert cloud["Depth Map Topic"] == params["depth_topic"]
    assert cloud["Color Image Topic"] == params["color_topic"]
    (image,) = _displays("Image")
    assert image["Topic"]["Value"] == params["color_topic"]
    # the RealSense driver publishes best effort; a reliable subscriber would never match it
    assert image["Topic"]["Reliability Policy"] == "Best Effort"


def test_marker_displays_are_the_grasp_node_and_arm_server_topics():
    pytest.importorskip("rclpy")
    from spatial_manip.nodes.arm_server import MARKER_TOPIC
    from spatial_manip.parameters import defaults

    topics = {d["Topic"]["Value"]: d["Topic"]["Durability Policy"] for d in _displays("MarkerArray")}
    PARAMS = defaults("grasp_node")
    assert topics == {PARAMS["marker_topic"]: "Transient Local", PARAMS["motion_marker_topic"]: "Transient Local",
                      MARKER_TOPIC: "Transient Local"}
