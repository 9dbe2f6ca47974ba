"""Object attributes words can refer to: basic colour names, and a book's size class.

Colour has one definition, in CIELAB (`colour_names`): each pixel is named by its hue angle and
its chroma relative to its lightness, which shading and the cell's lighting change far less than
brightness, and an object is named by its pixels' votes (a two-coloured object gets two names).
Enrollment, the library, detections, catalogue matching and the planner's lexicon all use it.
Book size classes are ESPIRE's (supplementary Table 20, geometry.relations.book_size_class),
measured within the sensor's error at the book's range (`book_size_tolerance_m`).
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from spatial_manip.geometry.pointcloud import range_tolerance_m
# A book's size class is a spatial word, defined once in the geometry core (ESPIRE Table 20).
from spatial_manip.geometry.relations import (BOOK_SIZE_RANGES_M, BOOK_TOLERANCE_M,  # noqa: F401
                                              book_class_of_sides, book_size_class)

# A measured side's error is the sensor's range error (3 sigma of the L515 at the book's range: a
# flat book's top reads 6 mm high on average at 1.3 m, 11 mm at worst, on seeds 51-53), or the
# fixed floor below, whichever is larger: voxels and edge pixels cost the cover sides more.
BOOK_SIDE_SIGMAS = 3.0


def book_size_tolerance_m(range_m: float) -> np.ndarray:
    """How far each side of a book measured at `range_m` from the camera (length, width,
    thickness) may fall outside its class's range: the sensor's error there, at least
    BOOK_TOLERANCE_M."""
    return np.array([float(range_tolerance_m(range_m, sigmas=BOOK_SIDE_SIGMAS, floor_m=f)) for f in BOOK_TOLERANCE_M])


COLOUR_NAMES = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink",
                "brown", "black", "white", "gray")


def mean_rgb(rgb: np.ndarray, mask: np.ndarray) -> tuple:
    """Median colour (0-255) over the mask: the median ignores specular highlights and edges.
    Pixels with some channels but not all at the sensor's maximum are left out when at least
    MIN_UNCLIPPED_SHARE of the mask is not: a clipped channel has lost the colour's hue (a
    yellow cube's lit top reads (255, 255, 40) where its material is (242, 204, 25), and a
    library enrolled from above listed that top, which a side view of the cube never matched;
    the demo's rubik's cube was named the yellow carton), while a white pixel clipped in all
    three is still white. When the clipped pixels are the mask's larger part and the others are
    no dimmer view of their colour (lit_alike), the others are another surface and all are kept:
    the depth registered a few pixels off the colour takes the shelf around a small object into
    its mask, and a yellow cube lit to (255, 235, 32) on a shelf read as the shelf's (163, 129, 88)
    around it, which fit no cube (place-80-00004)."""
    px = np.asarray(rgb)[np.asarray(mask, bool)].reshape(-1, 3)
    if px.size == 0:
        return (0.0, 0.0, 0.0)
    at_max = px >= CLIPPED_LEVEL
    hue_lost = at_max.any(axis=1) & ~at_max.all(axis=1)
    kept = np.count_nonzero(~hue_lost)
    if kept >= MIN_UNCLIPPED_SHARE * len(px) and (
            2 * kept >= len(px) or lit_alike(np.median(px[hue_lost], axis=0), np.median(px[~hue_lost], axis=0))):
        px = px[~hue_lost]
    return tuple(float(c) for c in np.median(px, axis=0))


def lit_alike(clipped, unclipped) -> bool:
    """Whether colour `clipped` (some channels at the sensor's maximum) is colour `unclipped` more
    brightly lit: the channels it keeps are `unclipped`'s scaled by one factor (within
    LIT_ALIKE_RATIO, each with LIT_ALIKE_FLOOR added against the noise of a dark channel), and the
    channels it clips would pass the maximum at that factor (within the same ratio). A book's shaded
    side (228, 122, 22) and its lit top (255, 179, 32) are alike; a yellow cube's (255, 235, 32) and
    the brown shelf (163, 129, 88) behind it are not."""
    c, u = np.asarray(clipped, float), np.asarray(unclipped, float)
    lit = c < CLIPPED_LEVEL
    if not lit.any():
        return True
    scale = (c[lit] + LIT_ALIKE_FLOOR) / (u[lit] + LIT_ALIKE_FLOOR)
    if scale.max() > LIT_ALIKE_RATIO * scale.min():
        return False
    return bool(np.all(u[~lit] * scale.max() * LIT_ALIKE_RATIO >= CLIPPED_LEVEL))


CLIPPED_LEVEL = 254          # a channel this high (0-255) is at the sensor's maximum
MIN_UNCLIPPED_SHARE = 0.2    # mean_rgb keeps clipped pixels when fewer unclipped ones remain
LIT_ALIKE_RATIO = 1.5        # lit_alike: channels scaled by factors this close are one colour more lit
LIT_ALIKE_FLOOR = 16.0       # lit_alike: added to each channel (0-255) before the ratio


# --- colour names --------------------------------------------------------------------------
# Each pixel is named in CIELAB, where hue (the angle of a*, b*) survives shading and a dimmer
# light, and whether a pixel has a colour at all is its chroma relative to its lightness (a
# shaded red keeps that ratio; a shaded white stays near zero). Lightness itself decides only
# between white, gray and black, and between orange and brown, so those thresholds are wide.
# Hue centres (degrees, CIELAB h) of the chromatic names; a hue takes the nearest. CIELAB crowds
# saturated blues and violets together: sRGB's pure blue (0, 0, 255) and navy sit at 306, a
# violet (128, 0, 255) at 312, so blue and purple meet at 309.
_LAB_HUES = (("red", 35.0), ("orange", 64.0), ("yellow", 100.0), ("green", 140.0), ("cyan", 200.0),
             ("blue", 290.0), ("purple", 328.0), ("pink", 352.0))
CHROMA_RATIO_MIN = 0.28     # C*/L* below this: achromatic (white, gray, black)
BROWN_L_MAX = 48.0          # orange/red/yellow hue below this lightness reads as brown
WHITE_L_MIN, BLACK_L_MAX = 66.0, 22.0
SECOND_COLOUR_SHARE = 0.30  # a second name needs this share of the object's pixels


def rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) sRGB 0-255 -> CIELAB (D65): L* 0-100, a*, b*."""
    c = np.asarray(rgb, float) / 255.0
    lin = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = lin @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    return np.stack([116.0 * f[..., 1] - 16.0, 500.0 * (f[..., 0] - f[..., 1]),
                     200.0 * (f[..., 1] - f[..., 2])], axis=-1)


