"""`ros2 launch spatial_manip replay.launch.py`: the graph in config/graphs/replay.yaml."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_launch import graph_launch_description  # noqa: E402


def generate_launch_description():
    return graph_launch_description("replay")
