"""`Arm.move_path`: a planned joint path followed in one motion, ending exactly on its last row.

ur_rtde: the REAL library's moveJ(path) against `spatial-manip ur-emulator` in its own process
(ur_rtde holds the GIL in its constructors; its ports are fixed, so these tests run one at a time
and skip when something else serves them). The library re-uploads its control script with the
path written in as movej lines and starts it with command 45; the emulator runs those lines.

joint_trajectory: the path as one JointTrajectory, checked without ROS (`path_trajectory`) and
against the MuJoCo consumer of test_trajectory_arm.py (gz-sim's JointTrajectoryController's place).
"""
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from emulator_ports import dashboard, emu_state
from machine_load import scaled_by_load
from ros_helpers import wait_for
from spatial_manip.errors import CanceledError, InvalidGoalError

BAD_PATHS = [[], np.zeros((0, 6)), np.zeros((3, 5)), np.zeros(6), np.zeros((2, 3, 6)), [[0.0] * 6, [1, 2, 3]],
             [[0.0, 0.0, 0.0, 0.0, 0.0, float("nan")]], [[0.0, 0.0, 0.0, float("inf"), 0.0, 0.0]], "abc"]


class _Sampler:
    """Joint positions at ~200 Hz from a thread while a move runs, stamped by `clock`: the
    controller's own clock where it has one, so that speeds and durations are the arm's and not
    the load's (a starved emulator's clock skips the time it missed; the wall clock does not)."""

    def __init__(self, read, clock=time.monotonic):
        self.read, self.clock, self.samples, self._stop = read, clock, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.samples.append((self.clock(), np.asarray(self.read(), float)))
            time.sleep(0.005)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(2)

    def closest(self, q, joint: int = 0, window_s: float = 0.05):
        """(distance in rad, speed of `joint` in rad/s over +-window_s) at the sample closest to q."""
        t = np.array([s[0] for s in self.samples])
        Q = np.array([s[1] for s in self.samples])
        dist = np.max(np.abs(Q - q), axis=1)
        i = int(np.argmin(dist))
        # between two samples the arm moved along their chord: a starved sampler's samples are far
        # apart, and the nearest sample is then farther from q than the path the arm took
        dist_i = min(float(dist[i]), *(_to_segment(q, Q[k], Q[k + 1]) for k in (i - 1, i) if 0 <= k < len(Q) - 1))
        j0 = int(np.searchsorted(t, t[i] - window_s))
        j1 = min(int(np.searchsorted(t, t[i] + window_s)), len(t) - 1)
        speed = float(abs(Q[j1, joint] - Q[j0, joint]) / (t[j1] - t[j0]))
        return dist_i, speed

    def motion_s(self, q_from, q_to, tol: float = 1e-3) -> float:
        """Seconds from the first sample that has left q_from to the first within `tol` of q_to."""
        t = np.array([s[0] for s in self.samples])
        Q = np.array([s[1] for s in self.samples])
        left = np.flatnonzero(np.max(np.abs(Q - q_from), axis=1) > 1e-4)
        arrived = np.flatnonzero(np.max(np.abs(Q - q_to), axis=1) < tol)
        assert len(left) and len(arrived), "the samples never saw the move"
        return float(t[arrived[0]] - t[left[0]])


def _to_segment(q, a, b) -> float:
    """Euclidean distance from q to the segment a-b (an upper bound of the largest joint's)."""
    ab = b - a
    f = float(np.clip(np.dot(q - a, ab) / max(float(np.dot(ab, ab)), 1e-12), 0.0, 1.0))
    return float(np.linalg.norm(q - (a + f * ab)))


def _settled(read, timeout_s: float, still_rad: float = 0.002, gap_s: float = 0.1) -> np.ndarray:
    """Joint positions once two reads `gap_s` apart agree within `still_rad` (or at `timeout_s`):
    a stopped arm decelerates first, and a starved controller takes longer to get there."""
    end, q = time.monotonic() + timeout_s, np.asarray(read(), float)
    while time.monotonic() < end:
        time.sleep(gap_s)
        q_next = np.asarray(read(), float)
        if np.max(np.abs(q_next - q)) < still_rad:
            return q_next
        q = q_next
    return q


