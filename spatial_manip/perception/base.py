"""The `Segmenter` protocol, its output (`Detection`), the hints a scene config can give it, and
the conversion of detections into the planner's `Scene`.

Every backend (simulator ground truth, classical, learned) turns one `RGBDObservation` into a
list of detections whose boxes are oriented 3D boxes in the robot `base` frame, computed from
depth — never copied from a simulator's poses, so that perception error is measurable.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from spatial_manip.errors import NoObservationError
from spatial_manip.geometry.boxes import Box3D
from spatial_manip.camera_model import pixel_rays, project, valid_depth_mask
from spatial_manip.geometry.pointcloud import range_tolerance_m
from spatial_manip.transforms import apply
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import book_size_class, book_size_tolerance_m, canonical_colour, colour_names
from spatial_manip.perception.front import orient_measured_fronts
from spatial_manip.scene import FIXTURE_CATEGORIES, Region, Scene, SceneObject, Viewpoint

# Furniture and scenery: never an object a segmenter reports, nor one it is told to expect.
FURNITURE_CATEGORIES = ("table", "shelf", "floor", "wall", "robot")
# Also never reported, but expected (so a cluster matching a book's pedestal is known and dropped).
UNREPORTED_CATEGORIES = FURNITURE_CATEGORIES + ("support",)


@dataclass
class Detection:
    """One object found in one observation."""

    id: str
    label: str
    category: str
    mask: np.ndarray              # (H, W) bool, in the observation's colour image
    score: float
    box: Box3D                    # in the base frame (spatial_manip.geometry.boxes)
    mean_rgb: tuple = (0.0, 0.0, 0.0)   # 0-255, over the mask
    colour: str = "unknown"       # a basic colour name (see attributes.colour_name)
    size_class: str | None = None  # "small" | "medium" | "large" for books (ESPIRE Table 20)
    extra: dict = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        """The box is a lower bound on the object's size: the mask touches the image's edge (the
        object may run out of view), or only the face towards the camera was seen, so its depth
        was not measured (`extra["depth_unseen"]`)."""
        return bool(self.extra.get("depth_unseen")) or touches_image_edge(self.mask)


def touches_image_edge(mask: np.ndarray, margin_px: int = 2) -> bool:
    return any(touched_edges(mask, margin_px))


def touched_edges(mask: np.ndarray, margin_px: int = 2) -> tuple[bool, bool, bool, bool]:
    """Whether the mask reaches the image's (left, right, top, bottom) edge."""
    m = np.asarray(mask, bool)
    k = margin_px
    return bool(m[:, :k].any()), bool(m[:, -k:].any()), bool(m[:k].any()), bool(m[-k:].any())


def hidden_edges(mask: np.ndarray, depth_m: np.ndarray, *, nearer_m: float = 0.04, look_px: int = 3,
                 share: float = 0.3) -> tuple[bool, bool, bool, bool]:
    """Whether the mask's (left, right, top, bottom) outline is hidden by something nearer the
    camera: on at least `share` of its rows (columns), a pixel within `look_px` beyond the
    outline is `nearer_m` nearer than the mask's own pixel there (a book in front of a statue,
    the arm, a shelf board's edge; the table just in front of a foot is barely nearer)."""
    m = np.asarray(mask, bool)
    d = np.asarray(depth_m, float)
    out = []
    for axis, reverse in ((1, False), (1, True), (0, False), (0, True)):
        mm, dd = (m, d) if axis == 1 else (m.T, d.T)
        if reverse:
            mm, dd = mm[:, ::-1], dd[:, ::-1]
        lines = np.flatnonzero(mm.any(axis=1))
        if lines.size == 0:
            out.append(False)
            continue
        first = mm[lines].argmax(axis=1)
        own = dd[lines, first]
        hidden = np.zeros(lines.size, bool)
        for k in range(1, look_px + 1):
            col = first - k
            ok = col >= 0
            before = np.where(ok, dd[lines, np.clip(col, 0, None)], np.nan)
            with np.errstate(invalid="ignore"):
                hidden |= ok & np.isfinite(before) & (before > 0) & (before < own - nearer_m)
        out.append(bool(hidden.mean() >= share))
    return tuple(out)


