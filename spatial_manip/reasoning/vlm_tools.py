"""The tools a vision-language model may call, over the Scene, with OpenAI function specs.

The model chooses *which* geometric question to ask; every number in an answer comes from the
geometry core (`spatial_manip.geometry.relations`, `reasoning.program`). Names follow MSSR's
perception toolbox (find_obj, get_object_3d_position, relative_object_position,
calculate_direction) plus `distance`, `object_orientation` and `run_program` (TIGeR's
code_executor role: a spatial program executed on the scene).

    tools = ToolSet(scene)
    specs = tools.specs()                       # for chat.completions(tools=...)
    out = tools.call("distance", '{"object_a": "jar", "object_b": "b_med_up"}')
    out.ok, out.result, out.error               # an error is a message for the model, never raised

Every malformed or hallucinated call (unknown tool, arguments that are not JSON or do not fit
the schema, an object id that is not in the scene) gives `ok=False` and an `error` text that
says what was expected and lists what exists, so the model can correct itself.

Given the observation (`ToolSet(scene, observation=obs, coords=adapter)`), the same registry also
holds TIGeR's RGB-D tools (`spatial_manip.tools.TOOLS`, name -> (function, schema)) under their
own names: one registry the model sees, one `call` path.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from spatial_manip.errors import SpatialManipError, TargetNotFoundError
from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.reach import Reach
from spatial_manip.reasoning import lexicon
from spatial_manip.reasoning.vlm_coords import CoordAdapter
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint
from spatial_manip.tools import TOOLS as RGBD_TOOLS, ToolContext
from spatial_manip.program_text import Node, Sym, parse_program
from spatial_manip.reasoning.program import PERCEIVED_DIRECTION_SLACK_DEG, PERCEIVED_FACE_ERROR_M, PERCEIVED_TILT_SLACK_DEG, execute

REFERENCE_IDS = ("viewer", "robot")
_STOP = {"the", "a", "an", "of", "on", "in", "to", "and", "object", "objects", "all", "any", "every"}


class ToolCallError(Exception):
    """A call the model got wrong; the message goes back to the model."""


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict                       # JSON schema of the arguments (type object)
    fn: Callable[..., dict]
    id_args: tuple = ()                    # arguments that must name a scene id

    def spec(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


@dataclass
class ToolOutcome:
    name: str
    arguments: dict | None
    ok: bool
    result: dict | None = None
    error: str | None = None
    ids: list[str] = field(default_factory=list)    # scene ids the result mentions

    def content(self) -> str:
        """The text of the tool message sent back to the model."""
        if self.ok:
            return json.dumps(self.result, separators=(",", ":"))
        return json.dumps({"error": self.error})


def _r(v, nd=3):
    if isinstance(v, (list, tuple, np.ndarray)):
        return [round(float(x), nd) for x in v]
    return round(float(v), nd)


def _schema(props: dict, required=None) -> dict:
    return {"type": "object", "properties": props, "required": list(required if required is not None else props),
            "additionalProperties": False}


_ID = {"type": "string", "description": "an object or region id from find_obj, or 'viewer' / 'robot'"}
_FRAME = {"type": "string", "enum": ["viewer", "robot", "reference"],
          "description": "viewer = the camera's left/right/front (default); robot = the robot's; "
                         "reference = the reference object's own front (only if it has one)"}


class ToolSet:
    """The tools the model may call: the scene tools, orientation grounding when an `orienter` is
    given, and the RGB-D tools over `observation` (boxes and points in `coords`) when one is.
    `scene` may be updated by tools (orientation grounding sets a front)."""

    def __init__(self, scene: Scene, *, orienter: Callable[[str, str], np.ndarray] | None = None,
                 observation=None, coords: CoordAdapter | None = None, reach: Reach | None = None):
        self.scene = scene
        self.reach = reach         # the launched arm's, for the places a program chooses (execute's)
        self.version = 0           # bumped whenever a tool changes the scene (a repeated call is then new)
        self.orienter = orienter
        self.tools: dict[str, Tool] = {t.name: t for t in self._builtin()}
        if orienter is not None:
            self.tools["situated_orientation_grounding"] = Tool(
                "situated_orientation_grounding",
                "Find the direction an object faces (its front) by choosing among arrows drawn on the image. "
                "Use it for an object whose front is unknown before asking about its own left/right/front.",
                _schema({"object_id": _ID, "query": {"type": "string", "description": "e.g. 'the front of the chair'"}},
                        ["object_id"]),
                self._orient, ("object_id",))
        self.tools.update(rgbd_tools(observation, coords))

    # --- the registry -------------------------------------------------------------------------
    def _builtin(self) -> list[Tool]:
        return [
            Tool("find_obj", "List the scene's objects and regions (shelf slots) whose label, category, colour "
                 "or category word matches a description such as 'book', 'jar', 'slot', 'red', 'fruit'. Returns "
                 "their ids and the colour names perception saw on them.",
                 _schema({"description": {"type": "string"}}), self._find_obj),
            Tool("get_object_3d_position", "3D centre, size and height range of an object or region (metres, "
                 "world frame: z up, the robot at the origin facing +x), and its colour names when known.",
                 _schema({"object_id": _ID}), self._position, ("object_id",)),
            Tool("object_orientation", "Whether an object has a known front, its front direction, its tilt "
                 "from upright in degrees and, for a book, whether it lies flat, stands upright or is tilted.",
                 _schema({"object_id": _ID}), self._orientation, ("object_id",)),
            Tool("relative_object_position", "Where object_id is relative to reference_id in a frame: offsets "
                 "forward/right/up (m), the direction word (front/right/behind/left) and clock position.",
                 _schema({"object_id": _ID, "reference_id": _ID, "frame": _FRAME}, ["object_id", "reference_id"]),
                 self._relative, ("object_id", "reference_id")),
            Tool("calculate_direction", "Unit ground-plane direction from one object to another in world "
                 "coordinates, and its bearing in degrees clockwise from the frame's forward axis.",
                 _schema({"from_id": _ID, "to_id": _ID, "frame": _FRAME}, ["from_id", "to_id"]),
                 self._direction, ("from_id", "to_id")),
            Tool("distance", "Boundary-to-boundary distance in metres between two objects (0 when touching).",
                 _schema({"object_a": _ID, "object_b": _ID}), self._distance, ("object_a", "object_b")),
            Tool("run_program", "Execute a spatial program (e.g. pick(unique(filterRel$LeftMost(filterBook(TABLE), "
                 "viewer)))) on the scene and return the ids that satisfy it and any placement pose.",
                 _schema({"program": {"type": "string"}}), self._run_program),
        ]

    def specs(self) -> list[dict]:
        return [t.spec() for t in self.tools.values()]

    def known_ids(self) -> list[str]:
        return self.scene.ids() + list(REFERENCE_IDS)

    # --- dispatch -----------------------------------------------------------------------------
    def call(self, name: str, arguments: str | dict | None) -> ToolOutcome:
        tool = self.tools.get(name)
        if tool is None:
            return ToolOutcome(name, None, False, error=f"there is no tool {name!r}; the tools are: "
                                                        f"{', '.join(self.tools)}")
        try:
            args = self._parse_args(tool, arguments)
        except ToolCallError as e:
            return ToolOutcome(name, None, False, error=str(e))
        try:
            for a in tool.id_args:
                if a in args and args[a] not in self.known_ids():
                    raise ToolCallError(f"{a}={args[a]!r} is not an object in the scene (it may not exist); "
                                        f"the ids are: {', '.join(self.known_ids())}. Use find_obj to look one up.")
            result = tool.fn(**args)
        except ToolCallError as e:
            return ToolOutcome(name, args, False, error=str(e))
        except (SpatialManipError, ValueError) as e:
            return ToolOutcome(name, args, False, error=f"{name} failed: {e}")
        return ToolOutcome(name, args, True, result=result, ids=self._ids_in(result, args))

    def _parse_args(self, tool: Tool, arguments) -> dict:
        if arguments is None or arguments == "":
            args = {}
        elif isinstance(arguments, dict):
            args = dict(arguments)
        else:
            try:
                args = json.loads(arguments)
            except (json.JSONDecodeError, TypeError) as e:
                raise ToolCallError(f"the arguments of {tool.name} must be a JSON object, got {arguments!r} "
                                    f"({e}); expected {json.dumps(tool.parameters['properties'])}") from None
        if not isinstance(args, dict):
            raise ToolCallError(f"the arguments of {tool.name} must be a JSON object, got {arguments!r}")
        props, req = tool.parameters["properties"], tool.parameters.get("required", [])
        missing = [k for k in req if k not in args]
        unknown = [k for k in args if k not in props]
        if missing or unknown:
            raise ToolCallError(f"{tool.name} takes {sorted(props)} (required {req}); "
                                f"missing {missing}, unknown {unknown}")
        for k, v in args.items():
            p = props[k]
            want = p.get("type")
            if want == "string" and not isinstance(v, str):
                raise ToolCallError(f"{tool.name}: {k} must be a string, got {v!r}")
            if "enum" in p and v not in p["enum"]:
                raise ToolCallError(f"{tool.name}: {k} must be one of {p['enum']}, got {v!r}")
        return args

    def _ids_in(self, result: Any, args: dict) -> list[str]:
        known, found = set(self.known_ids()), set()

        def walk(v):
            if isinstance(v, str):
                found.update({v} & known)
            elif isinstance(v, dict):
                for x in v.values():
                    walk(x)
            elif isinstance(v, (list, tuple)):
                for x in v:
                    walk(x)

        walk(result)
        walk(args)
        return sorted(found)

    # --- helpers ------------------------------------------------------------------------------
    def _get(self, obj_id: str):
        if obj_id == "viewer":
            return self.scene.viewer
        if obj_id == "robot":
            return self.scene.robot
        try:
            return self.scene.get(obj_id)
        except KeyError:
            raise ToolCallError(f"no object {obj_id!r} in the scene; the ids are: {', '.join(self.known_ids())}") from None

    def _axes(self, frame: str, reference) -> rel.FrameAxes:
        if frame == "viewer":
            return rel.frame_axes(rel.Frame.RELATIVE, viewer=self.scene.viewer)
        if frame == "robot":
            return rel.frame_axes(rel.Frame.INTRINSIC, reference=self.scene.robot, reference_id="robot")
        if isinstance(reference, SceneObject) and not reference.oriented:
            raise ToolCallError(f"{reference.id!r} has no known front, so frame='reference' is undefined; use "
                                f"frame='viewer'" + (" or call situated_orientation_grounding first"
                                                     if self.orienter else ""))
        return rel.frame_axes(rel.Frame.INTRINSIC, reference=reference,
                              reference_id=getattr(reference, "id", "reference"))

    # --- the tools ----------------------------------------------------------------------------
    def _find_obj(self, description: str) -> dict:
        words = [w.rstrip("s") if len(w) > 3 else w for w in re.findall(r"[a-z0-9]+", description.lower())]
        words = [w for w in words if w not in _STOP]
        items = list(self.scene.objects) + list(self.scene.regions)

        def text(x):
            if isinstance(x, Region):
                return f"{x.id} slot {x.kind} region"
            return f"{x.id} {x.label} {x.category} {' '.join(lexicon.colours(x))}".lower()

        def kind(x):       # a category word of the taxonomy ("fruit") or a synonym ("cup") names it too
            return isinstance(x, SceneObject) and any(lexicon.kind_matches(w, x) for w in words)

        hits = [x for x in items if words and (any(re.search(rf"\b{re.escape(w)}", text(x)) for w in words) or kind(x))]
        out = [{"id": x.id, "label": getattr(x, "label", "slot"),
                "category": getattr(x, "category", x.kind if isinstance(x, Region) else ""),
                **({"colour_names": lexicon.colours(x)} if isinstance(x, SceneObject) and lexicon.colours(x) else {})}
               for x in hits]
        res = {"matches": out}
        if not out:
            res["note"] = (f"nothing matches {description!r}; the scene holds: "
                           + ", ".join(f"{o.id} ({o.label})" for o in self.scene.objects))
        return res

    def _position(self, object_id: str) -> dict:
        x = self._get(object_id)
        if isinstance(x, Viewpoint):
            return {"id": object_id, "center_m": _r(x.position), "forward": _r(x.forward)}
        c = rel._corners(x)
        out = {"id": object_id, "center_m": _r(x.center), "size_m": _r(x.size),
               "bottom_z_m": _r(c[:, 2].min()), "top_z_m": _r(c[:, 2].max())}
        if isinstance(x, SceneObject) and lexicon.colours(x):
            out["colour_names"] = lexicon.colours(x)
        if isinstance(x, Region):
            out.update(row=x.row, col=x.col, occupancy=_r(x.occupancy, 2))
        return out

    def _orientation(self, object_id: str) -> dict:
        x = self._get(object_id)
        if not isinstance(x, SceneObject):
            raise ToolCallError(f"{object_id!r} is not an object with an orientation")
        out = {"id": object_id, "oriented": bool(x.oriented),
               "front": _r(rel.horizontal(x.front)) if x.oriented else None,
               "tilt_deg": _r(rel.tilt_deg(x), 1)}
        if x.category == "book":
            out.update(pose=rel.seen_book_pose_class(x), book_tilt_deg=_r(rel.book_tilt_deg(x), 1))
        return out

    def _relative(self, object_id: str, reference_id: str, frame: str = "viewer") -> dict:
        a, b = self._get(object_id), self._get(reference_id)
        axes = self._axes(frame, b)
        d = axes.coords(rel.position_of(a)) - axes.coords(rel.position_of(b))
        return {"object_id": object_id, "reference_id": reference_id, "frame": frame,
                "forward_m": _r(d[0]), "right_m": _r(d[1]), "up_m": _r(d[2]),
                "direction": rel.direction_of(a, axes, origin=b), "clock": rel.clock_position(a, axes, origin=b),
                "distance_m": _r(rel.distance(a, b))}

    def _direction(self, from_id: str, to_id: str, frame: str = "viewer") -> dict:
        a, b = self._get(from_id), self._get(to_id)
        v = rel.position_of(b) - rel.position_of(a)
        try:
            g = rel.horizontal(v)
        except ValueError:
            raise ToolCallError(f"{to_id!r} is straight above or below {from_id!r}: no ground direction") from None
        axes = self._axes(frame, a)
        return {"from_id": from_id, "to_id": to_id, "direction_world": _r(g),
                "bearing_deg": _r(rel.bearing_deg(b, axes, origin=a), 1), "frame": frame}

    def _distance(self, object_a: str, object_b: str) -> dict:
        return {"object_a": object_a, "object_b": object_b,
                "distance_m": _r(rel.distance(self._get(object_a), self._get(object_b)))}

    def execute(self, tree):
        """Run a spatial program on the scene as the stack runs one: the perceived scene's
        tolerances and the launched arm's reach (the model's run_program calls and its final
        answer alike, so an answer means what the model's tool calls showed it)."""
        return execute(tree, self.scene, direction_slack_deg=PERCEIVED_DIRECTION_SLACK_DEG,
                       tilt_slack_deg=PERCEIVED_TILT_SLACK_DEG, face_error_m=PERCEIVED_FACE_ERROR_M,
                       reach=self.reach)

    def _run_program(self, program: str) -> dict:
        try:
            tree = parse_program(program)
        except SpatialManipError as e:
            raise ToolCallError(f"not a spatial program: {e}") from None
        unknown = unknown_ids(tree, self.scene)
        if unknown:
            raise ToolCallError(f"the program names {unknown}, which are not in the scene; ids: "
                                f"{', '.join(self.known_ids())}")
        try:
            res = self.execute(tree)
        except TargetNotFoundError as e:
            return {"program": str(tree), "targets": [], "note": str(e)}
        return {"program": str(tree), "action": res.action, "targets": res.targets,
                "place_pose": res.place_pose.to_dict() if res.place_pose is not None else None}

    def _orient(self, object_id: str, query: str = "") -> dict:
        obj = self._get(object_id)
        if not isinstance(obj, SceneObject):
            raise ToolCallError(f"{object_id!r} is a region; orientation grounding needs an object")
        front = np.asarray(self.orienter(object_id, query or f"the front of the {obj.label}"), float)
        self.scene = with_front(self.scene, object_id, front)
        self.version += 1
        return {"id": object_id, "front": _r(front),
                "note": "the object's front is now known: frame='reference' works for it"}


