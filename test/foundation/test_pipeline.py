"""The ROS-free pipeline with a unit-test agent: stage order, feedback, cancel, retries."""
import json
import threading
from dataclasses import replace

import numpy as np
import pytest

from spatial_manip.errors import (GraspFailedError, InvalidGoalError, MotionFailedError, NotUnderstoodError,
                                  TargetNotFoundError)
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import RGBDObservation
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.pipeline import (MAX_RELOOKS, Decision, Grasped, InstructionPipeline, Perceived, Placed, SetDown,
                                    TouchedGraspError, Verified, validate_goal)
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.trace import Trace, read_when_drawn


class FakeAgent:
    """A unit-test double for the agent's stages (never used outside tests)."""

    def __init__(self, pick_failures=0, reason_error=None, alternatives=(), unpickable=(), place_failures=0):
        self.pick_failures = pick_failures
        self.place_failures = place_failures
        self.held = None
        self.reason_error = reason_error
        self.alternatives = list(alternatives)     # other books the words allow
        self.unpickable = set(unpickable)          # books no grasp holds
        self.calls = []
        self.stopped = 0

    def observe(self, cancel):
        self.calls.append("observe")
        intr = CameraIntrinsics(8, 6, 5, 5, 4, 3)
        return RGBDObservation(np.zeros((6, 8, 3), np.uint8), np.ones((6, 8), np.float32), intr, np.eye(4))

    def perceive(self, obs):
        self.calls.append("perceive")
        books = [SceneObject(f"book_{k}", "book", "book", [0.6, 0.1 * k, 0.8], [0.2, 0.15, 0.03]) for k in (1, 2, 3, 4)]
        return Perceived(obs, Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), books))

    def reason(self, seen, goal, reflection, trace):
        self.calls.append(("reason", reflection.attempt if reflection else None))
        if self.reason_error:
            raise self.reason_error
        if reflection is not None and reflection.retry == "place":
            return Decision("place", (self.held,), place_pose=np.eye(4))
        if self.place_failures:
            return Decision("pick_and_place", ("book_1",), pick_id="book_1", place_pose=np.eye(4))
        return Decision("pick", ("book_1", *self.alternatives), pick_id="book_1",
                        pick_alternatives=tuple(self.alternatives), notes=tuple(getattr(self, "notes", ())))

    def clear_view(self, cancel):
        pass

    def check_place(self, decision, seen, cancel=None):
        pass

    def propose_grasps(self, decision, seen):
        self.calls.append("grasps")
        return GraspGroup.from_parts(scores=[0.9], widths=0.03, heights=0.02, depths=0.01, rotations=np.eye(3),
                                     translations=np.zeros(3), frame_id="base")

    def pick(self, grasps, decision, cancel):
        self.calls.append(("pick", decision.pick_id))
        if decision.pick_id in self.unpickable:
            raise GraspFailedError(f"3 grasp(s) of {decision.pick_id} failed")
        if self.pick_failures > 0:
            self.pick_failures -= 1
            raise GraspFailedError("the book slipped")
        self.held = decision.pick_id
        return Grasped(object_id=decision.pick_id, tcp_pose=np.eye(4), score=0.9, width=0.03)

    def set_down(self, decision, grasped, cancel):
        return SetDown(object_id=self.held, object_pose=decision.place_pose, tcp_pose=decision.place_pose, size=None)

    def place(self, decision, set_down, cancel):
        self.calls.append("place")
        if self.place_failures > 0:
            self.place_failures -= 1
            raise MotionFailedError("the arm stopped short in phase 'pre_place'")
        self.held = None
        return Placed(set_down=set_down)

    def held_id(self):
        return self.held

    def verify_on_frame(self, placed, obs):
        return None          # never confirmed on the frame alone: the full look and verify

    def verify(self, decision, placed, goal, after):
        self.calls.append("verify")
        return Verified(True, "", f"{decision.pick_id} is in the gripper")

    def stop_motion(self):
        self.stopped += 1


def run(agent, **goal):
    fb = []
    p = InstructionPipeline(agent, feedback=lambda *a: fb.append(a))
    g = validate_goal(goal.pop("instruction", "pick the book"), goal.pop("kind", "pick"), **goal)
    return p.run(g, threading.Event()), fb


