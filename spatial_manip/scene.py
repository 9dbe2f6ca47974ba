"""The scene: what the planner reasons over, what the simulator exports, what users save.

Scene file (JSON, metres, one world frame with z up), the public format of issue #4:

    {"viewer": {"position": [x,y,z], "forward": [x,y,z]},
     "robot":  {"position": [x,y,z], "forward": [x,y,z]},
     "objects": [{"id", "label", "category", "center", "size": [l,w,h],
                  "rotation": 3x3 row-major (columns are the object's x, y, z axes in world:
                              world = R @ local; +x is its front, +z its up),
                  "oriented": bool, "size_class": optional, "held": optional}],
     "regions": [{"id", "kind": "slot", "row", "col", "center", "size", "occupancy"}]}

Unknown keys are kept in `extra` and otherwise ignored; a missing required key raises
`SceneFormatError` naming it.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from spatial_manip.transforms import box_corners


class SceneFormatError(ValueError):
    """A scene file or dict is malformed; the message names the key and the object."""


MAX_SCENE_OBJECTS = 2000           # a cell has tens of objects and regions; far more is a mistake
MAX_SCENE_FILE_BYTES = 20_000_000  # 20 MB: a 2000-object scene with clouds of parts is under 5 MB


def _vec(d: dict, key: str, where: str, n: int = 3) -> np.ndarray:
    if key not in d:
        raise SceneFormatError(f"{where}: missing required key {key!r}")
    try:
        v = np.asarray(d[key], dtype=float).reshape(n)
    except (TypeError, ValueError) as e:
        raise SceneFormatError(f"{where}: {key!r} must be {n} numbers, got {d[key]!r}") from e
    if not np.all(np.isfinite(v)):
        raise SceneFormatError(f"{where}: {key!r} has a non-finite value: {d[key]!r}")
    return v


def _req(d: dict, key: str, where: str):
    if key not in d:
        raise SceneFormatError(f"{where}: missing required key {key!r}")
    return d[key]


@dataclass
class Viewpoint:
    """A position and a forward direction: the viewer ("you") or the robot."""

    position: np.ndarray
    forward: np.ndarray

    def __post_init__(self):
        self.position = np.asarray(self.position, dtype=float).reshape(3)
        f = np.asarray(self.forward, dtype=float).reshape(3)
        n = np.linalg.norm(f)
        if not np.isfinite(n) or n < 1e-9:
            raise SceneFormatError(f"forward direction must be a non-zero vector, got {f.tolist()}")
        self.forward = f / n

    @classmethod
    def from_dict(cls, d: dict, where: str) -> "Viewpoint":
        if not isinstance(d, dict):
            raise SceneFormatError(f"{where} must be an object with 'position' and 'forward'")
        return cls(_vec(d, "position", where), _vec(d, "forward", where))

    def to_dict(self) -> dict:
        return {"position": self.position.tolist(), "forward": self.forward.tolist()}


@dataclass
class SceneObject:
    """An object as an oriented box. `rotation` maps object axes to world (world = R @ local)."""

    id: str
    label: str
    category: str
    center: np.ndarray
    size: np.ndarray                      # extents along the object's own x (length), y (width), z (height)
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    oriented: bool = False
    size_class: str | None = None
    held: bool = False
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.center = np.asarray(self.center, dtype=float).reshape(3)
        self.size = np.asarray(self.size, dtype=float).reshape(3)
        self.rotation = np.asarray(self.rotation, dtype=float).reshape(3, 3)

    # Axes of the object in world coordinates
    @property
    def front(self) -> np.ndarray:
        return self.rotation[:, 0]

    @property
    def left(self) -> np.ndarray:
        return self.rotation[:, 1]

    @property
    def up(self) -> np.ndarray:
        return self.rotation[:, 2]

    def corners(self) -> np.ndarray:
        """The 8 box corners in world, shape (8, 3)."""
        return box_corners(self.center, self.size, self.rotation)

    @property
    def has_parts(self) -> bool:
        """Whether the cell configured this fixture as part boxes (`extra["parts"]`: a shelf's
        panels, a wedge's steps): its own box is then their hull, partly air."""
        return bool(self.extra.get("parts"))

    def solid_boxes(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(centre, size, rotation) in world of each solid box of this object: a fixture's parts,
        else its own box. A SceneFormatError names the object and the part that is malformed."""
        if not self.has_parts:
            return [(self.center, self.size, self.rotation)]
        parts = self.extra["parts"]
        if not isinstance(parts, (list, tuple)):
            raise SceneFormatError(f"object {self.id!r}: 'parts' must be a list of boxes, got {parts!r}")
        return [self._part_box(part, k) for k, part in enumerate(parts)]

    def _part_box(self, part, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        where = f"object {self.id!r}: parts[{k}]"
        if not isinstance(part, dict):
            raise SceneFormatError(f"{where} must be an object with center, size and rotation, got {part!r}")
        size = _vec(part, "size", where)
        if np.any(size <= 0):
            raise SceneFormatError(f"{where}: 'size' must be positive, got {size.tolist()}")
        rotation = _vec(part, "rotation", where, 9).reshape(3, 3) if "rotation" in part else np.eye(3)
        return _vec(part, "center", where), size, rotation

    @classmethod
    def from_dict(cls, d: dict, index: int = 0) -> "SceneObject":
        where = f"objects[{index}]" + (f" ({d.get('id')!r})" if isinstance(d, dict) and "id" in d else "")
        if not isinstance(d, dict):
            raise SceneFormatError(f"{where} must be an object")
        rot = d.get("rotation", np.eye(3).tolist())
        try:
            R = np.asarray(rot, dtype=float).reshape(3, 3)
        except (TypeError, ValueError) as e:
            raise SceneFormatError(f"{where}: 'rotation' must be a 3x3 list, got {rot!r}") from e
        if not np.allclose(R.T @ R, np.eye(3), atol=1e-3) or np.linalg.det(R) < 0:
            raise SceneFormatError(f"{where}: 'rotation' is not a proper rotation matrix")
        size = _vec(d, "size", where)
        if np.any(size <= 0):
            raise SceneFormatError(f"{where}: 'size' must be positive, got {size.tolist()}")
        known = {"id", "label", "category", "center", "size", "rotation", "oriented", "size_class", "held"}
        obj = cls(
            id=str(_req(d, "id", where)),
            label=str(_req(d, "label", where)),
            category=str(_req(d, "category", where)),
            center=_vec(d, "center", where),
            size=size,
            rotation=R,
            oriented=bool(d.get("oriented", False)),
            size_class=d.get("size_class"),
            held=bool(d.get("held", False)),
            extra={k: v for k, v in d.items() if k not in known},
        )
        obj.solid_boxes()     # a malformed part is refused as the file is read, not when a planner first uses it
        return obj

    def to_dict(self) -> dict:
        d = {
            "id": self.id, "label": self.label, "category": self.category,
            "center": self.center.tolist(), "size": self.size.tolist(),
            "rotation": self.rotation.tolist(), "oriented": self.oriented,
        }
        if self.size_class is not None:
            d["size_class"] = self.size_class
        if self.held:
            d["held"] = True
        d.update(self.extra)
        return d


@dataclass
class Region:
    """A placement region, e.g. a shelf slot. Rows count from the top, columns from the viewer's left."""

    id: str
    kind: str
    center: np.ndarray
    size: np.ndarray
    row: int = 0
    col: int = 0
    occupancy: float = 0.0
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.center = np.asarray(self.center, dtype=float).reshape(3)
        self.size = np.asarray(self.size, dtype=float).reshape(3)
        self.rotation = np.asarray(self.rotation, dtype=float).reshape(3, 3)

    @classmethod
    def from_dict(cls, d: dict, index: int = 0) -> "Region":
        where = f"regions[{index}]" + (f" ({d.get('id')!r})" if isinstance(d, dict) and "id" in d else "")
        if not isinstance(d, dict):
            raise SceneFormatError(f"{where} must be an object")
        occ = float(d.get("occupancy", 0.0))
        if not (0.0 <= occ <= 1.0) or math.isnan(occ):
            raise SceneFormatError(f"{where}: 'occupancy' must be within 0..1, got {occ}")
        known = {"id", "kind", "row", "col", "center", "size", "occupancy", "rotation"}
        return cls(
            id=str(_req(d, "id", where)),
            kind=str(d.get("kind", "slot")),
            center=_vec(d, "center", where),
            size=_vec(d, "size", where),
            row=int(d.get("row", 0)),
            col=int(d.get("col", 0)),
            occupancy=occ,
            rotation=np.asarray(d.get("rotation", np.eye(3).tolist()), float).reshape(3, 3),
            extra={k: v for k, v in d.items() if k not in known},
        )

    def to_dict(self) -> dict:
        d = {"id": self.id, "kind": self.kind, "row": self.row, "col": self.col,
             "center": self.center.tolist(), "size": self.size.tolist(), "occupancy": self.occupancy}
        if not np.allclose(self.rotation, np.eye(3)):
            d["rotation"] = self.rotation.tolist()
        d.update(self.extra)
        return d


@dataclass
class Scene:
    viewer: Viewpoint
    robot: Viewpoint
    objects: list[SceneObject] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    # --- lookup -------------------------------------------------------------------------
    def get(self, obj_id: str) -> SceneObject | Region:
        for o in self.objects:
            if o.id == obj_id:
                return o
        for r in self.regions:
            if r.id == obj_id:
                return r
        raise KeyError(f"no object or region {obj_id!r} in the scene; ids: {self.ids()}")

    def ids(self) -> list[str]:
        return [o.id for o in self.objects] + [r.id for r in self.regions]

    def by_category(self, category: str) -> list[SceneObject]:
        return [o for o in self.objects if o.category == category]

    def held_object(self) -> SceneObject | None:
        return next((o for o in self.objects if o.held), None)

    def with_objects(self, objects: Iterable[SceneObject]) -> "Scene":
        return Scene(self.viewer, self.robot, list(objects), list(self.regions), dict(self.extra))

    # --- (de)serialisation ----------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Any) -> "Scene":
        if not isinstance(d, dict):
            raise SceneFormatError(f"a scene must be a JSON object, got {type(d).__name__}")
        objs = _req(d, "objects", "scene")
        if not isinstance(objs, list):
            raise SceneFormatError("scene: 'objects' must be a list")
        n = len(objs) + len(d.get("regions") or [])
        if n > MAX_SCENE_OBJECTS:
            raise SceneFormatError(f"scene: {n} objects and regions; more than {MAX_SCENE_OBJECTS} are refused "
                                   "(a cell has tens; is this a point cloud or a generated file?)")
        objects = [SceneObject.from_dict(o, i) for i, o in enumerate(objs)]
        regions = [Region.from_dict(r, i) for i, r in enumerate(d.get("regions") or [])]
        counts = Counter([o.id for o in objects] + [r.id for r in regions])
        dup = sorted(i for i, k in counts.items() if k > 1)
        if dup:
            raise SceneFormatError(f"scene: duplicate ids {dup}")
        known = {"viewer", "robot", "objects", "regions"}
        return cls(
            viewer=Viewpoint.from_dict(_req(d, "viewer", "scene"), "viewer"),
            robot=Viewpoint.from_dict(_req(d, "robot", "scene"), "robot"),
            objects=objects,
            regions=regions,
            extra={k: v for k, v in d.items() if k not in known},
        )

    def to_dict(self) -> dict:
        d = {"viewer": self.viewer.to_dict(), "robot": self.robot.to_dict(),
             "objects": [o.to_dict() for o in self.objects],
             "regions": [r.to_dict() for r in self.regions]}
        d.update(self.extra)
        return d

    @classmethod
    def load(cls, path: str | Path) -> "Scene":
        path = Path(path)
        if path.exists() and not path.is_file():
            raise SceneFormatError(f"scene file {path} is not a file (a directory?): give the path of a scene's JSON")
        if path.is_file() and path.stat().st_size > MAX_SCENE_FILE_BYTES:
            raise SceneFormatError(f"scene file {path} is {path.stat().st_size / 1e6:.0f} MB; files over "
                                   f"{MAX_SCENE_FILE_BYTES / 1e6:.0f} MB are refused (a cell's scene is kilobytes)")
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError as e:
            raise SceneFormatError(f"scene file {path} does not exist") from e
        except json.JSONDecodeError as e:
            raise SceneFormatError(f"scene file {path} is not valid JSON: {e}") from e
        except RecursionError as e:    # json recurses per nesting level
            raise SceneFormatError(f"scene file {path} is nested too deeply to be a scene "
                                   "(thousands of levels of brackets); give a scene JSON") from e
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1))


