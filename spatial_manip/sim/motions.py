"""The simulated arm's motions: what sim_node serves as ArmMotion PICK / PLACE / HOME /
WAYPOINTS, as plain calls on a `sim.world.SimWorld` (no ROS), so they run in-process too.

The world's Cartesian moves stop on contact. A pick or place whose fingers brush the object or
its support and stop a few centimetres short still goes on (PRE_GRASP_TOL_M, GRASP_TOL_M);
anything further off fails and names its phase.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from spatial_manip.control.primitives import back_off, raised_poses
from spatial_manip.sim.world import HOME_Q

PRE_GRASP_TOL_M = 0.03   # a pick goes on from a pre-grasp / grasp pose missed by at most this
GRASP_TOL_M = 0.02
OPEN_M = 0.085

Phase = Callable[[str, float, Callable[[], bool]], bool]   # (name, progress, step) -> step's result


def _just_run(name: str, progress: float, fn: Callable[[], bool]) -> bool:
    return fn()


class SimMotions:
    def __init__(self, world, home_q=HOME_Q, *, speed_mps: float = 0.25):
        self.world, self.home_q, self.speed = world, np.asarray(home_q, float), float(speed_mps)

    def held(self) -> bool:
        return self.world.held_object_id() is not None

    def home(self, cancel=None, phase: Phase = _just_run) -> bool:
        """Fold away from the ready pose by way of the arm held upright (`_fold_path`)."""
        def fold() -> bool:
            if self._near(self.home_q, 0.05):
                return self.world.move_joints(self.home_q, cancel=cancel)
            return self._unfold(cancel) and self._through(self._fold_path(), cancel)
        return bool(phase("home", 0.0, fold))

    def waypoints(self, poses, speed, cancel=None, phase: Phase = _just_run) -> bool:
        n = max(len(poses), 1)
        for i, T in enumerate(poses):
            if not phase("waypoint", i / n, lambda T=T: self.world.move_tcp(T, speed_mps=speed, cancel=cancel)):
                return False
        return True

    def pick(self, T, *, width, approach, lift, direction=None, speed=None, cancel=None,
             phase: Phase = _just_run) -> bool:
        """Unfold, come down onto the pre-grasp (`approach` back along `direction`, default the
        TCP z axis) from `lift` above it, approach, close, lift. True when every phase ran (the
        caller asks `held()`); a missed grasp opens the gripper and backs off."""
        w, speed, cancel = self.world, speed or self.speed, cancel or (lambda: False)
        pre = back_off(T, approach, direction)
        hover = self._raised(pre, lift)     # come down onto the pre-grasp: a sideways path could sweep the table
        steps = [("ready", lambda: self._unfold(cancel)),
                 ("hover", lambda: self._swing_to(hover, speed, cancel)),
                 ("pre_grasp", lambda: (w.set_gripper(width or OPEN_M),
                                        self._move_near(pre, speed, cancel, PRE_GRASP_TOL_M))[1]),
                 ("approach", lambda: self._move_near(T, speed * 0.5, cancel, GRASP_TOL_M)),
                 ("close", lambda: w.close_gripper() or True),
                 ("lift", lambda: self._move_near(self._raised(T, lift), speed * 0.5, cancel, PRE_GRASP_TOL_M))]
        if not self._run(steps, phase):
            if not cancel():     # blocked on the way in: back out, so the next grasp starts clear
                phase("back_out", 1.0, lambda: self._back_out(pre, hover, speed * 0.5, cancel))
            return False
        if not self.held() and not cancel():
            # a missed grasp leaves the gripper open above the object, so the next try starts clean
            phase("release", 1.0, lambda: self._back_out(pre, hover, speed, cancel))
        return True

    def place(self, T, *, approach, lift, direction=None, speed=None, cancel=None,
              phase: Phase = _just_run) -> bool:
        """Carry the object over things, not through them: straight up as it hangs, across and
        turned at that height, down onto the pre-place pose (`approach` back along `direction`,
        default the TCP z axis: above it; into a shelf slot: in front of it), in, open, and
        back out along `direction`."""
        w, speed, cancel = self.world, speed or self.speed, cancel or (lambda: False)
        pre = back_off(T, approach, direction)
        carry = w.tcp_pose()
        carry[2, 3] = max(pre[2, 3], carry[2, 3]) + lift
        hover = pre.copy()
        hover[2, 3] = carry[2, 3]
        steps = [("carry", lambda: self._move_near(carry, speed, cancel, PRE_GRASP_TOL_M)),
                 ("hover", lambda: self._move_near(hover, speed, cancel, PRE_GRASP_TOL_M)),
                 ("pre_place", lambda: self._move_near(pre, speed, cancel, PRE_GRASP_TOL_M)),
                 ("descend", lambda: self._move_near(T, speed * 0.5, cancel, GRASP_TOL_M)),
                 ("open", lambda: (w.set_gripper(OPEN_M), True)[1]),
                 # the object is down once the gripper opened; a blocked retreat does not undo that
                 ("retreat", lambda: (w.move_tcp(back_off(T, lift, direction), speed_mps=speed * 0.5,
                                                 cancel=cancel), True)[1])]
        return self._run(steps, phase)

    def _swing_to(self, T, speed, cancel) -> bool:
        """A joint move onto the arm configuration nearest home above T (the branch the grasp
        service checked for link clearance), then straight down; a Cartesian move from home
        could end on another branch, one with the wrist under the table."""
        above = T.copy()     # swing at the ready pose's height: a joint move sweeps a curve
        above[2, 3] = max(T[2, 3], self.world.tcp_pose()[2, 3])
        q = self.world.ik_near(above, HOME_Q)    # the ready pose `_unfold` leaves the arm in
        if q is not None:
            self.world.move_joints(q, cancel=cancel)     # if blocked, the straight move still tries
        return self._move_near(T, speed, cancel, PRE_GRASP_TOL_M)

    def _raised(self, T, rise: float) -> np.ndarray:
        """T raised `rise` along base z, or less when that is beyond the arm's reach: a tall book
        grasped by its top edge asks for a lift near the top of the workspace, where a lower one
        still clears its support. Unreachable at every fraction: the full rise, whose move then
        fails with the IK error."""
        candidates = raised_poses(T, rise)
        return next((U for U in candidates if self.world.reachable(U)), candidates[0])

    def _back_out(self, pre, hover, speed, cancel) -> bool:
        """Open and retrace the way in (pre-grasp, then hover), after a missed grasp or a blocked
        approach: the next pick would otherwise start from down there, near the table."""
        w = self.world
        w.set_gripper(OPEN_M)
        for T in (pre, hover):
            w.move_tcp(T, speed_mps=speed, cancel=cancel)
        return True

    @staticmethod
    def _run(steps, phase: Phase) -> bool:
        return all(phase(name, i / len(steps), fn) for i, (name, fn) in enumerate(steps))

    def _unfold(self, cancel) -> bool:
        """From the folded home pose, Cartesian moves start on a poor IK branch: go to the
        ready configuration (elbow up above the table) by joint moves first, retracing the fold."""
        if self._near(HOME_Q, 0.5):
            return True
        if self._near(self.home_q, 0.05):
            return self._through(self._fold_path()[::-1][1:] + [HOME_Q], cancel)
        return bool(self.world.move_joints(HOME_Q, cancel=cancel))

    def _fold_path(self) -> list[np.ndarray]:
        """Joint waypoints from the ready pose to home. Home may be low behind the base (out of
        the camera's view), and a straight joint move there swings the forearm across the near
        table, knocking books over: the arm turns held upright, where it sweeps nothing."""
        upright = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
        return [np.r_[HOME_Q[0], upright[1:]], np.r_[self.home_q[0], upright[1:]], self.home_q]

    def _through(self, qs, cancel) -> bool:
        return all(self.world.move_joints(q, cancel=cancel) for q in qs)

    def _near(self, q, tol_rad: float) -> bool:
        return bool(np.max(np.abs(self.world.joint_positions()[:6] - q)) < tol_rad)

    def _move_near(self, T, speed, cancel, tol_m: float) -> bool:
        if self.world.move_tcp(T, speed_mps=speed, cancel=cancel):
            return True
        return not cancel() and float(np.linalg.norm(self.world.tcp_pose()[:3, 3] - T[:3, 3])) <= tol_m
