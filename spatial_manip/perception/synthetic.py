"""Tabletop frames with known answers, rendered by MuJoCo: a floor, a table on legs, and boxes or
cylinders of known pose, seen by a pinhole camera. Used by the perception tests and by
`bench.perception_bench` to measure accuracy and speed of the segmenters on real renders.

Needs MUJOCO_GL=egl (or osmesa) for headless rendering.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import look_at, rpy_to_matrix
from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import Scene, SceneObject, Viewpoint

TABLE_TOP_Z = 0.75
TABLE_CENTRE_XY = (0.65, 0.0)
TABLE_SIZE = (0.6, 1.2)     # along x, y


@dataclass(frozen=True)
class SyntheticObject:
    label: str
    size: tuple                  # (l, w, h) metres: box extents, or (d, d, h) for a cylinder
    xy: tuple                    # centre on the table, base frame
    yaw_deg: float = 0.0
    rgba: tuple = (0.8, 0.2, 0.2, 1.0)
    category: str = "object"
    shape: str = "box"           # "box" | "cylinder"
    z_base: float = TABLE_TOP_Z  # height of the surface it stands on

    @property
    def centre(self) -> np.ndarray:
        return np.array([self.xy[0], self.xy[1], self.z_base + self.size[2] / 2])


def _mjcf(objects, T_base_cam, fovy_deg, width, height) -> str:
    R_mj = T_base_cam[:3, :3] @ np.diag([1.0, -1.0, -1.0])   # MuJoCo cameras look along -z, +y up
    xy = " ".join(f"{v:.9f}" for v in np.concatenate([R_mj[:, 0], R_mj[:, 1]]))
    pos = " ".join(f"{v:.9f}" for v in T_base_cam[:3, 3])
    tx, ty = TABLE_CENTRE_XY
    hx, hy = TABLE_SIZE[0] / 2, TABLE_SIZE[1] / 2
    legs = "".join(
        f'<geom name="leg{i}" type="box" size="0.025 0.025 {(TABLE_TOP_Z - 0.03) / 2}" '
        f'pos="{tx + sx * (hx - 0.05)} {ty + sy * (hy - 0.05)} {(TABLE_TOP_Z - 0.03) / 2}" rgba="0.3 0.25 0.2 1"/>'
        for i, (sx, sy) in enumerate([(-1, -1), (-1, 1), (1, -1), (1, 1)]))
    bodies = []
    for k, o in enumerate(objects):
        q = _quat_wxyz(o.yaw_deg)
        rgba = " ".join(str(v) for v in o.rgba)
        if o.shape == "cylinder":
            geom = f'type="cylinder" size="{o.size[0] / 2} {o.size[2] / 2}"'
        else:
            geom = f'type="box" size="{o.size[0] / 2} {o.size[1] / 2} {o.size[2] / 2}"'
        c = o.centre
        bodies.append(f'<body name="obj{k}" pos="{c[0]} {c[1]} {c[2]}" quat="{q}">'
                      f'<geom name="obj{k}" {geom} rgba="{rgba}"/></body>')
    return f"""
<mujoco>
  <visual><global offwidth="{width}" offheight="{height}"/><quality shadowsize="0" offsamples="0"/>
    <headlight ambient="0.45 0.45 0.45" diffuse="0.5 0.5 0.5"/></visual>
  <worldbody>
    <light pos="0.6 0 2.5" dir="0 0 -1" diffuse="0.4 0.4 0.4" castshadow="false"/>
    <geom name="floor" type="plane" size="3 3 0.1" rgba="0.55 0.55 0.58 1"/>
    <geom name="table" type="box" size="{hx} {hy} 0.015" pos="{tx} {ty} {TABLE_TOP_Z - 0.015}" rgba="0.82 0.74 0.6 1"/>
    {legs}
    {''.join(bodies)}
    <camera name="cam" pos="{pos}" xyaxes="{xy}" fovy="{fovy_deg}"/>
  </worldbody>
