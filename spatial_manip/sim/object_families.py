"""Task families of the objects suite: everyday objects (sim/object_sets.py) asked for by category,
colour, size and relation, picked from the table or set down beside another object.

Like families.py, each family enumerates a scene's variants and computes their answers with its
own code from `geometry.relations` (never the planner's reader). Colour words are the objects'
own colour names (extra["colour_names"], perception's names of their rendered pixels).
A pick variant is kept only when its words single out one object (the instruction says "the ..."),
so a careful reader never has to guess; a place variant names a reference whose label is unique.

Actions: "objects-pick" (tabletop scene) and "objects-place" (the robot holds an object; the
variant carries its success check and the generator's set-down pose in `metric`).
"""
from __future__ import annotations

import numpy as np

from spatial_manip.geometry import relations as rel
from spatial_manip.transforms import matrix_to_quat
from spatial_manip.program_text import node
from spatial_manip.scene import Scene, SceneObject
from spatial_manip.sim.families import Family, Variant
from spatial_manip.sim.object_sets import is_everyday

PICK, PLACE = "objects-pick", "objects-place"
TASK_ACTION = {PICK: "pick", PLACE: "place"}
TABLE = node("filterObject", None, "TABLE")
DIRECTIONS = ("left", "right", "front", "behind")
PLACE_GAP_M = 0.05            # where the generator's (and oracle's) set-down leaves the held object
NEAR_CHECK_M = 0.25           # "to the left of X" also means near X: within 25 cm of it
CLEARANCE_M = 0.03            # a set-down keeps this from every object but its reference
PLACE_AREA = (0.33, -0.48, 0.73, 0.48)   # x0, y0, x1, y1: on the table, within the arm's reach
# The generator's fairness margins: what keeps a question off the edge of its answer, not what the
# words mean (relations.in_direction's 90-degree sectors stay the definition, in the checker too).
# A direction answer lies this far inside its sector and every other candidate this far outside it:
# a position seen through a real camera is a few degrees off, and a question whose answer turns
# on them is not fair.
SECTOR_MARGIN_DEG = 10.0
# A question in a reference's own frame ("behind the alarm clock") is asked only when its front faces
# the camera within this: a person sees which way it faces. objects-75-00008 asked "behind the alarm
# clock" of a clock turned 88 degrees from the camera, which shows the camera its side.
FRONT_SEEN_DEG = 60.0


def plural(cat: str) -> str:
    return cat + ("es" if cat.endswith(("x", "s", "sh", "ch")) else "s")


def items(scene: Scene) -> list[SceneObject]:
    return [o for o in scene.objects if is_everyday(o) and not o.held]


def _by_category(scene: Scene) -> dict[str, list[SceneObject]]:
    out: dict = {}
    for o in items(scene):
        out.setdefault(o.category, []).append(o)
    return out


def colour(o: SceneObject) -> str:
    cs = o.extra.get("colour_names") or []
    return cs[0] if cs else ""


def references(scene: Scene) -> list[tuple[SceneObject, str]]:
    """(object, its phrase) for what a task may name as a reference: the table's reference
    objects and everyday objects whose category is unique on the table and not the carried
    object's ("the bottle" with a bottle in the hand and one on the table names neither)."""
    refs = [(o, o.label) for o in scene.objects if o.category == "reference" and o.extra.get("placement") == "near"]
    held = scene.held_object()
    cats = _by_category(scene)
    refs += [(ms[0], cat) for cat, ms in sorted(cats.items()) if len(ms) == 1 and (held is None or held.category != cat)]
    return refs


def _viewer_axes(scene: Scene) -> rel.FrameAxes:
    return rel.frame_axes(rel.Frame.RELATIVE, viewer=scene.viewer)


def _pick(body, answer, **fields) -> Variant:
    return Variant(node("pick", None, node("unique", None, body)), [o.id for o in answer], fields)


def _cat_node(cat: str):
    return node("filterCategory", cat, TABLE)