def _lab_names(lab: np.ndarray) -> np.ndarray:
    """A basic colour name per CIELAB row (N, 3)."""
    L, a, b = lab[:, 0], lab[:, 1], lab[:, 2]
    hue = np.degrees(np.arctan2(b, a)) % 360.0
    centres = np.array([h for _, h in _LAB_HUES])
    gap = np.abs((hue[:, None] - centres[None, :] + 180.0) % 360.0 - 180.0)
    names = np.array([n for n, _ in _LAB_HUES], dtype=object)[np.argmin(gap, axis=1)]
    names = np.where(np.isin(names, ("orange", "red", "yellow")) & (L < BROWN_L_MAX)
                     & (hue > 40.0) & (hue < 100.0), "brown", names)
    grey = np.where(L >= WHITE_L_MIN, "white", np.where(L <= BLACK_L_MAX, "black", "gray"))
    return np.where(_chroma_ratio(lab) < CHROMA_RATIO_MIN, grey, names)


def _chroma_ratio(lab: np.ndarray) -> np.ndarray:
    """C*/L* per CIELAB row (N, 3), L* floored at 10 (near black, a*, b* are mostly noise): the
    share of colour a pixel's hue stands on, which CHROMA_RATIO_MIN bounds."""
    return np.hypot(lab[:, 1], lab[:, 2]) / np.maximum(lab[:, 0], 10.0)


