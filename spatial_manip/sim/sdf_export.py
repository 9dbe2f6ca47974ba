"""A generated scene as an SDFormat world for Gazebo (gz-sim Harmonic), beside its MuJoCo world.

    xml_text = world_sdf(scene, name="pick-0-00001")          # SDF 1.9 text
    write_world(scene, "OUT/scenes/pick-0-00001.sdf")        # + pick-0-00001.calibration.yaml
    check_sdf("OUT/scenes/pick-0-00001.sdf")                  # `ign sdf -k`: raises SdfInvalidError

Everything comes from the data the MuJoCo world is built from (sim/mjcf.py, sim/assets.py,
SimConfig): the same primitives at the same poses (geom "obj:<id>:<k>" in MuJoCo is collision
"<k>" of model "<id>" here), the same colours and friction, books with their density's mass, and
the RGB-D camera at `layouts.camera_pose(scene.viewer)` with the SimConfig intrinsics. The robot
is the URDF of urdf/ included by file URI and merged into a model fixed to the world, with
gz-sim's JointStatePublisher and JointTrajectoryController (the topics config/gazebo/bridge.yaml
carries to ROS). Shelf slots become world <frame>s; scene facts SDF has no element for (ids,
categories, slot sizes) ride in `sm:` custom elements, which SDFormat keeps and Gazebo ignores.
"""
from __future__ import annotations

import math
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from scipy.spatial.transform import Rotation

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import make_transform, matrix_to_quat
from spatial_manip.paths import config_dir
from spatial_manip.scene import Region, Scene, SceneObject
from spatial_manip.sim import assets as A
from spatial_manip.sim import mjcf
from spatial_manip.sim.layouts import camera_pose
from spatial_manip.sim.world import SimConfig, SimWorld

SDF_VERSION = "1.9"                   # libsdformat 12 (Debian 12) checks up to 1.9; Harmonic reads it
SM_NS = "https://github.com/spatial-manip/sdf"   # namespace of the custom `sm:` elements
ROBOT_MODEL = "ur5e_robotiq"
CAMERA_MODEL = "rgbd_camera"
# gz-transport topics; config/gazebo/bridge.yaml maps each to the ROS topic our nodes use
GZ_CAMERA_TOPIC = "/rgbd_camera"      # rgbd_camera adds /image, /depth_image, /camera_info, /points
GZ_JOINT_STATE_TOPIC = "/ur/joint_state"
GZ_TRAJECTORY_TOPIC = "/ur/joint_trajectory"
# issue 21's robot description in urdf/; eye-to-hand: the camera is ours, fixed in the cell
ROBOT_URDF_NAME = "ur5e_robotiq_2f85_eye_to_hand.urdf"
# MuJoCo's torsional friction (mjcf.FRICTION[1]) is a length: torque = 0.02 m x normal force.
# SDF splits it into a coefficient and a patch radius; 1.0 x 0.02 m gives the same torque.
TORSION_PATCH_RADIUS_M = mjcf.FRICTION[1]
# optical frame (x right, y down, z forward) -> gz camera frame (x forward, y left, z up)
R_OPTICAL_GZCAM = np.column_stack([[0, 0, 1], [-1, 0, 0], [0, -1, 0]]).astype(float)
WORLD_PLUGINS = (
    ("gz-sim-physics-system", "gz::sim::systems::Physics"),
    ("gz-sim-user-commands-system", "gz::sim::systems::UserCommands"),
    ("gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster"),
    ("gz-sim-sensors-system", "gz::sim::systems::Sensors"),
)
_SHAPES = {"box", "cylinder", "sphere", "ellipsoid", "capsule"}


class SdfParserMissingError(RuntimeError):
    """`ign sdf` (Debian: ignition-tools + libsdformat-dev) is not installed."""


class SdfInvalidError(ValueError):
    """The SDFormat parser rejected a file; the message carries its numbered errors."""