def _stop_once_moved(arm, q0: np.ndarray, rad: float, timeout_s: float) -> None:
    """arm.stop() once its first joint is `rad` from `q0` (or at `timeout_s`)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and abs(arm.joint_positions()[0] - q0[0]) < rad:
        time.sleep(0.01)
    arm.stop()


def _controller_clock(ur_arm):
    """The controller's timestamp (RTDE `timestamp`), read through the backend's receive interface."""
    return lambda: ur_arm._recv.getTimestamp()


# --- ur_rtde against the emulator ----------------------------------------------------------------
def _path_from(q0):
    """4 rows from the current joints; the last has more digits than ur_rtde writes (6)."""
    d = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                  [0.25, -0.10, 0.10, 0.0, 0.0, 0.10],
                  [0.50, -0.20, 0.05, 0.10, 0.0, 0.20],
                  [0.75, -0.10, 0.00, 0.10, 0.10, 0.30]])
    qs = q0 + d
    qs[-1, 5] = q0[5] + 0.3123456789
    return qs


@pytest.mark.slow
def test_ur_rtde_path_ends_on_the_last_row_and_goes_on_through_the_inner_ones(ur_arm):
    q0 = ur_arm.joint_positions()
    qs = _path_from(q0)
    speed = 0.8
    with _Sampler(ur_arm.joint_positions, _controller_clock(ur_arm)) as s:
        ur_arm.move_path(qs, speed, 2.0)
    q_end = ur_arm.joint_positions()
    assert np.max(np.abs(q_end - qs[-1])) < 1e-3
    # exactly: the last row's 7th digit came through (the library's script text stops at 6;
    # the emulator's final tick lands within a few microradians under load)
    assert np.max(np.abs(q_end - qs[-1])) < 2e-5
    for k in (1, 2):
        dist, v = s.closest(qs[k])          # joint 0 moves on through both
        assert dist < 0.05, f"the arm passed {dist:.3f} rad from waypoint {k}"
        assert v > 0.3 * speed, f"the arm slowed to {v:.3f} rad/s at waypoint {k}: it stopped there"
    # one motion: at most the leading joint's 0.75 rad at 0.8 rad/s plus ramps, not three stops
    # (on the controller's clock: the upload before it and a starved emulator are not the motion)
    assert s.motion_s(q0, qs[-1]) < 0.75 / speed + 2 * speed / 2.0 + 1.0
    ur_arm.move_path(qs[::-1], 1.0, 2.0)                   # and back, ending on the first row
    assert np.max(np.abs(ur_arm.joint_positions() - q0)) < 2e-5


@pytest.mark.slow
def test_ur_rtde_path_blends_are_below_half_the_distance_to_the_neighbours(ur_arm):
    q0 = ur_arm.joint_positions()
    far = _path_from(q0)[1:]
    assert ur_arm._blend_radii(far) == [ur_arm.config.path_blend_m] * 2 + [0.0]
    near = q0 + np.outer(np.arange(1, 5), [0.004, 0, 0, 0, 0, 0])  # TCP steps of ~2 mm
    radii = ur_arm._blend_radii(near)
    assert radii[-1] == 0.0
    step = np.linalg.norm(np.diff([ur_arm._ctrl.getForwardKinematics(list(q), list(ur_arm.config.tcp_offset))[:3]
                                   for q in near], axis=0), axis=1)
    assert all(0 < r < 0.5 * min(step) for r in radii[1:-1]), (radii, step)


@pytest.mark.slow
def test_ur_rtde_path_input_is_checked_before_anything_moves(ur_arm):
    q0 = ur_arm.joint_positions()
    for bad in BAD_PATHS:
        with pytest.raises(InvalidGoalError):
            ur_arm.move_path(bad, 1.0, 1.0)
    for speed, accel in ((0.0, 1.0), (1.0, -1.0), (float("nan"), 1.0), (5.0, 1.0)):  # 5 rad/s: beyond ur_rtde's 3.14
        with pytest.raises(InvalidGoalError):
            ur_arm.move_path(_path_from(q0), speed, accel)
    assert np.max(np.abs(ur_arm.joint_positions() - q0)) < 1e-9
    assert ur_arm.safety_status().ok


@pytest.mark.slow
def test_ur_rtde_stop_from_another_thread_cancels_the_path(ur_arm):
    q0 = ur_arm.joint_positions()
    qs = _path_from(q0)
    stopped = {}

    def stop_once_moving():   # not at a fixed time: under load the upload alone can take longer
        if wait_for(lambda: abs(ur_arm.joint_positions()[0] - q0[0]) > 0.02, scaled_by_load(15.0)):
            stopped["at"] = time.monotonic()
            ur_arm.stop()

    stopper = threading.Thread(target=stop_once_moving, daemon=True)
    stopper.start()
    with pytest.raises(CanceledError):
        ur_arm.move_path(qs, 0.5, 1.0)
    assert time.monotonic() - stopped["at"] < scaled_by_load(1.5)
    stopper.join()
    assert wait_for(lambda: not emu_state()["moving"], scaled_by_load(1.0))
    time.sleep(0.3)
    q_stop = ur_arm.joint_positions()
    time.sleep(0.3)
    assert np.max(np.abs(ur_arm.joint_positions() - q_stop)) < 1e-6, "the arm kept moving after stop()"
    moved = abs(q_stop[0] - q0[0])
    assert 0.02 < moved < 0.7, f"stopped after {moved:.3f} rad of 0.75"
    # the controller takes the next path (a new command, not a resumed one)
    ur_arm.move_path(np.vstack([q_stop, 0.5 * (q_stop + q0) + [0, 0.05, 0, 0, 0, 0], q0]), 1.0, 2.0)
    assert np.max(np.abs(ur_arm.joint_positions() - q0)) < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("link_lost", [False, True], ids=["slow-start", "link-lost-during-upload"])
def test_ur_rtde_path_whose_script_does_not_start_is_abandoned_not_run_late(ur_arm, link_lost):
    """ur_rtde waits without a limit for its re-uploaded script to run; with the link lost
    during the upload, it waited for ever (arm_node then ignored SIGTERM). A controller that
    starts the script only after path_upload_timeout_s: the move fails at that limit, the held
    script's path is never run, and the next command reconnects and moves."""
    import dataclasses

    from spatial_manip.errors import MotionFailedError

    q0 = ur_arm.joint_positions()
    config = ur_arm.config
    ur_arm.config = dataclasses.replace(config, path_upload_timeout_s=1.0)
    try:
        assert dashboard("emulator hold_scripts soon") == "emulator hold_scripts: seconds must be a number, got 'soon'"
        assert dashboard("emulator hold_scripts 3") == "scripts held"
        hold_ends = time.monotonic() + 3.0
        if link_lost:
            threading.Timer(0.3, dashboard, args=("emulator drop 0.5",)).start()
        # the error itself says the move gave up at its limit: a move that waited for the held script
        # would have run it (and a link lost for ever would hang the test); a bound on the time it
        # took (2.5 s) failed a fresh-clone run at load 18
        with pytest.raises(MotionFailedError, match="did not start the re-uploaded control script"):
            ur_arm.move_path(_path_from(q0), 1.0, 2.0)
    finally:
        ur_arm.config = config
    # the held scripts start when the hold ends (the path's, and the rebuilt link's when its upload fell
    # within the hold); the next command waits for that, not for a fixed time: after a fixed 3 s, a run
    # at load 9-23 (session 41) had its move_j end 0.0197 rad short (a program started late replacing it?)
    assert wait_for(lambda: time.monotonic() > hold_ends and emu_state()["held_scripts"] == 0, 60.0)
    time.sleep(1.0)  # the held script runs now; its path (tenths of a radian in a second) must not
    # 1e-4 rad, not 1e-6: in one whole-suite run (quiet, session 24) the arm moved one controller
    # tick along the path's first segment (3.5e-6 rad) and stopped; the module passes alone. Not
    # explained (a guess: the held path script reads a stale command register and is replaced at
    # once by a rebuilt link's script held with it); open in docs/benchmarks.md, Tests. A path run
    # late moves tenths of a radian, which this bound still catches.
    assert np.max(np.abs(ur_arm.joint_positions() - q0)) < 1e-4
    target = q0 + [0.05, 0, 0, 0, 0, 0]
    ur_arm.move_j(target, 1.0, 2.0)  # a new command: reconnects first
    assert np.max(np.abs(ur_arm.joint_positions() - target)) < 1e-3
    assert ur_arm.safety_status().ok


