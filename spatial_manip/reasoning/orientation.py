"""Situated Orientation Grounding (MSSR, seeds/004 section 3.2 and appendix B): the front of an
object whose front the scene does not know, chosen by the model among arrows, never regressed.

For an object at ground point P (its footprint centre, so arrows stay low in the image):
1. coarse: 8 ground-plane candidates 45 deg apart, arrow 0 pointing away from the camera;
2. each candidate is drawn as a numbered arrow on the *situated view* (the observation's image,
   projected with its calibrated camera) and on a *canonical view*: the RGB-D cloud re-rendered
   from a virtual camera raised 45 deg about the axis (camera->object) x up, looking at P, which
   undoes the foreshortening that collapses arrows at eye level;
3. the model answers with an arrow number; then fine: 5 candidates within +-22.5 deg of the
   coarse choice, drawn and chosen the same way.
The result is a unit world-frame (base) vector on the ground plane.

    front = ground_orientation(model, obj, observation, "the front of the chair")
"""
from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np
from PIL import Image, ImageDraw
from scipy.spatial.transform import Rotation

from spatial_manip.errors import NotUnderstoodError
from spatial_manip.camera_model import CameraIntrinsics, backproject, project
from spatial_manip.transforms import apply, invert, look_at
from spatial_manip.scene import Scene, SceneObject

COARSE_STEP_DEG = 45.0
FINE_OFFSETS_DEG = (-22.5, -11.25, 0.0, 11.25, 22.5)
RAISE_DEG = 45.0                 # MSSR: the canonical camera is rotated 45 deg upwards
MAX_ELEVATION_DEG = 80.0         # ... but never past looking straight down (degenerate 'right')
COLOURS = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240),
           (240, 50, 230), (210, 245, 60)]

SYSTEM = ("You ground directions. Numbered arrows are drawn on the ground around an object, in two views "
          "of the same scene: the camera's image and a view from higher up. Reply with the number of the "
          "arrow that best matches the requested direction, as 'ARROW: <number>'.")


def ground_direction(angle_deg: float) -> np.ndarray:
    a = math.radians(angle_deg)
    return np.array([math.cos(a), math.sin(a), 0.0])


def anchor_point(obj: SceneObject) -> np.ndarray:
    """The footprint centre: the object's centre at its lowest height."""
    return np.array([obj.center[0], obj.center[1], float(obj.corners()[:, 2].min())])


def _camera_heading_deg(T_base_cam: np.ndarray, p: np.ndarray) -> float:
    v = p - T_base_cam[:3, 3]
    return math.degrees(math.atan2(v[1], v[0]))


def _project_world(points: np.ndarray, T_base_cam: np.ndarray, intr: CameraIntrinsics):
    return project(apply(invert(T_base_cam), np.atleast_2d(points)), intr)


def draw_arrows(rgb: np.ndarray, T_base_cam: np.ndarray, intr: CameraIntrinsics, anchor: np.ndarray,
                directions: list[np.ndarray], length_m: float) -> np.ndarray:
    """Numbered arrows from `anchor` along each world direction, drawn on a copy of `rgb`."""
    img = Image.fromarray(np.ascontiguousarray(rgb).astype(np.uint8)).convert("RGB")
    draw = ImageDraw.Draw(img)
    (o,), _ = _project_world(anchor, T_base_cam, intr)
    w = max(2, round(min(img.size) / 160))
    for k, d in enumerate(directions):
        (tip,), ok = _project_world(anchor + length_m * np.asarray(d), T_base_cam, intr)
        if not np.all(np.isfinite(tip)) or not np.all(np.isfinite(o)):
            continue
        col = COLOURS[k % len(COLOURS)]
        draw.line([tuple(o), tuple(tip)], fill=col, width=w)
        v = tip - o
        n = np.linalg.norm(v)
        if n > 1e-6:
            u = v / n
            perp = np.array([-u[1], u[0]])
            head = 4 * w
            draw.polygon([tuple(tip), tuple(tip - head * u + 0.6 * head * perp),
                          tuple(tip - head * u - 0.6 * head * perp)], fill=col)
        lab = tip + (3 * w) * (v / n if n > 1e-6 else 0)
        r = 3 * w
        draw.ellipse([lab[0] - r, lab[1] - r, lab[0] + r, lab[1] + r], fill=(255, 255, 255), outline=col, width=1)
        draw.text((lab[0] - r / 2, lab[1] - r / 1.2), str(k), fill=(0, 0, 0))
    return np.asarray(img)


def canonical_camera(T_base_cam: np.ndarray, anchor: np.ndarray) -> np.ndarray:
    """The raised virtual camera (pose in base): the real camera rotated about the anchor by
    RAISE_DEG around (camera->object) x up, then aimed at the anchor."""
    c = T_base_cam[:3, 3]
    v = anchor - c
    up = np.array([0.0, 0.0, 1.0])
    axis = np.cross(v, up)
    if np.linalg.norm(axis) < 1e-9:                  # already looking straight down
        return T_base_cam.copy()
    axis /= np.linalg.norm(axis)
    elev = math.degrees(math.asin(float(np.clip(-v[2] / np.linalg.norm(v), -1, 1))))
    ang = max(0.0, min(RAISE_DEG, MAX_ELEVATION_DEG - elev))
    c2 = None
    for sign in (1.0, -1.0):                         # the rotation that lifts the camera
        cand = anchor + Rotation.from_rotvec(sign * math.radians(ang) * axis).apply(c - anchor)
        if c2 is None or cand[2] > c2[2]:
            c2 = cand
    return look_at(c2, anchor, up)


