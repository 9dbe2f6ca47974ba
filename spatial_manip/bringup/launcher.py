"""The pip-only launcher: starts each node of a graph as its own process with `--ros-args`,
prefixes every output line with the node's name, forwards Ctrl-C, and stops the whole graph
when a required node dies, exiting non-zero and naming it. For machines without `ros2 launch`;
on a ROS machine `ros2 launch spatial_manip <variant>.launch.py` reads the same graph file."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable

from spatial_manip.bringup.graph import Graph, NodeSpec


class LaunchError(RuntimeError):
    pass


def find_executable(spec: NodeSpec) -> str:
    """A node's console script: on PATH (venv, pip install) or in <prefix>/lib/<package> (colcon)."""
    found = shutil.which(spec.executable)
    if found:
        return found
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) + [sys.prefix]):
        cand = os.path.join(prefix, "lib", spec.package, spec.executable)
        if os.access(cand, os.X_OK):
            return cand
    raise LaunchError(f"node {spec.name!r}: executable {spec.executable!r} not found on PATH or in "
                      f"<prefix>/lib/{spec.package}; is the package installed (make setup)?")


@dataclass
class _Running:
    spec: NodeSpec
    proc: subprocess.Popen
    reader: threading.Thread


class Launcher:
    def __init__(self, graph: Graph, *, params: dict[str, dict] | None = None,
                 out: IO[str] | None = None, grace_s: float = 5.0):
        self.graph = graph
        self.params = params or {}
        self.out = out or sys.stdout
        self.grace_s = grace_s
        self._running: list[_Running] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()

    # --- output ----------------------------------------------------------------------------
    def log(self, text: str) -> None:
        with self._lock:
            self.out.write(f"[launcher] {text}\n")
            self.out.flush()

    def _pump(self, name: str, stream: IO[bytes]) -> None:
        width = max(len(n.name) for n in self.graph.nodes)
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._lock:
                self.out.write(f"[{name:<{width}}] {line}\n")
                self.out.flush()
        stream.close()

    def pid_of(self, name: str) -> int:
        """The process id of the started node `name` (a fault test kills this one, never another
        graph's node of the same name)."""
        return next(r.proc.pid for r in self._running if r.spec.name == name)

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        cmds = [(s, [find_executable(s), *s.arguments, *s.ros_args(self.params.get(s.name))])
                for s in self.graph.nodes]  # resolve all first: fail before starting anything
        for spec, cmd in cmds:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env={**os.environ, "PYTHONUNBUFFERED": "1"})
            t = threading.Thread(target=self._pump, args=(spec.name, proc.stdout), daemon=True)
            t.start()
            self._running.append(_Running(spec, proc, t))
            self.log(f"started {spec.name} (pid {proc.pid})")

    def request_stop(self, *_):
        self._stop.set()

    def wait(self, poll_s: float = 0.1) -> int:
        """Block until Ctrl-C (exit 0) or a required node dies (exit 1, named)."""
        while not self._stop.is_set():
            for r in self._running:
                code = r.proc.poll()
                if code is None:
                    continue
                if r.spec.required:
                    self.log(f"required node {r.spec.name!r} exited with code {code}; stopping the graph")
                    self.shutdown(exclude=r)
                    self.log(f"FAILED: required node {r.spec.name} died (exit code {code})")
                    return 1
                self.log(f"optional node {r.spec.name!r} exited with code {code}; continuing")
                self._running.remove(r)
                break
            time.sleep(poll_s)
        self.shutdown()
        return 0

    def shutdown(self, exclude: _Running | None = None) -> None:
        live = [r for r in self._running if r is not exclude and r.proc.poll() is None]
        for r in live:
            _signal(r.proc, signal.SIGINT)
        deadline = time.monotonic() + self.grace_s
        for r in live:
            try:
                r.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.log(f"{r.spec.name} ignored Ctrl-C for {self.grace_s:.0f} s; terminating")
                _signal(r.proc, signal.SIGTERM)
                try:
                    r.proc.wait(2.0)
                except subprocess.TimeoutExpired:
                    _signal(r.proc, signal.SIGKILL)
                    r.proc.wait()
        for r in self._running:
            r.reader.join(timeout=1.0)

    def run(self, on_started: Callable[[], None] | None = None) -> int:
        old = {s: signal.signal(s, self.request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.start()
            if on_started:
                on_started()
            return self.wait()
        finally:
            for s, h in old.items():
                signal.signal(s, h)


def _signal(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the node and anything it started
    except (ProcessLookupError, PermissionError):
        pass
