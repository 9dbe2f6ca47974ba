"""The model-driven planning loop shared by the `openai` and `transformers` backends.

Two modes over one chat model (anything with `complete(messages, tools) -> assistant message`
in OpenAI's chat format):

- `tools` (TIGeR): one conversation; the model calls scene tools and ends with a final answer.
- `mssr` (MSSR, seeds/004 section 3, the default): a *perception step* gathers facts with tools
  (each successful call is one numbered fact); a *reasoning step* prunes the facts to a minimal
  sufficient set and either requests what is missing (back to perception, with the pruned set)
  or declares the set sufficient; the *decision* is then made in a fresh conversation that sees
  the pruned set alone. The trace records the set before and after every pruning.

The final answer is a spatial program (`PROGRAM: pick(...)`), executed on the scene with
`program.execute` so every number comes from geometry, or a target list (`TARGETS: [ids]`).

SpatialWorld's failure modes are cut off: malformed or hallucinated tool calls are answered
with an error message and end the goal after `max_tool_errors`; the same call repeated
`loop_repeats` times is an action loop; a final answer that names objects no tool returned (or
comes before any fact was gathered) is a premature stop and gets one corrective turn; an
invalid answer gets one corrective turn; every conversation has a turn budget.
"""
from __future__ import annotations

import base64
import io
import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from PIL import Image

from spatial_manip.errors import (InvalidGoalError, NotUnderstoodError, SpatialManipError,
                                  TargetNotFoundError)
from spatial_manip.geometry.reach import Reach
from spatial_manip.reasoning.planner import PlanResult, check_task_kind
from spatial_manip.reasoning.vlm_coords import CoordSettings, downscaled_size
from spatial_manip.reasoning.vlm_tools import ToolOutcome, ToolSet, program_ids, unknown_ids
from spatial_manip.scene import Scene
from spatial_manip.program_text import parse_program
from spatial_manip.reasoning.orientation import make_orienter
from spatial_manip.reasoning.program import execute, slot_place_pose, slot_to_place

MODES = ("mssr", "tools")


@runtime_checkable
class ChatModel(Protocol):
    def complete(self, messages: list[dict], tools: list[dict] | None = None) -> dict:
        """One assistant turn: {"role": "assistant", "content": str | None, "tool_calls": [...]}"""


@dataclass(kw_only=True)
class AgentConfig:
    mode: str = "mssr"
    max_turns: int = 12            # model turns per tool conversation (a step budget, SpatialWorld)
    max_tool_errors: int = 3       # malformed/hallucinated calls answered; one more ends the goal
    loop_repeats: int = 3          # the same call (name + arguments) this many times is a loop
    max_iterations: int = 3        # MSSR perception/reasoning rounds
    answer_corrections: int = 1    # corrective turns for an invalid answer (and for a premature stop)
    orientation: bool = True       # offer situated_orientation_grounding when an image is there

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        for k in ("max_turns", "loop_repeats", "max_iterations"):
            if int(getattr(self, k)) < 1:
                raise ValueError(f"{k} must be >= 1, got {getattr(self, k)}")
        for k in ("max_tool_errors", "answer_corrections"):
            if int(getattr(self, k)) < 0:
                raise ValueError(f"{k} must be >= 0, got {getattr(self, k)}")


# --- prompts -------------------------------------------------------------------------------------
ANSWER_FORMAT = (
    "Give the final answer as ONE line, either\n"
    "PROGRAM: <a spatial program, e.g. pick(unique(filterRel$LeftMost(filterBook(TABLE), viewer))) or "
    "place(metric$Right(0.1, jar, viewer))>\n"
    "or\nTARGETS: [\"id1\", \"id2\"]  (every object or slot id that satisfies the instruction).\n"
    "Never invent numbers: distances and positions come from the tools.")
TOOLS_SYSTEM = (
    "You plan robot pick-and-place from a spatial instruction. The world frame is the robot base: z up, "
    "the robot at the origin facing +x. 'you'/'me' is the viewer (the camera). Use the tools to look up "
    "objects and compute every spatial fact; never guess ids or numbers. " + ANSWER_FORMAT)
PERCEPTION_SYSTEM = (
    "You are the perception agent. Call the tools to gather the spatial facts the request asks for "
    "(object ids, positions, orientations, relations, distances). Call each tool once per question. "
    "When you have gathered them, reply with the single word DONE.")
