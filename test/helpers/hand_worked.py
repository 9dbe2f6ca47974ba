"""Geometry the held-out paraphrase sets' hand-worked answers rest on, computed with
`geometry/relations.py` (the one definition of each word), for the per-set tests."""
from __future__ import annotations

import numpy as np

from spatial_manip.geometry import relations as rel


def next_to_pairs(objects) -> set[tuple[str, str]]:
    """Every unordered pair of `objects` (ids sorted) that stand next to each other."""
    return {tuple(sorted((a.id, b.id))) for i, a in enumerate(objects) for b in objects[i + 1:] if rel.is_next_to(a, b)}


def left_to_right(objects) -> list:
    """`objects` from the viewer's left (+y) to right, asserting no two tie within a rank (an
    ordinal over them would be AMBIGUOUS, not the hand-worked answer)."""
    ordered = sorted(objects, key=lambda o: -o.center[1])
    assert min(a.center[1] - b.center[1] for a, b in zip(ordered, ordered[1:])) > rel.RANK_TIE_M
    return ordered


def assert_in_slots(scene, where: dict[str, str]) -> None:
    """Each object id of `where` has its centre inside the shelf slot (region id) it maps to."""
    slots = {r.id: r for r in scene.regions}
    for o in scene.objects:
        if o.id in where:
            assert rel.point_in_box(o.center, slots[where[o.id]]), o.id


def placed(scene) -> list:
    """The objects standing on a scene's table or shelf: not the table, the shelf or the held object."""
    return [o for o in scene.objects if o.category not in ("table", "shelf") and not o.held]


def assert_faces(objects, facer, kind, faced: str) -> None:
    """`facer` (an object with a front) points at `faced` among `objects` labelled `kind`: it is the
    only one in the front sector (`relations.in_direction`) and the closest of them before its front."""
    axes = rel.frame_axes("intrinsic", reference=facer)
    others = [o for o in objects if o.id != facer.id and o.label == kind]
    assert [o.id for o in others if rel.in_direction(o, "front", axes)] == [faced], facer.id
    before = [o for o in others if rel.is_in_front_of(o, facer, axes)]
    assert [o.id for o in rel.closest(before, facer)] == [faced], facer.id


def assert_clear(objects, spot, half: float, margin: float, skip=()) -> None:
    """A placed footprint of half side `half` centred on the ground point `spot` keeps `margin` from
    every object's footprint (the table's and `skip`'s ids aside)."""
    for o in objects:
        if o.category != "table" and o.id not in skip:
            box = np.abs(o.rotation[:2, :2]) @ (o.size[:2] / 2)
            gap_xy = np.abs(np.asarray(spot) - o.center[:2]) - box - half
            assert max(gap_xy) >= margin - 1e-9, o.id
