"""Object attributes words can refer to: a basic colour name, and a book's size class.

Colour names come from hue/saturation/value rather than the nearest RGB, because shading on a
real or rendered surface changes brightness far more than hue. Book size classes are ESPIRE's
(supplementary Table 20), applied to the box's dimensions sorted longest first, so a book lying
flat and one standing on a shelf get the same class.
"""
from __future__ import annotations

import colorsys
import itertools

import numpy as np

# ESPIRE Table 20, metres: (length, width, thickness) ranges of the book assets.
BOOK_SIZE_RANGES_M = {
    "small": ((0.175, 0.188), (0.108, 0.130), (0.015, 0.018)),
    "medium": ((0.216, 0.250), (0.140, 0.176), (0.020, 0.025)),
    "large": ((0.254, 0.305), (0.203, 0.241), (0.037, 0.040)),
}
# How far a measured dimension may fall outside a range and still count (depth noise, voxels).
BOOK_TOLERANCE_M = (0.015, 0.015, 0.006)

# Hue centres in degrees of the chromatic names.
_HUES = (("red", 0.0), ("orange", 30.0), ("yellow", 58.0), ("green", 120.0), ("cyan", 180.0),
         ("blue", 225.0), ("purple", 280.0), ("pink", 330.0), ("red", 360.0))

COLOUR_NAMES = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink",
                "brown", "black", "white", "gray")

# Representative RGB (0-255) of each name, to compare a named expectation with a measurement.
COLOUR_RGB = {"red": (200, 30, 30), "orange": (230, 130, 30), "yellow": (220, 210, 40),
              "green": (40, 160, 60), "cyan": (40, 190, 200), "blue": (40, 70, 200),
              "purple": (130, 50, 170), "pink": (230, 120, 170), "brown": (120, 75, 40),
              "black": (20, 20, 20), "white": (235, 235, 235), "gray": (128, 128, 128)}


def mean_rgb(rgb: np.ndarray, mask: np.ndarray) -> tuple:
    """Median colour (0-255) over the mask: the median ignores specular highlights and edges."""
    px = rgb[np.asarray(mask, bool)]
    if px.size == 0:
        return (0.0, 0.0, 0.0)
    return tuple(float(c) for c in np.median(px.reshape(-1, 3), axis=0))


def colour_name(rgb) -> str:
    """A basic colour word for an RGB triple (0-255)."""
    r, g, b = (float(c) / 255.0 for c in rgb)
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    if v < 0.18:
        return "black"
    if s < 0.22:
        return "white" if v > 0.78 else "gray" if v > 0.35 else "black"
    hue = h * 360.0
    if 15.0 <= hue < 45.0 and v < 0.6:
        return "brown"           # dark orange reads as brown
    return min(_HUES, key=lambda nh: abs(nh[1] - hue))[0]


# A cell's lighting scales every colour's brightness: under a dim light an orange book reads
# brown and a white one gray. A name the measurement takes at one of these brightness scales
# is a near match.
LIGHTING_SCALES = (0.75, 1.33)
LIGHTING_NAME_DISTANCE = 0.2

ALIASES = {"grey": "gray", "violet": "purple", "magenta": "pink", "teal": "cyan", "tan": "brown"}


def canonical_colour(name: str) -> str | None:
    """A known colour name for `name` (aliases such as "grey" mapped), or None when unknown."""
    n = ALIASES.get(name.strip().lower(), name.strip().lower())
    return n if n in COLOUR_RGB else None


def colour_distance(a, b) -> float:
    """0 (same) .. ~1 (far) between two colours, each a name or 0-255 RGB; hue-aware.
    An unknown name is 0.5 (no evidence either way)."""
    if isinstance(a, str):
        a = canonical_colour(a)
    if isinstance(b, str):
        b = canonical_colour(b)
    if a is None or b is None:
        return 0.5
    ra = np.asarray(COLOUR_RGB[a] if isinstance(a, str) else a, float) / 255.0
    rb = np.asarray(COLOUR_RGB[b] if isinstance(b, str) else b, float) / 255.0
    if isinstance(a, str) and isinstance(b, str):
        return 0.0 if a == b else 1.0
    if isinstance(a, str) or isinstance(b, str):
        # A name against a measurement: compare names, softened by chromatic distance
        name = a if isinstance(a, str) else b
        measured = rb if isinstance(a, str) else ra
        if colour_name(measured * 255.0) == name:
            return 0.0
        if any(colour_name(np.clip(measured * k, 0.0, 1.0) * 255.0) == name for k in LIGHTING_SCALES):
            return LIGHTING_NAME_DISTANCE
        return min(1.0, 0.5 + _chroma_dist(ra, rb))
    return min(1.0, _chroma_dist(ra, rb))


