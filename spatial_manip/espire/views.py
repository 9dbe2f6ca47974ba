"""The two camera views ESPIRE's client asks for, and what the server reads off an image.

- "world": the scene's fixed RGB-D camera (the one the task generator checked visibility from).
- "ego": a camera on the robot's wrist, behind and beside the fingers, looking along the
  approach axis past the fingertips: the close view ESPIRE's execution loop re-plans from.

Both share the intrinsics (SimConfig's image size and field of view). The ego view moves the
world camera for one render and puts it back, so a single MuJoCo camera (and GL context) serves
both; nothing else in the world changes.

Goal masks turn "is this pixel on the goal?" into an image lookup: the answer books' pixels in
the rendered segmentation (pick), or the silhouette of each target box projected into the view
(a shelf slot, or the area a metric placement must reach).
"""
from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
from PIL import Image, ImageDraw

from spatial_manip.camera_model import project
from spatial_manip.transforms import apply, box_corners, invert, make_transform
from spatial_manip.observation import RGBDObservation
from spatial_manip.sim import mjcf

VIEWS = ("world", "ego")
EGO_BACK_M = 0.17      # camera this far behind the TCP along the approach axis (on the wrist)
EGO_SIDE_M = 0.09      # and this far off the finger plane, so the fingers do not fill the image
EGO_LOOK_M = 0.12      # looking at the point this far past the TCP
# colour names a VLM reads in the drivers' prompts ("marked by a bounding box of the {bbox_color}
# color"): the first one no object of the scene is painted in, so the box is never confused
# with a book
HIGHLIGHT_COLORS = (("magenta", (255, 0, 255)), ("lime", (0, 255, 0)), ("cyan", (0, 255, 255)))
BOX_LINE_PX = 3


def ego_camera_pose(T_tcp: np.ndarray) -> np.ndarray:
    """T_base_cam (optical: x right, y down, z forward) of the wrist camera at TCP pose T_tcp
    (z = approach, y = finger closing axis). The image's down points back towards the fingers'
    side, so the fingertips appear at the bottom of the image."""
    R, p = T_tcp[:3, :3], T_tcp[:3, 3]
    eye = p - EGO_BACK_M * R[:, 2] + EGO_SIDE_M * R[:, 0]
    z = p + EGO_LOOK_M * R[:, 2] - eye
    z /= np.linalg.norm(z)
    down = -R[:, 0] - (-R[:, 0] @ z) * z
    y = down / np.linalg.norm(down)
    return make_transform(np.column_stack([np.cross(y, z), y, z]), eye)


def _quat_wxyz(R: np.ndarray) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, float).reshape(9))
    return q


def render(world, view: str) -> RGBDObservation:
    """Render `view` ("world" or "ego") of a SimWorld: rgb, depth (m, 0 = no return),
    segmentation and the view's own T_base_cam."""
    if view == "world":
        return world.render()
    if view != "ego":
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
    with world.lock:
        m, d = world.model, world.data
        cam = m.camera(mjcf.CAMERA).id
        saved = m.cam_pos[cam].copy(), m.cam_quat[cam].copy()
        T = ego_camera_pose(world.tcp_pose())
        try:
            m.cam_pos[cam] = T[:3, 3]
            m.cam_quat[cam] = _quat_wxyz(T[:3, :3] @ np.diag([1.0, -1.0, -1.0]))  # MuJoCo looks along -z
            mujoco.mj_camlight(m, d)
            obs = world.render()
        finally:
            m.cam_pos[cam], m.cam_quat[cam] = saved
            mujoco.mj_camlight(m, d)
    return dataclasses.replace(obs, T_base_cam=T)


def pixel_point(obs: RGBDObservation, row: int, col: int) -> np.ndarray | None:
    """The base-frame 3D point seen at pixel (row, col), or None where the depth has no return."""
    z = float(obs.depth_m[row, col])
    if not np.isfinite(z) or z <= 0.0:
        return None
    k = obs.intrinsics
    p_cam = np.array([(col - k.cx) / k.fx * z, (row - k.cy) / k.fy * z, z])
    return apply(obs.T_base_cam, p_cam[None])[0]


def box_mask(obs: RGBDObservation, box) -> np.ndarray:
    """Pixels inside the image silhouette of an oriented box (a Region or SceneObject): the
    convex hull of its projected corners. Empty when a corner is behind the camera (the
    silhouette is then unbounded; such a box is not a fair target in that view)."""
    k = obs.intrinsics
    mask = Image.new("1", (k.width, k.height), 0)
    pc = apply(invert(obs.T_base_cam), box.corners() if hasattr(box, "corners") else _corners(box))
    if np.any(pc[:, 2] <= 1e-3):
        return np.zeros((k.height, k.width), bool)
    uv, _ = project(pc, k)
    hull = _convex_hull(uv)
    ImageDraw.Draw(mask).polygon([tuple(map(float, p)) for p in hull], fill=1)
    return np.asarray(mask, bool)


def _corners(box) -> np.ndarray:
    return box_corners(box.center, box.size, box.rotation)


def _convex_hull(pts: np.ndarray) -> np.ndarray:
    """Monotone-chain hull of 2D points (8 corners: no library needed)."""
    p = sorted(map(tuple, np.asarray(pts, float)))

    def half(seq):
        out: list = []
        for q in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (q[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (q[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(q)
        return out
    lower, upper = half(p), half(reversed(p))
    return np.array(lower[:-1] + upper[:-1])


def goal_mask(obs: RGBDObservation, object_ids: list[str], boxes: list) -> np.ndarray:
    """Pixels of the goal in this view: the listed objects' segmentation plus the boxes' silhouettes."""
    mask = np.zeros(obs.depth_m.shape, bool)
    if object_ids and obs.segmentation is not None:
        wanted = [i for i, oid in obs.segment_ids.items() if oid in set(object_ids)]
        mask |= np.isin(obs.segmentation, wanted)
    for b in boxes:
        mask |= box_mask(obs, b)
    return mask


def click_distance_px(mask: np.ndarray, row: int, col: int) -> float | None:
    """0 on the goal, else the pixel distance to its nearest pixel; None when the goal is not in view."""
    if mask[row, col]:
        return 0.0
    pts = np.argwhere(mask)
    if len(pts) == 0:
        return None
    return float(np.sqrt(np.min((pts[:, 0] - row) ** 2 + (pts[:, 1] - col) ** 2)))


def highlight_color(scene) -> tuple[str, tuple]:
    used = {str(o.extra.get("color", "")).lower() for o in scene.objects}
    return next((c for c in HIGHLIGHT_COLORS if c[0] not in used), HIGHLIGHT_COLORS[0])


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """(r0, r1, c0, c1), inclusive, of the axis-aligned box around a mask (what the highlighted
    views draw), or None for an empty mask."""
    rows, cols = np.nonzero(mask)
    if not len(rows):
        return None
    return int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())


def in_box(box: tuple[int, int, int, int] | None, row: int, col: int) -> bool:
    return box is not None and box[0] <= row <= box[1] and box[2] <= col <= box[3]


def draw_goal_boxes(rgb: np.ndarray, masks: list[np.ndarray], rgb_color: tuple) -> np.ndarray:
    """A copy of `rgb` with an axis-aligned box outline around each non-empty mask."""
    img = Image.fromarray(rgb)
    draw = ImageDraw.Draw(img)
    for m in masks:
        box = mask_box(m)
        if box is not None:
            r0, r1, c0, c1 = box
            draw.rectangle([c0, r0, c1, r1], outline=tuple(rgb_color), width=BOX_LINE_PX)
    return np.asarray(img)
