"""How `make test` shares the suite between its pytest-xdist workers (-n 2): whole modules.

xdist's default hands out single tests, so a module's tests can land on both workers and each worker
then builds the module's fixtures (an ESPIRE driver run, a MuJoCo graph, scene pools: tens of
seconds each). Here a worker takes a module at a time, as `--dist loadfile` does, with two changes:
- the modules that start `spatial-manip ur-emulator` on the UR controller's fixed ports (RTDE,
  script, dashboard, Robotiq: emulator_ports.PORTS) form one unit, run one after another on one
  worker; on two workers at once the second finds the ports taken and skips (a lost test, not a
  failure);
- the slowest modules start first (a worker that picks up a 3-minute module last leaves the other
  core idle for those minutes); the rest keep their collection order.
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

# The slowest modules of the suite (a serial run's --durations, s26 and s27), slowest first.
# A module missing here only starts in its collection place; a name that no longer exists is ignored.
SLOW_MODULES_FIRST = (
    "test/bench/test_demo.py",
    "test/bench/test_bench_backends.py",
    "test/espire/test_stack_driver_e2e.py",
    "test/foundation/test_agent_e2e.py",
    UR_PORTS_UNIT,
    "test/foundation/test_cancel_stops_the_arm.py",
    "test/sim/test_tasks.py",
    "test/foundation/test_faults.py",
    "test/control/test_fjt_arm.py",
    "test/bench/test_trace_viewer_browser.py",
    "test/bench/test_worker_graph.py",
)


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its module, or UR_PORTS_UNIT."""
    module = nodeid.split("::", 1)[0]
    return UR_PORTS_UNIT if module in UR_PORT_MODULES else module


def slow_first(items: list) -> None:
    """Reorder collected items (in place, stably) so the units of SLOW_MODULES_FIRST come first, in
    that order. Every worker collects and reorders alike, so their collections stay identical."""
    rank = {unit: i for i, unit in enumerate(SLOW_MODULES_FIRST)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))


class ModuleScheduling(LoadScopeScheduling):
    """xdist's scope scheduling with work_unit as the scope and the collection's order kept (xdist
    otherwise puts the units with the most tests first, whatever they cost)."""

    def __init__(self, config, log=None):
        config.option.loadscopereorder = False
        super().__init__(config, log)

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)
