"""The ESPIRE server's shelves flag the slots its arm reaches (layouts.SHELF_STANCES "espire"),
while the main benchmark's place suite keeps its scenes ("bench", the default)."""
import io
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from spatial_manip.espire import feasible
from spatial_manip.geometry.reach import slot_wrist
from spatial_manip.sim import layouts as L
from spatial_manip.sim import tasks as gen


def _flags(scene) -> dict:
    return {r.id: r.extra["reachable"] for r in scene.regions}


def test_espire_flags_five_or_more_slots_of_a_grid_shelf_where_the_bench_flags_about_two():
    bench, espire = [], []
    for seed in range(20):
        b = L.sample_shelf(np.random.default_rng(seed), layout="grid")
        e = L.sample_shelf(np.random.default_rng(seed), layout="grid", stance="espire")
        # the same shelf and slots; the flag only ever adds slots
        assert [r.id for r in b.regions] == [r.id for r in e.regions]
        assert np.allclose([r.center for r in b.regions], [r.center for r in e.regions])
        assert all(e_ok or not b_ok for b_ok, e_ok in zip(_flags(b).values(), _flags(e).values()))
        bench.append(sum(_flags(b).values()))
        espire.append(sum(_flags(e).values()))
    assert np.mean(bench) <= 3.0
    assert np.mean(espire) >= 5.0 and min(espire) >= 3


def test_default_stance_is_the_bench_one_and_a_scene_says_its_stance():
    plain = L.sample_shelf(np.random.default_rng(7), layout="combo")
    bench = L.sample_shelf(np.random.default_rng(7), layout="combo", stance="bench")
    assert plain.to_dict() == bench.to_dict()
    assert "stance" not in plain.extra
    assert L.sample_shelf(np.random.default_rng(7), layout="combo", stance="espire").extra["stance"] == "espire"


def test_an_unknown_stance_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"shelf stance must be one of \['bench', 'espire'\], got 'near'"):
        L.sample_shelf(np.random.default_rng(0), stance="near")


def test_the_espire_generator_builds_its_shelves_with_the_espire_stance():
    assert feasible.SHELF_STANCE == "espire"
    quiet = io.StringIO()
    with redirect_stdout(quiet), redirect_stderr(quiet):      # MuJoCo's model-compiler notes
        pool = gen.make_pool("shelf", 41, 2, shelf_stance=feasible.SHELF_STANCE)
    assert pool and all(p.scene.extra["stance"] == "espire" for p in pool)


@pytest.mark.slow
def test_the_server_arm_puts_the_book_into_the_farthest_flagged_slot():
    """The flag is not generous: the oracle's placement through the server's episode reaches the
    flagged slot farthest from the shoulder (seed 1: the top row's right slot, 0.98 m by the flag's test)."""
    from spatial_manip.espire.episode import Episode
    from spatial_manip.sim.tasks import Task

    scene = L.sample_shelf(np.random.default_rng(1), layout="grid", stance="espire")

    def reach(r):
        return float(np.linalg.norm(slot_wrist(r) - [0.0, 0.0, L.SIM_SHOULDER_Z_M]))

    slot = max((r for r in scene.regions if r.extra["reachable"]), key=reach)
    assert reach(slot) > 0.9          # well beyond the bench flag's 0.80 m
    held = scene.held_object().id
    task = Task(id="stance-probe", suite="place", action="place", family="Attribute/Index2D",
                family_key="place:Attribute/Index2D", aspect="Attribute", granularity="Fine", difficulty="medium",
                instruction=f"place the book at row {slot.row}, column {slot.col} of the shelf", program="",
                answer=[slot.id], golden_steps=4, scene="",
                check=[{"type": "released", "object": held}, {"type": "in_regions", "object": held, "regions": [slot.id]}],
                held=held, scene_kind="shelf", scene_seed=1)
    quiet = io.StringIO()
    with redirect_stdout(quiet), redirect_stderr(quiet):
        ep = Episode(task, scene, [None, None, None])
        try:
            # the arm's reach, not the world camera's view: the book released on the marked area's
            # floor, as far in as the generator sets a book down (act_on_goal clicks what the camera sees)
            area = ep.marked[1][0]
            width = float(scene.held_object().size[0])
            floor = area.center[2] - area.size[2] / 2
            ep._move_place(np.array([area.center[0] - area.size[0] / 2 + 0.01 + width / 2, area.center[1], floor]),
                           [0.0, 0.0, 0.0], on_area=True, oracle_rotation=True)     # its middle: in the box
            assert ep.goal_met(), f"the oracle did not put the book into {slot.id}"
        finally:
            ep.close()


def test_the_bench_server_writes_its_served_tasks_where_asked(tmp_path):
    """--tasks-out reaches the bench's server child, so espire-eval's cell configuration can be
    the served tasks' own file (the ESPIRE shelves differ from `spatial-manip tasks`' ones)."""
    import argparse

    from spatial_manip.bench.espire_bench import server_command
    from spatial_manip.commands.espire_server import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["--suite", "place", "--seed", "41", "--count", "8", "--tasks-out", str(tmp_path / "served")])
    cmd = server_command(args, 16)
    assert cmd[cmd.index("--tasks-out") + 1] == str(tmp_path / "served")
    assert "--tasks-out" not in server_command(p.parse_args(["--suite", "place"]), 16)


def test_a_pick_is_feasible_when_the_oracle_grasps_the_marked_book(monkeypatch):
    """Of a pick with several answer books, the oracle acts once, on the book the execution view
    marks (Episode.act_on_goal), and the task keeps every answer: another answer the arm cannot
    grasp does not drop it (ESPIRE's execution, and the drivers, act on the marked book)."""
    from spatial_manip.sim.tasks import Task

    played = []

    class Oracle:
        def __init__(self, task, scene, rotation, sensing):
            played.append(task)

        def act_on_goal(self):
            return True

        def close(self):
            pass

    monkeypatch.setattr(feasible, "Episode", Oracle)
    pick = Task(id="pick-0", suite="pick", action="pick", family="Relationship/Right", family_key="pick:Relationship/Right",
                aspect="Relationship", granularity="Coarse", difficulty="easy", instruction="take a book on the right",
                program="", answer=["book_2", "book_5"], golden_steps=4, scene="", check=[{"type": "held", "ids": ["book_2", "book_5"]}])
    assert feasible.oracle_completes(pick, None) == (True, "")
    assert played == [pick] and played[0].answer == ["book_2", "book_5"]
