"""Naming anonymous clusters: match them to the objects the cell's catalogue lists (its enrolled
library: most of them absent from any one scene) by size and colour, one-to-one, refusing a name
that another listed object fits nearly as well; recognise unlisted books by ESPIRE's book
dimensions; and give every detection a unique, stable id."""
from __future__ import annotations

import functools
import re
from dataclasses import replace

import numpy as np
from scipy.optimize import linear_sum_assignment

from spatial_manip.geometry.relations import share_inside
from spatial_manip.perception.attributes import (ACHROMATIC, BOOK_SIZE_RANGES_M, BOOK_TOLERANCE_M,
                                                  SHORTFALL_WEIGHT_AT_LEAST, book_size_class, canonical_colour,
                                                  colour_name, hue_clearance, hues_alike, seen_colour_distance,
                                                  size_mismatch)
from spatial_manip.perception.base import Detection, ExpectedObject, over_any
from spatial_manip.plurals import plurals
from spatial_manip.scene import Scene
from spatial_manip.transforms import box_corners

_UNMATCHED = 1e6
FALLBACK_LABEL_COST = 0.15   # see assign_labels
SIZE_COST_WEIGHT = 2.0       # match_cost's weight of the size mismatch against the colour distance
# A name is given only when every listed object of another name costs this much more: a cluster
# that fits two objects about equally is left unnamed rather than guessed (the planner then says
# it does not see the object, which a person can fix; a wrong name moves the wrong object).
NAME_MARGIN = 0.08
# A name is given only when it fits at most this well (match_cost; the gate, max_cost, is wider):
# a cluster that fits its best entry worse is a piece too small or too hidden to tell, and a
# weak name was wrong more often than right on distant pieces (a floor lamp's 22 cm shaft named
# the marble bust at 0.79, a 5 cm piece of a book the bottle at 0.61; reference_bench, seeds
# 81-83, realistic). It is refused with its candidates, which the instruction's words may name.
SURE_COST = 0.5
# A refused detection lists at most this many candidates (one entry per label, best first): the
# trace shows them, the depth may settle between them (catalogue_fit.settle_names_by_depth), and
# the instruction's words choose only between the two it fits surely and about equally (name_from_words).
MAX_CANDIDATES = 4
# A detection shows an object's shape only when its thinnest side spans at least this share of the
# entry's thinnest side: a thinner one is a sliver (a shelf board's edge seen at 2.5 m, 0.8-0.9 cm
# thick, read as a 16-25 cm strip with its height a lower bound, fit the armento rider 0.37 and the
# teddy bear 0.32: place-99-00002), whose name would be all extrapolation. Books are excepted: they
# are thin, and a book-shaped sliver is called "book" anyway. A distant painting seen as a 6 cm deep
# slab keeps its name (the mona lisa's thinnest side, its easel's depth, is 24 cm: place-82-00001).
SLIVER_SHARE = 0.15
# What a shortfall costs on a side seen in full of an object that runs out of view elsewhere: a
# round object cut by one edge is cut along every side a little.
TRUNCATED_SIDE_WEIGHT = 0.6
# A detection whose centre is this far outside every work surface's footprint is beyond it: the
# centre of an object at a surface's edge, seen in part, can lie a little past the edge.
WORK_AREA_MARGIN_M = 0.10
# A named detection whose measured box spans less than this share of its entry's longest side
# is named by extrapolation; next to a larger named detection it is a piece of that object
# (one_name_per_object).
PIECE_SHARE = 0.5
# Two named boxes sharing this share of the smaller's volume are one object (one_name_per_space).
SHARED_SPACE = 0.5
# A detection whose measured box lies this share inside a larger detection's box, grown by
# WITHIN_GROW_M (a voxel, a book's page edge and the depth's noise there), is a part of that
# object's space and takes no catalogue name of its own (parts_in_space).
WITHIN_SHARE = 0.9
WITHIN_GROW_M = 0.02
# Two detections off the work surface, one standing on the other (the upper's bottom within this
# of the lower's top, each centre over the other's footprint), are pieces of one object (stacked_pieces).
STACK_GAP_M = 0.08
# A detection left unnamed lists the non-book entries it fits surely (sure_fit) within this of its
# best fit (`extra["sure_names"]`) that no other detection fits within the gate: the instruction's
# words may name it after one of them (name_from_words). A reference on a shelf
# seen in part, behind a book or cut by a board, fits smaller objects a little better than itself:
# a newton's cradle seen as a 7 x 4 x 13 cm column fits a bottle 0.15, a mug 0.22 and itself 0.28
# (place-85-00000, -00005, -00006), a bicycle sculpture behind a standing book fits a book 0.16, a
# pillar bookend 0.21 and itself 0.37 (place-68-00010).
WORDS_SURE_MARGIN = 0.25
# ... and that no other detection fits within this of its own fit: one that fits the object about
# as well could be it, and the words would guess (a brown book on the shelf's bottom row fit the
# armento rider 0.42, the rider's own piece 0.56: place-68-00014). One that fits it far worse is
# no contender, even within the gate: a newton's cradle on the bottom shelf behind the robot's
# stand, seen as a 7 x 4 x 13 cm column, fits itself 0.26, and the black book standing on a shelf
# above, named a book at 0.26, fits the cradle 0.80; the cradle was left nameless (bench
# place-85-00000, -00002). On another frame of place-86-00005 the cradle fit itself 0.22, two books 0.63 and 0.68.
WORDS_ALONE_MARGIN = 0.3
# A book's points lie within its thickness of one plane however it leans (_flat_as_a_book); they
# may spread this much more (a voxel of depth-edge points the box fit kept), besides the range
# noise at the detection's range (extra["range_smear_m"]). The spread is read between the
# SLAB_QUANTILE of the points and its complement, from at least SLAB_MIN_POINTS points.
SLAB_ALLOWANCE_M = 0.01
SLAB_QUANTILE = 0.02
SLAB_MIN_POINTS = 30


def match_cost(det: Detection, exp: ExpectedObject, *, noise_allowance: bool = True, upright: bool = False) -> float:
    """0 = perfect; above `max_cost` = not this object. Size weighs more than colour, since
    lighting moves colour more than depth moves size. `noise_allowance`: a side may measure
    longer than its object by the range noise along it (`extra["range_smear_m"]`); without it,
    every excess costs (sure_fit). `upright`: seen in an upright ("yaw") box, the entry's height
    (its last side, as enrolled standing as it rests; a book's leaning_extents' last side) is
    matched with the box's height, and only the two sides across with any order. An entry
    enrolled turned all the way round (`exp.views`) costs what its best view costs, each view's
    size and colour together (besides the fused size with the first view's colour): a scene sees
    one side of it, which one view showed (a mug with its handle in view, a bottle's back). The
    best size of one view and the best colour of another describe no side of the object: the
    yellow milk carton's dim end's colour and its long side fit the demo's rubik's cube, which
    took its name."""
    leaning = exp.category == "book" and det.box.mode != "full" and _flat_as_a_book(det, exp.size_m)
    pairs = ((exp.size_m, exp.colour), *exp.views) if exp.views and not leaning else ((exp.size_m, exp.colour),)
    upright = upright and det.box.mode == "yaw"
    at_least = _shortfall_weights(det)
    smear = (det.extra.get("range_smear_m") or 0.0) if noise_allowance else 0.0
    best = np.inf
    for size_m, colour in pairs:
        cost, terms = 0.0, 0
        if size_m is not None:
            sizes = _leaning(tuple(size_m)) if leaning else size_m
            cost += SIZE_COST_WEIGHT * size_mismatch(det.box.size, sizes, at_least=at_least, excess_tol_m=smear,
                                                     upright=upright)
            terms += 1
        if colour is not None:
            cost += seen_colour_distance(colour, det.mean_rgb)
            terms += 1
        if exp.category == "book" and book_size_class(det.box.size) is None and size_m is None:
            cost += 1.0     # a book without listed size must at least look like one
        best = min(best, cost if terms else 0.5)
    return float(best)


