"""A place task is not met by putting the book in whichever slot it can go (ESPIRE Algorithm 1
keeps only non-trivial tasks): some slot the held book can go to (reachable, with room) does not
satisfy it, so a driver that ignores the instruction is not scored as following it."""
import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from spatial_manip.sim import tasks

POSE_ONLY = ("Orientation/Vertical", "Orientation/Flat")     # about the pose: every slot may do


@pytest.mark.parametrize("seed", [41])
def test_every_place_task_has_a_slot_the_book_can_go_that_is_wrong(seed):
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):     # MuJoCo's compiler notes
        items = tasks.generate("place", 27, seed, pool_size=9)
    assert len(items) == 27
    for task, scene in items:
        pose = next((c["pose"] for c in task.check if c["type"] == "pose"), "upright")
        can_go = {r.id for r in tasks.feasible_slots(scene, [r.id for r in scene.regions], pose)}
        right = can_go & set(task.answer)
        assert right, (task.id, task.family, "no answer slot the book can go to")
        if task.family not in POSE_ONLY:
            assert can_go - right, (task.id, task.family, f"every slot the book can go to is an answer: {sorted(can_go)}")
