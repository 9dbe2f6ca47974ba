"""Whether the arm reaches a place: one rule for the shelf slots the generator flags
(sim/layouts.ShelfStance) and the slots and table places the planner chooses among
(reasoning/program.py), so the generator flags the slots the planner would and the planner
prefers, of the places the words allow, one the arm can reach. The arm model's numbers come from
its kinematics (control.config.load_reach: the shoulder's height is the model's DH d1,
a UR5's 8.9 cm, a UR5e's 16.25 cm) for the planner (the launched arm's: the agent passes it), and
from the simulated UR5e's own model for the task generator (sim/layouts.SIM_SHOULDER_Z_M).

A reach figure is measured on one arm in one cell, and a set-down is reached only where the arm's
safety envelope would let its TCP go: arm.yaml gives each arm its own figures (the `reach`
section: the simulated UR5e's slot reach as measured through it, a real cell's the cautious
from-above figure until measured on the robot) and `load_reach` hands the rule the launched
arm's `safety.workspace_*` box, so the planner never prefers a place the envelope then refuses
(a slot whose wrist is 0.925 m from the shoulder but whose set-down TCP is at x = 1.06, beyond a
cell capped at 0.95: UNREACHABLE, where an allowed slot was on offer)."""
from __future__ import annotations

import dataclasses

import numpy as np

# the wrist within this of the shoulder: a set-down from above is reachable (the wrist hangs over the
# placed object's top; a place 0.93 m out on the table was UNREACHABLE, objects-93-00011)
REACH_M = 0.80
# ... and a set-down into a slot, the forearm level: the oracle through the simulated UR5e (ESPIRE's
# server) put a book into slots up to 0.98 m by this rule and into none from 1.045 m. The simulated
# arm's figure (arm.yaml's sim reach section says it again, test_reach keeps them equal); a real
# cell's arm.yaml gives its own, the from-above figure until measured on the robot
SLOT_REACH_M = 1.0
TCP_TO_WRIST_M = 0.156                   # the wrist behind the TCP along the approach (2F-85 on a UR5e)
SLOT_ENTRY_M = 0.06                      # a set-down into a slot: the TCP this far past its front face,
WRIST_ABOVE_SLOT_FLOOR_M = 0.16          # the wrist this high over the slot's floor,
SLOT_CEILING_CLEARANCE_M = 0.05          # and at least this far under its ceiling


