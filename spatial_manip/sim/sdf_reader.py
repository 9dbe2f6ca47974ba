"""A small SDFormat world reader (xml.etree): models, links, collision shapes and frames with their
poses, and the scene objects that sdf_export wrote into its `sm:` elements.

    world = read_world("OUT/scenes/pick-0-00001.sdf")
    world.models["book_1"].pose                       # 4x4 in the world frame
    world.collision_pose("table", "link", "p0")       # 4x4 world pose of one primitive
    objects = world.scene_objects()                   # [SceneObject] rebuilt from the models

It reads what sdf_export writes and plain hand-written worlds whose poses are relative to their
parent element (SDF's default). `relative_to` frames and nested models are beyond it: it refuses
them by name instead of guessing. For a full check use the real parser (`sdf_export.check_sdf`).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.transforms import make_transform
from spatial_manip.scene import Region, SceneObject

SM_NS = "https://github.com/spatial-manip/sdf"   # the same namespace sdf_export writes


class SdfReadError(ValueError):
    """The file is not an SDF world this reader understands; the message names the element."""


@dataclass
class Geometry:
    name: str
    pose: np.ndarray            # in the link frame
    shape: str                  # box | sphere | cylinder | capsule | ellipsoid | plane | mesh | ...
    dims: dict                  # the shape's own elements, as floats or float arrays


@dataclass
class Link:
    name: str
    pose: np.ndarray            # in the model frame
    mass: float | None = None
    collisions: dict[str, Geometry] = field(default_factory=dict)


@dataclass
class Model:
    name: str
    pose: np.ndarray            # in the world frame
    static: bool
    links: dict[str, Link] = field(default_factory=dict)
    includes: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)      # attributes of <sm:object>, if any


@dataclass
class Frame:
    name: str
    pose: np.ndarray
    meta: dict = field(default_factory=dict)      # attributes of <sm:region>, if any


@dataclass
class World:
    name: str
    models: dict[str, Model]
    frames: dict[str, Frame]

    def collision_pose(self, model: str, link: str, collision: str) -> np.ndarray:
        m = self.models[model]
        lk = m.links[link]
        return m.pose @ lk.pose @ lk.collisions[collision].pose

    def scene_objects(self) -> list[SceneObject]:
        """The models that carry an <sm:object>, as SceneObjects (id, label, category, pose, size)."""
        out = []
        for m in self.models.values():
            if not m.meta:
                continue
            out.append(SceneObject(
                id=m.name, label=m.meta.get("label", m.name), category=m.meta.get("category", "object"),
                center=m.pose[:3, 3], size=_floats(m.meta.get("size", "0 0 0"), f"model {m.name} sm:object size"),
                rotation=m.pose[:3, :3], oriented=m.meta.get("oriented") == "true", held=m.meta.get("held") == "true",
                extra={k: m.meta[k] for k in ("asset", "color") if k in m.meta}))
        return out

    def regions(self) -> list[Region]:
        out = []
        for f in self.frames.values():
            if f.meta:
                out.append(Region(id=f.name, kind=f.meta.get("kind", "slot"), center=f.pose[:3, 3],
                                  size=_floats(f.meta.get("size", "0 0 0"), f"frame {f.name} sm:region size"),
                                  row=int(f.meta.get("row", 0)), col=int(f.meta.get("col", 0)),
                                  occupancy=float(f.meta.get("occupancy", 0.0)), rotation=f.pose[:3, :3]))
        return out


def _floats(text: str, where: str) -> np.ndarray:
    try:
        return np.array([float(v) for v in str(text).split()], float)
    except ValueError as e:
        raise SdfReadError(f"{where}: expected numbers, got {text!r}") from e


def parse_pose(el: ET.Element | None, where: str) -> np.ndarray:
    """A <pose> (euler_rpy, radians or degrees="true") relative to its parent element."""
    if el is None or not (el.text or "").strip():
        return np.eye(4)
    if el.get("relative_to"):
        raise SdfReadError(f"{where}: pose relative_to={el.get('relative_to')!r} is not supported by this reader")
    if el.get("rotation_format", "euler_rpy") != "euler_rpy":
        raise SdfReadError(f"{where}: rotation_format={el.get('rotation_format')!r} is not supported (euler_rpy only)")
    v = _floats(el.text, f"{where} <pose>")
    if v.shape != (6,):
        raise SdfReadError(f"{where}: <pose> needs 6 numbers (x y z roll pitch yaw), got {len(v)}")
    rpy = np.radians(v[3:]) if el.get("degrees") == "true" else v[3:]
    return make_transform(Rotation.from_euler("xyz", rpy).as_matrix(), v[:3])


def _geometry(el: ET.Element, where: str) -> Geometry:
    geom = el.find("geometry")
    if geom is None or len(geom) == 0:
        raise SdfReadError(f"{where}: no <geometry>")
    shape = geom[0]
    dims = {}
    for child in shape:
        text = (child.text or "").strip()
        try:
            vals = [float(t) for t in text.split()]
            dims[child.tag] = vals[0] if len(vals) == 1 else np.array(vals)
        except ValueError:
            dims[child.tag] = text      # e.g. a mesh <uri>
    return Geometry(el.get("name", ""), parse_pose(el.find("pose"), where), shape.tag, dims)


def _link(el: ET.Element, where: str) -> Link:
    mass = el.find("inertial/mass")
    link = Link(el.get("name", ""), parse_pose(el.find("pose"), where),
                float(mass.text) if mass is not None else None)
    for c in el.findall("collision"):
        name = c.get("name", "")
        if name in link.collisions:
            raise SdfReadError(f"{where}: two collisions named {name!r}")
        link.collisions[name] = _geometry(c, f"{where}/collision[{name}]")
    return link


def _meta(el: ET.Element, tag: str) -> dict:
    m = el.find(f"{{{SM_NS}}}{tag}")
    return dict(m.attrib) if m is not None else {}


def _model(el: ET.Element) -> Model:
    name = el.get("name", "")
    where = f"model[{name}]"
    if el.find("model") is not None:
        raise SdfReadError(f"{where}: nested models are not supported by this reader")
    static = (el.findtext("static") or "false").strip() in ("true", "1")
    model = Model(name, parse_pose(el.find("pose"), where), static, meta=_meta(el, "object"))
    for lk in el.findall("link"):
        link = _link(lk, f"{where}/link[{lk.get('name')}]")
        model.links[link.name] = link
    model.includes = [(inc.findtext("uri") or "").strip() for inc in el.findall("include")]
    return model


def read_world(path: str | Path) -> World:
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        raise SdfReadError(f"{path}: not readable XML ({e})") from e
    if root.tag != "sdf":
        raise SdfReadError(f"{path}: the root element is <{root.tag}>, not <sdf>")
    worlds = root.findall("world")
    if len(worlds) != 1:
        raise SdfReadError(f"{path}: expected one <world>, found {len(worlds)}")
    w = worlds[0]
    models, frames = {}, {}
    for el in w.findall("model"):
        m = _model(el)
        if m.name in models:
            raise SdfReadError(f"{path}: two models named {m.name!r}")
        models[m.name] = m
    for inc in w.findall("include"):      # a world-level include is a model we cannot see into
        name = inc.findtext("name") or Path((inc.findtext("uri") or "").strip()).stem
        models[name] = Model(name, parse_pose(inc.find("pose"), f"include[{name}]"),
                             (inc.findtext("static") or "false").strip() == "true",
                             includes=[(inc.findtext("uri") or "").strip()])
    for el in w.findall("frame"):
        if el.get("attached_to") not in (None, "", "world"):
            raise SdfReadError(f"{path}: frame {el.get('name')!r} attached_to={el.get('attached_to')!r} "
                               "is not supported by this reader")
        frames[el.get("name", "")] = Frame(el.get("name", ""), parse_pose(el.find("pose"), f"frame[{el.get('name')}]"),
                                           _meta(el, "region"))
    return World(w.get("name", ""), models, frames)

