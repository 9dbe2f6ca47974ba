"""A ROS 2 lab's install: the spatial_manip package built with a plain `colcon build` (no
--symlink-install) in a workspace outside the source tree, as an overlay on the interfaces' colcon
install that `make setup` built (install/spatial_manip_interfaces, a plain colcon build too); then
every node of the graphs started from that install, from another working directory, with only the
install's site-packages on PYTHONPATH, reaches ready: config, URDF and .msg files come from the
installs' share/, not from the repository.

Building the interfaces a second time here cost 2-6 min of a loaded 2-core CI run and proved nothing
the set-up's build does not: the overlay build takes seconds. That colcon finds both packages when
given both paths is test_packaging's."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from node_process import stop
from ros_helpers import private_domain_id

pytestmark = [pytest.mark.slow, pytest.mark.ros, pytest.mark.timeout(600)]
pytest.importorskip("rclpy")

ROOT = Path(__file__).resolve().parents[2]
UNDERLAY = ROOT / "install"     # make setup's colcon install of spatial_manip_interfaces
READY_S = 150      # six nodes importing MuJoCo, open3d and the planners at once on 2 loaded cores


def _sources() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                         capture_output=True).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def _build(ws: Path) -> Path:
    """colcon build of the spatial_manip package in `ws` over the interfaces' install; returns
    ws/install."""
    ifc = UNDERLAY / "spatial_manip_interfaces"
    assert (ifc / "share" / "spatial_manip_interfaces" / "package.xml").is_file(), \
        f"expected make setup's interfaces install at {ifc}, found none: run `make setup`"
    src = ws / "src" / "spatial_manip"
    for f in _sources():
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(ROOT / f, src / f)
        except FileNotFoundError:  # an editor's temporary file, gone since it was listed
            pass
    venv = Path(sys.prefix)
    underlays = [str(ifc)] + ([str(venv)] if not os.environ.get("ROS_DISTRO") else [])  # the PyPI wheels
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", PYTHONPATH="", COLCON_PREFIX_PATH=str(UNDERLAY),
               AMENT_PREFIX_PATH=":".join(underlays + [os.environ.get("AMENT_PREFIX_PATH", "")]).rstrip(":"))
    # colcon stops crawling at the root package: the nested interfaces are not built again
    r = subprocess.run(["colcon", "build", "--base-paths", "src/spatial_manip"], cwd=ws, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    built = sorted(p.name for p in (ws / "install").iterdir() if p.is_dir())
    assert built == ["spatial_manip"], f"expected colcon to build spatial_manip alone, it built {built}"
    return ws / "install"


@pytest.fixture(scope="module")
def install(tmp_path_factory):
    t0 = time.monotonic()
    prefix = _build(tmp_path_factory.mktemp("colcon_ws"))
    print(f"colcon build: {time.monotonic() - t0:.1f} s")
    return prefix


def _shell(install: Path, command: str, env_extra: dict | None = None, **popen):
    """`command` under `source install/setup.bash`, with no source tree on the Python path."""
    venv = Path(sys.prefix)
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH",
                                                             "COLCON_PREFIX_PATH", "SPATIAL_MANIP_CONFIG",
                                                             "SPATIAL_MANIP_SHARE")}
    # the wheels' bootstrapper has put their libraries on LD_LIBRARY_PATH (and marked it done):
    # keep those, drop the interfaces' libraries: the install's setup.bash must add them (chaining its underlay)
    repo_lib = str(UNDERLAY / "spatial_manip_interfaces" / "lib")
    libs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d and d != repo_lib]
    base.update(AMENT_PREFIX_PATH=str(venv) if not os.environ.get("ROS_DISTRO") else os.environ.get("AMENT_PREFIX_PATH", ""),
                LD_LIBRARY_PATH=":".join(libs), PATH=f"{venv / 'bin'}:{os.environ['PATH']}",
                PYTHONUNBUFFERED="1", ROS_DOMAIN_ID=str(private_domain_id()))
    extra = " ".join(f"{k}={v}:${k};" for k, v in (env_extra or {}).items())   # prepended after the install's
    script = f"set +u; source {install}/setup.bash; export {extra} " if extra else f"set +u; source {install}/setup.bash; "
    return subprocess.Popen(["bash", "-c", script + command], env=base, **popen)


def test_the_install_holds_the_data_and_imports_from_itself(install, tmp_path):
    share = install / "spatial_manip" / "share" / "spatial_manip"
    for rel in ("config/graphs/real.yaml", "config/params/grasp.yaml", "config/params/perception.yaml",
                "config/params/arm.yaml", "urdf/ur5e_robotiq_2f85_eye_to_hand.urdf", "launch/sim.launch.py",
                "launch/graph_launch.py"):
        assert (share / rel).is_file(), rel
    data = [f for f in _sources() if f.split("/")[0] in ("config", "urdf", "launch") and "__pycache__" not in f]
    missing = [f for f in data if not (share / f).is_file()]
    assert data and not missing, f"setup.py's data_files do not install {missing}"
    probe = ("import sys, spatial_manip.paths as p, spatial_manip.bags.typestore as t, spatial_manip_interfaces; "
             "print(p.__file__); print(p.share_dir()); print(p.interfaces_dir()); print(spatial_manip_interfaces.__file__); "
             f"print(any(x.rstrip('/') == {str(ROOT)!r} for x in sys.path)); print(len(t.interface_types()))")
    proc = _shell(install, f"python -c {probe!r}", cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                  text=True)
    out, _ = proc.communicate(timeout=120)
    lines = out.strip().splitlines()
    assert proc.returncode == 0, out
    module, share_dir, interfaces, ifc_module, source_on_path, n_types = lines[-6:]
    assert module.startswith(str(install)) and share_dir == str(share), out
    ifc_share = UNDERLAY / "spatial_manip_interfaces"      # the underlay's install, not the source folder
    assert interfaces == str(ifc_share / "share" / "spatial_manip_interfaces"), out
    assert ifc_module.startswith(str(ifc_share)), out
    assert source_on_path == "False" and int(n_types) > 10, out


def _nodes(tmp_path: Path) -> dict[str, str]:
    """node -> its --ros-args tail: each as a graph starts it, or as light as it can start."""
    cal = "calibration/eye_to_hand.example.yaml"     # relative: looked up under share/.../config
    return {
        "sim_node": "-p camera_rate_hz:=2.0",
        "grasp_node": "",
        # a relative library_file, as a launch gives it: read from the install's share/config
        "planner_node": "-p library_file:=library/sim_assets.json",
        "arm_node": "-p arm.backend:=sim",
        "camera_node": f"-p source:=none -p calibration_file:={cal}",
        "cell_tf_node": f"-p calibration_file:={cal}",
    }


def test_every_node_starts_from_the_install(install, tmp_path):
    from tf2_msgs_build import tf2_msgs_env

    tf2 = tf2_msgs_env()      # cell_tf_node needs tf2_msgs, which no PyPI wheel ships
    procs = {}
    try:
        for name, args in _nodes(tmp_path).items():
            exe = install / "spatial_manip" / "lib" / "spatial_manip" / name
            env = {k: tf2[k].split(":")[0] for k in ("PYTHONPATH", "LD_LIBRARY_PATH")} \
                if tf2 and name == "cell_tf_node" else None
            procs[name] = _shell(install, f"exec {exe} --ros-args {args}", env, cwd=tmp_path,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready, seen = _wait_ready(procs, READY_S)
    finally:
        logs = {n: stop(p) for n, p in procs.items()}
    logs = {n: seen.get(n, "") + logs[n] for n in logs}
    missing = [n for n in procs if n not in ready]
    assert not missing, "\n".join(f"--- {n}:\n{logs[n][-2000:]}" for n in missing)
    assert re.search(r"library_file: \d+ enrolled objects", logs["planner_node"]), logs["planner_node"][-2000:]


def _wait_ready(procs: dict, timeout_s: float) -> tuple[set[str], dict[str, str]]:
    """(names of the nodes that logged 'ready' (or cell_tf_node's 'static TF') before the timeout,
    what each printed meanwhile); a node that exits is not waited for."""
    import selectors

    sel = selectors.DefaultSelector()
    for name, p in procs.items():
        os.set_blocking(p.stdout.fileno(), False)
        sel.register(p.stdout, selectors.EVENT_READ, name)
    ready, seen = set(), {n: "" for n in procs}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and len(ready) < len(procs):
        for key, _ in sel.select(timeout=0.5):
            chunk = key.fileobj.read() or ""
            seen[key.data] += chunk
            if "ready" in seen[key.data] or "static TF" in seen[key.data]:
                ready.add(key.data)
        if all(p.poll() is not None for n, p in procs.items() if n not in ready):
            break
    for p in procs.values():
        os.set_blocking(p.stdout.fileno(), True)
    return ready, seen
