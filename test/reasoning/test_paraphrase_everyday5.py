"""The hand-worked geometry the `everyday5` set's answers rest on (issue 38); the checks every
held-out set shares are in test_paraphrase_sets.py."""
from __future__ import annotations

import numpy as np

from spatial_manip.bench.paraphrase_everyday5 import EVERYDAY5_SCENES
from spatial_manip.geometry import relations as rel


def _objects(key):
    return [o for o in EVERYDAY5_SCENES[key]().objects if o.category != "table"]


def test_the_next_to_pairs_are_the_hand_worked_ones():
    for key, expected in (("office", {("case", "notebook"), ("mugW", "phone")}), ("counter5", {("board", "knife")})):
        objs = _objects(key)
        pairs = {tuple(sorted((a.id, b.id))) for i, a in enumerate(objs) for b in objs[i + 1:] if rel.is_next_to(a, b)}
        assert pairs == expected, key


def test_left_to_right_and_the_closest_to_the_viewer():
    orders = {"office": ["plant", "laptop", "phone", "mugB", "mugW", "notebook", "case", "pencil", "bottle"],
              "counter5": ["kettle", "bowlS", "bowlL", "lemon", "knife", "board", "tomato", "sponge"]}
    for key, expected in orders.items():
        objs = sorted(_objects(key), key=lambda o: -o.center[1])
        assert [o.id for o in objs] == expected, key
        assert min(a.center[1] - b.center[1] for a, b in zip(objs, objs[1:])) > rel.RANK_TIE_M
    viewer = np.array([0.0, 0.0, 1.3])
    by_distance = sorted(_objects("counter5"), key=lambda o: float(np.linalg.norm(o.center - viewer)))
    assert by_distance[0].id == "lemon"
    assert np.linalg.norm(by_distance[1].center - viewer) - np.linalg.norm(by_distance[0].center - viewer) > 0.1
