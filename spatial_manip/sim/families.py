"""Task families (ESPIRE Table 10 for pick and place, plus TIGeR metric placements).

A family enumerates, for one scene, every concrete variant it can pose there: the answer set
(the ids that satisfy it, or a metric placement's pose), the phrasing fields, the reference and
its frame, and the program (ESPIRE Table 11) written into the task as a label. The generator
(`tasks.py`) keeps the variants whose answer set is valid and samples one.

Each family computes its answer with its own code here, composing the definitions of the words in
`geometry.relations`; it never runs the planner's program executor. So the benchmark cross-checks
the planner (`test/reasoning/test_generator_equivalence.py`) instead of grading it with itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from spatial_manip.geometry import relations as rel
from spatial_manip.transforms import matrix_to_quat
from spatial_manip.program_text import Node, node
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.sim.phrasings import length_words, ordinal, possessive, ref_phrase

BOOKS = node("filterBook", None, "TABLE")
SLOTS = node("filterSlot", None, "SHELF")


@dataclass
class Variant:
    program: Node                                       # the label: the planner's reading of the task
    answer: list[str]                                   # ids that satisfy it (pick, place on the shelf)
    fields: dict = field(default_factory=dict)        # phrasing fields
    frame: str = "none"                                 # relative | intrinsic | absolute | none
    reference: str | None = None                        # reference id, "viewer", "robot"
    reference_kind: str = "none"                        # viewer | robot | near | distant | table | shelf
    oriented: bool | None = None
    pose: str = ""                                      # place: the pose the instruction asks for
    metric: dict | None = None                          # metric: {"word", "value_m", "frame_owner", "place_pose"}


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


# --- references, items and frames ----------------------------------------------------------------
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


def _reference(scene: Scene, sym: str) -> SceneObject | Viewpoint:
    return {"viewer": scene.viewer, "robot": scene.robot}.get(sym) or scene.get(sym)


def _container(scene: Scene, action: str) -> SceneObject | None:
    found = scene.by_category("table" if action == "pick" else "shelf")
    return found[0] if found else None


def _axes(scene: Scene, owner: str) -> rel.FrameAxes:
    """The frame a family names by its owner: the viewer's (relative), a container's, or an
    oriented reference's own (intrinsic)."""
    if owner == "viewer":
        return rel.frame_axes(rel.Frame.RELATIVE, viewer=scene.viewer)
    if owner in ("TABLE", "SHELF"):
        return rel.container_axes(_container(scene, "pick" if owner == "TABLE" else "place"))
    return rel.frame_axes(rel.Frame.INTRINSIC, reference=scene.get(owner), reference_id=owner)


def _pick(body) -> Node:
    return node("pick", None, node("unique", None, body))


def _place(body, pose: str = "") -> Node:
    kw = {"pose": pose} if pose else {}
    return node("place", None, node("unique", None, body), **kw)


def _wrap(action: str, body, pose: str = "") -> Node:
    return _pick(body) if action == "pick" else _place(body, pose)


def _src(action):
    return BOOKS if action == "pick" else SLOTS


def _items(scene: Scene, action: str) -> list:
    """What a task chooses among: the books on the table, or the shelf's slots."""
    if action == "pick":
        return [o for o in scene.objects if o.category == "book" and not o.held]
    return [r for r in scene.regions if r.kind == "slot"]


def _ids(items) -> list[str]:
    return [o.id for o in items]


def spoken_length(m: float) -> float:
    """Round a length to what a person would say: 5 cm steps below 1 m, 0.1 m above."""
    return round(m * 20) / 20 if m < 0.975 else round(m, 1)


def _clear(values, edges, margin: float) -> bool:
    """No value lies within `margin` of any band edge (so the answer does not hinge on mm)."""
    return all(abs(v - e) > margin for v in values for e in edges)


# --- attribute ------------------------------------------------------------------------------------
def v_size_class(cls: str):
    def f(scene):
        books = _items(scene, "pick")
        return [Variant(_pick(node("filterAttr", cls, BOOKS)),
                        _ids(o for o in books if rel.size_class(o) == cls.lower()))]
    return f


def v_measure(kind: str, action: str):
    """Height of books (pick) or width of slots (place): 'around N cm'."""
    def f(scene):
        axes = rel.frame_axes(rel.Frame.RELATIVE, viewer=scene.viewer)
        items = _items(scene, action)
        meas = [rel.object_height(o) if kind == "Height" else rel.object_width(o, axes) for o in items]
        out = []
        for v in sorted({round(m, 2) for m in meas}):
            tol = rel.approx_tolerance_m(v)
            if _clear(meas, (v - tol, v + tol), 0.005):
                answer = [o.id for o, m in zip(items, meas) if rel.is_about(m, v)]
                out.append(Variant(_wrap(action, node("filterAttr", kind, v, _src(action))), answer,
                                   {"h": f"{int(round(v * 100))} centimeters"}))
        return out
    return f


