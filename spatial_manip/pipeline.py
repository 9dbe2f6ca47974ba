"""One instruction, end to end, without ROS: perceive -> reason -> grasp -> move -> verify,
with reflection and retries (ESPIRE Algorithms 2b/3b), feedback at every stage, cancel at any
stage, and a trace. The stages themselves are `Stages`: `spatial_manip.agent.Agent` makes the
decisions over I/O ports (planner_node's are ROS; a test's can be a MuJoCo world in process);
the planner node maps `Outcome` onto the action result.

What passes from stage to stage is a frozen record, as MoveIt Task Constructor passes typed
solutions between named stages: a look, `Perceived` (the observation and the scene in it) -> a `Decision` (what to pick and where to put
it, with what the words and earlier attempts leave for later stages) -> the proposed grasps (a
`GraspGroup`, base frame) -> `Grasped` -> a fitted `SetDown` -> `Placed` -> `Verified`. A retry
learns from the records of the attempt that failed (its decision, the set-down it tried)."""
from __future__ import annotations

import enum
import threading
import time
import unicodedata
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass, field, replace
from typing import Callable, Protocol

import numpy as np

from spatial_manip.errors import (CanceledError, ErrorCode, GraspFailedError, InvalidGoalError, SpatialManipError)
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.perception.look_ahead import LookAhead
from spatial_manip.observation import RGBDObservation
from spatial_manip.overlay import grasp_summary, grasps_to_draw, scene_overlay
from spatial_manip.reasoning.reflection import PUSHED_MAX_M, Reflection, found_now, reflect
from spatial_manip.scene import Region, Scene
from spatial_manip.task_kinds import TASK_KINDS
from spatial_manip.trace import Trace

MAX_INSTRUCTION_CHARS = 1000
MAX_ATTEMPTS_LIMIT = 10
# Failures worth another attempt after reflection; the rest cannot change by trying again.
RETRYABLE = {ErrorCode.GRASP_FAILED, ErrorCode.MOTION_FAILED, ErrorCode.VERIFY_FAILED}
# Failures to pick one object that another the instruction allows ("a book within 50 cm") may
# not share; at most MAX_PICK_CANDIDATES objects are tried within one attempt.
PICK_FALLBACK = {ErrorCode.GRASP_FAILED, ErrorCode.MOTION_FAILED, ErrorCode.UNREACHABLE}
MAX_PICK_CANDIDATES = 3
# A retry's refusals of the world the failed attempt left (the words name nothing there now, or
# several things, or no place there can be made): the goal reports the failure it retried (`_failure`).
RETRY_REFUSALS = {ErrorCode.TARGET_NOT_FOUND, ErrorCode.AMBIGUOUS, ErrorCode.NOT_UNDERSTOOD, ErrorCode.UNREACHABLE}
# A grasp that reached the object and left nothing held (`TouchedGraspError`: the fingers closed on
# nothing, it slipped out in the lift, the arm was stopped by contact on its way) may have pushed or
# dropped it: the pick looks again (the target found again near where it stood, new grasps proposed
# on the new look) instead of trying the rest of a list proposed for a table that may be gone, at
# most this many times a goal (each look costs a home motion, a look and new grasps: 5-20 s under
# load, and the bench gives a goal 120 s); after that a touch ends the attempt and the goal's
# reflection (another attempt, its own look) takes over.
MAX_RELOOKS = 2


class TouchedGraspError(GraspFailedError):
    """A grasp that reached its object and failed (`tcp_pose`: its 4x4 TCP pose, base frame):
    what it touched may have moved, so the grasps proposed on the look before are stale."""

    def __init__(self, message: str, tcp_pose: np.ndarray):
        super().__init__(message)
        self.tcp_pose = np.asarray(tcp_pose, float)


class Stage(str, enum.Enum):
    PERCEIVING = "perceiving"
    REASONING = "reasoning"
    GRASPING = "grasping"
    MOVING = "moving"
    VERIFYING = "verifying"
    REFLECTING = "reflecting"


# Progress at the start of each stage within one attempt (0..1).
STAGE_PROGRESS = {Stage.PERCEIVING: 0.0, Stage.REASONING: 0.15, Stage.GRASPING: 0.3,
                  Stage.MOVING: 0.45, Stage.VERIFYING: 0.85, Stage.REFLECTING: 0.95}


@dataclass(frozen=True, kw_only=True)
class GoalRequest:
    instruction: str
    task_kind: str = "auto"
    dry_run: bool = False
    max_attempts: int = 1