@dataclass(frozen=True)
class CameraSpec:
    """The RGB-D sensor: SimConfig's image size and vertical field of view (L515 colour at
    640x480, fx = fy ~ 605 px), and the L515's depth range."""

    width: int = 640
    height: int = 480
    fovy_deg: float = 43.3
    rate_hz: float = 30.0
    near_m: float = 0.05
    far_m: float = 9.0

    @classmethod
    def from_sim_config(cls, cfg=None) -> "CameraSpec":

        cfg = cfg or SimConfig()
        return cls(width=cfg.width, height=cfg.height, fovy_deg=cfg.fovy_deg)

    @property
    def intrinsics(self) -> CameraIntrinsics:
        return CameraIntrinsics.from_fovy(self.width, self.height, self.fovy_deg)


# --- small formatting helpers ------------------------------------------------------------------
def _num(v: float) -> str:
    return f"{float(v):.9g}"


def _vec(values) -> str:
    return " ".join(_num(v) for v in values)


def pose_text(T: np.ndarray) -> str:
    """SDF pose "x y z roll pitch yaw": fixed-axis roll, pitch, yaw, i.e. R = Rz(y) Ry(p) Rx(r),
    which is scipy's extrinsic "xyz"."""
    T = np.asarray(T, float)
    rpy = Rotation.from_matrix(T[:3, :3]).as_euler("xyz")
    return _vec([*T[:3, 3], *rpy])


def _sub(parent: ET.Element, tag: str, text=None, **attrib) -> ET.Element:
    e = ET.SubElement(parent, tag, {k: str(v) for k, v in attrib.items()})
    if text is not None:
        e.text = str(text)
    return e


def _quat_wxyz_to_matrix(q) -> np.ndarray:
    w, x, y, z = (float(c) for c in q)
    return Rotation.from_quat([x, y, z, w]).as_matrix()


# --- geometry ----------------------------------------------------------------------------------
def _geometry(parent: ET.Element, part: A.Part) -> None:
    """A MuJoCo-convention Part (half sizes) as an SDF <geometry> (full sizes)."""
    if part.type not in _SHAPES:
        raise ValueError(f"part type {part.type!r} has no SDF shape; expected one of {sorted(_SHAPES)}")
    g = _sub(parent, "geometry")
    s = [float(v) for v in part.size]
    if part.type == "box":
        _sub(_sub(g, "box"), "size", _vec(2 * np.asarray(s[:3])))
    elif part.type == "sphere":
        _sub(_sub(g, "sphere"), "radius", _num(s[0]))
    elif part.type == "ellipsoid":
        _sub(_sub(g, "ellipsoid"), "radii", _vec(s[:3]))
    else:   # cylinder, capsule: MuJoCo [radius, half length of the straight part]
        shape = _sub(g, part.type)
        _sub(shape, "radius", _num(s[0]))
        _sub(shape, "length", _num(2 * s[1]))


def _surface(collision: ET.Element) -> None:
    mu = mjcf.FRICTION[0]
    friction = _sub(_sub(collision, "surface"), "friction")
    ode = _sub(friction, "ode")
    _sub(ode, "mu", _num(mu))
    _sub(ode, "mu2", _num(mu))
    tors = _sub(friction, "torsional")
    _sub(tors, "coefficient", "1.0")
    _sub(tors, "patch_radius", _num(TORSION_PATCH_RADIUS_M))
    # mjcf.FRICTION[2] (rolling) has no SDF counterpart; books slide, they do not roll


def _material(visual: ET.Element, rgba) -> None:
    m = _sub(visual, "material")
    _sub(m, "ambient", _vec(rgba))
    _sub(m, "diffuse", _vec(rgba))
    _sub(m, "specular", "0.1 0.1 0.1 1")