def test_stages_run_in_order_with_rising_progress():
    agent = FakeAgent()
    out, fb = run(agent)
    assert out.success and out.target_ids == ["book_1"] and out.grasp_score == 0.9
    assert [f[0].value for f in fb] == ["perceiving", "reasoning", "grasping", "moving", "verifying"]
    progress = [f[2] for f in fb]
    assert progress == sorted(progress) and progress[-1] < 1.0


def test_a_failed_place_with_the_object_in_hand_retries_the_place_not_the_pick():
    agent = FakeAgent(place_failures=1)
    out, fb = run(agent, instruction="pick the book and place it on the left", kind="auto", max_attempts=2)
    assert out.success and out.attempts == 2
    assert [c for c in agent.calls if c[0] == "pick"] == [("pick", "book_1")]    # picked once
    assert agent.calls.count("place") == 2
    reflecting = [f[1] for f in fb if f[0].value == "reflecting"]
    assert reflecting and "book_1 is still in the gripper: planning the place again" in reflecting[0]


def test_a_place_that_fails_every_attempt_says_the_object_is_still_held():
    agent = FakeAgent(place_failures=5)
    out, _ = run(agent, instruction="pick the book and place it on the left", kind="auto", max_attempts=2)
    assert not out.success and out.error_code == "MOTION_FAILED"
    assert "book_1 is still in the gripper" in out.message and "place it" in out.message


def test_a_regrasp_is_traced_and_made_at_most_once_a_goal(tmp_path):
    """A place whose set-down needs the held object grasped again (agent.set_down's regrasp) is
    traced with where it was set down and the new grasp; the retry after it may not regrasp."""
    from spatial_manip.pipeline import Regrasp

    class Regrasping(FakeAgent):
        def set_down(self, decision, grasped, cancel):
            self.calls.append(("may_regrasp", decision.may_regrasp))
            put = super().set_down(decision, grasped, cancel)
            if not decision.may_regrasp:
                return put
            return replace(put, regrasp=Regrasp(reason="a finger under it", aside=put, tcp_pose=np.eye(4),
                                                T_object_tcp=np.eye(4), width_m=0.02, slid_m=0.01))

    agent = Regrasping(place_failures=2)
    p = InstructionPipeline(agent, trace_dir=str(tmp_path))
    out = p.run(validate_goal("pick the book and place it on the left", "auto", max_attempts=2), threading.Event())
    assert not out.success and out.error_code == "MOTION_FAILED"
    assert [c for c in agent.calls if c[0] == "may_regrasp"] == [("may_regrasp", True), ("may_regrasp", False)]
    p.wait_drawn(10)
    events = json.loads(open(out.trace_path).read())["events"]
    traced = [e for e in events if e["kind"] == "regrasp"]
    assert len(traced) == 1 and traced[0]["reason"] == "a finger under it" and traced[0]["slid_m"] == 0.01


def test_waiting_for_trace_images_past_its_limit_raises_the_built_in_timeout(tmp_path):
    """planner_node's stop catches TimeoutError from this wait and then stops the arm: on Python 3.10
    a future's timeout is another class, which would skip the stop."""
    p = InstructionPipeline(FakeAgent(), trace_dir=str(tmp_path))
    release = threading.Event()
    p._drawing.submit(release.wait)       # an image still being drawn
    with pytest.raises(TimeoutError, match="still being drawn") as raised:
        p.wait_drawn(0.05)
    assert type(raised.value) is TimeoutError
    release.set()
    p.wait_drawn(10)


def test_a_failed_grasp_replans_the_pick():
    agent = FakeAgent(pick_failures=1)
    out, fb = run(agent, max_attempts=2)
    assert out.success and [c for c in agent.calls if c[0] == "pick"] == [("pick", "book_1")] * 2
    assert "nothing is held: looking again and planning the pick again" in \
        [f[1] for f in fb if f[0].value == "reflecting"][0]


def test_the_result_message_says_how_the_words_were_read():
    agent = FakeAgent()
    agent.notes = ["'right of the clock' read as the clock's own right (its front was assumed)"]
    out, _ = run(agent, dry_run=True)
    assert out.message.endswith("(" + agent.notes[0] + ")")


