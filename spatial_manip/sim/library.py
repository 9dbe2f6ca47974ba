"""The simulated lab's object library, and the catalogue a simulated cell gives its planner.

A lab enrolls every object it may meet once (`spatial-manip enroll`), with the camera its cell has;
the simulator does the same for every asset the task generator can place: each alone on the
generator's table (distant ones on a plinth behind it, where the generator stands them), seen from
where the benchmark stands its camera (ENROLL_CAMERA), turned a little each way between three views
(ENROLL_TURNS_DEG) whose sizes are fused, rendered with the L515's depth noise and measured by the
enrollment procedure, so the library carries that procedure's error from that camera
(config/library/sim_assets.json, written by `spatial-manip enroll --sim all`).

    catalogue_workspace(full_scene, T_base_tcp, catalogue="library", library=Library.load(path))

gives what sim_node publishes: the episode's fixtures and regions, the object it holds, and the
library's objects (most of them absent, none with a pose). `catalogue="episode"` is the old
diagnostic: exactly this episode's objects with their true sizes and placements.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from spatial_manip.paths import resolve_config, resolve_user_file
from spatial_manip.scene import FIXTURE_CATEGORIES, Scene, SceneObject, Viewpoint, workspace_description
from spatial_manip.sim import assets as A
from spatial_manip.sim.capture_cell import TABLE_FRONT_X, TABLE_SIZE, _rz, fixtures_only, render_cell
from spatial_manip.sim.layouts import _support
from spatial_manip.sim.object_scenes import TABLE_GAP_M, everyday_object
from spatial_manip.sim.object_sets import EVERYDAY_MODELS, model_for
from spatial_manip.workspace.catalogue import with_library
from spatial_manip.workspace.enroll import EnrollmentError, Library, fused_views, measure_object

CATALOGUES = ("library", "episode")
DEFAULT_LIBRARY = "library/sim_assets.json"       # under config/ (paths.resolve_config)

# The cell's own camera, where the benchmark stands it (layouts.sample_tabletop: 0.6-0.95 m behind the
# robot, 0.15-0.55 m to its side, 0.5-1 m above the table): the middle of that range. A lab enrolls
# with the camera its cell has; a camera high above (the workspace capture's) saw a bowl's far rim
# only and a jar's bright top, sizes and colours no scene camera meets.
ENROLL_CAMERA = np.array([-0.78, 0.35, 0.75])
# The workspace capture's camera, high behind the robot: the objects suite's colour words are named
# from it (object_sets.seen_colours), and an object with a front has its front signature taken from
# it: from the cell's camera such an object, set down facing it, is seen end on, its front face
# most of its pixels, and the front's colour no longer stands out from the object's own (the
# armento rider's front reads 0.81 of its median against 0.45 from above, under front.py's 0.25).
OVERHEAD_CAMERA = np.array([-0.35, 0.25, 1.45])
# A lab turns the object on the table between views; its front stays toward the camera's half,
# as the benchmark stands an object with a front. The first view is the one as set down.
ENROLL_TURNS_DEG = (0.0, -30.0, 30.0)
# An everyday object (object:MODEL, the objects suite's) stands any way round in a scene and
# looks different from each side, so it is turned all the way round: each side shows what the
# others hide. A mug's handle turned away in all three views above left the red mug enrolled
# 9.1 cm long without it (12.6 cm with it), and a scene seeing the handle was refused the name
# (objects-77-00007); the bbq sauce bottle's back reads olive (50/58/2) where its front reads
# brown (54/30/1), and seen from behind it was refused too (objects-78-00000). Each view's size
# and colour stay in the entry (workspace/enroll.fused_views), and a detection is matched with
# them besides the fused size and the first view's colour (labelling.match_cost). A reference on
# the table without a front stands any way round too, and is enrolled the same way: the demo's
# rubik's cube, enrolled from its lit side only, lost its name to the yellow milk carton, whose
# dim end fit its shaded side, when only the carton was enrolled all the way round. References
# with a front (the benchmark stands them facing the camera's half), distant ones and books keep
# the three turns.
AROUND_TURNS_DEG = ENROLL_TURNS_DEG + (90.0, 180.0, 270.0)


def enroll_turns(key: str) -> tuple:
    """The turns (degrees, the first as set down) the asset `key` is enrolled at: all the way
    round for an everyday object and a near reference without a front."""
    spec = A.ASSETS.get(key)
    around = key.startswith(OBJECT_PREFIX) or (spec is not None and spec.kind == "near" and not spec.oriented)
    return AROUND_TURNS_DEG if around else ENROLL_TURNS_DEG


NEAR_SPOT = (0.50, -0.05)                         # the middle of the table, in the arm's reach
PLINTH_TOP_Z = -0.05                              # layouts.sample_tabletop's plinths
PLINTH_AREA_DEPTH_M = 0.35


def book_key(size_class: str, colour: str) -> str:
    return f"book:{size_class}:{colour}"


OBJECT_PREFIX = "object:"


def object_key(model: str) -> str:
    return f"{OBJECT_PREFIX}{model}"


def enrollable_keys() -> list[str]:
    """Every object the generator can place: near and distant references, a book of each size
    class in each colour it draws, and the objects suite's everyday objects (object:MODEL)."""
    books = [book_key(s, c) for s in A.BOOK_SIZES for c in A.BOOK_COLORS]
    return list(A.NEAR_KEYS) + list(A.DISTANT_KEYS) + books + [object_key(m) for m in EVERYDAY_MODELS]