# --- program helpers -----------------------------------------------------------------------------
_KEYWORDS = {"TABLE", "SHELF", "viewer", "you", "robot", "upright", "flat", "tilted", "keep", "true", "false"}


def program_ids(tree) -> list[str]:
    """Every symbol of a program that names a scene item (not a keyword)."""
    out: list[str] = []

    def walk(x):
        if isinstance(x, Node):
            if x.op == "filterLabel" and x.args:        # its first argument is a word, not an id
                for a in x.args[1:]:
                    walk(a)
                return
            for a in x.args:
                walk(a)
            for _, v in x.kwargs:
                walk(v)
        elif isinstance(x, Sym) and x.name not in _KEYWORDS and x.name not in out:
            out.append(x.name)

    walk(tree)
    return out


def unknown_ids(tree, scene: Scene) -> list[str]:
    known = set(scene.ids()) | {"table", "shelf"}
    return [i for i in program_ids(tree) if i not in known]


def with_front(scene: Scene, object_id: str, front_world) -> Scene:
    """A copy of the scene where `object_id` is oriented and faces `front_world` on the ground
    plane: the object turns about the vertical only, so its tilt is kept."""
    f = rel.horizontal(front_world)
    objs = []
    for o in scene.objects:
        if o.id == object_id:
            try:
                h = rel.horizontal(o.front)
                yaw = math.atan2(h[0] * f[1] - h[1] * f[0], h @ f)
                c, s = math.cos(yaw), math.sin(yaw)
                R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]) @ o.rotation
            except ValueError:            # its +x points straight up or down: rebuild the axes
                R = rel.upright_frame(f)
            o = SceneObject(o.id, o.label, o.category, o.center, o.size, R, True, o.size_class, o.held,
                            dict(o.extra))
        objs.append(o)
    return scene.with_objects(objs)


