"""ArmActionServer: a cancel that arrives after a goal was accepted but before it runs is kept,
so that goal never moves the arm (the window in which planner_node's cancel used to be lost)."""
import types

import pytest

rclpy = pytest.importorskip("rclpy")

from spatial_manip.nodes.arm_server import ArmActionServer  # noqa: E402


@pytest.fixture
def server():
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("arm_server_cancel_test", context=context)
    srv = ArmActionServer(node, arm=None, gripper=None, primitives=None, action_name="/arm_server_cancel_test")
    yield srv
    srv.destroy()
    node.destroy_node()
    rclpy.shutdown(context=context)


def _goal(n: int, cancel_requested: bool = False):
    return types.SimpleNamespace(goal_id=types.SimpleNamespace(uuid=[n] * 16), is_cancel_requested=cancel_requested)


def test_a_cancel_before_the_goal_runs_cancels_it_when_it_runs(server):
    server._on_cancel(_goal(1))
    assert server._goal_cancel_event(_goal(1)).is_set()


def test_an_earlier_goals_cancel_does_not_cancel_the_next_one(server):
    server._on_cancel(_goal(1))
    assert not server._goal_cancel_event(_goal(2)).is_set()
    assert not server._goal_cancel_event(_goal(1)).is_set()     # one goal at a time: old ids are forgotten


def test_a_cancel_while_the_goal_runs_sets_its_event(server):
    event = server._goal_cancel_event(_goal(3))
    assert not event.is_set()
    server._on_cancel(_goal(3))
    assert event.is_set()


def test_a_goal_whose_cancel_was_already_accepted_starts_canceled(server):
    assert server._goal_cancel_event(_goal(4, cancel_requested=True)).is_set()
