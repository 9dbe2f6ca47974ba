"""ESPIRE assets (seeds/001, Table 20) as data, and the primitive shapes the simulator builds them from.

Every asset is an oriented box in the scene (`SceneObject.size` = extents along its own x, y, z;
+x is its front, +z its up). Table 20 gives L (along x), W (along y) and H (along z) in cm; here
they are metres.

Books are the exception to Table 20's column order: a book's local frame is
    x = width (spine to fore-edge), y = thickness, z = length (its long, "upright" edge),
so `size = [W, H, L]` of Table 20, a book standing on a shelf has the identity rotation, and
`geometry.relations.book_tilt_deg` is 0 upright and 90 lying flat.

`parts(asset_key, size)` gives the primitives (MuJoCo geom types "box", "cylinder", "sphere",
"ellipsoid", "capsule") that fill the object's box in its local frame; oriented assets get a
darker front feature on their +x face so the front is visible in the image.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CM = 0.01


@dataclass(frozen=True)
class AssetSpec:
    key: str              # stable identifier, e.g. "alarm_clock"
    label: str            # what a person calls it: "alarm clock"
    kind: str             # "near" | "distant" | "table" | "shelf"
    oriented: bool        # has an intrinsic front (+x)
    size_m: tuple         # (L, W, H): extents along local x, y, z in metres
    shape: str            # builder name in _BUILDERS
    rgba: tuple = (0.6, 0.6, 0.6, 1.0)


def _a(key, label, kind, oriented, l_cm, w_cm, h_cm, shape, rgba):
    return AssetSpec(key, label, kind, oriented, (l_cm * CM, w_cm * CM, h_cm * CM), shape, rgba)


# Table 20. Colours are distinct per asset so colour-based perception can tell them apart.
ASSETS: dict[str, AssetSpec] = {a.key: a for a in [
    _a("alarm_clock", "alarm clock", "near", True, 7, 13, 17, "clock", (0.85, 0.15, 0.15, 1)),
    _a("armento_rider", "armento rider", "near", True, 24, 7, 24, "rider", (0.55, 0.35, 0.2, 1)),
    _a("bicycle_sculpture", "bicycle sculpture", "near", True, 21, 8, 18, "bicycle", (0.2, 0.2, 0.25, 1)),
    _a("picture_frame", "picture frame", "near", True, 13, 22, 18, "frame", (0.75, 0.6, 0.3, 1)),
    _a("teddy_bear", "teddy bear", "near", True, 20, 23, 25, "bear", (0.6, 0.4, 0.2, 1)),
    _a("newtons_cradle", "newton's cradle", "near", False, 10, 15, 14, "cradle", (0.75, 0.75, 0.8, 1)),
    _a("geosphere_sculpture", "geosphere sculpture", "near", False, 15, 15, 15, "sphere", (0.3, 0.7, 0.7, 1)),
    _a("pillar_bookend", "pillar bookend", "near", False, 7, 16, 13, "box", (0.4, 0.4, 0.45, 1)),
    _a("rubiks_cube", "rubik's cube", "near", False, 6, 6, 6, "box", (0.95, 0.8, 0.1, 1)),
    _a("succulents", "succulents", "near", False, 17, 15, 29, "plant", (0.25, 0.6, 0.25, 1)),
    _a("ceramic_jar", "ceramic jar", "near", False, 6, 6, 8, "cylinder", (0.9, 0.9, 0.85, 1)),
    _a("pagoda_statue", "pagoda statue", "near", False, 13, 14, 21, "pagoda", (0.7, 0.3, 0.5, 1)),
    _a("cheval_mirror", "cheval mirror", "distant", True, 40, 42, 43, "mirror", (0.5, 0.3, 0.15, 1)),
    _a("lady_with_an_ermine", "lady with an ermine", "distant", True, 62, 59, 52, "painting", (0.25, 0.2, 0.15, 1)),
    _a("mona_lisa", "mona lisa", "distant", True, 62, 54, 52, "painting", (0.45, 0.4, 0.2, 1)),
    _a("adoration_of_the_magi", "adoration of the magi", "distant", True, 62, 79, 52, "painting", (0.6, 0.5, 0.3, 1)),
    _a("floor_lamp_1", "floor lamp", "distant", False, 48, 48, 59, "lamp", (0.95, 0.9, 0.6, 1)),
    _a("floor_lamp_2", "floor lamp", "distant", False, 51, 51, 60, "lamp", (0.8, 0.85, 0.95, 1)),
    _a("magnolia_sieboldii", "magnolia sieboldii", "distant", False, 61, 65, 51, "plant", (0.3, 0.55, 0.3, 1)),
    # Table 20 prints H = "06" cm for the shrub, a likely typo for a 61 x 63 cm plant; 60 cm is used.
    _a("philadelphus_shrub", "philadelphus shrub", "distant", False, 63, 61, 60, "plant", (0.35, 0.65, 0.2, 1)),
    _a("juniperus_communis", "juniperus communis", "distant", False, 46, 45, 34, "plant", (0.15, 0.4, 0.25, 1)),
    _a("copper_scale", "copper scale", "distant", False, 52, 61, 46, "scale", (0.72, 0.45, 0.2, 1)),
    _a("decorative_disk", "decorative disk", "distant", True, 52, 52, 43, "disk", (0.3, 0.35, 0.7, 1)),
    _a("marble_bust", "marble bust", "distant", True, 52, 52, 53, "bust", (0.92, 0.92, 0.9, 1)),
    _a("table", "table", "table", True, 60, 140, 70, "table", (0.62, 0.48, 0.33, 1)),
    _a("shelf_1", "shelf", "shelf", True, 45, 149, 215, "box", (0.55, 0.42, 0.3, 1)),
    _a("shelf_2", "shelf", "shelf", True, 45, 176, 190, "box", (0.55, 0.42, 0.3, 1)),
    _a("shelf_3", "shelf", "shelf", True, 45, 176, 190, "box", (0.5, 0.38, 0.28, 1)),
    _a("shelf_4", "shelf", "shelf", True, 45, 171, 190, "box", (0.6, 0.45, 0.32, 1)),
    _a("shelf_5", "shelf", "shelf", True, 45, 149, 190, "box", (0.5, 0.4, 0.3, 1)),
    _a("shelf_6", "shelf", "shelf", True, 45, 164, 187, "box", (0.58, 0.44, 0.31, 1)),
]}

NEAR_KEYS = tuple(k for k, a in ASSETS.items() if a.kind == "near")
DISTANT_KEYS = tuple(k for k, a in ASSETS.items() if a.kind == "distant")
SHELF_KEYS = tuple(k for k, a in ASSETS.items() if a.kind == "shelf")

# Book size classes (Table 20), metres: (L range, W range, H = thickness range).
BOOK_SIZES: dict[str, tuple] = {
    "small": ((0.175, 0.188), (0.108, 0.130), (0.015, 0.018)),
    "medium": ((0.216, 0.250), (0.140, 0.176), (0.020, 0.025)),
    "large": ((0.254, 0.305), (0.203, 0.241), (0.037, 0.040)),
}
BOOK_POSES = ("upright", "flat", "tilted")

# Named, well-separated book colours (the name is stored with the book for attribute instructions).
BOOK_COLORS: dict[str, tuple] = {
    "red": (0.8, 0.1, 0.1, 1), "blue": (0.1, 0.25, 0.8, 1), "green": (0.1, 0.6, 0.2, 1),
    "yellow": (0.9, 0.8, 0.1, 1), "purple": (0.5, 0.2, 0.6, 1), "orange": (0.95, 0.5, 0.1, 1),
    "white": (0.92, 0.92, 0.92, 1), "black": (0.08, 0.08, 0.08, 1), "cyan": (0.1, 0.7, 0.8, 1),
    "pink": (0.95, 0.55, 0.7, 1), "brown": (0.45, 0.28, 0.12, 1), "grey": (0.5, 0.5, 0.5, 1),
}
SUPPORT_RGBA = (0.35, 0.33, 0.3, 1.0)


def book_size(rng: np.random.Generator, size_class: str) -> np.ndarray:
    """A book's box `[W, H, L]` (local x, y, z) drawn uniformly from the Table 20 ranges."""
    if size_class not in BOOK_SIZES:
        raise ValueError(f"book size class must be one of {sorted(BOOK_SIZES)}, got {size_class!r}")
    (l0, l1), (w0, w1), (h0, h1) = BOOK_SIZES[size_class]
    return np.array([rng.uniform(w0, w1), rng.uniform(h0, h1), rng.uniform(l0, l1)])