def test_dry_run_never_moves():
    agent = FakeAgent()
    out, _ = run(agent, dry_run=True)
    assert out.success and "dry run" in out.message
    assert all(c[0] != "pick" for c in agent.calls) and "grasps" not in agent.calls


def test_grasp_failure_reflects_and_retries_then_succeeds():
    agent = FakeAgent(pick_failures=1)
    out, fb = run(agent, max_attempts=2)
    assert out.success and out.attempts == 2
    assert ("reason", 1) in agent.calls           # the retry saw the reflection of attempt 1
    assert "reflecting" in [f[0].value for f in fb]
    assert agent.stopped >= 1                      # the failed motion stopped the arm


class TippedOnPlace(FakeAgent):
    """A place that lets go of the object, which tips over; the retry's new look reads it as
    something else, so its words name nothing there (objects-75-00004)."""

    def __init__(self, retry_error):
        super().__init__(place_failures=0)
        self.held, self.retry_error = "can_held", retry_error

    def reason(self, seen, goal, reflection, trace):
        self.calls.append(("reason", reflection.attempt if reflection else None))
        if reflection is not None:
            raise self.retry_error
        return Decision("place", (), place_pose=np.eye(4))

    def verify(self, decision, placed, goal, after):
        return Verified(False, "not_in_region", "can_held is not seen after placing")


@pytest.mark.parametrize("retry_error", [TargetNotFoundError("'can' is not in the scene"),
                                         NotUnderstoodError("'it' refers to nothing in the hand")])
def test_a_retry_that_refuses_before_moving_reports_the_failure_it_retried(retry_error):
    agent = TippedOnPlace(retry_error)
    out, _ = run(agent, instruction="place the can on the left of the mug", kind="auto", max_attempts=3)
    assert not out.success and out.attempts == 2 and out.error_code == "VERIFY_FAILED", out
    assert out.message.startswith("verification failed (not_in_region): can_held is not seen after placing")
    assert f"attempt 2, the retry, stopped before moving anything: {retry_error.code.value}: {retry_error.message}" \
        in out.message


def test_a_retry_that_fails_after_moving_reports_its_own_failure():
    agent = FakeAgent(pick_failures=2)
    out, _ = run(agent, max_attempts=2)
    assert not out.success and out.error_code == "GRASP_FAILED" and out.message == "the book slipped"


def test_non_retryable_error_ends_at_once():
    agent = FakeAgent(reason_error=TargetNotFoundError("no jar in the scene"))
    out, _ = run(agent, max_attempts=3)
    assert not out.success and out.error_code == "TARGET_NOT_FOUND" and out.attempts == 1


def test_cancel_before_a_stage_stops_and_reports_canceled():
    agent = FakeAgent()
    cancel = threading.Event()
    cancel.set()
    out = InstructionPipeline(agent).run(validate_goal("pick it", "pick"), cancel)
    assert out.error_code == "CANCELED" and agent.calls == [] and agent.stopped >= 1


def test_a_bug_in_a_port_becomes_internal_not_a_crash():
    agent = FakeAgent(reason_error=ZeroDivisionError("boom"))
    out, _ = run(agent)
    assert out.error_code == "INTERNAL" and "ZeroDivisionError" in out.message


@pytest.mark.parametrize("args,needle", [
    (("", "auto"), "empty"), (("x", "fly"), "unknown task kind"), (("x", 7), "unknown task kind"),
    (("x\ud800", "auto"), "UTF-8"), (("x", "auto", False, 11), "max_attempts"),
    (("x", "auto", False, -1), "max_attempts"),
])
def test_validate_goal_refuses(args, needle):
    with pytest.raises(InvalidGoalError, match=needle):
        validate_goal(*args)


def test_max_attempts_left_at_zero_means_the_configured_default():
    assert validate_goal("pick the book", "auto", False, 0, default_attempts=3).max_attempts == 3
    assert validate_goal("pick the book", "auto", False, 2, default_attempts=3).max_attempts == 2


