"""runner.ActionClient: creating an action client while another thread spins the node."""
import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.action import ActionClient as RclpyActionClient  # noqa: E402

from spatial_manip.nodes.runner import ActionClient  # noqa: E402
from spatial_manip_interfaces.action import ArmMotion  # noqa: E402


@pytest.fixture
def node():
    context = rclpy.context.Context()
    rclpy.init(context=context)
    n = rclpy.create_node("action_client_test", context=context)
    yield n
    n.destroy_node()
    rclpy.shutdown(context=context)


def _executor_wakes_at_once(node):
    """Make the node's add_waitable do what a spinning executor may do at that moment: count the
    new waitable's entities (rclpy's _wait_for_ready_callbacks)."""
    add = node.add_waitable

    def add_and_count(waitable):
        add(waitable)
        waitable.get_num_entities()
    node.add_waitable = add_and_count


def test_a_client_is_whole_when_it_joins_the_nodes_waitables(node):
    _executor_wakes_at_once(node)
    client = ActionClient(node, ArmMotion, "/spatial_manip/arm_motion")
    assert client.get_num_entities() is not None
    assert not client.server_is_ready()
    client.destroy()
    if "_lock" in RclpyActionClient.get_num_entities.__code__.co_names:
        # the rclpy this runs on has the race: its own client fails where ours did not
        with pytest.raises(AttributeError, match="_lock"):
            RclpyActionClient(node, ArmMotion, "/spatial_manip/other_motion")
