"""The hand-worked geometry the `everyday4` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

from hand_worked import assert_in_slots, left_to_right, next_to_pairs
from spatial_manip.bench.paraphrase_everyday4 import EVERYDAY4_SCENES
from spatial_manip.geometry import relations as rel


def _table_objects(key):
    return [o for o in EVERYDAY4_SCENES[key]().objects if o.category != "table"]


def test_the_next_to_pairs_are_the_hand_worked_ones():
    """Only mugG-marker and scissors-boxL stand within next-to distance on the bench, banana-bowl at breakfast."""
    for key, expected in (("bench", {("marker", "mugG"), ("boxL", "scissors")}), ("breakfast", {("banana", "bowl")})):
        assert next_to_pairs(_table_objects(key)) == expected, key


def test_left_to_right_is_the_hand_worked_order():
    """The ordinals' answers: the viewer's left is +y, and no two objects tie within a rank."""
    orders = {"bench": ["tape", "screwdriver", "mugY", "mugG", "marker", "scissors", "boxS", "boxL", "bottle"],
              "breakfast": ["plate", "appleR", "appleG", "banana", "bowl", "cup", "carton", "cereal", "spoon"]}
    for key, expected in orders.items():
        assert [o.id for o in left_to_right(_table_objects(key))] == expected, key


def test_every_pantry_object_stands_in_its_slot():
    scene = EVERYDAY4_SCENES["pantry4"]()
    assert_in_slots(scene, {"soup": "r1c1", "jar": "r1c3", "tea": "r2c2", "can": "r2c3"})
    assert {r.id for r in scene.regions if rel.is_empty(r)} == {"r1c2", "r2c1"}