def render_canonical(observation, T_virt: np.ndarray, scale: float = 0.5) -> np.ndarray:
    """The observation's coloured depth cloud seen from T_virt (point splatting with a z-buffer,
    rendered at `scale` and enlarged so the gaps between splats close)."""
    intr = observation.intrinsics
    H, W = intr.height, intr.width
    small = CameraIntrinsics(max(1, round(W * scale)), max(1, round(H * scale)), intr.fx * scale,
                             intr.fy * scale, intr.cx * scale, intr.cy * scale)
    out = np.full((small.height, small.width, 3), 128, np.uint8)
    depth = np.nan_to_num(np.asarray(observation.depth_m, np.float32), nan=0.0)
    mask = (depth > 0.05) & (depth < 10.0)
    if mask.any():
        pts_cam, _ = backproject(depth, intr, mask)
        cols = observation.rgb[mask]
        pts = apply(observation.T_base_cam, pts_cam)
        uv, inside = _project_world(pts, T_virt, small)
        z = apply(invert(T_virt), pts)[:, 2]
        keep = inside & np.isfinite(uv).all(1)
        uv, z, cols = uv[keep], z[keep], cols[keep]
        order = np.argsort(-z)                       # far first, so near points overwrite them
        u = np.clip(np.round(uv[order, 0]).astype(int), 0, small.width - 1)
        v = np.clip(np.round(uv[order, 1]).astype(int), 0, small.height - 1)
        out[v, u] = cols[order]
    return np.asarray(Image.fromarray(out).resize((W, H), Image.NEAREST))


def parse_choice(text: str, n: int) -> int:
    m = re.search(r"ARROW\s*[:#]?\s*(\d+)", text or "", re.I) or re.search(r"\b(\d+)\b", text or "")
    if m is None or not 0 <= int(m.group(1)) < n:
        raise ValueError(f"expected 'ARROW: k' with k in 0..{n - 1}, got {text[:120]!r}")
    return int(m.group(1))


def _ask(model, images_urls: list[str], query: str, n: int, stage: str, rec) -> int:
    content = [{"type": "text", "text": f"Which arrow points in the direction of {query}? Arrows 0..{n - 1}. "
                                         f"First image: the camera's view; second: a raised view."}]
    content += [{"type": "image_url", "image_url": {"url": u}} for u in images_urls]
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]
    for attempt in range(2):
        text = model.complete(msgs, None).get("content") or ""
        msgs.append({"role": "assistant", "content": text})
        try:
            k = parse_choice(text, n)
            if rec is not None:
                rec("orientation_choice", stage=stage, reply=text, choice=k)
            return k
        except ValueError as e:
            if rec is not None:
                rec("answer_rejected", category="orientation", reason=str(e))
            msgs.append({"role": "user", "content": f"Not accepted: {e}. Reply 'ARROW: <number>'."})
    raise NotUnderstoodError(f"orientation grounding: the model chose no arrow for {query!r} ({stage})")


def ground_orientation(model, obj: SceneObject, observation, query: str, rec=None) -> np.ndarray:
    """The world-frame unit ground vector of `query` (e.g. 'the front of the chair') at `obj`."""
    # here: mssr_loop imports this module (orientation grounding is one of its tools)
    from spatial_manip.reasoning.mssr_loop import image_data_url

    anchor = anchor_point(obj)
    length = max(0.12, 0.5 * float(np.hypot(obj.size[0], obj.size[1])) + 0.08)
    T_virt = canonical_camera(observation.T_base_cam, anchor)
    canon = render_canonical(observation, T_virt)
    base = _camera_heading_deg(observation.T_base_cam, anchor)

    def stage(name, angles):
        dirs = [ground_direction(a) for a in angles]
        situated = draw_arrows(observation.rgb, observation.T_base_cam, observation.intrinsics, anchor, dirs, length)
        raised = draw_arrows(canon, T_virt, observation.intrinsics, anchor, dirs, length)
        if rec is not None:
            rec.image(f"sog_{obj.id}_{name}_situated", situated, f"{query}: {name} candidates")
            rec.image(f"sog_{obj.id}_{name}_canonical", raised, f"{query}: {name} candidates, raised view")
        k = _ask(model, [image_data_url(situated), image_data_url(raised)], query, len(angles), name, rec)
        return angles[k]

    coarse = stage("coarse", [base + COARSE_STEP_DEG * k for k in range(int(360 / COARSE_STEP_DEG))])
    fine = stage("fine", [coarse + o for o in FINE_OFFSETS_DEG])
    d = ground_direction(fine)
    if rec is not None:
        rec("orientation", object_id=obj.id, query=query, coarse_deg=round(coarse % 360, 2),
            fine_deg=round(fine % 360, 2), front=[round(float(x), 4) for x in d])
    return d


def make_orienter(model, scene_getter: Callable[[], Scene], observation, rec=None):
    """A callable (object_id, query) -> world vector for the `situated_orientation_grounding` tool."""
    def orient(object_id: str, query: str) -> np.ndarray:
        obj = scene_getter().get(object_id)
        return ground_orientation(model, obj, observation, query, rec)
    return orient