def test_the_goal_message_says_what_max_attempts_accepts():
    """ExecuteInstruction.action's comment (and so docs/reference/interfaces.md) gives the range
    validate_goal enforces and says that 0 is the configured default (it said "must be >= 1")."""
    from pathlib import Path

    from spatial_manip.pipeline import MAX_ATTEMPTS_LIMIT

    action = Path(__file__).resolve().parents[2] / "spatial_manip_interfaces" / "action" / "ExecuteInstruction.action"
    [line] = [ln for ln in action.read_text().splitlines() if ln.startswith("int32 max_attempts")]
    comment = line.split("#", 1)[1]
    assert f"1..{MAX_ATTEMPTS_LIMIT}" in comment and "0 (the default)" in comment and "default_max_attempts" in comment
    validate_goal("pick the book", "auto", False, MAX_ATTEMPTS_LIMIT)
    with pytest.raises(InvalidGoalError, match="max_attempts"):
        validate_goal("pick the book", "auto", False, MAX_ATTEMPTS_LIMIT + 1)


def test_validate_goal_normalises_whitespace_and_kind_numbers():
    g = validate_goal("  pick   the\nbook ", 3)
    assert g.instruction == "pick the book" and g.task_kind == "pick_and_place"


def test_a_book_no_grasp_holds_gives_way_to_another_the_words_allow():
    agent = FakeAgent(alternatives=["book_2", "book_3"], unpickable={"book_1"})
    out, _ = run(agent, instruction="take a book within 50 centimeters of the robot")
    assert out.success and out.attempts == 1 and out.message == "book_2 is in the gripper"
    assert [c for c in agent.calls if c[0] == "pick"] == [("pick", "book_1"), ("pick", "book_2")]
    assert np.allclose(out.target_pose[:3, 3], [0.6, 0.2, 0.8])     # the pose of the book held


def test_pick_fallback_stops_when_the_allowed_books_run_out_or_are_capped():
    agent = FakeAgent(alternatives=["book_2"], unpickable={"book_1", "book_2"})
    out, _ = run(agent)
    assert not out.success and out.error_code == "GRASP_FAILED" and "book_2" in out.message
    agent = FakeAgent(alternatives=["book_2", "book_3", "book_4"], unpickable={"book_1", "book_2", "book_3"})
    out, _ = run(agent)      # at most three objects in one attempt: book_4 is never tried
    assert not out.success and ("pick", "book_4") not in agent.calls


def test_a_single_answer_is_never_swapped_for_another_object():
    agent = FakeAgent(unpickable={"book_1"})
    out, _ = run(agent, instruction="take the leftmost book")
    assert not out.success and out.error_code == "GRASP_FAILED"
    assert [c for c in agent.calls if c[0] == "pick"] == [("pick", "book_1")]


def test_a_cancel_during_a_failed_pick_tries_no_other_object():
    cancel = threading.Event()

    class CancelledMidPick(FakeAgent):
        def pick(self, grasps, decision, cancel_):
            self.calls.append(("pick", decision.pick_id))
            cancel.set()      # the client cancels while the first grasp is failing
            raise GraspFailedError(f"3 grasp(s) of {decision.pick_id} failed")

    agent = CancelledMidPick(alternatives=["book_2"])
    out = InstructionPipeline(agent).run(validate_goal("take a book", "pick"), cancel)
    assert not out.success and out.error_code == "CANCELED"
    assert [c for c in agent.calls if c[0] == "pick"] == [("pick", "book_1")] and agent.stopped >= 1


def test_a_canceled_motion_keeps_the_words_saying_how_the_stop_went():
    """Issue 35: a sim_node killed mid-motion never confirmed the stop, and the goal still said
    'the arm was stopped'."""
    agent = FakeAgent()
    cancel = threading.Event()
    from spatial_manip.errors import CanceledError

    def pick(grasps, decision, _cancel):
        cancel.set()
        raise CanceledError("the goal was canceled during motion; the arm server did not confirm the stop "
                            "within 1 s (is arm_node or sim_node running?)")
    agent.pick = pick
    out = InstructionPipeline(agent).run(validate_goal("pick it", "pick"), cancel)
    assert out.error_code == "CANCELED" and "did not confirm the stop" in out.message, out.message
    assert "the arm was stopped" not in out.message


