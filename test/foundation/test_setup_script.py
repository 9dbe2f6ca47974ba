"""scripts/setup.sh checks its Python before it installs anything: a missing interpreter, one the
ROS 2 wheels are not built for, or one without the venv module stops it at once with one line naming
what is missing and the apt line that installs it (nothing is created, no apt-get runs)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _fake_python(folder: Path, version: str, has_ensurepip: bool) -> Path:
    """A stand-in interpreter: answers the script's version query, has no rclpy, and has or lacks ensurepip."""
    py = folder / f"fake-python{version}"
    py.write_text("#!/bin/sh\n"
                  'case "$2" in *rclpy*) exit 1 ;; *ensurepip*) exit ' + ("0" if has_ensurepip else "1") + " ;; esac\n"
                  f"echo {version}\n")
    py.chmod(0o755)
    return py


# Commands that install or check system packages: each found first on the script's PATH is a fake
# that writes its call to installer-calls and fails, so the test can never install anything (the
# suite may run as root, where a regressed check would reach a real apt-get).
INSTALLERS = ("apt-get", "apt", "dpkg", "sudo")


def _fake_installers(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    for name in INSTALLERS:
        fake = bin_dir / name
        fake.write_text(f'#!/bin/sh\necho "{name} $*" >> "{tmp_path / "installer-calls"}"\nexit 1\n')
        fake.chmod(0o755)
    return bin_dir


def _setup(tmp_path: Path, python: str) -> subprocess.CompletedProcess:
    (tmp_path / "scripts").mkdir(exist_ok=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    path = f"{_fake_installers(tmp_path)}:/usr/bin:/bin"
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "setup.sh")], capture_output=True, text=True,
                          env={"PATH": path, "HOME": str(tmp_path), "PYTHON": python}, timeout=60)
    calls = tmp_path / "installer-calls"
    assert not calls.exists(), f"setup.sh ran a package command before refusing: {calls.read_text()}"
    return done


@pytest.mark.parametrize("version, ensurepip, expected", [
    ("3.9", True, ["Python 3.9", "need Python 3.11", "sudo apt-get install -y python3.11 python3.11-venv"]),
    ("3.12", True, ["Python 3.12", "need Python 3.11", "PYTHON=python3.11"]),
    ("3.11", False, ["venv module (ensurepip) is missing", "sudo apt-get install -y python3.11-venv"]),
])
def test_a_python_setup_cannot_use_is_refused_before_anything_is_installed(tmp_path, version, ensurepip, expected):
    done = _setup(tmp_path, str(_fake_python(tmp_path, version, ensurepip)))
    assert done.returncode == 1, done.stdout + done.stderr
    for text in expected:
        assert text in done.stdout, (text, done.stdout)
    assert "installing" not in done.stdout and not (tmp_path / ".venv").exists()


def test_a_missing_interpreter_is_named(tmp_path):
    done = _setup(tmp_path, "python3.11-not-here")
    assert done.returncode == 1
    assert "no 'python3.11-not-here' found" in done.stdout and "python3.11-venv" in done.stdout, done.stdout