def _chroma_dist(a: np.ndarray, b: np.ndarray) -> float:
    # Normalise brightness away so shading does not count as a colour difference.
    na, nb = a / max(a.sum(), 1e-6), b / max(b.sum(), 1e-6)
    return float(np.linalg.norm(na - nb) * 2.0 + 0.3 * abs(a.mean() - b.mean()))


def book_size_class(size_m, *, tolerance_m=BOOK_TOLERANCE_M, at_least: bool = False) -> str | None:
    """ESPIRE's book size class of a box of these dimensions (any order), or None when it is
    not book-shaped within the tolerance. `at_least`: the dimensions are a lower bound (the book
    runs past the image's edge), so the class is the only one that can hold them, or None when
    more than one can."""
    dims = np.asarray(size_m, float).reshape(3)
    if not at_least:
        return _nearest_book_class(dims, tolerance_m)
    dims, tol = np.sort(dims)[::-1], np.asarray(tolerance_m, float)
    fits = [name for name, ranges in BOOK_SIZE_RANGES_M.items()
            if np.all(dims <= np.array([r[1] for r in ranges]) + tol)]
    return fits[0] if len(fits) == 1 else None


def book_thickness_for_cover(length_m: float, width_m: float, *, tolerance_m=BOOK_TOLERANCE_M) -> float | None:
    """The middle of ESPIRE's thickness range for the size class whose cover (length x width)
    these are, or None when no class's cover matches within the tolerance. For a book seen only
    face-on, whose thickness the camera cannot measure."""
    name = _nearest_book_class(np.array([length_m, width_m], float), tolerance_m)
    return None if name is None else float(np.mean(BOOK_SIZE_RANGES_M[name][2]))


def _nearest_book_class(dims, tolerance_m) -> str | None:
    """The class whose first len(dims) ranges (length, width[, thickness]) the dimensions, sorted
    longest first, fall in or nearest, each within its tolerance; None when none does."""
    dims = np.sort(dims)[::-1]
    n = len(dims)
    tol = np.asarray(tolerance_m, float)[:n]
    best, best_excess = None, np.inf
    for name, ranges in BOOK_SIZE_RANGES_M.items():
        lo = np.array([r[0] for r in ranges[:n]])
        hi = np.array([r[1] for r in ranges[:n]])
        excess = np.maximum(lo - dims, 0) + np.maximum(dims - hi, 0)
        if np.all(excess <= tol) and (excess / tol).sum() < best_excess:
            best, best_excess = name, float((excess / tol).sum())
    return best


# What a shortfall costs, relative to an excess, when the measured size is only a lower bound.
SHORTFALL_WEIGHT_AT_LEAST = 0.25


def size_mismatch(measured_m, expected_m, *, at_least=False) -> float:
    """Relative mismatch of two sizes compared orientation-free: 0 = equal.
    `at_least`: the measured size is a lower bound (the object runs past the image's edge), so
    measuring smaller costs little; a part never measures larger than the whole. Either one bool
    for all three sides, or one per side of `measured_m` (in its order): then each measured side
    is paired with the expected side that fits it best (a side seen in full keeps its length,
    one running out of view or away from the camera may be any longer side), or one shortfall
    weight per side (1 = seen in full, SHORTFALL_WEIGHT_AT_LEAST = a lower bound).
    `expected_m` may be several sizes (K, 3): the best of them."""
    a = np.asarray(measured_m, float).reshape(3)
    b = np.asarray(expected_m, float).reshape(-1, 3)
    at_least = np.asarray(at_least)
    weights = np.broadcast_to(np.where(at_least, SHORTFALL_WEIGHT_AT_LEAST, 1.0) if at_least.dtype == bool
                              else at_least.astype(float), (3,))
    if np.all(weights == weights[0]):
        a, b = np.sort(a), np.sort(b, axis=1)[:, None]           # (K, 1, 3)
    else:
        b = b[:, _PERMUTATIONS]                                   # (K, 6, 3)
    # The thinnest dimension gets an absolute floor so a 1.5 cm book is not judged at 1 mm.
    rel = (a - b) / np.maximum(b, 0.02)
    rel = np.where(rel < 0, weights * rel, rel)
    return float(np.abs(rel).mean(axis=2).min())


_PERMUTATIONS = np.array(list(itertools.permutations(range(3))))