def test_a_lost_arm_server_ends_the_goal_at_once():
    """Issue 35: a frozen sim_node mid-move was retried into NO_OBSERVATION after 29 s; a lost arm
    server is MOTION_FAILED on the spot, with no other attempt or other object tried."""
    from spatial_manip.errors import ArmLostError

    agent = FakeAgent(alternatives=["book_2"])

    def pick(grasps, decision, _cancel):
        agent.calls.append(("pick", decision.pick_id))
        raise ArmLostError("arm server lost: no TCP pose for 3 s during the motion")
    agent.pick = pick
    out = InstructionPipeline(agent).run(validate_goal("pick a book", "pick", False, 3), threading.Event())
    assert out.error_code == "MOTION_FAILED" and "arm server lost" in out.message and out.attempts == 1
    assert [c for c in agent.calls if isinstance(c, tuple) and c[0] == "pick"] == [("pick", "book_1")]


def test_a_set_down_the_first_fresh_frame_confirms_is_not_perceived_again():
    """Issue 42: the result follows the arm's stop without a full look when the frame's depth
    shows the object at its set-down pose; otherwise the full look and verify run as before."""
    class SeenOnFrame(FakeAgent):
        def verify_on_frame(self, placed, obs):
            self.calls.append("verify_on_frame")
            return Verified(True, "", f"{placed.set_down.object_id} seen at the computed pose")

    def pick_and_place(agent):
        agent.reason = lambda seen, goal, reflection, trace: Decision(
            "pick_and_place", ("book_1",), pick_id="book_1", place_pose=np.eye(4))
        out, _ = run(agent, instruction="pick the book and place it on the left", kind="auto")
        return out, agent.calls[agent.calls.index("place") + 1:]

    out, after_place = pick_and_place(SeenOnFrame())
    assert out.success and out.message.startswith("book_1 seen at the computed pose")
    assert after_place == ["observe", "verify_on_frame"]
    out, after_place = pick_and_place(FakeAgent())          # not confirmed: a full look, then verify
    assert out.success and after_place == ["observe", "observe", "perceive", "verify"]


def test_the_frame_after_a_set_down_may_be_one_already_there_once_the_arm_stood_still():
    """Issue 42: the arm server answers a motion some time after the arm stops; a frame that came
    EXPOSURE_MARGIN_S after the arm last moved (at most EARLIEST_FRAME_S before the question) shows
    the set-down, so the check need not wait for the next one. An arm seen moving just now, or
    joints not known (the default looks): only a frame after the question."""
    from spatial_manip.perception.look_ahead import EARLIEST_FRAME_S, LookAhead

    now, q = [100.0], [np.zeros(6)]

    class Asked(FakeAgent):
        def __init__(self, arm_moves_in_place: bool):
            super().__init__()
            self.arm_moves_in_place = arm_moves_in_place

        def observe(self, cancel, arrived_after_s=None):
            self.calls.append(("observe", arrived_after_s))
            return super().observe(cancel)

        def place(self, decision, set_down, cancel):
            now[0] += 5.0                        # the place took 5 s ...
            if self.arm_moves_in_place:
                q[0] = q[0] + 0.1                # ... and the arm moved, seen only now
            return super().place(decision, set_down, cancel)

        def verify_on_frame(self, placed, obs):
            return Verified(True, "", "seen")

        def reason(self, seen, goal, reflection, trace):
            return Decision("pick_and_place", ("book_1",), pick_id="book_1", place_pose=np.eye(4))

    def after_place(arm_moves: bool, joints=True):
        agent = Asked(arm_moves)
        looks = LookAhead(agent, joints=(lambda: q[0]) if joints else (lambda: None), clock=lambda: now[0])
        out = InstructionPipeline(agent, looks=looks).run(
            validate_goal("pick the book and place it on the left", "auto"), threading.Event())
        assert out.success
        return agent.calls[agent.calls.index("place") + 1]

    assert after_place(arm_moves=False) == ("observe", now[0] - EARLIEST_FRAME_S)   # still since the goal came
    assert after_place(arm_moves=True) == ("observe", now[0])                       # moved just now
    assert after_place(arm_moves=False, joints=False) == ("observe", None)


