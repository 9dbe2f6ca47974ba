"""make test's two xdist workers take whole modules; the modules on the UR controller's fixed ports
run on one worker, one after another (test/helpers/worker_scheduling.py). A new module that starts
the UR emulator and is not listed would skip on one worker while the other holds the ports."""
import re
import subprocess
import sys
from pathlib import Path

import worker_scheduling as ws

ROOT = Path(__file__).resolve().parents[2]
# what a module does when it serves or needs the fixed ports: starts the emulator process, checks the
# ports, asks for the control folder's emulator-backed arm (test/control/conftest.py ur_arm), or
# takes the reconnect module's emulator-and-node stack
FIXED_PORT_USE = re.compile(r"ports_free\(|\"ur-emulator\"|def test_\w+\([^)]*\bur_arm\b|from test_arm_reconnect_ur_rtde import")


def _modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / "test").rglob("test_*.py")}


def test_every_module_on_the_fixed_ur_ports_is_in_the_one_unit():
    this = Path(__file__).resolve().relative_to(ROOT).as_posix()      # names the patterns, uses none
    using = {m for m in _modules() - {this} if FIXED_PORT_USE.search((ROOT / m).read_text())}
    assert using, "the pattern no longer finds the UR emulator modules: update FIXED_PORT_USE"
    assert using == set(ws.UR_PORT_MODULES), (
        f"list these in worker_scheduling.UR_PORT_MODULES: {sorted(using - set(ws.UR_PORT_MODULES))}; "
        f"these no longer use the fixed ports: {sorted(set(ws.UR_PORT_MODULES) - using)}")


def test_the_slow_modules_named_first_exist():
    assert set(ws.SLOW_MODULES_FIRST) - {ws.UR_PORTS_UNIT} <= _modules()
    assert set(ws.SPLIT_MODULES) <= _modules() and not set(ws.SPLIT_MODULES) & set(ws.SLOW_MODULES_FIRST)


def test_units_are_modules_but_the_ur_ports_one():
    assert ws.work_unit("test/sim/test_tasks.py::test_deterministic_for_a_seed") == "test/sim/test_tasks.py"
    assert ws.work_unit("test/control/test_move_path.py::test_x[1]") == ws.UR_PORTS_UNIT
    assert ws.work_unit("test/nodes/test_arm_node_ur_rtde.py::test_y") == ws.UR_PORTS_UNIT
    frame = "test/perception/test_recorded_frames.py::test_a_recorded_frame_is_named_as_its_truth_says[pick-1]"
    assert ws.work_unit(frame) == frame         # a split module: each test a unit of its own


class _Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def test_slow_modules_go_first_in_their_order_the_split_ones_last_and_the_rest_keep_theirs():
    frames = "test/perception/test_recorded_frames.py::t"
    ids = ["test/a/test_one.py::t1", f"{frames}[1]", "test/bench/test_bench_backends.py::t", "test/a/test_two.py::t",
           "test/control/test_move_path.py::t", "test/bench/test_demo.py::t", f"{frames}[2]", "test/a/test_one.py::t2"]
    items = [_Item(i) for i in ids]
    ws.slow_first(items)
    assert [i.nodeid for i in items] == ["test/bench/test_bench_backends.py::t", "test/control/test_move_path.py::t",
                                         "test/bench/test_demo.py::t", "test/a/test_one.py::t1",
                                         "test/a/test_two.py::t", "test/a/test_one.py::t2",
                                         f"{frames}[1]", f"{frames}[2]"]


CRASHING_SUITE = {
    "conftest.py": "import pytest\nfrom worker_scheduling import ModuleScheduling\n\n\n"
                   "@pytest.hookimpl(optionalhook=True)\n"
                   "def pytest_xdist_make_scheduler(config, log):\n    return ModuleScheduling(config, log)\n",
    "test_a.py": "import time\nimport pytest\n\n\n@pytest.mark.parametrize('i', range(4))\n"
                 "def test_x(i):\n    time.sleep(0.1)\n",
    "test_crash.py": "import os\nimport signal\n\n\ndef test_before():\n    pass\n\n\n"
                     "def test_crash():\n    os.kill(os.getpid(), signal.SIGSEGV)\n\n\n"
                     "def test_after():\n    pass\n",
    "test_b.py": "def test_y():\n    pass\n",
    "test_c.py": "def test_z():\n    pass\n",
}


def test_a_crashed_worker_costs_its_one_test_and_the_run_finishes(tmp_path):
    """A worker killed by a native crash (pyrealsense2's recorder did it in session 27): xdist fails
    the test it ran, a new worker takes the rest of the module, every other test runs once and the run
    ends. With xdist 3.8's scope scheduling as it was, the crashed test was queued again (and crashed
    the replacement too) and the run then hung with both workers idle."""
    helpers = str(Path(ws.__file__).parent)
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in CRASHING_SUITE.items():
        (suite / name).write_text(text)
    # the plugins this suite does not use (dash, anyio, hypothesis) cost each process seconds of imports
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:dash",
                          "-p", "no:anyio", "-p", "no:hypothesispytest", "-n", "2",
                          "--rootdir", str(suite), "--basetemp", str(tmp_path / "tmp"), "-o", f"pythonpath={helpers}",
                          "-rf", str(suite)],
                         cwd=suite, capture_output=True, text=True, timeout=180)
    assert out.returncode == 1, out.stdout[-3000:]
    assert "crashed while running 'test_crash.py::test_crash'" in out.stdout
    assert re.search(r"\b1 failed, 8 passed\b", out.stdout), out.stdout[-3000:]
