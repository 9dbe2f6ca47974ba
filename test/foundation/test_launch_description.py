"""launch/graph_launch.py without a ROS install: `launch` and `launch_ros` are replaced by
recorders of what the launch file builds (a unit-test double: `ros2 launch` itself is not on
PyPI), so every graph's description is checked here: each node gets every params file and inline
parameter of its graph, the launch arguments exist and reach the nodes they name, and a required
node's death raises into the launch service (exit status 1) unless the graph is already stopping."""
import importlib.util
import sys
import types
from pathlib import Path

import pytest

from spatial_manip.bringup.graph import GraphError, available_graphs, load_graph
from spatial_manip.bringup.launch_args import LAUNCH_ARGUMENTS, apply_launch_arguments, launch_arguments

LAUNCH_DIR = Path(__file__).resolve().parents[2] / "launch"


class Recorded:
    """Any launch entity: keeps its positional and keyword arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration:
    def __init__(self, name):
        self.name = name

    def perform(self, context):
        return context.launch_configurations[self.name]


@pytest.fixture
def graph_launch(monkeypatch):
    """launch/graph_launch.py imported against recording `launch` / `launch_ros` modules."""
    modules = {
        "launch": {"LaunchDescription": lambda entities: types.SimpleNamespace(entities=list(entities))},
        "launch.actions": {n: type(n, (Recorded,), {}) for n in
                           ("DeclareLaunchArgument", "OpaqueFunction", "RegisterEventHandler")},
        "launch.event_handlers": {"OnProcessExit": type("OnProcessExit", (Recorded,), {})},
        "launch.substitutions": {"LaunchConfiguration": LaunchConfiguration},
        "launch_ros": {},
        "launch_ros.actions": {"Node": type("Node", (Recorded,), {})},
    }
    for name, attrs in modules.items():
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(**attrs))
    spec = importlib.util.spec_from_file_location("graph_launch_under_test", LAUNCH_DIR / "graph_launch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build(graph_launch, graph_name: str, **values):
    """(declared arguments by name, Node kwargs by node name, exit handlers by node name)."""
    entities = graph_launch.graph_launch_description(graph_name).entities
    declared = {e.args[0]: e.kwargs for e in entities if type(e).__name__ == "DeclareLaunchArgument"}
    opaque = next(e for e in entities if type(e).__name__ == "OpaqueFunction")
    context = types.SimpleNamespace(launch_configurations={n: values.get(n, kw["default_value"])
                                                           for n, kw in declared.items()}, is_shutdown=False)
    actions = opaque.kwargs["function"](context, *opaque.kwargs["args"])
    nodes = {a.kwargs["name"]: a.kwargs for a in actions if type(a).__name__ == "Node"}
    handlers = {}
    for a in actions:
        if type(a).__name__ == "RegisterEventHandler":
            on_exit = a.args[0].kwargs
            handlers[on_exit["target_action"].kwargs["name"]] = on_exit["on_exit"]
    return declared, nodes, handlers


@pytest.mark.parametrize("graph_name", available_graphs())
def test_every_node_gets_every_file_and_inline_parameter_of_its_graph(graph_launch, graph_name):
    graph = load_graph(graph_name)
    _, nodes, handlers = build(graph_launch, graph_name)
    assert set(nodes) == {n.name for n in graph.nodes}
    for spec in graph.nodes:
        kw = nodes[spec.name]
        files = [p for p in kw["parameters"] if isinstance(p, str)]
        inline = {k: v for p in kw["parameters"] if isinstance(p, dict) for k, v in p.items()}
        assert files == [str(p) for p in spec.parameters] and all(Path(f).is_file() for f in files), spec.name
        assert {k for k, _ in spec.params} <= set(inline), (spec.name, inline)
        # the launch argument left "" keeps the graph's clock: the recording's for replay, the wall's elsewhere
        assert inline.get("use_sim_time", False) is (graph.name == "replay"), spec.name
        for key, text in spec.params:
            assert str(inline[key]) == text or inline[key] == spec.typed_params()[key], (spec.name, key)
        assert kw["package"] == spec.package and kw["executable"] == spec.executable
        assert kw["remappings"] == list(spec.remappings) and kw["namespace"] is None
        assert (spec.name in handlers) == spec.required


def test_inline_values_keep_their_types(graph_launch):
    """`-p arm_backend:=sim` is a string, a number a number: launch_ros must declare the same."""
    _, nodes, _ = build(graph_launch, "sim")
    planner = next(p for p in nodes["planner_node"]["parameters"] if isinstance(p, dict))
    assert planner["arm_backend"] == "sim" and planner["arm_lost_after_s"] == 10.0
    assert "segmenter" not in planner      # the default: the simulator's segmentation only by name
    grasp = next(p for p in nodes["grasp_node"]["parameters"] if isinstance(p, dict))
    assert Path(grasp["config_file"]).is_file()


def test_launch_arguments_reach_the_nodes_they_name(graph_launch):
    declared, nodes, _ = build(graph_launch, "real", namespace="cell1", use_sim_time="true",
                               robot_ip="192.168.1.10", ur_type="ur5", calibration_file="/etc/cell/hand_eye.yaml",
                               workspace_file="/etc/cell/ws.json", library_file="/etc/cell/library.json",
                               camera="file", camera_file="/data/run.db3")
    assert {"namespace", "use_sim_time", "robot_ip", "ur_type", "calibration_file", "workspace_file", "library_file",
            "camera", "camera_file"} <= set(declared)
    inline = {name: {k: v for p in kw["parameters"] if isinstance(p, dict) for k, v in p.items()}
              for name, kw in nodes.items()}
    assert all(kw["namespace"] == "/cell1" for kw in nodes.values())
    assert all(p["use_sim_time"] is True for p in inline.values())
    assert inline["arm_node"]["arm.host"] == "192.168.1.10"
    assert inline["arm_node"]["ur_type"] == inline["grasp_node"]["ur_type"] == inline["planner_node"]["ur_type"] == "ur5"
    assert inline["cell_tf_node"]["model"] == "ur5"
    assert inline["cell_tf_node"]["calibration_file"] == inline["camera_node"]["calibration_file"] == "/etc/cell/hand_eye.yaml"
    assert inline["planner_node"]["workspace_file"] == "/etc/cell/ws.json"
    assert inline["planner_node"]["library_file"] == "/etc/cell/library.json"
    assert inline["camera_node"]["source"] == "file" and inline["camera_node"]["file_path"] == "/data/run.db3"
    assert "arm.host" not in inline["grasp_node"]


def test_the_sim_graph_gives_a_library_file_to_the_simulator_and_the_planner_alike(graph_launch):
    """The simulator's published catalogue and the planner's own library are then one library;
    left "", both keep theirs (the simulated assets' library, the workspace topic's catalogue)."""
    _, nodes, _ = build(graph_launch, "sim", library_file="library/sim_assets.json")
    inline = {name: {k: v for p in kw["parameters"] if isinstance(p, dict) for k, v in p.items()}
              for name, kw in nodes.items()}
    assert inline["sim_node"]["library_file"] == inline["planner_node"]["library_file"] == "library/sim_assets.json"
    _, nodes, _ = build(graph_launch, "sim")
    assert not any("library_file" in p for kw in nodes.values() for p in kw["parameters"] if isinstance(p, dict))


def test_a_graph_declares_only_the_arguments_that_reach_it():
    sim = {a.name for a in launch_arguments(load_graph("sim"))}
    assert {"namespace", "use_sim_time"} <= sim and not sim & {"robot_ip", "camera", "calibration_file"}
    assert {a.name for a in launch_arguments(load_graph("real"))} == {a.name for a in LAUNCH_ARGUMENTS}


def test_a_required_node_death_fails_the_launch_unless_it_is_already_stopping(graph_launch):
    _, _, handlers = build(graph_launch, "real")
    assert "cell_tf_node" not in handlers                       # optional: the graph runs on
    died = types.SimpleNamespace(returncode=1)
    with pytest.raises(graph_launch.RequiredNodeExited, match="required node arm_node exited with code 1"):
        handlers["arm_node"](died, types.SimpleNamespace(is_shutdown=False))
    assert handlers["arm_node"](died, types.SimpleNamespace(is_shutdown=True)) is None


@pytest.mark.parametrize("values,needle", [
    ({"robot_ip": "10.0.0.1"}, "no launch argument 'robot_ip'"),          # the sim graph has no arm_node
    ({"use_sim_time": "yes"}, "not one of true, false"),
    ({"namespace": "cell 1"}, "not a ROS namespace"),
])
def test_bad_launch_arguments_are_refused_by_name(values, needle):
    with pytest.raises(GraphError, match=needle):
        apply_launch_arguments(load_graph("sim"), values)


def test_arm_backend_ur_driver_reaches_arm_node_and_leaves_the_robot_model_to_the_driver():
    def params(graph, node):
        return next(n for n in graph.nodes if n.name == node).typed_params()

    real = load_graph("real")
    chosen = apply_launch_arguments(real, {"arm_backend": "ur_driver"})
    assert params(chosen, "arm_node")["arm.backend"] == "ur_driver"
    assert params(chosen, "cell_tf_node")["publish_robot_tf"] is False       # robot_state_publisher owns it
    kept = apply_launch_arguments(real, {"arm_backend": "ur_driver", "publish_robot": "true"})
    assert params(kept, "cell_tf_node")["publish_robot_tf"] is True           # said explicitly: kept
    default = apply_launch_arguments(real, {"arm_backend": "ur_rtde"})
    assert "publish_robot_tf" not in params(default, "cell_tf_node")          # auto-detected at start-up
    with pytest.raises(GraphError, match="not one of"):
        apply_launch_arguments(real, {"arm_backend": "ur_drive"})
    mounted = apply_launch_arguments(real, {"camera": "none", "camera_mount_frame": "camera_link"})
    assert params(mounted, "cell_tf_node")["camera_mount_frame"] == "camera_link"
