"""What the stack driver is told about a served task's cell: the fixtures and empty shelf slots,
the held book and the enrolled library; never the episode's own objects (which are present,
where, how big). What stands in a slot is measured from the perceived objects."""
import io
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from spatial_manip.espire.stack_driver import cell_configuration, with_perceived_occupancy
from spatial_manip.scene import SceneObject
from spatial_manip.sim import tasks
from spatial_manip.sim.library import load_default_library


@pytest.fixture(scope="module")
def shelf_item():
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        items = tasks.generate("place", 3, 41, pool_size=3)
    return items[0]


@pytest.fixture(scope="module")
def table_item():
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        items = tasks.generate("pick", 3, 41, pool_size=3)
    return next(it for it in items if any(o.category == "support" for o in it[1].objects))


@pytest.mark.parametrize("kind", ["shelf", "table"])
def test_the_cell_has_its_furniture_empty_slots_the_held_book_and_the_library_only(shelf_item, table_item, kind):
    task, scene = shelf_item if kind == "shelf" else table_item
    library = load_default_library()
    ws = cell_configuration(scene, np.eye(4), library)
    episode_movables = {o.id for o in scene.objects if o.category in ("book", "reference", "support") and not o.held}
    assert episode_movables, "the scene should hold books or references beyond the fixtures"
    ids = {o.id for o in ws.objects}
    assert not ids & episode_movables, sorted(ids & episode_movables)
    assert {o.id for o in ws.objects if o.held} == ({task.held} if task.held else set())
    entries = [o for o in ws.objects if o.extra.get("catalogue") and not o.held]
    assert {o.id for o in entries} == set(library.entries) and all(not np.any(o.center) for o in entries)
    assert {o.category for o in ws.objects if not o.extra.get("catalogue")} <= {"shelf", "table", "floor"}
    assert [r.id for r in ws.regions] == [r.id for r in scene.regions]
    assert all(r.occupancy == 0.0 for r in ws.regions)       # what is in a slot is perceived, not told


def test_a_perceived_book_in_a_slot_takes_its_width(shelf_item):
    _, scene = shelf_item
    ws = cell_configuration(scene, np.eye(4), load_default_library())
    slot = max(ws.regions, key=lambda r: r.size[1])
    lo_y = slot.center[1] - slot.size[1] / 2
    book = SceneObject("book_seen", "book", "book", [slot.center[0], lo_y + 0.06, slot.center[2]], [0.2, 0.1, 0.25],
                       np.eye(3))
    seen = with_perceived_occupancy(ws.with_objects(ws.objects + [book]))
    got = next(r for r in seen.regions if r.id == slot.id)
    assert got.occupancy == pytest.approx(0.10 / slot.size[1], abs=0.002)   # the book's 10 cm
    assert got.extra["free_y"][0] == pytest.approx(lo_y + 0.11, abs=0.005)
    assert got.extra["free_y"][1] == pytest.approx(slot.center[1] + slot.size[1] / 2, abs=0.005)
    assert next(r for r in ws.regions if r.id == slot.id).occupancy == 0.0     # the configuration is not changed