@dataclass
class Part:
    """One primitive in an object's local frame. `size` follows MuJoCo's geom size convention
    (box: half extents; sphere: [r]; cylinder/capsule: [r, half length]; ellipsoid: semi-axes)."""

    type: str
    size: tuple
    pos: tuple = (0.0, 0.0, 0.0)
    rgba: tuple = (0.6, 0.6, 0.6, 1.0)
    quat_wxyz: tuple = (1.0, 0.0, 0.0, 0.0)
    extra: dict = field(default_factory=dict)


def _darker(rgba, f=0.45):
    return (rgba[0] * f, rgba[1] * f, rgba[2] * f, 1.0)


def _box(h, pos=(0, 0, 0), rgba=(0.6, 0.6, 0.6, 1)):
    return Part("box", tuple(float(x) for x in h), tuple(float(x) for x in pos), rgba)


def _front_marker(h, rgba):
    """A thin dark panel on the +x face: makes an oriented asset's front visible."""
    return _box((0.004, h[1] * 0.6, h[2] * 0.5), (h[0] - 0.004, 0, 0.1 * h[2]), _darker(rgba))


def parts(asset_key: str | None, size, rgba=None) -> list[Part]:
    """Primitives filling the box `size` (local frame, centred). Unknown keys give one box."""
    h = np.asarray(size, float) / 2
    spec = ASSETS.get(asset_key or "")
    rgba = tuple(rgba or (spec.rgba if spec else (0.6, 0.6, 0.6, 1.0)))
    shape = spec.shape if spec else "box"
    out = _BUILDERS.get(shape, _build_box)(h, rgba)
    if spec is not None and spec.oriented and shape not in ("table",):
        out.append(_front_marker(h, rgba))
    return out