def foot_hidden(mask: np.ndarray, depth_m: np.ndarray, intrinsics, T_base_cam: np.ndarray, support, *,
                look_px: int = 5, rise_m: float = 0.01, behind_m: float = 0.01, share: float = 0.3) -> bool:
    """Whether something standing in front of the object hides its foot: in at least `share` of
    the mask's columns, a pixel within `look_px` below its lowest one is not behind it (by more
    than `behind_m`) and lies `rise_m` above the support it stands on (`support.height(points)`:
    a book holder's wall, another object). The support itself in front of a foot lies at its
    height and hides nothing. Both distances grow to 3 sigma of the sensor's range noise at the
    foot's range: at 1.6 m an L515's table in front of a foot reads up to 1.5 cm high, which a
    fixed centimetre took for a wall hiding the foot (every side of the object then a lower bound,
    and its name refused)."""
    m = np.asarray(mask, bool)
    cols = np.flatnonzero(m.any(axis=0))
    if cols.size == 0:
        return False
    foot_rows = m.shape[0] - 1 - np.argmax(m[::-1, cols], axis=0)
    rows = foot_rows[:, None] + np.arange(1, look_px + 1)[None]
    inside = rows < m.shape[0]
    rows = np.minimum(rows, m.shape[0] - 1)
    cc = np.broadcast_to(cols[:, None], rows.shape)
    d = np.asarray(depth_m, float)
    d_foot, d_below = d[foot_rows, cols], d[rows, cc]
    valid = valid_depth_mask(d_below)
    points = _base_points(rows, cc, np.where(valid, d_below, 0.0), intrinsics, T_base_cam)
    noise = range_tolerance_m(np.where(np.isfinite(d_foot), d_foot, 0.0))[:, None]
    with np.errstate(invalid="ignore"):
        raised = np.asarray(support.height(points), float).reshape(rows.shape) > np.maximum(rise_m, noise)
        hides = inside & valid & (d_below < d_foot[:, None] + np.maximum(behind_m, noise)) & raised
    return bool(np.mean(np.any(hides, axis=1)) >= share)


def _base_points(v: np.ndarray, u: np.ndarray, depth: np.ndarray, intrinsics, T_base_cam: np.ndarray) -> np.ndarray:
    """(N, 3) base-frame points at pixels (u, v) with these depths."""
    rx, ry = pixel_rays(u.ravel(), v.ravel(), intrinsics)
    return apply(T_base_cam, np.stack([rx, ry, np.ones_like(rx)], axis=1) * depth.reshape(-1, 1))


VIEW_AXIS_MIN_COS = 0.8     # a side within ~37 degrees of the line of sight: its far end is hidden
EDGE_AXIS_MIN_SHARE = 0.3   # a side whose image is this much across an edge the mask reaches
SLAB_THIN_SHARE = 0.5       # a box whose thinnest side is at most this share of its middle one is a slab
SQUARE_CUT_SHARE = 0.7      # a slab's thickness whose image is this much across a cut is cut by it
UPRIGHT_AXIS_MIN_COS = 0.9  # a box side within ~25 degrees of vertical is the object's height
ON_SUPPORT_M = 0.01         # a box whose bottom lies this close to its support stands on it


# A face seen head-on far away is smeared along the line of sight by the range noise, and a box
# fitted to it may turn any way: when the box's level sides reach along the line of sight no
# further than that smear (RANGE_SMEAR_SIGMAS of the noise past each end), no depth was measured
# there, and each level side within ~60 degrees of the line of sight may run on behind the face.
FACE_AXIS_MIN_COS = 0.5
LEVEL_AXIS_MAX_COS = 0.5    # a box side within ~60 degrees of horizontal is level


