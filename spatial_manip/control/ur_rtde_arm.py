"""The `Arm` backend for a UR controller through ur_rtde (PyPI `ur-rtde`; imported only here).

Moves are sent asynchronously and watched, so `stop()` from another thread can `stopL`/`stopJ`
them at once. Every boolean the library returns is checked: a refused or interrupted move
raises MotionFailedError whose message is read from the controller (protective stop,
emergency stop, script not running, connection lost). Recovery happens only on request
(`recover()`: unlock the protective stop through the dashboard, re-upload the control script);
a lost connection is re-established with bounded retries by `reconnect()`, which is also tried
once before a NEW command. An interrupted motion is never re-sent, and before a lost link or a
safety stop is answered the program is stopped (dashboard `stop`, then stopL/stopJ), so a
controller that stalled mid-move brakes when it answers again instead of finishing the move.

`move_path` hands a planned joint path to the controller in one piece with ur_rtde's
`moveJ(path)`: the library writes the rows into its control script as consecutive URScript
`movej(q, a, v, r)` calls, re-uploads the script and starts it (command 45, progress in the async
register). Inner waypoints get a blend radius `r` - in URScript that is METRES of TCP travel
around the waypoint, not radians - of `path_blend_m`, kept below half the TCP distance to each
neighbouring waypoint (the controller's FK gives those distances), so the arm passes them on a
rounded corner without stopping; the last row has r = 0. ur_rtde (1.6.5) waits WITHOUT a time
limit for the re-uploaded script to run: should the controller not start it (a safety stop in
the instant between our last check and the upload, or the link lost during the upload - then
the library's state stream stops and the wait never ends), the call would block this arm, and a
node's shutdown, for ever. So the call is given `path_upload_timeout_s`; one still waiting then
ends the library's process (below): the move fails, the link reads as lost and is rebuilt, and
the path is never run late.

The library runs in processes of its own (`ur_rtde_process.LibraryProcess`): its own reconnect
threads corrupted the heap of arm_node when a link dropped, and several of its calls can wait
for ever on a dead link. Every call is answered within `call_timeout_s` or its process is ended,
which reads here as a lost connection; a crash of the library is one too. The control interface
has a process to itself, the state readers (receive, dashboard) another, so a control link
given up after a stuck path upload still lets the arm's joints be read.

A node that must outlive the controller (arm_node) calls `keep_connected()`: a background
thread notices a lost link, drops the dead interfaces (so no stale joints are reported) and
reconnects with exponential back-off capped at `reconnect_max_delay_s`, for as long as it takes;
`link_state()` says where it is. Reconnecting uploads the control script and nothing else: no
motion is re-sent, so the arm stands still until the next goal.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time

import numpy as np

from spatial_manip.device import Device
from spatial_manip.control.base import DrivenPath, SafetyStatus
from spatial_manip.control.ur_rtde_process import LibraryProcess
from spatial_manip.errors import CanceledError, InvalidGoalError, MotionFailedError
from spatial_manip.transforms import matrix_to_rotvec_pose, rotvec_pose_to_matrix


PATH_BLEND_MAX_M = 2.0          # ur_rtde's own bound on a path row's blend (UR_BLEND_MAX)
BLEND_NEIGHBOUR_FRACTION = 0.49  # a blend stays below half the TCP distance to each neighbour
MIN_BLEND_M = 1e-4              # a smaller blend is no blend: the arm stops at that waypoint
SCRIPT_SIG_DIGITS = 6           # ur_rtde prints path values with C++'s default stream precision
STOP_SEND_S = 0.5               # a stop sent over a link that stopped answering: how long to wait for it


def _script_safe(x: float) -> float:
    """`x` as ur_rtde can write it into URScript: a magnitude below 1e-4 would be printed in
    exponent form ("5e-05"), so it is snapped to 0 or +-1e-4 (at most 5e-5 away)."""
    if x == 0.0 or abs(x) >= 1e-4:
        return float(x)
    return 0.0 if abs(x) < 5e-5 else math.copysign(1e-4, x)


def _as_printed(x: float) -> float:
    """The value the controller reads back from ur_rtde's script text."""
    return float(f"{x:.{SCRIPT_SIG_DIGITS}g}")