def _shortfall_weights(det: Detection):
    """What a side of `det`'s box measured short of an entry's costs (size_mismatch's `at_least`):
    per side when the segmenter says which sides are lower bounds, else all or none; the mask's
    border is scanned once, not per leaning extent."""
    sides = det.extra.get("lower_bound_sides")
    if sides is None:
        return det.truncated
    return np.where(sides, SHORTFALL_WEIGHT_AT_LEAST, TRUNCATED_SIDE_WEIGHT if det.truncated else 1.0)


def sure_fit(det: Detection, exp: ExpectedObject, sure_cost: float = SURE_COST, cost: float | None = None) -> bool:
    """Whether `det` fits the non-book entry `exp` well enough to take its name (a book entry
    always may: a book-shaped cluster is called "book" anyway): within `sure_cost` (`cost`, its
    match_cost, when known) with no side forgiven the range noise's lengthening and its height
    matched with the entry's (match_cost's `upright`), and not a sliver of it (SLIVER_SHARE).
    A 9 x 3.3 x 10.4 cm piece of a mug fit the 10.9 x 9.8 x 4.7 cm yellow bowl 0.43 with its
    height taken for the bowl's width (objects-76-00014): a bowl does not stand 10 cm high. Nor is
    a fit to an irregular object whose depth the detection's points do not show (_flatter_than),
    nor to one the detection stands taller than (_taller_than).
    The noise allowance keeps a close object from losing its name to a larger one its noisy
    sides happen to fit (the rubik's cube and the carton), but a fit that
    only the allowance makes good is the noise's, not the object's: a 131-pixel piece of a teddy
    bear 2.56 m away, 7.2 x 4.8 x 2.9 cm with up to 2.5 cm forgiven a side, fit the 5.5 x 5.4 x
    13.5 cm orange juice carton 0.35 by its colour, and 0.56 with its sides as measured
    (place-99-00001). Nor is a fit whose hue the detection's pixels contradict (hue_contradicts)."""
    if exp.category == "book":
        return True
    if (match_cost(det, exp) if cost is None else cost) > sure_cost:
        return False
    if _sliver(det, exp) or hue_contradicts(det, exp) or _flatter_than(det, exp) or _taller_than(det, exp):
        return False
    return match_cost(det, exp, noise_allowance=False, upright=True) <= sure_cost


# What one view sees of an irregular object (a statue, a plant, a mug, a scale: enrolled with
# shape "irregular") spans some of its depth: the surface it turns to the camera is no plane. A
# detection whose points lie closer to one plane (flattest_spread_m) than this share of the
# entry's thinnest side, in every enrolled view, is something flat, not that object: book spines
# standing together on a distant shelf, one cluster whose points spread under 2 cm, their blended
# colour an irregular statue's, fit the statue with two sides lower bounds and were named it (the
# regression frames in test/perception/frames say which).
FLAT_SHARE = 0.25


def _flatter_than(det: Detection, exp: ExpectedObject) -> bool:
    """Whether `det`'s points are flatter than any view of the irregular `exp` (FLAT_SHARE). False
    for other shapes (a box seen face-on shows a plane), without a listed size, or too few points."""
    if exp.shape != "irregular" or exp.size_m is None:
        return False
    spread = flattest_spread_m(det)
    thinnest = min(float(np.min(size)) for size in _enrolled_sizes(exp))
    return spread is not None and spread < FLAT_SHARE * thinnest


def _enrolled_sizes(exp: ExpectedObject) -> tuple:
    """Every size enrolment measured of `exp`: its fused size and each view's."""
    return (exp.size_m, *(v[0] for v in exp.views))


# An object stands as tall as it was enrolled standing, seen from any side (its last side, in its
# fused size and every view's): an upright ("yaw") box taller than that by more than this share,
# past the range noise's smear along its height, is not that object. A side of the footprint may
# measure longer than enrolled (a plant's foliage turned), the height may not: a distant red clock
# seen as a 16 cm column fit a 13 cm red mug's side better than its own entry, and was named the mug
# (a regression frame in test/perception/frames).
TALLER_SHARE = 0.12


def _taller_than(det: Detection, exp: ExpectedObject) -> bool:
    """Whether `det`'s upright box stands taller than `exp` in every enrolled size (TALLER_SHARE).
    False for another box, or without a listed size."""
    if exp.size_m is None or det.box.mode != "yaw":
        return False
    smear = det.extra.get("range_smear_m") or (0.0, 0.0, 0.0)
    tallest = max(float(size[2]) for size in _enrolled_sizes(exp))
    return float(det.box.size[2]) - float(smear[2]) > (1.0 + TALLER_SHARE) * tallest


def hue_contradicts(det: Detection, exp: ExpectedObject) -> bool:
    """Whether the hue most of `det`'s pixels take (`det.colour`, attributes.main_colour) is none
    of the hues `exp` was enrolled with (its colour's name and each view's) nor next to one
    (attributes.hues_alike). match_cost weighs the detection's median colour, and the median of a
    two-coloured object seen in another share than enrolled lies between its parts' hues, where a
    third object's colour may be: the philadelphus shrub cut by the image's edge, its pixels 56%
    green leaves and 43% brown pot, read 88/79/42 (olive), which fit the mona lisa's 117/105/57
    (brown) far better than the shrub's own green 74/138/42. An entry enrolled without a colour,
    or with one without a hue (white, gray, black: shading and light move between them),
    contradicts nothing; nor do pixels mostly white or black (glare, shade). Pixels mostly gray
    contradict an entry enrolled only with clear hues (_clearly_hued): dimmed, a hue darkens
    towards black keeping its name (a 173/139/69 yellow reads brown at a third of its light),
    it does not turn gray. Three books' spines standing together on a shelf 2.6 m away, gray,
    white and yellow (61% of the pixels without a hue), were one 5 x 3.4 x 18.7 cm cluster whose
    median colour, 255/212/91, fit the yellow picture frame (173/139/69) seen edge-on 0.28 and a
    book 0.41, and were named the frame (place-99-00000)."""
    if canonical_colour(det.colour) is None or det.colour in ACHROMATIC - {"gray"}:
        return False
    enrolled = [c for c in (exp.colour, *(v[1] for v in exp.views if len(v) > 1)) if c is not None]
    names = {canonical_colour(c) if isinstance(c, str) else colour_name(c) for c in enrolled}
    if not names or None in names or names & ACHROMATIC:
        return False
    if det.colour == "gray":
        return _clearly_hued(enrolled, exp.colours)
    return not any(hues_alike(det.colour, n) for n in names)


# An enrolled colour is clearly hued when its C*/L* is at least this many times the achromatic
# boundary (attributes.CHROMA_RATIO_MIN, attributes.hue_clearance): it keeps a hue losing half its
# chroma to the cell's light, glare or the camera's colour noise, so its pixels do not read gray.
CLEAR_HUE_CLEARANCE = 2.0


def _clearly_hued(colours, names) -> bool:
    """Whether every enrolled colour (a name, or 0-255 RGB) has a clear hue, a chromatic name or
    an RGB CLEAR_HUE_CLEARANCE times clear of the achromatic boundary, and none of the names
    enrolment read of the entry's pixels (`names`, ExpectedObject.colours) is white, gray or
    black. The white porcelain mug's median colour, 177/163/126, reads yellow (C*/L* 0.31, just
    over the boundary's 0.28) and its pixels yellow and white: shaded, it reads gray, its own
    colour. The lady with an ermine (69/57/45, 0.40) and the bicycle sculpture (32/32/40, 0.46)
    are all but gray."""
    if any(canonical_colour(n) in ACHROMATIC for n in names):
        return False
    for c in colours:
        if isinstance(c, str):
            if canonical_colour(c) in ACHROMATIC:
                return False
        elif hue_clearance(c) < CLEAR_HUE_CLEARANCE:
            return False
    return True