def _add_part(link: ET.Element, name: str, part: A.Part, T_link_part: np.ndarray) -> None:
    """One primitive as a collision (with MuJoCo's friction) and a visual of the same pose."""
    for kind in ("collision", "visual"):
        # SDFormat wants unique names among a link's children, collisions and visuals together
        e = _sub(link, kind, name=name if kind == "collision" else f"{name}_visual")
        _sub(e, "pose", pose_text(T_link_part))
        _geometry(e, part)
        if kind == "collision":
            _surface(e)
        else:
            _material(e, part.rgba)


# --- scene objects -----------------------------------------------------------------------------
def _object_pose(obj: SceneObject) -> np.ndarray:
    return make_transform(obj.rotation, obj.center)


def _check_name(name: str) -> str:
    if not name or "::" in name or name in ("world", "__model__") or name.startswith("__"):
        raise ValueError(f"scene id {name!r} cannot be an SDF model name (no '::', not 'world' or '__...')")
    return name


def _object_parts(obj: SceneObject) -> list[tuple[str, A.Part, np.ndarray]]:
    """(collision name, primitive, pose in the object frame), as mjcf.build_spec makes the geoms."""
    if "parts" in obj.extra and obj.category != "book":
        # world-frame boxes of a support, table or shelf: mjcf gives them the asset's or the support colour
        rgba = A.ASSETS[obj.extra["asset"]].rgba if obj.extra.get("asset") in A.ASSETS else A.SUPPORT_RGBA
        T_inv = np.linalg.inv(_object_pose(obj))
        out = []
        for k, b in enumerate(obj.extra["parts"]):
            part = A.Part("box", tuple(np.asarray(b["size"], float) / 2), rgba=rgba)
            out.append((f"p{k}", part, T_inv @ make_transform(np.asarray(b["rotation"], float), b["center"])))
        return out
    return [(str(k), p, make_transform(_quat_wxyz_to_matrix(p.quat_wxyz), p.pos))
            for k, p in enumerate(mjcf._object_parts(obj))]


def _box_inertia(mass: float, size) -> list[float]:
    x, y, z = (float(v) for v in size)
    return [mass * (y * y + z * z) / 12, mass * (x * x + z * z) / 12, mass * (x * x + y * y) / 12]


def _inertial(link: ET.Element, obj: SceneObject, density: float) -> None:
    mass = density * float(np.prod(obj.size))        # mjcf sets the book geom's density, MuJoCo integrates
    inertial = _sub(link, "inertial")
    _sub(inertial, "mass", _num(mass))
    ixx, iyy, izz = _box_inertia(mass, obj.size)
    ine = _sub(inertial, "inertia")
    for tag, v in (("ixx", ixx), ("ixy", 0), ("ixz", 0), ("iyy", iyy), ("iyz", 0), ("izz", izz)):
        _sub(ine, tag, _num(v))


def _object_model(world: ET.Element, obj: SceneObject, density: float) -> None:
    dynamic = obj.category == "book"                  # books have a free joint in MuJoCo, the rest is static
    model = _sub(world, "model", name=_check_name(obj.id))
    _sub(model, "static", "false" if dynamic else "true")
    _sub(model, "pose", pose_text(_object_pose(obj)))
    _sub(model, f"{{{SM_NS}}}object", category=obj.category, label=obj.label, size=_vec(obj.size),
         oriented=str(bool(obj.oriented)).lower(), held=str(bool(obj.held)).lower(),
         **({"asset": obj.extra["asset"]} if obj.extra.get("asset") else {}),
         **({"color": obj.extra["color"]} if obj.extra.get("color") else {}))
    link = _sub(model, "link", name="link")
    if dynamic:
        _inertial(link, obj, density)
    for name, part, T in _object_parts(obj):
        _add_part(link, name, part, T)


def _region_frame(world: ET.Element, region: Region) -> None:
    frame = _sub(world, "frame", name=_check_name(region.id))
    _sub(frame, "pose", pose_text(make_transform(region.rotation, region.center)))
    _sub(frame, f"{{{SM_NS}}}region", kind=region.kind, row=region.row, col=region.col,
         size=_vec(region.size), occupancy=_num(region.occupancy))