def joint_path_rows(qs) -> np.ndarray:
    """`qs` as an (n, 6) float array of finite joint angles, n >= 1; InvalidGoalError otherwise."""
    try:
        rows = np.array(qs, dtype=float)
    except (TypeError, ValueError) as e:
        raise InvalidGoalError(f"a joint path is an (n, 6) array of joint angles in rad: {e}") from e
    if rows.ndim != 2 or rows.shape[1] != 6 or rows.shape[0] < 1:
        raise InvalidGoalError(f"a joint path is an (n, 6) array of joint angles in rad with n >= 1, "
                               f"got shape {rows.shape}")
    if not np.all(np.isfinite(rows)):
        bad = sorted({int(i) for i in np.argwhere(~np.isfinite(rows))[:, 0]})
        raise InvalidGoalError(f"joint path rows {bad} are not finite")
    return rows


@dataclasses.dataclass(frozen=True, kw_only=True)
class URRtdeConfig:
    host: str = "127.0.0.1"
    frequency_hz: float = -1.0           # -1: the library's default for the controller
    tcp_offset: tuple[float, ...] = (0.0, 0.0, 0.15, 0.0, 0.0, 0.0)
    payload_kg: float = 1.0
    payload_cog_m: tuple[float, float, float] = (0.0, 0.0, 0.06)
    connect_retries: int = 3
    retry_delay_s: float = 0.5
    stop_decel_m_s2: float = 10.0        # stopL deceleration on cancel
    stop_decel_rad_s2: float = 4.0       # stopJ deceleration on cancel
    move_timeout_s: float = 60.0
    start_timeout_s: float = 1.0         # the async move must show in the progress register by then
    arrive_tolerance_m: float = 0.002
    arrive_tolerance_rad: float = 0.01
    poll_s: float = 0.004
    reconnect_min_delay_s: float = 0.25  # keep_connected(): first back-off, doubled per failed attempt
    reconnect_max_delay_s: float = 5.0   # ... up to this (a rebooting controller takes ~1 min)
    goal_wait_s: float = 3.0             # a new goal waits this long for a reconnect in progress
    path_blend_m: float = 0.02           # move_path: blend radius at inner waypoints, metres of TCP travel
                                         # (URScript movej's r); below half the TCP distance to each neighbour
    path_upload_timeout_s: float = 5.0   # a path upload whose script has not started by then is abandoned, never run late
    call_timeout_s: float = 5.0          # any other library call not answered by then: the link counts as lost

    def __post_init__(self):
        if len(self.tcp_offset) != 6 or len(self.payload_cog_m) != 3:
            raise InvalidGoalError("tcp_offset needs 6 values [x,y,z,rx,ry,rz], payload_cog_m 3 values")
        if self.connect_retries < 1 or self.retry_delay_s < 0 or self.payload_kg < 0:
            raise InvalidGoalError(f"invalid ur_rtde settings: {self}")
        if not (self.path_upload_timeout_s > 0 and self.call_timeout_s > 0):
            raise InvalidGoalError(f"path_upload_timeout_s and call_timeout_s must be positive, got "
                                   f"{self.path_upload_timeout_s} and {self.call_timeout_s}")
        if not (math.isfinite(self.path_blend_m) and 0 <= self.path_blend_m <= PATH_BLEND_MAX_M):
            raise InvalidGoalError(f"path_blend_m must be within 0..{PATH_BLEND_MAX_M} m (URScript's blend "
                                   f"radius is metres of TCP travel), got {self.path_blend_m}")
        if not 0 < self.reconnect_min_delay_s <= self.reconnect_max_delay_s or self.goal_wait_s < 0:
            raise InvalidGoalError("reconnect delays need 0 < reconnect_min_delay_s <= reconnect_max_delay_s and "
                                   f"goal_wait_s >= 0, got {self.reconnect_min_delay_s}, "
                                   f"{self.reconnect_max_delay_s}, {self.goal_wait_s}")