# --- joint_trajectory ----------------------------------------------------------------------------
def test_path_trajectory_has_every_waypoint_keeps_moving_and_keeps_the_caps():
    from spatial_manip.control.trajectory_arm import path_trajectory

    q0 = np.array([0.0, -1.5, 1.5, -1.5, -1.5, 0.0])
    rows = q0 + np.array([[0.0, 0, 0, 0, 0, 0], [0.3, 0.1, 0, 0, 0, 0], [0.6, 0.2, 0.2, 0, 0, 0],
                          [0.9, 0.1, 0.2, 0, 0, 0.123456789]])
    speed, accel, period = 1.0, 2.0, 0.05
    t, P, V, knots = path_trajectory(q0, rows, speed, accel, period)
    gaps = np.diff(np.r_[0.0, t])
    assert np.all(gaps > 0.2 * period) and np.max(gaps) <= 1.25 * period + 1e-9  # a sample beside a waypoint gives way
    at = np.searchsorted(t, knots)
    assert np.array_equal(t[at], knots) and len(knots) == 3        # the first row is where the arm is
    assert np.array_equal(P[at], rows[1:])                         # every waypoint exactly, the last too
    assert np.all(V[-1] == 0)
    assert V[at[0], 0] > 0.2 * speed and V[at[1], 0] > 0.2 * speed  # no stop where joint 0 goes on
    assert V[at[1], 1] == 0                                          # joint 1 turns back there
    fine = np.linspace(0, t[-1], 4000)
    from scipy.interpolate import CubicHermiteSpline
    spline = CubicHermiteSpline(np.r_[0.0, knots], np.vstack([q0, rows[1:]]), np.vstack([np.zeros(6), V[at]]))
    assert np.max(np.abs(spline(fine, 1))) <= speed * 1.01
    assert np.max(np.abs(spline(fine, 2))) <= accel * 1.01
    assert np.allclose(spline(t), P, atol=1e-12)
    assert path_trajectory(q0, [q0], speed, accel, period) is None


