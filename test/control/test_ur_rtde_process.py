"""ur_rtde runs in processes of its own (control; receive + dashboard): a crash of the library
or a call that never returns ends only that process, the arm reads as disconnected, and the
next command reconnects. Before, the library's own reconnect thread corrupted arm_node's heap
when a link dropped under load ("malloc(): mismatching next->prev_size"): the node died mid-goal
and its client never got a result. The REAL library against `spatial-manip ur-emulator`."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from spatial_manip.errors import MotionFailedError

pytestmark = pytest.mark.slow


def _control_pid(arm) -> int:
    return arm._processes[-1].pid


def test_library_crash_mid_motion_is_a_lost_connection_then_reconnects(ur_arm):
    q0 = ur_arm.joint_positions()
    target = q0 + [0.6, 0, 0, 0, 0, 0]
    pid = _control_pid(ur_arm)
    threading.Timer(0.3, os.kill, args=(pid, signal.SIGABRT)).start()   # as glibc aborts on a corrupt heap
    with pytest.raises(MotionFailedError, match="connection to the controller lost"):
        ur_arm.move_j(target, 0.3, 1.0)
    assert not ur_arm.is_connected
    moved_to = ur_arm.joint_positions()          # the state readers live in the other process
    assert np.max(np.abs(moved_to - target)) > 0.05
    ur_arm.move_j(q0, 1.0, 2.0)                  # a new command: a fresh control process first
    assert _control_pid(ur_arm) != pid
    assert np.max(np.abs(ur_arm.joint_positions() - q0)) < 1e-3
    assert ur_arm.safety_status().ok


def test_a_library_call_that_never_returns_is_bounded(ur_arm):
    """A stopped process stands for a call stuck inside the library (as on a dead link): between
    two commands it is replaced before the next one; during a move it ends the move."""
    import dataclasses

    config = ur_arm.config
    ur_arm.config = dataclasses.replace(config, call_timeout_s=0.5)
    try:
        ur_arm.reconnect()                       # processes that have the short limit
        q0 = ur_arm.joint_positions()
        stuck = _control_pid(ur_arm)
        os.kill(stuck, signal.SIGSTOP)
        ur_arm.move_j(q0 + [0.05, 0, 0, 0, 0, 0], 1.0, 2.0)   # a new command: a fresh process first
        assert _control_pid(ur_arm) != stuck and not _running(stuck)

        stuck = _control_pid(ur_arm)
        threading.Timer(0.3, os.kill, args=(stuck, signal.SIGSTOP)).start()
        t0 = time.monotonic()
        with pytest.raises(MotionFailedError, match="connection to the controller lost"):
            ur_arm.move_j(q0 + [0.6, 0, 0, 0, 0, 0], 0.3, 1.0)
        assert time.monotonic() - t0 < 3.0 and not _running(stuck)
    finally:
        ur_arm.config = config
    ur_arm.move_j(q0, 1.0, 2.0)
    assert np.max(np.abs(ur_arm.joint_positions() - q0)) < 1e-3


def test_the_library_processes_end_with_the_node_that_made_them(ur_arm):
    """A node killed with SIGKILL leaves no library process connected to the controller."""
    code = ("from spatial_manip.control.ur_rtde_arm import URRtdeArm, URRtdeConfig\n"
            "arm = URRtdeArm(URRtdeConfig(host='127.0.0.1')); arm.connect()\n"
            "print(' '.join(str(p.pid) for p in arm._processes), flush=True)\n"
            "import time; time.sleep(60)\n")
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in owner.stdout.readline().split()]
        assert len(pids) == 2
    finally:
        owner.kill()
        owner.wait(10)
    deadline = time.monotonic() + 5.0
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _running(p)]
        time.sleep(0.05)
    assert not alive
    ur_arm.reconnect()                            # the emulator takes our own connection back
    assert ur_arm.safety_status().ok


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] != "Z"   # a zombie has ended


def test_a_return_value_pickle_cannot_carry_is_an_error_naming_the_call():
    """The child answers, names the call and lives on (a lock is what no pickle can carry)."""
    from multiprocessing import Pipe

    from spatial_manip.control.ur_rtde_process import _exception_class, _send

    node_end, child_end = Pipe()
    _send(child_end, ("call", "ctrl", "getThing", ()), ("ok", threading.Lock()))
    status, (kind, text) = node_end.recv()
    assert status == "error" and _exception_class(kind) is TypeError
    assert text.startswith("ctrl.getThing returned what cannot be sent")
