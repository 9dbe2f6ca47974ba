"""Reflection after a failed attempt (ESPIRE Algorithms 2b and 3b): what the next attempt must
redo, decided by what is in the gripper.

- The object is still held (a place that stopped short, an unreachable place pose): the next
  attempt plans the PLACE again, on a new look, with the set-down poses that failed tried last,
  and never re-runs the pick, whose words no longer describe anything on the table.
- Nothing is held (a grasp that closed on nothing, a dropped object, a wrong placement): the next
  attempt re-perceives and plans the PICK again; objects whose grasps all failed go last, and of
  the objects the words describe on the new look, those they described on the first look come
  first (`named_ids`): a failed grasp pushes what it touched, and a rank or distance that tied or
  changed only because of that push must not hand the pick to another object. When none of them
  is among what the words describe on the new look, the retry refuses (`keep_described`): the
  object the words meant is gone or no longer read as such, and the newcomers are objects the
  words did not describe on the untouched table (objects-63-00013: the first look's only mug
  fell out of its name, which the new look gave a mug 0.7 m away, and the retry took that one).

The pipeline calls `reflect` after each retryable failure and hands the result to the reasoning
port; the trace records it. Nothing here moves the arm or reads the clock.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial_manip.errors import ErrorCode, SpatialManipError, TargetNotFoundError

RETRY_PLACE = "place"
RETRY_PICK = "pick"
# How far a failed grasp may push or tip the object it touched. An object under the same name
# farther than this from where the first look saw it is another one, which the new look's
# perception gave that name (objects-63-00013: 0.7 m away).
PUSHED_MAX_M = 0.12


@dataclass(frozen=True)
class Reflection:
    attempt: int                                   # the attempt that failed (1-based)
    error_code: str
    reason: str
    holding: str | None                            # the object in the gripper after the failure
    failed_grasp_ids: tuple[str, ...] = ()         # objects whose grasps failed, every attempt so far
    failed_place_poses: tuple[np.ndarray, ...] = ()   # 4x4 object poses whose set-down failed
    named_ids: tuple[str, ...] = ()                # the pick's candidates on the first look (the untouched table)
    # where the first look saw each of named_ids (None where unknown, or once an attempt carried
    # the object away: a place that failed after the pick)
    named_centres: tuple[tuple[float, float, float] | None, ...] = ()
    named_categories: tuple[str | None, ...] = ()      # and what each was read as (a book, a mug)

    @property
    def retry(self) -> str:
        """RETRY_PLACE when the object is still held, else RETRY_PICK."""
        return RETRY_PLACE if self.holding else RETRY_PICK

    @property
    def summary(self) -> str:
        if self.retry == RETRY_PLACE:
            return (f"{self.holding} is still in the gripper: planning the place again "
                    f"({len(self.failed_place_poses)} failed set-down pose(s) tried last), not the pick")
        return "nothing is held: looking again and planning the pick again" + (
            f" ({', '.join(self.failed_grasp_ids)} tried last)" if self.failed_grasp_ids else "")

    def to_dict(self) -> dict:
        return {"attempt": self.attempt, "error_code": self.error_code, "reason": self.reason,
                "holding": self.holding, "retry": self.retry, "summary": self.summary,
                "failed_grasp_ids": list(self.failed_grasp_ids),
                "failed_place_poses": [np.asarray(T).tolist() for T in self.failed_place_poses],
                "named_ids": list(self.named_ids),
                "named_centres": [None if c is None else [round(v, 4) for v in c] for c in self.named_centres]}


def reflect(error: SpatialManipError, *, attempt: int, holding: str | None, pick_id: str | None = None,
            tried_place_pose: np.ndarray | None = None, previous: Reflection | None = None,
            pick_targets=(), scene=None) -> Reflection:
    """The reflection on attempt `attempt`, which failed with `error` while trying to pick
    `pick_id` (of `pick_targets`, every object the words described, on `scene`, the look it was
    planned on) and/or set the held object down at `tried_place_pose`; `holding` is what the
    gripper holds now. History (failed grasps and place poses, and the first look's candidates and
    where they stood) carries over from `previous`."""
    if previous and previous.named_ids:
        named, centres, kinds = previous.named_ids, previous.named_centres, previous.named_categories
    else:
        named = tuple(pick_targets)
        seen = [scene.get(i) if scene is not None and i in scene.ids() else None for i in named]
        centres = tuple(None if o is None else tuple(float(v) for v in o.center) for o in seen)
        kinds = tuple(None if o is None else o.category for o in seen)
    if tried_place_pose is not None or holding:
        centres = (None,) * len(named)          # the object was carried: where it stood says nothing now
    grasps = tuple(previous.failed_grasp_ids) if previous else ()
    places = tuple(previous.failed_place_poses) if previous else ()
    if error.code == ErrorCode.GRASP_FAILED and pick_id and pick_id not in grasps:
        grasps += (pick_id,)
    if holding and tried_place_pose is not None:
        places += (np.asarray(tried_place_pose, float),)
    return Reflection(attempt, error.code.value, error.message, holding, grasps, places, named, centres, kinds)


def keep_described(reflection: Reflection, scene, pick_ids: list[str]) -> tuple[list[str], str | None]:
    """Of the objects the words describe on a retry's new look (`pick_ids`, the planner's answer on
    `scene`), those they described on the first look (`found_now`: found where the first look saw them,
    under whatever name the new look gives them). Returns (the ids kept, a note when some were
    dropped). Raises TargetNotFoundError when none is left: what the words meant is gone or no
    longer read as such, and taking another object would take one the words did not describe."""
    if not reflection.named_ids:
        return list(pick_ids), None
    now = {found_now(scene, i, c, k) for i, c, k in zip(reflection.named_ids, reflection.named_centres,
                                                   reflection.named_categories or (None,) * len(reflection.named_ids))}
    now.discard(None)
    kept = [i for i in pick_ids if i in now]
    first = ", ".join(reflection.named_ids)
    if not kept:
        found = f" (found now as {', '.join(sorted(now))})" if now else " (not found near where it stood)"
        raise TargetNotFoundError(
            f"on the first look the words described {first}{found}; on this look they describe "
            f"{', '.join(pick_ids) or 'nothing'}: refusing to take an object the words did not describe; "
            "look at the table and ask again")
    note = None
    if len(kept) < len(pick_ids):
        note = (f"kept to {', '.join(kept)} of {', '.join(pick_ids)}: the words described {first} "
                "before the first attempt moved anything")
    return kept, note


def found_now(scene, obj_id: str, centre, category: str | None) -> str | None:
    """The id on `scene` of the object the first look saw as `obj_id` at `centre`: the object of its
    category nearest to where it stood, within PUSHED_MAX_M (a new look may name one book
    book_blue_small and then book_blue_medium, pick-59-00007); by name alone when where it stood is
    unknown (carried off); None when nothing of its kind is near there (objects-63-00013: its name
    was on a mug 0.7 m away)."""
    if centre is None or scene is None:
        return obj_id
    at = np.asarray(centre, float)
    near = [(float(np.linalg.norm(o.center - at)), o.id) for o in scene.objects
            if category is None or o.category == category]
    near = [(d, i) for d, i in near if d <= PUSHED_MAX_M]
    return min(near)[1] if near else None