# --- pick -----------------------------------------------------------------------------------------
def v_category(scene: Scene) -> list[Variant]:
    """'the bowl' when one bowl stands on the table."""
    return [_pick(_cat_node(cat), ms, cat=cat) for cat, ms in sorted(_by_category(scene).items()) if len(ms) == 1]


def v_colour(scene: Scene) -> list[Variant]:
    """'the red mug' among two mugs of different colours."""
    out = []
    for cat, ms in sorted(_by_category(scene).items()):
        if len(ms) < 2:
            continue
        for o in ms:
            same = [m for m in ms if colour(m) == colour(o)]
            if colour(o) and len(same) == 1:
                out.append(_pick(node("filterColor", colour(o), _cat_node(cat)), [o], cat=cat, colour=colour(o)))
    return out


def v_size(scene: Scene) -> list[Variant]:
    """'the smaller of the two bowls' / 'the taller bottle' when the sizes differ beyond a tie."""
    out = []
    for cat, ms in sorted(_by_category(scene).items()):
        if len(ms) != 2:
            continue
        for word in ("smaller", "bigger", "taller", "shorter"):
            answer = rel.size_superlative(ms, word)
            if len(answer) == 1 and _clearly_different(ms, word):
                out.append(_pick(node("filterSize", word, _cat_node(cat)), answer, cat=cat, cats=plural(cat), size=word))
    return out


def _clearly_different(ms, word: str) -> bool:
    """A person sees the difference: 15 % in volume, 2 cm in height."""
    if word in ("taller", "shorter"):
        h = sorted(rel.object_height(o) for o in ms)
        return h[1] - h[0] >= 0.02
    v = sorted(float(np.prod(o.size)) for o in ms)
    return v[1] >= 1.15 * v[0]


def v_most(side: str):
    """'the leftmost mug' (the viewer's left) among two or more."""
    pick_of = rel.leftmost if side == "left" else rel.rightmost

    def f(scene):
        axes = _viewer_axes(scene)
        return [_pick(node("filterRel", side.capitalize() + "Most", _cat_node(cat), "viewer"), pick_of(ms, axes),
                      cat=cat, side=side)
                for cat, ms in sorted(_by_category(scene).items()) if len(ms) >= 2 and len(pick_of(ms, axes)) == 1
                and rel.clearly_ranked(ms, lambda o: rel.lateral(o, axes), 1, side == "right")]
    return f


def v_closest(scene: Scene) -> list[Variant]:
    """'the mug closest to the jar' / 'the bottle next to the bowl'."""
    out = []
    for cat, ms in sorted(_by_category(scene).items()):
        if len(ms) < 2:
            continue
        for ref, phrase in references(scene):
            if ref in ms:
                continue
            answer = rel.closest(ms, ref)
            if len(answer) != 1 or not rel.clearly_ranked(ms, lambda o: rel.distance(o, ref)):
                continue
            # "next to" only when the answer is the one object within NEXT_TO_MAX_M of the reference
            nxt = [o for o in ms if rel.is_next_to(o, ref)]
            fields = dict(cat=cat, ref=f"the {phrase}", near=("next to" if nxt == answer else "closest to"))
            out.append(_pick(node("filterDist", "Closest", _cat_node(cat), ref.id), answer, **fields))
    return out


def v_colour_near(scene: Scene) -> list[Variant]:
    """'the red mug next to the bowl': colour and relation together, when exactly one object of
    the category has that colour and stands within NEXT_TO_MAX_M of the reference."""
    out = []
    for cat, ms in sorted(_by_category(scene).items()):
        if len(ms) < 2:
            continue
        for ref, phrase in references(scene):
            for c in sorted({colour(o) for o in ms if colour(o)}):
                answer = [o for o in ms if o is not ref and colour(o) == c and rel.is_next_to(o, ref)]
                if len(answer) == 1:
                    body = node("filterDist", "NextTo", node("filterColor", c, _cat_node(cat)), ref.id)
                    out.append(_pick(body, answer, cat=cat, colour=c, ref=f"the {phrase}"))
    return out


