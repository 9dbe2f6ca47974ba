"""The start-up the long sim-graph measurements share (`spatial-manip soak`, `cancel-soak`): their
own ROS domain, an output folder, one sim graph logging to graph.log, and a client node that
spins while the measurement blocks on its futures; the graph is stopped however the run ends.

    with sim_session(out, "classical", profile, "spatial_manip_soak") as (graph, node):
        ...
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from pathlib import Path
from spatial_manip.bench.worker import Graph, default_catalogue, sim_node_sensing
from spatial_manip.bringup.goal_client import spinning_node


def command_main(prog: str, doc: str, add_arguments, run, argv=None) -> int:
    """A measurement's `main`: its arguments, its module docstring as help, then `run(args)`."""
    p = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv))


def prepare_output(out: str, domain: int) -> Path:
    """Join the measurement's own ROS domain (before rclpy starts and before the graph does) and
    make the output folder."""
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    return path


def graph_params(out: Path, segmenter: str, profile) -> dict:
    """The sim graph's parameters: the planner's perception and its trace folder under `out`,
    the catalogue that perception goes with (default_catalogue), the simulator's sensing profile
    (None: sim_node's default)."""
    params = {"planner_node": {"segmenter": segmenter, "trace_dir": str(out / "traces")},
              "sim_node": {"catalogue": default_catalogue(segmenter)}}
    if profile is not None:
        params["sim_node"].update(sim_node_sensing(profile))
    return params


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def sim_session(out: Path, segmenter: str, profile, client_name: str, threads: int = 2):
    """(graph, client node) of a running sim graph; stopped on exit, also when the measurement
    is ended by SIGTERM (`kill`, a timeout): that ended the process at once and left its three
    nodes running without a parent."""
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with open(out / "graph.log", "a") as log:
            graph = Graph("sim", graph_params(out, segmenter, profile), log)
            try:
                with spinning_node(client_name, threads=threads) as node:
                    yield graph, node
            finally:
                graph.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)


def refuse(prog: str, problem: str) -> int:
    """A measurement's one-line refusal of its arguments (exit status 2, as argparse's)."""
    print(f"spatial-manip {prog}: {problem}", file=sys.stderr)
    return 2
