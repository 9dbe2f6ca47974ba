"""Shared body of the launch files: turn a graph description (config/graphs/*.yaml) into
launch_ros Node actions. launch/launch_ros are imported inside the function only, so this
module imports on machines without them (the pip-only launcher reads the same graph)."""
from spatial_manip.bringup.graph import load_graph


def graph_launch_description(graph_name: str):
    from launch import LaunchDescription
    from launch.actions import EmitEvent, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.events import Shutdown
    from launch_ros.actions import Node

    graph = load_graph(graph_name)
    actions = []
    for spec in graph.nodes:
        node = Node(package=spec.package, executable=spec.executable, name=spec.name, output="screen",
                    parameters=[str(p) for p in spec.parameters], remappings=list(spec.remappings),
                    arguments=list(spec.arguments))
        actions.append(node)
        if spec.required:  # same rule as the pip-only launcher: a required node's death ends the graph
            actions.append(RegisterEventHandler(OnProcessExit(
                target_action=node,
                on_exit=[EmitEvent(event=Shutdown(reason=f"required node {spec.name} exited"))])))
    return LaunchDescription(actions)
