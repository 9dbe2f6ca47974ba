"""Packaging a ROS 2 lab can install (issue 39): rosdep and colcon find both packages when given
both paths, package.xml declares every ROS package and every Python library with a rosdep key
that the code imports, and the runtime requirements are split from the extras with pins that
resolve for Python 3.10, 3.11 and 3.12."""
import ast
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.Import):
                    names |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module.split(".")[0])
    return names


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


# A resolution is a pure function of the requirement files, the target Python, pip and the indexes it
# reads: kept per machine, so only a change to one of those (or a day passing, for the public index)
# pays pip's 1-3 minutes per Python again. Delete the folder to force a fresh resolution.
RESOLVED_PINS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spatial_manip" / "resolved_pins"
RESOLVE_AGAIN_AFTER_S = 24 * 3600


def _fingerprint(location: str, h) -> None:
    """What pip reads at a local index or find-links location: each project's index page, or a
    folder's file names and sizes, or a file's (constraints) text."""
    path = Path(location.removeprefix("file://"))
    if path.is_file():
        h.update(path.read_bytes())
    elif path.is_dir():
        pages = sorted(path.glob("*/index.html"))
        for f in pages or sorted(path.iterdir()):
            h.update(f.read_bytes() if pages else f"{f.name}:{f.stat().st_size}".encode())


@pytest.fixture(scope="module")
def pip_setup() -> str:
    """pip's version, its configuration (indexes, find-links, constraints, from files and the
    environment) and the contents of the local indexes it names, as one digest."""
    pip = lambda *args: subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,  # noqa: E731
                                       check=True).stdout
    config = pip("config", "list")
    h = hashlib.sha256((pip("--version") + config).encode())
    for value in re.findall(r"='([^']*)'", config):
        for location in value.split():
            if location.startswith(("file://", "/")):
                _fingerprint(location, h)
    return h.hexdigest()


def _resolved_before(key: str) -> str | None:
    stamp = RESOLVED_PINS / key
    if stamp.exists() and time.time() - stamp.stat().st_mtime < RESOLVE_AGAIN_AFTER_S:
        return stamp.read_text()
    return None


def _remember(key: str, would_install: str) -> None:
    RESOLVED_PINS.mkdir(parents=True, exist_ok=True)
    part = RESOLVED_PINS / f"{key}.{os.getpid()}"
    part.write_text(would_install)
    part.replace(RESOLVED_PINS / key)          # whole or absent, when two runs resolve at once


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.slow
@pytest.mark.parametrize("python", ["3.10", "3.11", "3.12"])
def test_runtime_requirements_resolve_for_each_python(python, tmp_path, pip_setup):
    """What a Humble (3.10), Kilted-wheel (3.11) or Jazzy (3.12) machine would install: the runtime
    requirements together with every extra `make setup` adds (a set that resolves together also
    resolves alone, so the robot PC's runtime-only install is covered)."""
    paths = [ROOT / f"requirements{x}.txt" for x in ("", "-models", "-bench", "-test")]
    key = hashlib.sha256("".join([python, pip_setup, *(p.read_text() for p in paths)]).encode()).hexdigest()
    would_install = _resolved_before(key)
    if would_install is None:
        files = [arg for p in paths for arg in ("-r", str(p))]
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--python-version",
                            python, "--only-binary=:all:", *files, "--target", str(tmp_path / "t"),
                            "--disable-pip-version-check"], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0 and "Would install" in r.stdout, (r.stdout + r.stderr)[-2000:]
        would_install = next(line for line in r.stdout.splitlines() if line.startswith("Would install"))
        _remember(key, would_install)
    chosen = {_normalised(token.rsplit("-", 1)[0]) for token in would_install.split()[2:]}
    missing = {_normalised(n) for p in paths for n in _requirement_names(p)} - chosen
    assert not missing, f"pip did not choose {sorted(missing)} for Python {python}: {would_install[:500]}"