def along_line_of_sight(box: Box3D, camera_position) -> np.ndarray:
    """Per side of `box` (in its axis order): whether it runs within ~37 degrees of the camera's
    line of sight to the box's centre, so that one view sees only its near end; or, when the box
    shows no depth beyond the range noise's smear (FACE_AXIS_MIN_COS), whether it is a level side
    within ~60 degrees of it. Two standing books' spines in a shelf 2.7 m away, smeared 6 cm deep,
    were boxed 4.9 x 3.0 x 17.9 cm turned 40 degrees from the line of sight, neither level side
    along it: with their lengths taken as measured the books fit the white bottle 0.13 and a small
    book 0.43, and were named the bottle (place-99-00004)."""
    ray = np.asarray(box.center, float) - np.asarray(camera_position, float)
    range_m = max(float(np.linalg.norm(ray)), 1e-9)
    cosines = np.abs(np.asarray(box.rotation, float).T @ (ray / range_m))
    along = cosines >= VIEW_AXIS_MIN_COS
    level = np.abs(np.asarray(box.rotation, float)[2]) < LEVEL_AXIS_MAX_COS
    depth_seen_m = float(np.asarray(box.size, float)[level] @ cosines[level])
    if depth_seen_m <= 2 * range_tolerance_m(range_m, sigmas=RANGE_SMEAR_SIGMAS):
        along |= level & (cosines >= FACE_AXIS_MIN_COS)
    return along


# How many standard deviations of the sensor's range noise a side may measure longer than its object
# (range_smear_sides_m). An L515's points spread along their rays only, and a box's extent, trimmed at
# 0.4% per end, reaches past each end of a 6 cm side seen at 1.8 m (sigma 6.6 mm) by about 1.4 sigma.
RANGE_SMEAR_SIGMAS = 3.0


def range_smear_sides_m(box: Box3D, camera_position) -> list[float]:
    """Per side of `box` (in its axis order): how much longer than its object the side may measure
    from range noise alone: RANGE_SMEAR_SIGMAS of the sensor's noise at the box's range, times the
    side's cosine with the line of sight. Points spread along their rays, so a small object far
    away is measured long along the line of sight, and when the footprint's rectangle turns with
    that spread, along its diagonal: the demo's 6 cm rubik's cube at 1.8 m measured 7.7 x 4.1 cm,
    turned 45 degrees from its faces, which a 13.5 cm carton fits better (frames demo-1446-noise1446-frame1, -frame5)."""
    ray = np.asarray(box.center, float) - np.asarray(camera_position, float)
    range_m = max(float(np.linalg.norm(ray)), 1e-9)
    cosines = np.abs(np.asarray(box.rotation, float).T @ (ray / range_m))
    return [float(x) for x in range_tolerance_m(range_m, sigmas=RANGE_SMEAR_SIGMAS) * cosines]


def lower_bound_sides(box: Box3D, mask: np.ndarray, intrinsics, T_base_cam: np.ndarray,
                      depth_m: np.ndarray | None = None, support=None) -> list[bool]:
    """Per side of `box` (in its axis order): whether its measured length is only a lower bound.
    One view shows an object's near surface, so a side along the line of sight (a statue seen
    edge-on, a frame seen face-on, a book's length in a shelf) is measured short; and a side
    whose image runs towards an image edge the mask reaches, or (given `depth_m`) towards an
    outline something nearer hides, or (given also the `support` plane) towards a foot something in
    front of it hides (`foot_hidden`), may go on out of view. The others (a book's thickness
    when it runs out of view sideways) are measured in full."""
    T = np.asarray(T_base_cam, float)
    R, size = np.asarray(box.rotation, float), np.asarray(box.size, float)
    flags = along_line_of_sight(box, T[:3, 3])
    left, right, top, bottom = touched_edges(mask)
    foot = False
    if depth_m is not None:
        hidden = hidden_edges(mask, depth_m)
        left, right, top, bottom = left or hidden[0], right or hidden[1], top or hidden[2], bottom or hidden[3]
        if support is not None and not bottom:
            bottom = foot = foot_hidden(mask, depth_m, intrinsics, T, support)
    if left or right or top or bottom:
        d = _side_images(box, intrinsics, T)
        if d is None:
            return [True, True, True]
        n = np.maximum(np.linalg.norm(d, axis=1), 1e-9)
        across = (np.abs(d[:, 0]) / n >= EDGE_AXIS_MIN_SHARE) & (left or right)
        upward = (np.abs(d[:, 1]) / n >= EDGE_AXIS_MIN_SHARE) & (top or bottom)
        thin = _slab_thickness(size)
        if thin is not None:
            across[thin], upward[thin] = _cuts_thickness(d[thin] / n[thin], left or right, top or (bottom and not foot))
        if foot and not top and _stands_on(_side_ends(box), support):
            # The box reaches down to its support (object_box extends it there), so a foot
            # something in front hides cuts none of its height: the height is a lower bound only
            # by its top. A white mug behind a ceramic jar (10.0 x 8.4 x 10.8 cm) with its height
            # a lower bound fit a small book leaning at 20 degrees (17.4 cm high) about as well as
            # its own entry, and was left unnamed (objects-75-00012).
            upward &= np.abs(R[2]) < UPRIGHT_AXIS_MIN_COS
        flags |= across | upward
    return [bool(f) for f in flags]