# --- environment, camera, robot ----------------------------------------------------------------
def _ground_and_stand(world: ET.Element, ground_z: float) -> None:
    """mjcf's floor plane and the robot's cylindrical stand from the floor to its base."""
    floor = _sub(world, "model", name="ground_plane")
    _sub(floor, "static", "true")
    _sub(floor, "pose", _vec([0, 0, ground_z, 0, 0, 0]))
    link = _sub(floor, "link", name="link")
    for kind in ("collision", "visual"):
        e = _sub(link, kind, name=kind)
        plane = _sub(_sub(e, "geometry"), "plane")
        _sub(plane, "normal", "0 0 1")
        _sub(plane, "size", "12 12")
        if kind == "visual":
            _material(e, (0.78, 0.76, 0.72, 1))
    stand = _sub(world, "model", name="robot_stand")
    _sub(stand, "static", "true")
    _sub(stand, "pose", _vec([0, 0, ground_z / 2 - 0.001, 0, 0, 0]))
    _add_part(_sub(stand, "link", name="link"), "stand",
              A.Part("cylinder", (0.08, -ground_z / 2), rgba=(0.3, 0.3, 0.32, 1)), np.eye(4))


def camera_sensor_pose(scene: Scene) -> np.ndarray:
    """World pose of the gz camera frame (x forward, z up) whose optical frame is our camera's."""
    T = camera_pose(scene.viewer).copy()
    T[:3, :3] = T[:3, :3] @ R_OPTICAL_GZCAM
    return T


def _camera_model(world: ET.Element, scene: Scene, cam: CameraSpec) -> None:
    intr = cam.intrinsics
    model = _sub(world, "model", name=CAMERA_MODEL)
    _sub(model, "static", "true")
    _sub(model, "pose", pose_text(camera_sensor_pose(scene)))
    sensor = _sub(_sub(model, "link", name="link"), "sensor", name="rgbd", type="rgbd_camera")
    _sub(sensor, "always_on", "true")
    _sub(sensor, "update_rate", _num(cam.rate_hz))
    _sub(sensor, "topic", GZ_CAMERA_TOPIC)
    camera = _sub(sensor, "camera", name="l515")
    _sub(camera, "horizontal_fov", _num(2 * math.atan(intr.width / (2 * intr.fx))))
    image = _sub(camera, "image")
    _sub(image, "width", intr.width)
    _sub(image, "height", intr.height)
    _sub(image, "format", "R8G8B8")
    clip = _sub(camera, "clip")
    _sub(clip, "near", _num(cam.near_m))
    _sub(clip, "far", _num(cam.far_m))
    depth = _sub(camera, "depth_camera")
    _sub(depth, "output", "depths")
    depth_clip = _sub(depth, "clip")
    _sub(depth_clip, "near", _num(cam.near_m))
    _sub(depth_clip, "far", _num(cam.far_m))
    # the exact pinhole of our MuJoCo camera (cx = (W-1)/2), not one derived again from the fov
    lens_intr = _sub(_sub(camera, "lens"), "intrinsics")
    for tag, v in (("fx", intr.fx), ("fy", intr.fy), ("cx", intr.cx), ("cy", intr.cy), ("s", 0.0)):
        _sub(lens_intr, tag, _num(v))


def default_robot_urdf() -> Path:
    """Where issue 21's URDF lives: urdf/ of the source tree or of the installed share directory."""
    return config_dir().parent / "urdf" / ROBOT_URDF_NAME


def urdf_root_link(urdf: Path) -> str:
    """The URDF's root link: the one link that is no joint's child."""
    root = ET.parse(urdf).getroot()
    links = [link.get("name") for link in root.findall("link")]
    children = {j.find("child").get("link") for j in root.findall("joint") if j.find("child") is not None}
    roots = [n for n in links if n not in children]
    if len(roots) != 1:
        raise ValueError(f"{urdf}: expected one root link, found {roots}")
    return roots[0]


