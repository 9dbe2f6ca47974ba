"""Test-wide environment: ROS 2 discovery kept on this machine, a domain of its own per test
process, headless MuJoCo. Set before any test imports rclpy or mujoco, and inherited by every
process a test starts. Under pytest-xdist (make test: -n 2), whole modules per worker
(worker_scheduling.py)."""
import os
import random
import sys

import pytest
from recordings import build_recording_isolated
from worker_scheduling import ModuleScheduling, slow_first

from spatial_manip.bench.domains import hold_domains

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # Jazzy and later
os.environ.setdefault("ROS_LOCALHOST_ONLY", "1")                     # Humble


def _own_domain() -> str:
    """A domain this process (the run, or one xdist worker of it) holds alone on the machine, as the
    benchmarks hold theirs (bench/domains.py), for as long as it lives: two workers drawing at random
    from 1-101 met once in 101 runs, and a run could draw a benchmark's domain. A random one when all
    are held."""
    try:
        return str(hold_domains(1)[0])
    except RuntimeError:
        return str(random.SystemRandom().randint(1, 101))


os.environ["ROS_DOMAIN_ID"] = os.environ.get("SM_TEST_DOMAIN_ID") or _own_domain()

# Compiled modules kept (__pycache__, git-ignored) even where the environment says not to write them
# (PYTHONDONTWRITEBYTECODE, set on some machines and CI images): the suite starts hundreds of Python
# processes (nodes, the CLI, benches), each of which otherwise compiles every project module it
# imports from source again, and pytest rewrites every test module again in each run. 8% of the CPU
# of test_one_line_errors (23.8 s -> 21.7 s of user time, load 16, session 43).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.hookimpl(optionalhook=True)            # a hook of pytest-xdist: optional under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """-n N (and --dist load or loadfile): a worker takes a whole module at a time, the fixed-port
    UR modules together, the slowest first (worker_scheduling.py)."""
    if config.getoption("dist") in ("load", "loadfile"):
        return ModuleScheduling(config, log)
    return None


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):       # an xdist worker: the slowest modules first
        slow_first(items)


@pytest.fixture(scope="session")
def vga_recording(tmp_path_factory):
    """A 12-frame 640x480 synthetic L515 recording (0.25 mm depth units): the camera tests' and
    camera_node's. Written in a child process (recordings.py: a native crash there fails the tests
    that need it, not the worker)."""
    from spatial_manip.camera.synthetic import SyntheticConfig  # after the env above

    path = tmp_path_factory.mktemp("rec") / "vga.db3"
    return build_recording_isolated(str(path), SyntheticConfig(n_frames=12, distinct_frames=4))