def test_a_set_down_is_confirmed_on_the_frame_the_stamps_say_came_after_the_arm_stopped_else_by_arrival():
    """Issue 42 (arm stopped -> result): an agent whose ports tell by the stamps which frame was
    exposed after the arm's last motion confirms on that one and asks for no other; one whose
    ports cannot tell (None) observes by arrival as before."""
    class ByStamp(FakeAgent):
        def __init__(self, frame):
            super().__init__()
            self.frame = frame

        def observe_after_arm_stop(self, cancel):
            self.calls.append("observe_after_arm_stop")
            return self.frame

        def verify_on_frame(self, placed, obs):
            self.calls.append(("verify_on_frame", obs))
            return Verified(True, "", "seen")

        def reason(self, seen, goal, reflection, trace):
            return Decision("pick_and_place", ("book_1",), pick_id="book_1", place_pose=np.eye(4))

    def after_place(frame):
        agent = ByStamp(frame)
        out, _ = run(agent, instruction="pick the book and place it on the left", kind="auto")
        assert out.success
        return agent.calls[agent.calls.index("place") + 1:]

    stamped = object()
    assert after_place(stamped) == ["observe_after_arm_stop", ("verify_on_frame", stamped)]
    calls = after_place(None)
    assert calls[:2] == ["observe_after_arm_stop", "observe"] and calls[2][0] == "verify_on_frame"


def test_the_trace_images_are_drawn_beside_the_stages_and_the_result_does_not_wait_for_them(tmp_path, monkeypatch):
    """Issue 42: the observation and the overlays are drawn on a thread of their own while the
    goal goes on, and the result does not wait for the last of them (the overlay of the pick just
    made held it 0.25-0.5 s): trace.json says images are pending, and is written again, listing
    every one, once they are written."""
    agent = FakeAgent()
    p = InstructionPipeline(agent, trace_dir=str(tmp_path / "goal"))
    drawing, overlay_drawn = [], threading.Event()
    image = Trace.image

    def noting_image(trace, name, rgb, caption=""):
        drawing.append(threading.current_thread().name)
        if name == "overlay_grasp":
            overlay_drawn.wait(30.0)          # still being drawn when the result comes
        return image(trace, name, rgb, caption)

    monkeypatch.setattr(Trace, "image", noting_image)
    out = p.run(validate_goal("pick the book", "pick"), threading.Event())
    path = tmp_path / "goal" / "trace.json"
    first = json.loads(path.read_text())
    assert out.success and out.trace_path == str(path) and first["outcome"]["success"]
    assert first["images_pending"] and "overlay_grasp" not in [i["name"] for i in first["images"]]
    overlay_drawn.set()
    p.wait_drawn(30.0)
    trace = read_when_drawn(path, timeout_s=0.0)
    names = [i["name"] for i in trace["images"]]
    assert not trace["images_pending"] and names == ["observation", "overlay_decision", "overlay_grasp"]
    assert trace["total_s"] == first["total_s"]
    assert all((tmp_path / "goal" / i["file"]).is_file() for i in trace["images"])
    assert drawing and all(name.startswith("trace_images") for name in drawing)


class TouchingAgent(FakeAgent):
    """Grasps that reach the book and hold nothing (`touches` of them: a miss, a slip, an arm
    stopped on its way), each of which pushes it 3 cm; every look after the first sees it under
    another name there, or (`gone`) sees it nowhere. Books stand 0.3 m apart."""

    def __init__(self, touches=1, gone=False):
        super().__init__()
        self.touches, self.gone, self.looks, self.picks = touches, gone, 0, []

    def perceive(self, obs):
        self.calls.append("perceive")
        self.looks += 1
        x = 0.6 + 0.03 * (self.looks - 1)
        book = [] if self.gone and self.looks > 1 else \
            [SceneObject("book_1" if self.looks == 1 else f"book_seen_{self.looks}", "book", "book", [x, 0.0, 0.8],
                         [0.2, 0.15, 0.03])]
        books = book + [SceneObject("book_2", "book", "book", [0.6, 0.3, 0.8], [0.2, 0.15, 0.03])]
        return Perceived(obs, Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), books))

    def reason(self, seen, goal, reflection, trace):
        return replace(super().reason(seen, goal, reflection, trace), scene=seen.scene)

    def pick(self, grasps, decision, cancel):
        self.picks.append((decision.pick_id, len(decision.failed_grasps)))
        if self.touches > 0:
            self.touches -= 1
            raise TouchedGraspError(f"1 grasp(s) of {decision.pick_id} failed, the last after reaching it: "
                                    "GRASP_FAILED: the gripper closed to 0.002 m without detecting an object",
                                    np.eye(4))
        return super().pick(grasps, decision, cancel)