def _build_box(h, c):
    return [_box(h, rgba=c)]


def _build_cylinder(h, c):
    return [Part("cylinder", (float(min(h[0], h[1])), float(h[2])), rgba=c)]


def _build_sphere(h, c):
    return [Part("ellipsoid", tuple(float(x) for x in h), rgba=c)]


def _build_clock(h, c):
    return [_box((h[0], h[1], h[2] * 0.8), (0, 0, -h[2] * 0.2), c),
            Part("cylinder", (float(h[1] * 0.35), float(h[0] * 0.5)), (0, -h[1] * 0.5, h[2] * 0.75), _darker(c, 0.7),
                 (0.7071068, 0.7071068, 0, 0)),
            Part("cylinder", (float(h[1] * 0.35), float(h[0] * 0.5)), (0, h[1] * 0.5, h[2] * 0.75), _darker(c, 0.7),
                 (0.7071068, 0.7071068, 0, 0))]


def _build_pedestal_top(h, c, base_frac=0.25):
    """A low base plate plus a narrower body: statues, sculptures, busts."""
    bh = h[2] * base_frac
    return [_box((h[0], h[1], bh), (0, 0, -h[2] + bh), _darker(c, 0.7)),
            _box((h[0] * 0.6, h[1] * 0.6, h[2] - bh), (0, 0, bh), c)]


def _build_bear(h, c):
    return [Part("ellipsoid", (float(h[0]), float(h[1] * 0.8), float(h[2] * 0.55)), (0, 0, -h[2] * 0.45), c),
            Part("sphere", (float(min(h[0], h[1]) * 0.6),), (0, 0, h[2] * 0.45), c)]


def _build_frame(h, c):
    # A slab leaning back slightly on a foot: the picture faces +x.
    return [_box((h[0] * 0.2, h[1], h[2]), (h[0] * 0.5, 0, 0), c),
            _box((h[0] * 0.8, h[1] * 0.3, h[2] * 0.1), (-h[0] * 0.2, 0, -h[2] * 0.9), _darker(c, 0.7))]


def _build_plant(h, c):
    pot = (0.55, 0.3, 0.2, 1)
    return [Part("cylinder", (float(min(h[0], h[1]) * 0.55), float(h[2] * 0.3)), (0, 0, -h[2] * 0.7), pot),
            Part("ellipsoid", (float(h[0]), float(h[1]), float(h[2] * 0.7)), (0, 0, h[2] * 0.3), c)]


def _build_lamp(h, c):
    pole = (0.2, 0.2, 0.2, 1)
    return [Part("cylinder", (float(min(h[0], h[1]) * 0.5), float(h[2] * 0.05)), (0, 0, -h[2] * 0.95), pole),
            Part("cylinder", (0.015, float(h[2] * 0.6)), (0, 0, -h[2] * 0.3), pole),
            Part("cylinder", (float(min(h[0], h[1]) * 0.95), float(h[2] * 0.2)), (0, 0, h[2] * 0.8), c)]


def _build_painting(h, c):
    # Canvas on an easel-like back support, picture on the +x face.
    return [_box((h[0] * 0.08, h[1], h[2] * 0.75), (h[0] * 0.3, 0, h[2] * 0.25), c),
            _box((h[0] * 0.5, h[1] * 0.1, h[2]), (-h[0] * 0.2, 0, 0), _darker(c, 0.6))]


def _build_pagoda(h, c):
    tiers, out = 4, []
    for i in range(tiers):
        s = 1.0 - 0.2 * i
        tz = -h[2] + h[2] / tiers * (2 * i + 1)
        out.append(_box((h[0] * s, h[1] * s, h[2] / tiers), (0, 0, tz), c if i % 2 == 0 else _darker(c, 0.75)))
    return out


def _build_table(h, c):
    """Table top 4 cm thick with four legs; the box's top face is the table surface."""
    top_h, leg = 0.02, 0.025
    out = [_box((h[0], h[1], top_h), (0, 0, h[2] - top_h), c)]
    for sx in (-1, 1):
        for sy in (-1, 1):
            out.append(_box((leg, leg, h[2] - top_h), (sx * (h[0] - leg), sy * (h[1] - leg), -top_h), _darker(c, 0.8)))
    return out


_BUILDERS = {
    "box": _build_box, "cylinder": _build_cylinder, "sphere": _build_sphere, "clock": _build_clock,
    "rider": _build_pedestal_top, "bicycle": _build_pedestal_top, "bust": _build_pedestal_top,
    "cradle": _build_pedestal_top, "frame": _build_frame, "bear": _build_bear, "plant": _build_plant,
    "lamp": _build_lamp, "painting": _build_painting, "mirror": _build_painting, "pagoda": _build_pagoda,
    "scale": _build_pedestal_top, "disk": _build_frame, "table": _build_table,
}