@dataclasses.dataclass
class LinkState:
    """The controller link as the keeper sees it (for logs, /spatial_manip/arm_status, results)."""

    connected: bool = True
    attempts: int = 0            # failed reconnects since the link was lost
    next_try_s: float = 0.0      # back-off before the next attempt
    last_error: str = ""

    def describe(self, host: str) -> str:
        if self.connected:
            return f"connected to {host}"
        if not self.attempts:
            return f"reconnecting to {host}"
        return (f"reconnecting to {host}: {self.attempts} failed attempt(s), next in {self.next_try_s:.1f} s"
                + (f" (last: {self.last_error})" if self.last_error else ""))


class URRtdeArm(Device):
    def __init__(self, config: URRtdeConfig):
        self.config = config
        self._ctrl = self._recv = self._dash = None
        self._processes: tuple[LibraryProcess, ...] = ()   # (state readers, control)
        # ur_rtde is not thread-safe (a reconnect racing a state read corrupted the heap): every
        # library call goes through _lock, held briefly; _motion_lock serialises whole moves.
        self._lock = threading.RLock()
        self._motion_lock = threading.Lock()
        self._stop_req = threading.Event()
        self._moving = threading.Event()
        self._link = LinkState()
        self._linked = threading.Event()     # set while connected (the keeper's view)
        self._linked.set()
        self._keeper: threading.Thread | None = None
        self._keeper_stop = threading.Event()
        self._reconnect_lock = threading.Lock()  # one reconnect at a time: the keeper's or a goal's
        self._log = lambda level, msg: None
        self._on_reconnect = None

    # ---- lifecycle -----------------------------------------------------------------------
    def connect(self) -> None:
        c, last = self.config, None
        for _ in range(c.connect_retries):
            try:
                self._connect_once()
                break
            except RuntimeError as e:  # ur_rtde raises RuntimeError for refused/timed-out connections
                last = e
                time.sleep(c.retry_delay_s)
        else:
            raise MotionFailedError(f"cannot connect to the UR controller at {c.host} after {c.connect_retries} "
                                    f"attempts ({last}); check the IP, that the robot is in remote control and "
                                    "powered on") from last
        self._configure()

    def _connect_once(self):
        """Fresh library processes, put in use under _lock; started outside it (up to
        START_TIMEOUT_S), so state reads are not held up meanwhile."""
        processes = self._open_processes()
        with self._lock:
            self._install(processes)

    def _open_processes(self) -> tuple[LibraryProcess, LibraryProcess]:
        """Library processes with fresh (dashboard, receive) and control interfaces; RuntimeError
        if the controller is away. Touches no shared state, so the keeper builds them while state
        reads go on."""
        c = self.config

        def start(interfaces):
            return LibraryProcess(c.host, c.frequency_hz, c.call_timeout_s, interfaces,
                                  log=lambda level, msg: self._log(level, msg))

        readers = start(("dash", "recv"))
        try:
            return readers, start(("ctrl",))
        except BaseException:
            readers.close(stop_script=False)
            raise

    def _install(self, processes: tuple[LibraryProcess, LibraryProcess]) -> None:
        """Use these processes' interfaces from now on (under _lock)."""
        readers, control = self._processes = processes
        self._dash, self._recv, self._ctrl = readers.proxy("dash"), readers.proxy("recv"), control.proxy("ctrl")

    def _configure(self):
        c = self.config
        with self._lock:
            if not self._ctrl.setTcp(list(c.tcp_offset)):
                raise MotionFailedError(f"the controller refused setTcp({list(c.tcp_offset)}): {self._reason()}")
            if not self._ctrl.setPayload(c.payload_kg, list(c.payload_cog_m)):
                raise MotionFailedError(f"the controller refused setPayload({c.payload_kg}): {self._reason()}")

    def close(self) -> None:
        self._keeper_stop.set()
        if self._keeper is not None and self._keeper is not threading.current_thread():
            self._keeper.join(timeout=5.0)
        self._keeper = None
        self._drop_interfaces()

    def _drop_interfaces(self) -> None:
        """Take the interfaces out of use, then disconnect them and end their process, outside
        _lock: ur_rtde's disconnect() joins a receive thread that its own reconnect can keep
        alive for ever, so the process is ended if it takes longer than a clean one."""
        with self._lock:
            # stopScript waits for the controller: only on a live link (it hangs on a dead one)
            stop_script = self.is_connected
            processes, self._processes = self._processes, ()
            self._ctrl = self._recv = self._dash = None
        for process in reversed(processes):  # control first: its stopScript needs the link
            process.close(stop_script=stop_script)


    @property
    def is_connected(self) -> bool:
        with self._lock:
            try:
                return bool(self._ctrl and self._recv and self._ctrl.isConnected() and self._recv.isConnected())
            except RuntimeError:
                return False

    def reconnect(self) -> None:
        """Bounded retries; MotionFailedError if the controller stays away.

        Each attempt disconnects the old interfaces and builds fresh ones: ur_rtde's own
        reconnect() corrupted the heap here when its background reconnect thread was still
        running (seen with the emulator), so it is not used."""
        c, last = self.config, None
        for _ in range(c.connect_retries):
            try:
                with self._reconnect_lock:
                    self._drop_interfaces()       # outside _lock, as it says
                    self._connect_once()
                    self._configure()
                self._mark_linked()
                return
            except (RuntimeError, MotionFailedError) as e:
                last = e
                time.sleep(c.retry_delay_s)
        raise MotionFailedError(f"lost the connection to {c.host} and {c.connect_retries} reconnects failed "
                                f"({last}); check the network and the controller")

    # ---- staying connected (a node that outlives its controller) -------------------------
    def keep_connected(self, log=None, on_reconnect=None, period_s: float = 0.2) -> None:
        """Start the reconnect thread once. `log(level, msg)` with level "info" | "warning";
        `on_reconnect()` runs after each successful reconnect (arm_node re-opens the gripper)."""
        if log is not None:
            self._log = log
        self._on_reconnect = on_reconnect
        if self._keeper is not None:
            return
        self._keeper_stop.clear()
        self._keeper = threading.Thread(target=self._keep, args=(period_s,), daemon=True, name="ur-rtde-keeper")
        self._keeper.start()

    def link_state(self) -> LinkState:
        return dataclasses.replace(self._link)

    def wait_connected(self) -> None:
        """Before a NEW goal: return once connected. With the keeper running, wait up to
        `goal_wait_s` for it, then fail naming the link state; without it, reconnect here.
        Connected means configured too: the keeper installs fresh interfaces before it sets the
        TCP and payload through them, and a goal's path upload must not run between the two."""
        if self._ready():
            return
        if self._keeper is None:
            return self.reconnect()
        deadline = time.monotonic() + self.config.goal_wait_s
        while not self._ready():
            if time.monotonic() >= deadline:
                raise MotionFailedError(f"the arm is not connected: {self._link_text()}; "
                                        "nothing was sent to it. Send the goal again once "
                                        "/spatial_manip/arm_status no longer says so")
            self._linked.wait(0.05)

    def _ready(self) -> bool:
        return self._linked.is_set() and self.is_connected

    def _keep(self, period_s: float) -> None:
        while not self._keeper_stop.wait(period_s):
            if self._motion_lock.locked() or self.is_connected:
                continue  # a running move reports its own loss; it is never resumed
            self._lost()
            delay = self.config.reconnect_min_delay_s
            while not self._reconnect_once():
                self._link.next_try_s = delay
                if self._keeper_stop.wait(delay):
                    return
                delay = min(2.0 * delay, self.config.reconnect_max_delay_s)

    def _lost(self) -> None:
        # drop the dead interfaces: their last joints must not be published as current
        self._drop_interfaces()
        self._linked.clear()
        self._link = LinkState(connected=False, next_try_s=0.0)
        self._log("warning", f"lost the connection to the UR controller at {self.config.host}; reconnecting "
                             f"with back-off up to {self.config.reconnect_max_delay_s} s. The interrupted "
                             "motion is not resumed")

    def _reconnect_once(self) -> bool:
        with self._reconnect_lock:
            return self._reconnect_once_locked()

    def _reconnect_once_locked(self) -> bool:
        if self._keeper_stop.is_set() or self.is_connected:
            return True  # closing, or a goal's reconnect() got there first
        try:
            processes = self._open_processes()
            with self._lock:
                if self._keeper_stop.is_set():  # closed while it connected: nobody would close these
                    for process in processes:
                        process.close(stop_script=False)
                    return True
                self._install(processes)
            self._configure()
        except Exception as e:  # noqa: BLE001 - whatever failed, the keeper must live to try again
            self._drop_interfaces()
            self._link.attempts += 1
            self._link.last_error = str(e).strip()
            return False
        attempts = self._link.attempts
        self._mark_linked()
        self._log("info", f"reconnected to the UR controller at {self.config.host} after {attempts} failed "
                          "attempt(s); control script running, no motion re-sent")
        if self._on_reconnect is not None:
            self._on_reconnect()
        return True

    def _link_text(self) -> str:
        if self._link.connected:  # lost a moment ago: the keeper has not noticed yet
            return f"the link to {self.config.host} just dropped; reconnecting"
        return self._link.describe(self.config.host)

    def _mark_linked(self) -> None:
        self._link = LinkState()
        self._linked.set()

    def recover(self, timeout_s: float = 5.0) -> None:
        """On request only: unlock a protective stop, re-upload the control script."""
        with self._lock:
            status = self.safety_status()
            if status.emergency_stop:
                raise MotionFailedError("emergency stop active: release the e-stop on the robot first")
            if status.protective_stop:
                reply = self._dash.unlockProtectiveStop()
                if self._recv_wait(lambda: not self._recv.isProtectiveStopped(), timeout_s) is False:
                    raise MotionFailedError(f"the protective stop did not release ({reply!r}); "
                                            "wait 5 s after the stop, clear its cause, try again")
            if not self._ctrl.isProgramRunning():
                if not self._ctrl.reuploadScript():
                    raise MotionFailedError(f"re-uploading the control script failed: {self._reason()}")
                if self._recv_wait(self._ctrl.isProgramRunning, timeout_s) is False:
                    raise MotionFailedError("the control script did not start after re-upload")

    # ---- motion --------------------------------------------------------------------------
    def move_l(self, T_base_tcp: np.ndarray, speed: float, accel: float) -> None:
        self._move("moveL", list(matrix_to_rotvec_pose(np.asarray(T_base_tcp, float))), speed, accel)

    def move_j(self, q, speed: float, accel: float) -> None:
        self._move("moveJ", [float(v) for v in np.asarray(q, float).reshape(6)], speed, accel)

    def move_path(self, qs, speed: float, accel: float) -> None:
        """Follow the joint path `qs` ((n, 6) rad, the first row near the current joints) in one
        controller motion: ur_rtde's moveJ(path), blending at inner waypoints (see the module
        doc), then - because the library writes the rows into the script with 6 significant
        digits - one tiny moveJ whose joints travel as doubles, so the arm ends exactly on the
        last row. A first row within `arrive_tolerance_rad` of the current joints is where the arm
        already is and is skipped; a single remaining row is a plain moveJ."""
        rows = joint_path_rows(qs)
        if not (math.isfinite(speed) and math.isfinite(accel) and speed > 0 and accel > 0):
            raise InvalidGoalError(f"move_path needs a positive joint speed and acceleration, got {speed} rad/s "
                                   f"and {accel} rad/s^2")
        last = [float(v) for v in rows[-1]]
        with self._motion_lock, self._motion("moveJ path"):
            q_now = self.joint_positions()
            if len(rows) > 1 and np.max(np.abs(rows[0] - q_now)) <= self.config.arrive_tolerance_rad:
                rows = rows[1:]
            if len(rows) == 1:
                return self._send_and_watch("moveJ", last, lambda: self._ctrl.moveJ(last, speed, accel, True))
            safe = np.vectorize(_script_safe)(rows)
            blends = self._blend_radii(safe)
            path = [[*map(float, q), float(speed), float(accel), r] for q, r in zip(safe, blends)]
            sent_last = [_as_printed(v) for v in safe[-1]]
            status = self.safety_status()  # again, just before the library stops and re-uploads the script
            if not status.ok:
                raise MotionFailedError(f"moveJ path not sent: {status.reason()}")
            self._send_and_watch("moveJ path", sent_last, lambda: self._send_path(path), path=True)
            if np.max(np.abs(np.asarray(sent_last) - rows[-1])) > 1e-9:
                self._send_and_watch("moveJ", last, lambda: self._ctrl.moveJ(last, speed, accel, True))

    def driven_path(self, qs, speed: float, accel: float) -> DrivenPath:
        """move_path's motion: from the joints now straight in joint space through the rows (the
        first skipped as move_path skips it), except that the controller rounds each inner row's
        corner within its blend radius (at most `path_blend_m`; below half the TCP distance to
        either neighbour, so within the half of each segment next to that row). Each segment is
        split at its middle and each half may stray by the blend radius of the row it touches."""
        rows = joint_path_rows(qs)
        q_now = self.joint_positions()
        if len(rows) > 1 and np.max(np.abs(rows[0] - q_now)) <= self.config.arrive_tolerance_rad:
            rows = rows[1:]
        points = np.vstack([q_now, rows])
        blend = np.zeros(len(points))
        blend[1:-1] = self.config.path_blend_m              # q_now and the last row are not blended
        q, stray = [points[0]], []
        for k in range(1, len(points)):
            q += [(points[k - 1] + points[k]) / 2, points[k]]
            stray += [blend[k - 1], blend[k]]
        return DrivenPath(np.array(q), np.array(stray))

    def _send_path(self, path: list) -> bool:
        """ur_rtde's moveJ(path), under _lock: the library stops the control script, uploads it
        again with the path inside, waits (without a limit) for it to run and sends the path
        command. Here that wait is bounded by `path_upload_timeout_s`: a call still waiting then
        ends the library's process, so the stuck wait can never send the path late, and the link
        reads as lost and is rebuilt (by the keeper, or before the next command; a fresh control
        interface stops any script still running when it connects)."""
        control, limit = self._processes[-1], self.config.path_upload_timeout_s
        try:
            return self._ctrl.moveJ(path, True, timeout_s=limit)
        except ValueError as e:  # the library's own bounds on speed / acceleration / blend: nothing sent
            raise InvalidGoalError(f"ur_rtde refused the path before sending it: {e}") from e
        except RuntimeError as e:
            if not control.timed_out:
                raise
            raise MotionFailedError(f"the controller did not start the re-uploaded control script within {limit} s "
                                    "(a safety stop or a lost link during the upload); the path was not sent and "
                                    "the control link is rebuilt") from e

    def _blend_radii(self, rows: np.ndarray) -> list[float]:
        """Blend radius (m of TCP travel) per row: `path_blend_m` at inner rows, below half the
        TCP distance to each neighbour (the previous of the first is the current TCP); 0 on the
        last row and where that leaves less than MIN_BLEND_M."""
        radii = [0.0] * len(rows)
        if self.config.path_blend_m <= 0:
            return radii
        with self._lock:
            tcp = [np.asarray(self._recv.getActualTCPPose()[:3], float)]
        for q in rows:
            if self._stop_req.is_set():
                raise CanceledError("moveJ path stopped on request before it was sent")
            with self._lock:  # the controller's calibrated kinematics with our TCP
                tcp.append(np.asarray(self._ctrl.getForwardKinematics([float(v) for v in q],
                                                                      list(self.config.tcp_offset))[:3], float))
        for k in range(len(rows) - 1):
            d_in = float(np.linalg.norm(tcp[k + 1] - tcp[k]))
            d_out = float(np.linalg.norm(tcp[k + 2] - tcp[k + 1]))
            r = min(self.config.path_blend_m, BLEND_NEIGHBOUR_FRACTION * d_in, BLEND_NEIGHBOUR_FRACTION * d_out)
            radii[k] = round(r, 6) if r >= MIN_BLEND_M else 0.0
        return radii

    def stop(self) -> None:
        """Thread-safe: a watched move stops itself at once; an idle arm is stopped directly."""
        self._stop_req.set()
        if not self._moving.is_set() and self._ctrl is not None and self._lock.acquire(timeout=0.05):
            try:
                self._ctrl.stopL(self.config.stop_decel_m_s2)
            except RuntimeError:
                pass
            finally:
                self._lock.release()

    def _move(self, kind: str, target: list, speed: float, accel: float) -> None:
        with self._motion_lock, self._motion(kind):
            self._send_and_watch(kind, target, lambda: getattr(self._ctrl, kind)(target, speed, accel, True))

    @contextlib.contextmanager
    def _motion(self, kind: str):
        """Around one NEW command (under _motion_lock): connected and safe first, then watched."""
        if not self.is_connected:
            if self._keeper is not None:  # lost between two moves of a goal: the goal ends here
                raise MotionFailedError(f"{kind} not sent: the arm is not connected ({self._link_text()}); "
                                        "the goal stops here and is not resumed")
            self.reconnect()  # a fresh command: safe to reconnect, never to resume the old one
        status = self.safety_status()
        if not status.ok:
            raise MotionFailedError(f"{kind} not sent: {status.reason()}")
        self._stop_req.clear()
        self._moving.set()
        try:
            yield
        except RuntimeError as e:  # ur_rtde raises on a broken socket
            raise MotionFailedError(f"{kind} failed: connection to the controller lost ({e}); "
                                    "it reconnects before the next command") from e
        finally:
            self._moving.clear()

    def _send_and_watch(self, kind: str, target: list, send, path: bool = False) -> None:
        """Send one async move and watch it to its end. A path re-uploads the control script,
        which restarts the async operation ids: its start is told by the register read after
        the send (a different id, or running)."""
        if self._stop_req.is_set():
            raise CanceledError(f"{kind} stopped on request before it was sent")
        with self._lock:
            before = self._ctrl.getAsyncOperationProgressEx().operationId()
            sent = send()
            if path:
                before = self._ctrl.getAsyncOperationProgressEx().operationId()
        if not sent:
            raise MotionFailedError(f"the controller refused {kind}: {self._reason()}")
        self._watch(kind, target, before, path)

    def _watch(self, kind: str, target: list, before: int, path: bool = False) -> None:
        c = self.config
        t0, seen = time.monotonic(), False
        while True:
            if self._stop_req.is_set():
                self._brake(kind)
                raise CanceledError(f"{kind} stopped on request")
            status = self.safety_status()
            if not status.connected:
                self._stop_after_fault(kind)
                raise MotionFailedError(f"{kind} interrupted: connection to the controller lost; it is not resumed "
                                        f"{'(reconnecting by itself)' if self._keeper else ''}: send a new goal "
                                        "once the arm is connected again")
            if not status.ok:
                reason = self._settled_status().reason()
                self._stop_after_fault(kind)   # the controller stopped the program: it stays stopped
                raise MotionFailedError(f"{kind} interrupted: {reason}")
            with self._lock:
                st = self._ctrl.getAsyncOperationProgressEx()
                op_id, running = st.operationId(), st.isAsyncOperationRunning()
            seen = seen or op_id != before or (path and running)
            if seen and not running:
                return self._check_arrival(kind, target)
            elapsed = time.monotonic() - t0
            if path and not seen and elapsed > c.start_timeout_s and self._at(target):
                return self._check_arrival(kind, target)  # a path so short it ended before the first look
            if (not seen and elapsed > c.start_timeout_s) or elapsed > c.move_timeout_s:
                self._brake(kind)
                raise MotionFailedError(f"{kind} did not {'start' if not seen else 'finish'} within "
                                        f"{c.start_timeout_s if not seen else c.move_timeout_s} s; it was stopped")
            time.sleep(c.poll_s)

    def _brake(self, kind: str):
        with self._lock:
            self._brake_locked(kind)

    def _stop_after_fault(self, kind: str):
        """Before a lost link or a safety stop is answered: stop the program and the move. The
        dashboard's `stop` goes first: its plain socket queues it even while ur_rtde's RTDE
        interfaces reconnect by themselves (they send nothing then), so a stalled or frozen
        controller reads it first when it answers again and brakes instead of finishing the move.
        Neither call is waited for longer than STOP_SEND_S: unanswered, it ends the library's
        process, whose link is lost anyway (the keeper builds a new one)."""
        stop_rtde = "stopJ" if kind.startswith("moveJ") else "stopL"
        decel = self.config.stop_decel_rad_s2 if kind.startswith("moveJ") else self.config.stop_decel_m_s2
        with self._lock:
            for interface, method, args in ((self._dash, "stop", ()), (self._ctrl, stop_rtde, (decel,))):
                if interface is None:
                    continue
                try:
                    getattr(interface, method)(*args, timeout_s=STOP_SEND_S)
                except RuntimeError:
                    pass

    def _brake_locked(self, kind: str):
        try:
            if kind.startswith("moveJ"):
                self._ctrl.stopJ(self.config.stop_decel_rad_s2)
            else:
                self._ctrl.stopL(self.config.stop_decel_m_s2)
        except RuntimeError:
            pass  # connection gone: the controller's own watchdog stops the arm

    def _check_arrival(self, kind: str, target: list):
        # the move can also end because the controller stopped it; safety_status tells
        if not self.safety_status().ok:
            raise MotionFailedError(f"{kind} interrupted: {self._settled_status().reason()}")
        if kind == "moveL":
            err = np.linalg.norm(self.tcp_pose()[:3, 3] - np.asarray(target[:3]))
            ok = err <= self.config.arrive_tolerance_m
        else:
            err = np.max(np.abs(self.joint_positions() - np.asarray(target)))
            ok = err <= self.config.arrive_tolerance_rad
        if not ok:
            raise MotionFailedError(f"{kind} ended {err:.4f} away from its target without a reported stop; "
                                    "check the controller log")

    def _at(self, q: list) -> bool:
        return bool(np.max(np.abs(self.joint_positions() - np.asarray(q))) <= self.config.arrive_tolerance_rad)

    # ---- state ---------------------------------------------------------------------------
    def joint_positions(self) -> np.ndarray:
        with self._lock:
            self._need()
            return np.asarray(self._recv.getActualQ(), float)

    def tcp_pose(self) -> np.ndarray:
        with self._lock:
            self._need()
            return rotvec_pose_to_matrix(self._recv.getActualTCPPose())

    def safety_status(self) -> SafetyStatus:
        if not self.is_connected:
            detail = self._link_text() if self._keeper is not None else ""
            return SafetyStatus(connected=False, program_running=False, detail=detail)
        try:
            with self._lock:
                return SafetyStatus(connected=True, program_running=bool(self._ctrl.isProgramRunning()),
                                    protective_stop=bool(self._recv.isProtectiveStopped()),
                                    emergency_stop=bool(self._recv.isEmergencyStopped()),
                                    detail=f"safety mode {self._recv.getSafetyMode()}")
        except RuntimeError as e:
            return SafetyStatus(connected=False, program_running=False, detail=str(e))

    def _reason(self) -> str:
        return self._settled_status().reason()

    def _settled_status(self, window_s: float = 0.1) -> SafetyStatus:
        """The status once the cause shows: control and receive are separate RTDE streams, so
        'script not running' can arrive a few periods before the protective stop that caused it."""
        deadline = time.monotonic() + window_s
        status = self.safety_status()
        while time.monotonic() < deadline and status.connected and not (status.protective_stop or status.emergency_stop):
            time.sleep(0.005)
            status = self.safety_status()
        return status

    def _need(self):
        if self._keeper is not None and not self.is_connected:
            # no stale joints from a dead link: state stops until the keeper reconnects
            raise MotionFailedError(f"the arm is not connected: {self._link_text()}")
        if self._recv is None:
            raise MotionFailedError("the arm is not connected; call connect() first")

    @staticmethod
    def _recv_wait(fn, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if fn():
                return True
            time.sleep(0.02)
        return False


def make_arm(**cfg) -> URRtdeArm:
    fields = {f.name for f in dataclasses.fields(URRtdeConfig)}
    kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in cfg.items() if k in fields}
    return URRtdeArm(URRtdeConfig(**kw))
