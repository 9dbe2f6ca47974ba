#!/usr/bin/env bash
# One idempotent set-up from nothing: apt packages, .venv with ROS 2 wheels (or an apt ROS
# underlay when one is sourced), the CMake path fix, the interfaces build, the project itself.
# Re-running it with nothing changed only checks stamps and takes a second or two.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.venv
PY=${PYTHON:-python3}
log() { printf '[setup] %s\n' "$*"; }

# --- 0. Python, before anything is installed ---------------------------------------------
# The ROS 2 wheels (requirements-ros.txt) are built for CPython 3.11; an apt ROS 2 underlay brings
# its own Python (Humble 3.10, Jazzy 3.12). Creating the venv needs ensurepip (Debian and Ubuntu
# ship it apart, as python3.X-venv).
if ! command -v "$PY" >/dev/null 2>&1; then
  log "no '$PY' found: Python 3.11 is needed. Install it:  sudo apt-get install -y python3.11 python3.11-venv"
  log "then:  PYTHON=python3.11 bash scripts/setup.sh"
  exit 1
fi
# With an apt ROS 2 sourced (ROS_DISTRO set and rclpy importable), the venv sees its packages
# and no ROS wheels are installed.
if [ -n "${ROS_DISTRO:-}" ] && "$PY" -c 'import rclpy' 2>/dev/null; then UNDERLAY=apt; else UNDERLAY=wheels; fi
pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ "$UNDERLAY" = apt ]; then wanted="3.10 3.11 3.12"; else wanted="3.11"; fi
case " $wanted " in
  *" $pyver "*) ;;
  *) log "'$PY' is Python $pyver; the ROS 2 wheels this installs need Python 3.11 (or source an apt ROS 2" \
         "Humble or Jazzy first). Install it:  sudo apt-get install -y python3.11 python3.11-venv"
     log "then:  PYTHON=python3.11 bash scripts/setup.sh"
     exit 1 ;;
esac
if [ ! -x "$VENV/bin/python" ] && ! "$PY" -c 'import ensurepip' 2>/dev/null; then
  log "'$PY' (Python $pyver) cannot create the virtual environment: its venv module (ensurepip) is missing."
  log "Install it:  sudo apt-get install -y python$pyver-venv"
  exit 1
fi

# --- 1. System packages -----------------------------------------------------------------
# chromium: the trace viewer's browser test drives Debian's build through Playwright
# liburdfdom-tools: check_urdf, the test that urdf/ parses as robot_state_publisher parses it
# bubblewrap: the code executor runs model-written code in its own namespaces as nobody, read-only
# ignition-tools (the `ign` command) + libsdformat-dev (its `sdf` subcommand): `ign sdf -k` checks Gazebo worlds
APT_PKGS=(bubblewrap libusb-1.0-0 libegl1 libgl1-mesa-dri libopengl0 libosmesa6 cmake g++ make chromium ignition-tools libsdformat-dev liburdfdom-tools)
missing=()
for p in "${APT_PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    log "installing apt packages: ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    log "missing apt packages: ${missing[*]}"
    log "run as root:  sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
fi

# --- 2. Virtual environment (UNDERLAY: step 0) ---------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  log "creating .venv ($UNDERLAY ROS 2)"
  if [ "$UNDERLAY" = apt ]; then "$PY" -m venv --system-site-packages "$VENV"; else "$PY" -m venv "$VENV"; fi
fi
VPY=$VENV/bin/python
# runtime + the extras the tests need (models, benchmark, test tools); contact-graspnet stays opt-in
REQS=(-r requirements.txt -r requirements-models.txt -r requirements-bench.txt -r requirements-test.txt)
reqs_hash=$(cat requirements.txt requirements-models.txt requirements-bench.txt requirements-test.txt \
  requirements-ros.txt setup.py | sha1sum | cut -d' ' -f1)-$UNDERLAY
if [ "$(cat "$VENV/.reqs-stamp" 2>/dev/null)" != "$reqs_hash" ]; then
  log "installing Python packages"
  "$VPY" -m pip install -q --upgrade pip "setuptools<80" wheel >/dev/null
  if [ "$UNDERLAY" = wheels ]; then
    "$VPY" -m pip install -q -r requirements-ros.txt "${REQS[@]}"
  else
    "$VPY" -m pip install -q "${REQS[@]}"
  fi
  "$VPY" -m pip install -q --no-deps --no-build-isolation -e .
  echo "$reqs_hash" > "$VENV/.reqs-stamp"
  rm -f "$VENV/.cmake-fix-stamp"
fi

# --- 3. CMake path fix (the wheels' exports name their build machine's paths) --------------
if [ "$UNDERLAY" = wheels ] && [ ! -f "$VENV/.cmake-fix-stamp" ]; then
  log "rewriting build-machine paths in the wheels' CMake files"
  "$VPY" - "$VENV" <<'PYEOF'
import pathlib, sys, sysconfig, numpy
venv = pathlib.Path(sys.argv[1])
subst = {
    "/opt/python/cp311-cp311/include/python3.11": sysconfig.get_paths()["include"],
    "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include": numpy.get_include(),
}
changed = 0
for f in venv.rglob("share/**/*.cmake"):
    text = f.read_text(errors="surrogateescape")
    new = text
    for a, b in subst.items():
        new = new.replace(a, b)
    if new != text:
        f.write_text(new, errors="surrogateescape")
        changed += 1
print(f"[setup] patched {changed} CMake files")
PYEOF
  touch "$VENV/.cmake-fix-stamp"
fi

# --- 4. Interfaces build ------------------------------------------------------------------
ifc_hash=$(cat spatial_manip_interfaces/package.xml spatial_manip_interfaces/CMakeLists.txt \
  spatial_manip_interfaces/*/*.msg spatial_manip_interfaces/*/*.srv spatial_manip_interfaces/*/*.action \
  | sha1sum | cut -d' ' -f1)-$UNDERLAY
if [ "$(cat install/.ifc-stamp 2>/dev/null)" != "$ifc_hash" ]; then
  log "building spatial_manip_interfaces with colcon"
  rm -rf build/spatial_manip_interfaces install/spatial_manip_interfaces
  (
    export PATH=$VENV/bin:$PATH
    if [ "$UNDERLAY" = wheels ]; then
      export AMENT_PREFIX_PATH=$VENV CMAKE_PREFIX_PATH=$VENV
    fi
    colcon build --base-paths spatial_manip_interfaces --packages-select spatial_manip_interfaces \
      --cmake-args -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF \
      >build.log 2>&1 || { tail -40 build.log; exit 1; }
  )
  echo "$ifc_hash" > install/.ifc-stamp
fi

# --- 5. Check ----------------------------------------------------------------------------
. scripts/env.sh
python -c 'import rclpy, spatial_manip, spatial_manip_interfaces.action as a; a.ExecuteInstruction' \
  || { log "the environment does not import; see build.log"; exit 1; }
log "ready ($UNDERLAY ROS 2). Use:  . scripts/env.sh"
