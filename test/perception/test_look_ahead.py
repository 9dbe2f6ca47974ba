"""A goal reuses the newest look only while it is fresh (issue 42): younger than the limit, or
older with a new frame's depth unchanged, in the same workspace, the arm unmoved since; idle looks
keep to their CPU share. A fake clock and counted stages (a unit test's double): the look's contents
do not matter here, only which is used; the frames are small depth images of a flat table."""
from __future__ import annotations

import dataclasses
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from spatial_manip.errors import CanceledError, ConfigError, NoObservationError
from spatial_manip.perception.look_ahead import (CHANGED_MAX_PIXELS, CHECK_EVERY_S, EARLIEST_FRAME_S,
                                                 EXPOSURE_MARGIN_S, GOAL_SETTLE_S, IDLE_SETTLE_S, UNCHANGED_LIMIT_S,
                                                 LookAhead,
                                                 LookAheadConfig, depth_changes)

HOME = np.zeros(6)


def table_frame(depth: np.ndarray | None = None, camera_x: float = 0.0):
    """A frame as depth_changes reads it: a 60x80 depth image (a flat table 1.2 m away) and its camera pose."""
    T = np.eye(4)
    T[0, 3] = camera_x
    return SimpleNamespace(depth_m=np.full((60, 80), 1.2, np.float32) if depth is None else depth, T_base_cam=T)


def with_object(rows=slice(20, 32), cols=slice(30, 42), nearer_m=0.05):
    depth = table_frame().depth_m.copy()
    depth[rows, cols] -= nearer_m
    return depth


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class CountedStages:
    """observe/perceive that count their calls; perceiving takes `perceive_s` of the fake clock."""

    def __init__(self, clock: Clock, perceive_s: float = 0.5):
        self.clock, self.perceive_s, self.looks = clock, perceive_s, 0
        self.arrived_after: list = []       # each observe's earliest arrival allowed (None: after the question)
        self.depth = table_frame().depth_m  # what the camera sees now

    def observe(self, cancel, arrived_after_s=None):
        self.arrived_after.append(arrived_after_s)
        return table_frame(self.depth.copy())

    def perceive(self, obs, should_stop=None):      # an idle look hands its stop in; nothing changes here
        self.looks += 1
        self.clock.t += self.perceive_s
        return f"look {self.looks}"   # stands for the Perceived record


@pytest.fixture
def cell():
    clock = Clock()
    state = {"q": HOME.copy(), "workspace": object()}
    stages = CountedStages(clock)
    looks = LookAhead(stages, LookAheadConfig(max_age_s=3.0, cpu_share=0.5), joints=lambda: state["q"],
                      workspace=lambda: state["workspace"], clock=clock)
    looks.poll()
    clock.t += GOAL_SETTLE_S + 0.5      # the arm has stood still for a while before the first look
    return clock, state, stages, looks


def test_a_fresh_look_is_reused_with_its_age(cell):
    clock, _, stages, looks = cell
    first = looks.for_goal(threading.Event())
    assert (first.reused, first.reason, stages.looks) == (False, "no look yet", 1)
    clock.t += 1.0
    again = looks.for_goal(threading.Event())
    assert again.reused and again.seen == first.seen and stages.looks == 1
    # from the earliest the frame may have arrived: the arm stood still, so one up to
    # EARLIEST_FRAME_S before the question served
    assert again.age_s == pytest.approx(EARLIEST_FRAME_S + 1.5)
    fresh = f"fresh; unchanged: 0 pixels' depth moved since it (at most {CHANGED_MAX_PIXELS})"
    assert again.trace_fields() == {"reused": True, "age_s": EARLIEST_FRAME_S + 1.5, "reason": fresh, "waited_s": 0.0}


def test_a_fresh_look_is_taken_again_when_a_frame_already_there_shows_the_table_changed(cell):
    """However young the look, someone may have moved something since its frame: the frame the
    change showed on is the one perceived; a look that kept no frame is reused as fresh."""
    clock, _, stages, looks = cell
    looks.for_goal(threading.Event())
    clock.t += 1.0
    stages.depth = with_object()                      # a box put down a moment after the look
    goal = looks.for_goal(threading.Event())
    assert not goal.reused and stages.looks == 2 and goal.reason == "the table changed since the last look (100 pixels)"
    assert len(stages.arrived_after) == 2             # no third frame: the changed one was perceived
    clock.t += 1.0
    looks._latest = dataclasses.replace(looks.latest, frame=None)
    again = looks.for_goal(threading.Event())
    assert again.reused and again.reason == "fresh" and len(stages.arrived_after) == 2


