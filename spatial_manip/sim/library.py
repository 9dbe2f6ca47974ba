"""The simulated lab's object library, and the catalogue a simulated cell gives its planner.

A lab enrolls every object it may meet once (`spatial-manip enroll`); the simulator does the same
for every asset the task generator can place: each alone on the generator's table (distant ones on
a plinth behind it, where the generator stands them), rendered with the L515's depth noise and
measured by the enrollment procedure, so the library carries that procedure's error
(config/library/sim_assets.json, written by `spatial-manip enroll --sim all`).

    catalogue_workspace(full_scene, T_base_tcp, catalogue="library", library=Library.load(path))

gives what sim_node publishes: the episode's fixtures and regions, the object it holds, and the
library's objects (most of them absent, none with a pose). `catalogue="episode"` is the old
diagnostic: exactly this episode's objects with their true sizes and placements.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from spatial_manip.paths import resolve_config
from spatial_manip.perception.attributes import book_size_class
from spatial_manip.scene import FIXTURE_CATEGORIES, Scene, SceneObject, Viewpoint, workspace_description
from spatial_manip.sim import assets as A
from spatial_manip.sim.capture_cell import TABLE_FRONT_X, TABLE_SIZE, _rz, fixtures_only, render_cell
from spatial_manip.sim.layouts import _support
from spatial_manip.sim.object_scenes import TABLE_GAP_M, everyday_object
from spatial_manip.sim.object_sets import EVERYDAY_MODELS, model_for
from spatial_manip.workspace.enroll import Library, measure_object

CATALOGUES = ("library", "episode")
DEFAULT_LIBRARY = "library/sim_assets.json"       # under config/ (paths.resolve_config)

ENROLL_CAMERA = np.array([-0.35, 0.25, 1.45])    # high behind the robot, as the workspace capture stands it
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


def enrollment_scene(key: str) -> tuple[Scene, SceneObject, dict]:
    """(the cell with the one object `key` placed alone, that object's true SceneObject, what the
    enrolling person says: name, category, has_front, id)."""
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
            obj, plinth = _on_plinth(spec, TABLE_FRONT_X + tl, th)
            plinths.append(plinth)
    else:
        raise ValueError(f"--sim wants an asset the generator places ({', '.join(A.NEAR_KEYS + A.DISTANT_KEYS)}), "
                         f"book:SIZE:COLOUR (sizes {', '.join(A.BOOK_SIZES)}; colours {', '.join(A.BOOK_COLORS)}), "
                         f"object:MODEL (an everyday object, e.g. object:red_coffee_mug) or all; got {key!r}")
    scene, _ = _cell_with(obj, plinths)
    return scene, obj, said


def _cell_with(obj: SceneObject, extra_objects: list) -> tuple[Scene, SceneObject]:
    """The enrollment cell: the table, `extra_objects` (a plinth), `obj`, the enrolling camera."""
    tl, tw, th = TABLE_SIZE
    table = SceneObject("table", "table", "table", [TABLE_FRONT_X + tl / 2, 0.0, -th / 2], TABLE_SIZE, _rz(math.pi),
                        oriented=True, extra={"asset": "table"})
    viewer = Viewpoint(ENROLL_CAMERA, np.asarray(obj.center, float) - ENROLL_CAMERA)
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
    """The enrollment cell with an everyday object model (object_sets.ObjectModel) alone on the table."""
    return _cell_with(_everyday_object(model), [])


def _on_plinth(spec: A.AssetSpec, table_back_x: float, table_h: float) -> tuple[SceneObject, SceneObject]:
    """The asset on a plinth in the middle of the area the generator stands distant ones in."""
    r = 0.5 * math.hypot(spec.size_m[0], spec.size_m[1])
    x = table_back_x + 0.10 + r + PLINTH_AREA_DEPTH_M / 2
    R = _rz(math.pi)
    obj = SceneObject(spec.key, spec.label, "reference", [x, 0.0, PLINTH_TOP_Z + spec.size_m[2] / 2], spec.size_m, R,
                      oriented=spec.oriented, extra={"asset": spec.key})
    size = np.array([spec.size_m[0] * 0.9, spec.size_m[1] * 0.9, PLINTH_TOP_Z + table_h])
    plinth = _support("plinth_1", "plinth", [(np.array([x, 0.0, (PLINTH_TOP_Z - table_h) / 2]), size, R)])
    return obj, plinth


def true_extents(obj: SceneObject) -> np.ndarray:
    """(longer, shorter footprint side, height) of a true object, as enrollment measures it."""
    world = np.abs(np.asarray(obj.rotation, float)) @ np.asarray(obj.size, float)
    return np.array([*sorted(world[:2], reverse=True), world[2]])


def measured_extents(size_m) -> np.ndarray:
    s = np.asarray(size_m, float)
    return np.array([*sorted(s[:2], reverse=True), s[2]])


def enroll_sim(key: str, *, seed: int = 0, depth_noise: bool = True):
    """Place `key` alone in MuJoCo, render, measure: (Measurement, observation, true object)."""
    scene, obj, said = enrollment_scene(key)
    obs = render_cell(scene, depth_noise=depth_noise, seed=seed)
    m = measure_object(obs, fixtures_only(scene), name=said["name"], category=said["category"],
                       has_front=said["has_front"], facing=said.get("facing", "camera"), object_id=said["id"], seed=seed)
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
    taken = {o.id for o in kept}
    entries = [library_object(e) for e in library.entries.values() if e.id not in taken]
    return described.with_objects(kept + entries)


def library_object(entry) -> SceneObject:
    """A library entry as a catalogue SceneObject (no pose: it must be perceived)."""
    extra = {"catalogue": True, "rgb": list(entry.rgb), "placement": entry.placement, "colours": list(entry.colours),
             "shape": entry.shape, **({"front_signature": entry.front} if entry.has_front and entry.front else {})}
    size_class = None
    if entry.category == "book":
        size_class = book_size_class(entry.size_m)
    # `oriented` says the object has a front (the agent's `fronts`), as in the episode's catalogue
    return SceneObject(entry.id, entry.name, entry.category, np.zeros(3), entry.size_m, np.eye(3), entry.has_front,
                       size_class, False, extra)


def library_for(catalogue: str, path: str | Path | None = None):
    """The library a `catalogue` needs: the enrolled one (`path`, else the shipped simulated
    assets' library) for "library", None for "episode"."""
    if catalogue not in CATALOGUES:
        raise ValueError(f"catalogue must be one of {CATALOGUES}, got {catalogue!r}")
    return load_default_library(path) if catalogue == "library" else None


def load_default_library(path: str | Path | None = None):
    return Library.load(path or resolve_config(DEFAULT_LIBRARY))
