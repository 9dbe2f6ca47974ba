"""Code must run on Python 3.10-3.12 (Humble, Jazzy) and never import `launch`, `tf2_ros` or
`rosbag2_py` at module level (they are absent here and optional on a ROS machine)."""
import ast
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted(p for d in ("spatial_manip", "launch", "test") for p in (ROOT / d).rglob("*.py"))
FORBIDDEN = {"launch", "launch_ros", "tf2_ros", "rosbag2_py"}


def _interpreter(version: str) -> str | None:
    cands = sorted(pathlib.Path("/root/.pyenv/versions").glob(f"{version}.*/bin/python")) + [shutil.which(f"python{version}")]
    for c in filter(None, cands):  # a pyenv shim may exist without the version behind it
        if subprocess.run([str(c), "-c", "pass"], capture_output=True).returncode == 0:
            return str(c)
    return None


@pytest.mark.parametrize("version", ["3.10", "3.12"])
def test_every_module_compiles_on(version):
    py = _interpreter(version)
    if py is None:
        pytest.skip(f"no Python {version} on this machine")
    code = "import sys\nfor f in sys.argv[1:]: compile(open(f, encoding='utf-8').read(), f, 'exec')"
    out = subprocess.run([py, "-c", code, *map(str, SOURCES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


def test_no_module_level_import_of_ros_only_packages():
    offenders = []
    for f in SOURCES:
        for node in ast.parse(f.read_text()).body:  # module level only; imports inside functions are fine
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module.split(".")[0]]
            offenders += [f"{f.relative_to(ROOT)}: {n}" for n in names if n in FORBIDDEN]
    assert not offenders, offenders


def test_test_module_basenames_are_unique():
    """pytest's default import mode cannot collect two test modules with one basename."""
    names = [p.name for p in (ROOT / "test").rglob("*.py") if p.name != "conftest.py"]
    dup = sorted({n for n in names if names.count(n) > 1})
    assert not dup, f"rename these test modules so each basename is unique: {dup}"