def urdf_links_without_inertial(urdf: Path) -> list[str]:
    """Links of a URDF with geometry but no <inertial>. SDFormat's URDF import drops massless
    links (and Gazebo cannot simulate them), so a robot made only of such links loads as a
    model with no links at all: `ign sdf -k` then fails with "A model must have at least one link"."""
    root = ET.parse(urdf).getroot()
    return [lk.get("name") for lk in root.findall("link")
            if lk.find("inertial") is None and (lk.find("collision") is not None or lk.find("visual") is not None)]


def initial_arm_joints(scene: Scene) -> np.ndarray:
    """The arm joints SimWorld starts this scene from (its IK of the scene's initial TCP pose, on
    the branch it picks; the analytic solution nearest HOME_Q is not always that branch), so
    Gazebo's arm starts in the same configuration and occludes the same things."""

    with SimWorld(scene, config=SimConfig(width=64, height=48)) as world:   # no rendering: size is moot
        return np.asarray(world.joint_positions()[:6], float)


def _robot_model(world: ET.Element, scene: Scene, urdf: Path) -> None:
    """The URDF merged into one model fixed to the world at the base frame (the world origin), with
    the joint-state publisher and the trajectory controller on the UR joints."""
    model = _sub(world, "model", name=ROBOT_MODEL)
    _sub(model, "pose", "0 0 0 0 0 0")
    _sub(_sub(model, "include", merge="true"), "uri", urdf.resolve().as_uri())
    # before the URDF exists the include is a placeholder at its path, rooted at issue 21's "base"
    root = urdf_root_link(urdf) if urdf.is_file() else "base"
    if root != "world":          # a URDF fixed to "world" already brings its own joint
        joint = _sub(model, "joint", name="fixed_to_world", type="fixed")
        _sub(joint, "parent", "world")
        _sub(joint, "child", root)
    jsp = _sub(model, "plugin", filename="gz-sim-joint-state-publisher-system",
               name="gz::sim::systems::JointStatePublisher")
    _sub(jsp, "topic", GZ_JOINT_STATE_TOPIC)
    jtc = _sub(model, "plugin", filename="gz-sim-joint-trajectory-controller-system",
               name="gz::sim::systems::JointTrajectoryController")
    _sub(jtc, "topic", GZ_TRAJECTORY_TOPIC)
    _sub(jtc, "joint_names", " ".join(mjcf.ARM_JOINTS))
    _sub(jtc, "initial_positions", _vec(initial_arm_joints(scene)))
    # stiff position loops so the arm follows the sampled trajectory closely; untuned: Gazebo
    # cannot run here, and the URDF has no inertials yet to tune against
    for tag, v in (("position_p_gain", 3000), ("position_i_gain", 50), ("position_d_gain", 60),
                   ("position_i_min", -50), ("position_i_max", 50)):
        _sub(jtc, tag, " ".join([str(v)] * 6))


# --- the world ---------------------------------------------------------------------------------
def _world_settings(world: ET.Element, timestep_s: float) -> None:
    """MuJoCo's time step, the gz-sim systems a world needs to run (physics, sensors, ...), and
    mjcf's one light (no shadows, as MuJoCo renders)."""
    _sub(_sub(world, "physics", name="sim_step", type="ignored"), "max_step_size", _num(timestep_s))
    for filename, plugin in WORLD_PLUGINS:
        p = _sub(world, "plugin", filename=filename, name=plugin)
        if plugin.endswith("Sensors"):
            _sub(p, "render_engine", "ogre2")
    light = _sub(world, "light", name="sun", type="directional")
    _sub(light, "pose", "0.3 -0.5 2.5 0 0 0")
    _sub(light, "direction", "0 0.2 -1")
    _sub(light, "diffuse", "0.5 0.5 0.5 1")
    _sub(light, "cast_shadows", "false")


