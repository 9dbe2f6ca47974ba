"""Task families (ESPIRE Table 10 for pick and place, plus TIGeR metric placements).

A family enumerates, for one scene, every concrete variant it can pose there: the program (built
with `reasoning.program`'s AST), the phrasing fields, the reference and its frame. The generator
(`tasks.py`) executes each program on the scene, keeps the variants whose answer set is valid and
samples one. No spatial word is decided here: every filter is evaluated by the program executor,
which calls `geometry.relations`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from spatial_manip.geometry import relations as rel
from spatial_manip.reasoning import program as P
from spatial_manip.scene import Scene, SceneObject

BOOKS = P.node("filterBook", None, "TABLE")
SLOTS = P.node("filterSlot", None, "SHELF")


@dataclass
class Variant:
    program: P.Node
    fields: dict = field(default_factory=dict)        # phrasing fields
    frame: str = "none"                                 # relative | intrinsic | absolute | none
    reference: str | None = None                        # reference id, "viewer", "robot"
    reference_kind: str = "none"                        # viewer | robot | near | distant | table | shelf
    oriented: bool | None = None
    pose: str = ""                                      # place: the pose the instruction asks for
    metric: dict | None = None                          # metric: {"word", "value_m", "frame_owner"}


@dataclass(frozen=True)
class Family:
    action: str            # pick | place | metric
    name: str              # "Attribute/Small" (Table 10's aspect/type)
    granularity: str       # coarse | fine
    variants: Callable[[Scene], list[Variant]]

    @property
    def key(self) -> str:
        return f"{self.action}:{self.name}"

    @property
    def aspect(self) -> str:
        return self.name.split("/")[0]


# --- references -----------------------------------------------------------------------------------
def references(scene: Scene) -> list[SceneObject]:
    """Reference objects whose label is unique in the scene (so "the jar" names one object)."""
    refs = [o for o in scene.objects if o.category == "reference"]
    labels = [o.label for o in refs]
    return [o for o in refs if labels.count(o.label) == 1]


def ref_kind(o: SceneObject) -> str:
    return str(o.extra.get("placement", "near"))


def distance_refs(scene: Scene) -> list[tuple]:
    """(program symbol, phrase label, kind, oriented) for distance families."""
    out = [("viewer", "viewer", "viewer", True), ("robot", "robot", "robot", True)]
    out += [(o.id, o.label, ref_kind(o), o.oriented) for o in references(scene)]
    return out


def _pick(body) -> P.Node:
    return P.node("pick", None, P.node("unique", None, body))


def _place(body, pose: str = "") -> P.Node:
    kw = {"pose": pose} if pose else {}
    return P.node("place", None, P.node("unique", None, body), **kw)


def _wrap(action: str, body, pose: str = "") -> P.Node:
    return _pick(body) if action == "pick" else _place(body, pose)


def _src(action):
    return BOOKS if action == "pick" else SLOTS


def _items(scene: Scene, action: str) -> list:
    if action == "pick":
        return [o for o in scene.objects if o.category == "book" and not o.held]
    return list(scene.regions)


def spoken_length(m: float) -> float:
    """Round a length to what a person would say: 5 cm steps below 1 m, 0.1 m above."""
    return round(m * 20) / 20 if m < 0.975 else round(m, 1)


def _clear(values, edges, margin: float) -> bool:
    """No value lies within `margin` of any band edge (so the answer does not hinge on mm)."""
    return all(abs(v - e) > margin for v in values for e in edges)


# --- attribute ------------------------------------------------------------------------------------
def v_size_class(cls: str):
    def f(scene):
        return [Variant(_pick(P.node("filterAttr", cls, BOOKS)))]
    return f


def v_measure(kind: str, action: str):
    """Height of books (pick) or width of slots (place): 'around N cm'."""
    def f(scene):
        axes = rel.frame_axes(rel.Frame.RELATIVE, viewer=scene.viewer)
        items = _items(scene, action)
        meas = [rel.object_height(o) if kind == "Height" else rel.object_width(o, axes) for o in items]
        out = []
        for v in sorted({round(m, 2) for m in meas}):
            tol = P.approx_tolerance_m(v)
            if _clear(meas, (v - tol, v + tol), 0.005):
                out.append(Variant(_wrap(action, P.node("filterAttr", kind, v, _src(action))),
                                   {"h": f"{int(round(v * 100))} centimeters"}))
        return out
    return f


def v_plain(action: str, op: str, rel_: str, pose: str = ""):
    """A filter with no parameters: filterX$R(S)."""
    def f(scene):
        return [Variant(_wrap(action, P.node(op, rel_, _src(action)), pose), pose=pose)]
    return f


def v_index(two_d: bool):
    def f(scene):
        out = []
        for r in scene.regions:
            if two_d:
                out.append(Variant(_place(P.node("filterAttr", "Index2D", r.row, r.col, SLOTS)),
                                   {"row": r.row, "col": r.col}))
        if not two_d:
            for row in sorted({r.row for r in scene.regions}):
                out.append(Variant(_place(P.node("filterAttr", "Index1D", row, SLOTS)), {"row": row}))
        return out
    return f


# --- distance -------------------------------------------------------------------------------------
def _dist_variant(action, body, sym, label, kind, oriented, **fields):
    return Variant(_wrap(action, body), dict(fields, ref=_phrase(label)), "none", sym, kind, oriented)


def _phrase(label):
    from spatial_manip.sim.phrasings import ref_phrase
    return ref_phrase(label)


def v_extreme(action: str, rel_: str, rank: bool):
    def f(scene):
        out = []
        for sym, label, kind, ori in distance_refs(scene):
            for k in ((2, 3) if rank else (None,)):
                args = ((k,) if k else ()) + (_src(action), sym)
                from spatial_manip.sim.phrasings import ordinal
                out.append(_dist_variant(action, P.node("filterDist", rel_, *args), sym, label, kind, ori,
                                         k=ordinal(k or 1)))
        return out
    return f


def v_threshold(action: str, rel_: str):
    """LessThan / MoreThan / EqualTo / Range with spoken values placed in gaps of the distances."""
    from spatial_manip.sim.phrasings import length_words

    def f(scene):
        out = []
        for sym, label, kind, ori in distance_refs(scene):
            ref = P._Eval(scene).ref(P.Sym(sym))
            ds = sorted(rel.distance(o, ref) for o in _items(scene, action) if o is not ref)
            if not ds:
                continue
            cands = sorted({spoken_length(d) for d in ds} | {spoken_length((a + b) / 2) for a, b in zip(ds, ds[1:])})
            for v in cands:
                if v <= 0:
                    continue
                if rel_ == "EqualTo":
                    tol = P.approx_tolerance_m(v)
                    ok = _clear(ds, (v - tol, v + tol), 0.01)
                    body = P.node("filterDist", rel_, v, _src(action), sym)
                    fields = {"d": length_words(v)}
                elif rel_ == "Range":
                    higher = [w for w in cands if w > v + 0.05]
                    if not higher:
                        continue
                    w = higher[0]
                    ok = _clear(ds, (v, w), 0.01)
                    body = P.node("filterDist", rel_, v, w, _src(action), sym)
                    fields = {"d": length_words(v), "d2": length_words(w)}
                else:
                    ok = _clear(ds, (v,), 0.02)
                    body = P.node("filterDist", rel_, v, _src(action), sym)
                    fields = {"d": length_words(v)}
                if ok:
                    out.append(_dist_variant(action, body, sym, label, kind, ori, **fields))
        return out
    return f


# --- relationship ---------------------------------------------------------------------------------
def v_part(action: str, rel_: str):
    container = "TABLE" if action == "pick" else "SHELF"

    def f(scene):
        cont = scene.by_category("table" if action == "pick" else "shelf")
        if not cont:
            return []
        ax = rel.container_axes(cont[0])
        idx = 2 if rel_ in ("Upper", "Lower") else (1 if rel_ in ("Left", "Right") else 0)
        if not _clear([ax.coords(rel.position_of(o))[idx] for o in _items(scene, action)], (0.0,), 0.02):
            return []
        return [Variant(_wrap(action, P.node("filterRel", rel_, _src(action), container)), {}, "intrinsic",
                        cont[0].id, cont[0].category, True)]
    return f


def v_most(action: str, rel_: str, rank: bool):
    from spatial_manip.sim.phrasings import ordinal

    def f(scene):
        out = []
        container = "TABLE" if action == "pick" else "SHELF"
        for owner, fk, frame in (("viewer", "viewer", "relative"), (container, "container" if action == "pick"
                                                                    else "shelf", "intrinsic")):
            for k in ((2, 3) if rank else (None,)):
                args = ((k,) if k else ()) + (_src(action), owner)
                out.append(Variant(_wrap(action, P.node("filterRel", rel_, *args)),
                                   {"k": ordinal(k or 1), "frame_kind": fk}, frame,
                                   "viewer" if owner == "viewer" else owner.lower(),
                                   "viewer" if owner == "viewer" else owner.lower(), True))
        return out
    return f


def v_between(action: str):
    def f(scene):
        refs = references(scene)
        out = []
        for i, a in enumerate(refs):
            for b in refs[i + 1:]:
                out.append(Variant(_wrap(action, P.node("filterRel", "Between", _src(action), a.id, b.id)),
                                   {"ref": _phrase(a.label), "ref2": _phrase(b.label)}, "none", a.id,
                                   f"{ref_kind(a)}+{ref_kind(b)}"))
        return out
    return f


# --- orientation ----------------------------------------------------------------------------------
def _frames_for(scene: Scene):
    """(reference symbol, label, frame owner, frame name, frame words, kind, oriented):
    the viewer itself; an oriented reference in its own frame and in the viewer's; a
    non-oriented reference in the viewer's frame."""
    out = [("viewer", "viewer", "viewer", "relative", "none", "viewer", True)]
    for o in references(scene):
        if o.oriented:
            out.append((o.id, o.label, o.id, "intrinsic", "own", ref_kind(o), True))
            out.append((o.id, o.label, "viewer", "relative", "viewer", ref_kind(o), True))
        else:
            out.append((o.id, o.label, "viewer", "relative", "none", ref_kind(o), False))
    return out