def _piece_of(det: Detection, exp: ExpectedObject) -> bool:
    """Whether `det`'s measured box spans less than PIECE_SHARE of `exp`'s longest side: a name it
    took would extrapolate the object from a piece (as one_name_per_object says of a piece beside
    its whole). Seen with its sides lower bounds (cut by the image's edge), a shortfall costs a
    quarter, so any larger entry of about its colour fits such a piece within SURE_COST, its size
    telling nothing: a shaded 10.5 x 7.2 x 2.7 cm piece of a distant copper scale in the image's
    corner fit the 41 x 16 x 42 cm cheval mirror 0.44 and the scale 0.54, and was named the mirror
    (place-84-00015). assign_labels names no piece so; the words still may (name_from_words: a
    tie, or the one detection that fits the named object at all: the mona lisa seen from behind
    as its 18 cm canvas, pick-66-00001). Nor is an upright box whose height is a lower bound (its
    top hidden or cut by the image's edge) and spans less than PIECE_SHARE of the entry's height
    (_hidden_height_piece)."""
    return is_piece(det.box.size, exp.size_m) or _hidden_height_piece(det, exp)


def _hidden_height_piece(det: Detection, exp: ExpectedObject) -> bool:
    """Whether `det`'s upright ("yaw") box has a height that is a lower bound (`lower_bound_sides`)
    spanning less than PIECE_SHARE of the height `exp` was enrolled standing at (its tallest
    enrolled size's last side): the rest of the object would stand where nothing is seen, and a
    shortfall there costs match_cost a quarter, so any taller entry of its colour fits it: a
    distant plant's pot under its foliage, its top hidden, fit a taller upright entry of its colour
    best and was named it. An irregular entry (a plant) is exempt: its foliage, its pot hidden below
    it, shows the colour and breadth it was enrolled by. Both cases are regression frames in
    test/perception/frames."""
    sides = det.extra.get("lower_bound_sides")
    if exp.size_m is None or exp.shape == "irregular" or det.box.mode != "yaw" or sides is None or not sides[2]:
        return False
    tallest = max(float(size[2]) for size in _enrolled_sizes(exp))
    return float(det.box.size[2]) < PIECE_SHARE * tallest


def is_piece(measured_size, whole_size) -> bool:
    """Whether a box of `measured_size` spans less than PIECE_SHARE of the longest side of
    `whole_size` (an entry's size; None: unknown, no piece)."""
    return whole_size is not None and float(np.max(measured_size)) < PIECE_SHARE * float(np.max(whole_size))


def _sliver(det: Detection, exp: ExpectedObject) -> bool:
    """Whether `det` is too thin to show `exp`'s shape (SLIVER_SHARE), across the line of sight: a
    face seen head-on (`extra["depth_unseen"]`, classical.py) is thin along it, its depth unseen,
    and so is a slab whose thinnest side runs along the line of sight (`extra["along_sight"]`,
    base.along_line_of_sight): one view measures only its near face there (the mona lisa 1.4 m
    away, cut by the image's top edge, seen from behind as its 2.5 cm thick canvas, pick-66-00001;
    the lady with an ermine as two 3 cm slabs, pick-66-00005). A board's edge is thin across it."""
    if exp.size_m is None or det.extra.get("depth_unseen"):
        return False
    k = int(np.argmin(det.box.size))
    if float(det.box.size[k]) >= SLIVER_SHARE * float(np.min(exp.size_m)):
        return False
    along = det.extra.get("along_sight")
    return not (along is not None and along[k])


def leaning_extents(size_m, tilts_deg=range(0, 91, 5)) -> list[np.ndarray]:
    """The upright box around a book of `size_m` leaning at each tilt (about its width axis,
    from standing to lying): what an upright fit measures when only the book's edges are seen
    (a book leaning towards the camera shows its top and sides, not its cover)."""
    W, H, L = np.sort(np.asarray(size_m, float))[[1, 0, 2]]     # width, thickness, length
    out = []
    for t in np.radians(list(tilts_deg)):
        s, c = np.sin(t), np.cos(t)
        out.append(np.array([W, L * s + H * c, L * c + H * s]))
    return out


@functools.lru_cache(maxsize=256)
def _leaning(size_m: tuple) -> np.ndarray:
    return np.array(leaning_extents(size_m))


def _flat_as_a_book(det: Detection, size_m) -> bool:
    """Whether `det`'s points could be a book of `size_m` leaning in its upright box: however a
    book leans, all of it lies within its thickness of one plane (its covers'), so its points
    spread no more than that (plus the range noise and SLAB_ALLOWANCE_M) across their flattest
    direction. A chunky object an upright box around a leaning book happens to fit is not one:
    the teddy bear seen in full, 16.8 x 11 x 23.6 cm, fit the 23 x 15.4 x 2.6 cm brown book leaning
    at 20 degrees 0.144, better than its own entry 0.153, but its points spread 6.7 cm across
    (pick-89-00008). True without points or a listed size (nothing tells)."""
    spread = flattest_spread_m(det)
    if spread is None or size_m is None:
        return True
    noise = max(det.extra.get("range_smear_m") or [0.0])
    return spread <= float(np.min(size_m)) + noise + SLAB_ALLOWANCE_M


def flattest_spread_m(det: Detection) -> float | None:
    """How far `det`'s points spread across their flattest direction (the least principal axis;
    between the SLAB_QUANTILE and its complement, so stray flying pixels do not count); measured
    once and kept in `extra["flattest_spread_m"]`. None with too few points."""
    if "flattest_spread_m" not in det.extra:
        p = det.box.points
        spread = None
        if p is not None and len(p) >= SLAB_MIN_POINTS:
            centred = np.asarray(p, float) - np.mean(p, axis=0)
            normal = np.linalg.eigh(centred.T @ centred)[1][:, 0]
            lo, hi = np.quantile(centred @ normal, [SLAB_QUANTILE, 1.0 - SLAB_QUANTILE])
            spread = float(hi - lo)
        det.extra["flattest_spread_m"] = spread
    return det.extra["flattest_spread_m"]


def on_work_surface(det: Detection, work_areas) -> bool:
    """Whether the detection's centre lies over a work surface's footprint (within the margin)."""
    return over_any(det.box.center, work_areas, WORK_AREA_MARGIN_M)


def placement_fits(det: Detection, exp: ExpectedObject, work_areas) -> bool:
    """An expected object said to stand on the work surface is not a detection beyond it, nor the
    other way round: a distant floor lamp seen in part is not the picture frame on the table
    whose size it happens to match. True when the config says nothing."""
    if exp.placement is None or not work_areas:
        return True
    return on_work_surface(det, work_areas) == (exp.placement == "near")