def world_element(scene: Scene, *, name: str = "spatial_manip", robot_urdf: Path | None = None,
                  camera: CameraSpec | None = None, book_density: float | None = None,
                  with_robot: bool = True) -> ET.Element:
    ET.register_namespace("sm", SM_NS)
    density = book_density if book_density is not None else SimConfig().book_density_kg_m3
    camera = camera or CameraSpec.from_sim_config()
    sdf = ET.Element("sdf", version=SDF_VERSION)
    world = _sub(sdf, "world", name=_check_name(name))
    _world_settings(world, SimConfig().timestep_s)
    _ground_and_stand(world, float(scene.extra.get("ground_z", -0.7)))
    if with_robot:
        _robot_model(world, scene, Path(robot_urdf) if robot_urdf else default_robot_urdf())
    for obj in scene.objects:
        _object_model(world, obj, density)
    for region in scene.regions:
        _region_frame(world, region)
    _camera_model(world, scene, camera)
    return sdf


def world_sdf(scene: Scene, **kw) -> str:
    root = world_element(scene, **kw)
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def calibration_dict(scene: Scene, camera: CameraSpec | None = None) -> dict:
    """The exported camera as a hand-eye calibration file (config/calibration format), so the
    Gazebo graph publishes the same /camera/extrinsics a calibrated cell would."""
    camera = camera or CameraSpec.from_sim_config()
    T = camera_pose(scene.viewer)
    intr = camera.intrinsics
    return {
        "mode": "eye_to_hand", "camera_frame": "camera_color_optical_frame",
        "T_base_camera": {"translation": [float(v) for v in T[:3, 3]],
                          "rotation_xyzw": [float(v) for v in matrix_to_quat(T[:3, :3])]},
        "camera_info": {"width": intr.width, "height": intr.height,
                        "k": [float(v) for v in (intr.fx, 0, intr.cx, 0, intr.fy, intr.cy, 0, 0, 1)],
                        "d": [0.0] * 5, "distortion_model": "plumb_bob"},
    }


def write_world(scene: Scene, path: str | Path, **kw) -> Path:
    """PATH (.sdf) and PATH's stem + .calibration.yaml beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(world_sdf(scene, name=kw.pop("name", _world_name(path.stem)), **kw))
    cal = path.with_name(path.stem + ".calibration.yaml")
    cal.write_text("# written by spatial_manip.sim.sdf_export: the camera of " + path.name + "\n"
                   + yaml.safe_dump(calibration_dict(scene, kw.get("camera")), sort_keys=False))
    return path


def _world_name(stem: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in stem) or "spatial_manip"


# --- the real parser ---------------------------------------------------------------------------
def ign_command() -> list[str]:
    """The SDFormat checker's command: `ign sdf` (Debian 12: ignition-tools + libsdformat-dev),
    or `gz sdf` on newer Gazebo installs."""
    for exe in ("ign", "gz"):
        if shutil.which(exe):
            return [exe, "sdf"]
    raise SdfParserMissingError("no SDFormat parser: `ign sdf` not found; install it with "
                                "`apt-get install -y ignition-tools libsdformat-dev` (scripts/setup.sh does)")


def check_sdf(path: str | Path, timeout_s: float = 60.0) -> str:
    """Run `ign sdf -k PATH`; return its output when it says Valid, else raise SdfInvalidError."""
    cmd = [*ign_command(), "-k", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    # ign prints a harmless "libignition-tools-backward.so not found" line on Debian
    out = "\n".join(ln for ln in (proc.stdout + proc.stderr).splitlines() if "tools-backward" not in ln)
    if proc.returncode != 0 or "Valid." not in out:
        raise SdfInvalidError(f"`{' '.join(cmd)}` rejected the file (exit {proc.returncode}):\n{out.strip()}")
    return out
