"""The hand-worked geometry the `everyday2` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import pytest

from spatial_manip.bench.paraphrase_everyday import everyday_set

SCENES = everyday_set()[1]


def test_the_mug_rests_on_the_yellow_book():
    objs = {o.id: o for o in SCENES["desk"]().objects}
    book_top = objs["bookC"].center[2] + 0.02
    assert objs["mug"].center[2] - objs["mug"].size[2] / 2 == pytest.approx(book_top)
