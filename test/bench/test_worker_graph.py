"""A benchmark worker whose graph loses a node starts the graph again before its next episode,
instead of waiting 60 s for a dead server on every episode that is left."""
import io
import signal

import pytest

from ros_helpers import wait_for
from spatial_manip.bench.worker import Graph

pytestmark = pytest.mark.ros   # starts the sim graph's node processes (about 2 s)


def test_a_dead_node_restarts_the_graph_and_too_many_deaths_stop_the_worker(tmp_path):
    log = io.StringIO()
    g = Graph("sim", {"planner_node": {"segmenter": "ground_truth", "trace_dir": str(tmp_path)}}, log)
    try:
        assert g.dead() == [] and g.ensure_running() is False
        planner = next(r.proc for r in g.launcher._running if r.spec.name == "planner_node")
        planner.send_signal(signal.SIGKILL)
        assert wait_for(lambda: g.dead() == [f"planner_node (exit code {-signal.SIGKILL})"], 30.0), g.dead()
        assert g.ensure_running() is True and g.restarts == 1
        assert g.dead() == [] and planner not in [r.proc for r in g.launcher._running]
        g.restarts = Graph.MAX_RESTARTS         # the limit: a graph that keeps dying ends the worker, named
        next(r.proc for r in g.launcher._running if r.spec.name == "grasp_node").send_signal(signal.SIGKILL)
        assert wait_for(lambda: bool(g.dead()), 30.0)
        with pytest.raises(RuntimeError, match=r"graph died 4 times \(last: grasp_node"):
            g.ensure_running()
    finally:
        g.stop()
    assert "started planner_node" in log.getvalue()


def test_a_bench_stopped_with_sigterm_stops_its_workers_graphs(tmp_path):
    """`kill` of a running `spatial-manip bench` (or a scheduler's time limit) used to leave each
    worker's sim_node, grasp_node and planner_node running: SIGTERM ended the processes without
    their `finally` blocks. Now the bench stops its workers and each worker its graph."""
    import os
    import re
    import subprocess
    import sys

    from spatial_manip.sim import tasks

    out = tmp_path / "run"
    # two tasks from a small pool, reused by the bench as on a resumed run: the test is about the
    # stop, and the default pool's generation took most of its time
    tasks.write(out / "tasks", tasks.generate("smoke", 2, 0, pool_size=2))
    bench = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "bench", "--suite", "smoke", "--episodes", "2",
                              "--workers", "1", "--segmenter", "ground_truth", "--out", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = out / "worker0.log"

    def node_pids():
        text = log.read_text() if log.exists() else ""
        return [int(p) for p in re.findall(r"started \w+ \(pid (\d+)\)", text)]

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        assert wait_for(lambda: len(node_pids()) == 3, 120.0), "the worker's graph did not start"
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(60) != 0
        assert wait_for(lambda: not any(alive(p) for p in node_pids()), 25.0), \
            f"nodes left running: {[p for p in node_pids() if alive(p)]}"
    finally:
        bench.kill()
        for p in node_pids():
            if alive(p):
                os.kill(p, signal.SIGKILL)