def v_direction(action: str, rel_: str):
    from spatial_manip.sim.phrasings import possessive

    def f(scene):
        out = []
        for sym, label, owner, frame, words, kind, ori in _frames_for(scene):
            if action == "place" and sym == "viewer" and rel_ in ("Front", "Behind"):
                continue
            body = P.node("filterOri", rel_, _src(action), sym, owner)
            out.append(Variant(_wrap(action, body), {"ref": _phrase(label), "refs": possessive(label),
                                                     "frame_kind": words}, frame, sym, kind, ori))
        return out
    return f


def v_clock(action: str):
    from spatial_manip.sim.phrasings import possessive

    def f(scene):
        out = []
        for sym, label, owner, frame, words, kind, ori in _frames_for(scene):
            ev = P._Eval(scene)
            ref, axes = ev.ref(P.Sym(sym)), ev.frame(P.Sym(owner))
            origin = None if sym == owner else ref
            bearings = [rel.bearing_deg(o, axes, origin) for o in _items(scene, action) if o is not ref]
            # keep hours whose sector edges are at least 4 degrees from every item's bearing
            edges = [(30 * h + 15) % 360 for h in range(12)]
            if not all(min(abs((b - e + 180) % 360 - 180) for e in edges) > 4 for b in bearings):
                continue
            for hour in sorted({rel.clock_position(o, axes, origin) for o in _items(scene, action) if o is not ref}):
                body = P.node("filterOri", "ClockPosition", hour, _src(action), sym, owner)
                out.append(Variant(_wrap(action, body), {"ref": _phrase(label), "refs": possessive(label),
                                                         "hour": hour, "frame_kind": words}, frame, sym, kind, ori))
        return out
    return f


