"""What the user should do next in interactive calibration: how many more poses, and which
rotations and moves are still missing. A pure function of the flange poses taken so far.

Hand-eye is only determined by rotations about at least two non-parallel axes, and its error
shrinks with the angle between poses (Tsai and Lenz 1989): the usual advice is rotations of
30 degrees or more about each of the flange's three axes, and some translation in every
direction, over 12 or more poses.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

AXIS_HINTS = {
    "x": "tilt the tool about the flange x axis (wrist 1 / wrist 2)",
    "y": "tilt the tool about the flange y axis (wrist 1 / wrist 2)",
    "z": "turn the flange about its own z axis (wrist 3)",
}


@dataclass(frozen=True)
class Guidance:
    samples: int
    more_poses: int
    rotation_span_deg: dict           # flange axis -> span of rotation about it so far
    translation_span_m: dict          # base axis -> span of flange positions along it
    missing: list = field(default_factory=list)   # one sentence per thing to do

    @property
    def done(self) -> bool:
        return self.more_poses == 0 and not self.missing

    def message(self) -> str:
        if self.done:
            return f"{self.samples} poses with enough rotation and travel: you can solve now (or add more)"
        head = f"{self.samples} poses so far; take at least {self.more_poses} more"
        return head + (":\n  - " + "\n  - ".join(self.missing) if self.missing else "")


def guidance(T_base_tool0: list, *, min_samples: int = 12, min_rotation_deg: float = 30.0,
             min_translation_m: float = 0.10) -> Guidance:
    """Guidance from the flange poses taken so far (any number, even none)."""
    n = len(T_base_tool0)
    rot_span = {a: 0.0 for a in "xyz"}
    trans_span = {a: 0.0 for a in "xyz"}
    if n >= 2:
        R = Rotation.from_matrix([np.asarray(T)[:3, :3] for T in T_base_tool0])
        # each pose's rotation from the mean orientation, in the flange frame, as axis * angle
        rel = (R.mean().inv() * R).as_rotvec(degrees=True)
        rot_span = {a: float(np.ptp(rel[:, k])) for k, a in enumerate("xyz")}
        p = np.array([np.asarray(T)[:3, 3] for T in T_base_tool0])
        trans_span = {a: float(np.ptp(p[:, k])) for k, a in enumerate("xyz")}
    missing = [f"{AXIS_HINTS[a]}: the poses span {rot_span[a]:.0f} deg about it, aim for {min_rotation_deg:.0f} "
               f"(+-{min_rotation_deg / 2:.0f} deg around the middle)" for a in "xyz" if rot_span[a] < min_rotation_deg]
    missing += [f"move the flange along the base {a} axis: positions span {100 * trans_span[a]:.0f} cm, "
                f"aim for {100 * min_translation_m:.0f} cm" for a in "xyz" if trans_span[a] < min_translation_m]
    more = max(min_samples - n, 0)
    if missing and more == 0:
        more = 2          # each missing motion needs at least a pose at either end
    return Guidance(n, more, rot_span, trans_span, missing)