def _unnamed_frame(scene: Scene, ref: SceneObject) -> tuple[rel.FrameAxes, str]:
    """(axes, program frame) of "to the left of X" with no frame named: ESPIRE's reading
    (`relations.default_frame`), X's own when it has a front (the alarm clock), else the viewer's."""
    return rel.default_frame(ref, scene.viewer), (ref.id if ref.oriented else "viewer")


def front_seen(scene: Scene, ref: SceneObject) -> bool:
    """Whether a question in `ref`'s own frame is fair: it has no front (the viewer's frame is
    meant), or its front faces the camera within FRONT_SEEN_DEG."""
    if not ref.oriented:
        return True
    to_camera = rel.horizontal(np.asarray(scene.viewer.position, float) - ref.center)
    return float(rel.horizontal(ref.rotation[:, 0]) @ to_camera) >= np.cos(np.radians(FRONT_SEEN_DEG))


def clear_of_sector_edges(answer, others, side: str, axes, ref) -> bool:
    """The generator's fairness margin for a direction question: every answer at least
    SECTOR_MARGIN_DEG inside the <side> sector, every other candidate as far outside it."""
    inside = 45.0 - SECTOR_MARGIN_DEG
    return all(rel.direction_offset_deg(o, side, axes, ref) <= inside for o in answer) and \
        all(rel.direction_offset_deg(o, side, axes, ref) >= 45.0 + SECTOR_MARGIN_DEG for o in others)


def v_direction(side: str):
    """'the mug to the left of the jar' (ESPIRE's frame: the jar's own when it has a front, else
    the viewer's) when exactly one mug is there."""
    def f(scene):
        out = []
        for cat, ms in sorted(_by_category(scene).items()):
            if len(ms) < 2:
                continue
            for ref, phrase in references(scene):
                if not front_seen(scene, ref):
                    continue
                axes, frame = _unnamed_frame(scene, ref)
                cands = [o for o in ms if o is not ref]
                answer = [o for o in cands if rel.in_direction(o, side, axes, origin=ref)]
                if len(answer) == 1 and clear_of_sector_edges(answer, [o for o in cands if o not in answer], side,
                                                              axes, ref):
                    out.append(_pick(node("filterOri", side.capitalize(), _cat_node(cat), ref.id, frame), answer,
                                     cat=cat, ref=f"the {phrase}", side=side))
        return out
    return f


# --- place ----------------------------------------------------------------------------------------
def _place_pose(scene: Scene, held: SceneObject, ref: SceneObject, direction) -> dict | None:
    """The held object standing upright, PLACE_GAP_M from `ref` along a ground direction, yawed as
    it hangs; None when that spot is off the reachable table or crowded."""
    R = _upright_yaw(held)
    ghost = SceneObject("ghost", held.label, held.category, held.center, held.size, R)
    xy = rel.offset_position(ref, direction, PLACE_GAP_M, rel.half_extent_along(ghost, direction))
    if not (PLACE_AREA[0] <= xy[0] <= PLACE_AREA[2] and PLACE_AREA[1] <= xy[1] <= PLACE_AREA[3]):
        return None
    c = rel.resting_centre(xy, rel.support_top(scene.objects, xy, 0.0), R, held.size)
    ghost.center = c
    for o in scene.objects:
        if o.held or o.id == ref.id or o.category in ("table",):
            continue
        if rel.distance(ghost, o) < CLEARANCE_M:
            return None
    return {"position": [round(float(v), 6) for v in c], "orientation": [round(float(v), 6) for v in matrix_to_quat(R)]}


def _upright_yaw(held: SceneObject) -> np.ndarray:
    """The held object's rotation turned upright about its own heading."""
    x = rel.horizontal(held.rotation[:, 0]) if np.linalg.norm(held.rotation[:2, 0]) > 1e-6 else np.array([1.0, 0, 0])
    return rel.upright_frame(x)


