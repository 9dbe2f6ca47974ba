"""The UR arm's analytic IK for many poses in one numpy pass, equal to
control.kinematics.URKinematics (a test holds them equal), and the straight-line check built on
it: the grasp motion check follows the approach line of every grasp, a pose every 5 mm, and one
Python IK call per pose was most of its time.

Same derivation and branch order as URKinematics.ik_flange (shoulder x wrist x elbow = 8
solutions, wrapped into (-pi, pi], kept when FK reproduces the pose within 1e-6), then the same
2*pi wrapping into the joint limits nearest a reference and the same choice of solution.
"""
from __future__ import annotations

import math

import numpy as np

from spatial_manip.control.kinematics import _ALPHA, _EPS
from spatial_manip.errors import UnreachableError

SIGNS = np.array([1.0, -1.0])


def _links(kin, i: int, theta: np.ndarray) -> np.ndarray:
    """DH transform of joint i for an array of angles: shape theta.shape + (4, 4)."""
    a, d = (0.0, kin.a2, kin.a3, 0.0, 0.0, 0.0)[i], (kin.d1, 0.0, 0.0, kin.d4, kin.d5, kin.d6)[i]
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = math.cos(_ALPHA[i]), math.sin(_ALPHA[i])
    T = np.zeros(theta.shape + (4, 4))
    T[..., 0, 0], T[..., 0, 1], T[..., 0, 2], T[..., 0, 3] = ct, -st * ca, st * sa, a * ct
    T[..., 1, 0], T[..., 1, 1], T[..., 1, 2], T[..., 1, 3] = st, ct * ca, -ct * sa, a * st
    T[..., 2, 1], T[..., 2, 2], T[..., 2, 3] = sa, ca, d
    T[..., 3, 3] = 1.0
    return T


def fk_flange_many(kin, Q: np.ndarray) -> np.ndarray:
    """T_base_tool0 (..., 4, 4) for joint angles Q (..., 6)."""
    Q = np.asarray(Q, float)
    T = _links(kin, 0, Q[..., 0])
    for i in range(1, 6):
        T = T @ _links(kin, i, Q[..., i])
    return T