def v_book_pose(word: str):
    """Books lying flat, standing upright or tilted (ESPIRE's Flat / Vertical / Tilted)."""
    cls = {"Flat": "flat", "Vertical": "upright", "Tilted": "tilted"}[word]

    def f(scene):
        books = _items(scene, "pick")
        return [Variant(_pick(node("filterOri", word, BOOKS)), _ids(o for o in books if rel.book_pose_class(o) == cls))]
    return f


def v_occupancy(word: str):
    """Empty, partly occupied ("not empty") or the emptiest slots."""
    def f(scene):
        slots = _items(scene, "place")
        answer = {"Empty": lambda: [r for r in slots if rel.is_empty(r)],
                  "NonEmpty": lambda: [r for r in slots if rel.is_partly_occupied(r)],
                  "Emptiest": lambda: rel.emptiest(slots)}[word]()
        return [Variant(_place(node("filterAttr", word, SLOTS)), _ids(answer))]
    return f


def v_index(two_d: bool):
    def f(scene):
        slots = _items(scene, "place")
        if two_d:
            return [Variant(_place(node("filterAttr", "Index2D", r.row, r.col, SLOTS)),
                            _ids(s for s in slots if (s.row, s.col) == (r.row, r.col)), {"row": r.row, "col": r.col})
                    for r in slots]
        return [Variant(_place(node("filterAttr", "Index1D", row, SLOTS)), _ids(s for s in slots if s.row == row),
                        {"row": row}) for row in sorted({r.row for r in slots})]
    return f


# --- distance -------------------------------------------------------------------------------------
def _dist_variant(action, body, answer, sym, label, kind, oriented, **fields):
    return Variant(_wrap(action, body), _ids(answer), dict(fields, ref=ref_phrase(label)), "none", sym, kind, oriented)


def v_extreme(action: str, rel_: str, rank: bool):
    pick_of = rel.closest if "Closest" in rel_ else rel.farthest

    def f(scene):
        out = []
        for sym, label, kind, ori in distance_refs(scene):
            ref = _reference(scene, sym)
            items = [o for o in _items(scene, action) if o is not ref]
            for k in ((2, 3) if rank else (None,)):
                if not rel.clearly_ranked(items, lambda o: rel.distance(o, ref), k or 1, "Farthest" in rel_):
                    continue
                args = ((k,) if k else ()) + (_src(action), sym)
                out.append(_dist_variant(action, node("filterDist", rel_, *args), pick_of(items, ref, k or 1),
                                         sym, label, kind, ori, k=ordinal(k or 1)))
        return out
    return f


def _threshold_test(rel_: str, v: float, w: float | None = None) -> Callable[[float], bool]:
    if rel_ == "EqualTo":
        return lambda d: rel.is_about(d, v)
    return lambda d: rel.in_distance_band(d, rel_, v, w)


def v_threshold(action: str, rel_: str):
    """LessThan / MoreThan / EqualTo / Range with spoken values placed in gaps of the distances."""
    def f(scene):
        out = []
        for sym, label, kind, ori in distance_refs(scene):
            ref = _reference(scene, sym)
            items = [o for o in _items(scene, action) if o is not ref]
            dist = {o.id: rel.distance(o, ref) for o in items}
            ds = sorted(dist.values())
            if not ds:
                continue
            cands = sorted({spoken_length(d) for d in ds} | {spoken_length((a + b) / 2) for a, b in zip(ds, ds[1:])})
            for v in cands:
                if v <= 0:
                    continue
                w, args = None, (v,)
                fields = {"d": length_words(v)}
                if rel_ == "EqualTo":
                    tol = rel.approx_tolerance_m(v)
                    ok = _clear(ds, (v - tol, v + tol), 0.01)
                elif rel_ == "Range":
                    higher = [c for c in cands if c > v + 0.05]
                    if not higher:
                        continue
                    w, args = higher[0], (v, higher[0])
                    ok = _clear(ds, (v, w), 0.01)
                    fields["d2"] = length_words(w)
                else:
                    ok = _clear(ds, (v,), 0.02)
                if ok:
                    test = _threshold_test(rel_, v, w)
                    body = node("filterDist", rel_, *args, _src(action), sym)
                    out.append(_dist_variant(action, body, [o for o in items if test(dist[o.id])],
                                             sym, label, kind, ori, **fields))
        return out
    return f