REASONING_SYSTEM = (
    "You are the reasoning agent. Make a short plan for answering the instruction, then keep ONLY the "
    "facts the plan needs (a minimal sufficient set). Reply with JSON only:\n"
    '{"plan": "...", "keep": ["f1", ...], "sufficient": true|false, "request": "what is missing, if anything"}')
DECISION_SYSTEM = (
    "Decide from these facts alone (they are a minimal sufficient set curated for the instruction). "
    + ANSWER_FORMAT)
INITIAL_REQUEST = ("Extract all potentially relevant information for the instruction: the candidate objects, "
                   "the reference objects, and their positions, orientations and relations.")


# --- recording -----------------------------------------------------------------------------------
class Recorder:
    """Events into the PlanResult's trace list and, when given, a `spatial_manip.trace.Trace`."""

    def __init__(self, trace=None):
        self.events: list[dict] = []
        self.trace = trace

    def __call__(self, event: str, /, **fields) -> None:
        self.events.append({"event": event, **fields})
        if self.trace is not None:
            self.trace.event(event, **fields)

    def image(self, name: str, rgb: np.ndarray, caption: str = "") -> None:
        if self.trace is not None and hasattr(self.trace, "image"):
            self.trace.image(name, rgb, caption)
        self.events.append({"event": "image", "name": name, "caption": caption})


@dataclass
class Fact:
    id: str
    tool: str
    arguments: dict
    result: dict
    ids: list[str] = field(default_factory=list)

    def line(self) -> str:
        args = ", ".join(f"{k}={json.dumps(v)}" for k, v in self.arguments.items())
        return f"{self.id}: {self.tool}({args}) -> {json.dumps(self.result, separators=(',', ':'))}"


class FactSet:
    def __init__(self):
        self.facts: list[Fact] = []
        self._n = 0

    def add(self, out: ToolOutcome) -> Fact:
        self._n += 1
        f = Fact(f"f{self._n}", out.name, out.arguments or {}, out.result or {}, list(out.ids))
        self.facts.append(f)
        return f

    def ids(self) -> list[str]:
        return [f.id for f in self.facts]

    def scene_ids(self) -> set[str]:
        return {i for f in self.facts for i in f.ids}

    def keep(self, ids) -> tuple[list[str], list[str]]:
        """Prune to `ids`; returns (kept, unknown ids the model named)."""
        want = [str(i) for i in ids]
        unknown = [i for i in want if i not in self.ids()]
        self.facts = [f for f in self.facts if f.id in want]
        return self.ids(), unknown

    def text(self) -> str:
        return "\n".join(f.line() for f in self.facts) or "(no facts yet)"

    def listing(self) -> list[dict]:
        return [{"id": f.id, "tool": f.tool, "arguments": f.arguments, "result": f.result} for f in self.facts]


# --- the guard against SpatialWorld's failure modes ------------------------------------------------
class CallGuard:
    def __init__(self, cfg: AgentConfig, rec: Recorder):
        self.cfg, self.rec = cfg, rec
        self.errors = 0
        self.calls: Counter = Counter()

    def seen(self, name: str, arguments, version: int = 0) -> int:
        """Count this call (on this version of the scene); cut off an action loop. Returns how
        often it has now been made."""
        try:
            canon = json.dumps(json.loads(arguments) if isinstance(arguments, str) else arguments, sort_keys=True)
        except (json.JSONDecodeError, TypeError):
            canon = str(arguments)
        key = (name, canon, version)
        self.calls[key] += 1
        n = self.calls[key]
        if n >= self.cfg.loop_repeats:
            self.rec("cutoff", reason="loop", tool=name, arguments=canon, repeats=n)
            raise NotUnderstoodError(
                f"action loop: the model called {name}({canon}) {n} times with the same arguments; "
                f"stopped (loop_repeats={self.cfg.loop_repeats}). Try a stronger model or the program backend.")
        return n

    def error(self, name: str, message: str) -> None:
        self.errors += 1
        if self.errors > self.cfg.max_tool_errors:
            self.rec("cutoff", reason="tool_errors", count=self.errors, last=message)
            raise NotUnderstoodError(
                f"the model made {self.errors} malformed or hallucinated tool calls (limit "
                f"{self.cfg.max_tool_errors}); the last: {name}: {message}")


