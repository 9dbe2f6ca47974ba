"""`spatial-manip goal --namespace NS` reaches a cell launched with namespace:=NS (its planner's
action under /NS/), and a namespace ROS cannot take is refused by the parser, naming the option."""
from __future__ import annotations

import argparse
import subprocess
import sys
import uuid

import pytest

from spatial_manip.bringup import goal_cli

pytestmark = pytest.mark.ros


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    goal_cli.add_arguments(parser)
    return parser.parse_args(["pick the book", *argv])


def test_the_namespace_option_takes_a_ros_namespace_and_refuses_others():
    assert _parse().namespace == ""
    assert _parse("--namespace", "cell1").namespace == "/cell1"
    assert _parse("--namespace", "/lab/cell1/").namespace == "/lab/cell1"
    with pytest.raises(argparse.ArgumentError, match=r"--namespace 'cell 1' is not a ROS namespace"):
        _parse("--namespace", "cell 1")


def test_the_goal_command_reaches_a_namespaced_cells_planner(capsys):
    from test_goal_client_server_lost import SERVER

    cell = f"cell_{uuid.uuid4().hex[:8]}"
    server = subprocess.Popen([sys.executable, "-c", SERVER, f"/{cell}/spatial_manip/execute_instruction", "0.1"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "up"
        assert goal_cli.run(_parse("--namespace", cell, "--json", "--server-timeout", "30")) == 0
        assert '"success": true' in capsys.readouterr().out
    finally:
        server.kill()
        server.wait()
