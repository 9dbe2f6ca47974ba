"""Overlays for the trace: what the stack believed, drawn on the colour image it planned on.

Every perceived object's 3D box as a projected wireframe with its id, the chosen target(s) in a
distinct colour, grasps as a two-finger gripper (graspnetAPI frame: approach +x, closing +y,
fingertips `depth` past the grasp point), and the placement pose as an axis triad with the held
object's box at that pose. All inputs are in the base frame; segments are clipped at a near
plane in front of the camera, so geometry behind it is skipped rather than folded into view.

    rgb = draw_overlay(obs.rgb, obs.T_base_cam, obs.intrinsics, objects=scene.objects,
                       target_ids=["book_2"], grasps=top, chosen=0, place_pose=T, place_size=size)
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from spatial_manip.camera_model import CameraIntrinsics, project
from spatial_manip.transforms import apply, invert, make_transform
from spatial_manip.transforms import box_corners as corners_of
from spatial_manip.reasoning.orientation import COLOURS

BOX_COLOUR = COLOURS[5]          # cyan: every perceived object
TARGET_COLOUR = COLOURS[6]       # magenta: the chosen target(s)
GRASP_COLOUR = COLOURS[3]        # orange: the chosen (or first-tried) grasp
OTHER_GRASP_COLOUR = (200, 200, 200)
PLACE_COLOUR = COLOURS[7]        # lime: the held object's box at the place pose
PATH_COLOUR = (255, 220, 0)      # yellow: the TCP's planned way (transit samples, then the straight moves)
AXIS_COLOURS = (COLOURS[0], COLOURS[1], COLOURS[2])   # x red, y green, z blue (as RViz)
NEAR_M = 0.02                    # segments are clipped to z >= NEAR_M in the camera frame
FINGER_LENGTH_M = 0.045          # Robotiq 2F-85 (grasping.gripper.GripperGeometry defaults)
APPROACH_LINE_M = 0.08
AXIS_LENGTH_M = 0.08
# the 12 edges of SceneObject.corners()' order (index bits: x=4, y=2, z=1)
BOX_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]
def box_corners(T: np.ndarray, size) -> np.ndarray:
    """The 8 corners (base frame) of a box of `size` (x, y, z extents) posed at T."""
    T = np.asarray(T, float)
    return corners_of(T[:3, 3], np.asarray(size, float).reshape(3), T[:3, :3])


def project_segments(segments: np.ndarray, T_base_cam: np.ndarray, intr: CameraIntrinsics) -> list:
    """Pixel end points of base-frame segments (N, 2, 3), each clipped to the part in front of
    the camera (z >= NEAR_M); segments wholly behind it are dropped."""
    segs = np.asarray(segments, float).reshape(-1, 2, 3)
    if segs.size == 0:
        return []
    cam = apply(invert(T_base_cam), segs.reshape(-1, 3)).reshape(-1, 2, 3)
    out = []
    for a, b in cam:
        if a[2] < NEAR_M and b[2] < NEAR_M:
            continue
        if a[2] < NEAR_M or b[2] < NEAR_M:   # move the end behind the plane onto it
            t = (NEAR_M - a[2]) / (b[2] - a[2])
            p = a + t * (b - a)
            a, b = (p, b) if a[2] < NEAR_M else (a, p)
        uv, _ = project(np.stack([a, b]), intr)
        if np.isfinite(uv).all():
            out.append((tuple(uv[0]), tuple(uv[1])))
    return out


def gripper_segments(T_grasp: np.ndarray, width_m: float, depth_m: float = 0.0) -> np.ndarray:
    """Base-frame segments of a parallel-jaw gripper at a graspnetAPI grasp pose: two fingers
    ending at the fingertips, the palm bar joining their roots, and the approach line."""
    T = np.asarray(T_grasp, float)
    tip, root, back = depth_m, depth_m - FINGER_LENGTH_M, depth_m - FINGER_LENGTH_M - APPROACH_LINE_M
    h = max(float(width_m), 0.0) / 2
    local = np.array([[[root, -h, 0], [tip, -h, 0]], [[root, h, 0], [tip, h, 0]],
                      [[root, -h, 0], [root, h, 0]], [[root, 0, 0], [back, 0, 0]]], float)
    return apply(T, local.reshape(-1, 3)).reshape(-1, 2, 3)


def _box_segments(corners: np.ndarray) -> np.ndarray:
    return np.array([[corners[a], corners[b]] for a, b in BOX_EDGES])


class _Canvas:
    def __init__(self, rgb: np.ndarray, T_base_cam: np.ndarray, intr: CameraIntrinsics):
        self.img = Image.fromarray(np.ascontiguousarray(rgb).astype(np.uint8)).convert("RGB")
        self.draw = ImageDraw.Draw(self.img)
        self.T, self.intr = np.asarray(T_base_cam, float), intr
        self.w = max(1, round(min(self.img.size) / 240))      # line width that scales with the image
        self.font = ImageFont.load_default(size=max(10, round(min(self.img.size) / 40)))

    def segments(self, segs: np.ndarray, colour, width: int | None = None) -> None:
        for a, b in project_segments(segs, self.T, self.intr):
            self.draw.line([a, b], fill=colour, width=width or self.w)

    def label(self, point_base: np.ndarray, text: str, colour, anchor: str = "mb") -> None:
        cam = apply(invert(self.T), np.atleast_2d(point_base))
        if cam[0, 2] < NEAR_M:
            return
        (uv,), inside = project(cam, self.intr)
        if not inside[0]:
            return
        x0, y0, x1, y1 = self.draw.textbbox((uv[0], uv[1]), text, font=self.font, anchor=anchor)
        self.draw.rectangle([x0 - 2, y0 - 1, x1 + 2, y1 + 1], fill=(0, 0, 0))
        self.draw.text((uv[0], uv[1]), text, fill=colour, font=self.font, anchor=anchor)


def draw_overlay(rgb: np.ndarray, T_base_cam: np.ndarray, intr: CameraIntrinsics, *,
                 objects: Iterable = (), target_ids: Sequence[str] = (), grasps: Sequence[dict] = (),
                 chosen: int | None = 0, place_pose: np.ndarray | None = None,
                 place_size=None, path=()) -> np.ndarray:
    """A copy of `rgb` with the overlays. `objects` are SceneObjects (or anything with id,
    center, size, rotation); `grasps` are dicts with pose (4x4 graspnetAPI frame), width and
    optionally depth; `chosen` indexes the one drawn thick (None: all thin); `place_size` is
    the held object's box size, drawn at `place_pose`; `path` the TCP's planned way ((x, y, z), ...)."""
    c = _Canvas(rgb, T_base_cam, intr)
    targets = set(target_ids)
    objects = sorted(objects, key=lambda o: o.id in targets)      # targets drawn last, on top
    for o in objects:
        hit = o.id in targets
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = o.rotation, o.center
        corners = box_corners(T, o.size)
        c.segments(_box_segments(corners), TARGET_COLOUR if hit else BOX_COLOUR, 2 * c.w if hit else c.w)
    for o in objects:   # labels after all boxes, so no edge crosses a label
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = o.rotation, o.center
        top = box_corners(T, o.size)
        c.label(np.array([o.center[0], o.center[1], top[:, 2].max()]), o.id,
                TARGET_COLOUR if o.id in targets else BOX_COLOUR)
    if place_pose is not None:
        P = np.asarray(place_pose, float)
        if place_size is not None:
            c.segments(_box_segments(box_corners(P, place_size)), PLACE_COLOUR, 2 * c.w)
        for k in range(3):
            c.segments(np.array([[P[:3, 3], P[:3, 3] + AXIS_LENGTH_M * P[:3, k]]]), AXIS_COLOURS[k], 2 * c.w)
        c.label(P[:3, 3], "place", PLACE_COLOUR, anchor="mt")   # below: the z axis goes up
    way = np.asarray(path, float).reshape(-1, 3)
    if len(way) > 1:
        c.segments(np.stack([way[:-1], way[1:]], axis=1), PATH_COLOUR, c.w)
    order = [i for i in range(len(grasps)) if i != chosen] + ([chosen] if chosen is not None and chosen < len(grasps) else [])
    for i in order:   # the chosen grasp last, so it stays visible over the others
        g = grasps[i]
        segs = gripper_segments(g["pose"], float(g.get("width", 0.0)), float(g.get("depth", 0.0)))
        c.segments(segs, GRASP_COLOUR if i == chosen else OTHER_GRASP_COLOUR, 2 * c.w if i == chosen else c.w)
    return np.asarray(c.img)


def scene_overlay(obs, scene, *, target_ids: Sequence[str], pick_id: str | None, place_pose,
                  grasps: Sequence[dict] = (), chosen: int | None = 0, path=()) -> np.ndarray:
    """draw_overlay for a pipeline step: the observation, the perceived scene, the decision's
    targets and place pose (with the box of the object to be placed: the one picked, else the
    one held), and grasps if given."""
    held = None
    ids = {o.id: o for o in scene.objects}
    if pick_id is not None and pick_id in ids:
        held = ids[pick_id]
    elif scene.held_object() is not None:
        held = scene.held_object()
    kw = dict(objects=scene.objects, target_ids=target_ids, grasps=grasps, chosen=chosen, place_pose=place_pose,
              place_size=held.size if held is not None and place_pose is not None else None, path=path)
    full = draw_overlay(obs.rgb, obs.T_base_cam, obs.intrinsics, **kw)
    if not grasps or pick_id not in ids:
        return full
    o = ids[pick_id]       # grasps are centimetres apart: show them enlarged beside the full view
    focus = [box_corners(make_transform(o.rotation, o.center), o.size)]
    focus += [gripper_segments(g["pose"], float(g.get("width", 0.0)), float(g.get("depth", 0.0))).reshape(-1, 3)
              for g in grasps]
    return with_zoom(full, zoomed_overlay(obs.rgb, obs.T_base_cam, obs.intrinsics, np.concatenate(focus), **kw))


def grasp_summary(grasps: Sequence[dict], n: int = 5) -> list[dict]:
    """The first `n` grasps (best first, as proposed) as plain fields for the trace."""
    return [{k: g[k] for k in ("pose", "width", "depth", "score") if k in g}
            for g in list(grasps)[:n] if isinstance(g, dict) and "pose" in g]


def chosen_grasp(grasps: Sequence[dict], picked: dict | None) -> int | None:
    """Index of the grasp a pick used, matched on score and width (the pick reports the TCP
    pose, not the grasp pose); None when nothing was picked."""
    if not picked:
        return None
    for i, g in enumerate(grasps):
        if isinstance(g, dict) and np.isclose(float(g.get("score", np.nan)), float(picked.get("score", np.inf))) and \
                np.isclose(float(g.get("width", np.nan)), float(picked.get("width", np.inf))):
            return i
    return None


def grasps_to_draw(grasps: Sequence[dict], picked: dict | None, n: int = 5) -> tuple[list[dict], int | None]:
    """The best `n` grasps plus the one that held if it ranked lower, and its index in that list."""
    shown, k = grasp_summary(grasps, n), chosen_grasp(grasps, picked)
    if k is None:
        return shown, None
    if k >= n:
        shown.append(grasp_summary([grasps[k]])[0])
        return shown, len(shown) - 1
    return shown, k


def zoomed_overlay(rgb: np.ndarray, T_base_cam: np.ndarray, intr: CameraIntrinsics, focus_points: np.ndarray,
                   *, margin: float = 0.6, **overlay) -> np.ndarray | None:
    """draw_overlay of the image region around `focus_points` (base frame), enlarged to the
    image's height and redrawn with scaled intrinsics so lines stay thin; None when the points
    are not in view. Small objects and grasps far from the camera are a few pixels otherwise."""
    cam = apply(invert(T_base_cam), np.atleast_2d(focus_points))
    uv, _ = project(cam[cam[:, 2] > NEAR_M], intr)
    uv = uv[np.isfinite(uv).all(1)]
    if len(uv) == 0:
        return None
    lo = np.clip(uv.min(0), 0, [intr.width - 1, intr.height - 1])
    hi = np.clip(uv.max(0), 0, [intr.width - 1, intr.height - 1])
    half = max(16.0, (1 + margin) * float((hi - lo).max()) / 2)
    centre = (lo + hi) / 2
    u0, v0 = int(max(0, centre[0] - half)), int(max(0, centre[1] - half))
    u1, v1 = int(min(intr.width, centre[0] + half)), int(min(intr.height, centre[1] + half))
    if u1 - u0 < 4 or v1 - v0 < 4:
        return None
    s = intr.height / (v1 - v0)
    size = (max(1, round((u1 - u0) * s)), intr.height)
    crop = np.asarray(Image.fromarray(np.ascontiguousarray(rgb[v0:v1, u0:u1]).astype(np.uint8)).resize(size, Image.BICUBIC))
    zi = CameraIntrinsics(size[0], size[1], intr.fx * s, intr.fy * s, (intr.cx - u0 + 0.5) * s - 0.5,
                          (intr.cy - v0 + 0.5) * s - 0.5, intr.distortion_model, intr.distortion)
    return draw_overlay(crop, T_base_cam, zi, **overlay)


def with_zoom(full: np.ndarray, zoom: np.ndarray | None) -> np.ndarray:
    """The full overlay and its zoom side by side (same height), split by a white bar."""
    if zoom is None:
        return full
    bar = np.full((full.shape[0], 4, 3), 255, np.uint8)
    return np.concatenate([full, bar, zoom[: full.shape[0]]], axis=1)
