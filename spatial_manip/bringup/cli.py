"""`spatial-manip launch VARIANT`: start a node graph without `ros2 launch`."""
from __future__ import annotations

import argparse
import sys

from spatial_manip.bringup.graph import GraphError, available_graphs, load_graph
from spatial_manip.bringup.launcher import LaunchError, Launcher


def add_arguments(p: argparse.ArgumentParser) -> None:
    try:
        names = ", ".join(available_graphs())
    except FileNotFoundError:
        names = "sim, real, replay"
    p.add_argument("graph", help=f"graph name ({names}) or a path to a graph YAML file")
    p.add_argument("--set", action="append", default=[], metavar="NODE.PARAM=VALUE",
                   help="override one node parameter, e.g. planner_node.observation_timeout_s=2 (repeatable)")
    p.add_argument("--grace", type=float, default=5.0, help="seconds a node gets to exit after Ctrl-C")


def parse_overrides(items: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for item in items:
        key, sep, value = item.partition("=")
        node, dot, param = key.partition(".")
        if not sep or not dot or not node or not param:
            raise ValueError(f"--set expects NODE.PARAM=VALUE, got {item!r}")
        out.setdefault(node, {})[param] = value
    return out


def run(args) -> int:
    try:
        graph = load_graph(args.graph)
        overrides = parse_overrides(args.set)
        unknown = set(overrides) - {n.name for n in graph.nodes}
        if unknown:
            raise ValueError(f"--set names nodes not in graph {graph.name!r}: {sorted(unknown)}")
        return Launcher(graph, params=overrides, grace_s=args.grace).run()
    except (GraphError, LaunchError, ValueError) as e:
        print(f"spatial-manip launch: {e}", file=sys.stderr)
        return 2
