"""The URDF/SRDF in urdf/: generated from the DH table, same FK as control/kinematics.py, valid
for urdfdom's own parser (Debian's check_urdf, what robot_state_publisher links)."""
from __future__ import annotations

import re

import shutil
import subprocess

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from spatial_manip.control.kinematics import DH_PRESETS, URKinematics  # noqa: E402
from spatial_manip.motion import description as D  # noqa: E402
from spatial_manip.motion.robot import RobotModel, description_paths  # noqa: E402

SETUPS = [(m, mount) for m in D.MODELS for mount in D.MOUNTS]


@pytest.mark.parametrize("model,mount", SETUPS)
def test_urdf_fk_equals_analytic_dh_fk(model, mount):
    urdf, _ = description_paths(model, mount)
    pm = pin.buildModelFromUrdf(str(urdf))
    data = pm.createData()
    tool0 = pm.getFrameId("tool0")
    kin = URKinematics(**DH_PRESETS[model])
    rng = np.random.default_rng(7)
    worst = 0.0
    for q in rng.uniform(pm.lowerPositionLimit, pm.upperPositionLimit, (300, 6)):
        pin.framesForwardKinematics(pm, data, q)
        T = data.oMf[tool0].homogeneous
        T_dh = kin.fk_flange(q)
        worst = max(worst, float(np.linalg.norm(T[:3, 3] - T_dh[:3, 3])))
        np.testing.assert_allclose(T[:3, :3], T_dh[:3, :3], atol=1e-6)
    assert worst < 1e-6, f"{model}: URDF and DH flange positions differ by up to {worst} m"


@pytest.mark.parametrize("model,mount", SETUPS)
def test_committed_urdf_is_what_the_generator_writes(model, mount):
    urdf, _ = description_paths(model, mount)
    assert urdf.read_text() == D.urdf_text(model, mount, D.cell_camera()), \
        "urdf/ is stale: run `python -m spatial_manip.devtools.write_urdf`"


def _debian_check_urdf() -> str:
    # Debian's build of urdfdom (the parser robot_state_publisher uses), not a copy in the venv
    exe = shutil.which("check_urdf", path="/usr/bin:/bin")
    if exe is None:
        pytest.fail("check_urdf not found in /usr/bin: install Debian's liburdfdom-tools "
                    "(`sudo apt-get install liburdfdom-tools`, or re-run scripts/setup.sh)")
    return exe


