"""Whether the arm reaches a place: one rule for the shelf slots a capture or the generator flags
(workspace/shelf.py, sim/layouts.ShelfStance) and the table places the planner chooses among
(reasoning/program.py), so the generator flags the slots a capture would and the planner prefers,
of the places the words allow, one the arm can reach. The arm model's numbers come from its
kinematics (control.kinematics.URKinematics.reach: the shoulder's height is the model's DH d1, a
UR5's 8.9 cm, a UR5e's 16.25 cm) for the planner and a capture (arm.yaml's arm.model), and from
the simulated UR5e's own model for the task generator (sim/layouts.SIM_SHOULDER_Z_M)."""
from __future__ import annotations

import dataclasses

import numpy as np

REACH_M = 0.80                           # the wrist within this of the shoulder: the place is reachable
TCP_TO_WRIST_M = 0.156                   # the wrist behind the TCP along the approach (2F-85 on a UR5e)


@dataclasses.dataclass(frozen=True)
class Reach:
    """The reach rule of one arm: its shoulder `shoulder_z_m` above its base (on the base's
    vertical axis, as on every UR), the wrist within `reach_m` of it."""
    shoulder_z_m: float
    reach_m: float = REACH_M

    @property
    def shoulder(self) -> np.ndarray:
        """The shoulder in the base frame (metres)."""
        return np.array([0.0, 0.0, self.shoulder_z_m])

    def wrist_reaches(self, wrist) -> bool:
        """The wrist position (base frame, metres) is within reach_m of the shoulder."""
        return bool(np.linalg.norm(np.asarray(wrist, float) - self.shoulder) <= self.reach_m)

    def reaches_from_above(self, top, base=(0.0, 0.0, 0.0)) -> bool:
        """A set-down from above whose TCP comes to `top` (the placed object's top, in the frame
        the robot's base stands at `base` in, axes level with it) keeps the wrist within reach."""
        wrist = np.asarray(top, float) - np.asarray(base, float) + np.array([0.0, 0.0, TCP_TO_WRIST_M])
        return self.wrist_reaches(wrist)