def rgbd_tools(observation, coords: CoordAdapter | None = None) -> dict[str, Tool]:
    """The geometry issue's TIGeR tools (camera_intrinsics, camera_extrinsics, depth_sensor,
    object_segmentation, box_2d_to_box_3d, point_3d_to_point_2d, code_executor) over the
    observation, sharing one ToolContext so masks and boxes chain between calls.

    `coords` is how the model writes boxes and points (vlm_coords; default: pixels of the
    observation): its boxes and points are converted to pixels here, where they enter the
    geometry, and the pixels the tools return are converted back, so the model reads and writes
    one convention. The model's schemas describe that convention and drop `box_format`."""
    if observation is None:
        return {}
    h, w = np.asarray(observation.rgb).shape[:2]
    coords = coords or CoordAdapter("pixel", w, h)
    ctx = ToolContext(observation)
    return {name: Tool(name, schema.get("description", name), _model_parameters(schema["parameters"], coords),
                       _wrap_geometry(fn, ctx, coords))
            for name, (fn, schema) in RGBD_TOOLS.items()}


_BOX_ARGS, _POINT_ARGS = ("box",), ("point", "pixel")      # model coordinates in tool arguments
_BOX_OUT, _POINT_OUT = ("box", "window"), ("centroid_px", "pixel")   # pixel values in tool results