rclpy_available = True
try:
    import rclpy  # noqa: F401
    import trajectory_msgs.msg  # noqa: F401
except ImportError:
    rclpy_available = False

CONSUMER = Path(__file__).with_name("test_trajectory_arm.py")   # run as a script: the MuJoCo consumer
CMD_TOPIC = "/test_path/joint_trajectory"
STATE_TOPIC = "/test_path/joint_states"


def test_the_trajectory_arms_driven_path_is_the_trajectory_it_sends(monkeypatch):
    """What the safety envelope judges (driven_path) is what move_path publishes, after the
    joints now: the spline's points, which leave the waypoints' straight segments at a corner."""
    from spatial_manip.control.trajectory_arm import TrajectoryArm

    arm = TrajectoryArm(model="ur5e")
    q0 = np.array([0.0, -1.6, 1.5, -1.5, -1.57, 0.0])
    sent = []
    monkeypatch.setattr(arm, "joint_positions", lambda: q0.copy())
    monkeypatch.setattr(arm, "_execute", lambda what, t, positions, velocities: sent.append(positions))
    qs = q0 + np.array([[0.0] * 6, [0.4, 0, 0, 0, 0, 0], [0.4, -0.3, 0.2, 0, 0, 0]])
    driven = arm.driven_path(qs, 1.0, 3.0)
    arm.move_path(qs, 1.0, 3.0)
    assert np.array_equal(driven.q[0], q0) and np.array_equal(driven.q[1:], sent[0]) and not np.any(driven.stray_m)
    assert np.min(np.linalg.norm(driven.q - qs[1], axis=1)) == 0.0     # through the waypoint itself


def test_the_ur_rtde_arms_driven_path_strays_by_the_blend_near_inner_rows_only(monkeypatch):
    """ur_rtde's controller rounds each inner row's corner within path_blend_m of TCP travel, in
    the half of each segment next to that row: driven_path says so, segment half by segment half;
    the start (where the arm is) and the last row are not blended."""
    from spatial_manip.control.ur_rtde_arm import URRtdeArm, URRtdeConfig

    arm = URRtdeArm(URRtdeConfig(path_blend_m=0.02))
    q0 = np.array([0.0, -1.6, 1.5, -1.5, -1.57, 0.0])
    monkeypatch.setattr(arm, "joint_positions", lambda: q0.copy())
    qs = _path_from(q0)                                   # its first row is where the arm is: skipped
    driven = arm.driven_path(qs, 1.0, 2.0)
    assert np.array_equal(driven.q[0], q0) and np.array_equal(driven.q[2::2], qs[1:])
    assert np.allclose(driven.q[1::2], (np.vstack([q0, qs[1:-1]]) + qs[1:]) / 2)
    assert driven.stray_m.tolist() == [0.0, 0.02, 0.02, 0.02, 0.02, 0.0]
    assert not np.any(arm.driven_path(qs[-1:], 1.0, 2.0).stray_m)   # one row: a plain moveJ


