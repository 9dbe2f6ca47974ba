"""A kinematic UR arm that follows commanded motions in time: the body of the controller emulator.

moveL interpolates the TCP linearly (slerp for rotation) with a trapezoidal speed profile and
solves the analytic IK every tick (closest to the previous configuration), so joint and TCP
states always agree; moveJ interpolates joints. A path of moveJ waypoints (ur_rtde's
moveJ(path)) runs as the controller runs consecutive `movej(q, a, v, r)`: a waypoint with a
blend radius r > 0 (metres of TCP travel, as URScript's r) is passed on a rounded corner
without stopping, a waypoint with r = 0 is a stop. stop() decelerates at the given rate; a
protective stop halts at once. Thread-safe: the RTDE server reads while the tick thread writes.
"""
from __future__ import annotations

import math
import threading
import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from spatial_manip.control.kinematics import URKinematics
from spatial_manip.transforms import matrix_to_rotvec_pose, rotvec_pose_to_matrix


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


class _JointPath:
    """Consecutive movej's with blends, as one motion in time.

    Geometry: straight joint-space segments; around a blended waypoint the corner is replaced by
    a quadratic Bezier from where the TCP comes within r of the waypoint (approximated as the
    fraction r / TCP length of each neighbouring segment, at most half of it) to where it leaves.
    Timing: between stop points (r = 0, and the path's end) one trapezoidal profile over the
    leading-axis length, with the slowest speed / acceleration of the moves in that stretch, so
    the arm keeps moving through blends. `segment` says which movej runs (what the controller's
    script reports with signal_async_progress): with blending, movej i returns - and i + 1 runs -
    when the TCP enters the blend around waypoint i."""

    STEP = 0.002  # rad between polyline samples

    def __init__(self, q_start, entries, tcp_of):
        pts = [np.asarray(q_start, float)] + [np.asarray(e[0], float) for e in entries]
        tcp = [np.asarray(tcp_of(p), float) for p in pts]
        n = len(entries)
        self.blends: list[float] = []              # TCP blend radius applied at each waypoint (for tests/logs)
        corners = {}                                # pts index k -> (A, B), blend around pts[k]
        for k in range(1, n):                      # never at the last waypoint: the path ends there
            r = float(entries[k - 1][3])
            d_in = float(np.linalg.norm(tcp[k] - tcp[k - 1]))
            d_out = float(np.linalg.norm(tcp[k + 1] - tcp[k]))
            if r > 0 and d_in > 1e-9 and d_out > 1e-9:
                f_in, f_out = min(r / d_in, 0.5), min(r / d_out, 0.5)
                corners[k] = (pts[k] + f_in * (pts[k - 1] - pts[k]), pts[k] + f_out * (pts[k + 1] - pts[k]))
                self.blends.append(min(r, 0.5 * d_in, 0.5 * d_out))
            else:
                self.blends.append(0.0)
        # sections between stop points: lists of (q samples, segment index of each sample)
        self.sections = []
        q_cur, seg_q, seg_i, seg_entries = pts[0], [pts[0]], [0], []
        for k in range(1, n + 1):
            end = corners[k][0] if k in corners else pts[k]
            self._line(seg_q, seg_i, q_cur, end, k - 1)
            seg_entries.append(entries[k - 1])
            if k in corners:
                A, B = corners[k]
                self._bezier(seg_q, seg_i, A, pts[k], B, k)
                q_cur = B
            else:
                self._close(seg_q, seg_i, seg_entries)
                q_cur, seg_q, seg_i, seg_entries = pts[k], [pts[k]], [min(k, n - 1)], []
        self.stop_at: tuple[int, float] | None = None  # section, its local start time

    def _line(self, out_q, out_i, a, b, index):
        m = max(1, math.ceil(float(np.max(np.abs(b - a))) / self.STEP))
        for j in range(1, m + 1):
            out_q.append(a + (j / m) * (b - a))
            out_i.append(index)

    def _bezier(self, out_q, out_i, A, P, B, index):
        m = max(2, math.ceil((float(np.max(np.abs(P - A))) + float(np.max(np.abs(B - P)))) / self.STEP))
        for j in range(1, m + 1):
            u = j / m
            out_q.append((1 - u) ** 2 * A + 2 * u * (1 - u) * P + u * u * B)
            out_i.append(index)

    def _close(self, qs, idx, entries):
        Q = np.asarray(qs)
        S = np.concatenate([[0.0], np.cumsum(np.max(np.abs(np.diff(Q, axis=0)), axis=1))]) if len(Q) > 1 else np.zeros(1)
        v = min(float(e[1]) for e in entries)
        a = min(float(e[2]) for e in entries)
        self.sections.append((Q, S, np.asarray(idx), _Profile(float(S[-1]), v, a)))

    def _sample(self, sec, t_local):
        Q, S, idx, prof = self.sections[sec]
        s, done = prof.at(t_local)
        if len(S) == 1 or S[-1] <= 0:
            return Q[-1], int(idx[-1]), done
        q = np.array([np.interp(s, S, Q[:, j]) for j in range(6)])
        i = int(idx[min(np.searchsorted(S, s, side="right"), len(S) - 1)]) if s < S[-1] else int(idx[-1])
        return q, i, done

    def at(self, t: float):
        """(q, running movej index, finished) at time t since the start."""
        if self.stop_at is not None:
            sec, t0 = self.stop_at
            return self._sample(sec, t - t0)
        t0 = 0.0
        for sec, (_, _, _, prof) in enumerate(self.sections):
            if t - t0 < prof.t_total or sec == len(self.sections) - 1:
                return self._sample(sec, t - t0)
            t0 += prof.t_total
        raise AssertionError("a path has at least one section")

    def stop(self, t: float, decel: float):
        if self.stop_at is not None:
            return
        t0 = 0.0
        for sec, (_, _, _, prof) in enumerate(self.sections):
            if t - t0 < prof.t_total or sec == len(self.sections) - 1:
                prof.stop(t - t0, decel)
                self.stop_at = (sec, t0)
                return
            t0 += prof.t_total


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
        self.path_segment = -1  # the movej of a running path (ur_rtde's async progress), else -1

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

    def move_path(self, entries):
        """movej waypoints [(q6, v, a, r), ...] one after the other, blending where r > 0."""
        with self._lock:
            kin = self.kin
            path = _JointPath(self.q.copy(), entries, lambda q: kin.fk(q)[:3, 3])
            self._motion = ("P", path, self.t, None)
            self._speed = None
            self.path_segment = 0
            return path

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
            if self._motion is None or self._motion[0] != "P":
                self.path_segment = -1
            if self._motion is not None and self._motion[0] == "P":
                path, t0 = self._motion[1], self._motion[2]
                self.q, self.path_segment, done = path.at(self.t - t0)
                if done:
                    self._motion, finished = None, True
            elif self._motion is not None:
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