def assign_labels(detections: list[Detection], expected, *, max_cost: float = 0.8, work_areas=(), shelves=(),
                  name_margin: float = NAME_MARGIN, sure_cost: float = SURE_COST) -> list[Detection]:
    """Label detections in place from `expected` (one-to-one, minimum total cost, where each
    stands as `placement_fits`, leaving a detection unnamed costing `max_cost`; a name another
    label fits within `name_margin` is refused, or a book within SHELF_BOOK_MARGIN_FACTOR times it
    for a detection standing in one of the `shelves` (boxes), and a detection whose best fit within `max_cost`
    is weaker than `sure_cost` (a book's excepted) is left unnamed, their candidates kept for
    the instruction's words), then fall back to "book" for book-shaped clusters on a work surface and "object"
    otherwise; set book size classes and ids."""
    expected = list(expected or ())
    if detections and expected:
        cost = np.array([[match_cost(d, e) if placement_fits(d, e, work_areas) else _UNMATCHED for e in expected]
                         for d in detections])
        books = np.array([e.category == "book" for e in expected])
        # each detection's best sure fit of an entry other than a book's: of two pieces filling one
        # space, the one that shows an object well enough to name it is that object (parts_in_space)
        sure_any = (cost <= max_cost) & _sure_fits(detections, expected, cost, sure_cost) & ~books[None, :]
        parts = parts_in_space(detections, np.where(sure_any, cost, np.inf).min(axis=1))
        cost[sorted(parts)] = _UNMATCHED
        # A book entry left unmatched costs the planner little (a book-shaped cluster is called
        # "book" anyway, below); an object the catalogue lists once is lost without its label. So
        # a cluster that fits a leaning book and another object about equally is that object in
        # the assignment (not in the gate).
        fallback = np.array([FALLBACK_LABEL_COST if e.category == "book" else 0.0 for e in expected])
        # A fit that is not sure (weaker than sure_cost, good by the noise allowance alone, or a
        # sliver: sure_fit) names nothing, and takes no entry from a detection that fits it better.
        # A book entry keeps the gate: a book-shaped cluster is called "book" anyway.
        sure = (cost <= max_cost) & _sure_fits(detections, expected, cost, sure_cost)
        # Nor does a piece's (_piece_of): its name would rest on its colour; the words may still name
        # it (ties below, sure_names) when no other detection fits that object.
        pieces = np.array([[e.category != "book" and _piece_of(d, e) for e in expected] for d in detections])
        gated = np.where(sure & ~pieces, cost + fallback, _UNMATCHED)
        rows, cols = _assign_or_leave(gated, max_cost)
        # an entry the assignment gave to another detection is accounted for: no rival
        taken = {int(c) for c in cols}
        taker = dict(zip(cols, rows))
        for r in sorted(set(range(len(detections))) - set(rows)):
            _refuse_weak(detections[r], np.where(cost[r] <= max_cost, cost[r], _UNMATCHED), sure[r], expected, taken,
                         sure_cost, pieces[r])
        for r, c in zip(rows, cols):
            # on the match cost alone: the assignment's fallback cost says a book entry left over is
            # cheap, not that the cluster looks less like a book (a book on its wedge fits the
            # pillar bookend of a library about as well as a book)
            within = np.where(cost[r] <= max_cost, cost[r], _UNMATCHED)
            # ... by a detection that fits it at least as well: a scrap that took a painting's
            # entry does not make the painting, which fits it better, another painting. (A book's
            # entry stays taken: a library lists many books alike, and a white newton's cradle
            # fits the white book's entry a standing white book took.)
            held = {k for k in taken if books[k] or k not in taker or cost[taker[k], k] <= cost[r, k]}
            # (a piece's fit names nothing here either: a 5.8 cm cube in a shelf's shade, a piece of
            # the 13.5 cm carton's length, took the carton's name from a book's, place-101-00003)
            better = _rival(np.where(sure[r] & ~pieces[r], within, _UNMATCHED), expected, c, taken - {int(c)})
            if better is not None and within[better] + name_margin <= cost[r, c]:
                # the fallback cost decides near-ties only: a book entry (no other detection's)
                # that fits clearly better than the object the assignment chose is the name (a black
                # book leaning on its wedge fits its entry 0.12 and the bicycle sculpture 0.22:
                # pick-53-00011)
                taken.discard(int(c))
                taken.add(int(better))
                held = (held - {int(c)}) | {int(better)}
                c = better
            against = _upright_books(detections[r], within, expected, c)
            rival = _rival(against, expected, c, held - {int(c)})
            standing = _standing_cost(detections[r], expected[c], cost[r, c])
            close = rival if rival is not None and against[rival] < standing + \
                name_margin_for(detections[r], expected[c], name_margin) else None
            if close is None and over_any(detections[r].box.center, shelves):
                close = _shelf_book_rival(against, expected, c, standing, name_margin)
            if close is not None:
                detections[r].extra["refused"] = f"{expected[c].label} or {expected[close].label}"
                detections[r].extra["candidates"] = (
                    [_candidate(expected[k], tie=bool(sure[r, k]), cost=within[k]) for k in (c, close)]
                    + [_candidate(expected[k], cost=within[k]) for k in _further(within, expected, (c, close), taken)])
                continue
            _name(detections[r], expected[c], float(max(0.05, 1.0 - cost[r, c] / max_cost)))
            if rival is not None:
                # what the depth may still prefer (catalogue_fit.settle_names_by_depth)
                detections[r].extra["runner_up"] = _candidate(expected[rival])
        one_name_per_object(detections, {e.id or e.label: e for e in expected})
        stacked_pieces(detections, {e.id or e.label: e for e in expected}, work_areas, max_cost)
        _sure_names_for_words(detections, expected, np.where(cost <= max_cost, cost, _UNMATCHED), sure, sure_cost)
        _gate_fits(detections, expected, np.where(cost <= max_cost, cost, _UNMATCHED))
    for d in detections:
        if "matched" not in d.extra:
            # books lie on the work surface; a book-sized piece beyond it is part of something else
            beyond = work_areas and not on_work_surface(d, work_areas)
            if book_shaped(d) and not beyond:
                d.label, d.category = "book", "book"
            d.score = min(d.score, 0.5)
        if d.category == "book":
            d.size_class = book_size_class(d.box.size, at_least=d.truncated)
    unique_ids(detections)
    return detections


# A detection with no side measured in full (each a lower bound: cut by the image's edge, hidden,
# or along the line of sight) fits every larger entry of about its colour, so an object's name for
# it needs this many times the margin: a floor lamp's shade cut by the image's top fit the marble
# bust 0.31 and the lady with an ermine 0.41 (pick-97-00002); a marble bust seen in part fit a
# floor lamp 0.21 and itself 0.32 (pick-99-00006). A book's name keeps the margin: a book-shaped
# cluster is called "book" anyway, and a black book leaning on its wedge, every side a lower
# bound, fits its entry 0.12 and the bicycle sculpture 0.22 (pick-53-00011).
UNMEASURED_MARGIN_FACTOR = 2.0


# A shelf holds books above all, and the library lists each other object once: a detection standing
# in a shelf that a book fits nearly as well as another object is more likely a book (or books
# standing together), so the other name must beat every book's fit by this many times the margin.
# Books standing together on a shelf 2.6 m away, one 11.4 x 6.7 x 23.3 cm cluster, fit another
# entry 0.19 and a book 0.31 (frame place-125-00001); a book's spine 2.2 m away, 2.8 x 2.3 x
# 12.7 cm, fit another entry 0.18 and a book 0.33 (frame place-126-00004): a gap of 0.15, inside
# twice the margin (0.16) by only 0.01: the factor has little room below 2. On a table,
# where the cell's books lie among its other objects, the plain margin stands: an object seen in
# full there may fit a book only 0.09 worse than itself. Refused, the name stays a candidate the
# instruction's words may choose (name_from_words).
SHELF_BOOK_MARGIN_FACTOR = 2.0


def _shelf_book_rival(against: np.ndarray, expected, chosen: int, standing: float, name_margin: float) -> int | None:
    """The book entry that fits a detection standing in a shelf (`against`: its costs as rivals,
    _UNMATCHED out of the gate) within SHELF_BOOK_MARGIN_FACTOR times `name_margin` of its name
    after the non-book entry `chosen` (costing `standing`), or None. Every book entry counts,
    taken or not: a library lists many books alike."""
    if expected[chosen].category == "book":
        return None
    books = [k for k, e in enumerate(expected) if e.category == "book" and against[k] < _UNMATCHED]
    best = min(books, key=lambda k: against[k], default=None)
    if best is None or against[best] >= standing + SHELF_BOOK_MARGIN_FACTOR * name_margin:
        return None
    return best


def name_margin_for(d: Detection, entry: ExpectedObject, name_margin: float) -> float:
    """The margin by which `d`'s name after `entry` must beat another label's fit
    (UNMEASURED_MARGIN_FACTOR)."""
    unmeasured = no_side_measured(d) and entry.category != "book"
    return name_margin * (UNMEASURED_MARGIN_FACTOR if unmeasured else 1.0)


def no_side_measured(d: Detection) -> bool:
    """Whether every side of `d`'s box is a lower bound (`extra["lower_bound_sides"]`, one flag per
    side): the piece of an object hidden all round, which may lie anywhere in the object."""
    sides = d.extra.get("lower_bound_sides")
    return sides is not None and all(sides)