def hidden_directions(box: Box3D, mask: np.ndarray, intrinsics, T_base_cam: np.ndarray) -> list[list[float]] | None:
    """The world directions in which an object cut by the image's edge may run on out of view:
    for each edge the mask reaches, each side of `box` whose image runs across that edge
    (EDGE_AXIS_MIN_SHARE), pointed out through it. The object is its box lengthened along one of
    them, so a book cut by the image's right edge can only be further right than its box says.
    None when a cut edge has no such side (or the box reaches behind the camera): the side the
    hidden part lies on is then unknown."""
    d = _side_images(box, intrinsics, T_base_cam)
    if d is None:
        return None
    share = d / np.maximum(np.linalg.norm(d, axis=1), 1e-9)[:, None]   # (3, 2): each side's image direction
    R = np.asarray(box.rotation, float)
    directions = []
    # (image axis, outward sign) of the left, right, top and bottom edges: image v grows downwards.
    for edge_cut, (image_axis, outward) in zip(touched_edges(mask), ((0, -1.0), (0, 1.0), (1, -1.0), (1, 1.0))):
        if not edge_cut:
            continue
        across = np.flatnonzero(np.abs(share[:, image_axis]) >= EDGE_AXIS_MIN_SHARE)
        if across.size == 0:
            return None
        directions += [[round(float(x), 4) for x in np.sign(outward * share[k, image_axis]) * R[:, k]] for k in across]
    return directions


def _side_ends(box: Box3D) -> np.ndarray:
    """(6, 3): the centres of `box`'s +k faces, then of its -k faces, in its axis order."""
    R, size, c = np.asarray(box.rotation, float), np.asarray(box.size, float), np.asarray(box.center, float)
    return np.concatenate([c[:, None] + R * size / 2, c[:, None] - R * size / 2], axis=1).T


def _side_images(box: Box3D, intrinsics, T_base_cam: np.ndarray) -> np.ndarray | None:
    """(3, 2): each side of `box` as the image sees it, from its -k face's pixel to its +k face's;
    None when the box reaches behind the camera."""
    T = np.asarray(T_base_cam, float)
    cam = (_side_ends(box) - T[:3, 3]) @ T[:3, :3]
    if np.any(cam[:, 2] <= 1e-3):
        return None
    uv, _ = project(cam, intrinsics)
    return uv[:3] - uv[3:]


def _slab_thickness(size: np.ndarray) -> int | None:
    """The axis of a slab's thickness (its thinnest side, at most SLAB_THIN_SHARE of the middle
    one: a book, a plate, a board), or None for a chunkier box."""
    order = np.argsort(size)
    return int(order[0]) if size[order[0]] <= SLAB_THIN_SHARE * size[order[1]] else None


def _cuts_thickness(direction: np.ndarray, side_cut: bool, top_cut: bool) -> tuple[bool, bool]:
    """(across, upward) for a slab's thickness, whose image runs along the unit `direction`: a cut
    takes part of a slab's faces, not of its thickness, which runs between the face it rests on
    (or leans on) and the face seen, wherever they are seen. Only a cut that crosses it squarely
    (SQUARE_CUT_SHARE) may: a statue cut to a thin strip by the image's left edge. A book lying on a
    pedestal, cut by the image's left edge to a 22 x 6 x 2.6 cm strip, had its thickness (its image
    30% across the edge, by perspective) taken for a lower bound, and the 13.7 x 10.8 x 20.8 cm
    pagoda statue fit it better than a book (pick-93-00012); a small book on its wedge, its foot
    hidden by the wedge's lip, the same (pick-92-00002). A hidden foot never crosses a thickness
    squarely: it hides the sides that run down to it."""
    return (bool(side_cut and abs(direction[0]) >= SQUARE_CUT_SHARE),
            bool(top_cut and abs(direction[1]) >= SQUARE_CUT_SHARE))


