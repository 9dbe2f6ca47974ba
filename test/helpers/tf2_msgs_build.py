"""Message packages the PyPI ROS wheels lack, for the tests: tf2_msgs (TF tests) and control_msgs
(the ur_driver arm backend's tests). The installed one where it imports (a ROS 2 install), else the
test-only package of that name beside this file built once with colcon and the venv's rosidl
generators (about 30 s) into build/test_<name>, reused while its sources are unchanged."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def _installed(probe: str) -> bool:
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


def _digest(source: Path) -> str:
    h = hashlib.sha1()
    for f in sorted(source.rglob("*")):
        if f.is_file():
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def tf2_msgs_env() -> dict:
    """Environment additions under which a child process imports tf2_msgs ({} when it already does)."""
    return built_msgs_env("tf2_msgs", "import tf2_msgs.msg; tf2_msgs.msg.TFMessage")


def control_msgs_env() -> dict:
    """The same for control_msgs (FollowJointTrajectory)."""
    return built_msgs_env("control_msgs", "import control_msgs.action; control_msgs.action.FollowJointTrajectory")


def built_msgs_env(name: str, probe: str) -> dict:
    """Environment additions under which a child process runs `probe` (imports the package
    `name`): {} when it already does, else the test-only package test/helpers/<name> built once;
    raises RuntimeError with colcon's log tail when the build fails."""
    if _installed(probe):
        return {}
    source, out = HERE / name, ROOT / "build" / f"test_{name}"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:          # xdist workers: one builds, the others wait
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = out / ".stamp"
        if not stamp.exists() or stamp.read_text() != _digest(source):
            _build(name, source, out)
            stamp.write_text(_digest(source))
    return _env_for(out)


def _build(name: str, source: Path, out: Path) -> None:
    for d in ("build", "install", "log"):
        shutil.rmtree(out / d, ignore_errors=True)
    venv = Path(sys.prefix)
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}")
    if not os.environ.get("ROS_DISTRO"):        # the PyPI wheels are the underlay
        env.update(AMENT_PREFIX_PATH=str(venv), CMAKE_PREFIX_PATH=str(venv))
    cmd = ["colcon", "--log-base", str(out / "log"), "build", "--base-paths", str(source),
           "--build-base", str(out / "build"), "--install-base", str(out / "install"), "--merge-install",
           "--cmake-args", f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"building the test {name} failed:\n{(r.stdout + r.stderr)[-3000:]}")


def _env_for(out: Path) -> dict:
    prefix = out / "install"                   # --merge-install: one prefix for the package
    site = next(prefix.glob("lib/python3*/site-packages"), None) or next(prefix.glob("local/lib/python3*/dist-packages"))
    join = lambda new, key: f"{new}:{os.environ[key]}" if os.environ.get(key) else str(new)  # noqa: E731
    return {"PYTHONPATH": join(site, "PYTHONPATH"), "LD_LIBRARY_PATH": join(prefix / "lib", "LD_LIBRARY_PATH"),
            "AMENT_PREFIX_PATH": join(prefix, "AMENT_PREFIX_PATH")}


def use_in_this_process(env: dict) -> None:
    """Make this process import a package built by built_msgs_env: its Python path, its libraries
    loaded by absolute path (the dynamic loader read LD_LIBRARY_PATH when the process started), and
    the environment that rosidl's type-support lookup reads at run time."""
    import ctypes

    if not env:
        return
    os.environ.update(env)
    for path in reversed(env["PYTHONPATH"].split(":")):
        if path not in sys.path:
            sys.path.insert(0, path)
    prefix = Path(env["AMENT_PREFIX_PATH"].split(":")[0])
    pending = sorted((prefix / "lib").glob("*.so"))
    for _ in range(len(pending)):              # in whatever order their dependencies allow
        for lib in list(pending):
            try:
                ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
                pending.remove(lib)
            except OSError:
                pass
        if not pending:
            return
    raise RuntimeError(f"could not load {[p.name for p in pending]} from {prefix / 'lib'}")
