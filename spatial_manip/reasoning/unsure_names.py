"""An answer that hangs on a name perception was unsure of is a guess: refuse it.

Perception leaves a detection unnamed when it fits two enrolled objects about equally (its
`extra["candidates"]` marked `tie`: a white book lying on its wedge fits a small book and the
pillar bookend alike). The program then runs without it, as if it were neither. When reading it
as one of its tied candidates would change what the program picks or where it places ("the
rightmost book" would be that detection, not the book the planner chose), the planner's answer
is one reading of two, and the robot would take a wrong book as surely as a right one
(pick-84-00004). Never guess a target: AMBIGUOUS, naming the detection and what it may be.

A candidate already named in the scene is no reading: the library lists single objects, so a
detection cannot be the pillar bookend another detection already is. Nor is a candidate the
detection is a piece of (its measured box spans less than labelling.PIECE_SHARE of the entry's
longest side): perception names no piece after an entry, since its sides, lower bounds where it is
cut or hidden, leave any larger entry of about its colour fitting it, and the reading would be the
object extrapolated from a piece. An 81-pixel strip at the depth edge of a standing brown book 1.8 m
away, 2.6 x 0.9 x 5 cm with every side a lower bound, tied a small brown book (17.9 cm) and a
carton, and refused "the third book from the left", which the planner answered right (pick-88-00009).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from spatial_manip.errors import AmbiguousError, SpatialManipError
from spatial_manip.perception.labelling import is_piece
from spatial_manip.scene import Scene

PLACE_SAME_M = 0.02      # two place poses nearer than this are one answer (the slot's own slack)


def tied_readings(scene: Scene):
    """Each (detection, candidate) an unnamed detection may be: its tied candidates that no other
    object of the scene is already named after, and that it is no piece of (piece_of)."""
    named = set(scene.ids())
    for o in scene.objects:
        if o.category != "object":
            continue
        for c in o.extra.get("candidates") or ():
            if (c.get("tie") and c.get("category") not in (None, "object") and c.get("id") not in named
                    and not piece_of(o, c)):
                yield o, c


def pieces_not_read(scene: Scene) -> list[dict]:
    """The tied candidates left unread because the detection is a piece of them, for the trace."""
    return [{"object": o.id, "as": c["label"], "changes": "",
             "not_read": f"a piece: {100 * float(np.max(o.size)):.0f} cm of its {100 * float(np.max(c['size_m'])):.0f} cm"}
            for o in scene.objects if o.category == "object"
            for c in o.extra.get("candidates") or () if c.get("tie") and piece_of(o, c)]


def piece_of(obj, candidate: dict) -> bool:
    """Whether `obj`'s measured box spans less than PIECE_SHARE of the candidate entry's longest
    side (`candidate["size_m"]`, when listed): as perception's labelling._piece_of judges a name."""
    return is_piece(obj.size, candidate.get("size_m"))


def as_candidate(scene: Scene, obj, candidate: dict) -> Scene:
    """`scene` with `obj` read as `candidate` (its label and category; the box perception measured)."""
    read = replace(obj, label=candidate["label"], category=candidate["category"])
    return scene.with_objects([read if o is obj else o for o in scene.objects])


def check_unsure_names(scene: Scene, answer, run: Callable[[Scene], object]) -> list[dict]:
    """Raise AmbiguousError when reading one unnamed detection as one of its tied candidates
    changes `answer` (a ProgramResult: a target of it is no longer an answer, or its place pose
    moves by more than PLACE_SAME_M), or leaves the program no single answer ("the book" with a
    second book). A reading that only adds answers ("a book on the far half") leaves it standing.
    `run(scene)` executes the same program on a scene. Returns the readings checked, and those not
    read (pieces_not_read), for the trace."""
    checked = pieces_not_read(scene)
    for obj, cand in tied_readings(scene):
        try:
            other = run(as_candidate(scene, obj, cand))
            why = _differs(answer, other)
        except SpatialManipError as e:
            why = f"the words would have no single answer ({e.message})"
        checked.append({"object": obj.id, "as": cand["label"], "changes": why})
        if why:
            # the other tied names, else (the one tie: its rival fit only by the noise) the other candidates
            rest = (" or ".join(c["label"] for c in obj.extra["candidates"] if c.get("tie") and c is not cand)
                    or " or ".join(c["label"] for c in obj.extra["candidates"] if c is not cand))
            rest = f"the {rest}" if rest else "another object"
            raise AmbiguousError(
                f"{obj.id} fits the {cand['label']} ({cand.get('id') or cand['category']}) as well as {rest}, "
                f"and read as the {cand['label']} {why}: which it is decides the answer, so it would be a guess; "
                "say which object you mean another way (e.g. by colour or by what it stands next to)")
    return checked


def _differs(answer, other) -> str:
    """How `other` differs from `answer`, or '' when it is the same answer."""
    if not set(answer.targets) <= set(other.targets):
        # "a book on the far half": a further book only adds a choice; one that displaces ours changes it
        return f"the answer would be {', '.join(other.targets) or 'nothing'}, not {', '.join(answer.targets)}"
    a, b = answer.place_pose, other.place_pose
    if (a is None) != (b is None):
        return "the place would change"
    moved = 0.0 if a is None else float(np.linalg.norm(np.asarray(a.position) - np.asarray(b.position)))
    return f"the place would move {moved * 100:.0f} cm" if moved > PLACE_SAME_M else ""
