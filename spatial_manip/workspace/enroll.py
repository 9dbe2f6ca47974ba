"""Enrolling an object into the cell's library, as a lab does it once per object: the workspace is
known (its workspace file), one object stands alone in view, a person gives its name, and the stack
measures the rest from the camera:

- its size: the oriented box of everything the classical segmenter finds that is no fixture (an
  object cut in two by colour, a plant's pot and foliage, is still the one object put down);
- its colour signature: the basic colour names of its own pixels (perception/attributes.py's
  `colour_names`, the one definition detections and the planner use), the main one first (a
  two-coloured object has two), and the main material's median RGB;
- its shape class: box, cylinder, sphere or irregular, from how its visible cloud fills its box;
- where it stands: on the work surface ("near") or beyond it ("distant", a plinth behind the table);
- for an object with a front, which way it faces: the person sets it down facing the camera (or
  says which way it faces, as the camera sees it), and the stack records its front signature
  (perception/front.py: the footprint side the front is on and its top's profile from back to
  front), from which perception measures which way it faces in a scene.

    entry = measure_object(obs, workspace, name="armento rider", has_front=True, facing="camera")
    library = Library.load(path); library.put(entry); library.save(path)

The library file is what the planner's catalogue reads (`spatial_manip/workspace/catalogue.py` turns it
into the workspace's catalogue): every object the cell may meet, most of them absent from a scene.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from spatial_manip.errors import SpatialManipError
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import colour_names, mean_rgb
from spatial_manip.perception.base import SegmentationHints, over_any
from spatial_manip.scene import Scene
from spatial_manip.perception.box import detection_from_mask
from spatial_manip.perception.classical import ClassicalSegmenter
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.front import front_signature
from spatial_manip.geometry import relations as rel

LIBRARY_FORMAT = "spatial_manip.library/1"
SHAPES = ("box", "cylinder", "sphere", "irregular")
PLACEMENTS = ("near", "distant")
FACINGS = ("camera", "away", "left", "right")    # which way an object with a front faces, as the camera sees it
MAX_OBJECT_SIDE_M = 1.2   # larger than this is furniture, not an object to enroll


class EnrollmentError(SpatialManipError):
    """The object could not be measured (nothing, or too little, in view)."""


@dataclass(frozen=True, kw_only=True)
class LibraryEntry:
    """One enrolled object. `size_m` is its measured box (x, y along its footprint, z up)."""

    id: str
    name: str
    category: str
    size_m: tuple
    rgb: tuple                   # median 0-255 RGB of its main colour's pixels
    colours: tuple               # basic colour names, most pixels first
    shape: str
    has_front: bool = False
    placement: str = "near"
    front: dict = field(default_factory=dict)    # its front signature (perception/front.py) when it has a front
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.name.strip():
            raise ValueError("an enrolled object needs a name (--name), got an empty one")
        size = np.asarray(self.size_m, float).reshape(-1)
        if size.shape != (3,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
            raise ValueError(f"{self.name!r}: size_m must be 3 positive metres, got {self.size_m!r}")
        if self.shape not in SHAPES:
            raise ValueError(f"{self.name!r}: shape must be one of {SHAPES}, got {self.shape!r}")
        if self.placement not in PLACEMENTS:
            raise ValueError(f"{self.name!r}: placement must be one of {PLACEMENTS}, got {self.placement!r}")
        object.__setattr__(self, "size_m", tuple(round(float(s), 4) for s in size))
        object.__setattr__(self, "rgb", tuple(round(float(c), 1) for c in self.rgb))
        object.__setattr__(self, "colours", tuple(self.colours))

    @classmethod
    def from_dict(cls, d: dict, where: str = "library") -> "LibraryEntry":
        try:
            return cls(**{k: d[k] for k in d if k in cls.__dataclass_fields__})
        except TypeError as e:
            raise ValueError(f"{where}: an entry needs id, name, category, size_m, rgb, colours and shape; "
                             f"got keys {sorted(d)}: {e}") from e


def entry_id(name: str) -> str:
    """A stable id from a name: 'Newton's cradle' -> 'newtons_cradle'."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower().replace("'", "")).strip("_") or "object"