@pytest.mark.parametrize("model,mount", SETUPS)
def test_check_urdf_accepts_the_files(model, mount):
    urdf, _ = description_paths(model, mount)
    out = subprocess.run([_debian_check_urdf(), str(urdf)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Successfully Parsed XML" in out.stdout
    assert "root Link: base" in out.stdout
    for link in D.LINKS + ("tool0", "tcp", "camera_color_optical_frame"):
        assert link in out.stdout


@pytest.mark.parametrize("model,mount", SETUPS)
def test_every_link_with_geometry_has_a_mass_and_a_physical_inertia(model, mount):
    """Gazebo drops links without <inertial>: each link with geometry has a positive mass and a
    positive-definite inertia that satisfies the triangle inequality; the arm links weigh what UR
    publishes and the gripper what Robotiq does."""
    import xml.etree.ElementTree as ET

    urdf, _ = description_paths(model, mount)
    masses = {}
    for link in ET.parse(urdf).getroot().findall("link"):
        name = link.get("name")
        if link.find("collision") is None and link.find("visual") is None:
            assert link.find("inertial") is None, f"{name}: a bare frame needs no inertial"
            continue
        inertial = link.find("inertial")
        assert inertial is not None, f"{name} has geometry but no <inertial>"
        masses[name] = float(inertial.find("mass").get("value"))
        assert masses[name] > 0, name
        i = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}
        tensor = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
        w = np.linalg.eigvalsh(tensor)
        assert w.min() > 0, f"{name}: inertia not positive definite ({w})"
        assert 2 * w.max() <= w.sum() * (1 + 1e-6), f"{name}: principal moments {w} break the triangle inequality"
    assert {k: masses[k] for k in D.LINK_MASS_KG[model]} == D.LINK_MASS_KG[model]
    gripper = sum(m for k, m in masses.items() if k.startswith("robotiq_"))
    assert gripper == pytest.approx(D.GRIPPER_MASS_KG, rel=1e-4)
    # Pinocchio reads the same masses (fixed links fold into their moving body)
    pm = pin.buildModelFromUrdf(str(urdf))
    assert sum(pm.inertias[j].mass for j in range(pm.njoints)) == pytest.approx(sum(masses.values()), rel=1e-6)


@pytest.mark.parametrize("model,mount", SETUPS)
def test_srdf_pairs_name_real_links_and_leave_real_risks_checked(model, mount):
    urdf, srdf = description_paths(model, mount)
    robot = RobotModel(urdf, srdf)
    links = set(robot.link_names)
    text = srdf.read_text()
    import xml.etree.ElementTree as ET

    pairs = [(e.get("link1"), e.get("link2"), e.get("reason")) for e in ET.fromstring(text).iter("disable_collisions")]
    assert pairs and all(a in links and b in links for a, b, _ in pairs)
    disabled = {frozenset((a, b)) for a, b, _ in pairs}
    assert frozenset(("shoulder_link", "upper_arm_link")) in disabled          # joined by a joint
    assert frozenset(("robotiq_left_finger", "upper_arm_link")) not in disabled  # the hand can reach the arm
    assert frozenset(("base", "wrist_3_link")) not in disabled
    # Pinocchio applied the SRDF: no remaining pair is a disabled one
    remaining = {frozenset((robot.link_names[cp.first], robot.link_names[cp.second])) for cp in robot.geom.collisionPairs}
    assert not (remaining & disabled)


def test_home_pose_is_free_of_self_collision_and_folded_arm_is_not():
    robot = RobotModel(*description_paths("ur5e", "eye_in_hand"))
    data, gdata = robot.model.createData(), pin.GeometryData(robot.geom)
    home = np.array([3.1416, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    assert not pin.computeCollisions(robot.model, data, robot.geom, gdata, home, True)
    folded = np.array([0.0, -1.5708, 3.0, -1.5708, 0.0, 0.0])   # forearm folded back onto the upper arm
    assert pin.computeCollisions(robot.model, data, robot.geom, gdata, folded, True)


def test_setup_script_installs_liburdfdom_tools_and_setup_py_installs_urdf():
    root = D.REPO_URDF_DIR.parent
    assert "liburdfdom-tools" in (root / "scripts" / "setup.sh").read_text()
    # setup.py installs launch/, config/ and urdf/ into the share directory with one helper (the
    # colcon install test starts every node from such an install)
    assert re.search(r'share_files\([^)]*"urdf"', (root / "setup.py").read_text())


def test_the_collision_model_covers_the_shoulder_housing():
    """The simulated camera's depth on the UR5e's shoulder-joint housing (the arm stowed as
    sim_node leaves it) lay 3-6 cm outside every collision body; as unexplained clutter it closed
    the way from the stowed pose to every grasp of pick-14-00013 that the grasp service had
    kept. The base and the upper arm stay a checked pair (the housing starts outside the base's
    radius, so they do not always touch and the SRDF does not disable them)."""
    robot = RobotModel(*description_paths("ur5e", "eye_to_hand"))
    stowed = np.array([0.0, 0.5, 1.0, -3.0, 0.0, 0.0])
    seen_on_housing = np.array([[0.027, -0.179, 0.213], [0.026, -0.189, 0.212], [0.041, -0.193, 0.192]])
    assert robot.points_on(seen_on_housing, stowed, 0.03).all()
    _, srdf = description_paths("ur5e", "eye_to_hand")
    assert 'link1="base" link2="upper_arm_link"' not in srdf.read_text()   # checked, as it can come near