def book_shaped(d: Detection) -> bool:
    """Whether `d`'s box is a book's (book_size_class), each side allowed to measure longer than
    the book by the range noise along it (`extra["range_smear_m"]`, as match_cost allows): a
    medium book standing 1.4 m away, 17 cm wide, measured 19.1 cm across with its flying pixels,
    1 mm past the class's tolerance; left between a book and the armento rider and not called a
    book, it was not counted among the books, and "the third leftmost book" took the fourth
    (pick-77-00001)."""
    if book_size_class(d.box.size) is not None:
        return True
    smear = d.extra.get("range_smear_m")
    if smear is None:
        return False
    order = np.argsort(np.asarray(d.box.size, float))[::-1]         # length, width, thickness
    longest, allowed = np.asarray(d.box.size, float)[order], np.asarray(smear, float)[order]
    tol = np.asarray(BOOK_TOLERANCE_M, float)
    for ranges in BOOK_SIZE_RANGES_M.values():
        lo, hi = np.array([r[0] for r in ranges]), np.array([r[1] for r in ranges])
        if np.all((longest >= lo - tol) & (longest - allowed <= hi + tol)):
            return True
    return False


def _assign_or_leave(gated: np.ndarray, unnamed_cost: float) -> tuple[list[int], list[int]]:
    """The minimum-cost one-to-one assignment of detections (rows) to entries (columns of `gated`,
    _UNMATCHED where an entry is out of the gate) in which leaving a detection unnamed costs
    `unnamed_cost`: the rows named and their entries. Without that choice every detection the
    gate allows must take some entry, and a stray piece that fits one entry only takes it from
    the object that fits it far better, which then takes a worse name (a distant decorative disk
    named a floor lamp while the disk's entry went to a 10 cm piece of it, pick-81-00007; a
    painting named after its neighbour while its own entry went to a 7 cm scrap, place-82-00001)."""
    n, m = gated.shape
    leave = np.full((n, n), _UNMATCHED)
    np.fill_diagonal(leave, unnamed_cost)
    rows, cols = linear_sum_assignment(np.hstack([gated, leave]))
    named = [(int(r), int(c)) for r, c in zip(rows, cols) if c < m and gated[r, c] < _UNMATCHED]
    return [r for r, _ in named], [c for _, c in named]


def _sure_fits(detections, expected, cost: np.ndarray, sure_cost: float) -> np.ndarray:
    """Per detection (row) and entry (column of `cost`, their match_costs): sure_fit."""
    sure = np.zeros(cost.shape, bool)
    for r, c in zip(*np.nonzero(cost <= sure_cost)):
        sure[r, c] = sure_fit(detections[r], expected[c], sure_cost, cost[r, c])
    books = np.array([e.category == "book" for e in expected])
    return sure | books[None, :]


def _refuse_weak(d: Detection, within: np.ndarray, sure: np.ndarray, expected, taken, sure_cost: float,
                 pieces: np.ndarray | None = None) -> None:
    """Leave `d` unnamed with the entries it fits within the gate (`within` < _UNMATCHED, best
    first, one per label, not `taken`) as its candidates, when its best fit is weaker than
    `sure_cost`, not sure (`sure` per entry: sure_fit) or a piece of it (`pieces` per entry:
    _piece_of); a detection whose good fits other detections took has no candidates."""
    shown = _further(within, expected, (), taken)
    if not shown:
        return
    best = shown[0]
    if within[best] <= sure_cost and sure[best] and pieces is not None and pieces[best]:
        e = expected[best]
        d.extra["refused"] = (f"{e.label} (a piece: {100 * float(np.max(d.box.size)):.0f} cm of its "
                              f"{100 * float(np.max(e.size_m)):.0f} cm, cost {within[best]:.2f})")
        d.extra["weak_fit"] = True          # nor does the depth name it (settle_names_by_depth)
        # the words may, between the entries it fits surely and about equally (a tie, its catalogue
        # box posed for it), when no whole detection fits the named one so (name_from_words)
        ties = {k for k in shown if sure[k] and within[k] <= sure_cost and within[k] < within[best] + NAME_MARGIN}
        d.extra["candidates"] = [{**_candidate(expected[k], tie=k in ties, cost=within[k]),
                                  **({"piece": True} if pieces[k] else {})}
                                 for k in shown]
        return
    if within[best] <= sure_cost and sure[best]:
        return
    d.extra["refused"] = f"{expected[best].label} (not a sure fit: cost {within[best]:.2f})"
    d.extra["weak_fit"] = True
    # ... but the words may name it after an entry nothing else in the library explains (_alone)
    alone = within[best] <= sure_cost and _alone(within, expected, best)
    d.extra["candidates"] = [{**_candidate(expected[k], tie=alone and k == best, cost=within[k]),
                              **({"piece": True} if pieces is not None and pieces[k] else {})}
                             for k in shown]


def _alone(within: np.ndarray, expected, best: int) -> bool:
    """Whether entry `best` is the only label that explains a detection (`within`: its match
    costs, _UNMATCHED out of the gate): every entry of another label, taken or not, fits it
    WORDS_ALONE_MARGIN worse. A fit that is not sure (a piece, a side short only because it is
    hidden) names nothing by itself; when the instruction names that object and no other
    detection fits it better (name_from_words), the words settle what the library cannot. A
    cheval mirror 2.4 m away, cut by the image's top edge and seen as its frame's light brown
    side, 12.7 x 3.4 x 18.8 cm, fit the mirror 0.36 (its colour exactly), a piece of it, and the
    next label, the copper scale, 0.68: "the book to the right of the cheval mirror" found no
    mirror (pick-99-00007)."""
    others = [within[k] for k, e in enumerate(expected) if e.label != expected[best].label and within[k] < _UNMATCHED]
    return all(c >= within[best] + WORDS_ALONE_MARGIN for c in others)


def _sure_names_for_words(detections, expected, within: np.ndarray, sure: np.ndarray, sure_cost: float) -> None:
    """Mark each detection left unnamed, and no piece of another (`piece_of`, `part_of_space`), with
    the non-book entries it fits surely within WORDS_SURE_MARGIN of its best fit, that no other
    detection fits within the gate and within WORDS_ALONE_MARGIN of its own fit (_contended), one
    per label, best first (`extra["sure_names"]`, each with its cost), for name_from_words. A
    6 x 3 x 28 cm brown book on the shelf's bottom row fit the armento rider surely (0.42), and the
    words named it so, 71 cm from the rider, whose own piece fit it within the gate only (0.56) and
    was named the picture frame (place-68-00014).
    `within`: match costs, _UNMATCHED out of the gate; `sure`: sure_fit per entry."""
    named = {d.extra["matched"] for d in detections if "matched" in d.extra}
    for r, d in enumerate(detections):
        if "matched" in d.extra or "piece_of" in d.extra or "part_of_space" in d.extra:
            continue
        row = within[r]
        if not np.any(row < _UNMATCHED):
            continue
        limit = min(sure_cost, float(np.min(row)) + WORDS_SURE_MARGIN)
        out, labels = [], set()
        for k in np.argsort(row, kind="stable"):
            e = expected[int(k)]
            if row[k] > limit:
                break
            if (e.category == "book" or not sure[r, k] or e.label in labels or (e.id or e.label) in named
                    or _contended(within[:, k], r)):
                continue
            labels.add(e.label)
            out.append({**_candidate(e), "cost": round(float(row[k]), 3)})
        if out:
            d.extra["sure_names"] = out


def _gate_fits(detections, expected, within: np.ndarray) -> None:
    """Mark each detection left unnamed with its best match cost of each non-book label it fits
    within the gate (`within`: match costs, _UNMATCHED out of it), entries taken by another
    detection included (`extra["gate_fits"]`): what the words weigh a tie against (name_from_words)."""
    for r, d in enumerate(detections):
        if "matched" in d.extra:
            continue
        fits: dict[str, float] = {}
        for k in np.flatnonzero(within[r] < _UNMATCHED):
            e = expected[int(k)]
            if e.category != "book":
                fits[e.label] = min(fits.get(e.label, np.inf), round(float(within[r, k]), 3))
        if fits:
            d.extra["gate_fits"] = fits


def _contended(costs: np.ndarray, r: int) -> bool:
    """Whether a detection other than `r` fits the entry (`costs`: each detection's match cost of
    it, _UNMATCHED out of the gate) within the gate and within WORDS_ALONE_MARGIN of `r`'s fit."""
    others = np.delete(costs, r)
    return bool(np.any((others < _UNMATCHED) & (others < costs[r] + WORDS_ALONE_MARGIN)))


