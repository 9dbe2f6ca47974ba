"""ContactMonitor against real MuJoCo (issue #21): the gripper pressing on a book that is not the
target counts once per touch under the phase it happened in; the target, its support and a held
book set down on a fixture do not count; standing still counts nothing; the step hook changes no
physics."""
import numpy as np
import pytest

from spatial_manip.transforms import make_transform
from spatial_manip.sim import layouts as L
from spatial_manip.sim.contacts import ContactMonitor
from spatial_manip.sim.world import HOME_Q, SimConfig, SimWorld

CFG = SimConfig(width=320, height=240)


def _scene():
    # table, book_1 lying flat on its support_1 (overhanging it), nothing else
    return L.sample_tabletop(np.random.default_rng(0), n_books=1, poses=("flat",), size_classes=("large",),
                             n_near=0, n_distant=0)


@pytest.fixture()
def world():
    with SimWorld(_scene(), config=CFG, seed=0) as w:
        yield w


def _book_top(w) -> tuple[np.ndarray, float]:
    T = w.object_pose("book_1")
    top = T[2, 3] + 0.5 * float(np.abs(T[:3, :3] @ w.scene.get("book_1").size)[2])
    return T[:3, 3], top


def _press_on_book(w, mon, phase: str = "approach") -> None:
    """Open, come over book_1 (phase pre_grasp), fingertips down onto its top (`phase`), back up
    (phase lift)."""
    c, top = _book_top(w)
    above = make_transform(L.R_TCP_DOWN, [c[0], c[1], top + 0.10])
    on = make_transform(L.R_TCP_DOWN, [c[0], c[1], top - 0.005])
    w.set_gripper(0.085)
    mon.set_phase("pre_grasp")
    assert w.move_tcp(above, speed_mps=0.3)
    mon.set_phase(phase)
    w.move_tcp(on, speed_mps=0.1)
    w.step(200)                                   # resting on it: still the same touch
    mon.set_phase("lift")
    assert w.move_tcp(above, speed_mps=0.2)


def test_the_gripper_pressing_on_a_non_target_book_counts_once_per_touch(world):
    mon = ContactMonitor(world)
    mon.reset({"table"})                          # the task is about something else
    _press_on_book(world, mon)
    assert mon.counts() == {"pre_grasp": 0, "approach": 1, "lift": 0}
    (e,) = mon.events()
    assert e["phase"] == "approach" and e["kind"] == "gripper"
    assert e["bodies"][0].startswith("gripper_") and e["bodies"][1] == "book_1"
    c, top = _book_top(world)
    assert abs(e["position"][2] - top) < 0.01 and np.linalg.norm(np.subtract(e["position"][:2], c[:2])) < 0.1
    assert e["time_s"] > 0
    # apart, then down again: a second touch, in the phase set then
    _press_on_book(world, mon, phase="approach_again")
    assert mon.counts() == {"pre_grasp": 0, "approach": 1, "lift": 0, "approach_again": 1}
    assert mon.total() == 2 and [e["phase"] for e in mon.events()] == ["approach", "approach_again"]
    mon.close()
    assert world.step_callbacks == []


def test_touching_the_target_or_its_support_and_standing_still_count_nothing(world):
    mon = ContactMonitor(world)
    world.reset()                                 # a new model under the monitor: it re-indexes
    mon.reset({"book_1", "support_1"})
    assert mon.counts() == {} and mon.events() == []
    world.step(250)                               # no motion: the book resting on its support
    assert mon.counts() == {} and mon.events() == []
    _press_on_book(world, mon)
    assert mon.counts() == {"pre_grasp": 0, "approach": 0, "lift": 0} and mon.events() == []
    with pytest.raises(TypeError):
        mon.reset("book_1")


def test_a_held_book_on_its_support_counts_while_carried_not_while_set_down(world):
    w = world
    mon = ContactMonitor(w)
    mon.reset({"book_1"})                         # the support is not allowed: only the place phases allow it
    book = w.scene.get("book_1")
    T_b = w.object_pose("book_1")
    R, (_, H, Lb) = T_b[:3, :3], book.size
    z_app, y_close = -R[:, 2], R[:, 1]            # grasp the overhang, approaching along the book
    grasp = make_transform(np.column_stack([np.cross(y_close, z_app), y_close, z_app]),
                           T_b[:3, 3] + R[:, 2] * (Lb / 2 - 0.025))
    pre = grasp.copy()
    pre[:3, 3] -= z_app * 0.10
    up = grasp.copy()
    up[2, 3] += 0.10
    steps = [("pre_grasp", lambda: (w.set_gripper(H + 0.03), w.move_tcp(pre, speed_mps=0.3))[1]),
             ("approach", lambda: w.move_tcp(grasp, speed_mps=0.1)),
             ("close", w.close_gripper),          # it rested on its support already: not a new touch
             ("lift", lambda: w.move_tcp(up, speed_mps=0.1))]
    for name, fn in steps:
        mon.set_phase(name)
        assert fn(), name
    assert w.held_object_id() == "book_1" and mon.total() == 0
    mon.set_phase("carry")                        # back down onto the support while carrying: counted
    w.move_tcp(grasp, speed_mps=0.1)
    assert mon.counts()["carry"] == 1
    (e,) = mon.events()
    assert e["kind"] == "held" and e["bodies"][0] == "book_1" and e["bodies"][1] in ("support_1", "table")
    mon.set_phase("lift")
    assert w.move_tcp(up, speed_mps=0.1)
    mon.set_phase("descend")                      # setting it down on a fixture: intended
    w.move_tcp(grasp, speed_mps=0.1)
    mon.set_phase("open")
    w.set_gripper(0.085)
    assert w.held_object_id() is None
    assert mon.counts() == {"pre_grasp": 0, "approach": 0, "close": 0, "lift": 0, "carry": 1, "descend": 0, "open": 0}


def test_the_step_hook_runs_once_per_physics_step_and_changes_no_physics():
    q = HOME_Q + np.array([0.3, 0.2, -0.2, 0.1, 0.2, 0.3])
    with SimWorld(_scene(), config=CFG, seed=0) as plain, SimWorld(_scene(), config=CFG, seed=0) as hooked:
        calls = []
        hooked.step_callbacks.append(lambda w: calls.append(w.data.time))
        t0 = hooked.data.time
        hooked.step(7)
        assert len(calls) == 7 and calls[-1] == pytest.approx(t0 + 7 * hooked.model.opt.timestep)
        plain.step(7)
        assert plain.move_joints(q) and hooked.move_joints(q)
        n = round((hooked.data.time - t0) / hooked.model.opt.timestep)
        assert len(calls) == n
        assert np.array_equal(plain.data.qpos, hooked.data.qpos) and plain.data.time == hooked.data.time


def test_the_robots_parts_are_classified_once_for_every_check(world):
    """SimWorld.robot_parts is the one classification the start checks and the monitor use: every
    body but the world and the scene's objects, the gripper by name, the arm by its joints."""
    m, parts = world.model, world.robot_parts
    by_name = {m.body(b).name: part for b, part in parts.items()}
    assert by_name["base"] == "base" and by_name["wrist_3_link"] == "arm" and by_name["forearm_link"] == "arm"
    assert by_name["gripper_left_pad"] == "gripper" and "obj:book_1" not in by_name
    assert set(parts) == set(range(1, m.nbody)) - {m.body("obj:book_1").id}