def colour_name(rgb) -> str:
    """The basic colour name of one colour (0-255 RGB): the name `colour_names` gives a pixel of it."""
    return str(_lab_names(rgb_to_lab(np.asarray(rgb, float).reshape(1, 3)))[0])


def hue_clearance(rgb) -> float:
    """How many times the achromatic boundary (CHROMA_RATIO_MIN) one colour's (0-255 RGB) C*/L*
    is: below 1 it reads white, gray or black; at 2 it keeps a hue losing half its chroma."""
    return float(_chroma_ratio(rgb_to_lab(np.asarray(rgb, float).reshape(1, 3)))[0]) / CHROMA_RATIO_MIN


def colour_names(rgb: np.ndarray, mask: np.ndarray | None = None) -> list[str]:
    """One basic colour name for an object's pixels (`rgb` (H, W, 3) 0-255 under `mask`, or
    (N, 3) pixels), or two for a two-coloured object: each pixel is named (`_lab_names`) and the
    names holding at least SECOND_COLOUR_SHARE of them are kept, most first. Specular highlights
    (near-white, far lighter than the object's median) do not vote; white, gray and black count as
    one achromatic vote, named by the lightness of those pixels, so shading never makes a second
    colour. [] when no pixel is given."""
    px = np.asarray(rgb, float)
    px = (px[np.asarray(mask, bool)] if mask is not None else px).reshape(-1, 3)
    if len(px) == 0:
        return []
    lab = rgb_to_lab(px)
    keep = ~((lab[:, 0] > np.median(lab[:, 0]) + 25.0) & (np.hypot(lab[:, 1], lab[:, 2]) < 10.0))
    lab = lab[keep] if keep.any() else lab
    names = _lab_names(lab)
    achromatic = np.isin(names, ("white", "gray", "black"))
    votes = {n: int(np.count_nonzero(names == n)) for n in set(names[~achromatic])}
    if achromatic.any():
        votes[_lab_names(np.median(lab[achromatic], axis=0)[None])[0]] = int(np.count_nonzero(achromatic))
    ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
    first = ranked[0][0]
    second = [n for n, v in ranked[1:] if v >= SECOND_COLOUR_SHARE * len(names) and not _neighbours(first, n)]
    return [str(first)] + [str(n) for n in second[:1]]


def main_colour(rgb: np.ndarray, mask: np.ndarray) -> str:
    """The name most of an object's pixels take (`colour_names`' first), "unknown" without pixels:
    a Detection's `colour`."""
    names = colour_names(rgb, mask)
    return names[0] if names else "unknown"


_HUE_ORDER = [n for n, _ in _LAB_HUES]


def _neighbours(a: str, b: str) -> bool:
    """Two chromatic names next to each other on the hue circle (brown counts as orange): a
    surface shaded or lit across it drifts between them, so they are one colour, not two."""
    if a in ("white", "gray", "black") or b in ("white", "gray", "black"):
        return False
    i, j = (_HUE_ORDER.index("orange" if n == "brown" else n) for n in (a, b))
    return min((i - j) % len(_HUE_ORDER), (j - i) % len(_HUE_ORDER)) <= 1


def hues_alike(a: str, b: str) -> bool:
    """Two chromatic names that are one hue or neighbours on the hue circle (_neighbours): what
    shading and the cell's light may turn one colour into (labelling.hue_contradicts)."""
    return a == b or _neighbours(a, b)