def test_an_old_look_is_taken_again_when_the_table_changed_on_the_frame_that_showed_it(cell):
    clock, _, stages, looks = cell
    looks.for_goal(threading.Event())
    clock.t += 3.0
    stages.depth = with_object()                      # someone put a box down
    goal = looks.for_goal(threading.Event())
    assert not goal.reused and stages.looks == 2 and "4.50 s old when the goal came (limit 3 s)" in goal.reason
    assert "the table changed since (100 pixels)" in goal.reason
    assert len(stages.arrived_after) == 2             # the frame the change showed on is the one perceived
    assert goal.age_s == pytest.approx(EARLIEST_FRAME_S + stages.perceive_s)


def test_an_old_look_is_reused_while_a_new_frame_shows_the_table_unchanged(cell):
    clock, _, stages, looks = cell
    first = looks.for_goal(threading.Event())
    clock.t += 20.0
    noisy = table_frame().depth_m.copy()
    noisy[5, 5] += 0.3                                 # a lone pixel that flickered is no change
    stages.depth = noisy
    goal = looks.for_goal(threading.Event())
    assert goal.reused and goal.seen == first.seen and stages.looks == 1
    assert goal.reason == f"unchanged: 0 pixels' depth moved since it (at most {CHANGED_MAX_PIXELS})"
    clock.t += UNCHANGED_LIMIT_S                      # too old to trust however still the table looks
    assert not looks.for_goal(threading.Event()).reused and stages.looks == 2


def test_the_change_test_counts_only_what_moved_beyond_the_sensors_noise():
    flat = table_frame()
    assert depth_changes(flat, table_frame(with_object(nearer_m=0.005))) == 0      # within the noise at 1.2 m
    assert depth_changes(flat, table_frame(with_object())) == 100   # a 12x12-pixel box 5 cm high, its edge ring left out
    assert depth_changes(flat, table_frame(with_object(nearer_m=-0.05))) == 100   # ... or taken away
    assert depth_changes(None, flat) is None
    assert depth_changes(flat, table_frame(camera_x=0.02)) is None                 # another camera pose
    assert depth_changes(flat, table_frame(np.full((30, 40), 1.2, np.float32))) is None


def test_an_arm_motion_since_the_look_makes_it_stale_even_if_the_arm_came_back(cell):
    clock, state, stages, looks = cell
    looks.for_goal(threading.Event())
    state["q"] = HOME + 0.01
    looks.arm.poll()
    clock.t += 0.1
    state["q"] = HOME.copy()                           # back where it was: things may have moved
    goal = looks.for_goal(threading.Event())
    assert not goal.reused and "arm moved" in goal.reason and stages.looks == 2


def test_a_frame_asked_for_just_after_the_arm_moved_is_not_reused(cell):
    clock, state, stages, looks = cell
    state["q"] = HOME + 0.01
    looks.arm.poll()
    clock.t += EXPOSURE_MARGIN_S / 2                  # the frame may have been exposed while it moved
    looks.for_goal(threading.Event())
    assert "arm moved" in looks.for_goal(threading.Event()).reason


def test_a_new_workspace_makes_the_look_stale(cell):
    _, state, stages, looks = cell
    looks.for_goal(threading.Event())
    state["workspace"] = object()                     # a reset: an equal-looking description is still new
    goal = looks.for_goal(threading.Event())
    assert not goal.reused and "workspace changed" in goal.reason


def test_a_look_asked_for_just_as_the_workspace_changed_is_not_reused(cell):
    clock, state, stages, looks = cell
    state["workspace"] = object()
    assert looks.idle_look(threading.Event()) is None and stages.looks == 0    # not yet: the old world's frames
    first = looks.for_goal(threading.Event())
    assert not first.reused and "just as the workspace changed" in looks.stale_because(looks.latest)
    clock.t += IDLE_SETTLE_S
    assert looks.idle_look(threading.Event()) is not None
    assert looks.for_goal(threading.Event()).reused


def test_unknown_joints_and_a_zero_limit_never_reuse():
    clock = Clock()
    stages = CountedStages(clock)
    blind = LookAhead(stages, LookAheadConfig(max_age_s=3.0), clock=clock)
    clock.t += 1.0
    blind.for_goal(threading.Event())
    assert "joints are not known" in blind.for_goal(threading.Event()).reason
    off = LookAhead(stages, LookAheadConfig(max_age_s=0.0), joints=lambda: HOME, clock=clock)
    off.for_goal(threading.Event())
    assert "reuse is off" in off.for_goal(threading.Event()).reason