class Library:
    """The enrolled objects, by id, as the JSON file the planner reads."""

    def __init__(self, entries=()):
        self.entries: dict[str, LibraryEntry] = {e.id: e for e in entries}

    @classmethod
    def load(cls, path: str | Path, *, missing_ok: bool = False) -> "Library":
        path = Path(path)
        if missing_ok and not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError as e:
            raise ValueError(f"library file {path} does not exist: enroll objects into it first "
                             "(spatial-manip enroll --library FILE ...)") from e
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} is not a library file (JSON): {e}") from e
        if not isinstance(data, dict) or data.get("format") != LIBRARY_FORMAT:
            raise ValueError(f"{path}: expected a JSON object with format {LIBRARY_FORMAT!r} "
                             "(written by spatial-manip enroll)")
        return cls(LibraryEntry.from_dict(d, str(path)) for d in data.get("objects", []))

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        objects = [asdict(e) for e in sorted(self.entries.values(), key=lambda e: e.id)]
        path.write_text(json.dumps({"format": LIBRARY_FORMAT, "objects": objects}, indent=1) + "\n")

    def put(self, entry: LibraryEntry) -> bool:
        """Add or replace (re-enroll) `entry`; True when it replaced one."""
        replaced = entry.id in self.entries
        self.entries[entry.id] = entry
        return replaced

    def remove(self, name_or_id: str) -> LibraryEntry:
        key = name_or_id if name_or_id in self.entries else entry_id(name_or_id)
        if key not in self.entries:
            raise ValueError(f"no object {name_or_id!r} in the library; it holds {sorted(self.entries) or 'nothing'}")
        return self.entries.pop(key)


@dataclass
class Measurement:
    """What enrolment measured, with the pixels and box for the overlay."""

    entry: LibraryEntry
    mask: np.ndarray
    box: object                  # Box3D in the base frame
    pieces: int                  # segments joined into the one object
    set_aside: int = 0           # other segments in view, not part of it


def measure_object(obs: RGBDObservation, workspace: Scene, *, name: str, category: str = "object",
                   has_front: bool = False, facing: str = "camera", object_id: str | None = None,
                   seed: int = 0) -> Measurement:
    """Measure the one object standing in `obs` beside the fixtures of `workspace`; `facing` says
    which way an object with a front was set down (FACINGS, as the camera sees it)."""
    if facing not in FACINGS:
        raise ValueError(f"facing must be one of {FACINGS} (which way the object's front points, as the camera "
                         f"sees it), got {facing!r}")
    hints = SegmentationHints.from_scene(workspace)
    # nothing expected: the object is unknown
    hints = SegmentationHints(fixtures=hints.fixtures, supports=hints.supports, work_areas=hints.work_areas)
    # the object may be as large as anything a lab enrolls (a floor lamp, a painting on its easel)
    segmenter = ClassicalSegmenter(seed=seed, catalogue_fit=False, max_object_extent_m=MAX_OBJECT_SIDE_M,
                                   max_object_height_m=MAX_OBJECT_SIDE_M)
    pieces = segmenter.segment(obs, hints=hints)
    if not pieces:
        raise EnrollmentError("nothing but the fixtures is in view: put the object down where the camera sees it "
                              "(and check the workspace file matches the cell)")
    pieces, others = _the_object(obs, pieces, hints.work_areas + hints.fixtures)
    mask = np.any([d.mask for d in pieces], axis=0)
    det = detection_from_mask(obs, mask, segmenter.last_planes, id="enrolled", label=name, category=category,
                              score=1.0, backend="enroll")
    if det is None:
        raise EnrollmentError(f"the {len(pieces)} segment(s) in view have too few depth points for a box: "
                              "move the object closer or into the camera's view")
    names, rgb = colour_signature(obs.rgb, [d.mask for d in pieces])
    pts = _cloud(obs, mask)
    placement = "near" if not hints.work_areas or over_any(det.box.center, hints.work_areas, 0.05) else "distant"
    entry = LibraryEntry(id=object_id or entry_id(name), name=name, category=category,
                         size_m=tuple(det.box.size), rgb=rgb, colours=names,
                         shape=shape_class(pts, det.box), has_front=has_front, placement=placement,
                         front=front_signature(obs, mask, det.box, facing_direction(obs, det.box.center, facing))
                         if has_front else {},
                         extra={"truncated": bool(det.truncated)})
    return Measurement(entry, mask, det.box, len(pieces), others)


def fused_views(views: list[Measurement]) -> Measurement:
    """One entry from several views of one object turned on the table between them (a lab turns
    it a little each way): its size is the per-side median of the views' boxes (longer and
    shorter footprint side, height), so one view that hides a side or cuts a part off does not
    set it; everything else (colours, shape, front) is the first view's, in which the person set
    it down as they said. Each view's size and colour are kept too (`extra["view_sizes"]`,
    `["view_rgbs"]`): a scene sees the object from one side, which one view may show best."""
    if not views:
        raise ValueError("fusing views needs at least one measurement")
    first = views[0]
    if len(views) == 1:
        return first
    sides = np.median([_footprint_then_height(v.entry.size_m) for v in views], axis=0)
    size = np.asarray(first.entry.size_m, float).copy()
    longer = int(size[1] > size[0])            # the first view's axis order is kept
    size[longer], size[1 - longer], size[2] = sides
    extra = {**first.entry.extra, "views": len(views),
             "view_sizes": [[round(float(s), 4) for s in v.entry.size_m] for v in views],
             "view_rgbs": [[round(float(c), 1) for c in v.entry.rgb] for v in views]}
    return replace(first, entry=replace(first.entry, size_m=tuple(size), extra=extra))