def enrollment_scene(key: str, turn: float = 0.0, camera=ENROLL_CAMERA) -> tuple[Scene, SceneObject, dict]:
    """(the cell with the one object `key` placed alone, turned `turn` radians about the vertical
    from how it is first set down, that object's true SceneObject, what the enrolling person says:
    name, category, has_front, id)."""
    tl, tw, th = TABLE_SIZE
    plinths = []
    if key.startswith("book:"):
        obj, said = _book(key)
    elif key.startswith(OBJECT_PREFIX):
        obj, said = _everyday(key[len(OBJECT_PREFIX):])
    elif key in A.ASSETS and A.ASSETS[key].kind in ("near", "distant"):
        spec = A.ASSETS[key]
        # set down facing the camera (sim/capture_cell's pi turn puts its front toward the enrolling camera)
        said = {"name": spec.label, "category": "reference", "has_front": spec.oriented, "id": key, "facing": "camera"}
        if spec.kind == "near":
            centre = [NEAR_SPOT[0], NEAR_SPOT[1], spec.size_m[2] / 2]
            obj = SceneObject(key, spec.label, "reference", centre, spec.size_m, _rz(math.pi), oriented=spec.oriented,
                              extra={"asset": key})
        else:
            obj, plinth = _on_plinth(spec, TABLE_FRONT_X + tl, th, turn)
            plinths.append(plinth)
    else:
        raise ValueError(f"--sim wants an asset the generator places ({', '.join(A.NEAR_KEYS + A.DISTANT_KEYS)}), "
                         f"book:SIZE:COLOUR (sizes {', '.join(A.BOOK_SIZES)}; colours {', '.join(A.BOOK_COLORS)}), "
                         f"object:MODEL (an everyday object, e.g. object:red_coffee_mug) or all; got {key!r}")
    obj.rotation = _rz(turn) @ obj.rotation          # a plinth is built turned (its object stands on it)
    scene, _ = _cell_with(obj, plinths, camera)
    return scene, obj, said


def _cell_with(obj: SceneObject, extra_objects: list, camera: np.ndarray = ENROLL_CAMERA) -> tuple[Scene, SceneObject]:
    """The enrollment cell: the table, `extra_objects` (a plinth), `obj`, a camera at `camera` looking at it."""
    tl, tw, th = TABLE_SIZE
    table = SceneObject("table", "table", "table", [TABLE_FRONT_X + tl / 2, 0.0, -th / 2], TABLE_SIZE, _rz(math.pi),
                        oriented=True, extra={"asset": "table"})
    viewer = Viewpoint(camera, np.asarray(obj.center, float) - camera)
    scene = Scene(viewer=viewer, robot=Viewpoint([0, 0, 0], [1, 0, 0]), objects=[table] + extra_objects + [obj],
                  extra={"kind": "tabletop", "ground_z": -th})
    return scene, obj


