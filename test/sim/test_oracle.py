"""Oracle expert on generated tasks (kinematic fallback world; the MuJoCo run is a CLI benchmark)."""
import pytest

from spatial_manip.sim import oracle, tasks
from spatial_manip.sim.checker import check_task
from pools import pools_built_once


@pytest.fixture(scope="module", autouse=True)
def shared_pools():
    """Seed 5's pools of nine are test_tasks_reset's too, and the pick pool of three seed 1's is
    test_world_sim's: built once in a run."""
    with pools_built_once():
        yield


@pytest.mark.slow
def test_oracle_solves_a_small_suite_kinematically():
    items = tasks.generate("all", 40, seed=5, pool_size=9)      # 1 of 40 unsolved (a placement out of reach)
    results = [oracle.solve(t, s) for t, s in items]
    failed = [(r.task_id, r.failure_category, r.message) for r in results if not r.success]
    assert len(failed) <= 0.05 * len(results), failed
    assert all(r.steps <= r.golden_steps for r in results if r.success)


def test_wrong_answer_fails_the_checker():
    (t, s), = tasks.generate("pick", 1, seed=1, pool_size=3)
    assert t.action == "pick"
    world = oracle.KinematicWorld(s)
    wrong = next(o for o in s.objects if o.category == "book" and o.id not in t.answer)
    decoy = tasks.Task.from_dict({**t.to_dict(), "answer": [wrong.id]})
    plan = oracle.plan_pick(s, decoy, world.reachable, world.tcp_pose())
    for i, pose in enumerate(plan.poses):
        assert world.move_tcp(pose)
        if i == plan.grip_at:
            world.set_gripper(True)
    assert check_task(t.to_dict(), world.export_scene(), s).failure_category == "wrong_object"