def _model_parameters(params: dict, coords: CoordAdapter) -> dict:
    """The tool's parameters as the model sees them: boxes and points in its own convention."""
    props = {k: v for k, v in params.get("properties", {}).items() if k != "box_format"}
    for k in _BOX_ARGS:
        if k in props:
            props[k] = {**props[k], "description": coords.describe_box()}
    for k in _POINT_ARGS:
        if k in props:
            props[k] = {**props[k], "description": coords.describe_point()}
    return {**params, "properties": props}


def _args_to_pixels(kw: dict, coords: CoordAdapter) -> dict:
    out = dict(kw)
    for k in _BOX_ARGS:
        if out.get(k) is not None:
            out[k] = coords.box(out[k])
            out["box_format"] = "xyxy_px"       # the only format the geometry reads from here on
    for k in _POINT_ARGS:
        if out.get(k) is not None:
            out[k] = coords.point(out[k])
    return out


def _result_to_model(x, coords: CoordAdapter):
    if isinstance(x, list):
        return [_result_to_model(v, coords) for v in x]
    if not isinstance(x, dict):
        return x
    out = {}
    for k, v in x.items():
        if k in _BOX_OUT and isinstance(v, list) and len(v) == 4:
            out[k] = coords.to_model_box(v)
        elif k in _POINT_OUT and isinstance(v, list) and len(v) == 2:
            out[k] = coords.to_model_point(v)
        else:
            out[k] = _result_to_model(v, coords)
    return out


def _wrap_geometry(fn, ctx, coords: CoordAdapter):
    def call(**kw) -> dict:
        # a box or point the model cannot mean raises CoordinateError: the model's error (counted)
        out = fn(ctx, **_args_to_pixels(kw, coords))
        if isinstance(out, dict) and isinstance(out.get("error"), dict):
            # the tools report failures as data; here they are the model's error (counted)
            e = out["error"]
            raise ToolCallError(f"{e.get('code', 'ERROR')}: {e.get('message', '')}")
        if coords.convention != "pixel":
            out = _result_to_model(out, coords)
        return out if isinstance(out, dict) else {"value": out}
    return call
