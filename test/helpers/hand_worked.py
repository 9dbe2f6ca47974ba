"""Geometry the held-out paraphrase sets' hand-worked answers rest on, computed with
`geometry/relations.py` (the one definition of each word), for the per-set tests."""
from __future__ import annotations

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
