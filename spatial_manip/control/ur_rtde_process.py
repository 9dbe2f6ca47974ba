"""ur_rtde's interfaces in a process of their own, called through a socket with a time limit.

Why a process: ur_rtde (1.6.5) reconnects by itself from its receive threads when a link drops,
and a disconnect racing that reconnect corrupted the heap ("malloc(): mismatching
next->prev_size"), which killed arm_node mid-goal so its client never got a result (seen under
load with `emulator drop 0.5`). Some of its calls also wait without a limit (moveJ(path) for its
re-uploaded script, disconnect() for a receive thread that keeps reconnecting, stopL on a dead
link). Here a crash ends only this process, and a call not answered within its limit ends it
too: the caller gets RuntimeError - what ur_rtde itself raises for a broken link - so the arm
reads as disconnected and is rebuilt with a fresh process. Nothing is ever freed under a call
that is still running, and the library's constructors no longer hold the node's GIL.

The file runs as a script (`python ur_rtde_process.py FD NODE_PID`), not as a package module,
so the child imports the standard library and ur_rtde only and starts in a few tens of ms.
"""
from __future__ import annotations

import builtins
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection

START_TIMEOUT_S = 15.0   # the three constructors; RTDE's own start-of-sync wait is 5 s
CLOSE_WAIT_S = 3.0       # a clean disconnect takes ~0.5 s (the library sleeps that long)


class AsyncProgress:
    """The picklable part of ur_rtde's AsyncOperationStatus, with the same two readers."""

    def __init__(self, operation_id: int, running: bool):
        self._id, self._running = int(operation_id), bool(running)

    def operationId(self) -> int:  # noqa: N802 - ur_rtde's name
        return self._id

    def isAsyncOperationRunning(self) -> bool:  # noqa: N802 - ur_rtde's name
        return self._running


class LibraryProcess:
    """Some of one connection's interfaces ("dash", "recv", "ctrl"), built in a child process.
    `call(name, method, *args)` runs `name.method(*args)` there; every failure to answer (crash,
    limit passed, process gone) is a RuntimeError naming what happened."""

    def __init__(self, host: str, frequency_hz: float, call_timeout_s: float, interfaces: tuple, log=None):
        self.host, self.call_timeout_s = host, call_timeout_s
        self._log = log or (lambda level, msg: None)
        self._lock = threading.Lock()       # one request in flight: replies come back in order
        self._kill_lock = threading.Lock()  # close() may end the process while a call waits on it
        ours, theirs = socket.socketpair()
        try:
            # a session of its own: Ctrl-C in the node's terminal must not end the library before
            # the node has stopped the arm through it (the child ends when the node is gone)
            self._proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), str(theirs.fileno()),
                                           str(os.getpid())], pass_fds=(theirs.fileno(),),
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:  # out of processes or file descriptors: as a link that cannot be made
            ours.close()
            raise RuntimeError(f"cannot start ur_rtde's process: {e}") from e
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self._dead = ""
        self.timed_out = False          # ended because a call passed its limit (not a crash)
        try:
            self._request(("open", host, frequency_hz, tuple(interfaces)), START_TIMEOUT_S, "connect")
        except (RuntimeError, ValueError):
            self._dead = "not connected"
            self._kill()
            raise

    def proxy(self, name: str) -> "Remote":
        return Remote(self, name)

    def call(self, name: str, method: str, *args, timeout_s: float | None = None):
        limit = self.call_timeout_s if timeout_s is None else timeout_s
        return self._request(("call", name, method, args), limit, f"{name}.{method}")

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _request(self, message: tuple, timeout_s: float, what: str):
        with self._lock:
            if self._dead:
                raise RuntimeError(f"ur_rtde's process for {self.host} is gone ({self._dead})")
            try:
                self._conn.send(message)
                answered = self._conn.poll(timeout_s)
                reply = self._conn.recv() if answered else None
            except (EOFError, OSError):
                reply, answered = None, True
            if reply is None:
                self.timed_out = not answered
                self._end(f"{what} not answered within {timeout_s} s" if not answered else self._exit_text())
                raise RuntimeError(f"ur_rtde {what}: {self._dead}; the connection is dropped")
        status, value = reply
        if status == "ok":
            return value
        if status == "progress":
            return AsyncProgress(*value)
        kind, text = value
        raise _exception_class(kind)(text)

    def _exit_text(self) -> str:
        try:
            code = self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "its process stopped answering"
        if code < 0:
            try:
                return f"the library's process died of signal {signal.Signals(-code).name}"
            except ValueError:
                return f"the library's process died of signal {-code}"
        return f"the library's process exited with status {code}"

    def _end(self, why: str) -> None:
        self._dead = why
        self._log("warning", f"ur_rtde ({self.host}): {why}; its process is stopped")
        self._kill()

    def _kill(self) -> None:
        with self._kill_lock:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            if not self._conn.closed:
                self._conn.close()

    def close(self, stop_script: bool, wait_s: float = CLOSE_WAIT_S) -> None:
        """Disconnect (after stopScript on a live link) within `wait_s`, then end the process."""
        if self._dead:
            return
        if not self._lock.acquire(timeout=wait_s):  # a call in flight that does not return: end it
            self._dead = "closed"
            self._proc.kill()  # the waiting call sees the socket close and finishes the clean-up
            return
        try:
            self._conn.send(("close", stop_script))
            if self._conn.poll(wait_s):
                self._conn.recv()
            else:
                self._log("warning", f"ur_rtde's disconnect did not return within {wait_s} s; its process is stopped")
        except (EOFError, OSError):
            pass
        finally:
            self._dead = "closed"
            self._kill()
            self._lock.release()


