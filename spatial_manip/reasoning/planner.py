"""The planner protocol: scene + instruction -> what to pick or where to place.

One code path for `spatial-manip plan` and the planner node. Backends (registry role
"planner"): `program` (deterministic parser + spatial programs, the default), `openai` (any
OpenAI-compatible chat server with tool calling), `transformers` (a local VLM).

    planner = make_planner("program")
    result = planner.plan(scene, "take the second leftmost book lying flat")
    print(result.to_json())    # {"action", "targets", "place_pose", "program", "error"}
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from spatial_manip.errors import BackendUnavailableError, ErrorCode, SpatialManipError
from spatial_manip.geometry.reach import Reach
from spatial_manip.registry import make, register_role
from spatial_manip.reasoning.program import (PERCEIVED_DIRECTION_SLACK_DEG, PERCEIVED_FACE_ERROR_M, PERCEIVED_TILT_SLACK_DEG, PlacePose,
                                             ProgramResult, assume_visible_fronts, execute)
from spatial_manip.scene import Scene
from spatial_manip.task_kinds import PLANNER_TASK_KINDS
from spatial_manip.reasoning import compound
from spatial_manip.reasoning.parser import FRAME_POLICIES, InstructionParser, check_target_reference
from spatial_manip.reasoning.unsure_names import check_unsure_names

BACKENDS = {
    "program": "spatial_manip.reasoning.planner:ProgramPlanner",
    "openai": "spatial_manip.reasoning.openai_backend:OpenAIPlanner",
    "transformers": "spatial_manip.reasoning.transformers_backend:TransformersPlanner",
}
register_role("planner", BACKENDS)



@dataclass
class PlanResult:
    action: str | None                      # "pick" | "place" | None when planning failed
    targets: list[str] = field(default_factory=list)
    place_pose: PlacePose | None = None
    program: str | None = None
    error: dict | None = None               # {"code", "message"} when planning failed
    trace: list[dict] = field(default_factory=list)
    elapsed_s: float = 0.0
    # What a user should be told even when planning succeeds: the frame each left/right was read
    # in and why (issue 20), words read as others ("read 'leftmots' as 'leftmost'", issue 22).
    notes: list[str] = field(default_factory=list)
    # A pick and a place in one instruction: the two results, in order (action "pick_and_place").
    steps: list["PlanResult"] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def message(self) -> str:
        """One line for a result message: the notes, or the error."""
        if self.error is not None:
            return f"{self.error['code']}: {self.error['message']}"
        return "; ".join(self.notes)

    def to_json(self) -> dict:
        """The object `spatial-manip plan --json` prints (issue 4, plus `notes`; a pick and place
        in one instruction adds `steps`, the pick's and the place's own objects)."""
        out = {"action": self.action, "targets": list(self.targets),
               "place_pose": self.place_pose.to_dict() if self.place_pose is not None else None,
               "program": self.program, "error": self.error, "notes": list(self.notes)}
        if self.steps:
            out["steps"] = [s.to_json() for s in self.steps]
        return out

    @classmethod
    def from_program(cls, res: ProgramResult, program: str, trace: list[dict], elapsed_s: float,
                     notes: list[str] | None = None) -> "PlanResult":
        return cls(res.action, res.targets, res.place_pose, program, None, trace, elapsed_s, list(notes or []))

    @classmethod
    def failure(cls, err: SpatialManipError, *, action=None, program=None, trace=None, elapsed_s=0.0) -> "PlanResult":
        return cls(action, [], None, program, err.to_dict(), list(trace or []), elapsed_s)


@runtime_checkable
class Planner(Protocol):
    def plan(self, scene: Scene, instruction: str, *, observation: Any = None,
             task_kind: str = "auto") -> PlanResult: ...


def check_task_kind(task_kind: str) -> None:
    if task_kind not in PLANNER_TASK_KINDS:
        raise SpatialManipError(f"task_kind must be one of {PLANNER_TASK_KINDS}, got {task_kind!r}", ErrorCode.INVALID_GOAL)


@dataclass(kw_only=True)
class ProgramPlannerConfig:
    """assume_fronts: an object known to have a front that perception could not orient (no
    orientation model here) is taken to face the camera with its most directly facing side
    (program.assume_visible_fronts); off, "its own left" of such an object is INVALID_GOAL."""

    assume_fronts: bool = True
    # When the instruction names no frame and the reference's front was assumed (above): read
    # left/right in its own frame ("intrinsic", ESPIRE's reading), the camera's ("viewer"), or
    # refuse as AMBIGUOUS asking which side is meant ("ask"). The result's notes say which.
    unnamed_frame: str = "intrinsic"
    # the arm's reach rule (places it reaches are preferred): the arm the graph was started with
    # (planner_node's arm_config_file, arm_backend, ur_type); None: arm.yaml's model
    reach: Reach | None = None

    def __post_init__(self):
        if not isinstance(self.assume_fronts, bool):
            raise ValueError(f"assume_fronts must be true or false, got {self.assume_fronts!r}")
        if self.unnamed_frame not in FRAME_POLICIES:
            raise ValueError(f"unnamed_frame must be one of {', '.join(FRAME_POLICIES)}, got {self.unnamed_frame!r}")


class ProgramPlanner:
    """The embedded default: deterministic English -> spatial program -> geometry core."""

    name = "program"

    def __init__(self, **cfg):
        self.config = ProgramPlannerConfig(**cfg)

    def plan(self, scene: Scene, instruction: str, *, observation: Any = None,
             task_kind: str = "auto") -> PlanResult:
        if task_kind == "auto" and compound.is_compound(scene, instruction):
            return self._plan_compound(scene, instruction)
        return self._plan_one(scene, instruction, task_kind)

    def _plan_compound(self, scene: Scene, instruction: str) -> PlanResult:
        """A pick and a place in one instruction: both planned (compound.py), one result whose
        `steps` are the pick's and the place's results; the trace has every reading tried."""
        t0 = time.perf_counter()
        trace: list[dict] = [{"event": "instruction", "text": instruction, "task_kind": "pick_and_place"}]

        def plan_one(sc: Scene, text: str, kind: str) -> PlanResult:
            r = self._plan_one(sc, text, kind)
            trace.append({"event": "part", "action": kind, "text": text, "program": r.program, "error": r.error,
                          "steps": r.trace})
            if not r.ok:
                raise SpatialManipError(r.error["message"], r.error["code"])
            return r
        try:
            pick, place = compound.plan_pick_and_place(scene, instruction, plan_one)
        except SpatialManipError as e:
            trace.append({"event": "error", **e.to_dict()})
            return PlanResult.failure(e, action="pick_and_place", trace=trace, elapsed_s=time.perf_counter() - t0)
        return PlanResult("pick_and_place", pick.targets + place.targets, place.place_pose,
                          f"{pick.program} ; {place.program}", None, trace, time.perf_counter() - t0,
                          pick.notes + place.notes, [pick, place])

    def _plan_one(self, scene: Scene, instruction: str, task_kind: str) -> PlanResult:
        t0 = time.perf_counter()
        trace: list[dict] = [{"event": "instruction", "text": instruction, "task_kind": task_kind}]
        program_text = None
        action = None
        try:
            check_task_kind(task_kind)
            if self.config.assume_fronts:
                scene, assumed = assume_visible_fronts(scene)
                if assumed:
                    why = "no orientation model: each faces the camera with its most directly facing side"
                    trace.append({"event": "assumed_fronts", "ids": assumed, "why": why})
            parser = InstructionParser(scene, unnamed_frame=self.config.unnamed_frame)
            try:
                parsed = parser.parse(instruction, task_kind)
            finally:
                for note in parser.frame_notes:
                    trace.append({"event": "frame", **note})
            program_text = str(parsed.program)
            action = parsed.program.op
            trace.append({"event": "program", "program": program_text})
            def run(sc: Scene, program=parsed.program) -> ProgramResult:
                return execute(program, sc, direction_slack_deg=PERCEIVED_DIRECTION_SLACK_DEG,
                               tilt_slack_deg=PERCEIVED_TILT_SLACK_DEG, face_error_m=PERCEIVED_FACE_ERROR_M,
                               reach=self.config.reach)
            res = run(scene)
            trace.append({"event": "execute", "steps": res.trace, "targets": res.targets})
            if parsed.reference:
                # "the X" promises one object: several with nothing to choose between them is AMBIGUOUS
                trace.append({"event": "reference", **parsed.reference, "candidates": list(res.targets)})
                check_target_reference(parsed, res.targets, scene)
            # an answer that would change were an unnamed detection one of the objects it fits is a
            # guess. Each reading is read anew: the parser binds a noun the scene names once to that
            # object ("the bowl on the far right" -> filterRel$RightMost(yellow_bowl)), so the same
            # program run on the reading never saw a second bowl (objects-89-00007, -91-00007).
            def reread(sc: Scene) -> ProgramResult:
                again = InstructionParser(sc, unnamed_frame=self.config.unnamed_frame).parse(instruction, task_kind)
                return _checked(again, run(sc, again.program), sc)
            readings = check_unsure_names(scene, res, reread)
            if readings:
                trace.append({"event": "unsure_names", "readings": readings})
            notes = parser.spelling_notes + [n["text"] for n in parser.frame_notes
                                             if n["why"] != "named in the instruction"]
            if parser.spelling_notes:
                trace.append({"event": "spelling", "fixes": parser.spelling_notes})
            return PlanResult.from_program(res, program_text, trace, time.perf_counter() - t0, notes)
        except SpatialManipError as e:
            trace.append({"event": "error", **e.to_dict()})
            return PlanResult.failure(e, action=action, program=program_text, trace=trace,
                                      elapsed_s=time.perf_counter() - t0)


def _checked(parsed, res: ProgramResult, scene: Scene) -> ProgramResult:
    """`res` after the reference check the planner's own answer passes."""
    if parsed.reference:
        check_target_reference(parsed, res.targets, scene)
    return res


def make_planner(name: str = "program", **cfg) -> Planner:
    """Build a planner backend by name (see BACKENDS). A backend whose module or SDK is missing
    raises BackendUnavailableError naming what to install, instead of an ImportError."""
    try:
        return make("planner", name, **cfg)
    except ImportError as e:
        raise BackendUnavailableError(
            f"planner backend {name!r} cannot load here ({e}); use --backend program, or install what "
            f"the backend needs (openai: httpx; transformers: torch + transformers and local weights)") from e
