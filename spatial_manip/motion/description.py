"""The robot description (URDF + SRDF) of a UR5 / UR5e with a Robotiq 2F-85 and a camera,
generated from the same DH table `control/kinematics.py` uses, so the two can never disagree.

    python -m spatial_manip.devtools.write_urdf [--out urdf/]    # rewrite the files in urdf/

Chain: `base` (the controller's base frame, z up) -> six revolute joints named as the UR driver
names them -> `tool0` (flange). Joint i's origin is the fixed part of DH row i-1
(Tz(d) Tx(a) Rx(alpha)) and it turns about its own z, which reproduces the DH product exactly.
Collision bodies are cylinders along each link's centre line and boxes for the gripper, sized
from UR's published shoulder/elbow offsets (the DH table folds those into d4) with a few mm
spare. Visuals reuse the primitives: the project ships no meshes.

Every link with geometry has an <inertial> (Gazebo drops links without one): the link's mass
(LINK_MASS_KG: Universal Robots' published link masses; the gripper's and camera's below) spread
uniformly over its collision primitives, at their centre of mass, with the solid cylinder/box
inertia of those primitives about it, in its principal axes (so the tensor is diagonal and the
origin's rpy turns the link frame onto them). Frames without geometry (tool0, tcp) stay massless:
SDFormat's URDF import lumps every fixed-joint child into its moving parent (the gripper and an
eye-in-hand camera into wrist_3_link, an eye-to-hand camera into base) and drops bare frames.

Two set-ups per arm: eye-to-hand (camera fixed in the cell at the calibration example's pose;
its stand is arm.yaml's `camera_mount` keep-out box, which the planner adds to its world) and
eye-in-hand (camera on a bracket on the flange). The SRDF lists link pairs that never collide: adjacent links, and pairs never
within DISABLE_MARGIN_M of each other over NEVER_SAMPLES random configurations (MoveIt's Setup
Assistant does the same; the margin keeps pairs that come close sometimes checked).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.control.kinematics import DH_PRESETS, JOINT_NAMES
from spatial_manip.geometry.calibration import load_calibration
from spatial_manip.paths import config_dir

MODELS = ("ur5", "ur5e")
MOUNTS = ("eye_to_hand", "eye_in_hand")
LINKS = ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link")
_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
# UR's physical offsets along the parallel joint axes (ur_description), metres: the upper arm
# sits `shoulder` out from the base axis, the forearm `elbow` back from the upper arm.
OFFSETS = {"ur5": {"shoulder": 0.13585, "elbow": 0.1197}, "ur5e": {"shoulder": 0.138, "elbow": 0.131}}
SHOULDER_HOUSING_R_M = 0.07      # the upper arm's motor housing at the shoulder joint
SHOULDER_HOUSING_FROM_M = 0.085  # where it starts along the joint axis (the base's cylinder is 0.078 in radius)
# joint limits (rad), speed (rad/s) and torque (Nm): arm.yaml's limits, UR's data sheet for the rest
Q_MIN = (-6.2832, -6.2832, -3.1416, -6.2832, -6.2832, -6.2832)
Q_MAX = (6.2832, 6.2832, 3.1416, 6.2832, 6.2832, 6.2832)
VELOCITY = (3.15, 3.15, 3.15, 3.2, 3.2, 3.2)
EFFORT = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)
# link masses, kg. Arm links: UR's "DH Parameters for calculations of kinematics and dynamics"
# (universal-robots.com), as in UR's ROS 2 description (config/<model>/physical_parameters.yaml);
# the base is not in UR's table (it never moves), 4.0 kg is ur_description's figure.
LINK_MASS_KG = {
    "ur5": {"base": 4.0, "shoulder_link": 3.7, "upper_arm_link": 8.393, "forearm_link": 2.33,
            "wrist_1_link": 1.219, "wrist_2_link": 1.219, "wrist_3_link": 0.1879},
    "ur5e": {"base": 4.0, "shoulder_link": 3.761, "upper_arm_link": 8.058, "forearm_link": 2.846,
             "wrist_1_link": 1.37, "wrist_2_link": 1.3, "wrist_3_link": 0.365},
}
GRIPPER_MASS_KG = 0.925           # Robotiq 2F-85 data sheet; split over its links by collision volume
CAMERA_MASS_KG = 0.1              # Intel RealSense L515 data sheet (~100 g)
BRACKET_MASS_KG = 0.05            # nominal: a small aluminium bracket
TCP_Z = 0.15                      # arm.yaml kinematics.tcp_offset: grasp point of the 2F-85
DISABLE_MARGIN_M = 0.03
NEVER_SAMPLES = 20000
# where `python -m spatial_manip.devtools.write_urdf` writes by default: a development tool, so the
# repository; readers find the files through spatial_manip.paths.urdf_dir()
REPO_URDF_DIR = Path(__file__).resolve().parents[2] / "urdf"


@dataclass
class Body:
    """One collision/visual primitive in its link's frame: cylinder (p0 -> p1, radius) or box."""

    kind: str
    size: tuple
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)


