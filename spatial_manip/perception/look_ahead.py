"""The planner's newest look, kept between goals so that a goal can start reasoning at once
(issue 42). While no goal runs, the planner node perceives the table now and then (at a bounded
rate and CPU share); a goal reuses the newest look when it is younger than the freshness limit,
perceived in the workspace that holds now, the arm has stood still since before that frame was
asked for, and a frame already there shows the table's depth unchanged since. Any other look is
taken again. LeRobot's `read_latest(max_age)` is the model: a
stale frame is refused, never silently used.

ROS-free: the node hands in the agent's stages and two readers (the arm's joints, the workspace
description) and runs `idle_loop` on a thread of its own."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np
from scipy import ndimage

from spatial_manip.errors import CanceledError, ConfigError, SpatialManipError
from spatial_manip.geometry.pointcloud import depth_edge_pixels, range_tolerance_m
from spatial_manip.heap import release_freed_memory
from spatial_manip.observation import RGBDObservation

Perceived = Any     # the stages' record of one look (spatial_manip.pipeline.Perceived, a layer above)

ARM_STILL_TOL_RAD = 2e-3    # a joint change larger than this is arm motion (the latency bench's threshold)
# a frame asked for this soon after the arm last moved, or the workspace changed (a reset), may
# have been exposed before (one camera period at the sim's 5 Hz, several of a RealSense's)
EXPOSURE_MARGIN_S = 0.25
# an idle look starts only once the arm and the workspace have been still this long (a frame
# exposed before a reset's end or the arm's stop is refused anyway: EXPOSURE_MARGIN_S, the frames' stamps)
IDLE_SETTLE_S = 0.5
# and only this long after a goal ended (or the camera was missing): a sim reset or a person's hand
# often follows a goal at once, and a look started then is stale, and a goal that comes while it runs
# waits for it (the segmenter runs one look at a time) and then looks again. Counted from the arm's
# stop and the workspace alone (IDLE_SETTLE_S was 2 s), a look began as a goal's result went out, its
# lift over 2 s before, and the reset after it made it stale (latency-bench seed 72: first motion 9.0 s).
# A new workspace (the reset it waits for) ends it early: from then IDLE_SETTLE_S alone holds the look
# back, and the 2 s counted from the result delayed the new world's look and the grasps proposed on it
GOAL_SETTLE_S = 2.0
# a goal's look may take a frame that arrived up to this long before it asked, when the arm stood
# still since (EXPOSURE_MARGIN_S before that frame): the newest frame already there shows the table
# as it is, and waiting for the next one cost a camera period (0.2-1.4 s under load, issue 42)
EARLIEST_FRAME_S = 1.0
POLL_S = 0.05               # how often the idle loop watches the joints and the workspace
# A look older than the freshness limit is still reused, up to UNCHANGED_LIMIT_S, when a new frame's
# depth shows the table unchanged (`depth_changes`): the arm unmoved and the workspace the same, the
# depth tells whether anything else moved, where a fixed age only guessed. A pixel changed when its
# depth moved by more than CHANGE_SIGMAS of the sensor's error at that range (CHANGE_FLOOR_M at least),
# away from depth edges; isolated pixels are noise (a 3x3 opening drops them), and more than
# CHANGED_MAX_PIXELS left is a change (an object 3 cm wide at 1.5 m covers ~100 pixels of a 640x480 view)
UNCHANGED_LIMIT_S = 60.0
CHANGE_SIGMAS = 5.0
CHANGE_FLOOR_M = 0.01
CHANGED_MAX_PIXELS = 40
CAMERA_SAME_M = 0.005       # two frames from camera poses farther apart than this are not compared
CHECK_EVERY_S = 1.0         # while idle, an aged look's table is checked for changes this often


@dataclass(frozen=True, kw_only=True)
class LookAheadConfig:
    # a look older than this is reused only when a new frame's depth shows the table unchanged
    # (`depth_changes`, up to UNCHANGED_LIMIT_S), else taken again (0: every goal takes its own)
    max_age_s: float = 0.0
    # idle looks use at most this share of one core (0: none). A look takes about 2 s now (5-25 s
    # once, when this was off by default); after it, only a cheap change test runs while idle
    cpu_share: float = 0.5

    def __post_init__(self):
        if not (isinstance(self.max_age_s, (int, float)) and 0.0 <= self.max_age_s <= 60.0):
            raise ConfigError(f"look_max_age_s must be within 0..60 s (0: no reuse), got {self.max_age_s!r}; "
                              "a look older than a minute shows a table people may have changed")
        if not (isinstance(self.cpu_share, (int, float)) and 0.0 <= self.cpu_share <= 1.0):
            raise ConfigError(f"look_cpu_share must be within 0..1 (a share of one core; 0: no idle looks), "
                              f"got {self.cpu_share!r}")


@dataclass(frozen=True)
class Look:
    """One perceived frame and what held when it was asked for."""

    seen: Perceived
    asked_at_s: float        # monotonic; the frame arrived after this
    took_s: float            # how long observing and perceiving it took
    workspace: object        # the workspace description it was perceived in (compared by identity)
    instruction: str = ""    # the words it was perceived for (only when the segmenter asks for them)
    observe_s: float = 0.0   # of `took_s`, waiting for the frame
    frame: RGBDObservation | None = None    # the frame it perceived (a later one is compared with it)


@dataclass(frozen=True)
class GoalLook:
    """The look a goal reasons on, and how it came: reused (with its age) or taken now (and why)."""

    seen: Perceived
    reused: bool
    age_s: float
    reason: str
    waited_s: float = 0.0    # for an idle look under way when the goal came
    observe_s: float = 0.0   # a look taken now: how long it waited for its frame

    def trace_fields(self) -> dict:
        fields = {"reused": self.reused, "age_s": round(self.age_s, 3), "reason": self.reason,
                  "waited_s": round(self.waited_s, 3)}
        return fields if self.reused else {**fields, "observe_s": round(self.observe_s, 3)}


class LookStages(Protocol):
    # a frame that arrived since `arrived_after_s` (monotonic) may serve; None: one after the question
    def observe(self, cancel: threading.Event, arrived_after_s: float | None = None) -> RGBDObservation: ...
    # the words, if asked for; `should_stop` (an idle look's, when given): True stops it (CanceledError)
    def perceive(self, obs: RGBDObservation, instruction: str = "", should_stop=None) -> Perceived: ...


class ArmWatch:
    """When the arm last moved, from its joints polled often (a reference kept until a joint
    leaves it by more than ARM_STILL_TOL_RAD, so a slow drift counts too)."""

    def __init__(self, joints: Callable[[], np.ndarray | None], clock=time.monotonic):
        self._joints, self._clock = joints, clock
        self._reference: np.ndarray | None = None
        self.moved_at_s: float | None = None       # None: never seen moving
        self.known = False                          # joints have been read at least once

    def poll(self) -> None:
        q = self._joints()
        if q is None or np.shape(q) != (6,) or not np.all(np.isfinite(q)):
            return
        q = np.asarray(q, float)
        if self._reference is None:
            self._reference, self.known = q, True
            self.moved_at_s = self._clock()         # standing since an unknown time: from now on
        elif float(np.max(np.abs(q - self._reference))) > ARM_STILL_TOL_RAD:
            self._reference, self.moved_at_s = q, self._clock()


class LookAhead:
    """The newest look, and the one lock under which looks are taken (the segmenter is never run
    by two threads at once: an idle look under way when a goal comes is finished and then judged)."""

    def __init__(self, stages: LookStages, config: LookAheadConfig = LookAheadConfig(), *,
                 joints: Callable[[], np.ndarray | None] = lambda: None,
                 workspace: Callable[[], object] = lambda: None, words_matter: bool = False, clock=time.monotonic):
        """`words_matter`: the segmenter looks for the instruction's words (an open-vocabulary
        detector), so a look serves only the words it was made for and none is taken while idle."""
        self.stages, self.config, self._clock = stages, config, clock
        self.words_matter = words_matter
        self._workspace = workspace
        self.arm = ArmWatch(joints, clock)
        self._workspace_seen: object = None
        self._workspace_since_s = clock()     # when the workspace last changed, as polled
        self._lock = threading.Lock()
        self._latest: Look | None = None
        self._next_idle_s = 0.0               # no idle look before this (`_pause`) ...
        self._paused_s = -np.inf              # ... unless the world changed after the pause was set then
        self._held_back_s = -np.inf           # when idle looks were last held back (a goal ran)

    @property
    def latest(self) -> Look | None:
        return self._latest

    def poll(self) -> None:
        """Note an arm motion or a new workspace (the idle loop calls this often, goals too)."""
        self.arm.poll()
        workspace = self._workspace()
        if workspace is not self._workspace_seen:
            self._workspace_seen, self._workspace_since_s = workspace, self._clock()

    # --- a goal's look ---------------------------------------------------------------------------
    def for_goal(self, cancel: threading.Event, instruction: str = "",
                 prepare: Callable[[], None] = lambda: None) -> GoalLook:
        """The newest look if it is still fresh, else a new one (stored as the newest), after
        `prepare()` (the arm moved out of view). Its age is judged at the goal's arrival: a look
        under way then, which the goal waits for, was asked for earlier than any the goal could
        take itself, and is ready sooner. `prepare` runs under the lock too: the agent's state
        that an idle look writes (the scene it knows, what it holds) is what homing reads."""
        words = instruction if self.words_matter else ""
        arrived = self._clock()
        with self._lock:
            waited = self._clock() - arrived
            prepare()
            self.poll()
            latest = self._latest
            why = self.stale_because(latest, words, at_s=arrived)
            obs = None
            if why is None:
                # fresh, and the arm unmoved: still, a frame already there must show the table as the look
                # did (a person may have moved something since its frame, however young it is)
                changes, frame, earliest = self._changes_since(latest, cancel)
                if changes is None or changes <= CHANGED_MAX_PIXELS:
                    reason = "fresh" if changes is None else \
                        f"fresh; unchanged: {changes} pixels' depth moved since it (at most {CHANGED_MAX_PIXELS})"
                    return GoalLook(latest.seen, True, self._clock() - latest.asked_at_s, reason, waited)
                why, obs = f"the table changed since the last look ({changes} pixels)", (frame, earliest)
            if obs is None and self._only_aged(latest, words, at_s=arrived) and \
                    (earliest := self.earliest_frame_s()) is not None:
                # a frame already there tells whether the table changed; if it did, it is the one looked at
                obs = self.stages.observe(cancel, arrived_after_s=earliest)
                changes = depth_changes(latest.frame, obs)
                if changes is not None and changes <= CHANGED_MAX_PIXELS:
                    return GoalLook(latest.seen, True, self._clock() - latest.asked_at_s,
                                    f"unchanged: {changes} pixels' depth moved since it (at most {CHANGED_MAX_PIXELS})",
                                    waited)
                why += f"; and the table changed since ({'not comparable' if changes is None else f'{changes} pixels'})"
                obs = (obs, earliest)
            look = self._take(cancel, words, early=True, obs=obs)     # a goal waits for it: a frame already there will do
            return GoalLook(look.seen, False, self._clock() - look.asked_at_s, why, waited, look.observe_s)

    def _changes_since(self, look: Look, cancel: threading.Event) -> tuple[int | None, RGBDObservation | None,
                                                                           float | None]:
        """(pixels changed, the frame, the earliest it may have arrived) on a frame already there
        against `look`'s; (None, None, None) when the look kept no frame or none may serve yet (the
        arm's motion unknown), (None, frame, earliest) when the two cannot be compared."""
        earliest = self.earliest_frame_s() if look.frame is not None else None
        if earliest is None:
            return None, None, None
        frame = self.stages.observe(cancel, arrived_after_s=earliest)
        return depth_changes(look.frame, frame), frame, earliest

    def stale_because(self, look: Look | None, instruction: str = "", at_s: float | None = None) -> str | None:
        """Why `look` may not be reused now for `instruction`, its age taken at `at_s` (default
        now); None: it may."""
        if self.config.max_age_s <= 0:
            return "reuse is off (look_max_age_s 0)"
        if look is None:
            return "no look yet"
        age = (self._clock() if at_s is None else at_s) - look.asked_at_s
        if age > self.config.max_age_s:
            return f"the last look was {age:.2f} s old when the goal came (limit {self.config.max_age_s:g} s)"
        return self._moved_since(look, instruction)

    def _only_aged(self, look: Look | None, instruction: str = "", at_s: float | None = None) -> bool:
        """Whether `look` is stale only by its age, and young enough (UNCHANGED_LIMIT_S) that a
        new frame's depth may show it still holds."""
        if look is None or look.frame is None or self.config.max_age_s <= 0:
            return False
        age = (self._clock() if at_s is None else at_s) - look.asked_at_s
        return age <= UNCHANGED_LIMIT_S and self._moved_since(look, instruction) is None

    def _moved_since(self, look: Look, instruction: str = "") -> str | None:
        """What, other than its age, stales `look`: other words, a new workspace, an arm motion."""
        if look.instruction != instruction:
            return "the segmenter looks for the instruction's words, and the last look was for others"
        if self._workspace() is not look.workspace:
            return "the workspace changed since the last look (a reset or a new cell description)"
        if look.asked_at_s - self._workspace_since_s < EXPOSURE_MARGIN_S:
            return "the last look was asked for just as the workspace changed (its frame may show the old one)"
        if not self.arm.known:
            return "the arm's joints are not known, so whether it moved is not either"
        if self.arm.moved_at_s is not None and self.arm.moved_at_s > look.asked_at_s - EXPOSURE_MARGIN_S:
            return "the arm moved since (or just before) the last look"
        return None

    def _take(self, cancel: threading.Event, instruction: str = "", *, early: bool = False,
              obs: tuple[RGBDObservation, float] | None = None, should_stop: Callable[[], bool] | None = None) -> Look:
        """Observe a frame asked for now (`early`: one already there when nothing moved since it
        came, `earliest_frame_s`) and perceive it (for `instruction`'s words, if given); the caller
        holds the lock. An early look counts as asked for at the earliest arrival allowed, so its age
        is never understated. `obs`: a frame just observed (for a change test) and the earliest it
        may have arrived, perceived as is. `should_stop`: handed to the perceiving (its segmenter
        asks it as each stage ends)."""
        started, workspace = self._clock(), self._workspace()
        if obs is not None:
            obs, earliest = obs
        else:
            earliest = self.earliest_frame_s() if early else None
            obs = self.stages.observe(cancel) if earliest is None else \
                self.stages.observe(cancel, arrived_after_s=earliest)
        observed = self._clock()
        stop = {} if should_stop is None else {"should_stop": should_stop}
        seen = self.stages.perceive(obs, instruction, **stop) if instruction else self.stages.perceive(obs, **stop)
        look = Look(seen, started if earliest is None else earliest, self._clock() - started, workspace, instruction,
                    observed - started, frame=obs)
        self._latest = look
        return look

    def earliest_frame_s(self) -> float | None:
        """How early a frame may have arrived and still show the table as it is now: EXPOSURE_MARGIN_S
        after the arm last moved, at most EARLIEST_FRAME_S before now; None (only a frame that arrives
        after the question) while the arm's motion is not known. A new workspace (a reset) is the
        ports' to judge, by the frames' stamps (planner_ports.frame_of_workspace)."""
        self.arm.poll()
        if not self.arm.known or self.arm.moved_at_s is None:
            return None
        now = self._clock()
        return min(now, max(self.arm.moved_at_s + EXPOSURE_MARGIN_S, now - EARLIEST_FRAME_S))

    # --- while idle ------------------------------------------------------------------------------
    def idle_look(self, cancel: threading.Event) -> Look | None:
        """One look while no goal runs, when the newest one is stale or half its freshness limit
        old, at most at the CPU share's rate; None when none was due (or a goal holds the lock). A
        look stale only by its age is checked on a new frame instead, every CHECK_EVERY_S, and
        taken again only when the table changed."""
        self.poll()
        now = self._clock()
        if self.config.max_age_s <= 0 or self.config.cpu_share <= 0 or self.words_matter or self._paused(now):
            return None
        latest = self._latest
        if self.stale_because(latest) is None and now - latest.asked_at_s < self.config.max_age_s / 2:
            return None
        if now - max(self.arm.moved_at_s or -np.inf, self._workspace_since_s) < IDLE_SETTLE_S or \
                now - self._held_back_s < GOAL_SETTLE_S and self._workspace_since_s <= self._held_back_s:
            return None     # the world changed just now, or a goal just ended and no reset came yet: it may change again
        if not self._lock.acquire(blocking=False):
            return None
        began = self._clock()

        def world_changed() -> bool:
            """A reset or an arm motion since the look began: it would serve nothing."""
            self.poll()
            return self._workspace_since_s >= began or (self.arm.moved_at_s or -np.inf) >= began

        try:
            obs = None
            if self._only_aged(latest):
                # a frame already there will do (as for a goal): waiting for the next one held the
                # lock a camera period, and a goal that came then waited for it (0.9-1.4 s under load)
                earliest = self.earliest_frame_s()
                asked = self._clock()
                frame = self.stages.observe(cancel) if earliest is None else \
                    self.stages.observe(cancel, arrived_after_s=earliest)
                changes = depth_changes(latest.frame, frame)
                if changes is not None and changes <= CHANGED_MAX_PIXELS:
                    self._pause(CHECK_EVERY_S)
                    return None
                obs = (frame, asked if earliest is None else earliest)
            try:
                look = self._take(cancel, obs=obs, should_stop=world_changed)
            except CanceledError:
                # the world changed under it (its segmenter stopped at a stage's end): the next look
                # is due once the world has settled, with no CPU share's pause (this one served nothing)
                self._pause(0.0)
                return None
        finally:
            self._lock.release()
        # the next idle look waits so that looking takes at most `cpu_share` of the time; none after
        # a look the world changed under (a reset, an arm motion as it ran): that one served nothing,
        # and a goal that came in the pause found no look of the new world (pick-72-00000: 5.2 s of
        # pause after a look of the world before the reset, first motion 8.4 s)
        self.poll()
        pause = look.took_s * (1.0 / self.config.cpu_share - 1.0) if self._moved_since(look) is None else 0.0
        self._pause(pause)
        return look

    def _pause(self, seconds: float) -> None:
        """No idle look for `seconds` from now, unless the world changes meanwhile (`_paused`)."""
        self._paused_s = self._clock()
        self._next_idle_s = self._paused_s + seconds

    def _paused(self, now: float) -> bool:
        """Whether an idle look must still wait: its pause runs, and neither a reset nor an arm motion
        came since the pause was set. A pause keeps looks of one world to their CPU share; a look of a
        new world serves the next goal, and holding it back made that goal look for itself (latency-bench
        seed 78 at load 20: the pause after a 40 s look outlasted the goal and the reset after it, so the
        next goal took its own look, 15.8 s)."""
        changed = max(self.arm.moved_at_s or -np.inf, self._workspace_since_s)
        return now < self._next_idle_s and changed <= self._paused_s

    def look_note(self, look: Look) -> str:
        """One line on an idle look: how long it took, of that waiting for its frame, its longest
        perceiving parts, and how long after the workspace last changed it was ready (issue 42: a
        goal 8 s after a reset found the grasps of 1-3 objects proposed when the look took 3-6 s)."""
        parts = getattr(look.seen, "timing_s", None) or {}
        top = sorted(((float(v), k) for k, v in parts.items() if "." not in k and isinstance(v, (int, float))),
                     reverse=True)[:3]
        return (f"idle look: {look.took_s:.2f} s ({look.observe_s:.2f} s for its frame"
                + "".join(f", {k} {v:.2f} s" for v, k in top)
                + f"), ready {self._clock() - self._workspace_since_s:.2f} s after the workspace last changed")

    def hold_back(self) -> None:
        """A goal runs (or the camera is missing): no idle look until GOAL_SETTLE_S after the last
        call, or until a new workspace has come since it (and IDLE_SETTLE_S has passed)."""
        self._held_back_s = self._clock()

    def idle_loop(self, may_look: Callable[[], bool], stop: threading.Event,
                  warn: Callable[[str], None] = lambda text: None, note: Callable[[str], None] = lambda text: None
                  ) -> None:
        """Watch the arm, and look whenever `may_look()` (no goal runs, the camera is there) and
        a look is due, until `stop` is set. A failed idle look is logged once per kind and
        retried a second later; each look taken is told to `note` (`look_note`)."""
        warned: set[str] = set()
        while not stop.wait(POLL_S):
            if not may_look():
                self.poll()
                self.hold_back()
                continue
            try:
                look = self.idle_look(stop)
                if look is not None:
                    note(self.look_note(look))
                    release_freed_memory()     # as after a goal: a look frees ~50-100 MB glibc would keep (issue 35)
            except Exception as e:  # never end the node's looking ahead for good: a goal looks for itself
                if stop.is_set():
                    return                     # the node is shutting down under the look
                kind, text = (e.code.value, e.message) if isinstance(e, SpatialManipError) else (type(e).__name__, str(e))
                if kind not in warned:
                    warned.add(kind)
                    warn(f"looking ahead while idle failed ({kind}): {text}; goals look for themselves")
                self._pause(1.0)


