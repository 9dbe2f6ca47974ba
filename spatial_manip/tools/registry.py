"""TOOLS: name -> (function, schema). Schemas are OpenAI function specs ({"name", "description",
"parameters"}); `openai_tools()` wraps them as chat.completions `tools=`. Each registered
function is the safe form: arguments are checked against the schema, and every failure comes
back as {"error": {"code", "message"}} — nothing escapes as an exception."""
from __future__ import annotations

import functools
import json
from typing import Any, Callable

import numpy as np

from spatial_manip.errors import SpatialManipError
from spatial_manip.tools import geometry_tools as G

_BOX = {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
        "description": "[x0, y0, x1, y1] pixels (x right, y down), or [ymin, xmin, ymax, xmax] 0-1000 "
                       "with box_format='yxyx_1000'"}
_PIXEL = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2,
          "description": "[u, v] pixel (u right, v down)"}
_FORMAT = {"type": "string", "enum": ["xyxy_px", "yxyx_1000"], "description": "how `box` is written"}


def _spec(name: str, description: str, properties: dict | None = None, required=()) -> dict:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties or {}, "required": list(required),
                           "additionalProperties": False}}


SCHEMAS = {
    "camera_intrinsics": _spec("camera_intrinsics", "The colour camera's calibrated pinhole intrinsics "
                               "(fx, fy, cx, cy, K, distortion) for the current image."),
    "camera_extrinsics": _spec("camera_extrinsics", "The camera's calibrated pose in the robot base frame "
                               "(4x4 T_base_camera, position, quaternion xyzw); z up in base."),
    "depth_sensor": _spec("depth_sensor", "Metric depth (metres) at a pixel or in a box: the median over "
                          "valid depth pixels, with how many were valid, and the 3D point in camera and base.",
                          {"pixel": _PIXEL, "box": _BOX, "box_format": _FORMAT,
                           "window": {"type": "integer", "minimum": 1, "maximum": 51,
                                      "description": "side of the square window around pixel (default 5)"}}),
    "object_segmentation": _spec("object_segmentation", "Segment the object in a 2D box or at a pixel; "
                                 "returns a mask_id for box_2d_to_box_3d, the mask's box and area.",
                                 {"box": _BOX, "point": _PIXEL, "box_format": _FORMAT}),
    "box_2d_to_box_3d": _spec("box_2d_to_box_3d", "Oriented 3D bounding box (metres, robot base frame, z up) "
                              "of the object in a 2D box or a mask_id: centre, size [length, width, height], "
                              "rotation, yaw, corners, number of depth points used and a quality score 0-1.",
                              {"box": _BOX, "mask_id": {"type": "string"}, "box_format": _FORMAT}),
    "point_3d_to_point_2d": _spec("point_3d_to_point_2d", "Project 3D points (metres) to pixels; says "
                                  "whether each is inside the image and visible or occluded in the depth image.",
                                  {"points": {"type": "array", "items": {"type": "array", "items": {"type": "number"},
                                                                         "minItems": 3, "maxItems": 3}},
                                   "frame": {"type": "string", "enum": ["base", "camera"]},
                                   "occlusion_tol_m": {"type": "number", "minimum": 0}}, ["points"]),
    "code_executor": _spec("code_executor", "Run Python (math, numpy as np, scipy only; no files, network or "
                           "processes) in a sandbox with time and memory limits. `inputs` holds the JSON "
                           "you pass; set a variable named `result` to a JSON-serialisable value.",
                           {"code": {"type": "string"}, "inputs": {"description": "any JSON value"}}, ["code"]),
}

_TYPES = {"object": dict, "array": (list, tuple), "string": str, "boolean": bool, "integer": int,
          "number": (int, float)}


def validate(value: Any, schema: dict, where: str = "arguments") -> None:
    """Check a value against the subset of JSON Schema used above; raise ValueError naming the key."""
    t = schema.get("type")
    if t is not None:
        ok = isinstance(value, _TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
        if t in ("integer", "number") and isinstance(value, (np.integer, np.floating)):
            ok = True
        if not ok:
            raise ValueError(f"{where} must be a {t}, got {type(value).__name__} {value!r}"[:300])
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{where} must be one of {schema['enum']}, got {value!r}")
    if t in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"] or "maximum" in schema and value > schema["maximum"]:
            raise ValueError(f"{where} must be within [{schema.get('minimum')}, {schema.get('maximum')}], got {value}")
    if t == "array":
        n = len(value)
        if n < schema.get("minItems", 0) or n > schema.get("maxItems", n):
            raise ValueError(f"{where} must have {schema.get('minItems')}..{schema.get('maxItems')} items, got {n}")
        for i, v in enumerate(value):
            validate(v, schema.get("items", {}), f"{where}[{i}]")
    if t == "object":
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            raise ValueError(f"{where} is missing required {missing}")
        extra = [k for k in value if k not in props] if schema.get("additionalProperties") is False else []
        if extra:
            raise ValueError(f"{where} has unknown keys {extra}; allowed: {sorted(props)}")
        for k, v in value.items():
            if k in props:
                validate(v, props[k], k)


def _plain(x):
    """Plain JSON types all the way down (numpy scalars slip in easily); NaN/inf become None."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f"tool output holds a {type(x).__name__}, which is not JSON")


def _safe(name: str, fn: Callable) -> Callable:
    schema = SCHEMAS[name]

    @functools.wraps(fn)
    def call(ctx, **kwargs) -> dict:
        try:
            validate(kwargs, schema["parameters"])
            return _plain(fn(ctx, **kwargs))
        except SpatialManipError as e:
            return {"error": e.to_dict()}
        except (ValueError, TypeError) as e:
            return {"error": {"code": "INVALID_ARGUMENT", "message": f"{name}: {e}"}}
        except Exception as e:  # a bug in the tool: report it, never crash the caller
            return {"error": {"code": "INTERNAL", "message": f"{name} failed: {type(e).__name__}: {e}"}}
    return call


TOOLS: dict[str, tuple[Callable, dict]] = {
    name: (_safe(name, getattr(G, name)), SCHEMAS[name]) for name in SCHEMAS}


def openai_tools(names=None) -> list[dict]:
    """The specs as chat.completions `tools=[{"type": "function", "function": ...}]`."""
    return [{"type": "function", "function": SCHEMAS[n]} for n in (names or SCHEMAS)]


def call_tool(ctx, name: str, arguments: dict | str | None = None) -> dict:
    """One tool call as a model makes it (arguments as a dict or a JSON string)."""
    if name not in TOOLS:
        return {"error": {"code": "UNKNOWN_TOOL", "message": f"no tool {name!r}; tools: {sorted(TOOLS)}"}}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as e:
            return {"error": {"code": "INVALID_ARGUMENT", "message": f"arguments are not valid JSON: {e}"}}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return {"error": {"code": "INVALID_ARGUMENT", "message": "arguments must be a JSON object"}}
    return TOOLS[name][0](ctx, **arguments)