</mujoco>"""


def _quat_wxyz(yaw_deg: float) -> str:
    h = math.radians(yaw_deg) / 2
    return f"{math.cos(h)} 0 0 {math.sin(h)}"


def render_tabletop(objects=(), *, camera_pos=(0.1, 0.0, 1.45), target=(0.65, 0.0, TABLE_TOP_Z),
                    width: int = 640, height: int = 480, fovy_deg: float = 55.0,
                    stamp_s: float = 0.0) -> tuple[RGBDObservation, Scene]:
    """Render `objects` on the table; the observation carries the simulator segmentation, and the
    scene is the ground truth (object ids "obj0", "obj1", ...; the table as "table")."""
    import mujoco  # imported here: only the renderer needs it

    T = look_at(camera_pos, target)
    model = mujoco.MjModel.from_xml_string(_mjcf(objects, T, fovy_deg, width, height))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    renderer = mujoco.Renderer(model, height=height, width=width)
    try:
        renderer.update_scene(data, camera="cam")
        rgb = renderer.render().copy()
        renderer.enable_depth_rendering()
        renderer.update_scene(data, camera="cam")
        depth = renderer.render().astype(np.float32).copy()
        renderer.disable_depth_rendering()
        renderer.enable_segmentation_rendering()
        renderer.update_scene(data, camera="cam")
        seg_raw = renderer.render().copy()
        renderer.disable_segmentation_rendering()
    finally:
        renderer.close()
    depth[depth > 0.99 * model.vis.map.zfar * model.stat.extent] = 0.0   # background: no return

    geom_obj = {}
    for k in range(len(objects)):
        geom_obj[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"obj{k}")] = f"obj{k}"
    geom_obj[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "table")] = "table"
    is_geom = seg_raw[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)
    seg = np.where(is_geom, seg_raw[..., 0], -1).astype(np.int32)

    obs = RGBDObservation(rgb=rgb, depth_m=depth, intrinsics=CameraIntrinsics.from_fovy(width, height, fovy_deg),
                          T_base_cam=T, stamp_s=stamp_s, segmentation=seg,
                          segment_ids={int(g): oid for g, oid in geom_obj.items()})
    scene_objects = [SceneObject(id=f"obj{k}", label=o.label, category=o.category, center=o.centre,
                                 size=o.size, rotation=rpy_to_matrix(0, 0, math.radians(o.yaw_deg)),
                                 extra={"rgb": [round(255 * c) for c in o.rgba[:3]]})
                     for k, o in enumerate(objects)]
    tx, ty = TABLE_CENTRE_XY
    scene_objects.append(SceneObject(id="table", label="table", category="table",
                                     center=[tx, ty, TABLE_TOP_Z - 0.015], size=[*TABLE_SIZE, 0.03]))
    scene = Scene(Viewpoint(T[:3, 3], T[:3, 2]), Viewpoint([0, 0, 0], [1, 0, 0]), scene_objects)
    return obs, scene


# A default scene: three books of ESPIRE's size classes, a jar and a cube.
def default_objects() -> list[SyntheticObject]:
    return [
        SyntheticObject("book", (0.18, 0.12, 0.017), (0.55, 0.25), 20.0, (0.85, 0.15, 0.1, 1), "book"),
        SyntheticObject("book", (0.235, 0.16, 0.022), (0.75, 0.02), -35.0, (0.1, 0.3, 0.85, 1), "book"),
        SyntheticObject("book", (0.28, 0.22, 0.038), (0.62, -0.3), 80.0, (0.15, 0.65, 0.2, 1), "book"),
        SyntheticObject("jar", (0.06, 0.06, 0.08), (0.45, 0.0), 0.0, (0.95, 0.85, 0.1, 1), "reference", "cylinder"),
        SyntheticObject("cube", (0.06, 0.06, 0.06), (0.82, 0.3), 10.0, (0.6, 0.2, 0.7, 1), "reference"),
    ]