def validate_goal(instruction, task_kind, dry_run=False, max_attempts=0, *, default_attempts: int = 1) -> GoalRequest:
    """A clean GoalRequest or InvalidGoalError saying exactly what is wrong. A field left at
    its message default means the configured default: `max_attempts` 0 is `default_attempts`
    (a `ros2 action send_goal` that sets only the instruction leaves it at 0)."""
    if max_attempts == 0 and not isinstance(max_attempts, bool):
        max_attempts = default_attempts
    if isinstance(task_kind, int):
        if not 0 <= task_kind < len(TASK_KINDS):
            raise InvalidGoalError(f"unknown task kind {task_kind}; expected 0..{len(TASK_KINDS) - 1} "
                                   f"({', '.join(TASK_KINDS)})")
        task_kind = TASK_KINDS[task_kind]
    if task_kind not in TASK_KINDS:
        raise InvalidGoalError(f"unknown task kind {task_kind!r}; expected one of {TASK_KINDS}")
    if not isinstance(instruction, str):
        raise InvalidGoalError("the instruction must be text")
    try:
        instruction.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidGoalError("the instruction is not valid UTF-8 (it has unpaired surrogates)") from e
    bad = [c for c in instruction if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") and c not in "\t\n"]
    if bad:
        raise InvalidGoalError(f"the instruction contains {len(bad)} control or invalid characters "
                               f"(first: U+{ord(bad[0]):04X}); send plain text")
    text = " ".join(instruction.split())
    if not text:
        raise InvalidGoalError("the instruction is empty; say what to pick or place")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise InvalidGoalError(f"the instruction has {len(text)} characters; the limit is {MAX_INSTRUCTION_CHARS}")
    if not isinstance(max_attempts, int) or not 1 <= max_attempts <= MAX_ATTEMPTS_LIMIT:
        raise InvalidGoalError(f"max_attempts must be between 1 and {MAX_ATTEMPTS_LIMIT} (or 0 for the configured "
                               f"default), got {max_attempts}")
    return GoalRequest(instruction=text, task_kind=task_kind, dry_run=bool(dry_run), max_attempts=max_attempts)


@dataclass(frozen=True)
class Perceived:
    """One look: the observation as the camera gave it and the scene perceived in it (base frame)."""

    observation: RGBDObservation
    scene: Scene
    timing_s: dict = field(default_factory=dict)   # perceiving's parts, seconds (for the trace; issue 42)


@dataclass(frozen=True)
class Decision:
    """What the reasoning stage decided, in the base frame."""

    action: str                                   # "pick" | "place" | "pick_and_place"
    target_ids: tuple[str, ...] = ()
    pick_id: str | None = None                    # object to pick, if any
    pick_alternatives: tuple[str, ...] = ()       # others the words allow, in order
    place_pose: np.ndarray | None = None          # 4x4 pose of the placed object, if any
    program: str = ""
    notes: tuple[str, ...] = ()                   # how the words were read (frames, spellings)
    scene: Scene | None = None                    # the look it was planned on
    pick_targets: tuple[str, ...] = ()            # every object the words allow picking (for reflection)
    avoid_place_poses: tuple[np.ndarray, ...] = ()   # set-downs that failed before: their rotations go last
    failed_grasps: tuple[np.ndarray, ...] = ()    # 4x4 TCP poses that reached the object and failed: not tried again
    any_pose_class: bool = False                  # no pose word: the set-down may change the pose class
    may_regrasp: bool = True                      # a held object's place may set it down and grasp it again (once a goal)


@dataclass(frozen=True, kw_only=True)
class Grasped:
    """What the pick stage left in the gripper, and how."""

    object_id: str
    tcp_pose: np.ndarray                  # 4x4 TCP pose of the grasp that held, base frame
    score: float
    width: float                          # the grasp's jaw opening, metres
    tcp_path: tuple = ()                  # the TCP's planned way, base frame ((x, y, z), ...)
    place_pose: np.ndarray | None = None  # a pick-and-place: the set-down its grasps were chosen for
                                          # (the planned one, or one further along its slot)

    def trace_fields(self) -> dict:
        return {"grasp_pose": self.tcp_pose, "score": self.score, "width": self.width,
                "tcp_path": [list(p) for p in self.tcp_path]}


@dataclass(frozen=True, kw_only=True)
class Regrasp:
    """Before a set-down the held object cannot make as it is held: set it down where it can
    go as held (`aside`), open, and grasp it again at `tcp_pose` (`T_object_tcp`, the same grasp
    slid `slid_m` out along its approach), from which the set-down can be made."""

    reason: str                           # why the set-down cannot be made as held
    aside: "SetDown"                      # where it is set down first
    tcp_pose: np.ndarray                  # 4x4 TCP pose of the new grasp there, base frame
    T_object_tcp: np.ndarray              # the new grasp, inv(T_obj) @ T_tcp
    width_m: float                        # the jaws' opening on it
    slid_m: float

    def trace_fields(self) -> dict:
        return {"reason": self.reason, "aside_pose": self.aside.object_pose, "aside_tcp": self.aside.tcp_pose,
                "grasp_pose": self.tcp_pose, "slid_m": round(self.slid_m, 4)}


@dataclass(frozen=True, kw_only=True)
class SetDown:
    """How the place stage will set the held object down, fitted before the arm moves (a retry
    sets it down differently: reflection gets `object_pose`)."""

    object_id: str | None
    object_pose: np.ndarray               # 4x4 pose of the object set down, base frame
    tcp_pose: np.ndarray                  # 4x4 TCP pose there
    size: np.ndarray | None               # the held object's box size
    slot: Region | None = None            # the shelf slot it goes into, if any
    approach_direction: np.ndarray | None = None   # the last linear move's direction (None: TCP +z)
    approach_distance_m: float = 0.0      # 0: the arm server's default
    regrasp: Regrasp | None = None        # set down elsewhere and grasped again first (agent.place makes it)
    note: str = ""                        # what the result says of it (set down in another pose class than planned)


@dataclass(frozen=True, kw_only=True)
class Placed:
    """Where the place stage set the object down, for verification."""

    set_down: SetDown
    tcp_path: tuple = ()

    def trace_fields(self) -> dict:
        return {"placed_id": self.set_down.object_id, "tcp_pose": self.set_down.tcp_pose,
                "tcp_path": [list(p) for p in self.tcp_path]}


@dataclass(frozen=True)
class Verified:
    """The verification stage's verdict: `category` names a failure (e.g. "fell", "not_in_region")."""

    success: bool
    category: str = ""
    message: str = ""


@dataclass
class Outcome:
    success: bool
    error_code: str = ""
    message: str = ""
    target_ids: list[str] = field(default_factory=list)
    target_pose: np.ndarray | None = None         # 4x4, base frame
    grasp: np.ndarray | None = None               # 4x4 TCP grasp pose, base frame
    grasp_score: float = 0.0
    grasp_width: float = 0.0
    trace_path: str = ""
    attempts: int = 0


class Stages(Protocol):
    """What the pipeline drives each attempt (spatial_manip.agent.Agent), in this order. Each may
    raise a SpatialManipError."""

    def clear_view(self, cancel: threading.Event) -> None: ...     # before a look (may do nothing)
    def observe(self, cancel: threading.Event, arrived_after_s: float | None = None) -> RGBDObservation: ...
    # optional: after a motion, the first frame exposed after the arm stopped (None: cannot tell)
    # def observe_after_arm_stop(self, cancel: threading.Event) -> RGBDObservation | None: ...
    def perceive(self, obs: RGBDObservation) -> Perceived: ...
    def reason(self, seen: Perceived, goal: GoalRequest, reflection: Reflection | None, trace: Trace) -> Decision: ...
    # a dry run: refuse a place the arm could not make, as a real run finds before the arm moves
    def check_place(self, decision: Decision, seen: Perceived, cancel: threading.Event) -> None: ...
    def propose_grasps(self, decision: Decision, seen: Perceived) -> GraspGroup: ...
    def pick(self, grasps: GraspGroup, decision: Decision, cancel: threading.Event) -> Grasped: ...
    def set_down(self, decision: Decision, grasped: Grasped | None, cancel: threading.Event) -> SetDown: ...
    def place(self, decision: Decision, set_down: SetDown, cancel: threading.Event) -> Placed: ...
    def verify(self, decision: Decision, placed: Placed | None, goal: GoalRequest, after: Scene | None) -> Verified: ...
    # a set-down confirmed on a frame's depth alone, before perceiving it (None: perceive and verify)
    def verify_on_frame(self, placed: Placed | None, obs: RGBDObservation) -> Verified | None: ...
    def stop_motion(self) -> None: ...
    def held_id(self) -> str | None: ...       # the object in the gripper now, if any


FeedbackFn = Callable[[Stage, str, float, int], None]


class InstructionPipeline:
    def __init__(self, agent: Stages, *, feedback: FeedbackFn | None = None, trace_dir: str | None = None,
                 looks: LookAhead | None = None):
        """`looks`: where a goal's look comes from (planner_node's reuses a fresh one; the default
        takes a new look for every goal)."""
        self.agent = agent
        self.looks = looks or LookAhead(agent)
        self.feedback = feedback or (lambda *a: None)
        self.trace_dir = trace_dir
        # the current attempt's records, for reflection: its decision (with the object picked
        # last) and the set-down it tried
        self._decision: Decision | None = None
        self._set_down: SetDown | None = None
        self._moved = False       # whether the current attempt got as far as moving the arm
        # the trace's images are drawn and written on a thread of their own, in order, beside the
        # goal's next stages: before the arm's first motion they cost 0.15-0.45 s a goal under load
        # (issue 42); the result does not wait for them either: trace.json is written again once they are
        self._drawing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trace_images")
        self._drawn: list[Future] = []
        self._trace: Trace | None = None      # the running goal's, which its images go to
        self._seen_last: Perceived | None = None   # the running pick's latest look (a pick may look again)
        self._relooks_left = MAX_RELOOKS           # the running goal's
        self._regrasped = False                    # the running goal set its held object down to grasp it again
        self._at: tuple[Stage, float, int] | None = None   # the running goal's stage, progress and attempt

    def run(self, goal: GoalRequest, cancel: threading.Event) -> Outcome:
        trace = self._trace = Trace(self.trace_dir, goal.__dict__)
        outcome = Outcome(success=False, attempts=0)
        reflection: Reflection | None = None
        self._relooks_left = MAX_RELOOKS
        self._regrasped = False
        try:
            for attempt in range(1, goal.max_attempts + 1):
                outcome.attempts = attempt
                try:
                    self._attempt(goal, attempt, cancel, trace, reflection, outcome)
                    outcome.success, outcome.error_code = True, ""
                    break
                except SpatialManipError as e:
                    outcome.error_code, outcome.message = _failure(e, attempt, reflection, self._moved)
                    trace.event("error", code=e.code.value, message=e.message, attempt=attempt)
                    if e.code not in RETRYABLE or not getattr(e, "retryable", True) or attempt == goal.max_attempts \
                            or cancel.is_set():
                        break
                    reflection = self._reflect(goal, attempt, e, trace, reflection)
        except Exception as e:  # a bug must still end the goal cleanly, and say where to look
            outcome.success, outcome.error_code = False, ErrorCode.INTERNAL.value
            outcome.message = f"internal error: {type(e).__name__}: {e}"
            trace.event("error", code="INTERNAL", message=outcome.message)
            self._safe_stop()
        finally:   # whatever ends the goal (a KeyboardInterrupt too), no stage runs any more
            self._at = None
        if cancel.is_set() and not outcome.success and outcome.error_code != ErrorCode.CANCELED.value:
            # a failure while the cancel was on its way is the cancel; a CanceledError keeps its own
            # words, which say how the stop went (an arm server killed mid-motion never confirms
            # it, and was reported "the arm was stopped")
            outcome.error_code, outcome.message = ErrorCode.CANCELED.value, "the goal was canceled; the arm was told to stop"
        held = self._held_after(outcome)
        if held:
            outcome.message += (f"; {held} is still in the gripper: send a place instruction (e.g. 'place it on the "
                                "table') to set it down")
        # the result does not wait for images still being drawn (the overlay of the pick just made
        # held it 0.25-0.5 s after the arm stopped, issue 42): trace.json is written now and once more
        # when they are
        drawing, self._drawn = [d for d in self._drawn if not d.done()], []
        outcome.trace_path = trace.finish({k: v for k, v in outcome.__dict__.items() if k != "trace_path"},
                                          images_pending=bool(drawing))
        if drawing:
            self._drawing.submit(trace.images_written)
        return outcome

    def note(self, detail: str) -> None:
        """Tell the running goal's client (feedback, at the stage under way) and its trace something
        a stage's I/O met (a camera slow to deliver: the look waits once more); nothing when no goal runs."""
        at, trace = self._at, self._trace
        if at is None:
            return
        stage, progress, attempt = at
        trace.event("note", stage=stage.value, detail=detail)
        self.feedback(stage, detail, progress, attempt)

    def wait_drawn(self, timeout_s: float | None = None) -> None:
        """Wait until the last goal's trace images are written and its trace.json lists them.
        Raises the built-in TimeoutError when `timeout_s` runs out (on Python 3.10 the future's own
        is another class)."""
        try:
            self._drawing.submit(lambda: None).result(timeout=timeout_s)     # one thread, in order: all before it are done
        except FutureTimeoutError as e:
            raise TimeoutError(f"trace images still being drawn after {timeout_s} s") from e

    # --- one attempt --------------------------------------------------------------------------
    def _enter(self, stage: Stage, detail: str, attempt: int, goal: GoalRequest, trace: Trace,
               cancel: threading.Event, *, progress_of: Stage | None = None) -> None:
        """`progress_of`: the stage whose progress to report (a pick's look again is reported at
        moving's, so progress never goes back within an attempt)."""
        if cancel.is_set():
            self._safe_stop()
            raise CanceledError("the goal was canceled")
        trace.stage(stage.value, detail)
        self._moved = self._moved or stage is Stage.MOVING
        span = 1.0 / goal.max_attempts
        at = STAGE_PROGRESS[progress_of or stage]
        progress = min(1.0, (attempt - 1 + at) * span)
        self._at = (stage, progress, attempt)
        self.feedback(stage, detail, progress, attempt)

    def _attempt(self, goal, attempt, cancel, trace, reflection, outcome) -> None:
        self._decision = self._set_down = None
        self._moved = False
        self._enter(Stage.PERCEIVING, "waiting for a synchronized RGB-D observation", attempt, goal, trace, cancel)
        seen = self._look(cancel, trace, goal, clear=not goal.dry_run)
        self._draw(trace.image, "observation", seen.observation.rgb, "colour image the goal was planned on")
        scene = seen.scene
        trace.event("scene", objects=[o.to_dict() for o in scene.objects],
                    regions=[r.to_dict() for r in scene.regions])

        self._enter(Stage.REASONING, f"interpreting: {goal.instruction!r}", attempt, goal, trace, cancel)
        decision = self.agent.reason(seen, goal, reflection, _DrawnTrace(trace, self._draw))
        self._decision = decision
        outcome.target_ids = list(decision.target_ids)
        outcome.target_pose = decision.place_pose if decision.place_pose is not None else \
            _object_pose(scene, decision.pick_id)
        trace.event("decision", action=decision.action, targets=decision.target_ids,
                    pick_id=decision.pick_id, place_pose=decision.place_pose, program=decision.program,
                    notes=decision.notes)
        self._overlay(trace, "overlay_decision", f"attempt {attempt}: perceived boxes (cyan), targets (magenta), "
                      "place pose (axes, lime box)", seen, decision)
        if goal.dry_run:     # what a real run checks before the arm moves, a dry run checks too
            self.agent.check_place(decision, seen, cancel)
            outcome.message = _with_notes(f"dry run: would {decision.action} "
                                          f"{', '.join(decision.target_ids) or 'at the computed pose'}", decision)
            return

        grasped = placed = None
        if decision.pick_id is not None:
            decision, grasped = self._pick_one_of(decision, seen, attempt, goal, trace, cancel)
            outcome.target_pose = _object_pose(decision.scene or scene, decision.pick_id)
            outcome.grasp, outcome.grasp_score, outcome.grasp_width = grasped.tcp_pose, grasped.score, grasped.width
            trace.event("picked", **grasped.trace_fields())
        if decision.place_pose is not None:
            self._enter(Stage.MOVING, "placing", attempt, goal, trace, cancel)
            placed = self._guarded(lambda: self._place(decision, grasped, cancel), cancel)
            trace.event("placed", **placed.trace_fields())
            note = getattr(self._set_down, "note", "")
            if note:       # the result says it, as it says how the words were read
                decision = replace(decision, notes=decision.notes + (note,))

        self._enter(Stage.VERIFYING, "checking the result against the instruction", attempt, goal, trace, cancel)
        after = verified = None
        if placed is not None:    # a new look at where the object was set down
            seen_after, verified = self._look_after(placed, decision, cancel, trace, goal)
            after = seen_after.scene
            self._overlay(trace, "overlay_after", f"attempt {attempt}: after placing; the planned place pose (axes, "
                          "lime box) and the TCP's planned way there (yellow) over what the camera sees now"
                          + ("" if verified is None else " (boxes: the look before placing)"),
                          seen_after, decision, path=placed.tcp_path)
        verified = verified or self.agent.verify(decision, placed, goal, after)
        trace.event("verified", success=verified.success, category=verified.category, message=verified.message)
        if not verified.success:
            raise SpatialManipError(f"verification failed ({verified.category}): {verified.message}",
                                    ErrorCode.VERIFY_FAILED)
        outcome.message = _with_notes(verified.message or f"done: {decision.action} {', '.join(decision.target_ids)}",
                                      decision)

    def _place(self, decision: Decision, grasped: Grasped | None, cancel: threading.Event) -> Placed:
        # one regrasp a goal: a retry after one places with the grasp it made, or fails
        decision = replace(decision, may_regrasp=decision.may_regrasp and not self._regrasped)
        self._set_down = self.agent.set_down(decision, grasped, cancel)
        regrasp = getattr(self._set_down, "regrasp", None)
        if regrasp is not None:
            self._regrasped = True
            if self._trace is not None:
                self._trace.event("regrasp", **regrasp.trace_fields())
        return self.agent.place(decision, self._set_down, cancel)

    def _pick_one_of(self, decision, seen, attempt, goal, trace, cancel) -> tuple[Decision, Grasped]:
        """Pick `decision.pick_id`; when none of its grasps holds and the words allow other
        objects (`pick_alternatives`), try those in order. Returns the decision with `pick_id`
        on the one held (and, when the pick looked again, `scene` that look and `pick_id` the
        object's id on it)."""
        candidates = ([decision.pick_id] + list(decision.pick_alternatives))[:MAX_PICK_CANDIDATES]
        self._seen_last = seen
        for k, pick_id in enumerate(candidates):
            # reflection keeps the first look's ids and scene (where the words' objects stood untouched)
            self._decision = replace(decision, pick_id=pick_id)
            try:
                on = self._decision if self._seen_last is seen else _found_again(self._decision, self._seen_last.scene)
                return self._pick(on, self._seen_last, attempt, goal, trace, cancel,
                                  overlay="overlay_grasp" if k == 0 else f"overlay_grasp_{k + 1}")
            except SpatialManipError as e:
                if e.code not in PICK_FALLBACK or not getattr(e, "retryable", True) or k + 1 == len(candidates) \
                        or cancel.is_set():
                    raise
                trace.event("pick_fallback", failed=pick_id, code=e.code.value, reason=e.message,
                            next=candidates[k + 1])

    def _pick(self, decision, seen, attempt, goal, trace, cancel, overlay: str) -> tuple[Decision, Grasped]:
        """Propose grasps of `decision.pick_id` and pick with them; after a grasp that reached the
        object and left nothing held (TouchedGraspError) look again, find the object near where it
        stood and propose new grasps, at most MAX_RELOOKS times a goal. Returns the decision the
        pick held on (its scene and pick_id the last look's) and the grasp."""
        self._enter(Stage.GRASPING, f"proposing grasps for {decision.pick_id}", attempt, goal, trace, cancel)
        grasps = self._proposed(decision, seen, trace)
        self._enter(Stage.MOVING, f"picking {decision.pick_id}", attempt, goal, trace, cancel)
        picked = None
        try:
            while True:
                try:
                    picked = self._guarded(lambda: self.agent.pick(grasps, decision, cancel), cancel)
                    return decision, picked
                except TouchedGraspError as e:
                    if self._relooks_left <= 0 or cancel.is_set():
                        raise
                    self._relooks_left -= 1
                    decision, seen = self._look_again(decision, e, MAX_RELOOKS - self._relooks_left, attempt, goal,
                                                      trace, cancel)
                    self._enter(Stage.GRASPING, f"proposing grasps for {decision.pick_id} on the new look", attempt,
                                goal, trace, cancel, progress_of=Stage.MOVING)
                    grasps = self._proposed(decision, seen, trace)
                    self._enter(Stage.MOVING, f"picking {decision.pick_id}", attempt, goal, trace, cancel)
        finally:  # drawn whether the pick worked or not: a failed grasp is what one debugs
            shown, chosen = grasps_to_draw(grasps.to_dicts(), picked.trace_fields() if picked is not None else None)
            self._overlay(trace, overlay, f"attempt {attempt}: best proposed grasps of {decision.pick_id} "
                          "(grey), enlarged on the right; " +
                          ("the grasp that held (orange) and the TCP's planned way to it and up (yellow)"
                           if chosen is not None else "the pick failed: none held"),
                          seen, decision, grasps=shown, chosen=chosen,
                          path=picked.tcp_path if picked is not None else ())

    def _proposed(self, decision: Decision, seen: Perceived, trace: Trace) -> GraspGroup:
        grasps = self.agent.propose_grasps(decision, seen)
        trace.event("grasps", object_id=decision.pick_id, count=len(grasps), top=grasp_summary(grasps.to_dicts()))
        return grasps

    def _look_again(self, decision: Decision, error: TouchedGraspError, n: int, attempt: int, goal: GoalRequest,
                    trace: Trace, cancel: threading.Event) -> tuple[Decision, Perceived]:
        """A new look after a grasp of `decision.pick_id` that touched it and failed (`error`):
        the decision moved onto it (`_found_again`), the failed grasp's pose not to be tried again.
        GraspFailedError when nothing of its kind is near where it stood."""
        trace.event("relook", object_id=decision.pick_id, look=n, max_looks=MAX_RELOOKS, reason=error.message,
                    failed_grasp=error.tcp_pose)
        self._enter(Stage.PERCEIVING, f"a grasp reached {decision.pick_id} and nothing is held: looking again "
                    f"({n} of {MAX_RELOOKS}); it may have moved", attempt, goal, trace, cancel, progress_of=Stage.MOVING)
        seen = self._seen_last = self._look(cancel, trace, goal, clear=True)
        was = decision.scene.get(decision.pick_id) if decision.scene is not None else None
        try:
            found = _found_again(replace(decision, failed_grasps=decision.failed_grasps + (error.tcp_pose,)),
                                 seen.scene)
        except GraspFailedError as e:
            trace.event("relook_found", object_id=decision.pick_id, found=None, reason=e.message)
            raise GraspFailedError(f"{error.message}; then {e.message}") from e
        now = found.scene.get(found.pick_id)
        trace.event("relook_found", object_id=decision.pick_id, found=found.pick_id, center=now.center,
                    moved_m=None if was is None else round(float(np.linalg.norm(now.center - was.center)), 4))
        return found, seen

    def _look(self, cancel: threading.Event, trace: Trace, goal: GoalRequest, *, clear: bool) -> Perceived:
        """A look at the table, the arm first moved out of the camera's view when `clear`: the
        newest look when it is still fresh (the arm did not move), else a new one. The trace says
        which, its age, and how long homing and looking took."""
        marks = {}

        def home():
            marks["home"] = time.monotonic()
            if clear:
                self.agent.clear_view(cancel)
            marks["homed"] = time.monotonic()

        look = self.looks.for_goal(cancel, goal.instruction, prepare=home)
        carry = getattr(self.agent, "carry_note", None) if clear else None    # holding: carried, or why not
        trace.event("look", **look.trace_fields(), home_s=round(marks["homed"] - marks["home"], 3),
                    look_s=round(time.monotonic() - marks["homed"], 3), **({"carry": carry} if carry else {}),
                    **({} if look.reused else {"perceive_s": look.seen.timing_s}))
        return look.seen

    def _look_after(self, placed: Placed, decision: Decision, cancel: threading.Event, trace: Trace,
                    goal: GoalRequest) -> tuple[Perceived, Verified | None]:
        """After a set-down, the arm out of the view: the first fresh frame confirms the place by
        its depth alone when it can (the result then follows the arm's stop at once, issue 42),
        else a full look for `agent.verify`. The trace says which."""
        t0 = time.monotonic()
        self.agent.clear_view(cancel)
        t1 = time.monotonic()
        # the first frame stamped after the arm's last motion, as the joint states' stamps tell: one
        # already there serves. Where the stamps cannot tell, a frame already there serves when it came
        # EXPOSURE_MARGIN_S after the arm last moved: the arm server answers a motion some time after
        # the arm stops, and waiting for the next frame cost up to a camera period and a render more
        # (0.5-1.5 s under load)
        after_stop = getattr(self.agent, "observe_after_arm_stop", None)     # optional: an agent without it judges by arrival
        obs, by = (after_stop(cancel) if after_stop is not None else None), "stamp"
        if obs is None:
            earliest, by = self.looks.earliest_frame_s(), "arrival"
            obs = self.agent.observe(cancel) if earliest is None else \
                self.agent.observe(cancel, arrived_after_s=earliest)
        confirmed = self.agent.verify_on_frame(placed, obs)
        if confirmed is None:
            return self._look(cancel, trace, goal, clear=False), None
        look_s = round(time.monotonic() - t1, 3)
        trace.event("look", reused=False, age_s=look_s, reason=f"the set-down answered on the first fresh frame "
                    f"(by its {by}), not perceived", home_s=round(t1 - t0, 3), look_s=look_s)
        return Perceived(observation=obs, scene=decision.scene), confirmed

    def _draw(self, fn, *args, **kwargs) -> None:
        """Run `fn` (an image for `self._trace`) on the drawing thread; what it raises is noted in
        that trace (an image is for people: drawing it never fails the goal)."""
        trace = self._trace

        def drawn():
            try:
                fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001
                trace.event("image_error", message=f"{type(e).__name__}: {e}")

        self._drawn.append(self._drawing.submit(drawn))

    def _overlay(self, trace: Trace, name: str, caption: str, seen: Perceived, decision, grasps=(), chosen=None,
                 path=()) -> None:
        """Save the scene and decision drawn on the observation beside the trace (on the drawing thread)."""
        if trace.dir is not None:
            self._draw(self._draw_overlay, trace, name, caption, seen, decision, grasps, chosen, path)

    @staticmethod
    def _draw_overlay(trace: Trace, name: str, caption: str, seen: Perceived, decision, grasps, chosen, path) -> None:
        try:
            rgb = scene_overlay(seen.observation, seen.scene, target_ids=decision.target_ids, pick_id=decision.pick_id,
                                place_pose=decision.place_pose, grasps=grasps, chosen=chosen, path=path)
            trace.image(name, rgb, caption)
        except Exception as e:  # an overlay is for people; drawing it must never fail the goal
            trace.event("overlay_error", image=name, message=f"{type(e).__name__}: {e}")

    def _guarded(self, fn, cancel: threading.Event):
        """Run a motion; if it fails or is canceled, make sure the arm is stopped."""
        try:
            result = fn()
        except BaseException:
            self._safe_stop()
            raise
        if cancel.is_set():
            self._safe_stop()
            raise CanceledError("the goal was canceled during motion")
        return result

    def _held_after(self, outcome: Outcome) -> str | None:
        """What a failed goal left in the gripper (a user must know before the next goal)."""
        if outcome.success:
            return None
        try:
            return self.agent.held_id()
        except Exception:  # only for the message; never fail the result over it
            return None

    def _safe_stop(self) -> None:
        try:
            self.agent.stop_motion()
        except Exception:  # stopping is best effort; the arm node has its own safety
            pass

    def _reflect(self, goal, attempt, error: SpatialManipError, trace, previous: Reflection | None) -> Reflection:
        """What the next attempt redoes: the place if the object is still held, else the pick."""
        d, tried = self._decision, self._set_down
        reflection = reflect(error, attempt=attempt, holding=self.agent.held_id(),
                             pick_id=d.pick_id if d else None, pick_targets=d.pick_targets if d else (),
                             scene=d.scene if d else None,
                             tried_place_pose=tried.object_pose if tried else None, previous=previous)
        self.feedback(Stage.REFLECTING, f"attempt {attempt} failed ({error.code.value}): {reflection.summary}",
                      min(1.0, (attempt - 1 + STAGE_PROGRESS[Stage.REFLECTING]) / goal.max_attempts), attempt)
        trace.stage(Stage.REFLECTING.value, reflection.summary)
        trace.event("reflection", **reflection.to_dict())
        return reflection


class _DrawnTrace:
    """The goal's trace as a stage sees it: the images it adds go to the pipeline's drawing thread,
    in order with the pipeline's own (two threads adding images to one trace would race for a
    file name, and the viewer shows them in order)."""

    def __init__(self, trace: Trace, draw):
        self._trace, self._draw = trace, draw

    def image(self, name: str, rgb: np.ndarray, caption: str = "") -> None:
        self._draw(self._trace.image, name, np.array(rgb, copy=True), caption)

    def __getattr__(self, attr):
        return getattr(self._trace, attr)


def _failure(error: SpatialManipError, attempt: int, reflection: Reflection | None, moved: bool) -> tuple[str, str]:
    """The goal's error code and message when attempt `attempt` failed with `error`. A retry that
    refused before moving anything (`RETRY_REFUSALS`: its reading of the new look refused, the can the
    failed place tipped over is seen as a jar, so "the can" names nothing) did not go wrong itself:
    what went wrong is the failure it retried (`reflection`'s), which keeps its code, and the
    message adds why the retry stopped (objects-75-00004 reported NOT_UNDERSTOOD for a place whose
    can had tipped over)."""
    if reflection is None or moved or error.code not in RETRY_REFUSALS:
        return error.code.value, error.message
    return reflection.error_code, (f"{reflection.reason}; attempt {attempt}, the retry, stopped before moving "
                                   f"anything: {error.code.value}: {error.message}")


def _found_again(decision: Decision, scene: Scene) -> Decision:
    """`decision` moved onto a new look (`scene`) of a table a grasp touched: its `pick_id` the id
    there of the object of its kind nearest to where `decision.scene` showed it, within
    PUSHED_MAX_M (reasoning.reflection: how far a failed grasp may push or tip what it touched).
    GraspFailedError when there is none (it fell off, or is no longer seen as such)."""
    was = decision.scene.get(decision.pick_id) if decision.scene is not None and \
        decision.pick_id in decision.scene.ids() else None
    now = None if was is None else found_now(scene, was.id, was.center, was.category)
    if now is None or now not in scene.ids():
        kind = was.category if was is not None else "object"
        raise GraspFailedError(f"looking again, no {kind} was seen within {PUSHED_MAX_M:g} m of where "
                               f"{decision.pick_id} stood: it may have fallen or be seen as something else now")
    return replace(decision, pick_id=now, scene=scene)


def _with_notes(message: str, decision: Decision) -> str:
    return f"{message} ({'; '.join(decision.notes)})" if decision.notes else message


def _object_pose(scene: Scene, obj_id: str | None) -> np.ndarray | None:
    if obj_id is None:
        return None
    try:
        o = scene.get(obj_id)
    except KeyError:
        return None
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = o.rotation, o.center
    return T