def _book(key: str) -> tuple[SceneObject, dict]:
    try:
        _, size_class, colour = key.split(":")
        (l0, l1), (w0, w1), (h0, h1) = A.BOOK_SIZES[size_class]
        A.BOOK_COLORS[colour]
    except (ValueError, KeyError) as e:
        raise ValueError(f"a book is book:SIZE:COLOUR with SIZE one of {', '.join(A.BOOK_SIZES)} and COLOUR one of "
                         f"{', '.join(A.BOOK_COLORS)}, got {key!r}") from e
    size = np.array([(w0 + w1) / 2, (h0 + h1) / 2, (l0 + l1) / 2])       # [W, H, L], the middle of the class
    flat = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # lying on its cover, long edge along x
    obj = SceneObject(f"book_{colour}_{size_class}", "book", "book", [NEAR_SPOT[0], NEAR_SPOT[1], size[1] / 2], size,
                      flat, size_class=size_class, extra={"color": colour, "pose": "flat"})
    return obj, {"name": "book", "category": "book", "has_front": False, "id": obj.id}


def _everyday(model_name: str) -> tuple[SceneObject, dict]:
    """An everyday object standing on the table as the objects suite stands it: named by its
    category ("mug"), which is what people call it; two mugs are two entries of one name, told
    apart by colour and size."""
    m = model_for(model_name)
    return _everyday_object(m), {"name": m.label, "category": m.category, "has_front": False, "id": model_name}


def _everyday_object(m) -> SceneObject:
    centre = [NEAR_SPOT[0], NEAR_SPOT[1], m.size_m[2] / 2 - m.rest_offset_m + TABLE_GAP_M]
    return everyday_object(m.name, m, centre, np.eye(3))


def everyday_enrollment_scene(model) -> tuple[Scene, SceneObject]:
    """An everyday object model (object_sets.ObjectModel) alone on the enrollment cell's table, seen
    from above (OVERHEAD_CAMERA): the view the objects suite's colour words were named from."""
    return _cell_with(_everyday_object(model), [], OVERHEAD_CAMERA)


def _on_plinth(spec: A.AssetSpec, table_back_x: float, table_h: float, turn: float) -> tuple[SceneObject, SceneObject]:
    """The asset on a plinth in the middle of the area the generator stands distant ones in; the
    plinth turned with it by `turn` (the object returned unturned: enrollment_scene turns it)."""
    r = 0.5 * math.hypot(spec.size_m[0], spec.size_m[1])
    x = table_back_x + 0.10 + r + PLINTH_AREA_DEPTH_M / 2
    R = _rz(math.pi)
    obj = SceneObject(spec.key, spec.label, "reference", [x, 0.0, PLINTH_TOP_Z + spec.size_m[2] / 2], spec.size_m, R,
                      oriented=spec.oriented, extra={"asset": spec.key})
    size = np.array([spec.size_m[0] * 0.9, spec.size_m[1] * 0.9, PLINTH_TOP_Z + table_h])
    plinth = _support("plinth_1", "plinth", [(np.array([x, 0.0, (PLINTH_TOP_Z - table_h) / 2]), size, _rz(turn) @ R)])
    return obj, plinth


def true_extents(obj: SceneObject) -> np.ndarray:
    """(longer, shorter footprint side, height) of a true object, as enrollment measures it."""
    world = np.abs(np.asarray(obj.rotation, float)) @ np.asarray(obj.size, float)
    return np.array([*sorted(world[:2], reverse=True), world[2]])


def measured_extents(size_m) -> np.ndarray:
    s = np.asarray(size_m, float)
    return np.array([*sorted(s[:2], reverse=True), s[2]])