def depth_changes(before: RGBDObservation | None, after: RGBDObservation) -> int | None:
    """How many pixels' depth changed from `before` to `after` beyond the sensor's noise (see
    CHANGE_SIGMAS), isolated ones left out; None when the two cannot be compared (no earlier frame,
    another image size, or another camera pose)."""
    if before is None or np.shape(before.depth_m) != np.shape(after.depth_m):
        return None
    T0, T1 = np.asarray(before.T_base_cam, float), np.asarray(after.T_base_cam, float)
    if np.linalg.norm(T0[:3, 3] - T1[:3, 3]) > CAMERA_SAME_M or np.max(np.abs(T0[:3, :3] - T1[:3, :3])) > 1e-3:
        return None
    d0, d1 = np.asarray(before.depth_m, np.float32), np.asarray(after.depth_m, np.float32)
    # the tolerance and the depth edges are worked out only where the depth moved beyond the floor:
    # a goal waits for this test, and the whole frames' took 0.6 s of its first look at load 29
    moved = (d0 > 0) & (d1 > 0) & (np.abs(d0 - d1) > CHANGE_FLOOR_M)
    near = np.minimum(d0[moved], d1[moved])
    moved[moved] = np.abs(d0[moved] - d1[moved]) > range_tolerance_m(near, sigmas=CHANGE_SIGMAS, floor_m=CHANGE_FLOOR_M)
    # a depth edge in either frame is no change
    moved &= ~depth_edge_pixels(d0, only=moved)
    moved &= ~depth_edge_pixels(d1, only=moved)
    return int(ndimage.binary_opening(moved, structure=np.ones((3, 3), bool)).sum())