# Static furniture the robot's cell knows from its configuration (poses included); everything
# else is perceived.
# SUPPORT_CATEGORIES: the fixtures an object may be set down on or lean against.
SUPPORT_CATEGORIES = ("table", "shelf", "support")
FIXTURE_CATEGORIES = SUPPORT_CATEGORIES + ("floor",)


def workspace_description(scene: Scene, T_base_tcp: np.ndarray | None = None) -> Scene:
    """What a cell's configuration tells the planner, derived from a full scene: fixtures with
    their poses, placement regions, and a catalogue of the movable objects (label, category,
    size, colour, and for references whether they stand on the work surface or beyond it,
    `placement` "near" | "distant"; their poses zeroed, since those must be perceived). A held object keeps the
    transform from the object to the TCP (`extra["T_object_tcp"]`): the robot knows how it holds
    what it picked."""
    objects = []
    for o in scene.objects:
        if o.category in FIXTURE_CATEGORIES:
            objects.append(o)
            continue
        extra = {k: v for k, v in o.extra.items() if k in ("colour", "color", "rgb", "placement")}
        extra["catalogue"] = True
        if o.held and T_base_tcp is not None:
            T_obj = np.eye(4)
            T_obj[:3, :3], T_obj[:3, 3] = o.rotation, o.center
            extra["T_object_tcp"] = (np.linalg.inv(T_obj) @ np.asarray(T_base_tcp, float)).tolist()
        objects.append(SceneObject(o.id, o.label, o.category, np.zeros(3), o.size, np.eye(3), o.oriented,
                                   o.size_class, o.held, extra))
    return Scene(scene.viewer, scene.robot, objects, list(scene.regions),
                 {k: v for k, v in scene.extra.items() if k in ("kind", "ground_z")})