def converse(model: ChatModel, messages: list[dict], tools: ToolSet, guard: CallGuard, rec: Recorder,
             *, max_turns: int, on_result=None) -> str:
    """Run tool calls until the model replies without one; returns that reply's text."""
    specs = tools.specs()
    for _ in range(max_turns):
        msg = model.complete(messages, specs)
        calls = msg.get("tool_calls") or []
        messages.append({"role": "assistant", "content": msg.get("content"),
                         **({"tool_calls": calls} if calls else {})})
        if not calls:
            return msg.get("content") or ""
        for i, call in enumerate(calls):
            call = call if isinstance(call, dict) else {}
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            name, args = str(fn.get("name", "")), fn.get("arguments")
            n = guard.seen(name, args, tools.version)
            out = tools.call(name, args)
            rec("tool_call", tool=name, arguments=out.arguments if out.arguments is not None else args,
                ok=out.ok, result=out.result, error=out.error)
            content = out.content()
            if not out.ok:
                guard.error(name, out.error or "")
            elif on_result is not None:
                on_result(out)
            if n > 1:
                content = (f"(you already made this exact call {n - 1} time(s); the result is the same; "
                           f"do not repeat it) " + content)
            messages.append({"role": "tool", "tool_call_id": call.get("id") or f"call_{i}", "content": content})
    rec("cutoff", reason="step_budget", max_turns=max_turns)
    raise NotUnderstoodError(f"step budget: the model gave no answer within {max_turns} turns")


# --- answers -------------------------------------------------------------------------------------
class AnswerError(Exception):
    def __init__(self, message: str, kind: str = "invalid"):
        super().__init__(message)
        self.kind = kind


@dataclass
class Answer:
    program: Any = None                 # program.Node
    targets: list[str] | None = None


def _balanced(text: str, start: int) -> str | None:
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return text[start:j + 1]
    return None


def parse_answer(text: str) -> Answer:
    """PROGRAM: ... / TARGETS: [...] / a bare pick(...) or place(...) / {"program"|"targets": ...}."""
    t = re.sub(r"```[a-zA-Z]*", "", text or "").strip()
    obj = None
    if t.startswith("{"):
        try:
            obj = json.loads(t)
        except json.JSONDecodeError:
            obj = None
    m = re.search(r"TARGETS\s*:\s*(.+)", t, re.I)
    if (obj and "targets" in obj) or m:
        raw = obj["targets"] if obj else m.group(1).strip()
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError:
                raw = [s.strip(" '\"[]") for s in raw.split(",")]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise AnswerError(f"TARGETS must be a JSON list of ids, got {raw!r}")
        return Answer(targets=[x for x in raw if x])
    src = obj.get("program") if obj else None
    if src is None:
        m = re.search(r"\b(pick|place)\s*\(", t)
        if m is None:
            raise AnswerError(f"no PROGRAM or TARGETS line in the answer {text[:200]!r}")
        src = _balanced(t, m.start())
        if src is None:
            raise AnswerError(f"the program in the answer has unbalanced parentheses: {t[m.start():][:200]!r}")
    try:
        return Answer(program=parse_program(str(src)))
    except SpatialManipError as e:
        raise AnswerError(f"the program does not parse: {e}") from None


def evaluate_answer(ans: Answer, scene: Scene, task_kind: str, known: set[str] | None, rec: Recorder,
                    elapsed0: float, tools: ToolSet | None = None) -> PlanResult:
    """Execute an answer on the scene. `known`: ids the decision may use (premature-stop check).
    `tools`: the model's tool set, whose `execute` (the perceived scene's tolerances, the launched
    arm's reach) runs a program answer, and whose reach ranks a TARGETS answer's slots as a
    program's are ranked (program.slot_to_place; no tool set: arm.yaml's reach, as `execute`'s)."""
    if ans.program is not None:
        bad = unknown_ids(ans.program, scene)
        if bad:
            raise AnswerError(f"the program names {bad}, which are not in the scene (ids: {', '.join(scene.ids())})")
        named = {i for i in _ids_of(ans.program) if i in scene.ids()}
        if known is not None and named - known:
            raise AnswerError(f"the answer uses {sorted(named - known)} although no fact mentions them: "
                              f"check them with a tool before answering", "premature")
        text = str(ans.program)
        rec("program", program=text)
        try:
            # an empty answer set (TargetNotFoundError) is final
            res = tools.execute(ans.program) if tools is not None else execute(ans.program, scene)
        except (InvalidGoalError, NotUnderstoodError) as e:
            raise AnswerError(f"the program cannot run: {e}") from None
        rec("execute", steps=res.trace, targets=res.targets)
        return PlanResult.from_program(res, text, rec.events, time.perf_counter() - elapsed0)
    targets = list(ans.targets or [])
    bad = [t for t in targets if t not in scene.ids()]
    if bad:
        raise AnswerError(f"{bad} are not in the scene (ids: {', '.join(scene.ids())})")
    if known is not None and set(targets) - known:
        raise AnswerError(f"the answer names {sorted(set(targets) - known)} although no fact mentions them: "
                          f"check them with a tool before answering", "premature")
    if not targets:
        raise TargetNotFoundError("the model found nothing in the scene that satisfies the instruction")
    action = task_kind if task_kind in ("pick", "place") else ("place" if scene.held_object() else "pick")
    pose = None
    regions = [r for r in scene.regions if r.id in targets]
    if action == "place" and regions:
        best, skipped = slot_to_place(regions, scene.robot, tools.reach if tools is not None else None)
        if skipped:
            rec("reach", slot=best.id, out_of_reach=skipped)
        pose = slot_place_pose(scene, best, "upright", 0.0)
    rec("targets", targets=targets, action=action)
    return PlanResult(action, targets, pose, None, None, rec.events, time.perf_counter() - elapsed0)