@dataclass
class Link:
    name: str
    bodies: list = field(default_factory=list)
    mass: float = 0.0             # kg, spread uniformly over the bodies; 0 for a bare frame


@dataclass
class Joint:
    name: str
    parent: str
    child: str
    xyz: tuple
    rpy: tuple
    kind: str = "fixed"
    index: int = -1               # arm joint index for limits


def cylinder(p0: Sequence[float], p1: Sequence[float], r: float) -> Body:
    """A cylinder of radius r whose axis runs from p0 to p1 (URDF cylinders lie along local z)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    d = p1 - p0
    length = float(np.linalg.norm(d))
    z = d / length
    # rpy that turns local z onto d: pitch about y, then yaw about z (roll free)
    pitch = math.atan2(math.hypot(z[0], z[1]), z[2])
    yaw = math.atan2(z[1], z[0])
    return Body("cylinder", (r, length), tuple((p0 + p1) / 2), (0.0, pitch, yaw))


def box(center: Sequence[float], size: Sequence[float]) -> Body:
    return Body("box", tuple(size), tuple(center))


def arm_links(model: str) -> tuple[list[Link], list[Joint]]:
    """The base, six arm links and tool0, with DH-derived joints and covering cylinders."""
    dh = DH_PRESETS[model]
    a = (0.0, dh["a2"], dh["a3"], 0.0, 0.0, 0.0)
    d = (dh["d1"], 0.0, 0.0, dh["d4"], dh["d5"], dh["d6"])
    s, e = OFFSETS[model]["shoulder"], OFFSETS[model]["elbow"]
    fa = s - e                                     # forearm plane along the joint axes
    d1, a2, a3, d4, d5, d6 = d[0], a[1], a[2], d[3], d[4], d[5]
    # each link's frame: the previous DH frame turned by its joint angle; the link body then
    # runs along d (local z) and a (local x) of its own DH row
    # the bodies contain the simulator's (MuJoCo Menagerie UR5e) collision capsules, cap tips
    # included (test_description measures it): the old wrist cylinders stopped short of the
    # joints' housings, up to 36 mm of the sim's wrist_2_link outside them, so a plan passed
    # where the simulated wrist met the table
    sign2 = math.copysign(1.0, a2)
    links = [
        Link("base", [cylinder((0, 0, 0), (0, 0, min(0.09, d1 - 0.01)), 0.078)]),   # below the upper arm
        Link("shoulder_link", [cylinder((0, 0, 0.04), (0, 0, d1 + 0.082), 0.065),
                               cylinder((0, 0.065, d1), (0, -s, d1), 0.065)]),   # joint 2 axis is -y here
        Link("upper_arm_link", [cylinder((0, 0, s), (a2 + sign2 * 0.028, 0, s), 0.06),
                                # the shoulder joint's housing, round about the joint axis: the tube
                                # alone left it 3-6 cm uncovered (the camera saw it as clutter); from
                                # just outside the base's radius, so the two never overlap
                                cylinder((0, 0, SHOULDER_HOUSING_FROM_M), (0, 0, s + SHOULDER_HOUSING_R_M + 0.01),
                                         SHOULDER_HOUSING_R_M),
                                cylinder((a2, 0, s + 0.066), (a2, 0, fa - 0.037), 0.055)]),   # the elbow's housing
        Link("forearm_link", [cylinder((0, 0, fa), (a3 + math.copysign(0.038, a3), 0, fa), 0.045)]),
        Link("wrist_1_link", [cylinder((0, 0, fa - 0.062), (0, 0, d4 + 0.045), 0.046)]),
        Link("wrist_2_link", [cylinder((0, 0, -0.063), (0, 0, d5), 0.046)]),
        Link("wrist_3_link", [cylinder((0, 0, -0.063), (0, 0, d6), 0.046)]),
        Link("tool0"),
    ]
    for lk in links:
        lk.mass = LINK_MASS_KG[model].get(lk.name, 0.0)
    joints = []
    parents = ("base",) + LINKS[:-1]
    for i in range(6):
        prev = i - 1
        xyz = (a[prev], 0.0, d[prev]) if i else (0.0, 0.0, 0.0)
        rpy = (_ALPHA[prev], 0.0, 0.0) if i else (0.0, 0.0, 0.0)
        joints.append(Joint(JOINT_NAMES[i], parents[i], LINKS[i], xyz, rpy, "revolute", i))
    joints.append(Joint("flange_tool0", "wrist_3_link", "tool0", (0.0, 0.0, d[5]), (0.0, 0.0, 0.0)))
    return links, joints


def finger_boxes(side: int) -> list:
    """One 2F-85 finger, open, on the `side` (+1: +y) of tool0: the finger and pad (tool0 z
    0.099..0.169), and the knuckle linkage behind it (driver, coupler, spring link: z
    0.055..0.121, reaching 76 mm out and 19 mm either side), measured on the MuJoCo Menagerie
    model's meshes; both keep the open fingers' inner face at 42.5 mm."""
    return [box((0, side * 0.059, 0.134), (0.026, 0.033, 0.07)),
            box((0, side * 0.05925, 0.088), (0.038, 0.0335, 0.066))]


def gripper_links() -> tuple[list[Link], list[Joint]]:
    """Robotiq 2F-85 on its coupling, fingers fully open (85 mm) and closing along tool0 y: the
    largest volume they sweep, so a plan stays valid whatever the fingers do."""
    links = [
        Link("robotiq_coupling", [cylinder((0, 0, 0), (0, 0, 0.014), 0.038)]),
        Link("robotiq_base", [box((0, 0, 0.0565), (0.075, 0.095, 0.085))]),
        Link("robotiq_left_finger", finger_boxes(+1)),
        Link("robotiq_right_finger", finger_boxes(-1)),
        Link("tcp"),
    ]
    volume = sum(_volume(b) for lk in links for b in lk.bodies)
    for lk in links:
        lk.mass = GRIPPER_MASS_KG * sum(_volume(b) for b in lk.bodies) / volume
    joints = [Joint(f"tool0_{lk.name}", "tool0", lk.name, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) for lk in links[:-1]]
    joints.append(Joint("tool0_tcp", "tool0", "tcp", (0.0, 0.0, TCP_Z), (0.0, 0.0, 0.0)))
    return links, joints


def camera_links(mount: str, T_base_camera: np.ndarray) -> tuple[list[Link], list[Joint]]:
    """The L515 (61 mm across, 26 mm deep, optical axis = its z) and what holds it."""
    body = cylinder((0, 0, -0.026), (0, 0, 0.0), 0.031)          # behind the optical centre
    optical = Link("camera_color_optical_frame", [body], CAMERA_MASS_KG)
    if mount == "eye_in_hand":
        # bracket on the flange's -x side, camera looking along the tool axis beside the gripper
        bracket = Link("camera_bracket", [box((-0.065, 0, 0.015), (0.06, 0.05, 0.03))], BRACKET_MASS_KG)
        return [bracket, optical], [
            Joint("tool0_camera_bracket", "tool0", "camera_bracket", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
            Joint("tool0_camera_optical", "tool0", "camera_color_optical_frame", (-0.095, 0.0, 0.056), (0.0, 0.0, 0.0))]
    # eye-to-hand: the camera where the calibration puts it; its stand is cell furniture, which
    # the planner takes from the envelope's keep-out boxes (arm.yaml), not from this file
    xyz, rpy = _xyz_rpy(T_base_camera)
    return [optical], [Joint("base_camera_optical", "base", "camera_color_optical_frame", xyz, rpy)]


def _xyz_rpy(T: np.ndarray) -> tuple[tuple, tuple]:
    return tuple(float(v) for v in T[:3, 3]), tuple(float(v) for v in Rotation.from_matrix(T[:3, :3]).as_euler("xyz"))


def _volume(b: Body) -> float:
    return math.pi * b.size[0] ** 2 * b.size[1] if b.kind == "cylinder" else float(np.prod(b.size))


def _rotation(rpy: Sequence[float]) -> np.ndarray:
    return Rotation.from_euler("xyz", rpy).as_matrix()          # URDF rpy: fixed-axis x, y, z


def _body_inertia(b: Body, m: float) -> np.ndarray:
    """A solid primitive's inertia about its centre, in its own frame (a cylinder's axis is z)."""
    if b.kind == "cylinder":
        r, h = b.size
        side = m * (3 * r * r + h * h) / 12
        return np.diag([side, side, m * r * r / 2])
    x, y, z = b.size
    return np.diag([m * (y * y + z * z), m * (x * x + z * z), m * (x * x + y * y)]) / 12


@dataclass
class Inertial:
    mass: float
    xyz: tuple                    # centre of mass in the link frame
    rpy: tuple                    # link frame -> principal axes
    diag: tuple                   # ixx, iyy, izz about the centre of mass, in the principal axes


def inertial(lk: Link) -> Inertial | None:
    """The link's mass spread uniformly over its bodies: centre of mass and principal inertia
    (parallel-axis sum of the solid primitives). None for a bare frame."""
    if not lk.bodies or lk.mass <= 0:
        return None
    vols = np.array([_volume(b) for b in lk.bodies])
    masses = lk.mass * vols / vols.sum()
    centres = np.array([b.xyz for b in lk.bodies], float)
    com = masses @ centres / lk.mass
    I = np.zeros((3, 3))
    for b, m, c in zip(lk.bodies, masses, centres):
        R = _rotation(b.rpy)
        d = c - com
        I += R @ _body_inertia(b, m) @ R.T + m * (d @ d * np.eye(3) - np.outer(d, d))
    if len(lk.bodies) == 1:                # the primitive's own axes are principal
        R = _rotation(lk.bodies[0].rpy)
        return Inertial(lk.mass, tuple(com), tuple(lk.bodies[0].rpy), tuple(np.diag(R.T @ I @ R)))
    w, Q = np.linalg.eigh((I + I.T) / 2)
    order = np.argmax(np.abs(Q), axis=0)   # principal axis k nearest link axis order[k]
    if len(set(order)) == 3:               # list them as x, y, z, each pointing the link axis' way
        perm = np.argsort(order)
        Q, w = Q[:, perm], w[perm]
        Q = Q * np.where(np.diag(Q) < 0, -1.0, 1.0)
    if np.linalg.det(Q) < 0:
        Q[:, 2] *= -1
    return Inertial(lk.mass, tuple(com), tuple(Rotation.from_matrix(Q).as_euler("xyz")), tuple(w))


def _fmt(v: Sequence[float]) -> str:
    return " ".join(f"{float(x):.9g}" for x in v)


def _body_xml(b: Body, tag: str) -> str:
    geo = (f'<cylinder radius="{b.size[0]:.9g}" length="{b.size[1]:.9g}"/>' if b.kind == "cylinder"
           else f'<box size="{_fmt(b.size)}"/>')
    inner = f'<origin xyz="{_fmt(b.xyz)}" rpy="{_fmt(b.rpy)}"/><geometry>{geo}</geometry>'
    if tag == "visual":
        inner += '<material name="grey"/>'
    return f"    <{tag}>{inner}</{tag}>"


def _inertial_xml(ine: Inertial) -> str:
    ixx, iyy, izz = (f"{v:.6g}" for v in ine.diag)
    return (f'    <inertial><origin xyz="{_fmt(np.round(ine.xyz, 6) + 0.0)}" rpy="{_fmt(np.round(ine.rpy, 6) + 0.0)}"/>'
            f'<mass value="{ine.mass:.6g}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def _link_xml(lk: Link) -> str:
    if not lk.bodies:
        return f'  <link name="{lk.name}"/>'
    ine = inertial(lk)
    rows = ([_inertial_xml(ine)] if ine else []) + [_body_xml(b, t) for b in lk.bodies for t in ("visual", "collision")]
    return "\n".join([f'  <link name="{lk.name}">', *rows, "  </link>"])


def _joint_xml(j: Joint) -> str:
    head = f'  <joint name="{j.name}" type="{j.kind}">'
    rows = [f'    <parent link="{j.parent}"/>', f'    <child link="{j.child}"/>',
            f'    <origin xyz="{_fmt(j.xyz)}" rpy="{_fmt(j.rpy)}"/>']
    if j.kind == "revolute":
        i = j.index
        rows += ['    <axis xyz="0 0 1"/>',
                 f'    <limit lower="{Q_MIN[i]}" upper="{Q_MAX[i]}" velocity="{VELOCITY[i]}" effort="{EFFORT[i]}"/>']
    return "\n".join([head, *rows, "  </joint>"])


def build(model: str, mount: str, T_base_camera: np.ndarray) -> tuple[list[Link], list[Joint]]:
    if model not in MODELS or mount not in MOUNTS:
        raise ValueError(f"model must be one of {MODELS} and mount one of {MOUNTS}, got {model!r}, {mount!r}")
    parts = [arm_links(model), gripper_links(), camera_links(mount, T_base_camera)]
    return [lk for p in parts for lk in p[0]], [j for p in parts for j in p[1]]


def urdf_text(model: str, mount: str, T_base_camera: np.ndarray) -> str:
    links, joints = build(model, mount, T_base_camera)
    name = f"{model}_robotiq_2f85_{mount}"
    header = (f"<?xml version=\"1.0\"?>\n<!-- GENERATED by `python -m spatial_manip.devtools.write_urdf` from the\n"
              f"     DH table of control/kinematics.py ({model}); do not edit by hand. Root `base` = the\n"
              f"     controller's base frame; `tool0` = flange; `tcp` = the 2F-85's nominal grasp point. -->\n")
    body = "\n".join([f'<robot name="{name}">', '  <material name="grey"><color rgba="0.6 0.6 0.6 1"/></material>',
                      *(_link_xml(lk) for lk in links), *(_joint_xml(j) for j in joints), "</robot>"])
    return header + body + "\n"


def srdf_text(model: str, mount: str, pairs: list[tuple[str, str, str]]) -> str:
    name = f"{model}_robotiq_2f85_{mount}"
    rows = [f'  <disable_collisions link1="{a}" link2="{b}" reason="{why}"/>' for a, b, why in pairs]
    return "\n".join(['<?xml version="1.0"?>',
                      f"<!-- GENERATED with {name}.urdf: link pairs that never collide (reason Adjacent: joined;",
                      f"     Never: never within {DISABLE_MARGIN_M} m over {NEVER_SAMPLES} random configurations). -->",
                      f'<robot name="{name}">',
                      '  <group name="manipulator"><chain base_link="base" tip_link="tool0"/></group>',
                      *rows, "</robot>"]) + "\n"


def disabled_pairs(urdf: str, joints: list[Joint], seed: int = 0) -> list[tuple[str, str, str]]:
    """Adjacent link pairs (joined by a revolute joint, or fixed to the same moving body), and
    pairs that stay more than DISABLE_MARGIN_M apart over NEVER_SAMPLES random configurations."""
    import pinocchio as pin

    model = pin.buildModelFromXML(urdf)
    geom = pin.buildGeomFromUrdfString(model, urdf, pin.COLLISION)
    owner = {}                                    # link name -> the moving body carrying it
    for g in geom.geometryObjects:
        owner.setdefault(_link_of(g.name), g.parentJoint)
    names = sorted(owner)
    joined = {tuple(sorted((j.parent, j.child))) for j in joints if j.kind == "revolute"}
    adjacent = {(a, b) for a in names for b in names
                if a < b and (owner[a] == owner[b] or (a, b) in joined)}
    closest = _min_distances(model, geom, seed)
    out = [(a, b, "Adjacent") for a, b in sorted(adjacent)]
    out += [(a, b, "Never") for (a, b), dmin in sorted(closest.items())
            if (a, b) not in adjacent and dmin > DISABLE_MARGIN_M]
    return out


def _link_of(geom_name: str) -> str:
    return geom_name.rsplit("_", 1)[0]           # pinocchio names geometries "<link>_<k>"


def _min_distances(model, geom, seed: int) -> dict:
    """Smallest distance seen between every pair of links over random configurations."""
    import pinocchio as pin

    geom.addAllCollisionPairs()
    data, gdata = model.createData(), pin.GeometryData(geom)
    rng = np.random.default_rng(seed)
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    best: dict = {}
    for _ in range(NEVER_SAMPLES):
        pin.computeDistances(model, data, geom, gdata, rng.uniform(lo, hi))
        for k, cp in enumerate(geom.collisionPairs):
            a = _link_of(geom.geometryObjects[cp.first].name)
            b = _link_of(geom.geometryObjects[cp.second].name)
            if a == b:
                continue
            key = tuple(sorted((a, b)))
            best[key] = min(best.get(key, math.inf), gdata.distanceResults[k].min_distance)
    return best


def cell_camera() -> np.ndarray:
    """T_base_camera of the eye-to-hand set-up (config/calibration/eye_to_hand.example.yaml)."""
    return load_calibration(config_dir() / "calibration" / "eye_to_hand.example.yaml").T_base_camera()


def write_all(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    T_cam = cell_camera()
    written = []
    for model in MODELS:
        for mount in MOUNTS:
            stem = out_dir / f"{model}_robotiq_2f85_{mount}"
            text = urdf_text(model, mount, T_cam)
            joints = build(model, mount, T_cam)[1]
            stem.with_suffix(".urdf").write_text(text)
            stem.with_suffix(".srdf").write_text(srdf_text(model, mount, disabled_pairs(text, joints)))
            written += [stem.with_suffix(".urdf"), stem.with_suffix(".srdf")]
    return written