def _stands_on(corners: np.ndarray, support) -> bool:
    """Whether a box (its corners, or its ends' centres) reaches down to within ON_SUPPORT_M of
    `support` (`height(points)`): its bottom there."""
    return float(np.min(np.asarray(support.height(np.asarray(corners, float)), float))) <= ON_SUPPORT_M


PLACEMENTS = (None, "near", "distant")


@dataclass(frozen=True)
class ExpectedObject:
    """What a scene config says may be on the table: a label to give the object that matches.

    Any of size (metres, any order: matched sorted) and colour (a name or 0-255 RGB) can be
    missing; an `id` is kept as the detection's id when matched. `placement` says where it
    stands, when the config says so: "near" on the cell's work surface (the table, a shelf),
    "distant" beyond it (on the floor or a plinth), as ESPIRE's scenes place references.
    `views`: ((size_m, rgb), ...) of each view enrolment took of it turned all the way round
    (a library entry's `extra["views"]`): what it looks like from each side. `colours`: the
    colour names enrolment read of its pixels (a library entry's `colours`, most first): a white
    mug's median colour may have a hue its white does not (labelling._clearly_hued). `shape`:
    the shape enrolment recorded ("box", "cylinder", "sphere", "irregular"; a library entry's
    `extra["shape"]`), when known: what one view of it shows of its depth (labelling._flatter_than)."""

    label: str
    category: str = "object"
    size_m: tuple | None = None
    colour: str | tuple | None = None
    id: str | None = None
    placement: str | None = None
    views: tuple = ()
    colours: tuple = ()
    shape: str | None = None

    def __post_init__(self):
        if self.size_m is not None:
            s = np.asarray(self.size_m, float).reshape(-1)
            if s.shape != (3,) or not np.all(s > 0):
                raise ValueError(f"ExpectedObject {self.label!r}: size_m must be 3 positive metres, got {self.size_m!r}")
            object.__setattr__(self, "size_m", tuple(float(x) for x in s))
        if self.placement not in PLACEMENTS:
            raise ValueError(f"ExpectedObject {self.label!r}: placement must be one of {PLACEMENTS[1:]} or left out, "
                             f"got {self.placement!r}")
        if self.colour is not None and not isinstance(self.colour, str):
            c = np.asarray(self.colour, float).reshape(-1)
            if c.shape != (3,) or not np.all(np.isfinite(c)) or np.any((c < 0) | (c > 255)):
                raise ValueError(f"ExpectedObject {self.label!r}: colour must be a name or 3 values in 0..255 (RGB), "
                                 f"got {self.colour!r}")
        if isinstance(self.colours, str) or not all(isinstance(c, str) and canonical_colour(c) for c in self.colours):
            raise ValueError(f"ExpectedObject {self.label!r}: colours must be known colour names, got {self.colours!r}")
        object.__setattr__(self, "colours", tuple(self.colours))


@dataclass(frozen=True)
class FixturePart:
    """One box of a configured fixture (a pedestal, a book holder, a plinth, a shelf panel), in
    the base frame: the cell knows where its furniture stands, so depth inside it is never an
    object, and a level top wide enough to hold a book is a support surface."""

    center: np.ndarray
    size: np.ndarray
    rotation: np.ndarray


