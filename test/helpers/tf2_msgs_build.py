"""tf2_msgs for the TF tests: the installed one where it imports (a ROS 2 install), else the
test-only package beside this file built once with colcon and the venv's rosidl generators
(about 30 s) into build/test_tf2_msgs, reused while its sources are unchanged."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).resolve().parent / "tf2_msgs"
OUT = ROOT / "build" / "test_tf2_msgs"


def _installed() -> bool:
    code = "import tf2_msgs.msg; tf2_msgs.msg.TFMessage"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def _digest() -> str:
    h = hashlib.sha1()
    for f in sorted(SOURCE.rglob("*")):
        if f.is_file():
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def tf2_msgs_env() -> dict:
    """Environment additions under which a child process imports tf2_msgs ({} when it already
    does); raises RuntimeError with colcon's log tail when the build fails."""
    if _installed():
        return {}
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / ".lock", "w") as lock:          # xdist workers: one builds, the others wait
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = OUT / ".stamp"
        if not stamp.exists() or stamp.read_text() != _digest():
            _build()
            stamp.write_text(_digest())
    return _env_for()


def _build() -> None:
    for d in ("build", "install", "log"):
        shutil.rmtree(OUT / d, ignore_errors=True)
    venv = Path(sys.prefix)
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}")
    if not os.environ.get("ROS_DISTRO"):        # the PyPI wheels are the underlay
        env.update(AMENT_PREFIX_PATH=str(venv), CMAKE_PREFIX_PATH=str(venv))
    cmd = ["colcon", "--log-base", str(OUT / "log"), "build", "--base-paths", str(SOURCE),
           "--build-base", str(OUT / "build"), "--install-base", str(OUT / "install"), "--merge-install",
           "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"building the test tf2_msgs failed:\n{(r.stdout + r.stderr)[-3000:]}")


def _env_for() -> dict:
    prefix = OUT / "install"                   # --merge-install: one prefix for the package
    site = next(prefix.glob("lib/python3*/site-packages"), None) or next(prefix.glob("local/lib/python3*/dist-packages"))
    join = lambda new, key: f"{new}:{os.environ[key]}" if os.environ.get(key) else str(new)  # noqa: E731
    return {"PYTHONPATH": join(site, "PYTHONPATH"), "LD_LIBRARY_PATH": join(prefix / "lib", "LD_LIBRARY_PATH"),
            "AMENT_PREFIX_PATH": join(prefix, "AMENT_PREFIX_PATH")}
