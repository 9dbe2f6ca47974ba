"""Whether the arm reaches a place: one rule for the shelf slots a capture or the generator flags
(workspace/shelf.py, sim/layouts.ShelfStance) and the table places the planner chooses among
(reasoning/program.py), so the generator flags the slots a capture would and the planner prefers,
of the places the words allow, one the arm can reach."""
from __future__ import annotations

import numpy as np

SHOULDER = np.array([0.0, 0.0, 0.163])   # UR5e shoulder in the base frame
REACH_M = 0.80                           # the wrist within this of the shoulder: the place is reachable
TCP_TO_WRIST_M = 0.156                   # the wrist behind the TCP along the approach (2F-85 on a UR5e)


def wrist_reaches(wrist, reach_m: float = REACH_M) -> bool:
    """The wrist position (base frame, metres) is within `reach_m` of the shoulder."""
    return bool(np.linalg.norm(np.asarray(wrist, float) - SHOULDER) <= reach_m)


def reaches_from_above(top, base=(0.0, 0.0, 0.0), reach_m: float = REACH_M) -> bool:
    """A set-down from above whose TCP comes to `top` (the placed object's top, in the frame
    the robot's base stands at `base` in, axes level with it) keeps the wrist within reach."""
    wrist = np.asarray(top, float) - np.asarray(base, float) + np.array([0.0, 0.0, TCP_TO_WRIST_M])
    return wrist_reaches(wrist, reach_m)
