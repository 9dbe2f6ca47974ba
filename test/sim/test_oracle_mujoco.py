"""Oracle expert in the MuJoCo world (physics): one pick, one shelf place (upright and flat) and
one metric placement, each judged by the checker on the simulated final state; plus the
placement planner's candidates on their own (no physics)."""
import numpy as np
import pytest

from spatial_manip.sim import oracle, placement, tasks

pytest.importorskip("mujoco")


def _first(suite: str, seed: int, pred, n: int = 12):
    for t, s in tasks.generate(suite, n, seed=seed, pool_size=6):
        if pred(t):
            return t, s
    pytest.skip(f"no matching task in {n} of suite {suite!r}")


@pytest.mark.slow
@pytest.mark.parametrize("suite,seed,pred", [
    ("pick", 3, lambda t: True),
    # place seed 4 (upright, "a slot right below the ceramic jar"): since the generator's draw changed
    # (71af7a5) seed 3's first upright place is one whose accepted placements the arm cannot reach
    # (the generator's reachability test is IK only; the oracle says so: UNREACHABLE)
    ("place", 4, lambda t: not any(c.get("pose") == "flat" for c in t.check)),
    ("place", 5, lambda t: any(c.get("pose") == "flat" for c in t.check)),
    ("metric", 3, lambda t: True),
], ids=["pick", "place-upright", "place-flat", "metric"])
def test_oracle_solves_in_mujoco(suite, seed, pred):
    t, s = _first(suite, seed, pred, n=40 if suite == "place" else 12)
    r = oracle.solve(t, s, oracle.SimWorldAdapter)
    assert r.success, (t.id, t.instruction, r.failure_category, r.message)
    assert r.golden_steps <= r.steps <= r.golden_steps + 1      # one re-alignment step at most


def test_slot_candidates_keep_the_gripper_in_front_and_pass_the_ghost_check():
    t, s = next((t, s) for t, s in tasks.generate("place", 6, seed=2, pool_size=3))
    held = s.held_object()
    T_ee = np.asarray(s.extra["ee_pose"])
    offset = np.linalg.inv(T_ee) @ oracle._T(held.rotation, held.center)
    pose = next((c["pose"] for c in t.check if c["type"] == "pose"), "upright")
    slot = tasks.feasible_slots(s, t.answer, pose)[0]
    cands = placement.slot_candidates(s, slot, held.size, pose, offset)
    assert cands
    for T_book, pre, retreat, _ in cands:
        T_tcp = T_book @ np.linalg.inv(offset)
        assert T_tcp[0, 3] < T_book[0, 3]                  # the gripper on the robot's side
        assert T_tcp[0, 2] > 0.9                            # approaching along +x
        assert pre[0] < 0 and retreat[0] < 0               # comes from and leaves to the front
        ok, msg = placement.ghost_ok(s, held.id, T_book, t.check)
        assert ok, msg
