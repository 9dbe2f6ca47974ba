"""The Gazebo variant's wiring, checked without Gazebo: the bridge file maps the topics an exported
world publishes to the topics our nodes read, the `gazebo` graph loads, its arm config is the real
robot's but for the backend, and the launch file builds its commands without `launch` installed."""
import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.spatial.transform import Rotation

from spatial_manip.bringup.graph import load_graph
from spatial_manip.paths import config_dir
from spatial_manip.control.config import load_arm_config
from spatial_manip.sim import layouts, sdf_export

CONFIG = config_dir()
BRIDGE = CONFIG / "gazebo" / "bridge.yaml"
GAZEBO_ARM = CONFIG / "gazebo" / "arm.yaml"
# ROS <-> Gazebo pairs the bridge converts (ros_gz_bridge README, "message types can be bridged")
BRIDGEABLE = {
    ("sensor_msgs/msg/Image", "gz.msgs.Image"), ("sensor_msgs/msg/CameraInfo", "gz.msgs.CameraInfo"),
    ("sensor_msgs/msg/JointState", "gz.msgs.Model"), ("trajectory_msgs/msg/JointTrajectory", "gz.msgs.JointTrajectory"),
    ("rosgraph_msgs/msg/Clock", "gz.msgs.Clock"),
}


def _bridge() -> dict:
    entries = yaml.safe_load(BRIDGE.read_text())
    assert isinstance(entries, list), "ros_gz_bridge wants a YAML list of maps"
    return {e["ros_topic_name"]: e for e in entries}


def _params(name: str, node: str) -> dict:
    return yaml.safe_load((CONFIG / "params" / name).read_text())[node]["ros__parameters"]


def test_bridge_entries_are_well_formed_and_bridgeable():
    for ros_topic, e in _bridge().items():
        assert set(e) <= {"ros_topic_name", "gz_topic_name", "ros_type_name", "gz_type_name", "direction",
                          "subscriber_queue", "publisher_queue", "lazy"}, ros_topic
        assert e["direction"] in ("GZ_TO_ROS", "ROS_TO_GZ", "BIDIRECTIONAL")
        assert (e["ros_type_name"], e["gz_type_name"]) in BRIDGEABLE, ros_topic


def test_bridge_delivers_the_topics_our_nodes_read():
    bridge = _bridge()
    planner, camera = _params("planner.yaml", "planner_node"), _params("camera.yaml", "camera_node")
    wanted = {planner["color_topic"]: "/image", planner["depth_topic"]: "/depth_image",
              planner["camera_info_topic"]: "/camera_info", camera["depth_info_topic"]: "/camera_info"}
    for ros_topic, suffix in wanted.items():
        # the nodes' names are relative (they move with a namespace); in the root namespace they
        # resolve to the bridge's absolute ones
        entry = bridge["/" + ros_topic.lstrip("/")]
        assert entry["gz_topic_name"] == sdf_export.GZ_CAMERA_TOPIC + suffix
        assert entry["direction"] == "GZ_TO_ROS"
    assert bridge["/joint_states"]["gz_topic_name"] == sdf_export.GZ_JOINT_STATE_TOPIC
    arm = load_arm_config(GAZEBO_ARM)["arm"]["joint_trajectory"]
    cmd = bridge[arm["command_topic"]]
    assert (cmd["gz_topic_name"], cmd["direction"]) == (sdf_export.GZ_TRAJECTORY_TOPIC, "ROS_TO_GZ")
    assert arm["state_topic"] == "/joint_states"


def test_an_exported_world_publishes_on_the_bridged_gz_topics():
    root = ET.fromstring(sdf_export.world_sdf(layouts.sample_scene("tabletop", 3)))
    assert root.findtext(".//sensor[@type='rgbd_camera']/topic") == sdf_export.GZ_CAMERA_TOPIC
    plugins = {p.get("name"): p.findtext("topic") for p in root.iter("plugin")}
    assert plugins["gz::sim::systems::JointStatePublisher"] == sdf_export.GZ_JOINT_STATE_TOPIC
    assert plugins["gz::sim::systems::JointTrajectoryController"] == sdf_export.GZ_TRAJECTORY_TOPIC
    gz_topics = {e["gz_topic_name"] for e in _bridge().values()}
    assert gz_topics - {"/clock"} == {sdf_export.GZ_CAMERA_TOPIC + s for s in ("/image", "/depth_image", "/camera_info")} \
        | {sdf_export.GZ_JOINT_STATE_TOPIC, sdf_export.GZ_TRAJECTORY_TOPIC}


