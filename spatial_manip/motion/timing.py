"""Time-parameterisation of a geometric joint path with TOPP-RA, within joint speed and
acceleration caps (the safety envelope's, scaled)."""
from __future__ import annotations

import logging

import numpy as np

from spatial_manip.errors import MotionFailedError

DENSIFY_RAD = 0.2      # a spline through points this close stays ~0.02 rad from the polyline
GRIDPOINTS = 40


def densify(waypoints: np.ndarray, step_rad: float = DENSIFY_RAD) -> np.ndarray:
    """Insert points so no two neighbours differ by more than step_rad in any joint."""
    out = [waypoints[0]]
    for a, b in zip(waypoints[:-1], waypoints[1:]):
        n = max(1, int(np.ceil(np.max(np.abs(b - a)) / step_rad)))
        out += [a + (b - a) * s for s in np.linspace(0.0, 1.0, n + 1)[1:]]
    return np.array(out)


def _arc_length(q: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(q, axis=0), axis=1))])


def time_parameterise(waypoints: np.ndarray, v_max: float, a_max: float, dt: float,
                      step_rad: float = DENSIFY_RAD) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, q, qd, qdd) sampled every dt along a time-optimal trajectory through the waypoints,
    starting and ending at rest, with |qd| <= v_max and |qdd| <= a_max in every joint.

    The path is a not-a-knot cubic spline through the waypoints densified to `step_rad` (a
    smaller step follows the polyline more closely); the caller checks the sampled result for
    collisions. TOPP-RA meets the caps at its grid points only, so the result is slowed
    uniformly until every sample meets them."""
    import toppra
    import toppra.algorithm as algo
    import toppra.constraint as constraint

    logging.getLogger("toppra").setLevel(logging.WARNING)
    q = densify(np.asarray(waypoints, float), step_rad)
    if len(q) < 2 or _arc_length(q)[-1] < 1e-9:
        z = np.zeros((1, q.shape[1]))
        return np.zeros(1), q[:1].copy(), z, z.copy()
    s = _arc_length(q)
    path = toppra.SplineInterpolator(s / s[-1], q, bc_type="not-a-knot")
    n = q.shape[1]
    vlim = np.tile([-v_max, v_max], (n, 1))
    alim = np.tile([-a_max, a_max], (n, 1))
    inst = algo.TOPPRA([constraint.JointVelocityConstraint(vlim),
                        constraint.JointAccelerationConstraint(alim)],
                       path, gridpoints=np.linspace(0.0, 1.0, max(GRIDPOINTS, 2 * len(q))),
                       parametrizer="ParametrizeConstAccel")
    traj = inst.compute_trajectory(0.0, 0.0)
    if traj is None:
        raise MotionFailedError("time-parameterisation (TOPP-RA) found no feasible timing for the path")
    k = _slowdown(traj, dt, v_max, a_max)
    # a sample may still land on a peak the estimate missed: slow down by what it exceeded plus 2%,
    # since the next sampling grid falls elsewhere on the peak; with a margin of 1e-6, ten slow-downs
    # can each land just over the cap (a place failed on this error once, in session 40's test run)
    for _ in range(10):
        t = np.append(np.arange(0.0, traj.duration * k, dt), traj.duration * k)
        qd, qdd = traj(t / k, 1) / k, traj(t / k, 2) / k ** 2
        over = max(float(np.max(np.abs(qd))) / v_max, float(np.sqrt(np.max(np.abs(qdd)) / a_max)))
        if over <= 1.0:
            return t, traj(t / k), qd, qdd
        k *= over * 1.02
    raise MotionFailedError(f"time-parameterisation could not meet the joint caps ({v_max} rad/s, {a_max} rad/s^2)")


def _slowdown(traj, dt: float, v_max: float, a_max: float) -> float:
    """k >= 1 such that the trajectory run k times slower (speeds / k, accelerations / k^2)
    meets both caps at every sample (half of dt apart, to catch peaks between samples)."""
    ts = np.linspace(0.0, traj.duration, max(2, int(np.ceil(2 * traj.duration / dt)) + 1))
    v = float(np.max(np.abs(traj(ts, 1))))
    a = float(np.max(np.abs(traj(ts, 2))))
    return max(1.0, v / v_max, float(np.sqrt(a / a_max))) * (1.0 + 1e-6)
