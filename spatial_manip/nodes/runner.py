"""The one `main()` body every node shares: init, build, spin until Ctrl-C or shutdown, clean up."""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import Callable, NoReturn

import rclpy
from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.signals import SignalHandlerOptions

from spatial_manip.errors import ConfigError, SpatialManipError


FINISH_S = 2.5    # how long a stopping node may spin to end its work (the launcher waits 3-5 s)
WAKE_S = 0.2      # with rclpy's handler off, an idle executor must still notice Ctrl-C this often
# glibc gives each thread that allocates its own heap ("arena"), up to 8 per core, and frees into
# it without returning the memory: sim_node compiling a model per reset on its executor threads
# and rendering on its camera thread grew from 650 MB to 1.7 GB over 14 resets, then stayed
# there (issue 24). Two arenas keep it at 580-760 MB; the nodes' threads mostly wait on I/O.
MALLOC_ARENAS = 2
M_ARENA_MAX = -8  # glibc's mallopt parameter number


def spin_node(make_node: Callable, *, args=None, threads: int | None = 1,
              close: Callable | None = None, finish: Callable | None = None) -> int:
    """Run the node built by `make_node` (threads=1: single-threaded; None: one per core).
    `close(node)` releases what the node holds (devices, threads) before it is destroyed. A
    configuration error raised while building it is printed and gives exit status 1.

    `finish(node)`, for a node that serves long goals: on Ctrl-C or SIGTERM it ends the node's
    work and returns a predicate that is true once done; the executor keeps spinning until then
    (at most FINISH_S), so a client waiting on a goal gets its result before the node exits.
    rclpy's own signal handler would shut the context down first, so it is off for such nodes.

    Once the node is stopped and destroyed, the process ends without the interpreter's own
    teardown (`end_process`)."""
    limit_malloc_arenas()
    handlers = SignalHandlerOptions.ALL if finish is None else SignalHandlerOptions.NO
    rclpy.init(args=args, signal_handler_options=handlers)
    node = executor = None
    if finish is not None:
        signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        # the executor before the node: a Ctrl-C just after the node says "ready" used to land inside
        # the executor's constructor, whose half-built object then complained when collected
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        node = make_node()
        executor.add_node(node)
        if finish is not None:
            # on the steady clock: with use_sim_time and no /clock a ROS-time timer never fires,
            # and the executor would never wake to notice Ctrl-C
            node.create_timer(WAKE_S, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME))
        executor.spin()
    except (SpatialManipError, ParameterException) as e:
        if node is not None:
            raise
        print(refusal(getattr(make_node, "__name__", "node"), e), file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        if finish is not None and node is not None:
            _spin_until(executor, finish(node), FINISH_S)
    except _rclpy.RCLError:
        if rclpy.ok():
            raise
        # SIGTERM's shutdown landed while the executor built its wait set: a normal stop, which
        # rclpy reports as "the given context is not valid" instead of ExternalShutdownException
    finally:
        if node is not None:
            if close is not None:
                # a second Ctrl-C or SIGTERM would cut the release short (the gripper's socket and
                # the arm's link left open, the camera thread running); each of its waits is bounded,
                # and a launcher that runs out of patience kills the process
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                close(node)
            node.destroy_node()
        rclpy.try_shutdown()
    end_process(0)


class ActionClient(_RclpyActionClient):
    """rclpy's ActionClient, safe to create for a node another thread spins. rclpy (Jazzy) adds
    the client to the node's waitables before it creates the client's lock, so an executor
    waking in between fails with "'ActionClient' object has no attribute '_lock'" and its spin
    thread dies (a bench worker hung on it after 15 goals, each sent through a fresh client)."""

    def __init__(self, *args, **kwargs):
        self._lock = threading.Lock()
        super().__init__(*args, **kwargs)

    @property
    def _lock(self):
        return self.__dict__["_first_lock"]

    @_lock.setter
    def _lock(self, lock):
        # rclpy assigns a second lock at the end of __init__, while an executor may already hold
        # the first: one lock for the client's life
        self.__dict__.setdefault("_first_lock", lock)


def limit_malloc_arenas(n: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas before any thread starts; whether it was capped. A user's own
    MALLOC_ARENA_MAX wins; on a C library other than glibc there is nothing to cap."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        return bool(ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, int(n)))
    except (OSError, AttributeError):
        return False


def refusal(name: str, e: Exception) -> str:
    """The one line a node prints when it will not start (a YAML error spans several)."""
    if isinstance(e, ConfigError):
        text = f"{name}: refused to start: {e.message}"
    elif isinstance(e, SpatialManipError):
        text = f"{name}: {e.code.value}: {e.message}"
    else:                       # rclpy's own: a parameter of the wrong type
        text = f"{name}: refused to start: {e}"
    return " ".join(text.split())


def end_process(code: int) -> NoReturn:
    """Exit with `code` now, the node's devices, threads and ROS entities released already. The
    interpreter's own teardown (every module cleared, the heap of ~185k objects collected) came
    after that: an idle grasp_node stopped by Ctrl-C at load 15 was cleaned up 0.09 s after it
    and exited 3.5 s after it (a stack taken in between: Py_FinalizeEx's garbage collection), and
    at the end of `make demo` at load 18-24 grasp_node overran the launcher's 5 s grace with no
    Python frame left to run. A thread still at work (an idle look, grasps proposed ahead) ends
    with the process, as a daemon thread ends with the interpreter."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe: nothing more can be said on it
            pass
    try:
        ctypes.CDLL(None).fflush(None)  # what the C libraries wrote (rcutils' console) and still buffer
    except (OSError, AttributeError):
        pass
    os._exit(code)


def _raise_interrupt(signum, _frame):
    """The first SIGTERM stops the node as Ctrl-C does; a second one means now."""
    signal.signal(signum, signal.SIG_DFL)
    raise KeyboardInterrupt


def _spin_until(executor, done: Callable[[], bool], timeout_s: float, flush_s: float = 0.5) -> None:
    """Spin until `done()` and then `flush_s` more (the result is sent after the goal's own
    callback returns), or until `timeout_s` has passed."""
    deadline = time.monotonic() + timeout_s
    flush_until = None
    while time.monotonic() < (flush_until or deadline):
        if flush_until is None and done():
            flush_until = min(deadline, time.monotonic() + flush_s)
        try:
            executor.spin_once(timeout_sec=0.05)
        except KeyboardInterrupt:     # a second Ctrl-C: stop waiting
            return
