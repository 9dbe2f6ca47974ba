"""How `make test` shares the suite between its pytest-xdist workers (-n 2): whole modules.

xdist's default hands out single tests, so a module's tests can land on both workers and each worker
then builds the module's fixtures (an ESPIRE driver run, a MuJoCo graph, scene pools: tens of
seconds each). Here a worker takes a module at a time, as `--dist loadfile` does, with two changes:
- the modules that start `spatial-manip ur-emulator` on the UR controller's fixed ports (RTDE,
  script, dashboard, Robotiq: emulator_ports.PORTS) form one unit, run one after another on one
  worker; on two workers at once the second finds the ports taken and skips (a lost test, not a
  failure);
- the slowest modules start first (a worker that picks up a 3-minute module last leaves the other
  core idle for those minutes); the rest keep their collection order;
- a worker that dies (a native crash) costs one test: xdist reports the test it was running as
  failed ("worker 'gwN' crashed while running ..."), the rest of its module goes to the next free
  worker and the run goes on. xdist 3.8's scope scheduling instead put the crashed test back in the
  queue (it crashed the replacement worker too) and re-queued finished modules, which a worker then
  received with nothing to run: no test ever finished there again, so the run hung with both workers
  idle (session 27; test_worker_scheduling.py reproduces both).
"""
from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# Modules that serve or connect to the fixed UR ports (the skip "a UR controller or emulator
# already serves 30004/30003/29999/63352 here" in each): one unit of work.
UR_PORT_MODULES = (
    "test/control/test_arm_reconnect_ur_rtde.py",
    "test/control/test_arm_stall_ur_rtde.py",
    "test/control/test_move_path.py",
    "test/control/test_ur_rtde_process.py",
    "test/nodes/test_arm_node_ur_rtde.py",
    "test/nodes/test_config_refusals.py",
)
UR_PORTS_UNIT = "ur-controller-ports"

# The slowest units of the suite, slowest first: the sums of a whole -n 2 run's --durations (s28,
# load 9-16, 39.5 min; quiet, each about a third). A module missing here only starts in its collection
# place; a name that no longer exists is ignored.
SLOW_MODULES_FIRST = (
    "test/bench/test_bench_backends.py",          # 243 s
    "test/espire/test_stack_driver_e2e.py",       # 242 s
    UR_PORTS_UNIT,                                # 224 s
    "test/control/test_fjt_arm.py",               # 188 s
    "test/foundation/test_cancel_stops_the_arm.py",
    "test/sim/test_tasks.py",
    "test/espire/test_episode_rules.py",
    "test/sim/test_oracle.py",
    "test/foundation/test_agent_e2e.py",
    "test/nodes/test_camera_tf.py",
    "test/foundation/test_layers.py",
    "test/foundation/test_faults.py",
    "test/sim/test_oracle_mujoco.py",
    "test/reasoning/test_generator_equivalence.py",
    "test/bench/test_demo.py",
    "test/bench/test_trace_viewer_browser.py",
    "test/foundation/test_one_line_errors.py",
    "test/reasoning/test_mssr_transformers.py",
    "test/espire/test_server_e2e.py",
    "test/bench/test_worker_graph.py",
    "test/bench/test_reference_bench.py",          # 60 s
)

# Modules of many independent tests whose module fixtures cost little: each test is a unit of its
# own, and they all go last, where the two workers share them and end together. The recorded
# frames took 338 s in that run (44 frames, 8 s each; the largest module), and as one unit started
# late it would leave one worker running it alone.
SPLIT_MODULES = (
    "test/perception/test_recorded_frames.py",
)


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its module, UR_PORTS_UNIT, or itself (SPLIT_MODULES)."""
    module = nodeid.split("::", 1)[0]
    if module in SPLIT_MODULES:
        return nodeid
    return UR_PORTS_UNIT if module in UR_PORT_MODULES else module


def slow_first(items: list) -> None:
    """Reorder collected items (in place, stably) so the units of SLOW_MODULES_FIRST come first, in
    that order, and the tests of SPLIT_MODULES last. Every worker collects and reorders alike, so
    their collections stay identical."""
    rank = {unit: i for i, unit in enumerate(SLOW_MODULES_FIRST)}
    split = set(SPLIT_MODULES)

    def key(item) -> int:
        if item.nodeid.split("::", 1)[0] in split:
            return len(rank) + 1
        return rank.get(work_unit(item.nodeid), len(rank))

    items.sort(key=key)


class ModuleScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with work_unit as the scope and the collection's order kept (xdist
    otherwise puts the units with the most tests first, whatever they cost)."""

    def __init__(self, config, log=None):
        config.option.loadscopereorder = False
        super().__init__(config, log)

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)

    def remove_node(self, node) -> str | None:
        """A worker left: at the end of its work (None), or crashed (the test it was running, which
        xdist reports failed). The crashed test is marked done, not run again; the units with tests
        still to run go back to the front of the queue, finished units are dropped."""
        workload = self.assigned_work.pop(node)
        pending = [nodeid for unit in workload.values() for nodeid, done in unit.items() if not done]
        if not pending:
            return None
        crashitem = pending[0]              # a worker runs its units' tests in order: the first not done
        workload[self._split_scope(crashitem)][crashitem] = True
        for scope in reversed(workload):
            if not all(workload[scope].values()):
                self.workqueue[scope] = workload[scope]
                self.workqueue.move_to_end(scope, last=False)
        for other in self.assigned_work:
            self._reschedule(other)
        return crashitem
