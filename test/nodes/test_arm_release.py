"""A stopping node's arm (arm_node's shutdown, sim_node's: ArmActionServer.finish and release)
over a test double of the Arm protocol (control/base.py): the arm is stopped first, whatever the
backend, the running motion's end awaited, and every device released even when a step before it
fails; a stop that lands between two moves of a goal ends the goal (ArmActionServer.stop_motion)."""
import threading
import types

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.action import GoalResponse  # noqa: E402

from spatial_manip.control.primitives import _Runner  # noqa: E402
from spatial_manip.errors import ErrorCode  # noqa: E402
from spatial_manip.nodes.arm_server import STOP_WAIT_S, ArmActionServer, release_devices  # noqa: E402
from spatial_manip_interfaces.action import ArmMotion  # noqa: E402
from test_action_client import node  # noqa: E402,F401  (a node in a private rclpy context)


class RecordingArm:
    """The Arm protocol's lifecycle calls, recorded in order (`fail`: the call that raises)."""

    def __init__(self, calls: list, fail: str = ""):
        self.calls, self.fail = calls, fail

    def _do(self, name: str) -> None:
        self.calls.append(name)
        if name == self.fail:
            raise RuntimeError(f"{name} failed")

    def stop(self) -> None:
        self._do("arm.stop")

    def close(self) -> None:
        self._do("arm.close")


class RecordingGripper:
    def __init__(self, calls: list):
        self.calls = calls

    def disconnect(self) -> None:
        self.calls.append("gripper.disconnect")


def test_shutdown_stops_the_arm_waits_for_the_motion_then_releases_the_devices():
    calls, waits = [], []

    def motion_ended(timeout_s):
        waits.append(timeout_s)
        calls.append("motion ended")
        return True

    arm = RecordingArm(calls)
    release_devices(arm, RecordingGripper(calls), stop_motion=arm.stop, motion_ended=motion_ended)
    assert calls == ["arm.stop", "motion ended", "gripper.disconnect", "arm.close"]
    assert waits == [STOP_WAIT_S]


def test_an_idle_arm_without_a_gripper_is_stopped_and_closed():
    """The ur_driver backend's node had no stop on shutdown at all; stop() on an idle arm is safe."""
    calls = []
    arm = RecordingArm(calls)
    release_devices(arm, None, stop_motion=arm.stop, motion_ended=lambda _t: True)
    assert calls == ["arm.stop", "arm.close"]


def test_a_failed_stop_or_a_motion_that_does_not_end_still_releases_everything_and_says_so():
    calls, warnings = [], []
    arm = RecordingArm(calls, fail="arm.stop")
    release_devices(arm, RecordingGripper(calls), stop_motion=arm.stop, motion_ended=lambda _t: False,
                    warn=warnings.append)
    assert calls == ["arm.stop", "gripper.disconnect", "arm.close"]
    assert len(warnings) == 2
    assert "could not stop the arm (RuntimeError: arm.stop failed)" in warnings[0]
    assert f"had not ended {STOP_WAIT_S:g} s after the stop" in warnings[1]


def test_a_server_stops_the_arm_through_its_stop_motion_not_the_arms_stop():
    calls = []
    release_devices(RecordingArm(calls), None, stop_motion=lambda: calls.append("stop_motion"),
                    motion_ended=lambda _t: True)
    assert calls == ["stop_motion", "arm.close"]


class BetweenMovesArm:
    """An arm whose stop is lost once the next move starts, as every backend's is (each clears its
    stop flag when a move begins); records the moves that start."""

    def __init__(self):
        self.moves, self.stopped = [], threading.Event()

    def stop(self) -> None:
        self.stopped.set()

    def move_j(self, q) -> None:
        self.moves.append(np.asarray(q, float))

    def tcp_pose(self) -> np.ndarray:
        return np.eye(4)

    def close(self) -> None:
        pass


class CloseThenLift:
    """Primitives whose HOME closes the fingers (no arm motion: the phase ends when the arm hears
    the stop, as a real close ends by itself) and then lifts, through the primitives' own phases."""

    def __init__(self, arm):
        self.arm, self.closing = arm, threading.Event()

    def home(self, *, speed_scale, progress, cancel, scene):
        run = _Runner(self.arm, progress, cancel, total=2)

        def close_fingers():
            self.closing.set()
            return self.arm.stopped.wait(5.0)
        run.phase("close", "the fingers close", close_fingers)
        run.phase("lift", "up", lambda: self.arm.move_j(np.zeros(6)))
        return types.SimpleNamespace(object_held=False, tcp_path=[])


class GoalHandle:
    def __init__(self):
        self.request = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME)
        self.goal_id = types.SimpleNamespace(uuid=[7] * 16)
        self.is_cancel_requested, self.ended = False, []

    def publish_feedback(self, _feedback) -> None:
        pass

    def succeed(self) -> None:
        self.ended.append("succeeded")

    def canceled(self) -> None:
        self.ended.append("canceled")

    def abort(self) -> None:
        self.ended.append("aborted")


def test_a_stop_between_two_moves_ends_the_goal_and_refuses_the_next(node):
    """The stop lands while the fingers close: the lift after it must not start, nor any later goal."""
    arm = BetweenMovesArm()
    primitives = CloseThenLift(arm)
    server = ArmActionServer(node, arm, None, primitives, action_name="/arm_release_test")
    handle, results = GoalHandle(), []
    goal = threading.Thread(target=lambda: results.append(server._execute(handle)))
    goal.start()
    assert primitives.closing.wait(10.0)
    server.release(None)
    goal.join(10.0)
    assert arm.moves == []
    # aborted, CANCELED: rclpy ends a goal canceled only when its client asked for it
    assert handle.ended == ["aborted"] and results[0].error_code == ErrorCode.CANCELED.value
    assert "the arm's node is stopping" in results[0].message
    assert server._on_goal(None) == GoalResponse.REJECT
    server.destroy()


def test_a_stop_that_fails_on_ctrl_c_is_logged_and_the_node_still_waits_for_its_goal(node):
    """finish() runs inside spin_node's interrupt handler: an arm whose stop raises must not end the
    node before release() tries the stop again and closes the link."""
    calls = []
    arm = RecordingArm(calls, fail="arm.stop")
    server = ArmActionServer(node, arm, None, CloseThenLift(arm), action_name="/arm_finish_test")
    idle = server.finish()
    assert calls == ["arm.stop"] and idle()
    assert server._on_goal(None) == GoalResponse.REJECT     # stopping: no later goal moves the arm
    server.release(None)
    assert calls == ["arm.stop", "arm.stop", "arm.close"]
    server.destroy()
