"""The server's episodes: only tasks an oracle completes with the server's own arm.

ESPIRE filters its instances with cuRobo so that every task can be done by its robot; a task
the arm cannot do scores every driver as failing, and a benchmark of impossible tasks measures
the arm, not the driver. Here each candidate from the task generator is played once, in its own
world, by the oracle's action on the goal through the same Episode code a MOVE runs (grasp the
marked book; or release the held book at the point the oracle driver clicks on the highlighted
world view (the lowest point the marked placement area shows, in its middle across: a tall book
in a slot above the world camera cannot be put in from what the camera sees) / on the metric
area, with the nominal rotation; a pick on the book the execution view marks), and kept only when
ESPIRE's criteria then hold. Same seed, same kept tasks.
"""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from spatial_manip.errors import SpatialManipError
from spatial_manip.espire.episode import Episode
from spatial_manip.sim import tasks as gen
from spatial_manip.sim.sensing import IDEAL, SensingProfile

OVERSAMPLE = 4          # candidates generated per task asked for, at most
# the shelf's slot reachability flag measured against the server's arm (layouts.SHELF_STANCES):
# with the main bench's conservative flag a place task's answer could hold most of the slots the
# arm reaches, and a blind placer met it in about half the episodes
SHELF_STANCE = "espire"


def oracle_completes(task, scene, sensing: SensingProfile = IDEAL) -> tuple[bool, str]:
    """Whether the oracle's action through the server's episode (with the server's sensing
    profile: its arm errors reach the arm) on the goal the execution view marks meets the goal;
    (False, why). Of a pick with several answer books only the marked one (the nearest the arm
    grasps) must be graspable: ESPIRE's execution acts on the marked book, and so do its drivers
    and ours. Requiring every answer book dropped 26 of 74 generated pick tasks on seeds 53-55
    (session 35) whose marked book the arm grasps: a filter on ESPIRE's execution target keeps them."""
    quiet = io.StringIO()
    try:
        with redirect_stdout(quiet), redirect_stderr(quiet):    # MuJoCo's model-compiler notes
            ep = Episode(task, scene, [None, None, None], sensing)
            try:
                ok = ep.act_on_goal()
            finally:
                ep.close()
    except (SpatialManipError, ValueError) as e:
        return False, f"{type(e).__name__}: {e}"
    return ok, "" if ok else "the oracle's action did not meet the goal"


def feasible(items: list, log=None, sensing: SensingProfile = IDEAL) -> list:
    """The (task, scene) pairs the oracle completes, in order."""
    kept = []
    for task, scene in items:
        ok, why = oracle_completes(task, scene, sensing)
        if ok:
            kept.append((task, scene))
        elif log is not None:
            log(f"[espire] dropped {task.id} ({task.family_key}): {why}")
    return kept


def generate_feasible(suite: str, count: int, seed: int, pool_size: int | None = None, log=None,
                      sensing: SensingProfile = IDEAL) -> list:
    """`count` feasible tasks of a suite: the generator's sequence for a larger count (Algorithm
    1's balance over families and levels), candidates kept in order while the oracle completes
    them. Fewer only when OVERSAMPLE x count candidates hold fewer feasible ones (said in `log`)."""
    pool = pool_size or gen.default_pool_size(count)
    kept, tried = [], 0
    for task, scene in gen.Generator(suite, OVERSAMPLE * count, seed, pool, shelf_stance=SHELF_STANCE).generate():
        tried += 1
        ok, why = oracle_completes(task, scene, sensing)
        if ok:
            kept.append((task, scene))
            if len(kept) == count:
                break
        elif log is not None:
            log(f"[espire] dropped {task.id} ({task.family_key}): {why}")
    if log is not None:
        log(f"[espire] {len(kept)} of {tried} generated tasks are feasible for the server's arm")
    return kept