def v_updown(rel_: str):
    def f(scene):
        return [Variant(_place(P.node("filterOri", rel_, SLOTS, o.id)), {"ref": _phrase(o.label)}, "absolute",
                        o.id, ref_kind(o), o.oriented) for o in references(scene)]
    return f


def v_direct(rel_: str):
    def f(scene):
        out = []
        for o in references(scene):
            if ref_kind(o) != "near":
                continue
            owner = "viewer"
            out.append(Variant(_place(P.node("filterOri", rel_, SLOTS, o.id, owner)), {"ref": _phrase(o.label)},
                               "relative", o.id, "near", o.oriented))
        return out
    return f


def v_tilt_degree(scene):
    tilts = [rel.book_tilt_deg(o) for o in _items(scene, "pick")]
    out = []
    for o in _items(scene, "pick"):
        if rel.book_pose_class(o) != "tilted":
            continue
        v = int(5 * round(rel.book_tilt_deg(o) / 5))
        if _clear(tilts, (v - P.TILT_TOL_DEG, v + P.TILT_TOL_DEG), 2.0):
            out.append(Variant(_pick(P.node("filterOri", "TiltDegree", v, BOOKS)), {"deg": v}))
    return out


def v_pose_place(pose: str):
    def f(scene):
        return [Variant(_place(SLOTS, pose), {}, "none", pose=pose)]
    return f


