"""The hand-worked geometry the `everyday3` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

from hand_worked import assert_in_slots, next_to_pairs
from spatial_manip.bench.paraphrase_everyday3 import EVERYDAY3_SCENES


def test_the_next_to_pairs_are_the_hand_worked_ones():
    """Only apple-mugD and bowl-box stand within next-to distance on the counter, bookR-pen on the desk."""
    for key, expected in (("counter", {("apple", "mugD"), ("bowl", "box")}), ("desk3", {("bookR", "pen")})):
        objs = [o for o in EVERYDAY3_SCENES[key]().objects if o.category != "table"]
        assert next_to_pairs(objs) == expected, key


def test_every_shelf_object_stands_in_its_slot():
    scene = EVERYDAY3_SCENES["shelf3"]()
    assert_in_slots(scene, {"jar": "r1c1", "mug": "r1c4", "cereal": "r2c2", "bottle": "r2c4"})