def parts_in_space(detections: list[Detection], sure_costs=None) -> set[int]:
    """Indices of the detections that lie in a larger detection's space (WITHIN_SHARE of the box
    inside the other's, grown by WITHIN_GROW_M; larger = seen with more points): a piece of one
    object cut from it (a book's page block, which the colour split cuts from its cover, named a
    bowl by its size: pick-84-00002, pick-86-00006), not an object beside it. Each is marked with
    where it lies (`extra["part_of_space"]`); a book-shaped one is still called "book".
    Two pieces that fill one space (each inside the other's box so) are one object cut by colour,
    and the piece that fits an entry better (`sure_costs`: per detection, its best sure fit of an
    entry other than a book's, inf for none) is the object, the other its part, whichever was seen
    with more points: the bbq sauce bottle behind a mug was cut into its dark glass (109 points,
    a sure fit of the bottle, 0.17) and its beige label (154 points, no sure fit but a book's),
    and the glass was left unnamed inside the label's box (objects-82-00010)."""
    order = sorted(range(len(detections)), key=lambda i: _point_count(detections[i]), reverse=True)
    fits = np.full(len(detections), np.inf) if sure_costs is None else np.asarray(sure_costs, float)
    parts = set()
    for k, i in enumerate(order):
        if i in parts:
            continue
        piece = detections[i]
        for j in order[:k]:
            whole = detections[j]
            if j in parts or share_inside(piece.box, whole.box, WITHIN_GROW_M) < WITHIN_SHARE:
                continue
            if fits[i] < fits[j] and share_inside(whole.box, piece.box, WITHIN_GROW_M) >= WITHIN_SHARE:
                piece, whole, i = whole, piece, j       # one space: the piece that fits better is the object
            parts.add(i)
            piece.extra["part_of_space"] = (f"inside the box of a detection of {_point_count(whole)} points at "
                                            f"{np.round(whole.box.center, 2).tolist()}")
            break
    return parts


def one_name_per_object(detections: list[Detection], entries: dict) -> None:
    """Leave unnamed a named piece that is a piece of a larger named detection: one object found
    in two pieces (a distant painting's face and its easel's foot, a picture and the flying pixels
    at its edge) gets one name, and the second piece does not take a neighbour's (issue 37). A
    piece is one when its name is an extrapolation (its measured box spans less than
    PIECE_SHARE of its entry's longest side) and its centre lies within reach of the larger
    detection's entry (half that entry's diagonal from the larger's centre, where the rest of
    that object may stand). `entries` maps `extra["matched"]` to the entry."""
    named = [d for d in detections if d.extra.get("matched") in entries]
    by_size = sorted(named, key=_point_count, reverse=True)
    for k, piece in enumerate(by_size):
        own = entries[piece.extra["matched"]]
        if own.size_m is None or float(np.max(piece.box.size)) >= PIECE_SHARE * float(np.max(own.size_m)):
            continue
        for whole in by_size[:k]:
            entry = entries.get(whole.extra.get("matched"))    # a larger piece unnamed before has none
            if entry is None or entry.size_m is None:
                continue
            reach = 0.5 * float(np.linalg.norm(entry.size_m))
            if np.linalg.norm(np.asarray(piece.box.center) - whole.box.center) <= reach:
                _unname(piece, f"a piece of {whole.label} ({whole.id}): its {piece.label} name would extrapolate "
                               f"a {100 * float(np.max(piece.box.size)):.0f} cm piece within that object's reach")
                break


def stacked_pieces(detections: list[Detection], entries: dict, work_areas, max_cost: float) -> None:
    """Leave unnamed a named detection seen in part (a side a lower bound) that has another
    detection standing on it or under it off the work surface, when that other piece does not fit
    its name (cost above `max_cost`): the two are pieces of one object cut apart by colour, and a
    name only the hidden-topped piece fits is an extrapolation the rest contradicts (a distant
    shrub's brown pot, its height hidden by the green foliage on it, named the brown cheval mirror:
    pick-84-00004). Books are left alone: they lie on the work surface, stacked or not. The rest
    contradicts nothing when the box around both pieces measures the entry (its size mismatch
    within SURE_COST, as match_cost weighs it) and the named piece was seen with at least twice the
    other's points: the entry's colour, enrolled over the whole object, is then mostly the named
    piece's, and the name is the whole's, the other piece the rest of it. A juniper's green
    foliage 3.1 m away, 38.7 x 23.2 x 16.5 cm and 3528 points, fit its entry 0.15, and its brown
    pot under it, 1031 points, which fits no juniper, took the name away; the two measure
    38.7 x 23.2 x 33.6 cm against the entry's 38.7 x 19.2 x 33 (place-99-00004). The shrub's pot,
    about as large as its foliage, stays a piece whatever the two measure. A named piece standing
    on the other keeps its name whatever their points, when the two together measure the entry:
    its top is in view, so its name is no hidden-topped extrapolation, and what it stands on off
    the work surface is its own lower part. A philadelphus shrub's green foliage 2.4 m away,
    46 x 16 x 14 cm, fit its entry 0.29, and its brown pot under it, with more than half its
    points and fitting no shrub, took the name away (pick-104-00010). The name keeps the
    piece's own box: joined, the two outgrew the entry's enrolled footprint, and the depth renamed
    the juniper of place-99-00001 the larger magnolia (catalogue_fit.settle_names_by_depth)."""
    off_surface = [d for d in detections if not work_areas or not on_work_surface(d, work_areas)]
    for piece in off_surface:
        entry = entries.get(piece.extra.get("matched"))
        if entry is None or entry.category == "book" or not np.any(piece.extra.get("lower_bound_sides") or False):
            continue
        stacked = [o for o in off_surface if o is not piece and _stacked(piece.box, o.box)
                   and match_cost(o, entry) > max_cost]
        other = next((o for o in stacked if not _together_measure(piece, o.box, entry)
                      or 2 * _point_count(o) > _point_count(piece) and not _stands_on(piece.box, o.box)), None)
        if other is not None:
            _unname(piece, f"a piece of one object with the detection stacked on or under it at "
                           f"{np.round(other.box.center, 2).tolist()}, which does not fit the {entry.label}")


def _together_measure(piece: Detection, b, entry: ExpectedObject) -> bool:
    """Whether the box around `piece`'s box and box `b` (_size_around, in the piece's axes)
    measures `entry`'s size: its size mismatch, weighed as match_cost weighs it (a side the piece
    was seen short along, cut by the image's edge or hidden, a lower bound), within SURE_COST.
    Without a listed size, no. Weighed as if seen in full, a magnolia 2.5 m away cut by the
    image's edge, its foliage (5809 pixels, fitting its entry 0.19) on its pot (467), measured
    33 x 30 x 41 cm against the entry's 54 x 25 x 49 (0.53), and lost its name (place-102-00007)."""
    if entry.size_m is None:
        return False
    size = _size_around(piece.box, b)
    return SIZE_COST_WEIGHT * size_mismatch(size, entry.size_m, at_least=_shortfall_weights(piece)) <= SURE_COST


def _size_around(a, b) -> np.ndarray:
    """The sides of the box around boxes `a` and `b`, in `a`'s axes."""
    local = np.vstack([box_corners(box.center, box.size, box.rotation) for box in (a, b)]) @ np.asarray(a.rotation, float)
    return local.max(axis=0) - local.min(axis=0)


def _stacked(a, b) -> bool:
    """One of two boxes stands on the other (`_stands_on`)."""
    return _stands_on(a, b) or _stands_on(b, a)


def _stands_on(a, b) -> bool:
    """Box `a` stands on box `b`: its bottom within STACK_GAP_M of b's top (and above b's middle),
    each centre over the other's footprint (half its longer side). Looser than geometry.support's
    rest (the bottom's middle on the carrier's top face), as pieces of one object cut apart by
    colour are: a shrub's foliage on its pot has its middle 4.7 cm off the pot's top (pick-104-00010)."""
    def z_span(box):
        half = float(np.abs(np.asarray(box.rotation, float)[2]) @ np.asarray(box.size, float)) / 2
        return box.center[2] - half, box.center[2] + half
    bottom, below_top = z_span(a)[0], z_span(b)[1]
    apart = float(np.linalg.norm(np.asarray(a.center[:2]) - np.asarray(b.center[:2])))
    reach = 0.5 * min(float(np.max(a.size[:2])), float(np.max(b.size[:2])))
    return bottom >= b.center[2] and bottom - below_top <= STACK_GAP_M and apart <= reach


