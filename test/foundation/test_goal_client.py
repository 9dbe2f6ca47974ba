"""The goal client's wait for the server's answer to a goal: the answer, or (when DDS dropped
it but the goal's feedback arrives) a handle made from the feedback's goal id."""
from __future__ import annotations

import time

import pytest

pytest.importorskip("rclpy")
from rclpy.task import Future  # noqa: E402

from spatial_manip.bringup import goal_client  # noqa: E402
from spatial_manip_interfaces.action import ExecuteInstruction  # noqa: E402


class _Client:
    _action_type = ExecuteInstruction


def test_the_servers_answer_is_the_handle():
    sent = Future()
    sent.set_result("the handle")
    assert goal_client._accepted(_Client(), sent, {}, 1.0) == "the handle"


def test_a_goal_that_sends_feedback_without_an_answer_was_accepted(monkeypatch):
    monkeypatch.setattr(goal_client, "LOST_ANSWER_S", 0.1)
    goal_id = ExecuteInstruction.Impl.SendGoalService.Request().goal_id
    goal_id.uuid = list(range(16))
    running = {"goal_id": goal_id, "since": time.monotonic()}
    handle = goal_client._accepted(_Client(), Future(), running, 5.0)
    assert handle.accepted and list(handle.goal_id.uuid) == list(range(16))


def test_no_answer_and_no_feedback_is_no_handle():
    t0 = time.monotonic()
    assert goal_client._accepted(_Client(), Future(), {}, 0.3) is None
    assert time.monotonic() - t0 >= 0.3
