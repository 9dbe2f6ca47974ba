"""The hand-worked geometry the `everyday5` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import numpy as np

from hand_worked import left_to_right, next_to_pairs
from spatial_manip.bench.paraphrase_everyday5 import EVERYDAY5_SCENES


def _objects(key):
    return [o for o in EVERYDAY5_SCENES[key]().objects if o.category != "table"]


def test_the_next_to_pairs_are_the_hand_worked_ones():
    for key, expected in (("office", {("case", "notebook"), ("mugW", "phone")}), ("counter5", {("board", "knife")})):
        assert next_to_pairs(_objects(key)) == expected, key


def test_left_to_right_and_the_closest_to_the_viewer():
    orders = {"office": ["plant", "laptop", "phone", "mugB", "mugW", "notebook", "case", "pencil", "bottle"],
              "counter5": ["kettle", "bowlS", "bowlL", "lemon", "knife", "board", "tomato", "sponge"]}
    for key, expected in orders.items():
        assert [o.id for o in left_to_right(_objects(key))] == expected, key
    viewer = np.array([0.0, 0.0, 1.3])
    by_distance = sorted(_objects("counter5"), key=lambda o: float(np.linalg.norm(o.center - viewer)))
    assert by_distance[0].id == "lemon"
    assert np.linalg.norm(by_distance[1].center - viewer) - np.linalg.norm(by_distance[0].center - viewer) > 0.1