@dataclass(frozen=True)
class SegmentationHints:
    """What the scene config (or the simulator's exported scene) tells a segmenter.

    - `objects`: scene object id -> (label, category), used by the ground-truth backend to name
      the simulator's segments;
    - `expected`: the objects a classical or learned backend should try to recognise;
    - `supports`: configured horizontal surfaces, (z, (x_min, y_min), (x_max, y_max)) in the
      base frame: the floors of shelf slots, whose boards the camera sees edge-on, so a plane
      fit finds too few points on them, and the cell's floor (`ground_z`), of which a view of a
      shelf may show too little to fit;
    - `fixtures`: the boxes of the cell's configured fixtures (`FixturePart`);
    - `work_areas`: the boxes of its work surfaces (the table, a shelf), which say what an
      expected object's `placement` means;
    - `shelves`: the boxes of its shelves, whose levels hold books above all (labelling's
      SHELF_BOOK_MARGIN_FACTOR);
    - `instruction`: the words this look serves, which an open-vocabulary backend asks its
      detector for (`with_instruction`)."""

    objects: Mapping[str, tuple] = field(default_factory=dict)
    expected: tuple = ()
    supports: tuple = ()
    fixtures: tuple = ()
    work_areas: tuple = ()
    shelves: tuple = ()
    instruction: str = ""

    def with_instruction(self, instruction: str) -> "SegmentationHints":
        return replace(self, instruction=str(instruction or ""))

    @classmethod
    def from_scene(cls, scene: Scene, *, include_support: bool = False) -> "SegmentationHints":
        """Names and catalogue dimensions of the movable objects of a scene (e.g. a workspace
        description): their positions never leave the scene. Fixtures (supports, shelves) give
        their configured boxes; they and the furniture are not expected unless `include_support`."""
        objects = {o.id: (o.label, o.category) for o in scene.objects}
        expected = tuple(
            ExpectedObject(label=o.label, category=o.category, size_m=tuple(o.size),
                           colour=_scene_colour(o), id=o.id, placement=_placement(o), views=_views(o),
                           colours=tuple(o.extra.get("colours") or ()), shape=o.extra.get("shape"))
            # the held object is known from the grasp (the agent adds it), never a segment to
            # match: a floor lamp's sliver took the held book's entry and was lost (place-23-00009)
            for o in scene.objects if (include_support or o.category not in UNREPORTED_CATEGORIES) and not o.held)
        work_areas = tuple(_own_box(o) for o in scene.objects if o.category in WORK_SURFACE_CATEGORIES)
        shelves = tuple(_own_box(o) for o in scene.objects if o.category in SHELF_CATEGORIES)
        fixtures = tuple(FixturePart(*box) for o in scene.objects if o.category in FIXTURE_PART_CATEGORIES
                         for box in o.solid_boxes())
        supports = tuple(_slot_floor(r) for r in scene.regions if r.kind == "slot")
        if "ground_z" in scene.extra:     # the cell's floor: a view that shows little of it still has it
            g = float(scene.extra["ground_z"])
            supports += ((g, (-FLOOR_HALF_SIDE_M, -FLOOR_HALF_SIDE_M), (FLOOR_HALF_SIDE_M, FLOOR_HALF_SIDE_M)),)
        return cls(objects=objects, expected=expected, fixtures=fixtures, supports=supports, work_areas=work_areas,
                   shelves=shelves)


def _placement(o: SceneObject) -> str | None:
    """Where the config says `o` stands; a book the cell works with lies on its work surface
    (a book-shaped piece of a bust on the floor is not one of them: place-18-00003)."""
    placement = o.extra.get("placement")
    return "near" if placement is None and o.category == "book" else placement


# Fixtures whose configured boxes a segmenter removes from the depth.
FIXTURE_PART_CATEGORIES = ("table", "support", "shelf")
WORK_SURFACE_CATEGORIES = ("table", "shelf")   # where "near" objects stand
SHELF_CATEGORIES = ("shelf",)   # work surfaces that hold books above all (labelling.SHELF_BOOK_MARGIN_FACTOR)


def over_any(point, parts, margin_m: float = 0.0) -> bool:
    """Whether `point` (base frame) lies over the footprint of one of the FixtureParts (each
    grown by margin_m), whatever its height."""
    for part in parts:
        local = (np.asarray(point, float) - part.center) @ part.rotation
        if np.all(np.abs(local[:2]) <= np.asarray(part.size[:2]) / 2 + margin_m):
            return True
    return False


def _own_box(o: SceneObject) -> FixturePart:
    """The object's own box as a FixturePart (a shelf's footprint, not its panels)."""
    return FixturePart(np.asarray(o.center, float), np.asarray(o.size, float), np.asarray(o.rotation, float))