def enroll_sim(key: str, *, seed: int = 0, depth_noise: bool = True, turns_deg=None):
    """Place `key` alone in MuJoCo, render and measure it at each turn of `turns_deg` (default
    `enroll_turns`) and fuse the views (workspace/enroll.fused_views):
    (Measurement, the first view's observation, the true object as first set down). A later view
    that finds nothing is left out; the first must."""
    views, half, first = [], [], None
    if turns_deg is None:
        turns_deg = enroll_turns(key)
    for k, turn in enumerate(turns_deg):
        m, obs, obj = _measured_view(key, math.radians(turn), ENROLL_CAMERA, depth_noise, seed + k, required=k == 0)
        views += [m] if m is not None else []
        half += [m] if m is not None and turn in ENROLL_TURNS_DEG else []
        first = first or (obs, obj)
    fused = fused_views(views)
    if half and len(half) < len(views):
        # the size stays the median of the views within the camera's half, as before: the views
        # from beyond are matched each as it is (labelling.match_cost), and their median is short
        # (seen end on, a carton's far end is hidden: 12.8 cm over all six views, 13.5 over those
        # three, 14.3 true), which the catalogue box posed for a named object would take
        fused = replace(fused, entry=replace(fused.entry, size_m=fused_views(half).entry.size_m))
    if fused.entry.has_front:
        overhead, _, _ = _measured_view(key, 0.0, OVERHEAD_CAMERA, depth_noise, seed, required=False)
        if overhead is not None:
            fused = replace(fused, entry=replace(fused.entry, front=overhead.entry.front))
    return fused, *first


def _measured_view(key: str, turn: float, camera, depth_noise: bool, seed: int, *, required: bool):
    """(Measurement, observation, true object) of one view; the Measurement None when the view
    finds nothing and is not `required` (else the EnrollmentError says why)."""
    scene, obj, said = enrollment_scene(key, turn, camera)
    obs = render_cell(scene, depth_noise=depth_noise, seed=seed)
    try:
        m = measure_object(obs, fixtures_only(scene), name=said["name"], category=said["category"],
                           has_front=said["has_front"], facing=said.get("facing", "camera"), object_id=said["id"],
                           seed=seed)
    except EnrollmentError:
        if required:
            raise
        m = None
    return m, obs, obj


# --- the catalogue a simulated cell publishes -------------------------------------------------------
def catalogue_workspace(scene: Scene, T_base_tcp=None, *, catalogue: str = "library", library=None) -> Scene:
    """What the planner is told about the cell. "library": the scene's fixtures and regions, the held
    object (the robot knows what it picked and how it holds it), and every enrolled object of
    `library` as a pose-free catalogue entry; nothing of this episode's other objects. "episode":
    `scene.workspace_description` (this episode's objects, true sizes and placements: a diagnostic)."""
    if catalogue not in CATALOGUES:
        raise ValueError(f"catalogue must be one of {CATALOGUES}, got {catalogue!r}")
    described = workspace_description(scene, T_base_tcp)
    described.extra["catalogue"] = catalogue
    if catalogue == "episode":
        return described
    if library is None:
        raise ValueError("catalogue 'library' needs the enrolled library (config/library/sim_assets.json, written by "
                         "spatial-manip enroll --sim all)")
    kept = [o for o in described.objects if o.category in FIXTURE_CATEGORIES or o.held]
    return with_library(described.with_objects(kept), library)


def library_for(catalogue: str, path: str | Path | None = None):
    """The library a `catalogue` needs: the enrolled one (`path`, else the shipped simulated
    assets' library) for "library", None for "episode"."""
    if catalogue not in CATALOGUES:
        raise ValueError(f"catalogue must be one of {CATALOGUES}, got {catalogue!r}")
    return load_default_library(path) if catalogue == "library" else None


def load_default_library(path: str | Path | None = None):
    """The library at `path` (relative: from the working directory, else under config/, as
    planner_node's library_file), else the simulated assets' library."""
    return Library.load(resolve_user_file(path) if path else resolve_config(DEFAULT_LIBRARY))