def _ids_of(tree) -> list[str]:
    return program_ids(tree)


def decide(model: ChatModel, messages: list[dict], scene: Scene, task_kind: str, known: set[str] | None,
           cfg: AgentConfig, rec: Recorder, t0: float, *, first_text: str | None = None,
           tools: ToolSet | None = None, guard: CallGuard | None = None, facts: FactSet | None = None) -> PlanResult:
    """Parse and execute the model's answer; an invalid or premature one gets a corrective turn."""
    used: Counter = Counter()
    text = first_text
    while True:
        if text is None:
            if tools is not None:
                text = converse(model, messages, tools, guard, rec, max_turns=cfg.max_turns,
                                on_result=facts.add if facts is not None else None)
            else:
                msg = model.complete(messages, None)
                text = msg.get("content") or ""
                messages.append({"role": "assistant", "content": text})
        rec("answer", text=text)
        try:
            if facts is not None and not facts.facts:
                raise AnswerError("you answered before gathering any fact with the tools: look the objects "
                                  "up and compute the relations first", "premature")
            k = (facts.scene_ids() if facts is not None else known)
            return evaluate_answer(parse_answer(text), tools.scene if tools else scene, task_kind, k, rec, t0, tools)
        except AnswerError as e:
            rec("answer_rejected", category=e.kind, reason=str(e))
            if used[e.kind] >= cfg.answer_corrections:
                what = "stopped before gathering the facts it needs" if e.kind == "premature" else "gave no valid answer"
                raise NotUnderstoodError(f"the model {what}: {e}") from None
            used[e.kind] += 1
            messages.append({"role": "user", "content": f"Your answer was not accepted: {e}.\n{ANSWER_FORMAT}"})
            text = None


# --- MSSR --------------------------------------------------------------------------------------
def _user(text: str, image_url: str | None = None) -> dict:
    if image_url is None:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text},
                                        {"type": "image_url", "image_url": {"url": image_url}}]}


def _task_line(instruction: str, task_kind: str, scene: Scene) -> str:
    held = scene.held_object()
    kind = task_kind if task_kind != "auto" else ("place (the robot holds " + held.id + ")" if held else "pick")
    return f"Instruction: {instruction!r}\nTask: {kind}"


def parse_curation(text: str) -> dict:
    t = re.sub(r"```[a-zA-Z]*", "", text or "").strip()
    m = re.search(r"\{.*\}", t, re.S)
    try:
        obj = json.loads(m.group(0)) if m else None
    except json.JSONDecodeError:
        obj = None
    if not isinstance(obj, dict) or not isinstance(obj.get("keep"), list):
        raise AnswerError(f'expected JSON {{"keep": [...], "sufficient": true|false, "request": ...}}, got {text[:200]!r}')
    return {"plan": str(obj.get("plan", "")), "keep": [str(k) for k in obj["keep"]],
            "sufficient": bool(obj.get("sufficient", False)), "request": str(obj.get("request") or "")}