def test_idle_looks_keep_to_their_cpu_share_and_look_again_only_when_the_table_changed(cell):
    clock, _, stages, looks = cell
    assert looks.idle_look(threading.Event()) is not None           # none yet: look
    # it took 0.5 s at a share of 0.5: the next waits 0.5 s, and is not due before 1.5 s of age
    clock.t += 0.4
    assert looks.idle_look(threading.Event()) is None and stages.looks == 1
    clock.t += 0.5
    assert looks.idle_look(threading.Event()) is None               # 1.4 s old: still fresh enough
    clock.t += 0.2
    checks = len(stages.arrived_after)
    assert looks.idle_look(threading.Event()) is None and stages.looks == 1   # unchanged on a new frame
    assert len(stages.arrived_after) == checks + 1
    assert stages.arrived_after[-1] == pytest.approx(clock.t - EARLIEST_FRAME_S)   # one already there will do
    clock.t += CHECK_EVERY_S / 2
    assert looks.idle_look(threading.Event()) is None and len(stages.arrived_after) == checks + 1   # not due yet
    clock.t += CHECK_EVERY_S
    stages.depth = with_object()
    changed_at = clock.t
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 2
    assert len(stages.arrived_after) == checks + 2                  # the changed frame itself was perceived
    assert looks.latest.asked_at_s == pytest.approx(changed_at - EARLIEST_FRAME_S)   # aged from its earliest arrival
    goal = looks.for_goal(threading.Event())
    assert goal.reused and stages.looks == 2


def test_no_idle_look_until_the_arm_has_settled(cell):
    """A sim reset often follows a goal's last motion at once: an idle look started then would
    be stale, and the next goal would wait for it."""
    clock, state, stages, looks = cell
    state["q"] = HOME + 0.01
    assert looks.idle_look(threading.Event()) is None and stages.looks == 0
    clock.t += IDLE_SETTLE_S - 0.1
    assert looks.idle_look(threading.Event()) is None
    clock.t += 0.2
    assert looks.idle_look(threading.Event()) is not None


def test_a_goal_waits_for_the_idle_look_under_way_and_reuses_it_even_if_it_took_longer_than_the_limit(cell):
    """On a loaded machine a look can take longer than the freshness limit; one under way when
    the goal came was asked for before any the goal could take, so the goal uses it."""
    clock, _, stages, looks = cell
    started, release = threading.Event(), threading.Event()
    perceive = stages.perceive

    def slow_perceive(obs, should_stop=None):
        started.set()
        release.wait(5.0)
        clock.t += 5.0                      # far over the 3 s limit
        return perceive(obs)

    stages.perceive = slow_perceive
    idle = threading.Thread(target=looks.idle_look, args=(threading.Event(),))
    idle.start()
    assert started.wait(5.0)
    got, arrived = [], threading.Event()
    goal = threading.Thread(target=lambda: got.append(looks.for_goal(threading.Event())))

    def clock_noting_the_goal():
        if threading.current_thread() is goal:
            arrived.set()
        return clock()

    looks._clock = clock_noting_the_goal
    goal.start()
    assert arrived.wait(5.0)                # the goal came while the idle look was under way
    release.set()
    idle.join(5.0)
    goal.join(5.0)
    assert got and got[0].reused and stages.looks == 1 and got[0].age_s == pytest.approx(5.5)


@pytest.mark.parametrize("kwargs, words", [({"max_age_s": -1.0}, "look_max_age_s must be within 0..60 s"),
                                           ({"max_age_s": 600.0}, "look_max_age_s must be within 0..60 s"),
                                           ({"cpu_share": 1.5}, "look_cpu_share must be within 0..1")])
