"""The `objects` set's scenes carry what its answers rest on (issue 38); the checks every held-out
set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

from spatial_manip.bench.paraphrase_objects import OBJECT_SCENES


def test_every_non_book_object_carries_its_colour():
    for make in OBJECT_SCENES.values():
        for o in make().objects:
            if o.category not in ("table", "shelf") and o.id not in ("held", "plant", "globe"):
                assert o.extra.get("colour_names"), o.id