@pytest.fixture(scope="module")
def traj_arm():
    if not rclpy_available:
        pytest.skip("rclpy / trajectory_msgs not installed")
    pytest.importorskip("mujoco")
    from spatial_manip.control import base  # noqa: F401  (registers the arm backends)
    from spatial_manip.registry import make

    from mujoco_controller import connected, start_controller, stop_controller

    proc = start_controller(str(CONSUMER), CMD_TOPIC, STATE_TOPIC)
    arm = make("arm", "joint_trajectory", command_topic=CMD_TOPIC, state_topic=STATE_TOPIC, model="ur5e",
               tcp_offset=[0.0, 0.0, 0.1559, 0.0, 0.0, -1.5708], connect_timeout_s=40.0, goal_tolerance_rad=0.003,
               node_name="path_trajectory_arm")
    try:
        yield connected(arm, proc, "the MuJoCo consumer")
    finally:
        arm.close()
        stop_controller(proc)


@pytest.mark.slow
def test_trajectory_arm_path_in_the_mujoco_world(traj_arm):
    from spatial_manip.control.trajectory_arm import path_trajectory

    q0 = traj_arm.joint_positions()
    qs = q0 + np.array([[0.0, 0, 0, 0, 0, 0], [0.3, -0.1, 0.1, 0, 0, 0], [0.6, -0.15, 0.1, 0.1, 0, 0.1],
                        [0.9, -0.1, 0.05, 0.1, 0.1, 0.2]])
    speed, accel = 1.0, 3.0
    t, _, V, knots = path_trajectory(q0, qs[1:], speed, accel, traj_arm.period)
    planned = V[np.searchsorted(t, knots[1]), 0]               # joint 0 at the middle waypoint
    assert planned > 0.3
    with _Sampler(traj_arm.joint_positions) as s:
        t0 = time.monotonic()
        traj_arm.move_path(qs, speed, accel)
        took = time.monotonic() - t0
    assert np.max(np.abs(traj_arm.joint_positions() - qs[-1])) < 0.003
    dist, v = s.closest(qs[2])
    assert dist < 0.02, f"the arm passed {dist:.3f} rad from the inner waypoint"
    assert v > 0.5 * planned, f"joint 0 slowed to {v:.3f} rad/s at the inner waypoint (planned {planned:.3f})"
    assert took < t[-1] + traj_arm.settle_timeout_s
    for bad in BAD_PATHS:
        with pytest.raises(InvalidGoalError):
            traj_arm.move_path(bad, 1.0, 1.0)
    with pytest.raises(InvalidGoalError):
        traj_arm.move_path(qs, 0.0, 1.0)


@pytest.mark.slow
def test_trajectory_arm_stop_cancels_the_path(traj_arm):
    q0 = traj_arm.joint_positions()
    qs = q0 + np.outer(np.linspace(0, 1, 4), [0.8, 0, 0, 0, 0, 0])
    # stop() once the arm is on its way, not at a fixed time: a starved controller (load 10-14 in a
    # fresh-clone run) had moved 0.010 rad by 0.5 s
    threading.Thread(target=_stop_once_moved, args=(traj_arm, q0, 0.05, scaled_by_load(10.0)), daemon=True).start()
    with pytest.raises(CanceledError):
        traj_arm.move_path(qs, 0.5, 1.0)
    q_stop = _settled(traj_arm.joint_positions, scaled_by_load(0.3))
    time.sleep(0.4)
    moved = abs(q_stop[0] - q0[0])
    assert 0.02 < moved < 0.7, f"stopped after {moved:.3f} rad of 0.8"
    assert np.max(np.abs(traj_arm.joint_positions() - q_stop)) < 0.01, "the arm kept moving after stop()"