def test_bad_settings_are_refused_with_the_setting_named(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        LookAheadConfig(**kwargs)


def test_a_segmenter_that_looks_for_the_words_gets_a_look_per_instruction_and_none_while_idle():
    clock = Clock()
    asked = []

    class WordStages(CountedStages):
        def perceive(self, obs, instruction=""):
            asked.append(instruction)
            return super().perceive(obs)

    looks = LookAhead(WordStages(clock), LookAheadConfig(max_age_s=3.0), joints=lambda: HOME, words_matter=True,
                      clock=clock)
    looks.poll()
    clock.t += 1.0
    assert looks.idle_look(threading.Event()) is None
    looks.for_goal(threading.Event(), "pick the mug")
    assert looks.for_goal(threading.Event(), "pick the mug").reused
    other = looks.for_goal(threading.Event(), "pick the teddy bear")
    assert not other.reused and "last look was for others" in other.reason
    assert asked == ["pick the mug", "pick the teddy bear"]


def test_the_idle_loop_warns_once_per_kind_of_failure_and_keeps_going():
    clock = Clock()
    calls, warnings, stop = [], [], threading.Event()

    class FailingStages(CountedStages):
        def observe(self, cancel, arrived_after_s=None):
            calls.append(1)
            if len(calls) >= 3:
                stop.set()
            raise (NoObservationError("no camera") if len(calls) < 3 else RuntimeError("a bug"))

    looks = LookAhead(FailingStages(clock), LookAheadConfig(max_age_s=3.0, cpu_share=0.3), joints=lambda: HOME,
                      clock=clock)
    looks.poll()
    clock.t += IDLE_SETTLE_S + 0.1

    def may_look():
        looks._next_idle_s = 0.0           # no waiting between the failed looks
        return True

    looks.idle_loop(may_look, stop, warnings.append)
    assert len(calls) == 3                  # it kept looking after a failure, and stopped quietly with the node
    assert warnings == ["looking ahead while idle failed (NO_OBSERVATION): no camera; goals look for themselves"]


def test_the_idle_loop_notes_each_look_it_takes_with_its_times():
    clock = Clock()
    notes, stop = [], threading.Event()
    looks = LookAhead(CountedStages(clock), LookAheadConfig(max_age_s=3.0, cpu_share=0.5), joints=lambda: HOME,
                      clock=clock)
    looks.poll()
    clock.t += IDLE_SETTLE_S + 0.1

    def may_look():
        if notes:
            stop.set()
        return True

    looks.idle_loop(may_look, stop, note=notes.append)
    assert len(notes) == 1 and notes[0].startswith("idle look: ") and "for its frame" in notes[0]
    assert "after the workspace last changed" in notes[0]


def test_homing_runs_before_the_judgement_and_a_motion_it_makes_stales_the_look(cell):
    clock, state, stages, looks = cell
    looks.for_goal(threading.Event())
    assert looks.for_goal(threading.Event(), prepare=lambda: None).reused     # a home that moved nothing

    def home():
        state["q"] = HOME + 0.5             # the arm went home from elsewhere
    goal = looks.for_goal(threading.Event(), prepare=home)
    assert not goal.reused and "arm moved" in goal.reason and stages.looks == 2


def test_a_goal_takes_a_frame_already_there_when_the_arm_stood_still_since_it_came(cell):
    """Issue 42: waiting for the next frame cost a camera period (0.2-1.4 s under load). A goal's
    look may take one that arrived since EXPOSURE_MARGIN_S after the arm last moved, at most
    EARLIEST_FRAME_S before the question; idle looks and a look right after a motion ask anew."""
    clock, state, stages, looks = cell
    asked = clock.t
    looks.for_goal(threading.Event())
    assert stages.arrived_after == [pytest.approx(asked - EARLIEST_FRAME_S)]
    state["q"] = HOME + 0.01                           # the arm moves ...
    looks.arm.poll()
    moved = clock.t
    clock.t += 0.5                                     # ... and has stood still for 0.5 s
    looks.for_goal(threading.Event())
    assert stages.arrived_after[-1] == pytest.approx(moved + EXPOSURE_MARGIN_S)
    state["q"] = HOME.copy()
    looks.arm.poll()
    clock.t += EXPOSURE_MARGIN_S / 2                   # it moved just now: only a frame after the question
    looks.for_goal(threading.Event())
    assert stages.arrived_after[-1] == pytest.approx(clock.t - stages.perceive_s)
    clock.t += 10.0
    assert looks.idle_look(threading.Event()) is not None and stages.arrived_after[-1] is None


def test_without_the_arms_joints_a_goal_asks_for_a_frame_after_the_question():
    clock = Clock()
    stages = CountedStages(clock)
    LookAhead(stages, LookAheadConfig(max_age_s=3.0), clock=clock).for_goal(threading.Event())
    assert stages.arrived_after == [None]


def test_no_idle_look_until_a_goal_has_been_over_for_a_while(cell):
    """A sim reset or a person's hand often follows a goal at once: the look waits GOAL_SETTLE_S
    after the last time a goal held it back, however long the arm has stood still."""
    clock, _, stages, looks = cell
    looks.hold_back()
    clock.t += GOAL_SETTLE_S - 0.1
    assert looks.idle_look(threading.Event()) is None and stages.looks == 0
    clock.t += 0.2
    assert looks.idle_look(threading.Event()) is not None


def test_a_reset_after_a_goal_ends_its_settling_time_and_the_world_settling_holds_the_look(cell):
    """The reset GOAL_SETTLE_S waits for, once it came, ends that wait: the new world's look is
    due IDLE_SETTLE_S after it, not GOAL_SETTLE_S after the goal (its grasps are proposed on it)."""
    clock, state, stages, looks = cell
    looks.hold_back()
    clock.t += 0.3
    state["workspace"] = object()                   # the reset, just after the result
    assert looks.idle_look(threading.Event()) is None and stages.looks == 0
    clock.t += IDLE_SETTLE_S + 0.01                 # well within GOAL_SETTLE_S of the goal
    assert clock.t - 100.0 - GOAL_SETTLE_S - 0.5 < GOAL_SETTLE_S
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 1


def test_a_look_the_world_changed_under_is_taken_again_without_the_cpu_share_pause(cell):
    """A reset as an idle look runs stales it: the next look, of the new world, is due once the
    world has settled (IDLE_SETTLE_S), not after the pause the CPU share asks for (the look's
    time again, at a share of 0.5)."""
    clock, state, stages, looks = cell
    perceive = stages.perceive

    def reset_while_perceiving(obs, should_stop=None):
        state["workspace"] = object()
        looks.poll()
        return perceive(obs)

    stages.perceive = reset_while_perceiving
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 1
    stages.perceive = perceive
    assert "workspace changed" in looks.stale_because(looks.latest)
    clock.t += IDLE_SETTLE_S + 0.01             # under the 0.5 s pause a look that served would have had
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 2
    assert looks.stale_because(looks.latest) is None
    clock.t += IDLE_SETTLE_S + 0.01             # this one serves, and is fresh: no look
    assert looks.idle_look(threading.Event()) is None and stages.looks == 2


def test_a_reset_after_an_idle_look_ends_its_cpu_share_pause(cell):
    """A long look's pause (its time again, at a share of 0.5) holds back the looks of its own
    world only: a reset after the look ended, or an arm motion, makes the new world's look due once
    it has settled (on a loaded machine the pause outlasted a goal and the reset after it, and the
    next goal took its own look)."""
    clock, state, stages, looks = cell
    stages.perceive_s = 20.0                     # a look at load 20
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 1
    clock.t += 5.0
    state["workspace"] = object()                # the reset, 15 s into the look's 20 s pause
    assert looks.idle_look(threading.Event()) is None       # the new world settles first
    clock.t += IDLE_SETTLE_S + 0.01
    stages.perceive_s = 1.0
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 2
    assert looks.stale_because(looks.latest) is None
    stages.depth = with_object()                 # the table changed (no reset, no arm motion) ...
    clock.t += 0.5
    assert looks.idle_look(threading.Event()) is None and stages.looks == 2   # ... within the 1 s pause: it holds
    clock.t += 0.6
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 3
    clock.t += 0.1
    state["q"] = HOME + 0.01                     # an arm motion within the new look's pause ends it too
    looks.poll()
    clock.t += IDLE_SETTLE_S + 0.01
    assert looks.idle_look(threading.Event()) is not None and stages.looks == 4


def test_an_idle_look_the_world_changed_under_is_stopped_and_the_next_is_due_at_once(cell):
    """A reset as an idle look perceives: the look asks `should_stop` as its stages end, stops
    (nothing stored, no CPU share's pause) and the look of the new world is due once it settled;
    a look nothing changed under runs to its end (its stop asked, False)."""
    clock, state, stages, looks = cell
    asked = []

    def perceive(obs, should_stop=None):
        asked.append(should_stop())             # the first stage's end: nothing changed yet
        state["workspace"] = object()           # the reset
        if should_stop():
            raise CanceledError("segmenting stopped after planes: its look is no longer wanted")
        return stages_perceive(obs)

    stages_perceive, stages.perceive = stages.perceive, perceive
    assert looks.idle_look(threading.Event()) is None and looks.latest is None and asked == [False]
    stages.perceive = lambda obs, should_stop=None: asked.append(should_stop()) or stages_perceive(obs)
    assert looks.idle_look(threading.Event()) is None        # the new world has not settled yet
    clock.t += IDLE_SETTLE_S
    assert looks.idle_look(threading.Event()) is not None and asked == [False, False]
    assert looks.for_goal(threading.Event()).reused
