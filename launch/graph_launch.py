"""Shared body of the launch files: a graph description (config/graphs/*.yaml) with its launch
arguments (spatial_manip.bringup.launch_args) turned into launch_ros Node actions. Every node
gets every params file and inline parameter of its graph, and a required node's death stops
`ros2 launch` with a non-zero exit status, as the pip-only launcher does.

launch/launch_ros are imported inside the functions only, so this module imports on machines
without them (the pip-only launcher and the tests read the same graph through the core)."""
from spatial_manip.bringup.graph import load_graph
from spatial_manip.bringup.launch_args import apply_launch_arguments, launch_arguments


def graph_launch_description(graph_name: str):
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    graph = load_graph(graph_name)
    declared = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                      **({"choices": ["", *a.choices]} if a.choices and a.default == "" else
                                         {"choices": list(a.choices)} if a.choices else {}))
                for a in launch_arguments(graph)]
    return LaunchDescription([*declared, OpaqueFunction(function=_node_actions, args=[graph])])


def _node_actions(context, graph):
    from launch.actions import RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    values = {a.name: LaunchConfiguration(a.name).perform(context) for a in launch_arguments(graph)}
    actions = []
    for spec in apply_launch_arguments(graph, values).nodes:
        params = spec.typed_params()
        node = Node(package=spec.package, executable=spec.executable, name=spec.name,
                    namespace=spec.namespace or None, output="screen",
                    parameters=[*(str(p) for p in spec.parameters), *([params] if params else [])],
                    remappings=list(spec.remappings), arguments=list(spec.arguments))
        actions.append(node)
        if spec.required:
            actions.append(RegisterEventHandler(OnProcessExit(
                target_action=node, on_exit=lambda event, ctx, name=spec.name: _required_exited(name, event, ctx))))
    return actions


class RequiredNodeExited(RuntimeError):
    """Raised into the launch service: it logs the message, shuts the graph down and makes
    `ros2 launch` exit 1 (a Shutdown event alone would exit 0)."""


def _required_exited(name: str, event, context):
    if context.is_shutdown:          # Ctrl-C or another node's death: the expected way out
        return None
    raise RequiredNodeExited(f"required node {name} exited with code {event.returncode}; stopping the graph")