def run_mssr(model: ChatModel, scene: Scene, instruction: str, tools: ToolSet, cfg: AgentConfig,
             rec: Recorder, image_url: str | None, task_kind: str, t0: float) -> PlanResult:
    facts, guard = FactSet(), CallGuard(cfg, rec)
    request = INITIAL_REQUEST
    task = _task_line(instruction, task_kind, scene)
    for it in range(1, cfg.max_iterations + 1):
        msgs = [{"role": "system", "content": PERCEPTION_SYSTEM},
                _user(f"{task}\nRequest: {request}\nFacts so far:\n{facts.text()}", image_url)]
        converse(model, msgs, tools, guard, rec, max_turns=cfg.max_turns, on_result=facts.add)
        rec("facts", iteration=it, facts=facts.listing())
        cur = _curate(model, task, facts, cfg, rec)
        before = facts.ids()
        after, unknown = facts.keep(cur["keep"])
        rec("minimal_set", iteration=it, before=before, after=after, unknown=unknown, plan=cur["plan"],
            sufficient=cur["sufficient"], request=cur["request"])
        if cur["sufficient"] and after:
            break
        # "sufficient" with nothing kept is a premature stop: ask perception for the basics again
        request = cur["request"] or INITIAL_REQUEST
    else:
        raise NotUnderstoodError(f"no sufficient set of facts after {cfg.max_iterations} perception/reasoning "
                                 f"rounds; the last request was {request!r}")
    # The decision sees the minimal set alone (MSSR: discard all prior context).
    msgs = [{"role": "system", "content": DECISION_SYSTEM}, _user(f"{task}\nFacts:\n{facts.text()}")]
    return decide(model, msgs, tools.scene, task_kind, facts.scene_ids(), cfg, rec, t0)


def _curate(model: ChatModel, task: str, facts: FactSet, cfg: AgentConfig, rec: Recorder) -> dict:
    msgs = [{"role": "system", "content": REASONING_SYSTEM}, _user(f"{task}\nFacts:\n{facts.text()}")]
    for attempt in range(cfg.answer_corrections + 1):
        text = model.complete(msgs, None).get("content") or ""
        msgs.append({"role": "assistant", "content": text})
        try:
            return parse_curation(text)
        except AnswerError as e:
            rec("answer_rejected", category="curation", reason=str(e))
            msgs.append({"role": "user", "content": f"Not accepted: {e}. Reply with the JSON object only."})
    raise NotUnderstoodError("the reasoning agent gave no valid curation (JSON with 'keep')")


def run_tools(model: ChatModel, scene: Scene, instruction: str, tools: ToolSet, cfg: AgentConfig,
              rec: Recorder, image_url: str | None, task_kind: str, t0: float) -> PlanResult:
    facts, guard = FactSet(), CallGuard(cfg, rec)
    msgs = [{"role": "system", "content": TOOLS_SYSTEM}, _user(_task_line(instruction, task_kind, scene), image_url)]
    return decide(model, msgs, scene, task_kind, None, cfg, rec, t0, tools=tools, guard=guard, facts=facts)


# --- entry point ---------------------------------------------------------------------------------
def image_data_url(rgb: np.ndarray, max_side_px: int = 1024) -> str:
    """An RGB image as a PNG data URL (downscaled so its longer side is at most max_side_px)."""
    img = Image.fromarray(np.ascontiguousarray(rgb).astype(np.uint8))
    size = downscaled_size(img.width, img.height, max_side_px)   # the size vlm_coords assumes was sent
    if size != img.size:
        img = img.resize(size)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def plan_with_model(model: ChatModel, scene: Scene, instruction: str, cfg: AgentConfig, *,
                    observation=None, task_kind: str = "auto", trace=None,
                    image_max_side_px: int = 1024, coords: CoordSettings | None = None,
                    reach: Reach | None = None) -> PlanResult:
    """Plan one instruction with a chat model; never raises a SpatialManipError (it becomes the
    result's error). `coords`: how the model writes boxes and points (default: pixels). `reach`:
    the launched arm's reach rule, for the places the model's programs choose (None: arm.yaml's)."""
    t0 = time.perf_counter()
    rec = Recorder(trace)
    rec("instruction", text=instruction, task_kind=task_kind, mode=cfg.mode)
    try:
        check_task_kind(task_kind)
        image_url = image_data_url(observation.rgb, image_max_side_px) if observation is not None else None
        orienter = None
        if observation is not None and cfg.orientation:
            orienter = make_orienter(model, lambda: tools.scene, observation, rec)
        adapter = None
        if observation is not None:
            adapter = (coords or CoordSettings()).adapter(observation.rgb.shape, image_max_side_px)
        tools = ToolSet(scene, orienter=orienter, observation=observation, coords=adapter, reach=reach)
        run = run_mssr if cfg.mode == "mssr" else run_tools
        return run(model, scene, instruction, tools, cfg, rec, image_url, task_kind, t0)
    except SpatialManipError as e:
        rec("error", **e.to_dict())
        return PlanResult.failure(e, trace=rec.events, elapsed_s=time.perf_counter() - t0)