# A cell's lighting scales every colour's brightness: under a dim light an orange book reads
# brown and a white one gray. A measurement named as the word's lighting neighbour is a near match.
# Brown is a dark orange or a dark yellow (hue 40-100 below BROWN_L_MAX), so a brighter light reads
# a yellowish brown yellow: the orange juice carton, brown where the generator names it (129/103/47),
# read 130/109/25 under the realistic profile's light, most of its pixels above L* 48, and "the
# brown carton" found nothing (objects-80-00006); a yellow under a dim light reads brown.
LIGHTING_NEIGHBOURS = {"orange": ("brown",), "brown": ("orange", "yellow"), "yellow": ("brown",), "white": ("gray",),
                       "gray": ("white", "black"), "black": ("gray",)}
LIGHTING_NAME_DISTANCE = 0.2

# Representative RGB (0-255) of each name, to compare a named expectation with a measurement.
COLOUR_RGB = {"red": (200, 30, 30), "orange": (230, 130, 30), "yellow": (220, 210, 40),
              "green": (40, 160, 60), "cyan": (40, 190, 200), "blue": (40, 70, 200),
              "purple": (130, 50, 170), "pink": (230, 120, 170), "brown": (120, 75, 40),
              "black": (20, 20, 20), "white": (235, 235, 235), "gray": (128, 128, 128)}

ALIASES = {"grey": "gray", "violet": "purple", "magenta": "pink", "teal": "cyan", "tan": "brown", "silver": "gray",
           "navy": "blue", "beige": "white", "gold": "yellow", "golden": "yellow", "maroon": "red", "crimson": "red"}


def canonical_colour(name: str) -> str | None:
    """A known colour name for `name` (aliases such as "grey" mapped), or None when unknown."""
    n = ALIASES.get(name.strip().lower(), name.strip().lower())
    return n if n in COLOUR_RGB else None


def colour_distance(a, b) -> float:
    """0 (same) .. ~1 (far) between two colours, each a name or 0-255 RGB; hue-aware.
    A measurement is named by `colour_name`. An unknown name is 0.5 (no evidence either way)."""
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
        if colour_name(measured * 255.0) in LIGHTING_NEIGHBOURS.get(name, ()):
            return LIGHTING_NAME_DISTANCE
        return min(1.0, 0.5 + _chroma_dist(ra, rb))
    return min(1.0, _chroma_dist(ra, rb))


# How much darker or lighter than its enrolled colour a surface may read with no change of its own.
# Enrollment looks at an object head-on, and a camera's light (MuJoCo's headlight shines along the
# optical axis, as a ring light or a lamp behind the camera does) lights a face by the angle between
# it and where the camera points: the newton's cradle near the image's edge of pick-85-00001 reads
# 93 where its enrollment read 174, with the profile's lighting and surface colour switched off
# (the same face, same turn, camera centred on it: 138). Lighter: a brighter room (the realistic
# profile's light is 0.75-1.25 of nominal).
SEEN_BRIGHTNESS_SHARE = (0.45, 1.25)
# The share of a brightness difference within that range taken as the view's, between two colours
# without a hue (white, gray, black: a shaded white is a gray) only: brightness still tells apart
# objects of one hue (the distant copper scale and cheval mirror, both brown, differ mostly in it:
# discounting it there named a shrub's brown pot the copper scale, pick-84-00004), and all of it
# left a dark bicycle sculpture between itself and a black book (pick-86-00004).
SEEN_BRIGHTNESS_DISCOUNT = 0.5
ACHROMATIC = {"white", "gray", "black"}


def seen_colour_distance(enrolled, seen) -> float:
    """colour_distance of a detection's measured colour `seen` from an enrolled colour, where a
    brightness within SEEN_BRIGHTNESS_SHARE of the enrolled one costs SEEN_BRIGHTNESS_DISCOUNT
    less when neither has a hue. Names as colour_distance."""
    if isinstance(enrolled, str) or isinstance(seen, str):
        return colour_distance(enrolled, seen)
    if not (_achromatic(tuple(map(float, enrolled))) and _achromatic(tuple(map(float, seen)))):
        return colour_distance(enrolled, seen)      # a hue: its brightness tells one-hued objects apart
    a, b = np.asarray(enrolled, float) / 255.0, np.asarray(seen, float) / 255.0
    lit = np.clip(b.mean() / max(a.mean(), 1e-6), *SEEN_BRIGHTNESS_SHARE)
    return min(1.0, _chroma_dist(a * (1 + SEEN_BRIGHTNESS_DISCOUNT * (lit - 1)), b))


