"""Spatial programs: ESPIRE Table 11's functional programs plus TIGeR's metric placements.

A program is a tree of `Node`s (`spatial_manip.program_text`) with a canonical text form, e.g.

    pick(unique(filterRel$RankLeftMost(2, filterOri$Flat(filterBook(TABLE)), viewer)))
    place(unique(filterAttr$Empty(filterSlot(SHELF))), pose=upright)
    place(metric$Right(0.1, jar_1, viewer))

`parse_program(text)` reads the text back (round trip is exact), and `execute(program, scene)`
evaluates it with the geometry core (`spatial_manip.geometry.relations`: every spatial word is
decided there) into a `ProgramResult`. The task generator writes these programs into its tasks
as labels but computes its answers with its own code (`sim/families.py`), so the two are a
cross-check of each other (`test/reasoning/test_generator_equivalence.py`).

Node vocabulary (S = a set expression, O = a reference: `viewer`, `robot` or an object id;
F = the frame owner: `viewer` for the relative frame, the reference itself for its intrinsic
frame, a table/shelf id or `TABLE`/`SHELF` for the container's frame):

  sources      TABLE (objects in the scene, nothing held), SHELF (placement regions)
  category     filterBook(S)  filterSlot(S)  filterLabel(word, S)   (label, synonym or taxonomy group:
               reasoning/taxonomy.py, the resolution traced)  filterColour(name, S)  (perception's colour_names)
               filterColour$Dark|Light(name, S)  (of those, by their measured colour's lightness: lexicon.shaded)
               filterColour$Any(name, S)  (any object with the name among its colours: "red and white")
  attribute    filterAttr$Small|Medium|Large(S)  $Height(m, S)  $Width(m, S)
               filterAttr$Largest|Biggest|Smallest|Tallest|Shortest([k,] S)   size superlatives
               (Small/Large of objects without a book size class: the smaller/larger of the set, when
               their sizes differ clearly; all of them when they do not, so "the" stays ambiguous)
               $Empty|NonEmpty|Emptiest(S)  $Index1D(row, S)  $Column(col, S)  $Index2D(row, col, S)
  distance     filterDist$Closest|Farthest(S, O)  $RankClosest|RankFarthest(k, S, O)
               $LessThan|MoreThan|EqualTo(m, S, O)  $Range(m1, m2, S, O)
  relationship filterRel$Left|Right|Front|Behind|Upper|Lower(S, C)   parts of container C
               filterRel$LeftMost|RightMost(S, F)  $RankLeftMost|RankRightMost(k, S, F)
               filterRel$Between(S, O1, O2)
  orientation  filterOri$Flat|Vertical|Tilted(S)  $TiltDegree(deg, S)
               filterOri$Left|Right|Front|Behind(S, O, F)  $Above|Below(S, O)
               filterOri$DirectLeft|DirectRight(S, O, F)  $DirectAbove|DirectBelow(S, O, F)
               filterOri$ClockPosition(hour, S, O, F)
  unique(S)    the answer set, which must not be empty (any member satisfies the instruction)
  metric       metric$Left|Right|Front|Behind|Above(m, O, F)  m = boundary-to-boundary gap
               metric$Near(m, O)  metric$Between(O1, O2)  metric$Clock(hour, m, O, F)
               metric$In(O)   released over the middle of an open container O, at its rim
  root         pick(S)   place(S | metric, pose=upright|flat|tilted|keep, tilt_deg=x)
               (keep: the held object's own pose class, `kept_pose`: a book's upright or flat, anything
               else the way it rests; what the parser writes when the instruction has no pose word.
               A place with no pose at all means upright.)

Every place pose is checked for support before it is returned (`geometry.support.check_support`):
one where the held object would hang in the air ("50 cm above X"), lie off the work surface or
inside another object is refused with UnreachableError, so plans, dry runs and goals refuse alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from spatial_manip.errors import AmbiguousError, InvalidGoalError, TargetNotFoundError, UnreachableError
from spatial_manip.reasoning import lexicon
from spatial_manip.reasoning.taxonomy import OPEN_CONTAINERS
from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.boxes import LEAN_STEP_DEG
from spatial_manip.control.config import load_reach
from spatial_manip.geometry.reach import Reach
from spatial_manip.geometry.support import check_support
from spatial_manip.transforms import box_corners, matrix_to_quat, quat_to_matrix
from spatial_manip.program_text import Node, Sym, parse_program
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint

# --- planner policy (the words' own thresholds are in geometry.relations) ---------------------
DEFAULT_TILT_DEG = 30.0        # "at a tilt" with no angle
# A 3 cm position error on objects 20 cm apart turns their bearing by ~9 degrees.
PERCEIVED_DIRECTION_SLACK_DEG = 10.0
# A perceived tilt is measured to one step of the box fit's tilt search (boxes.LEAN_STEP_DEG) and
# may read a step off: pick-52-00010's book leaning 47.5 degrees read 55. Two steps (10) were too
# many: pick-54-00009's flat book read 80 was taken for 'about 60' (a wrong grasp, 14 contacts).
PERCEIVED_TILT_SLACK_DEG = LEAN_STEP_DEG
# The least error of a perceived box's face: the L515's depth and colour disagree by 2-5 px (about
# 1 cm at the cell's 1-1.5 m); farther away 3 sigma of its range noise is more (relations.face_error_m).
PERCEIVED_FACE_ERROR_M = 0.01


# --- results -----------------------------------------------------------------------------------
@dataclass
class PlacePose:
    position: np.ndarray
    orientation: np.ndarray            # quaternion [qx, qy, qz, qw]

    def to_dict(self) -> dict:
        return {"position": [round(float(v), 6) for v in self.position],
                "orientation": [round(float(v), 6) for v in self.orientation]}


@dataclass
class ProgramResult:
    action: str                        # "pick" | "place"
    targets: list[str]
    place_pose: PlacePose | None = None
    trace: list[dict] = field(default_factory=list)   # [{"node": text, "ids": [...]}] inner first
    pose: str | None = None            # placement pose asked for: upright | flat | tilted | keep


# --- evaluation --------------------------------------------------------------------------------
Item = Any  # SceneObject | Region


class _Eval:
    def __init__(self, scene: Scene, direction_slack_deg: float = 0.0, tilt_slack_deg: float = 0.0,
                 face_error_m: float = 0.0, reach: Reach | None = None):
        self.scene, self.direction_slack_deg, self.tilt_slack_deg = scene, float(direction_slack_deg), float(tilt_slack_deg)
        self.face_error_m = float(face_error_m)
        self._reach = reach                   # the arm the graph runs; arm.yaml's when not told
        self.unsure_ids: set[str] = set()     # measured in a distance band, not surely in it
        self.trace: list[dict] = []

    @property
    def reach(self) -> Reach:
        """The arm's reach rule: the one given, else arm.yaml's model, read only when a place asks
        (a pick never reads arm.yaml)."""
        return self._reach or load_reach()

    def measure_error_m(self, x) -> float:
        """How far a perceived box's face may lie from the object's (`rel.face_error_m`, at least
        `face_error_m`); 0 on an exact scene (face_error_m 0) and for a viewpoint."""
        return rel.face_error_m(x, self.scene.viewer.position, self.face_error_m)

    def fit_error_m(self, x) -> float:
        """How far one face of a perceived box may be off on its own (`rel.face_fit_error_m`), where
        it is compared with another box's: range noise averaged over its points, misregistration's
        floor; 0 on an exact scene."""
        return rel.face_fit_error_m(x, self.scene.viewer.position, self.face_error_m)

    # references ---------------------------------------------------------------------------
    def ref(self, s) -> SceneObject | Region | Viewpoint:
        name = s.name if isinstance(s, Sym) else str(s)
        if name in ("viewer", "you"):
            return self.scene.viewer
        if name == "robot":
            return self.scene.robot
        try:
            return self.scene.get(name)
        except KeyError:
            raise TargetNotFoundError(
                f"the program refers to {name!r}, which is not in the scene; it holds: "
                f"{_describe(self.scene)}") from None

    def container(self, s, items) -> SceneObject:
        """The table or shelf named by `s`; when the scene has none, a box around the items facing
        the viewer (so "the left of the shelf" still means its left half)."""
        name = s.name if isinstance(s, Sym) else str(s)
        cat = {"TABLE": "table", "SHELF": "shelf", "table": "table", "shelf": "shelf"}.get(name)
        if cat is None:
            obj = self.ref(s)
            if not isinstance(obj, SceneObject):
                raise InvalidGoalError(f"{name!r} is not a table or shelf")
            return self._as_container(obj)
        found = self.scene.by_category(cat)
        if found:
            return self._as_container(found[0])
        pool = items or (self.scene.regions if cat == "shelf" else self.scene.objects)
        if not pool:
            raise TargetNotFoundError(f"there is no {cat} in the scene and nothing to infer it from")
        pts = np.concatenate([box_corners(o.center, o.size, o.rotation) for o in pool])
        lo, hi = pts.min(0), pts.max(0)
        R = _yaw_facing_viewer(self.scene)                 # its front faces the viewer
        return SceneObject(f"<{cat}>", cat, cat, (lo + hi) / 2, np.maximum(hi - lo, 1e-3), R, True)

    def _as_container(self, obj: SceneObject) -> SceneObject:
        if obj.oriented:
            return obj
        # No known front: the side facing the viewer is its front.
        return SceneObject(obj.id, obj.label, obj.category, obj.center, obj.size,
                           _yaw_facing_viewer(self.scene), True)

    def frame(self, s) -> rel.FrameAxes:
        """The frame named by its owner: viewer -> relative; robot -> the robot's own; a container
        -> the container's; an oriented object -> its intrinsic frame."""
        name = s.name if isinstance(s, Sym) else str(s)
        if name in ("viewer", "you"):
            return rel.frame_axes(rel.Frame.RELATIVE, viewer=self.scene.viewer)
        if name == "robot":
            return rel.frame_axes(rel.Frame.INTRINSIC, reference=self.scene.robot, reference_id="robot")
        if name in ("TABLE", "SHELF"):
            return rel.container_axes(self.container(s, []))
        obj = self.ref(s)
        if isinstance(obj, SceneObject) and obj.category in ("table", "shelf"):
            return rel.container_axes(self._as_container(obj))
        try:
            return rel.frame_axes(rel.Frame.INTRINSIC, reference=obj, reference_id=name)
        except ValueError as e:
            raise InvalidGoalError(f"cannot use {name!r}'s own frame: {e}") from e

    # sets -----------------------------------------------------------------------------------
    def set_(self, n) -> list[Item]:
        if isinstance(n, Sym):
            if n.name == "TABLE":
                out = [o for o in self.scene.objects if not o.held and o.category not in ("table", "shelf")]
            elif n.name == "SHELF":
                out = list(self.scene.regions)
            else:
                out = [self.ref(n)]
            return out
        if not isinstance(n, Node):
            raise InvalidGoalError(f"expected a set expression, got {n!r}")
        fn = _OPS.get(n.op)
        if fn is None or n.op in ("pick", "place", "metric"):
            raise InvalidGoalError(f"{n.op!r} is not a set operation")
        out = fn(self, n)
        self.trace.append({"node": str(n), "ids": [o.id for o in out]})
        return out