@dataclasses.dataclass(frozen=True)
class Reach:
    """The reach rule of one arm: its shoulder `shoulder_z_m` above its base (on the base's
    vertical axis, as on every UR), the wrist within `reach_m` of it for a set-down from above,
    within `slot_reach_m` for one into a slot, and the set-down's TCP inside the workspace box.
    The box is the cell's hard limit (the safety envelope refuses any TCP outside it), the figures
    what was measured on that arm: both are the launched arm's, from its arm.yaml (`load_reach`)."""
    shoulder_z_m: float
    reach_m: float = REACH_M
    slot_reach_m: float = SLOT_REACH_M
    # the TCP's allowed box in the base frame (arm.yaml's safety.workspace_min_m / _max_m): a
    # set-down whose TCP lies outside it is not reached; None: no box (the generator's stance)
    workspace_min_m: tuple | None = None
    workspace_max_m: tuple | None = None

    def __post_init__(self):
        for name in ("reach_m", "slot_reach_m"):
            if not (np.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise ValueError(f"reach: {name} must be a positive distance in metres, got {getattr(self, name)!r}")
        if (self.workspace_min_m is None) != (self.workspace_max_m is None):
            raise ValueError("reach: give both workspace_min_m and workspace_max_m, or neither")
        if self.workspace_min_m is not None and not (
                len(self.workspace_min_m) == len(self.workspace_max_m) == 3
                and all(lo < hi for lo, hi in zip(self.workspace_min_m, self.workspace_max_m))):
            raise ValueError(f"reach: the workspace box needs 3 minimums below 3 maximums, got "
                             f"{self.workspace_min_m} / {self.workspace_max_m}")

    @property
    def shoulder(self) -> np.ndarray:
        """The shoulder in the base frame (metres)."""
        return np.array([0.0, 0.0, self.shoulder_z_m])

    def wrist_reaches(self, wrist, reach_m: float | None = None) -> bool:
        """The wrist position (base frame, metres) is within `reach_m` (default: reach_m) of the shoulder."""
        return bool(np.linalg.norm(np.asarray(wrist, float) - self.shoulder) <= (self.reach_m if reach_m is None else reach_m))

    def tcp_allowed(self, tcp) -> bool:
        """The TCP position (base frame, metres) lies inside the workspace box (bounds inclusive,
        as the safety envelope's), or there is no box."""
        if self.workspace_min_m is None:
            return True
        tcp = np.asarray(tcp, float)
        return bool(np.all(tcp >= np.asarray(self.workspace_min_m, float))
                    and np.all(tcp <= np.asarray(self.workspace_max_m, float)))

    def reaches_from_above(self, top, base=(0.0, 0.0, 0.0)) -> bool:
        """A set-down from above whose TCP comes to `top` (the placed object's top, in the frame
        the robot's base stands at `base` in, axes level with it) keeps the wrist within reach
        and the TCP inside the workspace box."""
        tcp = np.asarray(top, float) - np.asarray(base, float)
        return self.wrist_reaches(tcp + np.array([0.0, 0.0, TCP_TO_WRIST_M])) and self.tcp_allowed(tcp)

    def reaches_into(self, slot, base=(0.0, 0.0, 0.0), reach_m: float | None = None) -> bool:
        """A set-down into `slot` (a level box: centre, size, rotation with its depth on x) through
        the face nearest the robot's base `base` keeps the wrist within `reach_m` (default
        slot_reach_m, the farthest the arm goes into a slot) and the TCP inside the workspace box:
        the TCP SLOT_ENTRY_M past that face, the wrist TCP_TO_WRIST_M behind it,
        WRIST_ABOVE_SLOT_FLOOR_M over the slot's floor (SLOT_CEILING_CLEARANCE_M under its ceiling
        at most)."""
        base = np.asarray(base, float)
        return self.wrist_reaches(slot_wrist(slot, base) - base, self.slot_reach_m if reach_m is None else reach_m) \
            and self.tcp_allowed(slot_tcp(slot, base) - base)

    def slot_tier(self, slot, base=(0.0, 0.0, 0.0)) -> int:
        """0: the wrist goes into `slot` within reach_m (the forearm well short of its stretch);
        1: only within slot_reach_m (near full stretch, where a flat set-down may need a wrist flip:
        books place 109's bottom slot 0.97 m out); 2: out of reach (or its TCP outside the box)."""
        if self.reaches_into(slot, base, self.reach_m):
            return 0
        return 1 if self.reaches_into(slot, base) else 2


def _slot_entry(slot, base) -> tuple[np.ndarray, np.ndarray, float]:
    """The middle of `slot`'s face nearest `base`, the level unit vector from it toward `base`,
    and the height of the wrist and TCP entering it (`Reach.reaches_into`)."""
    centre, size = np.asarray(slot.center, float), np.asarray(slot.size, float)
    depth = np.asarray(slot.rotation, float)[:, 0] * np.array([1.0, 1.0, 0.0])
    depth /= np.linalg.norm(depth)
    toward = depth if (np.asarray(base, float) - centre) @ depth > 0 else -depth
    floor, ceiling = centre[2] - size[2] / 2, centre[2] + size[2] / 2
    return centre + toward * size[0] / 2, toward, min(floor + WRIST_ABOVE_SLOT_FLOOR_M, ceiling - SLOT_CEILING_CLEARANCE_M)


def slot_tcp(slot, base=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Where the TCP is as a set-down enters `slot` from the robot's side: SLOT_ENTRY_M past its front face."""
    front, toward, z = _slot_entry(slot, base)
    return _entered(front, toward, z, -SLOT_ENTRY_M)


def slot_wrist(slot, base=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Where the wrist is as a set-down enters `slot` from the robot's side: TCP_TO_WRIST_M behind the TCP."""
    front, toward, z = _slot_entry(slot, base)
    return _entered(front, toward, z, TCP_TO_WRIST_M - SLOT_ENTRY_M)


def _entered(front: np.ndarray, toward: np.ndarray, z: float, out_m: float) -> np.ndarray:
    """The point `out_m` from the slot's front face toward the robot (inward when negative), at height z."""
    p = front + toward * out_m
    return np.array([p[0], p[1], z])