@functools.lru_cache(maxsize=1024)
def _achromatic(rgb: tuple) -> bool:
    return colour_name(rgb) in ACHROMATIC


def _chroma_dist(a: np.ndarray, b: np.ndarray) -> float:
    # Normalise brightness away so shading does not count as a colour difference.
    na, nb = a / max(a.sum(), 1e-6), b / max(b.sum(), 1e-6)
    return float(np.linalg.norm(na - nb) * 2.0 + 0.3 * abs(a.mean() - b.mean()))


def book_thickness_for_cover(length_m: float, width_m: float, *, tolerance_m=BOOK_TOLERANCE_M) -> float | None:
    """The middle of ESPIRE's thickness range for the size class whose cover (length x width)
    these are, or None when no class's cover matches within the tolerance. For a book seen only
    face-on, whose thickness the camera cannot measure."""
    name = book_class_of_sides([length_m, width_m], tolerance_m=tolerance_m)
    return None if name is None else float(np.mean(BOOK_SIZE_RANGES_M[name][2]))


# What a shortfall costs, relative to an excess, when the measured size is only a lower bound.
SHORTFALL_WEIGHT_AT_LEAST = 0.25


def size_mismatch(measured_m, expected_m, *, at_least=False, excess_tol_m=0.0, upright=False) -> float:
    """Relative mismatch of two sizes compared orientation-free: 0 = equal.
    `at_least`: the measured size is a lower bound (the object runs past the image's edge), so
    measuring smaller costs little; a part never measures larger than the whole. Either one bool
    for all three sides, or one per side of `measured_m` (in its order): then each measured side
    is paired with the expected side that fits it best (a side seen in full keeps its length,
    one running out of view or away from the camera may be any longer side), or one shortfall
    weight per side (1 = seen in full, SHORTFALL_WEIGHT_AT_LEAST = a lower bound).
    `expected_m` may be several sizes (K, 3): the best of them. `excess_tol_m` (one for all sides
    or one per measured side): how much longer than the object a side may measure from the
    sensor's error alone (base.range_smear_sides_m); only an excess beyond it costs.
    `upright`: both sizes are (horizontal, horizontal, vertical), and only the two horizontal
    sides are paired freely: the height is matched with the height."""
    a = np.asarray(measured_m, float).reshape(3)
    b = np.asarray(expected_m, float).reshape(-1, 3)
    at_least = np.asarray(at_least)
    weights = np.broadcast_to(np.where(at_least, SHORTFALL_WEIGHT_AT_LEAST, 1.0) if at_least.dtype == bool
                              else at_least.astype(float), (3,))
    tol = np.broadcast_to(np.asarray(excess_tol_m, float), (3,))
    if upright:
        b = b[:, _UPRIGHT_PERMUTATIONS]                           # (K, 2, 3)
    elif np.all(weights == weights[0]) and np.all(tol == tol[0]):
        a, b = np.sort(a), np.sort(b, axis=1)[:, None]           # (K, 1, 3)
    else:
        b = b[:, _PERMUTATIONS]                                   # (K, 6, 3)
    # The thinnest dimension gets an absolute floor so a 1.5 cm book is not judged at 1 mm.
    floor = np.maximum(b, 0.02)
    rel = np.where(a < b, weights * (a - b), np.maximum(a - tol - b, 0.0)) / floor
    return float(np.abs(rel).mean(axis=2).min())


_PERMUTATIONS = np.array(list(itertools.permutations(range(3))))
_UPRIGHT_PERMUTATIONS = np.array([[0, 1, 2], [1, 0, 2]])
