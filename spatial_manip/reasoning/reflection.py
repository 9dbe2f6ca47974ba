"""Reflection after a failed attempt (ESPIRE Algorithms 2b and 3b), as pure functions.

The node's retry loop calls, after each failed attempt,

    ctx = reflect(instruction, plan, outcome, scene_before, scene_after, previous=ctx)
    plan = replan_with(plan, ctx)         # or hand ctx.prompt to a VLM backend

`reflect` records WHY the attempt failed — wrong object, missed region, grasp slipped,
unreachable, motion failed — from the observation after the attempt (Algorithm 3b's extra view
of the failure state), and `RetryContext` carries what the next attempt must do differently:
targets to avoid, a placement correction, and a text (`prompt`) for a model's next turn
(Algorithm 2b's reflection tokens). Nothing here moves the arm or reads the clock.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from spatial_manip.errors import ErrorCode
from spatial_manip.geometry import relations as rel
from spatial_manip.scene import Region, Scene

CAUSES = ("wrong_object", "missed_region", "grasp_slipped", "unreachable", "motion_failed", "not_found", "unknown")
PLACE_MISS_TOL_M = 0.03          # ESPIRE's +-3 cm acceptance for a placement


@dataclass(frozen=True)
class Outcome:
    """What the attempt produced: success, an error code when a stage refused, the object the
    gripper held after a pick, and the id of the target that was attempted."""

    success: bool
    code: str | None = None
    attempted_target: str | None = None
    held_after: str | None = None
    message: str = ""


@dataclass
class RetryContext:
    attempt: int
    cause: str
    message: str
    exclude_ids: list[str] = field(default_factory=list)      # never try these again
    retry_target: str | None = None                           # same target, new grasp
    place_correction_m: list[float] | None = None             # add to the next place position
    history: list[dict] = field(default_factory=list)         # every reflection so far, oldest first

    @property
    def prompt(self) -> str:
        """The reflection in words, for a model's next turn (Algorithm 2b, line 4)."""
        lines = [f"Attempt {h['attempt']} failed ({h['cause']}): {h['message']}" for h in self.history]
        if self.exclude_ids:
            lines.append(f"Do not choose {', '.join(self.exclude_ids)} again.")
        if self.place_correction_m:
            lines.append(f"Shift the placement by {np.round(self.place_correction_m, 3).tolist()} m.")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"attempt": self.attempt, "cause": self.cause, "message": self.message,
                "exclude_ids": list(self.exclude_ids), "retry_target": self.retry_target,
                "place_correction_m": self.place_correction_m, "history": list(self.history)}


def _cause(plan, outcome: Outcome, before: Scene | None, after: Scene | None) -> tuple[str, str, dict]:
    code = outcome.code
    tgt = outcome.attempted_target or (plan.targets[0] if plan.targets else None)
    if code == ErrorCode.UNREACHABLE.value:
        return "unreachable", f"{tgt} was out of reach: {outcome.message}", {"exclude": [tgt] if tgt else []}
    if code == ErrorCode.MOTION_FAILED.value:
        return "motion_failed", f"the arm stopped: {outcome.message}", {}
    if code == ErrorCode.TARGET_NOT_FOUND.value:
        return "not_found", f"nothing matched: {outcome.message}", {}
    if plan.action == "pick":
        if outcome.held_after is None or code == ErrorCode.GRASP_FAILED.value:
            return "grasp_slipped", f"the gripper closed on {tgt} but holds nothing afterwards", {"retry": tgt}
        if outcome.held_after not in plan.targets:
            return ("wrong_object", f"picked {outcome.held_after}, which does not satisfy the instruction "
                    f"(answers: {plan.targets})", {"exclude": [outcome.held_after]})
        return "unknown", outcome.message or "the pick did not verify", {}
    # place
    if after is not None and plan.place_pose is not None:
        book = after.get(outcome.held_after or "") if outcome.held_after else None
        if book is not None and not getattr(book, "held", False):
            goal = np.asarray(plan.place_pose.position, float)
            got = rel.position_of(book)
            miss = goal - got
            if _missed(after, plan.targets, book) or np.linalg.norm(miss[:2]) > PLACE_MISS_TOL_M:
                return ("missed_region", f"the book landed at {np.round(got, 3).tolist()}, "
                        f"{np.linalg.norm(miss[:2]) * 100:.1f} cm from the goal", {"correction": miss.tolist()})
        if book is not None and getattr(book, "held", False):
            return "grasp_slipped", "the book is still in the gripper: it did not release", {}
    return "unknown", outcome.message or "the placement did not verify", {}


def _missed(scene: Scene, targets: list[str], book) -> bool:
    """The book's centre lies in none of the target regions."""
    regions = [r for r in scene.regions if r.id in targets]
    if not regions:
        return False
    return not any(rel.distance_to_point(r, rel.position_of(book)) < 1e-6 for r in regions)


def reflect(instruction: str, plan, outcome: Outcome, scene_before: Scene | None = None,
            scene_after: Scene | None = None, previous: RetryContext | None = None) -> RetryContext:
    """Why the attempt failed and what the next attempt needs (a new context; `previous` is not
    modified)."""
    if outcome.success:
        raise ValueError("reflect() is for failed attempts; the attempt succeeded")
    cause, msg, extra = _cause(plan, outcome, scene_before, scene_after)
    n = (previous.attempt + 1) if previous else 1
    exclude = list(previous.exclude_ids) if previous else []
    exclude += [e for e in extra.get("exclude", []) if e and e not in exclude]
    history = list(previous.history) if previous else []
    history.append({"attempt": n, "cause": cause, "message": msg, "instruction": instruction})
    return RetryContext(n, cause, msg, exclude, extra.get("retry"), extra.get("correction"), history)


def replan_with(plan, ctx: RetryContext):
    """The plan for the next attempt: drop excluded targets (put the retried one first) and shift
    the place pose by the observed miss. Returns a new PlanResult-like object (dataclass replace)."""
    targets = [t for t in plan.targets if t not in ctx.exclude_ids]
    if ctx.retry_target in targets:
        targets.remove(ctx.retry_target)
        targets.insert(0, ctx.retry_target)
    pose = plan.place_pose
    if pose is not None and ctx.place_correction_m is not None:
        pose = replace(pose, position=np.asarray(pose.position, float) + np.asarray(ctx.place_correction_m, float))
    return replace(plan, targets=targets, place_pose=pose)


def region_of(scene: Scene, point) -> Region | None:
    """The region containing a point, if any (for reports)."""
    return next((r for r in scene.regions if rel.distance_to_point(r, point) < 1e-6), None)
