"""A kinematic UR arm that follows commanded motions in time: the body of the controller emulator.

moveL interpolates the TCP linearly (slerp for rotation) with a trapezoidal speed profile and
solves the analytic IK every tick (closest to the previous configuration), so joint and TCP
states always agree; moveJ interpolates joints. stop() decelerates at the given rate; a
protective stop halts at once. Thread-safe: the RTDE server reads while the tick thread writes.
"""
from __future__ import annotations

import math
import threading

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from spatial_manip.control.kinematics import URKinematics
from spatial_manip.geometry.transforms import matrix_to_rotvec_pose, rotvec_pose_to_matrix


class _Profile:
    """Trapezoidal (or triangular) 1-D profile s(t) over length L with speed v and accel a."""

    def __init__(self, length: float, v: float, a: float):
        self.L, self.v, self.a = max(length, 0.0), max(v, 1e-6), max(a, 1e-6)
        t_acc = self.v / self.a
        if self.a * t_acc * t_acc >= self.L:  # never reaches cruise speed
            t_acc = math.sqrt(self.L / self.a)
            self.v = self.a * t_acc
        self.t_acc = t_acc
        self.t_total = 2 * t_acc + (self.L - self.a * t_acc * t_acc) / self.v if self.L > 0 else 0.0
        self.stop_at: tuple[float, float, float, float] | None = None  # t0, s0, v0, decel

    def _nominal(self, t: float) -> tuple[float, float]:
        a, v, ta, T = self.a, self.v, self.t_acc, self.t_total
        if t <= 0:
            return 0.0, 0.0
        if t >= T:
            return self.L, 0.0
        if t < ta:
            return 0.5 * a * t * t, a * t
        if t > T - ta:
            r = T - t
            return self.L - 0.5 * a * r * r, a * r
        return 0.5 * a * ta * ta + v * (t - ta), v

    def at(self, t: float) -> tuple[float, bool]:
        """(s, finished) at time t since start."""
        if self.stop_at is None:
            s, _ = self._nominal(t)
            return s, t >= self.t_total
        t0, s0, v0, d = self.stop_at
        dt = min(max(t - t0, 0.0), v0 / d)
        return min(s0 + v0 * dt - 0.5 * d * dt * dt, self.L), t - t0 >= v0 / d

    def stop(self, t: float, decel: float):
        if self.stop_at is None:
            s, v = self._nominal(t)
            self.stop_at = (t, s, v, max(decel, 1e-3))


class EmulatedArm:
    def __init__(self, kin: URKinematics, q0, tick_hz: float = 250.0):
        self.kin = kin
        self._lock = threading.Lock()
        self.q = np.asarray(q0, float).copy()
        self.qd = np.zeros(6)
        self._motion = None  # (kind, profile, start_time, data)
        self._speed = None   # (twist 6, accel, t_end) for speedL
        self.t = 0.0
        self.dt = 1.0 / tick_hz
        self.halted_reason = ""

    # ---- commands ------------------------------------------------------------------------
    def move_l(self, pose6, v: float, a: float):
        with self._lock:
            A = self.kin.fk(self.q)
            B = rotvec_pose_to_matrix(pose6)
            dist = float(np.linalg.norm(B[:3, 3] - A[:3, 3]))
            ang = float(np.linalg.norm(Rotation.from_matrix(A[:3, :3].T @ B[:3, :3]).as_rotvec()))
            # UR moveL: v is the tool speed; a pure rotation uses it as rad/s
            length = max(dist, ang * 0.1)
            slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([A[:3, :3], B[:3, :3]])))
            self._motion = ("L", _Profile(length, v, a), self.t, (A, B, slerp))
            self._speed = None

    def move_j(self, q, v: float, a: float):
        with self._lock:
            q0, q1 = self.q.copy(), np.asarray(q, float)
            self._motion = ("J", _Profile(float(np.max(np.abs(q1 - q0))), v, a), self.t, (q0, q1))
            self._speed = None

    def speed_l(self, twist, a: float, time_s: float):
        with self._lock:
            self._motion = None
            self._speed = (np.asarray(twist, float), a, self.t + (time_s if time_s > 0 else 1e9))

    def servo_l(self, pose6, time_s: float):
        """Reach the pose in time_s (servo targets arrive at the control rate)."""
        with self._lock:
            A = self.kin.fk(self.q)
            B = rotvec_pose_to_matrix(pose6)
            slerp = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([A[:3, :3], B[:3, :3]])))
            self._motion = ("L", _Profile(1.0, 1.0 / max(time_s, self.dt), 1e6), self.t, (A, B, slerp))

    def stop(self, decel: float):
        with self._lock:
            self._speed = None
            if self._motion is not None:
                kind, prof, t0, data = self._motion
                prof.stop(self.t - t0, decel)

    def set_tcp(self, offset6):
        """setTcp: the TCP the controller reports (joint motion is unaffected)."""
        import dataclasses

        with self._lock:
            self.kin = dataclasses.replace(self.kin, T_tool0_tcp=rotvec_pose_to_matrix(offset6))

    def halt(self, reason: str):
        """Protective/emergency stop: no deceleration ramp, motion dropped."""
        with self._lock:
            self._motion, self._speed = None, None
            self.qd[:] = 0
            self.halted_reason = reason

    @property
    def moving(self) -> bool:
        with self._lock:
            return self._motion is not None or self._speed is not None

    # ---- state ---------------------------------------------------------------------------
    def state(self):
        with self._lock:
            q = self.q.copy()
            qd = self.qd.copy()
        return q, qd, matrix_to_rotvec_pose(self.kin.fk(q))

    def tick(self):
        """Advance by one period; returns True when a motion finished in this tick."""
        with self._lock:
            self.t += self.dt
            q_prev = self.q.copy()
            finished = False
            if self._motion is not None:
                kind, prof, t0, data = self._motion
                s, done = prof.at(self.t - t0)
                frac = s / prof.L if prof.L > 0 else 1.0
                if kind == "J":
                    q0, q1 = data
                    self.q = q0 + frac * (q1 - q0)
                else:
                    A, B, slerp = data
                    T = np.eye(4)
                    T[:3, :3] = slerp([frac]).as_matrix()[0]
                    T[:3, 3] = (1 - frac) * A[:3, 3] + frac * B[:3, 3]
                    try:
                        self.q = self.kin.ik(T, self.q)
                    except Exception:  # noqa: BLE001 - like the real arm: stop where IK fails
                        self._motion = None
                        self.halted_reason = "inverse kinematics failed along the path"
                        return True
                if done:
                    self._motion, finished = None, True
            elif self._speed is not None:
                twist, _, t_end = self._speed
                T = self.kin.fk(self.q)
                T[:3, 3] += twist[:3] * self.dt
                T[:3, :3] = Rotation.from_rotvec(twist[3:] * self.dt).as_matrix() @ T[:3, :3]
                try:
                    self.q = self.kin.ik(T, self.q)
                except Exception:  # noqa: BLE001
                    self._speed = None
                if self.t >= t_end:
                    self._speed = None
            self.qd = (self.q - q_prev) / self.dt
            return finished