# --- metric (TIGeR) -------------------------------------------------------------------------------
METRIC_GAPS_M = (0.05, 0.10, 0.15, 0.20)


def v_metric(word: str):
    from spatial_manip.sim.phrasings import length_words

    def f(scene):
        out = []
        for o in references(scene):
            if ref_kind(o) != "near":
                continue
            owner = o.id if o.oriented else "viewer"
            for gap in METRIC_GAPS_M:
                body = P.node("metric", word, gap, o.id, owner)
                # "upright" (the parser's default for place): the instruction names no pose, and a
                # book held from above is stood on its edge (lying it flat needs a free finger)
                out.append(Variant(P.node("place", None, body, pose="upright"), {"ref": _phrase(o.label),
                                   "d": length_words(gap)}, "intrinsic" if o.oriented else "relative",
                                   o.id, "near", o.oriented, "upright",
                                   {"word": word.lower(), "value_m": gap, "frame_owner": owner}))
        return out
    return f


# --- the table of families ------------------------------------------------------------------------
def _families() -> list[Family]:
    F = []
    add = lambda a, n, g, v: F.append(Family(a, n, g, v))  # noqa: E731
    for c in ("Small", "Medium", "Large"):
        add("pick", f"Attribute/{c}", "coarse", v_size_class(c))
    add("pick", "Attribute/Height", "fine", v_measure("Height", "pick"))
    for action in ("pick", "place"):
        add(action, "Distance/Closest", "coarse", v_extreme(action, "Closest", False))
        add(action, "Distance/Farthest", "coarse", v_extreme(action, "Farthest", False))
        add(action, "Distance/LessThan", "coarse", v_threshold(action, "LessThan"))
        add(action, "Distance/MoreThan", "coarse", v_threshold(action, "MoreThan"))
        for r in ("LeftMost", "RightMost"):
            add(action, f"Relationship/{r}", "coarse", v_most(action, r, False))
            add(action, f"Relationship/Rank{r}", "fine", v_most(action, f"Rank{r}", True))
        for r in ("Left", "Right"):
            add(action, f"Orientation/{r}", "coarse", v_direction(action, r))
        add(action, "Orientation/ClockPosition", "fine", v_clock(action))
    for r in ("RankClosest", "RankFarthest"):
        add("pick", f"Distance/{r}", "fine", v_extreme("pick", r, True))
    for r in ("EqualTo", "Range"):
        add("pick", f"Distance/{r}", "fine", v_threshold("pick", r))
    for r in ("Left", "Right", "Front", "Behind"):
        add("pick", f"Relationship/{r}", "coarse", v_part("pick", r))
    add("pick", "Relationship/Between", "fine", v_between("pick"))
    for r, n in (("Flat", "Flat"), ("Vertical", "Vertical"), ("Tilted", "Tilted")):
        add("pick", f"Orientation/{n}", "coarse", v_plain("pick", "filterOri", r))
    for r in ("Front", "Behind"):
        add("pick", f"Orientation/{r}", "coarse", v_direction("pick", r))
    add("pick", "Orientation/TiltDegree", "fine", v_tilt_degree)
    # place on the shelf
    for r in ("Empty", "NonEmpty", "Emptiest"):
        add("place", f"Attribute/{r}", "coarse", v_plain("place", "filterAttr", r))
    add("place", "Attribute/Width", "fine", v_measure("Width", "place"))
    add("place", "Attribute/Index1D", "fine", v_index(False))
    add("place", "Attribute/Index2D", "fine", v_index(True))
    for r in ("Left", "Right", "Upper", "Lower"):
        add("place", f"Relationship/{r}", "coarse", v_part("place", r))
    add("place", "Orientation/Vertical", "coarse", v_pose_place("upright"))
    add("place", "Orientation/Flat", "coarse", v_pose_place("flat"))
    for r in ("Above", "Below"):
        add("place", f"Orientation/{r}", "coarse", v_updown(r))
    for r in ("DirectAbove", "DirectBelow", "DirectLeft", "DirectRight"):
        add("place", f"Orientation/{r}", "fine", v_direct(r))
    for w in ("Left", "Right", "Front", "Behind"):
        add("metric", f"Metric/{w}", "fine", v_metric(w))
    return F


FAMILIES: list[Family] = _families()
BY_KEY: dict[str, Family] = {f.key: f for f in FAMILIES}
