"""Instructions with two actions: a pick and a place in one sentence.

Three shapes are read (issue 22):
- two clauses: "pick the leftmost book and (then) place it 10 cm to the right of the jar";
- one clause whose verb moves an object that is not in the hand: "move the thin flat book to the
  bottom row", "put the tilted book in the emptiest slot", "move the rightmost book 10 cm to the
  right of the mug";
- "X goes in Y": "the book closest to you goes in the free slot on the bottom shelf".

The pick is planned on the observed scene, then the place on the same scene with the picked object
marked as held (so "it" is that object and it is not its own reference). Each part goes through the
one planning function. In a one-clause sentence the words before the destination describe the
object (so "the tilted book" picks the tilted book; it does not ask for a tilted placement); where
the destination starts is found by trying each place a destination can start ("in", "to", "10 cm",
...) left to right and keeping the first whose two parts both plan, preferring one that picks a
single object.
"""
from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Callable

from spatial_manip.errors import AmbiguousError, InvalidGoalError, SpatialManipError
from spatial_manip.reasoning.lexicon import spoken_label
from spatial_manip.reasoning.reader import first_words
from spatial_manip.scene import Scene

_GOES = re.compile(r"^(?P<obj>.+?)\s+(?:goes|go|belongs)\s+(?P<dest>.+)$", re.IGNORECASE)


@lru_cache(maxsize=1)
def _place_verb_patterns() -> tuple[re.Pattern, re.Pattern]:
    """(where a two-clause sentence splits, a sentence that starts with a place verb), by the
    grammar's place verbs (`reader.lark`'s verb_place: one list of them). Built on first use, so
    that importing this module does not load the grammar."""
    verbs = "|".join(sorted(first_words("verb_place"), key=len, reverse=True))
    # "..., and then place it ...", "... and put it ...", "...; then set it down ..."
    split = re.compile(rf"\s*(?:,|;)?\s*(?:and\s+then|and|then)\s+(?=(?:{verbs})\b)", re.IGNORECASE)
    lead = re.compile(rf"^\W*(?:(?:please|pls|now|then|ok|okay|so|well|um+|uh+|could you|can you|would you)\s+)*"
                      rf"(?P<verb>{verbs})\s+(?P<rest>.+)$", re.IGNORECASE)
    return split, lead

_HELD = re.compile(r"^(?:it|this|that|them|these|those|the (?:book|object|one) (?:you(?:'re| are) holding|"
                   r"in (?:the|your) (?:gripper|hand))|what you(?:'re| are) holding)\b", re.IGNORECASE)
# Words a destination can start with; a number starts one too ("10 cm to the right of ...").
_DEST_START = {"in", "into", "onto", "on", "to", "at", "between", "beside", "behind", "above", "below", "under",
               "underneath", "next", "near", "directly", "immediately", "just", "half", "a", "one", "two", "three",
               "four", "five", "six", "seven", "eight", "nine", "ten", "fifteen", "twenty", "thirty", "forty",
               "fifty", "top", "bottom", "middle", "row", "column"}


def split_instruction(text: str) -> tuple[str | None, str | None]:
    """(pick part, place part) of a two-clause instruction; (None, None) for one clause."""
    parts = _place_verb_patterns()[0].split(text, maxsplit=1)
    if len(parts) == 2 and parts[0].strip() and parts[1].strip():
        return parts[0].strip(), parts[1].strip()
    return None, None


def one_clause_splits(scene: Scene, text: str) -> list[tuple[str, str]]:
    """Candidate (pick part, place part) readings of a one-clause pick-and-place, in the order to
    try them; empty when the sentence moves what is held (or something is held: then a described
    object is the held one, as the benchmark's "place the book lying flat in ..." means)."""
    if scene.held_object() is not None:
        return []
    m = _GOES.match(text.strip())
    if m and not _HELD.match(m.group("obj").strip()):
        return [(f"take {m.group('obj').strip()}", f"put it {m.group('dest').strip()}")]
    m = _place_verb_patterns()[1].match(text.strip())
    if not m or _HELD.match(m.group("rest").strip()):
        return []
    words = m.group("rest").split()
    out = []
    for i in range(1, len(words)):
        w = words[i].lower().strip(",;")
        if w in _DEST_START or w[:1].isdigit():
            obj = " ".join(words[:i]).rstrip(",;")
            out.append((f"take {obj}", f"put it {' '.join(words[i:])}"))
    return out


def is_compound(scene: Scene, text: str) -> bool:
    return split_instruction(text)[0] is not None or bool(one_clause_splits(scene, text))


def _held_scene(scene: Scene, obj_id: str) -> Scene:
    return scene.with_objects(replace(o, held=(o.id == obj_id)) for o in scene.objects)