def _run_traced(agent, tmp_path, **goal):
    p = InstructionPipeline(agent, trace_dir=str(tmp_path / "goal"))
    out = p.run(validate_goal("pick the book", "pick", **goal), threading.Event())
    p.wait_drawn(30.0)
    return out, read_when_drawn(out.trace_path, timeout_s=0.0)["events"]


def test_a_grasp_that_reached_the_book_and_holds_nothing_looks_again_and_picks_it_where_it_is_now(tmp_path):
    """A slip may have moved the object: the pick looks again, finds it near where it stood
    (under whatever name the new look gives it), proposes new grasps there and never tries the
    failed grasp again; the trace says so."""
    agent = TouchingAgent(touches=1)
    out, events = _run_traced(agent, tmp_path)
    assert out.success and out.attempts == 1 and out.target_ids == ["book_1"]
    assert agent.picks == [("book_1", 0), ("book_seen_2", 1)] and agent.held == "book_seen_2"
    assert agent.looks == 2 and agent.calls.count("grasps") == 2
    relook = [e for e in events if e["kind"] in ("relook", "relook_found")]
    assert [e["kind"] for e in relook] == ["relook", "relook_found"]
    assert relook[0]["object_id"] == "book_1" and relook[0]["look"] == 1 and "reaching it" in relook[0]["reason"]
    assert relook[1]["found"] == "book_seen_2" and relook[1]["moved_m"] == pytest.approx(0.03)
    assert [e["object_id"] for e in events if e["kind"] == "grasps"] == ["book_1", "book_seen_2"]


def test_a_goal_looks_again_at_most_max_relooks_times_then_fails_grasp_failed(tmp_path):
    """The bound is the goal's: a retry (its own look) after the last one tries one grasp and ends."""
    agent = TouchingAgent(touches=10)
    out, events = _run_traced(agent, tmp_path, max_attempts=2)
    assert not out.success and out.error_code == "GRASP_FAILED" and "after reaching it" in out.message
    assert out.attempts == 2 and len(agent.picks) == MAX_RELOOKS + 2 and agent.looks == MAX_RELOOKS + 2
    assert [e["look"] for e in events if e["kind"] == "relook"] == list(range(1, MAX_RELOOKS + 1))


def test_a_book_not_seen_near_where_it_stood_after_the_touch_fails_the_pick_saying_so(tmp_path):
    """Gone (fallen, or seen as something else): never the book 0.3 m away in its place."""
    agent = TouchingAgent(touches=1, gone=True)
    out, events = _run_traced(agent, tmp_path)
    assert not out.success and out.error_code == "GRASP_FAILED" and agent.picks == [("book_1", 0)]
    assert "looking again, no book was seen within 0.12 m of where book_1 stood" in out.message
    assert [e.get("found", "-") for e in events if e["kind"] == "relook_found"] == [None]


class SlowCameraAgent(FakeAgent):
    """A camera that delivers only on a second wait, which the ports announce (`note`) as they begin it."""

    def __init__(self):
        super().__init__()
        self.pipeline = None

    def observe(self, cancel):
        self.pipeline.note("no synchronized RGB-D pair within 5 s: waiting once more, up to 5 s")
        return super().observe(cancel)


def test_a_note_from_the_ports_reaches_the_goals_feedback_and_trace_at_the_stage_under_way(tmp_path):
    agent, fb = SlowCameraAgent(), []
    p = agent.pipeline = InstructionPipeline(agent, feedback=lambda *a: fb.append(a), trace_dir=str(tmp_path / "goal"))
    out = p.run(validate_goal("pick the book", "pick"), threading.Event())
    assert out.success
    assert [(f[0].value, f[2], f[3]) for f in fb[:2]] == [("perceiving", 0.0, 1), ("perceiving", 0.0, 1)]
    assert "waiting once more" in fb[1][1]
    p.wait_drawn(30.0)
    notes = [e for e in read_when_drawn(out.trace_path, timeout_s=0.0)["events"] if e["kind"] == "note"]
    assert [(e["stage"], "waiting once more" in e["detail"]) for e in notes] == [("perceiving", True)]
    p.note("an idle look's camera wait")                  # no goal runs: nobody to tell
    assert len(fb) == 5 + 1
