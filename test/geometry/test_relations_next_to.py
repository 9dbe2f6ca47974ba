"""`relations.next_to`, the one definition of "next to / beside / by" the reader uses (issue 38):
on a shelf the slots beside the reference's own, never its own; on a table the closest object
within NEXT_TO_SAID_MAX_M; the generator's stricter `is_next_to` reads back to the same answer."""
from __future__ import annotations

import numpy as np

from spatial_manip.geometry import relations as rel
from spatial_manip.scene import Region, SceneObject, Viewpoint

AXES = rel.frame_axes(rel.Frame.RELATIVE, viewer=Viewpoint([0.0, 0.0, 1.3], [1.0, 0.0, -0.5]))


def _slots():
    """One row of four 30 cm slots, column 1 on the viewer's left (+y)."""
    return [Region(f"c{c}", "slot", [0.9, y, 1.2], [0.3, 0.3, 0.33], 1, c)
            for c, y in ((1, 0.45), (2, 0.15), (3, -0.15), (4, -0.45))]


def _thing(id_, x, y, z=0.8, size=(0.08, 0.08, 0.1)):
    return SceneObject(id_, id_, "reference", [x, y, z], list(size))


def test_the_slots_next_to_an_object_are_its_neighbours_not_its_own():
    jar = _thing("jar", 0.9, 0.15, 1.1)                      # stands in c2
    assert [s.id for s in rel.next_to(_slots(), jar, AXES)] == ["c1", "c3"]
    end = _thing("mug", 0.9, -0.47, 1.1)                      # in c4, 2 cm off its centre
    assert [s.id for s in rel.next_to(_slots(), end, AXES)] == ["c3"]


def test_a_slot_on_another_level_is_not_next_to_it():
    jar = _thing("jar", 0.9, 0.15, 0.75)                      # below the row
    assert rel.next_to(_slots(), jar, AXES) == []


def test_the_object_next_to_a_reference_is_the_closest_within_the_said_distance():
    bowl = _thing("bowl", 1.0, -0.4)
    near, far = _thing("near", 1.0, -0.18), _thing("far", 0.6, 0.3)
    assert rel.next_to([near, far], bowl, AXES) == [near]
    assert rel.next_to([far], bowl, AXES) == []               # the closest, 0.7 m away, is not beside it
    assert rel.distance(near, bowl) > rel.NEXT_TO_MAX_M and not rel.is_next_to(near, bowl)


def test_slack_widens_the_said_distance():
    bowl, mug = _thing("bowl", 1.0, -0.4), _thing("mug", 1.0, 0.0)
    gap = rel.distance(mug, bowl)
    assert gap > rel.NEXT_TO_SAID_MAX_M
    assert rel.next_to([mug], bowl, AXES, lambda o: gap - rel.NEXT_TO_SAID_MAX_M + 0.001) == [mug]


def test_where_the_generator_says_next_to_the_reader_takes_the_same_object():
    """The generator says 'next to' only of the one object within NEXT_TO_MAX_M (object_families)."""
    rng = np.random.default_rng(38)
    for _ in range(200):
        ref = _thing("ref", 0.7, 0.0)
        items = [_thing(f"o{i}", 0.7 + x, y) for i, (x, y) in enumerate(rng.uniform(-0.4, 0.4, size=(4, 2)))]
        items = [o for o in items if rel.distance(o, ref) > 0.0]
        said = [o for o in items if rel.is_next_to(o, ref)]
        if len(said) == 1:
            assert rel.next_to(items, ref, AXES) == said
