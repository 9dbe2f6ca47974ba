"""Instructions with two actions ("pick the leftmost book and place it 10 cm to the right of
the jar"): split into a pick part and a place part, plan the pick on the observed scene, then
plan the place on the same scene with the picked object marked as held (so "it" is that book
and it is not its own reference). Each part goes through the one planning function."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from spatial_manip.errors import AmbiguousError, InvalidGoalError
from spatial_manip.scene import Scene

# "..., and then place it ...", "... and put it ...", "...; then set it down ..."
_SPLIT = re.compile(r"\s*(?:,|;)?\s*(?:and\s+then|and|then)\s+(?=(?:place|put|set|position|drop|move|leave)\b)",
                    re.IGNORECASE)


def split_instruction(text: str) -> tuple[str | None, str | None]:
    """(pick part, place part); either may be None when the instruction has one action."""
    parts = _SPLIT.split(text, maxsplit=1)
    if len(parts) == 2 and parts[0].strip() and parts[1].strip():
        return parts[0].strip(), parts[1].strip()
    return None, None


def plan_compound(scene: Scene, text: str, task_kind: str,
                  plan_one: Callable[[Scene, str, str], object]) -> tuple[object | None, object | None]:
    """(pick result, place result) of `plan_one(scene, text, kind)` for each part.

    `task_kind` "pick" or "place" forces a single action; "pick_and_place" requires both parts."""
    pick_text, place_text = split_instruction(text)
    if pick_text is None:
        if task_kind == "pick_and_place":
            raise InvalidGoalError("a pick_and_place goal needs both parts, e.g. 'pick the leftmost book "
                                   "and place it 10 cm to the right of the jar'")
        kind = task_kind if task_kind in ("pick", "place") else "auto"
        result = plan_one(scene, text, kind)
        return (result, None) if result.action == "pick" else (None, result)
    if task_kind in ("pick", "place"):
        raise AmbiguousError(f"the goal says task kind {task_kind!r} but the instruction asks to pick and then place")
    pick = plan_one(scene, pick_text, "pick")
    if len(pick.targets) != 1:
        raise AmbiguousError(f"the pick part fits {len(pick.targets)} objects ({', '.join(pick.targets)}); "
                             "the place part needs to know which one 'it' is")
    held_scene = scene.with_objects(replace(o, held=(o.id == pick.targets[0])) for o in scene.objects)
    place = plan_one(held_scene, place_text, "place")
    return pick, place