# --- relationship ---------------------------------------------------------------------------------
def v_part(action: str, rel_: str):
    """The left / right / front / back / upper / lower half of the table or shelf."""
    container = "TABLE" if action == "pick" else "SHELF"

    def f(scene):
        cont = _container(scene, action)
        if cont is None:
            return []
        items = _items(scene, action)
        ax = rel.container_axes(cont)
        idx = 2 if rel_ in ("Upper", "Lower") else (1 if rel_ in ("Left", "Right") else 0)
        if not _clear([ax.coords(rel.position_of(o))[idx] for o in items], (0.0,), 0.02):
            return []
        return [Variant(_wrap(action, node("filterRel", rel_, _src(action), container)),
                        _ids(o for o in items if rel.part_of(o, cont, rel_.lower())), {}, "intrinsic",
                        cont.id, cont.category, True)]
    return f


def v_most(action: str, rel_: str, rank: bool):
    pick_of = rel.leftmost if "Left" in rel_ else rel.rightmost

    def f(scene):
        out = []
        container = "TABLE" if action == "pick" else "SHELF"
        items = _items(scene, action)
        for owner, fk, frame in (("viewer", "viewer", "relative"), (container, "container" if action == "pick"
                                                                    else "shelf", "intrinsic")):
            if owner != "viewer" and _container(scene, action) is None:
                continue
            axes = _axes(scene, owner)
            for k in ((2, 3) if rank else (None,)):
                if not rel.clearly_ranked(items, lambda o: rel.lateral(o, axes), k or 1, "Right" in rel_):
                    continue
                args = ((k,) if k else ()) + (_src(action), owner)
                out.append(Variant(_wrap(action, node("filterRel", rel_, *args)), _ids(pick_of(items, axes, k or 1)),
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
                answer = [o for o in _items(scene, action)
                          if o is not a and o is not b and rel.is_between(o, a, b, same_level=(action == "place"))]
                out.append(Variant(_wrap(action, node("filterRel", "Between", _src(action), a.id, b.id)), _ids(answer),
                                   {"ref": ref_phrase(a.label), "ref2": ref_phrase(b.label)}, "none", a.id,
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


def _bearing_setup(scene: Scene, action: str, sym: str, owner: str):
    """(reference, frame axes, bearing origin, items other than the reference): a frame attached
    to the reference measures bearings from its own origin, else they are seen from the reference."""
    ref = _reference(scene, sym)
    return ref, _axes(scene, owner), (None if sym == owner else ref), [o for o in _items(scene, action) if o is not ref]


def v_direction(action: str, rel_: str):
    def f(scene):
        out = []
        for sym, label, owner, frame, words, kind, ori in _frames_for(scene):
            if action == "place" and sym == "viewer" and rel_ in ("Front", "Behind"):
                continue
            ref, axes, origin, items = _bearing_setup(scene, action, sym, owner)
            answer = [o for o in items if rel.in_direction(o, rel_.lower(), axes, origin)]
            body = node("filterOri", rel_, _src(action), sym, owner)
            out.append(Variant(_wrap(action, body), _ids(answer), {"ref": ref_phrase(label), "refs": possessive(label),
                                                                   "frame_kind": words}, frame, sym, kind, ori))
        return out
    return f


def v_clock(action: str):
    def f(scene):
        out = []
        edges = [(30 * h + 15) % 360 for h in range(12)]
        for sym, label, owner, frame, words, kind, ori in _frames_for(scene):
            ref, axes, origin, items = _bearing_setup(scene, action, sym, owner)
            # keep hours whose sector edges are at least 4 degrees from every item's bearing
            bearings = [rel.bearing_deg(o, axes, origin) for o in items]
            if not all(min(abs((b - e + 180) % 360 - 180) for e in edges) > 4 for b in bearings):
                continue
            hours = {o.id: rel.clock_position(o, axes, origin) for o in items}
            for hour in sorted(set(hours.values())):
                body = node("filterOri", "ClockPosition", hour, _src(action), sym, owner)
                out.append(Variant(_wrap(action, body), [i for i, h in hours.items() if h == hour],
                                   {"ref": ref_phrase(label), "refs": possessive(label), "hour": hour,
                                    "frame_kind": words}, frame, sym, kind, ori))
        return out
    return f


def v_updown(rel_: str):
    above = rel.is_above if rel_ == "Above" else rel.is_below

    def f(scene):
        slots = _items(scene, "place")
        return [Variant(_place(node("filterOri", rel_, SLOTS, o.id)), _ids(s for s in slots if above(s, o)),
                        {"ref": ref_phrase(o.label)}, "absolute", o.id, ref_kind(o), o.oriented)
                for o in references(scene)]
    return f


def v_direct(rel_: str):
    """Immediately above / below / left / right of a reference, in the viewer's frame."""
    def f(scene):
        out = []
        axes, slots = _axes(scene, "viewer"), _items(scene, "place")
        for o in references(scene):
            if ref_kind(o) != "near":
                continue
            if rel_ in ("DirectAbove", "DirectBelow"):
                answer = rel.directly_above(slots, o, axes, below=(rel_ == "DirectBelow"))
            else:
                answer = rel.directly_beside(slots, o, rel_[6:].lower(), axes)
            # left/right of a reference with a front must say they mean the viewer's (FRAME_WORDS);
            # above/below go by gravity and need no frame
            sideways = rel_ in ("DirectLeft", "DirectRight")
            words = {"frame_kind": "viewer"} if o.oriented and sideways else {}
            out.append(Variant(_place(node("filterOri", rel_, SLOTS, o.id, "viewer")), _ids(answer),
                               {"ref": ref_phrase(o.label), **words}, "relative" if sideways else "absolute",
                               o.id, "near", o.oriented))
        return out
    return f


def v_tilt_degree(scene):
    books = _items(scene, "pick")
    tilts = [rel.book_tilt_deg(o) for o in books]
    out = []
    for o in books:
        if rel.book_pose_class(o) != "tilted":
            continue
        v = int(5 * round(rel.book_tilt_deg(o) / 5))
        if _clear(tilts, (v - rel.TILT_TOL_DEG, v + rel.TILT_TOL_DEG), 2.0):
            out.append(Variant(_pick(node("filterOri", "TiltDegree", v, BOOKS)),
                               _ids(b for b in books if rel.has_tilt(b, v)), {"deg": v}))
    return out


def v_pose_place(pose: str):
    def f(scene):
        return [Variant(_place(SLOTS, pose), _ids(_items(scene, "place")), {}, "none", pose=pose)]
    return f


# --- metric (TIGeR) -------------------------------------------------------------------------------
METRIC_GAPS_M = (0.05, 0.10, 0.15, 0.20)


def metric_place_pose(scene: Scene, ref: SceneObject, word: str, gap_m: float, owner: str) -> dict:
    """Where "put it <gap> <word> of <ref>" sets the held book down, standing upright and facing
    the viewer, on the support under that point."""
    held = scene.held_object()
    R = rel.placed_rotation(rel.facing_viewer(scene.viewer), "upright", 0.0, held)
    direction = rel.metric_direction(word, _axes(scene, owner), attached=(owner == ref.id))
    xy = rel.offset_position(ref, direction, gap_m, rel.half_extent_along(replace(held, rotation=R), direction))
    base_z = rel.support_top(scene.objects, xy, float(ref.corners()[:, 2].min()))
    return {"position": [round(float(v), 6) for v in rel.resting_centre(xy, base_z, R, held.size)],
            "orientation": [round(float(v), 6) for v in matrix_to_quat(R)]}


def v_metric(word: str):
    def f(scene):
        if scene.held_object() is None:
            return []
        out = []
        for o in references(scene):
            if ref_kind(o) != "near":
                continue
            owner = o.id if o.oriented else "viewer"
            for gap in METRIC_GAPS_M:
                body = node("metric", word, gap, o.id, owner)
                # "upright" (the parser's default for place): the instruction names no pose, and a
                # book held from above is stood on its edge (lying it flat needs a free finger)
                metric = {"word": word.lower(), "value_m": gap, "frame_owner": owner,
                          "place_pose": metric_place_pose(scene, o, word, gap, owner)}
                out.append(Variant(node("place", None, body, pose="upright"), [],
                                   {"ref": ref_phrase(o.label), "d": length_words(gap)},
                                   "intrinsic" if o.oriented else "relative", o.id, "near", o.oriented, "upright", metric))
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
    for r in ("Flat", "Vertical", "Tilted"):
        add("pick", f"Orientation/{r}", "coarse", v_book_pose(r))
    for r in ("Front", "Behind"):
        add("pick", f"Orientation/{r}", "coarse", v_direction("pick", r))
    add("pick", "Orientation/TiltDegree", "fine", v_tilt_degree)
    # place on the shelf
    for r in ("Empty", "NonEmpty", "Emptiest"):
        add("place", f"Attribute/{r}", "coarse", v_occupancy(r))
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