FLOOR_HALF_SIDE_M = 3.0   # the configured floor's extent about the base (a plinth 1.7 m away stands on it)
SLOT_WALL_M = 0.03   # a slot's floor counts as support this far from its back and side walls


def _slot_floor(r: Region) -> tuple:
    """The slot's floor, without a band along its back and side walls: the shelf's own panels
    stand there and must not become objects (the slot faces along its rotation's x axis)."""
    hx, hy, hz = r.size / 2
    local = np.array([[x, y, -hz] for x in (-hx + SLOT_WALL_M, hx) for y in (-hy + SLOT_WALL_M, hy - SLOT_WALL_M)])
    c = r.center + local @ r.rotation.T
    return float(c[0, 2]), tuple(c[:, :2].min(axis=0)), tuple(c[:, :2].max(axis=0))


def _views(o: SceneObject) -> tuple:
    """((size_m, rgb), ...) of each enrolled view a catalogue entry lists (`extra["views"]`)."""
    return tuple((tuple(float(x) for x in v["size_m"]), tuple(float(c) for c in v["rgb"]))
                 for v in o.extra.get("views") or ())


def _scene_colour(o: SceneObject):
    for key in ("colour", "color", "rgb"):
        if key in o.extra:
            v = o.extra[key]
            return v if isinstance(v, str) else tuple(v)
    return None


@runtime_checkable
class Segmenter(Protocol):
    def segment(self, obs: RGBDObservation, *, hints: SegmentationHints | None = None) -> list[Detection]:
        """Objects in `obs`, each with a mask and an oriented box in the base frame."""
        ...


def check_observation(obs: RGBDObservation, *, min_valid_fraction: float = 0.01) -> np.ndarray:
    """The valid-depth mask of `obs`; raise NoObservationError when depth is (nearly) empty."""
    if not isinstance(obs, RGBDObservation):
        raise NoObservationError(f"expected an RGBDObservation, got {type(obs).__name__}")
    valid = valid_depth_mask(obs.depth_m)
    frac = float(valid.mean()) if valid.size else 0.0
    if frac < min_valid_fraction:
        raise NoObservationError(
            f"the depth image has {frac:.1%} valid pixels (need at least {min_valid_fraction:.0%}): "
            "it is empty, all zero or NaN. Check the camera connection, the depth alignment and "
            "that the scene is within the sensor's range.")
    if not np.all(np.isfinite(obs.T_base_cam)):
        raise NoObservationError("the camera extrinsics T_base_cam are not finite: calibrate the camera "
                                 "or wait for /camera/extrinsics")
    return valid


def camera_viewpoint(T_base_cam: np.ndarray) -> Viewpoint:
    """The viewer of a scene: the camera's position and optical axis in the base frame."""
    T = np.asarray(T_base_cam, float).reshape(4, 4)
    return Viewpoint(T[:3, 3], T[:3, 2])