def _describe(scene: Scene) -> str:
    objs = [f"{o.id} ({o.label})" for o in scene.objects]
    regs = [r.id for r in scene.regions]
    return ", ".join(objs + regs) or "nothing"


def _num(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InvalidGoalError(f"{what} must be a number, got {v!r}")
    return float(v)


def _rank(v) -> int:
    k = int(_num(v, "a rank"))
    if k < 1:
        raise InvalidGoalError(f"ranks start at 1 (the first), got {k}")
    return k


def op_category(ev: _Eval, n: Node):
    if n.op == "filterBook":
        return [o for o in ev.set_(n.args[0]) if isinstance(o, SceneObject) and o.category == "book"]
    if n.op == "filterSlot":
        return [o for o in ev.set_(n.args[0]) if isinstance(o, Region) and o.kind == "slot"]
    word = str(n.args[0]).lower().strip('"')
    objs = [o for o in ev.set_(n.args[1]) if isinstance(o, SceneObject)]
    how = {o.id: lexicon.kind_matches(word, o) for o in objs}
    out = [o for o in objs if how[o.id]]
    if any(how[o.id] == "label" for o in out):      # "the ball": the toy ball, not the ball of twine
        out = [o for o in out if how[o.id] != "form"]
    resolved = sorted({f"{o.id} ({o.label}: {how[o.id]})" for o in out if how[o.id] != "label"})
    if resolved:      # a synonym or a taxonomy group: say how the word was read
        ev.trace.append({"word": word, "resolved": resolved})
    return out


def op_colour(ev: _Eval, n: Node):
    """filterColour(name, S): the objects whose main colour (perception's, from their pixels) is
    `name`, else those with it among their names; when none, those read as its lighting neighbour
    (`lexicon.coloured`: a dim light reads orange as brown and white as gray), noted in the trace.
    $Any: any object with the name among its own ("red and white"); $Dark / $Light: `lexicon.shaded`."""
    word = str(n.args[0]).lower()
    objs = [o for o in ev.set_(n.args[1]) if isinstance(o, SceneObject)]
    if n.rel == "Any":                  # one of two colours named together ("red and white"): either name
        return [o for o in objs if lexicon.colour_matches(word, o)]
    out, near = lexicon.coloured(word, objs)
    if out and near:
        ev.trace.append({"colour": word, "read_as": list(near), "why": "no object is exactly this colour; "
                         "under a dimmer or brighter light it reads as its neighbour"})
    if n.rel in ("Dark", "Light"):      # "dark blue": by the lightness of each one's measured colour
        shade = lexicon.shaded(n.rel.lower(), out)
        ev.trace.append({"shade": n.rel.lower(), "lightness": {o.id: lexicon.lightness(o) for o in out},
                         "ids": [o.id for o in shade]})
        return shade
    return out


def op_attr(ev: _Eval, n: Node):
    r, a = n.rel, n.args
    if r in ("Small", "Medium", "Large"):
        items = ev.set_(a[0])
        books = [o for o in items if isinstance(o, SceneObject) and (o.category == "book" or o.size_class)]
        if r != "Medium" and items and not books:
            return relative_size(items, r)
        return [o for o in items if rel.size_class(o) == r.lower()]
    if r.lower() in rel.SIZE_WORDS:
        k, items = (_rank(a[0]), ev.set_(a[1])) if len(a) > 1 else (1, ev.set_(a[0]))
        return rel.size_superlative([o for o in items if isinstance(o, SceneObject)], r.lower(), k)
    if r in ("Height", "Width"):
        v = _num(a[0], f"{r} in metres")
        axes = rel.frame_axes(rel.Frame.RELATIVE, viewer=ev.scene.viewer)
        meas = rel.object_height if r == "Height" else (lambda o: rel.object_width(o, axes))
        # a side seen in part may be longer than measured, by up to what the image cut off
        return _about(ev, n, ev.set_(a[1]), v, lambda o: (meas(o), meas(o) + _hidden_m(o)), ev.measure_error_m)
    if r in ("Empty", "NonEmpty", "Emptiest"):
        items = [o for o in ev.set_(a[0]) if isinstance(o, Region)]
        if r == "Empty":
            return [o for o in items if rel.is_empty(o)]
        if r == "NonEmpty":
            return [o for o in items if rel.is_partly_occupied(o)]
        return rel.emptiest(items)
    if r == "Index1D":
        row = _rank(a[0])
        return [o for o in ev.set_(a[1]) if (s := _slot_of(ev, o)) is not None and s.row == row]
    if r == "Column":
        col = _rank(a[0])
        return [o for o in ev.set_(a[1]) if (s := _slot_of(ev, o)) is not None and s.col == col]
    if r == "Index2D":
        row, col = _rank(a[0]), _rank(a[1])
        return [o for o in ev.set_(a[2]) if (s := _slot_of(ev, o)) is not None and s.row == row and s.col == col]
    raise InvalidGoalError(f"unknown attribute filter {r!r}")


def _slot_of(ev: _Eval, o) -> Region | None:
    """The shelf slot `o` is (a slot) or stands in (an object: the slot holding its centre), so
    "the can on the bottom shelf" filters objects by row as "the bottom shelf" does slots."""
    if isinstance(o, Region):
        return o
    return next((s for s in ev.scene.regions if s.kind == "slot" and rel.point_in_box(o.center, s)), None)


RELATIVE_SIZE_RATIO = 1.3     # "the bigger bottle": its volume at least this much over the other's


def relative_size(items: list, r: str) -> list:
    """"small"/"big" (r "Small"/"Large": by volume) and "short"/"tall" ("Short"/"Tall": by height,
    `rel.object_height`) of objects with no size class (a mug, a bottle): the extreme one of the set
    when it is clearly (RELATIVE_SIZE_RATIO) smaller / larger than the next; every item when they
    are alike, so "the" stays ambiguous. The parser reads "behind the tall bottle" with it too."""
    measure = rel.object_height if r in ("Short", "Tall") else (lambda o: float(np.prod(o.size)))
    objs = sorted((o for o in items if isinstance(o, SceneObject)), key=measure, reverse=(r in ("Large", "Tall")))
    if len(objs) < 2:
        return objs
    a, b = measure(objs[0]), measure(objs[1])
    clear = max(a, b) >= RELATIVE_SIZE_RATIO * min(a, b)
    return objs[:1] if clear else objs


def op_dist(ev: _Eval, n: Node):
    r, a = n.rel, n.args
    if r in ("Closest", "Farthest", "RankClosest", "RankFarthest"):
        k, rest = (_rank(a[0]), a[1:]) if r.startswith("Rank") else (1, a)
        items, ref = ev.set_(rest[0]), ev.ref(rest[1])
        items = [o for o in items if o is not ref]
        picked = (rel.closest if "Closest" in r else rel.farthest)(items, ref, k)
        return _told_apart(ev, n, picked, items, lambda o: rel.distance(o, ref), k, "Farthest" in r,
                           _hidden_distance, ref)
    if r == "Range":
        lo, hi = sorted((_num(a[0], "a distance"), _num(a[1], "a distance")))
        items, ref = ev.set_(a[2]), ev.ref(a[3])
        return _in_distance_band(ev, n, [o for o in items if o is not ref], ref, r, lo, hi)
    if r == "NextTo":
        return _next_to(ev, n, [o for o in ev.set_(a[0]) if o is not ev.ref(a[1])], ev.ref(a[1]))
    v = _num(a[0], "a distance in metres")
    items, ref = ev.set_(a[1]), ev.ref(a[2])
    items = [o for o in items if o is not ref]
    if r == "EqualTo":
        # an object seen in part may reach nearer the reference than its box, by what is hidden
        return _about(ev, n, items, v, lambda o: (rel.distance(o, ref) - _hidden_m(o), rel.distance(o, ref)),
                      lambda o: ev.measure_error_m(o) + ev.measure_error_m(ref))
    if r not in ("LessThan", "MoreThan"):
        raise InvalidGoalError(f"unknown distance filter {r!r}")
    return _in_distance_band(ev, n, items, ref, r, v)


def _in_distance_band(ev: _Eval, n: Node, items: list, ref, word: str, value: float, upper: float | None = None) -> list:
    """Items whose distance to `ref` meets the words (`rel.in_distance_band`: "within 30 cm of",
    "more than 95 cm from", "30 to 55 cm from"). On a perceived scene a distance is an interval
    (`rel.distance_interval`): at most the boxes' distance, less by what the image's edge may have
    cut off either (`_hidden_m`). Those whose whole interval lies in the band surely meet the
    words (place-91-00008: a slot 1.04 m from a painting seen in part, 0.88 m from the whole
    painting, was taken as "more than 95 cm" from it): they come first, then those measured in the
    band but not surely, listed in `ev.unsure_ids` (a pick's fallbacks: "a book between 50 and 60
    cm from the robot" whose sure book has no grasp takes the cut one; a place keeps to the sure,
    `execute`). When none does, those measured in the band or within the two boxes' error of it
    (`ev.measure_error_m`: pick-89-00010's book 31 cm from the succulents measured 28 cm against
    "30 to 55 cm"), nearest the band first, then the surest."""
    def meets(measured) -> bool:
        return rel.in_distance_band(measured, word, value, upper)
    if ev.face_error_m <= 0.0:
        return [o for o in items if meets(rel.distance(o, ref))]
    low, high = rel.distance_band(word, value, upper)
    seen = [(o, rel.distance_interval(o, ref, _hidden_m(o), _hidden_m(ref))) for o in items]
    sure = [o for o, interval in seen if meets(interval)]
    if sure:
        # measured inside but not surely (cut by the image's edge): still answers, after the sure
        sure_ids = {o.id for o in sure}
        maybe = [o for o, interval in seen if o.id not in sure_ids and meets(interval[1])]
        ev.unsure_ids.update(o.id for o in maybe)
        return sure + maybe
    near = sorted(((o, interval) for o, interval in seen
                   if rel.outside_band_m(interval[1], low, high) <= ev.measure_error_m(o) + ev.measure_error_m(ref)),
                  key=lambda t: (rel.outside_band_m(t[1][1], low, high), rel.outside_band_m(t[1], low, high)))
    ev.trace.append({"node": f"{n} (none surely inside; measured inside or within the boxes' error of it, nearest first)",
                     "ids": [o.id for o, _ in near],
                     "off_by_m": [round(rel.outside_band_m(interval[1], low, high), 4) for _, interval in near]})
    return [o for o, _ in near]


def _told_apart(ev: _Eval, n: Node, picked: list, items: list, key: Callable, rank: int, descending: bool,
                unseen: Callable, to=None) -> list:
    """`picked`, the items at rank `rank` of `key` (`rel.rank_select`), when the measurement tells
    them from the next rank: on a perceived scene, ranks whose values differ by less than what the
    measured difference may be off (`_rank_gap_error_m`) are not told apart by it, and the answer
    would be a guess: AMBIGUOUS naming both. The difference of two boxes' keys, not one pixel's
    range: "the second leftmost" compares centres of hundreds of points each. `unseen(o)`: how far
    o's true key may lie (below, above) its box's, by what the image's edge cut off of it. An
    exact scene keeps the ranks as they are."""
    if ev.face_error_m <= 0.0 or not picked:
        return picked
    gap, near = rel.rank_margin(items, key, rank, descending)
    error = max((_rank_gap_error_m(ev, a, b, key, unseen, to) for a in picked for b in near), default=0.0)
    if near and gap < error:
        raise AmbiguousError(
            f"{', '.join(o.id for o in picked)} and {', '.join(o.id for o in near)} differ by {gap * 100:.1f} cm in "
            f"{n.rel}, less than their measurement may be off ({error * 100:.1f} cm, with what the image's edge "
            "may hide of them), so which comes first is a guess: say which (e.g. by colour or size)")
    return picked


def _rank_gap_error_m(ev: _Eval, a, b, key: Callable, unseen: Callable, to=None) -> float:
    """How far the measured difference of `a`'s and `b`'s keys may be from the true one: the two
    boxes' measurement (`rel.rank_gap_error_m`, and `to`'s when the key is the distance to it),
    and what is hidden of either (`unseen`) on the side that closes their gap: the lower key's
    true value above it, the higher's below it. A rank that hangs on an object's hidden side is a
    guess as much as one inside the sensor's error."""
    lower, higher = sorted((a, b), key=key)
    return rel.rank_gap_error_m(a, b, ev.fit_error_m, to) + unseen(lower)[1] + unseen(higher)[0]


def _hidden_distance(o) -> tuple[float, float]:
    """An object seen in part may reach nearer anything than its box, by what is hidden (`_hidden_m`),
    never farther: its boundary distance may be that much shorter."""
    return _hidden_m(o), 0.0


def _hidden_centre_along(axis) -> Callable:
    """`unseen` of a centre's coordinate along the unit `axis`: an object seen in part has its
    centre up to half of what is hidden (`_hidden_m`) off its box's, towards the part the image
    cut off. Perception says where that lies (`extra["hidden_towards"]`, the directions it may
    run on in): the key moves only by their components along `axis`, so a book cut by the image's
    right edge can only be further right. A scene that does not say (one recorded before it
    did): either way."""
    def unseen(o) -> tuple[float, float]:
        half = _hidden_m(o) / 2
        towards = o.extra.get("hidden_towards") if half > 0.0 else None
        if not towards:
            return half, half
        along = np.asarray(towards, float) @ np.asarray(axis, float)
        return half * max(0.0, -float(along.min())), half * max(0.0, float(along.max()))
    return unseen


def _next_to(ev: _Eval, n: Node, items: list, ref) -> list:
    """"the mug next to the clock", "the slot beside the jar": `rel.next_to`, an object within
    rel.NEXT_TO_SAID_MAX_M of the reference by up to the two boxes' measurement error on a perceived
    scene. The closest one far away is not what the words describe: a mug perception did not name
    may be the one beside the clock (objects-63-00007 took a named mug 0.7 m from it)."""
    axes = rel.frame_axes(rel.Frame.RELATIVE, viewer=ev.scene.viewer)
    beside = rel.next_to(items, ref, axes, lambda o: _hidden_m(o) + ev.measure_error_m(o) + ev.measure_error_m(ref))
    if items and not beside and not isinstance(items[0], Region):
        far = ", ".join(f"{o.id} {rel.distance(o, ref):.2f} m" for o in rel.closest(items, ref))
        ev.trace.append({"node": f"{n} (the closest, {far} from it, is not next to it: within "
                                 f"{rel.NEXT_TO_SAID_MAX_M * 100:.0f} cm)", "ids": []})
    return beside


def _about(ev: _Eval, n: Node, items: list, stated: float, interval: Callable, error_m: Callable) -> list:
    """"about N" (`rel.is_about`) over measured lengths: each item's `interval(item)` (low, high)
    holds its true length (one value when it is seen whole). Those whose interval meets the band:
    on an exact scene in its order, on a perceived one nearest N first (any of them satisfies the
    words; the first is the likeliest). When none does on a perceived scene, the one that meets it
    widened by its measurement's error (`error_m`, `rel.is_about`): ESPIRE's +-3 cm band is
    narrower than two noisy box faces (pick-51-00007's book 88.6 cm from the cube measured 84.5).
    Two such whose misses differ by less than that error are not told apart by the measurement:
    AMBIGUOUS, naming both, rather than a guess."""
    hits = [o for o in items if rel.is_about(interval(o), stated)]
    if ev.face_error_m <= 0.0:
        return hits
    if hits:
        return sorted(hits, key=lambda o: rel.length_off_m(interval(o), stated))
    band = rel.approx_tolerance_m(stated)
    near = sorted((o for o in items if rel.is_about(interval(o), stated, error_m(o))),
                  key=lambda o: rel.about_miss_m(interval(o), stated) / error_m(o))
    misses = [rel.about_miss_m(interval(o), stated) for o in near]
    ev.trace.append({"node": f"{n} (none inside the band; the nearest within its measurement's error of it)",
                     "ids": [o.id for o in near[:1]], "off_by_m": [round(m, 4) for m in misses]})
    if len(near) > 1 and misses[1] - misses[0] <= max(error_m(near[0]), error_m(near[1])):
        said = ", ".join(f"{o.id} ({rel.length_off_m(interval(o), stated) * 100:.1f} cm off)" for o in near[:2])
        raise AmbiguousError(
            f"nothing measures within {band * 100:.0f} cm of {stated * 100:.0f} cm; {said} are both that far within "
            "the depth sensor's error, which cannot tell them apart: say which (e.g. by colour or position)")
    return near[:1]


def _in_direction(ev: _Eval, n: Node, items: list, word: str, axes, origin) -> list:
    """Items in the <word> sector (`rel.in_direction`). On a perceived scene the surest first,
    nearest the sector's centre (`rel.direction_offset_deg`): a book 1 degree inside the edge
    is read outside it as often, and taking the first seen picked one 5 degrees outside it
    (pick-64-00000). When none is inside, those just outside it (by less than the position
    error, `direction_slack_deg`) are the best reading of the words, nearest first."""
    hits = [o for o in items if rel.in_direction(o, word, axes, origin)]
    if ev.direction_slack_deg <= 0.0:
        return hits
    if not hits:
        hits = [o for o in items if rel.in_direction(o, word, axes, origin, ev.direction_slack_deg)]
        ev.trace.append({"node": f"{n} (none inside the sector; within {ev.direction_slack_deg:g} degrees of it)",
                         "ids": [o.id for o in hits]})
    return sorted(hits, key=lambda o: rel.direction_offset_deg(o, word, axes, origin))


def _hidden_m(o) -> float:
    """How much longer than its box an object seen only in part (cut by the image's edge) may be:
    up to the longest book for a book, as long again for anything else; 0 when seen whole."""
    if not (isinstance(o, SceneObject) and o.extra.get("truncated")):
        return 0.0
    longest = float(np.max(o.size))
    if o.category == "book":
        return max(0.0, max(r[0][1] for r in rel.BOOK_SIZE_RANGES_M.values()) - longest)
    return longest


_PART = {"Left": "left", "Right": "right", "Front": "front", "Behind": "back", "Upper": "upper", "Lower": "lower"}


def op_rel(ev: _Eval, n: Node):
    r, a = n.rel, n.args
    if r in _PART:
        items = ev.set_(a[0])
        box = ev.container(a[1], items)
        return [o for o in items if rel.part_of(o, box, _PART[r])]
    if r in ("LeftMost", "RightMost", "RankLeftMost", "RankRightMost"):
        k, rest = (_rank(a[0]), a[1:]) if r.startswith("Rank") else (1, a)
        items = ev.set_(rest[0])
        axes = ev.frame(rest[1] if len(rest) > 1 else Sym("viewer"))
        picked = (rel.leftmost if "Left" in r else rel.rightmost)(items, axes, k)
        return _told_apart(ev, n, picked, items, lambda o: rel.lateral(o, axes), k, "Right" in r,
                           _hidden_centre_along(axes.right))
    if r == "Between":
        items, o1, o2 = ev.set_(a[0]), ev.ref(a[1]), ev.ref(a[2])
        return [o for o in items if o is not o1 and o is not o2
                and rel.is_between(o, o1, o2, same_level=isinstance(o, Region))]
    raise InvalidGoalError(f"unknown relationship filter {r!r}")


def op_ori(ev: _Eval, n: Node):
    r, a = n.rel, n.args
    if r in ("Flat", "Vertical", "Tilted"):
        want = {"Flat": "flat", "Vertical": "upright", "Tilted": "tilted"}[r]
        return [o for o in ev.set_(a[0]) if isinstance(o, SceneObject) and rel.seen_book_pose_class(o) == want]
    if r == "TiltDegree":
        v = _num(a[0], "a tilt in degrees")
        items = [o for o in ev.set_(a[1]) if isinstance(o, SceneObject)]
        hits = [o for o in items if rel.has_tilt(o, v)]
        if hits or ev.tilt_slack_deg <= 0.0:
            return hits
        # None inside the band: on a perceived scene, the one nearest it (by less than a measured
        # tilt's error) is the best reading of the words.
        near = sorted((o for o in items if rel.has_tilt(o, v, ev.tilt_slack_deg)),
                      key=lambda o: abs(rel.object_tilt_deg(o) - v))[:1]
        ev.trace.append({"node": f"{n} (none inside the band; the nearest within {ev.tilt_slack_deg:g} degrees of it)",
                         "ids": [o.id for o in near]})
        return near
    if r in ("Above", "Below"):
        items, ref = ev.set_(a[0]), ev.ref(a[1])
        f = rel.is_above if r == "Above" else rel.is_below
        return [o for o in items if o is not ref and f(o, ref)]
    hour = None
    if r == "ClockPosition":
        hour, a = _rank(a[0]), a[1:]
    items, ref = ev.set_(a[0]), ev.ref(a[1])
    items = [o for o in items if o is not ref]
    owner = a[2] if len(a) > 2 else a[1]
    axes = ev.frame(owner)
    # The frame's origin is the reference itself when the frame is attached to it; otherwise
    # (relative frame, separate reference) the bearing is seen from the reference.
    origin = None if _name(owner) == _name(a[1]) else ref
    if r in ("Left", "Right", "Front", "Behind"):
        return _in_direction(ev, n, items, r.lower(), axes, origin)
    if r in ("DirectLeft", "DirectRight"):
        return rel.directly_beside(items, ref, r[6:].lower(), axes)
    if r in ("DirectAbove", "DirectBelow"):
        return rel.directly_above(items, ref, axes, below=(r == "DirectBelow"))
    if r == "ClockPosition":
        return [o for o in items if rel.clock_position(o, axes, origin) == hour]
    raise InvalidGoalError(f"unknown orientation filter {r!r}")


def _name(s) -> str:
    return s.name if isinstance(s, Sym) else str(s)


def op_unique(ev: _Eval, n: Node):
    items = ev.set_(n.args[0])
    if not items:
        raise TargetNotFoundError(_empty_message(ev.trace, n.args[0]))
    return items


_OPS: dict[str, Callable[[_Eval, Node], list]] = {
    "filterBook": op_category, "filterSlot": op_category, "filterLabel": op_category,
    "filterColour": op_colour,
    "filterAttr": op_attr, "filterDist": op_dist, "filterRel": op_rel, "filterOri": op_ori,
    "unique": op_unique,
}


# --- placement poses ---------------------------------------------------------------------------
def kept_pose(held: SceneObject | None) -> str:
    """The pose class a place that names no pose keeps (issue 20): the held book's own, upright or
    flat; a tilt in the fingers is the grasp's doing, not a pose anyone asked for, so it rounds to
    the nearer of the two. Anything else keeps the way it rests ("resting": the face it rests on
    stays down, `resting_rotation`): a carton or a bottle lying on its side is set down on its
    side, a mug on its base. Nothing held: upright."""
    if held is None:
        return "upright"
    if held.category != "book":
        return "resting"
    cls = rel.book_pose_class(held)
    if cls == "tilted":
        return "flat" if rel.book_tilt_deg(held) > 45.0 else "upright"
    return cls


def _pose_rotation(base_R: np.ndarray, pose: str, tilt_deg: float, held: SceneObject | None, *,
                   own_yaw: bool = False) -> np.ndarray:
    """`relations.placed_rotation`, with keep read as the held object's pose class. A resting
    object keeps its own yaw when `own_yaw` (a place on open ground), else lines up with `base_R`
    (a slot's walls)."""
    kept = kept_pose(held) if pose == "keep" else pose
    if kept == "resting":
        return resting_rotation(held.rotation, None if own_yaw else base_R)
    return rel.placed_rotation(base_R, kept, tilt_deg, held)


def resting_rotation(R_held, base_R=None) -> np.ndarray:
    """The held object's rotation levelled: turned by the least angle that brings its most
    vertical axis to vertical, so the face it rests on stays down and the gripper, holding it from
    above, stays upright (standing a carton carried on its side on its end would need the fingers
    turned sideways). With `base_R` (a slot's rotation), also turned about the vertical by the
    least angle that lines its sides up with base_R's axes."""
    R = np.asarray(R_held, float)
    k = int(np.argmax(np.abs(R.T @ rel.UP)))
    up = R[:, k] * np.sign(R[:, k] @ rel.UP)
    axis, c = np.cross(up, rel.UP), float(up @ rel.UP)
    s = float(np.linalg.norm(axis))
    if s > 1e-9:
        K = _skew(axis / s)
        R = (np.eye(3) + s * K + (1.0 - c) * K @ K) @ R
    if base_R is not None:
        side = R[:, (k + 1) % 3]
        bx = np.asarray(base_R, float)[:, 0]
        turn = np.arctan2(float(np.cross(side, bx) @ rel.UP), float(side @ bx))
        turn -= np.round(turn / (np.pi / 2)) * (np.pi / 2)
        R = _skew_exp(rel.UP, turn) @ R
    return R


def _skew(v) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _skew_exp(axis, angle: float) -> np.ndarray:
    """The rotation by `angle` radians about the unit `axis` (Rodrigues)."""
    K = _skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def _yaw_facing_viewer(scene: Scene) -> np.ndarray:
    return rel.facing_viewer(scene.viewer)


def assume_visible_fronts(scene: Scene) -> tuple[Scene, list[str]]:
    """The scene with a front assumed for each object known to have one whose front is not
    known (`extra["has_front"]`, e.g. perceived): the side of its box that faces the viewer most
    directly. A front is grounded from the image (MSSR), so one the camera cannot see could not
    be grounded either; and objects set out on display face the room. Perception turns those whose
    front it measured (perception/front.py); why it could not is kept in the note. Returns the scene and the
    ids given an assumed front (for the trace)."""
    objects, assumed = [], []
    for o in scene.objects:
        turned = _facing_viewer(o, scene.viewer.position) if o.extra.get("has_front") and not o.oriented else None
        objects.append(turned or o)
        if turned is not None:
            assumed.append(o.id)
    return scene.with_objects(objects), assumed


def front_assumed(o) -> bool:
    """Whether an object's front was assumed (assume_visible_fronts), not observed."""
    return isinstance(o, SceneObject) and str(o.extra.get("front", "")).startswith("assumed")


def _facing_viewer(o: SceneObject, viewer_position: np.ndarray) -> SceneObject | None:
    """`o` with its front (+x) on the vertical box side facing `viewer_position` most directly, of
    the two ends of the axis its front lies on when perception knows it (`extra["front_axis"]`,
    perception.front.front_axis: a picture frame seen edge on faces along its thin side, not out of
    its edge toward the camera, pick-82-00001); None when the viewer is straight above it."""
    try:
        to_viewer = rel.horizontal(np.asarray(viewer_position, float) - o.center)
    except ValueError:
        return None
    unmeasured = o.extra.get("front_unmeasured")
    why = "assumed: the side facing the camera"
    axis = o.extra.get("front_axis")
    if axis is not None:
        axis = rel.horizontal(np.asarray(axis, float))
        to_viewer = axis if float(axis @ to_viewer) >= 0.0 else -axis
        why = "assumed: the end of its front's side nearer the camera"
    return rel.turned_to_face(o, to_viewer, why + (f" (not measured: {unmeasured})" if unmeasured else ""))


def _finish_pose(scene: Scene, xy, base_z: float, R: np.ndarray) -> PlacePose:
    held = scene.held_object()
    size = held.size if held is not None else np.zeros(3)
    return PlacePose(rel.resting_centre(xy, base_z, R, size), matrix_to_quat(R))


def slot_place_pose(scene: Scene, slot: Region, pose: str, tilt_deg: float) -> PlacePose:
    base = slot.rotation if not np.allclose(slot.rotation, np.eye(3)) else _yaw_facing_viewer(scene)
    R = _pose_rotation(base, pose, tilt_deg, scene.held_object())
    bottom = rel.bottom_z(slot)
    return _finish_pose(scene, slot.center, bottom, R)


def metric_place_pose(ev: _Eval, m: Node, pose: str, tilt_deg: float) -> PlacePose:
    scene, a, r = ev.scene, m.args, m.rel
    held = scene.held_object()
    R = _pose_rotation(_yaw_facing_viewer(scene), pose, tilt_deg, held, own_yaw=True)
    if r == "Between":
        p1, p2 = (rel.position_of(ev.ref(x)) for x in a[:2])
        c = (p1 + p2) / 2
        return _finish_pose(scene, c, rel.support_top(scene.objects, c, min(p1[2], p2[2])), R)
    if r == "In":
        return _in_container(scene, ev.ref(a[0]), R)
    if r == "Near":
        gap, ref = _num(a[0], "a distance"), ev.ref(a[1])
        if gap < 0:
            raise InvalidGoalError(f"a placement distance must be positive, got {gap} m")
        return _freest_place(ev, ref, gap, R)
    if r == "Clock":
        hour, gap, ref = _rank(a[0]), _num(a[1], "a distance"), ev.ref(a[2])
        direction = rel.clock_direction(hour, ev.frame(a[3] if len(a) > 3 else a[2]))
    elif r in ("Left", "Right", "Front", "Behind", "Above"):
        gap, ref = _num(a[0], "a distance"), ev.ref(a[1])
        if r == "Above":               # gravity's up in any frame: the reference needs no front
            direction = rel.UP.copy()
        else:
            axes = ev.frame(a[2] if len(a) > 2 else a[1])
            attached = axes.attached_to == _name(a[1]) or (len(a) <= 2)
            direction = rel.metric_direction(r, axes, attached)
    else:
        raise InvalidGoalError(f"unknown metric placement {r!r}")
    if gap < 0:
        raise InvalidGoalError(f"a placement distance must be positive, got {gap} m")
    if r == "Above":
        c = rel.position_of(ref)
        top = rel.top_z(ref)
        return _finish_pose(scene, c, top + gap, R)
    return _offset_pose(scene, ref, direction, gap, R)


def _in_container(scene: Scene, box, R: np.ndarray) -> PlacePose:
    """"in the bowl": released over the middle of an open container (taxonomy.OPEN_CONTAINERS), at
    its rim, so it drops inside; refused when the thing named holds nothing or the held object's
    footprint is wider than its opening."""
    if not isinstance(box, SceneObject) or not lexicon.label_words(box) & set(OPEN_CONTAINERS):
        what = box.label if isinstance(box, SceneObject) else str(box)
        raise InvalidGoalError(f"the {what} is not something to put things in (open containers: "
                               f"{', '.join(OPEN_CONTAINERS[:6])}, ...); say 'on', 'next to' or where on the table")
    held = scene.held_object()
    if held is not None:
        turned = _turned_to_fit(held, box, R)
        if turned is None:
            foot = sorted(2 * rel.half_extent_along(replace(held, rotation=R), axis) for axis in np.eye(3)[:2])
            opening = sorted(2 * rel.half_extent_along(box, axis) for axis in np.eye(3)[:2])
            raise UnreachableError(f"the {held.label} ({foot[1] * 100:.0f} x {foot[0] * 100:.0f} cm) does not fit in the "
                                   f"{box.label} ({opening[1] * 100:.0f} x {opening[0] * 100:.0f} cm across), "
                                   "however it is turned")
        R = turned
    top = rel.top_z(box)
    return _finish_pose(scene, box.center, top, R)


def _turned_to_fit(held: SceneObject, box: SceneObject, R: np.ndarray) -> np.ndarray | None:
    """The held object's rotation R turned about the vertical, by the smallest turn (5 degree steps)
    whose footprint lies within the container's opening along the container's own sides: an 18 cm
    pencil goes into a 14 cm tin corner to corner. None when no turn fits."""
    sides = [rel.horizontal(box.rotation[:, k]) for k in range(3) if abs(box.rotation[2, k]) < 0.7]
    opening = [rel.half_extent_along(box, side) for side in sides]
    for deg in sorted(range(-85, 95, 5), key=abs):
        c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
        turned = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ R
        moved = replace(held, rotation=turned)
        if all(rel.half_extent_along(moved, side) <= half for side, half in zip(sides, opening)):
            return turned
    return None


def _offset_pose(scene: Scene, ref, direction: np.ndarray, gap: float, R: np.ndarray) -> PlacePose:
    """The held object in rotation R, `gap` from `ref` (boundary to boundary) along a ground
    direction, standing on the table or shelf under that spot (else level with ref's bottom)."""
    held = scene.held_object()
    # the held object's half extent, in its placed orientation, along the offset direction
    held_half = rel.half_extent_along(replace(held, rotation=R), direction) if held is not None else 0.0
    target = rel.offset_position(ref, direction, gap, held_half)
    return _finish_pose(scene, target, rel.support_top(scene.objects, target, rel.bottom_z(ref)), R)


def _freest_place(ev: _Eval, ref, gap: float, R: np.ndarray) -> PlacePose:
    """For "N cm from X" with no direction: of the 8 viewer-frame directions, the place where the
    held object rests (geometry.support) and the arm reaches (`_reached`) whose neighbourhood is
    farthest from every other object, ties broken towards the viewer's right; when none is in
    reach, the freest that rests (the arm's own check decides); when none rests, the freest (which
    execute refuses, saying why). The freest alone was a corner of the table behind a bookend 0.93 m
    from the robot, while its front side was free and in reach (objects-93-00011, UNREACHABLE)."""
    axes = rel.frame_axes(rel.Frame.RELATIVE, viewer=ev.scene.viewer)
    c = rel.position_of(ref)
    others = [o for o in ev.scene.objects if o is not ref and not o.held and o.category not in ("table", "shelf")]
    scored = []
    for hour in (3, 9, 6, 12, 2, 4, 8, 10):
        d = rel.clock_direction(hour, axes)
        p = c + d * (rel.half_extent_along(ref, d) + 0.1)
        scored.append((-round(min((rel.distance_to_point(o, p) for o in others), default=1e9), 6), len(scored), d))
    scored.sort(key=lambda t: t[:2])          # freest first; ties keep the order above
    places = [_offset_pose(ev.scene, ref, d, gap, R) for *_, d in scored]
    resting = [pp for pp in places if _rests(ev.scene, pp)]
    reached = [pp for pp in resting if _reached(ev, pp)]
    if reached and reached[0] is not resting[0]:
        freer = resting[:next(k for k, pp in enumerate(resting) if pp is reached[0])]
        ev.trace.append({"node": "reach", "ids": [], "position": reached[0].to_dict()["position"],
                         "out_of_reach": [pp.to_dict()["position"] for pp in freer],
                         "why": "freer places beside it lie beyond the arm's reach"})
    return (reached or resting or places)[0]


def _reached(ev: _Eval, pp: PlacePose) -> bool:
    """The arm reaches down to the top of the held object set at `pp` (geometry.reach, the
    evaluation's arm model)."""
    top = rel.top_z(_placed(ev.scene, pp))
    return ev.reach.reaches_from_above([pp.position[0], pp.position[1], top], ev.scene.robot.position)


# --- entry point -------------------------------------------------------------------------------
def execute(program: Node | str, scene: Scene, *, direction_slack_deg: float = 0.0,
            tilt_slack_deg: float = 0.0, face_error_m: float = 0.0, reach: Reach | None = None) -> ProgramResult:
    """Evaluate a program on a scene. Raises TargetNotFoundError when the answer set is empty
    (the message names the step where the candidates ran out), InvalidGoalError on a malformed
    program. `direction_slack_deg`: for a perceived scene, a left/right/front/behind filter that
    finds nothing inside its sector takes what lies within this many degrees of it;
    `tilt_slack_deg`: a 'tilted about N degrees' filter that finds nothing inside its band takes
    the object nearest it within this many degrees; `face_error_m`: the least error of a
    perceived box's face, by which (growing with range) an 'about N cm' that finds nothing inside
    its band may miss it (the task generator and checker keep the exact sectors and bands);
    `reach`: the arm's reach rule, the one of the arm the graph was started with (None: arm.yaml's
    model, read on first use)."""
    if isinstance(program, str):
        program = parse_program(program)
    if not isinstance(program, Node) or program.op not in ("pick", "place"):
        raise InvalidGoalError(f"a program's root must be pick(...) or place(...), got {program}")
    ev = _Eval(scene, direction_slack_deg, tilt_slack_deg, face_error_m, reach)
    pose = _name(program.kw("pose", Sym("upright" if program.op == "place" else "keep")))
    tilt = float(program.kw("tilt_deg", DEFAULT_TILT_DEG if pose == "tilted" else 0.0))
    if pose not in ("upright", "flat", "tilted", "keep"):
        raise InvalidGoalError(f"pose must be upright, flat, tilted or keep, got {pose!r}")
    body = program.args[0] if program.args else None
    if body is None:
        raise InvalidGoalError(f"{program.op}() needs an argument")
    try:
        if program.op == "place" and isinstance(body, Node) and body.op == "metric":
            pp = metric_place_pose(ev, body, pose, tilt)
            ev.trace.append({"node": str(body), "ids": [], "position": pp.to_dict()["position"]})
            _check_supported(ev, pp)
            return ProgramResult("place", [], pp, _trace_kept_pose(ev.trace, pose, scene), pose)
        items = ev.set_(body)
        if not items:
            raise TargetNotFoundError(_empty_message(ev.trace, body))
    except (IndexError, TypeError) as e:
        raise InvalidGoalError(f"malformed program {program}: {e}") from e
    if program.op == "place":
        items = _with_room(items)
        # where to put it is ours to choose: a place that surely meets the words
        items = [o for o in items if o.id not in ev.unsure_ids] or items
    ids = [o.id for o in items]
    if program.op == "pick":
        return ProgramResult("pick", ids, None, ev.trace, None)
    regions = [o for o in items if isinstance(o, Region)]
    pp = None
    if regions:
        best = _slot_to_place(ev, regions)
        pp = slot_place_pose(scene, best, pose, tilt)
        _check_supported(ev, pp)
    return ProgramResult("place", ids, pp, _trace_kept_pose(ev.trace, pose, scene), pose)


def _with_room(items: list) -> list:
    """The places of `items` with room for what is held: a full slot (`rel.is_full`) has none, so
    "the slot next to the toolbox", one full and one free beside it, is the free one; when every
    slot the words name is full ("the slot immediately left of the wine" holding an ice bucket)
    there is nowhere to put it: TARGET_NOT_FOUND naming them, never a place into a full slot."""
    room = [o for o in items if not (isinstance(o, Region) and rel.is_full(o))]
    if not room:
        full = ", ".join(f"{o.id} ({o.occupancy:.0%} occupied)" for o in items)
        raise TargetNotFoundError(f"every slot the words name is full: {full}; there is no room to put it there")
    return room


def _slot_to_place(ev: _Eval, slots: list[Region]) -> Region:
    """`slot_to_place` with the evaluation's reach, tracing the nearer slots it passed over."""
    best, skipped = slot_to_place(slots, ev.scene.robot, ev.reach)
    if skipped:
        ev.trace.append({"node": "reach", "ids": [best.id], "out_of_reach": skipped,
                         "why": "nearer slots the words allow lie beyond the arm's reach"})
    return best


def slot_to_place(slots: list[Region], robot: Viewpoint, reach: Reach | None = None) -> tuple[Region, list[str]]:
    """Of the slots an answer allows (any one satisfies it), the one the arm reaches best (`reach`,
    the launched arm's, None: arm.yaml's; geometry.reach's `slot_tier`: short of full stretch, then
    at it) nearest the robot, and the ids of the nearer slots passed over as out of reach; when it
    reaches none, the nearest, which the arm's own check then refuses as UNREACHABLE. Nearest alone
    put the book into a slot out of reach while another the words allow was in reach (session 32),
    and into a bottom slot at full stretch while one short of it was allowed (books place 109).
    The one ranking of a program's slots and of a model's TARGETS answer (mssr_loop)."""
    reach = reach or load_reach()
    tier = {s.id: reach.slot_tier(s, robot.position) for s in slots}
    away = {s.id: rel.distance(s, robot) for s in slots}
    ranked = sorted(slots, key=lambda s: (tier[s.id], away[s.id]))
    skipped = [s.id for s in ranked if tier[s.id] == 2 and away[s.id] < away[ranked[0].id]]
    return ranked[0], skipped


def _placed(scene: Scene, pp: PlacePose) -> SceneObject:
    """The held object as it would stand at `pp` (a point-sized object when nothing is held)."""
    held, R = scene.held_object(), quat_to_matrix(pp.orientation)
    if held is None:
        return SceneObject("<placed>", "object", "object", pp.position, np.full(3, 1e-3), R)
    return replace(held, center=np.asarray(pp.position, float), rotation=R, held=False)


def _rests(scene: Scene, pp: PlacePose) -> bool:
    try:
        check_support(scene, _placed(scene, pp))
    except UnreachableError:
        return False
    return True


def _check_supported(ev: _Eval, pp: PlacePose) -> None:
    """Refuse (UnreachableError) a place where the held object would not rest: in mid-air, off
    the work surface, over an edge or inside another object (geometry.support); trace what it
    rests on."""
    surface = check_support(ev.scene, _placed(ev.scene, pp))
    ev.trace.append({"node": "support", "ids": [surface.owner_id], "rests_on": surface.words,
                     "top_z": round(surface.top_z, 4)})


def _trace_kept_pose(trace: list[dict], pose: str, scene: Scene) -> list[dict]:
    """Say which pose class a place without a pose word keeps (so the trace shows it was not added)."""
    if pose == "keep":
        kept = kept_pose(scene.held_object())
        trace.append({"node": "pose=keep", "ids": [], "pose_class": kept,
                      "why": "no pose word: the held object keeps "
                             + ("the way it rests (the face it rests on stays down)" if kept == "resting"
                                else "its pose class")})
    return trace


def _empty_message(trace: list[dict], body) -> str:
    where = next((t for t in trace if "ids" in t and not t["ids"]), None)   # category/colour notes carry no ids
    step = f" (the candidates ran out at {where['node']})" if where else ""
    return f"nothing in the scene satisfies {body}{step}"