def one_name_per_space(detections: list[Detection]) -> None:
    """After the catalogue boxes are posed: two named objects cannot fill one space. When
    SHARED_SPACE of a named box lies inside another named box, it is a piece of that object and
    is left unnamed if it was seen with under half the other's points (a distant bust's side,
    named a floor lamp whose catalogue box grew around it over the bust's: pick-82-00005), or if
    the other's box is not as much inside it (contained, not containing) and it was seen with
    under twice the other's points (a distant cheval mirror in two pieces, its frame's flat face
    named the copper scale inside the mirror's box: place-82-00001). A piece seen far better than
    the box around it keeps its name: that box is the extrapolation."""
    named = sorted((d for d in detections if "matched" in d.extra), key=_point_count, reverse=True)
    for piece in named:
        for whole in named:
            if whole is piece or "matched" not in whole.extra or "matched" not in piece.extra:
                continue
            if share_inside(piece.box, whole.box) < SHARED_SPACE:
                continue
            fewer = 2 * _point_count(piece) < _point_count(whole)
            contained = (_point_count(piece) < 2 * _point_count(whole)
                         and share_inside(whole.box, piece.box) < SHARED_SPACE)
            if fewer or contained:
                _unname(piece, f"a piece of {whole.label} ({whole.id}): its {piece.label} box would fill "
                               f"the same space")
                break


def _point_count(d: Detection) -> int:
    return int(d.extra.get("n_points") or np.count_nonzero(d.mask))


def _unname(d: Detection, why: str) -> None:
    d.label, d.category, d.id = "object", "object", ""
    for key in ("matched", "keep_id", "runner_up"):
        d.extra.pop(key, None)
    d.extra["piece_of"] = why


def refuse(d: Detection, entries, why: str) -> None:
    """Leave named `d` unnamed between `entries` (ExpectedObjects), which become its candidates for
    the instruction's words (name_from_words), each with its match cost, ranked as assign_labels
    ranks a name against its rival (the cost, a book's with FALLBACK_LABEL_COST); `why` goes to
    `extra["refused_by_depth"]`. Its id is cleared for a fresh one. Ranked in the order the depth
    weighed them, orange books standing together on the bottom shelf, 9 x 3 x 21 cm and fitting a
    book 0.10, were refused between the armento rider (0.34, ranked first) and a book, and tied
    with the rider itself 1.8 m above (0.43 against a book's 0.39) for the words: "the armento
    rider" named neither (place-100-00001)."""
    costs = {id(e): match_cost(d, e) for e in entries}
    ranked = sorted(entries, key=lambda e: costs[id(e)] + (FALLBACK_LABEL_COST if e.category == "book" else 0.0))
    d.label, d.category, d.id, d.size_class = "object", "object", "", None
    d.score = min(d.score, 0.5)
    for key in ("matched", "keep_id", "runner_up"):
        d.extra.pop(key, None)
    d.extra["refused"] = " or ".join(e.label for e in ranked)
    d.extra["candidates"] = [_candidate(e, tie=True, cost=costs[id(e)]) for e in ranked]
    d.extra["refused_by_depth"] = why


def _candidate(e: ExpectedObject, *, tie: bool = False, cost: float | None = None) -> dict:
    """A refused detection's candidate; `tie`: one of the two entries it fits surely and about
    equally, between which the instruction's words may choose (name_from_words); `cost`: its
    match_cost, when known; `size_m`: the entry's size, when listed (the planner's unsure-names rule
    reads no piece of it as it: reasoning/unsure_names.py)."""
    return {"label": e.label, "category": e.category, "id": e.id or "", **({"tie": True} if tie else {}),
            **({"cost": round(float(cost), 3)} if cost is not None else {}),
            **({"size_m": [round(float(x), 4) for x in e.size_m]} if e.size_m is not None else {})}


def words_may_name(candidate: dict) -> bool:
    """Whether name_from_words may name a detection after `candidate` (one of its
    `extra["candidates"]`): a tie, and not a book ("book" is the planner's own noun)."""
    return bool(candidate.get("tie")) and candidate["category"] != "book"


def name_from_words(scene: Scene, instruction: str) -> tuple[Scene, list[str]]:
    """`scene` with a detection whose name was refused between two listed objects it fits surely
    and about equally (its `extra["candidates"]` marked `tie`) named after the one the instruction
    names, when no object of the scene is that entry (by its name, or by its id when an object of
    its name is another entry: a second mug), the words name no other of its ties, and no other
    refused detection fits it as well: the person says an alarm clock is there, and the cluster
    that fits an alarm clock or a book is it. A white mug half hidden, tied between the porcelain
    mug and a small book, is the mug "on the left of the bowl" though a red mug is named
    (objects-94-00008); a reading that changes a named object's answer is refused by the planner
    (reasoning/unsure_names.py) as before. One view cannot tell a red clock seen face-on from a
    red book standing cover-out (both boxes fit its depth); the words can. A named object no tie settles is the one
    detection left unnamed that fits it surely, when no other detection in view fits it even
    within the gate (`extra["sure_names"]`, _sure_names_for_words): a newton's cradle on a shelf
    seen in part fits a bottle and a mug better than itself (place-85-00005). A detection that
    fits the named object only weakly, or several detections that fit it, stay unnamed: the words
    would guess which object it is (a floor lamp's shaft named the marble bust, pick-81-00003).
    Books are never named so ("book" is the planner's own noun). Returns the scene and one note
    per object named, for the trace."""
    text = " " + re.sub(r"[^a-z0-9']+", " ", instruction.lower()) + " "

    def names(label):
        # "the alarm clock's right" names the alarm clock, "the newton's cradle's left" the cradle,
        # "the smaller of the two bowls" the bowl (objects-104-00012: a white bowl tied with a jar)
        return any(f" {form} " in text for form in {label, f"{label}'s"} | plurals(label))
    present, present_ids = {o.label for o in scene.objects}, set(scene.ids())
    hits: dict[str, list] = {}
    for o in scene.objects:
        tied = [(rank, c) for rank, c in enumerate(o.extra.get("candidates") or ())
                if words_may_name(c) and names(c["label"])]
        unnamed = [(rank, c) for rank, c in tied if c["label"] not in present]
        # else a second object of a name the scene holds, after an entry no detection holds (a second
        # mug may be the porcelain mug while the red one is named), when the words name no other tie
        second = [(rank, c) for rank, c in tied if c["id"] and c["id"] not in present_ids]
        for rank, c in unnamed or (second if len({c["label"] for _, c in tied}) == 1 else []):
            hits.setdefault(c["label"], []).append((rank, o, c))
    renamed, notes, ids = {}, [], set(scene.ids())

    def give(o, c, label, why, note):
        new_id = c["id"] if c["id"] and c["id"] not in ids else o.id
        extra = {k: v for k, v in o.extra.items() if k != "has_front"}
        if c.get("has_front"):
            extra["has_front"] = True
        extra["named_by_words"] = why
        box = {}
        if c.get("box"):
            # its catalogue box posed on the depth (catalogue_fit._pose_tied_candidates), as a name
            # perception gives takes it: a piece's own box would place the object where its piece is
            extra["measured_box"] = {"center": o.center.tolist(), "size": o.size.tolist(), "rotation": o.rotation.tolist()}
            box = {k: np.asarray(c["box"][k], float) for k in ("center", "size", "rotation")}
        renamed[o.id] = replace(o, id=new_id, label=label, category=c["category"], extra=extra, **box)
        ids.add(new_id)
        notes.append(f"{o.id} read as the {label} ({new_id}): {note}")

    for label, found in sorted(hits.items()):
        # a piece of the named object (labelling._piece_of) yields to a detection that shows more
        # of it, whichever rank the name takes among each one's candidates: a shaded corner piece
        # of a copper scale tied to the cheval mirror beside the mirror seen as a 32 cm slab
        # (place-84-00015); a 13 cm scrap of the mona lisa's easel, the mona lisa its first tie,
        # beside the painting's 26 cm slab, tied between the cheval mirror and the mona lisa
        # (0.48, 0.33): the scrap was chosen, and then refused since the slab fits the painting
        # better (_fits_better_elsewhere), and the painting went unnamed (pick-109-00005)
        found = [(rank, o, c) for rank, o, c in found if not c.get("piece")] or found
        best = min(rank for rank, _, _ in found)
        first = [(o, c) for rank, o, c in found if rank == best]
        if len(first) != 1 or first[0][0].id in renamed:
            continue
        o, c = first[0]
        if _fits_better_elsewhere(scene, o, label, c.get("cost")):
            continue
        others = (" or ".join(x["label"] for x in o.extra["candidates"] if x.get("tie") and x["label"] != label)
                  or " or ".join(x["label"] for x in o.extra["candidates"] if x["label"] != label))
        give(o, c, label, f"fits the {label} or {others}; the instruction names the {label}",
             f"it fits the {label} or {others} about equally, and the instruction names the {label}")
    # a named object no tie settles: the one detection left unnamed that fits it surely (sure_names)
    done = present | {o.label for o in renamed.values()}
    sure = {}
    for o in scene.objects:
        if o.category != "object" or o.id in renamed:
            continue
        for c in o.extra.get("sure_names") or ():
            if c["label"] not in done and names(c["label"]):
                sure.setdefault(c["label"], []).append((o, c))
    for label, found in sorted(sure.items()):
        if len(found) != 1 or found[0][0].id in renamed:
            continue
        o, c = found[0]
        why = f"the only detection that fits the {label} surely (cost {c['cost']:.2f}); the instruction names the {label}"
        give(o, c, label, why, f"it is the only detection that fits the {label} surely (cost {c['cost']:.2f}), "
                               f"and the instruction names the {label}")
    if not renamed:
        return scene, []
    return scene.with_objects([renamed.get(o.id, o) for o in scene.objects]), notes


