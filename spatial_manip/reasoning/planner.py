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
from spatial_manip.registry import make, register_role
from spatial_manip.reasoning.program import (PERCEIVED_DIRECTION_SLACK_DEG, PlacePose, ProgramResult,
                                             assume_visible_fronts, execute)
from spatial_manip.scene import Scene

BACKENDS = {
    "program": "spatial_manip.reasoning.planner:ProgramPlanner",
    "openai": "spatial_manip.reasoning.openai_backend:OpenAIPlanner",
    "transformers": "spatial_manip.reasoning.transformers_backend:TransformersPlanner",
}
register_role("planner", BACKENDS)

TASK_KINDS = ("auto", "pick", "place")


@dataclass
class PlanResult:
    action: str | None                      # "pick" | "place" | None when planning failed
    targets: list[str] = field(default_factory=list)
    place_pose: PlacePose | None = None
    program: str | None = None
    error: dict | None = None               # {"code", "message"} when planning failed
    trace: list[dict] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict:
        """Exactly the object `spatial-manip plan --json` prints (issue 4)."""
        return {"action": self.action, "targets": list(self.targets),
                "place_pose": self.place_pose.to_dict() if self.place_pose is not None else None,
                "program": self.program, "error": self.error}

    @classmethod
    def from_program(cls, res: ProgramResult, program: str, trace: list[dict], elapsed_s: float) -> "PlanResult":
        return cls(res.action, res.targets, res.place_pose, program, None, trace, elapsed_s)

    @classmethod
    def failure(cls, err: SpatialManipError, *, action=None, program=None, trace=None, elapsed_s=0.0) -> "PlanResult":
        return cls(action, [], None, program, err.to_dict(), list(trace or []), elapsed_s)


@runtime_checkable
class Planner(Protocol):
    def plan(self, scene: Scene, instruction: str, *, observation: Any = None,
             task_kind: str = "auto") -> PlanResult: ...


def check_task_kind(task_kind: str) -> None:
    if task_kind not in TASK_KINDS:
        raise SpatialManipError(f"task_kind must be one of {TASK_KINDS}, got {task_kind!r}", ErrorCode.INVALID_GOAL)


@dataclass(kw_only=True)
class ProgramPlannerConfig:
    """assume_fronts: an object known to have a front that perception could not orient (no
    orientation model here) is taken to face the camera with its most directly facing side
    (program.assume_visible_fronts); off, "its own left" of such an object is INVALID_GOAL."""

    assume_fronts: bool = True

    def __post_init__(self):
        if not isinstance(self.assume_fronts, bool):
            raise ValueError(f"assume_fronts must be true or false, got {self.assume_fronts!r}")


class ProgramPlanner:
    """The embedded default: deterministic English -> spatial program -> geometry core."""

    name = "program"

    def __init__(self, **cfg):
        self.config = ProgramPlannerConfig(**cfg)

    def plan(self, scene: Scene, instruction: str, *, observation: Any = None,
             task_kind: str = "auto") -> PlanResult:
        from spatial_manip.reasoning.parser import InstructionParser

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
            parsed = InstructionParser(scene).parse(instruction, task_kind)
            program_text = str(parsed.program)
            action = parsed.program.op
            trace.append({"event": "program", "program": program_text})
            res = execute(parsed.program, scene, direction_slack_deg=PERCEIVED_DIRECTION_SLACK_DEG)
            trace.append({"event": "execute", "steps": res.trace, "targets": res.targets})
            return PlanResult.from_program(res, program_text, trace, time.perf_counter() - t0)
        except SpatialManipError as e:
            trace.append({"event": "error", **e.to_dict()})
            return PlanResult.failure(e, action=action, program=program_text, trace=trace,
                                      elapsed_s=time.perf_counter() - t0)


def make_planner(name: str = "program", **cfg) -> Planner:
    """Build a planner backend by name (see BACKENDS). A backend whose module or SDK is missing
    raises BackendUnavailableError naming what to install, instead of an ImportError."""
    try:
        return make("planner", name, **cfg)
    except ImportError as e:
        raise BackendUnavailableError(
            f"planner backend {name!r} cannot load here ({e}); use --backend program, or install what "
            f"the backend needs (openai: httpx; transformers: torch + transformers and local weights)") from e
