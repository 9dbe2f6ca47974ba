"""The launch arguments a lab sets at launch time, declared once for `ros2 launch` (launch/
graph_launch.py) and for anything else that starts a graph, and how each one reaches the nodes:

    ros2 launch spatial_manip real.launch.py robot_ip:=192.168.1.10 \
        calibration_file:=/etc/cell/hand_eye.yaml namespace:=cell1

An argument left at "" keeps what the graph file (and its params files) say. A graph declares
only the arguments that reach one of its nodes. Plain data, no `launch` import: the tests check
every graph without a ROS install.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from spatial_manip.bringup.graph import Graph, GraphError

EVERY_NODE = "*"
_NAMESPACE = re.compile(r"(/?[A-Za-z][A-Za-z0-9_]*)*/?")


@dataclass(frozen=True)
class LaunchArgument:
    name: str
    default: str
    description: str
    targets: tuple[tuple[str, str], ...] = ()    # (node name or "*", parameter) the value sets
    choices: tuple[str, ...] = ()                 # allowed non-empty values (none: any)
    implies: tuple[tuple[str, str, str], ...] = ()  # (this value, other argument, its default then)

    def reaches(self, graph: Graph) -> bool:
        names = {n.name for n in graph.nodes}
        return self.name == "namespace" or any(node == EVERY_NODE or node in names for node, _ in self.targets)


LAUNCH_ARGUMENTS: tuple[LaunchArgument, ...] = (
    LaunchArgument("namespace", "", "ROS namespace of every node of the graph (two cells on one network: "
                   "cell1, cell2); \"\" = the root namespace"),
    LaunchArgument("use_sim_time", "", "every node reads the clock from /clock (a simulator, `ros2 bag play "
                   "--clock` or `spatial-manip replay --clock`); \"\" = the graph's (true for replay, false elsewhere)",
                   targets=((EVERY_NODE, "use_sim_time"),), choices=("true", "false")),
    LaunchArgument("robot_ip", "", "the UR controller's address; \"\" = arm.yaml's arm.ur_rtde.host",
                   targets=(("arm_node", "arm.host"),)),
    LaunchArgument("arm_backend", "", "how arm_node drives the arm: ur_rtde (the controller directly, a cell "
                   "without the UR ROS 2 driver) or ur_driver (a running ur_robot_driver's "
                   "scaled_joint_trajectory_controller; publish_robot then defaults to false); \"\" = arm.yaml's "
                   "arm.backend", targets=(("arm_node", "arm.backend"),),
                   choices=("ur_rtde", "ur_driver", "joint_trajectory", "sim"),
                   implies=(("ur_driver", "publish_robot", "false"),)),
    LaunchArgument("ur_type", "", "arm model preset of arm.yaml's `presets`: ur5 (CB3, 125 Hz) or ur5e "
                   "(e-series, 500 Hz); \"\" = arm.yaml's arm.model. arm_node refuses one the controller "
                   "contradicts", targets=(("arm_node", "ur_type"), ("grasp_node", "ur_type"),
                                          ("planner_node", "ur_type"), ("cell_tf_node", "model")),
                   choices=("ur5", "ur5e")),
    LaunchArgument("calibration_file", "", "hand-eye calibration YAML (spatial-manip calibrate --out); "
                   "relative paths are looked up under config/; \"\" = the graph's",
                   targets=(("camera_node", "calibration_file"), ("cell_tf_node", "calibration_file"))),
    LaunchArgument("publish_robot", "", "cell_tf_node also publishes the robot description and the arm's TF: "
                   "false where the UR driver's robot_state_publisher runs (\"\" = true unless one is found at "
                   "start-up)", targets=(("cell_tf_node", "publish_robot_tf"),), choices=("true", "false")),
    LaunchArgument("workspace_file", "", "the cell's fixtures, slots and object catalogue (a scene JSON); "
                   "\"\" = none, or what the workspace topic brings", targets=(("planner_node", "workspace_file"),)),
    LaunchArgument("library_file", "", "the enrolled object library (spatial-manip enroll --library); relative "
                   "paths are looked up under config/; \"\" = the workspace's own catalogue (the simulator: its "
                   "assets' library)", targets=(("planner_node", "library_file"), ("sim_node", "library_file"))),
    LaunchArgument("camera", "", "camera_node's source: live (an L515 on USB), file (the SDK recording "
                   "camera_file) or none (realsense2_camera already publishes the images: camera_node only "
                   "publishes the calibrated camera pose); \"\" = camera.yaml's",
                   targets=(("camera_node", "source"),), choices=("live", "file", "none")),
    LaunchArgument("camera_mount_frame", "", "with realsense2_camera running: cell_tf_node publishes the calibration "
                   "as base -> this frame (camera_link) through the driver's own frames, so the optical frame keeps "
                   "one parent; \"\" = base -> the calibrated optical frame",
                   targets=(("cell_tf_node", "camera_mount_frame"),)),
    LaunchArgument("camera_file", "", "the SDK recording (.bag or .db3) played with camera:=file",
                   targets=(("camera_node", "file_path"),)),
)


def launch_arguments(graph: Graph) -> tuple[LaunchArgument, ...]:
    """The arguments that reach at least one node of `graph`."""
    return tuple(a for a in LAUNCH_ARGUMENTS if a.reaches(graph))


def apply_launch_arguments(graph: Graph, values: dict[str, str]) -> Graph:
    """`graph` with the launch arguments' values set on the nodes they reach. Values left "" (or
    out) keep the graph's; an unknown argument or a value outside the choices is a GraphError."""
    known = {a.name: a for a in launch_arguments(graph)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise GraphError(f"graph {graph.name!r} has no launch argument {unknown[0]!r}; its arguments: "
                         f"{', '.join(known)}")
    values = _with_implied(values, known)
    nodes = list(graph.nodes)
    for name, value in values.items():
        arg, value = known[name], str(value).strip()
        if value == "":
            continue
        if arg.choices and value not in arg.choices:
            raise GraphError(f"launch argument {name}:={value!r} is not one of {', '.join(arg.choices)}")
        if name == "namespace":
            nodes = [replace(n, namespace=ros_namespace(value)) for n in nodes]
            continue
        for i, n in enumerate(nodes):
            params = {param: value for node, param in arg.targets if node in (EVERY_NODE, n.name)}
            if params:
                nodes[i] = n.with_params(params)
    return replace(graph, nodes=tuple(nodes))


def _with_implied(values: dict[str, str], known: dict[str, LaunchArgument]) -> dict[str, str]:
    """`values` plus the defaults a chosen value implies for arguments left "" (arm_backend:=ur_driver:
    the driver's robot_state_publisher owns the robot description, so publish_robot:=false)."""
    out = dict(values)
    for name, value in values.items():
        for when, other, default in known[name].implies:
            if str(value).strip() == when and other in known and not str(out.get(other, "")).strip():
                out[other] = default
    return out


def ros_namespace(value: str, given_as: str = "launch argument namespace:=") -> str:
    """The absolute namespace ("/cell1") of `value` ("cell1", "/cell1/"; "" or "/": the root, ""),
    or a GraphError naming how the value was given (`given_as`)."""
    if not _NAMESPACE.fullmatch(value):
        raise GraphError(f"{given_as}{value!r} is not a ROS namespace (names of letters, digits and _ "
                         "separated by /, e.g. cell1)")
    return "/" + value.strip("/") if value.strip("/") else ""
