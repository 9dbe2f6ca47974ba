"""Packaging a ROS 2 lab can install (issue 39): rosdep and colcon find both packages when given
both paths, package.xml declares every ROS package and every Python library with a rosdep key
that the code imports, and the runtime requirements are split from the extras with pins that
resolve for Python 3.10, 3.11 and 3.12 (requirements.lock, checked against the files here)."""
import ast
from pathlib import Path

import pytest

from spatial_manip.devtools import pins

ROOT = Path(__file__).resolve().parents[2]
ROS_PACKAGES = {"rclpy", "rcl_interfaces", "builtin_interfaces", "ament_index_python", "std_msgs", "geometry_msgs",
                "sensor_msgs", "visualization_msgs", "trajectory_msgs", "action_msgs", "tf2_msgs", "control_msgs", "launch",
                "launch_ros", "spatial_manip_interfaces"}
ROSDEP_KEYS = {"numpy": "python3-numpy", "scipy": "python3-scipy", "yaml": "python3-yaml", "cv2": "python3-opencv",
               "zmq": "python3-zmq", "msgpack": "python3-msgpack", "psutil": "python3-psutil", "PIL": "python3-pil",
               "tqdm": "python3-tqdm", "httpx": "python3-httpx"}
EXTRAS_ONLY = {"torch", "transformers", "ray", "matplotlib", "pytest", "pytest-timeout", "hypothesis", "playwright"}


def _imports(folders=("spatial_manip", "launch")) -> set[str]:
    names = set()
    for folder in folders:
        for f in (ROOT / folder).rglob("*.py"):
            for node in _import_statements(ast.parse(f.read_text()).body):
                if isinstance(node, ast.Import):
                    names |= {a.name.split(".")[0] for a in node.names}
                elif node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


def _import_statements(body: list[ast.stmt]):
    """The import statements among `body` and the statements nested in it: imports are statements,
    so the walk skips the expressions (a full ast.walk of the tree took 8 s on a loaded machine)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _import_statements(getattr(node, field, None) or [])


def test_both_packages_are_found_when_both_paths_are_named():
    packages = pytest.importorskip("catkin_pkg.packages")
    from catkin_pkg.package import parse_package

    assert [p.name for p in packages.find_packages(str(ROOT)).values()] == ["spatial_manip"]   # crawling stops
    both = {p.name for path in (ROOT, ROOT / "spatial_manip_interfaces") for p in packages.find_packages(str(path)).values()}
    assert both == {"spatial_manip", "spatial_manip_interfaces"}
    assert parse_package(str(ROOT / "package.xml")).name == "spatial_manip"


def test_package_xml_declares_what_the_code_imports():
    from catkin_pkg.package import parse_package

    declared = {d.name for d in parse_package(str(ROOT / "package.xml")).exec_depends}
    imported = _imports()
    missing = sorted((imported & ROS_PACKAGES) - declared - {"spatial_manip"})
    missing += sorted(key for module, key in ROSDEP_KEYS.items() if module in imported and key not in declared)
    assert not missing, f"add <exec_depend> for {missing} to package.xml"


def _requirement_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.add(line.split(";")[0].split("=")[0].split(">")[0].split("<")[0].strip().lower())
    return names


def test_runtime_requirements_leave_models_benchmark_and_tests_to_the_extras():
    runtime = _requirement_names(ROOT / "requirements.txt")
    assert not runtime & EXTRAS_ONLY, runtime & EXTRAS_ONLY
    assert "open3d-cpu" in runtime and "numpy" in runtime
    extras = set().union(*(_requirement_names(ROOT / f"requirements-{x}.txt") for x in ("models", "bench", "test")))
    assert EXTRAS_ONLY <= extras
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert all(f"requirements-{x}.txt" in setup for x in ("models", "bench", "test"))   # make setup installs them


@pytest.fixture(scope="module")
def lock() -> dict[str, dict[str, str]]:
    digest, locked = pins.read_lock()
    assert digest == pins.requirements_digest(), (
        "expected requirements.lock to be resolved from the requirement files as they are, but they changed since: "
        "run `python -m spatial_manip.devtools.pins` (a few minutes) and commit requirements.lock")
    assert sorted(locked) == sorted(pins.PYTHONS), f"expected a section per Python {pins.PYTHONS}, got {sorted(locked)}"
    return locked


@pytest.mark.parametrize("python", pins.PYTHONS)
def test_every_requirement_is_met_by_the_pins_locked_for_each_python(python, lock):
    """What a Humble (3.10), Kilted-wheel (3.11) or Jazzy (3.12) machine would install: the runtime
    requirements together with every extra `make setup` adds, as pip resolved them when the files
    last changed (the resolution itself, minutes of pip per Python, is `python -m
    spatial_manip.devtools.pins --check`). Every requirement line must name a locked package at a
    version it allows."""
    from packaging.requirements import Requirement      # pytest's own dependency

    chosen, unmet = lock[python], []
    for name, line in pins.requirement_lines():
        if line.startswith("-"):
            continue                                     # an option (index, constraint) line
        req = Requirement(line)
        if req.marker and not req.marker.evaluate({"python_version": python, "python_full_version": f"{python}.0"}):
            continue
        version = chosen.get(pins.normalised(req.name))
        if version is None or not req.specifier.contains(version, prereleases=True):
            unmet.append(f"{name}: {line} (locked: {version or 'absent'})")
    assert not unmet, f"requirements.lock does not meet these for Python {python}: {unmet}"