def _place_variant(scene, held, ref, phrase, word, direction, check, frame="viewer") -> Variant | None:
    pose = _place_pose(scene, held, ref, direction)
    if pose is None:
        return None
    body = node("place", None, node("near" if word == "next" else "side", word, ref.id, frame))
    return Variant(body, [], {"ref": f"the {phrase}", "held": held.label, "side": word}, "relative", ref.id,
                   "near", False, "", {"check": check, "place_pose": pose})


def v_next_to(scene: Scene) -> list[Variant]:
    """'put it next to the bowl': within NEXT_TO_MAX_M of it, standing."""
    held = scene.held_object()
    if held is None:
        return []
    axes, out = _viewer_axes(scene), []
    for ref, phrase in references(scene):
        check = [{"type": "released", "object": held.id},
                 {"type": "distance", "object": held.id, "reference": ref.id, "value_m": rel.NEXT_TO_MAX_M / 2,
                  "tol_m": rel.NEXT_TO_MAX_M / 2},
                 {"type": "standing", "object": held.id}]
        for word in DIRECTIONS:       # the first side with room is where the generator would set it
            v = _place_variant(scene, held, ref, phrase, "next", rel.metric_direction(word, axes, attached=False), check)
            if v is not None:
                out.append(v)
                break
    return out


def v_place_side(side: str):
    """'put it to the right of the jar' (ESPIRE's frame, as v_direction): on that side, within
    NEAR_CHECK_M, standing."""
    def f(scene):
        held = scene.held_object()
        if held is None:
            return []
        out = []
        for ref, phrase in references(scene):
            if not front_seen(scene, ref):
                continue
            axes, frame = _unnamed_frame(scene, ref)
            check = [{"type": "released", "object": held.id},
                     {"type": "direction", "object": held.id, "reference": ref.id, "word": side,
                      "frame": "intrinsic" if ref.oriented else "relative"},
                     {"type": "distance", "object": held.id, "reference": ref.id, "value_m": NEAR_CHECK_M / 2,
                      "tol_m": NEAR_CHECK_M / 2},
                     {"type": "standing", "object": held.id}]
            v = _place_variant(scene, held, ref, phrase, side, rel.metric_direction(side, axes, attached=ref.oriented),
                               check, frame)
            if v is not None:
                out.append(v)
        return out
    return f


def evaluate(family: Family, variant: Variant, scene: Scene) -> dict | None:
    """The answer and checks of a variant (tasks.evaluate for the objects families)."""
    if family.action == PICK:
        n = len(items(scene))
        if not variant.answer or len(variant.answer) >= n:
            return None
        return {"answer": list(variant.answer), "check": [{"type": "held", "ids": list(variant.answer)}], "held": None}
    held = scene.held_object()
    if held is None or variant.metric is None:
        return None
    return {"answer": [], "check": variant.metric["check"], "held": held.id, "place_pose": variant.metric["place_pose"]}


def _families() -> list[Family]:
    F = [Family(PICK, "Objects/Category", "coarse", v_category),
         Family(PICK, "Objects/Colour", "coarse", v_colour),
         Family(PICK, "Objects/Size", "coarse", v_size),
         Family(PICK, "Objects/LeftMost", "coarse", v_most("left")),
         Family(PICK, "Objects/RightMost", "coarse", v_most("right")),
         Family(PICK, "Objects/Closest", "fine", v_closest),
         Family(PICK, "Objects/ColourNear", "fine", v_colour_near),
         Family(PICK, "Objects/Left", "fine", v_direction("left")),
         Family(PICK, "Objects/Right", "fine", v_direction("right")),
         Family(PLACE, "Objects/NextTo", "coarse", v_next_to)]
    F += [Family(PLACE, f"Objects/{s.capitalize()}", "fine", v_place_side(s)) for s in DIRECTIONS]
    return F


FAMILIES: list[Family] = _families()