def _rigid_inv(T: np.ndarray) -> np.ndarray:
    out = np.zeros_like(T)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -(Rt @ T[..., :3, 3:4])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def ik_flange_many(kin, T06: np.ndarray, q6_default: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Raw solutions (N, 8, 6) in (-pi, pi] for N flange poses, which are valid (N, 8), and which
    sit at a wrist singularity (N, 8; wrist 3 is then q6_default), in URKinematics.ik_flange's
    order."""
    T06 = np.asarray(T06, float).reshape(-1, 4, 4)
    n = len(T06)
    a2, a3, d4, d6 = kin.a2, kin.a3, kin.d4, kin.d6
    p05 = T06[:, :3, 3] - d6 * T06[:, :3, 2]
    r = np.hypot(p05[:, 0], p05[:, 1])
    ok0 = r >= abs(d4) - 1e-12
    psi = np.arctan2(p05[:, 1], p05[:, 0])
    phi = np.arccos(np.clip(d4 / np.maximum(r, _EPS), -1.0, 1.0))
    th1 = psi[:, None] + SIGNS[None, :] * phi[:, None] + math.pi / 2                    # (n, 2)
    c1, sn1 = np.cos(th1), np.sin(th1)
    c5v = (T06[:, None, 0, 3] * sn1 - T06[:, None, 1, 3] * c1 - d4) / d6
    ok1 = ok0[:, None] & (np.abs(c5v) <= 1.0 + 1e-9)
    th5 = SIGNS[None, None, :] * np.arccos(np.clip(c5v, -1.0, 1.0))[:, :, None]        # (n, 2, 2)
    s5v = np.sin(th5)
    singular = np.abs(s5v) < 1e-7
    safe = np.where(singular, 1.0, s5v)
    num = -(T06[:, None, None, 0, 1] * sn1[:, :, None] - T06[:, None, None, 1, 1] * c1[:, :, None]) / safe
    den = (T06[:, None, None, 0, 0] * sn1[:, :, None] - T06[:, None, None, 1, 0] * c1[:, :, None]) / safe
    th6 = np.where(singular, q6_default, np.arctan2(num, den))
    th1b = np.broadcast_to(th1[:, :, None], th5.shape)
    T14 = (_rigid_inv(_links(kin, 0, th1b)) @ T06[:, None, None]
           @ _rigid_inv(_links(kin, 4, th5) @ _links(kin, 5, th6)))
    px, py = T14[..., 0, 3], T14[..., 1, 3]
    c3 = (px * px + py * py - a2 * a2 - a3 * a3) / (2 * a2 * a3)
    ok3 = ok1[:, :, None] & (np.abs(c3) <= 1.0 + 1e-9)
    th3 = SIGNS * np.arccos(np.clip(c3, -1.0, 1.0))[..., None]                          # (n, 2, 2, 2)
    th2 = np.arctan2(py, px)[..., None] - np.arctan2(a3 * np.sin(th3), a2 + a3 * np.cos(th3))
    T34 = _rigid_inv(_links(kin, 1, th2) @ _links(kin, 2, th3)) @ T14[:, :, :, None]
    th4 = np.arctan2(T34[..., 1, 0], T34[..., 0, 0])
    full = lambda x: np.broadcast_to(x, th3.shape)  # noqa: E731
    q = np.stack([full(th1[:, :, None, None]), th2, th3, th4, full(th5[..., None]), full(th6[..., None])], axis=-1)
    q = np.arctan2(np.sin(q), np.cos(q)).reshape(n, 8, 6)
    ok = np.broadcast_to(ok3[..., None], th3.shape).reshape(n, 8)
    T = fk_flange_many(kin, q)
    err = np.linalg.norm(T[..., :3, 3] - T06[:, None, :3, 3], axis=-1) + np.linalg.norm(
        (T[..., :3, :3] - T06[:, None, :3, :3]).reshape(n, 8, 9), axis=-1)
    return q, ok & (err < 1e-6) & np.all(np.isfinite(q), axis=-1), np.broadcast_to(singular[..., None], th3.shape).reshape(n, 8)


def wrap_into_limits(kin, q: np.ndarray, q_ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each solution (..., 6) moved by multiples of 2*pi into the limits nearest q_ref, and
    whether every joint found a place (URKinematics._wrap_into_limits)."""
    lo, hi = np.asarray(kin.q_min, float), np.asarray(kin.q_max, float)
    k_lo = np.ceil((lo - q) / (2 * math.pi) - 1e-12)
    k_hi = np.floor((hi - q) / (2 * math.pi) + 1e-12)
    ks = np.arange(-4, 5, dtype=float)
    cands = q[..., None] + 2 * math.pi * ks
    allowed = (ks >= k_lo[..., None]) & (ks <= k_hi[..., None])
    cost = np.where(allowed, np.abs(cands - np.asarray(q_ref, float)[..., None]), np.inf)
    pick = np.argmin(cost, axis=-1)
    wrapped = np.take_along_axis(cands, pick[..., None], axis=-1)[..., 0]
    return wrapped, np.all(np.any(allowed, axis=-1), axis=-1)


def nearest(kin, q: np.ndarray, ok: np.ndarray, q_ref: np.ndarray) -> np.ndarray | None:
    """URKinematics.ik's choice among raw solutions (8, 6): wrapped nearest q_ref, the one with
    the smallest largest joint change (then total change); None when none is valid."""
    wrapped, fits = wrap_into_limits(kin, q, np.broadcast_to(q_ref, q.shape))
    valid = ok & fits
    if not np.any(valid):
        return None
    d = np.abs(wrapped - q_ref)
    cost = np.where(valid, d.max(axis=-1) + 1e-3 * d.sum(axis=-1), np.inf)
    return wrapped[int(np.argmin(cost))]


def ik_near_many(kin, T_tcp: np.ndarray, q_ref=None) -> np.ndarray:
    """URKinematics.ik(T, q_ref) for N TCP poses at once: (N, 6), a row of NaN where the pose
    has no solution within the limits."""
    q_ref = np.zeros(6) if q_ref is None else np.asarray(q_ref, float).reshape(6)
    T_tcp = np.asarray(T_tcp, float).reshape(-1, 4, 4)
    raw, ok, _ = ik_flange_many(kin, T_tcp @ np.linalg.inv(kin.T_tool0_tcp), q6_default=float(q_ref[5]))
    out = np.full((len(T_tcp), 6), np.nan)
    for i in range(len(T_tcp)):
        q = nearest(kin, raw[i], ok[i], q_ref)
        if q is not None:
            out[i] = q
    return out


def line_configurations(envelope, q_start: np.ndarray, poses: list) -> list[np.ndarray]:
    """SafetyEnvelope.check_motion for poses already sampled along a line (each within
    path_check_step_m of the one before): every position inside the envelope, and the IK
    solution nearest the previous configuration without a joint jump over max_joint_step_rad.
    Returns the configuration at each pose; raises UnreachableError as check_motion does."""
    kin, c = envelope.kin, envelope.config
    q_prev = np.asarray(q_start, float).reshape(6)
    T_tcp = np.asarray(poses, float).reshape(-1, 4, 4)
    raw, ok, singular = ik_flange_many(kin, T_tcp @ np.linalg.inv(kin.T_tool0_tcp), q6_default=float(q_prev[5]))
    out = []
    for i, T in enumerate(T_tcp):
        if not _inside(envelope, T[:3, 3]):          # the envelope's own message on a refusal
            envelope.check_position(T[:3, 3], what=f"waypoint {i}")
        # at a wrist singularity the scalar IK keeps the previous wrist 3, as check_motion does
        q = kin.ik(T, q_prev) if np.any(singular[i]) else nearest(kin, raw[i], ok[i], q_prev)
        if q is None:
            kin.ik(T, q_prev)                         # raises UnreachableError naming the pose
        if np.max(np.abs(q - q_prev)) > c.max_joint_step_rad:
            raise UnreachableError(
                f"the straight line to waypoint {i} needs a joint jump of "
                f"{np.max(np.abs(q - q_prev)):.2f} rad near {np.round(T[:3, 3], 3).tolist()} m "
                "(a singularity or IK branch change); add a waypoint or use a joint move")
        out.append(q)
        q_prev = q
    return out


def _inside(envelope, p: np.ndarray) -> bool:
    c = envelope.config
    if not c.workspace.contains(p) or p[2] < c.table_height_m + c.min_tcp_height_above_table_m:
        return False
    return not any(box.contains(p) for box in c.keep_out)
