"""Which shelf slots the arm can put a book into: one rule for a captured shelf (workspace/shelf.py)
and a generated one (sim/layouts.ShelfStance), so the generator flags the slots a capture would."""
from __future__ import annotations

import numpy as np

SHOULDER = np.array([0.0, 0.0, 0.163])   # UR5e shoulder in the base frame
REACH_M = 0.80                           # the wrist within this of the shoulder: the slot is reachable


def wrist_reaches(wrist, reach_m: float = REACH_M) -> bool:
    """The wrist position (base frame, metres) is within `reach_m` of the shoulder."""
    return bool(np.linalg.norm(np.asarray(wrist, float) - SHOULDER) <= reach_m)
