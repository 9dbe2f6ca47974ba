"""Reflection after a failed attempt (ESPIRE Algorithms 2b and 3b): what the next attempt must
redo, decided by what is in the gripper.

- The object is still held (a place that stopped short, an unreachable place pose): the next
  attempt plans the PLACE again, on a new look, with the set-down poses that failed tried last,
  and never re-runs the pick, whose words no longer describe anything on the table.
- Nothing is held (a grasp that closed on nothing, a dropped object, a wrong placement): the next
  attempt re-perceives and plans the PICK again; objects whose grasps all failed go last, and of
  the objects the words describe on the new look, those they described on the first look come
  first (`named_ids`): a failed grasp pushes what it touched, and a rank or distance that tied or
  changed only because of that push must not hand the pick to another object.

The pipeline calls `reflect` after each retryable failure and hands the result to the reasoning
port; the trace records it. Nothing here moves the arm or reads the clock.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial_manip.errors import ErrorCode, SpatialManipError

RETRY_PLACE = "place"
RETRY_PICK = "pick"


@dataclass(frozen=True)
class Reflection:
    attempt: int                                   # the attempt that failed (1-based)
    error_code: str
    reason: str
    holding: str | None                            # the object in the gripper after the failure
    failed_grasp_ids: tuple[str, ...] = ()         # objects whose grasps failed, every attempt so far
    failed_place_poses: tuple[np.ndarray, ...] = ()   # 4x4 object poses whose set-down failed
    named_ids: tuple[str, ...] = ()                # the pick's candidates on the first look (the untouched table)

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
                "named_ids": list(self.named_ids)}


def reflect(error: SpatialManipError, *, attempt: int, holding: str | None, pick_id: str | None = None,
            tried_place_pose: np.ndarray | None = None, previous: Reflection | None = None,
            pick_targets=()) -> Reflection:
    """The reflection on attempt `attempt`, which failed with `error` while trying to pick
    `pick_id` (of `pick_targets`, every object the words described) and/or set the held object
    down at `tried_place_pose`; `holding` is what the gripper holds now. History (failed grasps
    and place poses, and the first look's candidates) carries over from `previous`."""
    named = tuple(previous.named_ids) if previous and previous.named_ids else tuple(pick_targets)
    grasps = tuple(previous.failed_grasp_ids) if previous else ()
    places = tuple(previous.failed_place_poses) if previous else ()
    if error.code == ErrorCode.GRASP_FAILED and pick_id and pick_id not in grasps:
        grasps += (pick_id,)
    if holding and tried_place_pose is not None:
        places += (np.asarray(tried_place_pose, float),)
    return Reflection(attempt, error.code.value, error.message, holding, grasps, places, named)