def _exception_class(kind: str) -> type:
    """The built-in exception the library raised (RuntimeError for a broken link, ValueError for
    its own bounds, TypeError for our own mistakes), so a bug is not read as a lost connection."""
    cls = getattr(builtins, kind, None)
    return cls if isinstance(cls, type) and issubclass(cls, Exception) else RuntimeError


class Remote:
    """`remote.method(*args)` is `process.call(name, "method", *args)`: the interface as the
    rest of the backend used it when it lived in this process."""

    def __init__(self, process: LibraryProcess, name: str):
        self._process, self._name = process, name

    def __getattr__(self, method: str):
        return lambda *args, timeout_s=None: self._process.call(self._name, method, *args, timeout_s=timeout_s)


# ---- the child --------------------------------------------------------------------------------
def _open(host: str, frequency_hz: float, interfaces: tuple) -> dict:
    made = {}
    try:
        if "dash" in interfaces:
            import dashboard_client
            made["dash"] = dashboard_client.DashboardClient(host)
            made["dash"].connect()
        if "recv" in interfaces:
            import rtde_receive
            made["recv"] = rtde_receive.RTDEReceiveInterface(host, frequency_hz)
        if "ctrl" in interfaces:
            import rtde_control
            made["ctrl"] = rtde_control.RTDEControlInterface(host, frequency_hz)
    except RuntimeError:
        _close(made, stop_script=False)
        raise
    return made


def _close(made: dict, stop_script: bool) -> None:
    for name in ("ctrl", "recv", "dash"):
        if name not in made:
            continue
        for method in ("stopScript", "disconnect") if name == "ctrl" and stop_script else ("disconnect",):
            try:
                getattr(made[name], method)()
            except RuntimeError:
                pass  # closing a dead connection


def _reply(value) -> tuple:
    """A library return value as a picklable reply (an AsyncOperationStatus as its two fields:
    this file runs as __main__ here, so its own classes would not unpickle in the node)."""
    if hasattr(value, "operationId"):
        return "progress", (value.operationId(), value.isAsyncOperationRunning())
    return "ok", value


def _exit(status: int = 0) -> None:
    """os._exit after flushing C's stdio: the library's last messages say why a link failed."""
    try:
        import ctypes
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass
    os._exit(status)


def _die_with_parent(parent: int, poll_s: float = 0.5) -> None:
    """End this process when the node that made it is gone (it may be inside a library call then,
    and would never read the closed socket). Polled, not PR_SET_PDEATHSIG: that signal follows
    the THREAD that started the process, and the node's executor threads come and go."""
    def watch():
        while os.getppid() == parent:
            time.sleep(poll_s)
        _exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def serve(fd: int, parent: int) -> None:
    _die_with_parent(parent)
    conn, made = Connection(fd), {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            _exit(0)  # the node is gone; the OS closes the sockets
        op = message[0]
        try:
            if op == "open":
                made = _open(*message[1:])
                reply = ("ok", None)
            elif op == "close":
                _close(made, stop_script=message[1])
                conn.send(("ok", None))
                _exit(0)
            else:
                _, name, method, args = message
                reply = _reply(getattr(made[name], method)(*args))
        except Exception as e:  # noqa: BLE001 - handed to the caller by kind and text
            reply = ("error", (type(e).__name__, str(e)))
        _send(conn, message, reply)


def _send(conn: Connection, message: tuple, reply: tuple) -> None:
    """The reply to `message`; a return value pickle cannot carry becomes a TypeError naming the
    call, so the child lives on and the caller is told which call it was."""
    try:
        conn.send(reply)
    except (TypeError, AttributeError, ValueError) as e:
        conn.send(("error", ("TypeError", f"{message[1]}.{message[2]} returned what cannot be sent: {e}")))


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
