"""A stopping node's arm (arm_node's shutdown, sim_node's) over a test double of the Arm protocol (control/base.py): the arm is
stopped first, whatever the backend, the running motion's end awaited, and every device
released even when a step before it fails."""
import pytest

pytest.importorskip("rclpy")

from spatial_manip.nodes.arm_server import STOP_WAIT_S, release_devices  # noqa: E402


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

    release_devices(RecordingArm(calls), RecordingGripper(calls), motion_ended=motion_ended)
    assert calls == ["arm.stop", "motion ended", "gripper.disconnect", "arm.close"]
    assert waits == [STOP_WAIT_S]


def test_an_idle_arm_without_a_gripper_is_stopped_and_closed():
    """The ur_driver backend's node had no stop on shutdown at all; stop() on an idle arm is safe."""
    calls = []
    release_devices(RecordingArm(calls), None)
    assert calls == ["arm.stop", "arm.close"]


def test_a_failed_stop_or_a_motion_that_does_not_end_still_releases_everything_and_says_so():
    calls, warnings = [], []
    release_devices(RecordingArm(calls, fail="arm.stop"), RecordingGripper(calls), motion_ended=lambda _t: False,
                    warn=warnings.append)
    assert calls == ["arm.stop", "gripper.disconnect", "arm.close"]
    assert len(warnings) == 2
    assert "could not stop the arm (RuntimeError: arm.stop failed)" in warnings[0]
    assert f"had not ended {STOP_WAIT_S:g} s after the stop" in warnings[1]