def test_the_gazebo_graph_loads_with_its_files():
    g = load_graph("gazebo")
    nodes = {n.name: n for n in g.nodes}
    assert set(nodes) == {"ros_gz_bridge", "arm_node", "grasp_node", "planner_node"}
    bridge = nodes["ros_gz_bridge"]
    assert (bridge.package, bridge.executable) == ("ros_gz_bridge", "parameter_bridge")
    assert Path(dict(bridge.params)["config_file"]).resolve() == BRIDGE.resolve()
    arm = nodes["arm_node"]
    assert Path(dict(arm.params)["config_file"]).resolve() == GAZEBO_ARM.resolve()
    assert ("/joint_states", "/spatial_manip/arm_node/joint_states") in arm.remappings
    assert "-r" in arm.ros_args() and "/joint_states:=/spatial_manip/arm_node/joint_states" in arm.ros_args()


def test_gazebo_arm_config_is_the_robots_but_for_the_backend():
    gz, real = load_arm_config(GAZEBO_ARM), load_arm_config(CONFIG / "params" / "arm.yaml")
    assert gz["arm"]["backend"] == "joint_trajectory" and gz["arm"]["gripper"]["backend"] == "none"
    for section in ("kinematics", "primitives", "reach"):
        assert gz[section] == real[section], f"config/gazebo/arm.yaml's {section} drifted from params/arm.yaml"
    sim_cell = load_arm_config(CONFIG / "params" / "arm.yaml", {"arm.backend": "sim"})["safety"]
    assert gz["safety"] == sim_cell, "config/gazebo/arm.yaml's safety drifted from the sim cell's (arm.sim.overrides)"
    # the URDF's tcp is where the kinematics put it: tool0 + 0.15 m along z
    urdf = ET.parse(sdf_export.default_robot_urdf()).getroot()
    tcp = urdf.find("joint[@name='tool0_tcp']/origin")
    assert [float(v) for v in tcp.get("xyz").split()] == gz["kinematics"]["tcp_offset"][:3]


def _load_launch_file():
    path = Path(__file__).resolve().parents[2] / "launch" / "gazebo.launch.py"
    spec = importlib.util.spec_from_file_location("gazebo_launch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_file_imports_without_launch_and_builds_its_commands(tmp_path):
    had_launch = "launch" in sys.modules
    mod = _load_launch_file()
    assert ("launch" in sys.modules) == had_launch, "gazebo.launch.py imported `launch` at module level"
    scene = layouts.sample_scene("shelf", 2)
    world = sdf_export.write_world(scene, tmp_path / "w.sdf")
    assert mod.gz_sim_command(str(world)) == ["gz", "sim", "-r", "-s", str(world)]
    assert "-s" not in mod.gz_sim_command(str(world), gui=True)
    with pytest.raises(FileNotFoundError, match="--sdf"):
        mod.gz_sim_command(str(tmp_path / "missing.sdf"))
    cmd = mod.extrinsics_command(mod.calibration_for(str(world)))
    assert cmd[:3] == ["ros2", "topic", "pub"] and "transient_local" in cmd
    topic, msg_type, body = cmd[-3:]
    assert (topic, msg_type) == ("/camera/extrinsics", "geometry_msgs/msg/PoseStamped")
    msg = yaml.safe_load(body)          # ros2 topic pub parses the message as YAML
    p = msg["pose"]["position"]
    assert np.allclose([p["x"], p["y"], p["z"]], layouts.camera_pose(scene.viewer)[:3, 3], atol=1e-9)
    q = msg["pose"]["orientation"]
    R = Rotation.from_quat([q["x"], q["y"], q["z"], q["w"]]).as_matrix()
    assert np.allclose(R, layouts.camera_pose(scene.viewer)[:3, :3], atol=1e-9)
    assert msg["header"]["frame_id"] == "base"
