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


def test_pre_grasp_paths_published_typed_become_the_next_picks_hints(server):
    """grasp_node publishes its answer's pre-grasp paths (PreGraspPaths, latched) and the arm server
    takes them as its planner's hints for the next PICK (issue 42), over DDS as the nodes do."""
    import time

    import numpy as np
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    from spatial_manip.nodes.arm_server import PRE_GRASP_PATHS_TOPIC, pre_grasp_paths_msg
    from spatial_manip_interfaces.msg import PreGraspPaths

    server.primitives = types.SimpleNamespace(plans=types.SimpleNamespace(pre_grasp_hints=[]))
    node = server.node
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    pub = node.create_publisher(PreGraspPaths, PRE_GRASP_PATHS_TOPIC, latched)
    path = np.linspace(np.zeros(6), np.full(6, 0.5), 3)
    pub.publish(pre_grasp_paths_msg([path]))
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + 10.0
    while not server.primitives.plans.pre_grasp_hints and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
    executor.remove_node(node)
    hints = server.primitives.plans.pre_grasp_hints
    assert len(hints) == 1 and np.array_equal(hints[0], path)
