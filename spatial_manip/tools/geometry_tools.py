"""The TIGeR tool set (III-B) over one RGB-D observation: plain functions `f(ctx, **json_args)`
returning JSON-serialisable dicts. Registered with their schemas in `spatial_manip.tools.TOOLS`.

Pixel boxes are [x0, y0, x1, y1] in pixels (x right, y down, exclusive ends) unless
`box_format="yxyx_1000"` (ESPIRE's [ymin, xmin, ymax, xmax] normalised to 0-1000). 3D points are
metres in `base` unless `frame="camera"` (the colour optical frame).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatial_manip.errors import ErrorCode, NoObservationError, SpatialManipError, TargetNotFoundError
from spatial_manip.geometry.boxes import Box3D, box_2d_to_box_3d as _fit_box
from spatial_manip.geometry.calibration import HandEyeCalibration
from spatial_manip.camera_model import pixel_rays, project, valid_depth_mask
from spatial_manip.geometry.region_grow import object_segmentation as _grow
from spatial_manip.transforms import apply, invert, matrix_to_pose
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import colour_names
from spatial_manip.tools.code_executor import ExecutorLimits, run_code


class ToolArgumentError(SpatialManipError):
    """Arguments that do not make sense for this observation (outside the image, empty box)."""

    code = ErrorCode.INVALID_GOAL


@dataclass
class ToolContext:
    """What the tools see: the current observation, the calibration, and what earlier calls made
    (masks and boxes by id, so a model can chain segmentation -> box without shipping masks)."""

    observation: RGBDObservation | None
    calibration: HandEyeCalibration | None = None
    T_base_tool0: np.ndarray | None = None        # for an eye-in-hand calibration
    segmenter: object = None                      # callable(obs, box=, point=) -> mask (see `prompted`);
                                                  # default: the region grower
    executor_limits: ExecutorLimits = field(default_factory=ExecutorLimits)
    masks: dict = field(default_factory=dict)
    boxes: dict = field(default_factory=dict)

    def obs(self) -> RGBDObservation:
        if self.observation is None:
            raise NoObservationError("no RGB-D observation yet: wait for the camera before calling tools")
        return self.observation

    def T_base_camera(self) -> tuple[np.ndarray, str]:
        if self.calibration is not None:
            return self.calibration.T_base_camera(self.T_base_tool0), f"calibration ({self.calibration.mode})"
        return self.obs().T_base_cam, "observation (camera driver's extrinsics from calibration)"


def prompted(segmenter):
    """Adapt a whole-scene perception Segmenter (`segment(obs) -> [Detection]`) to the prompted
    form the object_segmentation tool uses: the detection containing the seed point, or the one
    with the most pixels inside the box (ties: the highest score)."""
    def segment_at(obs, box=None, point=None):
        dets = [d for d in segmenter.segment(obs) if np.asarray(d.mask).any()]
        if point is not None:
            u, v = point
            hits = [d for d in dets if d.mask[int(v), int(u)]]
            if hits:
                return max(hits, key=lambda d: d.score).mask
            raise ValueError(f"no detected object covers pixel ({u}, {v})")
        x0, y0, x1, y1 = (int(round(c)) for c in box)
        inside = [(int(d.mask[y0:y1, x0:x1].sum()), d.score, i) for i, d in enumerate(dets)]
        best = max(inside, default=(0, 0, -1))
        if best[0] == 0:
            raise ValueError(f"no detected object inside the box {box}")
        return dets[best[2]].mask
    return segment_at


def _box_px(box, fmt: str, w: int, h: int) -> list[float]:
    b = np.asarray(box, float).reshape(-1)
    if b.size != 4 or not np.all(np.isfinite(b)):
        raise ToolArgumentError(f"a box is 4 finite numbers, got {box!r}")
    if fmt == "yxyx_1000":
        b = np.array([b[1] * w / 1000, b[0] * h / 1000, b[3] * w / 1000, b[2] * h / 1000])
    elif fmt != "xyxy_px":
        raise ToolArgumentError(f"box_format must be 'xyxy_px' or 'yxyx_1000', got {fmt!r}")
    x0, x1 = sorted(np.clip(b[[0, 2]], 0, w))
    y0, y1 = sorted(np.clip(b[[1, 3]], 0, h))
    if x1 - x0 < 1 or y1 - y0 < 1:
        raise ToolArgumentError(f"the box {list(map(float, box))} is empty inside the {w}x{h} image")
    return [float(x0), float(y0), float(x1), float(y1)]


def _pixel(pixel, w, h) -> tuple[int, int]:
    p = np.asarray(pixel, float).reshape(-1)
    if p.size != 2 or not np.all(np.isfinite(p)):
        raise ToolArgumentError(f"a pixel is [u, v], got {pixel!r}")
    u, v = int(round(p[0])), int(round(p[1]))
    if not (0 <= u < w and 0 <= v < h):
        raise ToolArgumentError(f"pixel ({u}, {v}) is outside the {w}x{h} image")
    return u, v


# --- the tools ------------------------------------------------------------------------------

def camera_intrinsics(ctx: ToolContext) -> dict:
    i = ctx.obs().intrinsics
    return {"width": i.width, "height": i.height, "fx": i.fx, "fy": i.fy, "cx": i.cx, "cy": i.cy,
            "K": i.K.tolist(), "distortion_model": i.distortion_model, "distortion": list(i.distortion)}


def camera_extrinsics(ctx: ToolContext) -> dict:
    T, source = ctx.T_base_camera()
    pos, quat = matrix_to_pose(T)
    return {"T_base_camera": T.tolist(), "position": pos.tolist(), "quaternion_xyzw": quat.tolist(),
            "frame_id": "base", "child_frame_id": ctx.obs().frame_id, "source": source,
            "convention": "p_base = T_base_camera @ p_camera; camera optical frame x right, y down, z forward"}


def depth_sensor(ctx: ToolContext, pixel=None, box=None, window: int = 5, box_format: str = "xyxy_px") -> dict:
    """Median depth over the valid pixels of a window around `pixel` (or inside `box`)."""
    obs = ctx.obs()
    h, w = obs.depth_m.shape
    if (pixel is None) == (box is None):
        raise ToolArgumentError("give exactly one of pixel [u, v] or box [x0, y0, x1, y1]")
    if pixel is not None:
        u, v = _pixel(pixel, w, h)
        r = max(0, int(window) // 2)
        x0, y0, x1, y1 = max(0, u - r), max(0, v - r), min(w, u + r + 1), min(h, v + r + 1)
        cu, cv = float(u), float(v)
    else:
        x0, y0, x1, y1 = (int(round(c)) for c in _box_px(box, box_format, w, h))
        cu, cv = (x0 + x1 - 1) / 2, (y0 + y1 - 1) / 2
    d = obs.depth_m[y0:y1, x0:x1]
    ok = valid_depth_mask(d)
    out = {"valid_count": int(ok.sum()), "window_count": int(d.size), "window": [x0, y0, x1, y1]}
    if not ok.any():
        return {**out, "depth_m": None, "point_camera": None, "point_base": None,
                "note": "no valid depth here (no return, out of range, or a hole)"}
    z = float(np.median(d[ok]))
    rx, ry = pixel_rays(np.array([cu]), np.array([cv]), obs.intrinsics)
    pc = np.array([rx[0] * z, ry[0] * z, z])
    return {**out, "depth_m": z, "depth_mad_m": float(np.median(np.abs(d[ok] - z))),
            "point_camera": pc.tolist(), "point_base": apply(obs.T_base_cam, pc).tolist()}


def object_segmentation(ctx: ToolContext, box=None, point=None, box_format: str = "xyxy_px") -> dict:
    """Mask of the object in a box or at a seed pixel; stored under the returned mask_id."""
    obs = ctx.obs()
    h, w = obs.depth_m.shape
    if box is None and point is None:
        raise ToolArgumentError("give a box [x0, y0, x1, y1] or a point [u, v]")
    b = _box_px(box, box_format, w, h) if box is not None else None
    p = _pixel(point, w, h) if point is not None else None
    seg = ctx.segmenter or _grow
    try:
        mask = np.asarray(seg(obs, box=b, point=p), bool)
    except ValueError as e:
        raise TargetNotFoundError(f"no object found there: {e}") from e
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        raise TargetNotFoundError("the segmenter found no object pixels there")
    mask_id = f"mask_{len(ctx.masks)}"
    ctx.masks[mask_id] = mask
    return {"mask_id": mask_id, "box": [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1],
            "area_px": int(ys.size), "centroid_px": [float(xs.mean()), float(ys.mean())],
            "colour_names": colour_names(obs.rgb, mask)}


def box_2d_to_box_3d(ctx: ToolContext, box=None, mask_id: str | None = None, box_format: str = "xyxy_px") -> dict:
    """Oriented 3D box in base of the object in a pixel box or a stored mask."""
    obs = ctx.obs()
    h, w = obs.depth_m.shape
    if (box is None) == (mask_id is None):
        raise ToolArgumentError("give exactly one of box [x0, y0, x1, y1] or mask_id (from object_segmentation)")
    if mask_id is not None and mask_id not in ctx.masks:
        raise TargetNotFoundError(f"no mask {mask_id!r}; masks so far: {sorted(ctx.masks)}")
    try:
        b3 = _fit_box(obs, box=_box_px(box, box_format, w, h) if box is not None else None,
                      mask=ctx.masks.get(mask_id))
    except ValueError as e:  # BoxFitError included
        raise TargetNotFoundError(str(e)) from e
    box_id = f"box3d_{len(ctx.boxes)}"
    ctx.boxes[box_id] = b3
    return {"box_id": box_id, **_box_summary(b3)}


def _box_summary(b: Box3D) -> dict:
    d = b.to_dict()
    d["corners"] = b.corners().tolist()
    d["top_center"] = (b.center + b.rotation[:, 2] * b.size[2] / 2).tolist()
    return d


def point_3d_to_point_2d(ctx: ToolContext, points, frame: str = "base", occlusion_tol_m: float = 0.02) -> dict:
    """Pixels of 3D points, whether each is in the image, and whether the depth image shows it
    (visible) or something nearer hides it (occluded)."""
    obs = ctx.obs()
    P = np.asarray(points, float)
    if P.ndim == 1:
        P = P.reshape(1, -1)
    if P.ndim != 2 or P.shape[1] != 3 or not np.all(np.isfinite(P)) or len(P) > 10000:
        raise ToolArgumentError(f"points must be up to 10000 finite [x, y, z] triples, got shape {P.shape}")
    if frame not in ("base", "camera"):
        raise ToolArgumentError(f"frame must be 'base' or 'camera', got {frame!r}")
    pc = apply(invert(obs.T_base_cam), P) if frame == "base" else P
    uv, inside = project(pc, obs.intrinsics)
    out = []
    for (u, v), ok, z in zip(uv, inside, pc[:, 2]):
        item = {"pixel": [float(u), float(v)], "in_image": bool(ok), "depth_m": float(z), "visible": False}
        if ok:
            iu, iv = int(round(u)), int(round(v))
            win = obs.depth_m[max(0, iv - 1):iv + 2, max(0, iu - 1):iu + 2]
            good = valid_depth_mask(win)
            measured = float(np.median(win[good])) if good.any() else None
            tol = occlusion_tol_m + 0.01 * z
            item["measured_depth_m"] = measured
            item["visible"] = bool(measured is None or measured >= z - tol)
            item["occluded"] = bool(measured is not None and measured < z - tol)
        out.append(item)
    return {"points": out, "frame": frame}


def code_executor(ctx: ToolContext, code: str, inputs=None) -> dict:
    """Run model-written Python (math/numpy/scipy only) in a sandbox; `result` comes back."""
    return run_code(code, inputs, ctx.executor_limits)