def _fits_better_elsewhere(scene: Scene, o, label: str, cost: float | None) -> bool:
    """Whether a detection of `scene` other than `o`, left unnamed, fits `label` within the gate at a
    lower match cost than `cost` (`o`'s, when known; `extra["gate_fits"]`): the object the words name
    may be that one, fit weakly or as a sliver, and a tie's detection is then a guess. The adoration
    of the magi at the image's right edge, a 13 x 4 x 52 cm slab of its dark frame tied between the
    mona lisa (0.34) and the lady with an ermine (0.40), was named the lady by the words, 3 m from
    her, while the lady at the left edge, a slab cut by the image's edge, fit her 0.29 but as a
    sliver (books place-86-00014)."""
    if cost is None:
        return False
    for other in scene.objects:
        if other is o or other.id == o.id or other.category != "object":
            continue
        fit = (other.extra.get("gate_fits") or {}).get(label)
        if fit is not None and float(fit) < float(cost):
            return True
    return False


def rename(detections: list[Detection], d: Detection, e: ExpectedObject, why: str, *, max_cost: float = 0.8) -> None:
    """Name `d` after entry `e` after `assign_labels` ran (the depth settled it): its label, the
    entry's id when no other detection holds it (else a fresh "<label>_<k>"), its book size class;
    `why` goes to `extra["named_by_depth"]`, and the refusal and candidates it settles are dropped."""
    _name(d, e, float(max(0.05, 1.0 - match_cost(d, e) / max_cost)))
    d.extra.pop("keep_id", None)
    for key in ("refused", "candidates", "runner_up", "sure_names"):
        d.extra.pop(key, None)
    d.extra["named_by_depth"] = why
    others = {o.id for o in detections if o is not d}
    if d.id in others or not e.id:
        base, k = d.label.replace(" ", "_"), 0
        while f"{base}_{k}" in others:
            k += 1
        d.id = f"{base}_{k}"
    d.size_class = book_size_class(d.box.size, at_least=d.truncated) if d.category == "book" else None


def _name(d: Detection, e: ExpectedObject, score: float) -> None:
    d.label, d.category, d.score = e.label, e.category, score
    d.extra["matched"] = e.id or e.label
    if e.id:
        d.id = e.id
        d.extra["keep_id"] = True


def _standing_cost(det: Detection, entry: ExpectedObject, cost: float) -> float:
    """What `det`'s name after the non-book `entry` costs against a rival: its match cost `cost`,
    or, seen in an upright ("yaw") box, its cost with its height matched with the entry's (match_cost's
    `upright`; an object stands as enrolled, as it rests) when that is higher. Matched side by side
    in any order, the armento rider seen in a shelf's shade as a 13.5 x 5.2 x 23.5 cm column fit the
    picture frame 0.16, its 21.6 cm width standing for the column's height, against the rider's own
    0.36: the frame, 17.8 cm tall, fits it 0.33 as it stands, and a name that close to the rider's
    is refused, not given (place-101-00000). A book's name keeps its cost: a book leans any way."""
    if entry.category == "book" or det.box.mode != "yaw":
        return float(cost)
    return max(float(cost), match_cost(det, entry, upright=True))


def _upright_books(det: Detection, within: np.ndarray, expected, chosen: int) -> np.ndarray:
    """`within` (the detection's costs, _UNMATCHED out of the gate) with each book entry's cost,
    when the name chosen is not a book's, taken leaning the way up the box stands (match_cost's
    `upright`): a rival to another object's name must fit as a book can stand. Matched side by
    side in any order, a leaning small book fits a standing white mug about as well as the mug's
    own entry (10.0 x 8.4 x 10.8 cm: the mug 0.10, the grey small book 0.12, objects-75-00012):
    the mug's height, 10.8 cm, then stands for the 15.8 cm the book spans across the table
    leaning so, and its 8.4 cm width, seen in full, for the book's 11.5. A book entry the name
    chosen beats this way stays no rival; its plain cost still decides the assignment."""
    if expected[chosen].category == "book" or det.box.mode != "yaw":
        return within
    out = within.copy()
    for k, e in enumerate(expected):
        if e.category == "book" and within[k] < _UNMATCHED:
            out[k] = max(within[k], match_cost(det, e, upright=True))
    return out


def _rival(costs: np.ndarray, expected, chosen: int, taken=frozenset()) -> int | None:
    """The entry of another label this detection fits best, among those not `taken` by another
    detection, or None. Entries of the same label (two books, two floor lamps) are no rivals:
    either name is right."""
    others = [k for k, e in enumerate(expected)
              if k not in taken and e.label != expected[chosen].label and costs[k] < _UNMATCHED]
    return min(others, key=lambda k: costs[k]) if others else None


def _further(costs: np.ndarray, expected, shown, taken, limit: int = MAX_CANDIDATES) -> list[int]:
    """After the two candidates `shown`, the best entry of each further label the detection fits
    within the gate (`costs` < _UNMATCHED), not `taken` by another detection, best first, so that
    there are at most `limit` candidates: the words may name any object the cluster could be (a
    newton's cradle seen as a few wires fits a mug and a bookend a little better, pick-51-00000)."""
    labels = {expected[k].label for k in shown}
    out = []
    for k in np.argsort(costs, kind="stable"):
        k = int(k)
        if len(out) + len(shown) >= limit or costs[k] >= _UNMATCHED:
            break
        if k in taken or expected[k].label in labels:
            continue
        labels.add(expected[k].label)
        out.append(k)
    return out


def unique_ids(detections: list[Detection]) -> None:
    """Give every detection without a kept (matched) id a fresh "<label>_<k>" id."""
    taken = {d.id for d in detections if d.extra.get("keep_id")}
    counters: dict[str, int] = {}
    for d in detections:
        if d.extra.pop("keep_id", False):
            continue
        base = d.label.replace(" ", "_") or "object"
        k = counters.get(base, 0)
        while f"{base}_{k}" in taken:
            k += 1
        d.id = f"{base}_{k}"
        taken.add(d.id)
        counters[base] = k + 1