# "10 cm to the right of the big one": "one" as a reference, after the word that relates it
_REFERENCE_ONE = re.compile(r"\b(of|from|to|than|beside|near|behind|by|and) (the|a|an|that|this)((?: [a-z]+){0,2}?) one\b",
                            re.IGNORECASE)


def _one_as_moved_kind(place_text: str, held) -> str:
    """The place's words with "one" as a reference read as the moved object's kind: "move the small
    pill bottle 10 cm to the right of the big one" places it beside the big pill bottle."""
    if held is None:
        return place_text
    label = spoken_label(held)
    return _REFERENCE_ONE.sub(lambda m: f"{m.group(1)} {m.group(2)}{m.group(3)} {label}", place_text)


def _plan_parts(scene: Scene, pick_text: str, place_text: str, plan_one: Callable):
    pick = plan_one(scene, pick_text, "pick")
    held_scene = _held_scene(scene, pick.targets[0])
    place = plan_one(held_scene, _one_as_moved_kind(place_text, held_scene.held_object()), "place")
    return pick, place


def plan_pick_and_place(scene: Scene, text: str, plan_one: Callable[[Scene, str, str], object]):
    """(pick result, place result) for a compound instruction; `plan_one` raises SpatialManipError
    when a part cannot be planned. Raises AmbiguousError when the pick part fits several objects
    (the place needs to know which one "it" is), else the first reading's own error."""
    pick_text, place_text = split_instruction(text)
    readings = [(pick_text, place_text)] if pick_text is not None else one_clause_splits(scene, text)
    first_error, several = None, None
    for pick_text, place_text in readings:
        try:
            pick, place = _plan_parts(scene, pick_text, place_text, plan_one)
        except SpatialManipError as e:
            first_error = first_error or e
            continue
        if len(pick.targets) == 1:
            return pick, place
        several = several or pick
    if several is not None:
        raise AmbiguousError(f"the object to move fits {len(several.targets)} objects ({', '.join(several.targets)}); "
                             "the place needs to know which one it is: say which (e.g. 'the leftmost ...')")
    if first_error is not None:
        raise first_error
    raise InvalidGoalError(f"could not find a pick and a place in {text!r}")


def replan_place(scene: Scene, text: str, plan_one: Callable[[Scene, str, str], object]):
    """The place part of a pick-and-place instruction planned again once the object is in the hand
    (a retry after a failed place). For two clauses, the second. For one clause ("move the small
    flat book to the bottom row"), the reading whose object words describe the held object (planned
    with it set back among the others) and whose destination plans; else the first destination that
    plans. An instruction with no pick part is planned whole as a place."""
    pick_text, place_text = split_instruction(text)
    held = scene.held_object()
    if pick_text is not None:
        return plan_one(scene, _one_as_moved_kind(place_text, held), "place")
    loose = scene.with_objects(replace(o, held=False) for o in scene.objects)
    readings = one_clause_splits(loose, text) if held is not None else []
    if not readings:
        return plan_one(scene, text, "place")
    fallback, first_error = None, None
    for obj_text, dest_text in readings:
        try:
            place = plan_one(scene, _one_as_moved_kind(dest_text, held), "place")
        except SpatialManipError as e:
            first_error = first_error or e
            continue
        try:
            if held.id in plan_one(loose, obj_text, "pick").targets:
                return place
        except SpatialManipError:
            pass
        fallback = fallback or place
    if fallback is not None:
        return fallback
    raise first_error


def plan_compound(scene: Scene, text: str, task_kind: str,
                  plan_one: Callable[[Scene, str, str], object]) -> tuple[object | None, object | None]:
    """(pick result, place result) of `plan_one(scene, text, kind)` for each part (the planner
    node's entry). A one-clause pick-and-place is planned whole by `plan_one` when the planner
    reads it as one (a result with `steps`); otherwise here.

    `task_kind` "pick" or "place" forces a single action; "pick_and_place" requires both parts."""
    if task_kind in ("pick", "place"):
        if split_instruction(text)[0] is not None:
            raise AmbiguousError(f"the goal says task kind {task_kind!r} but the instruction asks to pick and then place")
        result = plan_one(scene, text, task_kind)
        return (result, None) if result.action == "pick" else (None, result)
    if split_instruction(text)[0] is not None:
        return plan_pick_and_place(scene, text, plan_one)
    result = plan_one(scene, text, "auto")
    steps = getattr(result, "steps", None)
    if steps:
        return steps[0], steps[1]
    if task_kind == "pick_and_place":
        raise InvalidGoalError("a pick_and_place goal needs both parts, e.g. 'pick the leftmost book "
                               "and place it 10 cm to the right of the jar'")
    return (result, None) if result.action == "pick" else (None, result)