def _footprint_then_height(size_m) -> np.ndarray:
    s = np.asarray(size_m, float)
    return np.array([max(s[0], s[1]), min(s[0], s[1]), s[2]])


def facing_direction(obs: RGBDObservation, centre, facing: str) -> np.ndarray:
    """The horizontal direction (base frame) an object at `centre` faces when the person says it
    faces `facing` as the camera sees it: toward the camera, away, or to the camera's left/right."""
    T = np.asarray(obs.T_base_cam, float)
    to_camera = rel.horizontal(T[:3, 3] - np.asarray(centre, float))
    camera_right = np.cross(-to_camera, rel.UP)
    return {"camera": to_camera, "away": -to_camera, "right": camera_right, "left": -camera_right}[facing]


PIECE_GAP_M = 0.05    # how far past a surface's footprint a piece of what stands on it may reach


def _the_object(obs: RGBDObservation, pieces: list, surfaces) -> tuple[list, int]:
    """The segments over the surface the largest segment stands over (the cleared table, or a
    plinth): the one object put down there, however colour, a thin part (a lamp's pole) or a
    hidden part cut it; and how many other segments (a corner of the robot beside the table)
    were set aside. Without a surface under it, the largest segment alone."""
    def area(d):
        return int(np.count_nonzero(d.mask))
    over = [next((s for s in surfaces if over_any(d.box.center, (s,), PIECE_GAP_M)), None) for d in pieces]
    ranked = sorted(range(len(pieces)), key=lambda i: (over[i] is None, -area(pieces[i])))
    main = ranked[0]
    if over[main] is None:
        return [pieces[main]], len(pieces) - 1
    joined = [i for i in ranked if over[i] is over[main]]
    return [pieces[i] for i in joined], len(pieces) - len(joined)


def colour_signature(rgb: np.ndarray, masks: list[np.ndarray]) -> tuple[tuple, tuple]:
    """(the object's colour names: `colour_names` of all its pixels, as perception names a
    detection's, one or two, most first; the main material's median RGB, which catalogue matching
    compares with a detection's). Each mask is one colour-coherent piece (the segmenter splits
    clusters by colour); the main material is the largest piece, as the segmenter keeps the larger
    piece's colour when it joins two (classical.py)."""
    names = tuple(colour_names(rgb, np.any(masks, axis=0)))
    return names, mean_rgb(rgb, max(masks, key=np.count_nonzero))


def _cloud(obs: RGBDObservation, mask: np.ndarray) -> np.ndarray:
    return base_cloud(obs, mask)[0]


# Shape thresholds, on the visible cloud in the box's own frame, slice by slice in height.
BOX_TOP_FILL = 0.88         # a box's top fills the rectangle around it; a disc fills pi/4 = 0.785 of it
DISC_TOP_FILL = 0.7
SPHERE_BULGE = 1.25         # a sphere's middle is this much wider than its top and bottom slices
STEADY_WIDTH = 0.6          # a box or cylinder keeps its width: no slice narrower than this share
PROFILE_SLICES = 6
MIN_SLICE_POINTS = 10


def shape_class(pts: np.ndarray, box) -> str:
    """box / cylinder / sphere / irregular from the visible cloud: how its top slice fills the
    rectangle around it (a box's top fills it, a disc fills pi/4) and how its width changes with
    height (a box and a cylinder keep it, a sphere is widest in the middle)."""
    local = (pts - np.asarray(box.center, float)) @ np.asarray(box.rotation, float)
    size = np.asarray(box.size, float)
    edges = np.linspace(-size[2] / 2, size[2] / 2, PROFILE_SLICES + 1)
    slices = [local[(local[:, 2] >= lo) & (local[:, 2] <= hi), :2] for lo, hi in zip(edges[:-1], edges[1:])]
    slices = [s for s in slices if len(s) >= MIN_SLICE_POINTS]
    if not slices:
        return "irregular"
    spans = [np.percentile(s, 98, axis=0) - np.percentile(s, 2, axis=0) for s in slices]
    widths = np.array([float(np.linalg.norm(w)) for w in spans])
    if len(widths) >= 3 and np.max(widths[1:-1]) >= SPHERE_BULGE * max(widths[0], widths[-1]):
        return "sphere"
    if np.min(widths) < STEADY_WIDTH * np.max(widths):
        return "irregular"
    top_fill = _hull_area(slices[-1]) / max(float(np.prod(spans[-1])), 1e-9)
    return "box" if top_fill >= BOX_TOP_FILL else "cylinder" if top_fill >= DISC_TOP_FILL else "irregular"


def _hull_area(xy: np.ndarray) -> float:
    try:
        return float(ConvexHull(xy).volume)          # a 2-D hull's volume is its area
    except (QhullError, ValueError):
        return 0.0