def detections_to_scene(detections: Iterable[Detection], obs: RGBDObservation, *,
                        viewer: Viewpoint | None = None, robot: Viewpoint | None = None,
                        regions: Sequence[Region] = (), extra_objects: Sequence[SceneObject] = (),
                        fronts: Iterable[str] = ()) -> Scene:
    """The planner's scene from detections: the viewer is the camera (from T_base_cam) and the
    robot sits at the base origin facing +x unless given. `extra_objects` (e.g. the table from a
    scene config) are appended unchanged. `fronts`: ids the scene config says have a front;
    depth does not show which side it is, so those objects stay unoriented and carry
    `extra["has_front"]` for the planner to ground (an orientation model) or assume."""
    fronts = set(fronts)
    camera_m = np.asarray(obs.T_base_cam, float)[:3, 3]
    viewer = viewer or camera_viewpoint(obs.T_base_cam)
    robot = robot or Viewpoint([0.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    objects = []
    for d in detections:
        objects.append(SceneObject(
            id=d.id, label=d.label, category=d.category, center=d.box.center, size=d.box.size,
            rotation=d.box.rotation, oriented=False,
            size_class=perceived_book_class(d, camera_m) if d.category == "book" else d.size_class,
            extra={"score": float(d.score), "colour": d.colour, "colour_names": colour_names(obs.rgb, d.mask),
                   "rgb": [round(float(c), 1) for c in d.mean_rgb],
                   "mask_area_px": int(np.count_nonzero(d.mask)), "truncated": d.truncated,
                   **_hidden_towards(d, obs),
                   **({"has_front": True} if d.id in fronts else {}),
                   **({"candidates": [{**c, "has_front": c["id"] in fronts} for c in d.extra["candidates"]]}
                      if d.extra.get("candidates") else {}),
                   **({"sure_names": [{**c, "has_front": c["id"] in fronts} for c in d.extra["sure_names"]]}
                      if d.extra.get("sure_names") else {}),
                   **({"gate_fits": dict(d.extra["gate_fits"])} if d.extra.get("gate_fits") else {})}))
    ids = [o.id for o in objects] + [o.id for o in extra_objects]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"detections and extra objects share ids {dup}: give each object a unique id")
    return Scene(viewer, robot, objects + list(extra_objects), list(regions),
                 {"stamp_s": float(obs.stamp_s)})


def _hidden_towards(d: Detection, obs: RGBDObservation) -> dict:
    """`extra["hidden_towards"]` of an object seen in part only because the image's edge cut it:
    the directions its hidden part may lie in (`hidden_directions`). Left out when its depth was
    unseen too, or the directions are unknown: the planner then lets the hidden part lie either way."""
    if not touches_image_edge(d.mask) or d.extra.get("depth_unseen"):
        return {}
    towards = hidden_directions(d.box, d.mask, obs.intrinsics, obs.T_base_cam)
    return {} if towards is None else {"hidden_towards": towards}


def perceived_book_class(d: Detection, camera_m: np.ndarray) -> str | None:
    """ESPIRE's size class of a detected book (relations.book_size_class) within the sensor's
    error at its range (attributes.book_size_tolerance_m): a fixed 6 mm on the thickness left
    12 of 63 flat books on seeds 51-53 unclassed, their tops read 6-11 mm high at 1.2-1.5 m. A
    book seen only in part (`truncated`) is classed by what was measured, as a lower bound: a
    catalogue box posed on it (catalogue_fit) has the size of the entry its name came from, which
    the part seen does not tell from the other classes (pick-51-00012: a large book's corner
    named the small one)."""
    measured = d.extra.get("measured_box")
    size = measured["size"] if d.truncated and measured else d.box.size
    tol = book_size_tolerance_m(float(np.linalg.norm(np.asarray(d.box.center, float) - camera_m)))
    return book_size_class(size, tolerance_m=tol, at_least=d.truncated)


def perceive_with_workspace(segmenter: "Segmenter", obs: RGBDObservation, workspace: Scene | None = None,
                            hints: SegmentationHints | None = None) -> Scene:
    """The scene of one look as the planner builds it, on the robot and offline alike (the agent,
    `spatial-manip evaluate`, the ESPIRE stack driver): the workspace's catalogue names and sizes
    the objects (segmenter hints; `hints` if already made from it), its fixtures and regions are
    taken as configured, a segment of a fixture is not a new object, and its oriented objects
    have a front, measured from its shape where the library enrolled a front signature
    (perception/front.py). Without a workspace the segmenter names what it finds and keeps fixtures as
    objects. `hints` may carry the instruction (`SegmentationHints.with_instruction`)."""
    if workspace is None:
        return detections_to_scene(segmenter.segment(obs, hints=hints), obs)
    fixtures = [o for o in workspace.objects if o.category in FIXTURE_CATEGORIES]
    fixture_ids = {o.id for o in fixtures}
    hints = hints if hints is not None else SegmentationHints.from_scene(workspace)
    detections = [d for d in segmenter.segment(obs, hints=hints) if d.id not in fixture_ids]
    scene = detections_to_scene(detections, obs, regions=workspace.regions, extra_objects=fixtures,
                                fronts=[o.id for o in workspace.objects if o.oriented])
    signatures = {o.id: o.extra["front_signature"] for o in workspace.objects if o.extra.get("front_signature")}
    return orient_measured_fronts(scene, detections, obs, signatures) if signatures else scene
