"""Success checker: does a final scene (the exported simulated state) satisfy a task?

A task record carries a `check` list of constraints, written by the task generator, each a dict
with a `type`. Every constraint must hold; the first that fails names the failure category.
The spatial words are evaluated with `spatial_manip.geometry.relations` only.

    held       {"ids": [...], "lift_m": 0.03}        pick: an answer-set book is held and lifted
    released   {"object": id}                         place: the gripper let go of the book
    in_regions {"object": id, "regions": [ids]}       centre inside one of the target areas
    in_area    {"object": id, "area": {center,size[,rotation]}}  centre inside an explicit box
    pose       {"object": id, "pose": "upright"|"flat"|"tilted"}
    tilt       {"object": id, "deg": 30, "tol_deg": 10}          book tilt (0 upright, 90 flat)
    distance   {"object": id, "reference": id|"viewer"|"robot", "value_m": .1, "tol_m": .03}
    direction  {"object": id, "reference": id, "word": "right", "frame": "relative"|"intrinsic"|"absolute"}
    standing   {"object": id}                         an everyday object rests on its base (relations.is_standing)

ESPIRE A.4: distances within +-3 cm of the expected value, tilts within +-10 degrees, the target
centre inside the target area. TIGeR metric placement: within the stated tolerance (e.g. 0.05 to
0.15 m for "10 cm"), on the stated side of the reference.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple

import numpy as np

from spatial_manip.geometry import relations as rel
from spatial_manip.scene import Region, Scene, SceneObject
from spatial_manip.sim.metrics import Failure

DISTANCE_TOL_M = 0.03      # ESPIRE A.4
LIFT_MIN_M = 0.03          # "lifted above its support"
AREA_MARGIN_M = 0.01       # a centre within 1 cm of an area's face still counts as inside
FLOOR_Z_M = 0.10           # an object whose bottom is this close to the floor has fallen


def _floor(scene: Scene) -> float:
    """Height below which an object lies on the floor: `extra["ground_z"]` (the simulator's
    floor, below the robot base) + 10 cm; without it the floor is taken at z = 0."""
    return float(scene.extra.get("ground_z", 0.0)) + FLOOR_Z_M


class CheckResult(NamedTuple):
    success: bool
    failure_category: str | None
    message: str


class CheckSpecError(ValueError):
    """A task's `check` list is malformed (a generator bug); the message names the constraint."""


def _ok(msg: str) -> CheckResult:
    return CheckResult(True, None, msg)


def _fail(cat: Failure, msg: str) -> CheckResult:
    return CheckResult(False, cat.value, msg)


def _obj(scene: Scene, oid: str) -> SceneObject:
    try:
        o = scene.get(oid)
    except KeyError as e:
        raise CheckSpecError(f"the final scene has no object {oid!r}: export every object of the task") from e
    if not isinstance(o, SceneObject):
        raise CheckSpecError(f"{oid!r} is a region, expected an object")
    return o


def _placeable(scene: Scene, ref: str):
    if ref == "viewer":
        return scene.viewer
    if ref == "robot":
        return scene.robot
    return scene.get(ref)


def _bottom(o: SceneObject) -> float:
    return float(o.corners()[:, 2].min())


def inside_box(point, box: Region | SceneObject, margin: float = AREA_MARGIN_M) -> bool:
    """Whether a world point lies inside an oriented box (grown by `margin`)."""
    return rel.point_in_box(point, box, margin)


def _area(spec: Mapping) -> Region:
    a = spec.get("area")
    if not isinstance(a, Mapping) or "center" not in a or "size" not in a:
        raise CheckSpecError(f"in_area needs 'area' with 'center' and 'size', got {a!r}")
    return Region(id=str(a.get("id", "area")), kind="area", center=a["center"], size=a["size"],
                  rotation=np.asarray(a.get("rotation", np.eye(3)), float))


# --- one function per constraint type -----------------------------------------------------------
def _held(spec, final: Scene, initial: Scene | None) -> CheckResult:
    ids = [str(i) for i in spec["ids"]]
    held = final.held_object()
    if held is None:
        moved = [i for i in ids if initial is not None and _fell(final, initial, i)]
        if moved:
            return _fail(Failure.DROPPED, f"{moved[0]} fell; nothing is in the gripper")
        return _fail(Failure.NO_GRASP, f"nothing is in the gripper; expected one of {ids}")
    if held.id not in ids:
        return _fail(Failure.WRONG_OBJECT, f"the gripper holds {held.id}, expected one of {ids}")
    lift = float(spec.get("lift_m", LIFT_MIN_M))
    if initial is not None:
        before = _bottom(_obj(initial, held.id))
        if _bottom(held) < before + lift:
            return _fail(Failure.NOT_LIFTED, f"{held.id} is held but only {_bottom(held) - before:.3f} m "
                         f"above where it lay (need {lift:.2f} m)")
    return _ok(f"holding {held.id}")


def _fell(final: Scene, initial: Scene, oid: str) -> bool:
    try:
        a, b = _obj(initial, oid), _obj(final, oid)
    except CheckSpecError:
        return False
    return _bottom(b) < min(_bottom(a) - 0.05, _floor(final))


def _released(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    if o.held:
        return _fail(Failure.NOT_RELEASED, f"{o.id} is still in the gripper")
    if _bottom(o) < _floor(final):
        return _fail(Failure.DROPPED, f"{o.id} lies on the floor (bottom at z={_bottom(o):.2f} m)")
    return _ok(f"{o.id} released")


def _in_regions(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    targets = [str(r) for r in spec["regions"]]
    for rid in targets:
        if inside_box(o.center, final.get(rid)):
            return _ok(f"{o.id} is in {rid}")
    other = next((r.id for r in final.regions if inside_box(o.center, r)), None)
    where = f"in {other}" if other else f"at {np.round(o.center, 3).tolist()}, in no region"
    return _fail(Failure.NOT_IN_REGION, f"{o.id} is {where}; expected one of {targets}")


def _in_area(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    area = _area(spec)
    if inside_box(o.center, area):
        return _ok(f"{o.id} is in the target area")
    local = (o.center - area.center) @ area.rotation
    return _fail(Failure.NOT_IN_REGION, f"{o.id}'s centre is {np.round(local, 3).tolist()} m from the "
                 f"target area's centre; half-size {np.round(area.size / 2, 3).tolist()}")


def _pose(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    got, want = rel.book_pose_class(o), str(spec["pose"])
    if got != want:
        return _fail(Failure.TILT, f"{o.id} is {got} (tilt {rel.book_tilt_deg(o):.0f} deg), expected {want}")
    return _ok(f"{o.id} is {got}")


def _tilt(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    got, want = rel.book_tilt_deg(o), float(spec["deg"])
    tol = float(spec.get("tol_deg", rel.TILT_TOL_DEG))
    if abs(got - want) > tol:
        return _fail(Failure.TILT, f"{o.id} is tilted {got:.1f} deg, expected {want:.0f} +- {tol:.0f} deg")
    return _ok(f"{o.id} tilted {got:.1f} deg")


def _distance(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    ref = _placeable(final, str(spec["reference"]))
    got, want = rel.distance(o, ref), float(spec["value_m"])
    tol = float(spec.get("tol_m", DISTANCE_TOL_M))
    if abs(got - want) > tol:
        return _fail(Failure.DISTANCE, f"{o.id} is {got:.3f} m from {spec['reference']}, "
                     f"expected {want:.3f} +- {tol:.3f} m")
    return _ok(f"{o.id} is {got:.3f} m from {spec['reference']}")


def _direction(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    ref_id = str(spec["reference"])
    ref = _placeable(final, ref_id)
    frame = rel.Frame(spec.get("frame", "relative"))
    if frame is rel.Frame.INTRINSIC:
        axes = rel.frame_axes(frame, reference=ref, reference_id=ref_id)
    else:
        axes = rel.frame_axes(frame, viewer=final.viewer)
    word = str(spec["word"])
    if not rel.in_direction(o, word, axes, origin=ref):
        got = rel.direction_of(o, axes, origin=ref)
        return _fail(Failure.WRONG_DIRECTION, f"{o.id} is not to the {word} of {ref_id} "
                     f"({frame.value} frame; bearing sector {got!r})")
    return _ok(f"{o.id} is to the {word} of {ref_id}")


def _standing(spec, final: Scene, initial: Scene | None) -> CheckResult:
    o = _obj(final, spec["object"])
    if not rel.is_standing(o):
        return _fail(Failure.TILT, f"{o.id} is tipped {rel.tilt_deg(o):.0f} deg from standing "
                     f"(at most {rel.STANDING_MAX_TILT_DEG:.0f})")
    return _ok(f"{o.id} stands")


CONSTRAINTS = {
    "held": _held, "released": _released, "in_regions": _in_regions, "in_area": _in_area,
    "pose": _pose, "tilt": _tilt, "distance": _distance, "direction": _direction, "standing": _standing,
}


def check_constraints(constraints: list[Mapping[str, Any]], final: Scene,
                      initial: Scene | None = None) -> CheckResult:
    """All constraints must hold; the first failing one gives the category and message."""
    if not constraints:
        raise CheckSpecError("a task needs at least one success constraint")
    notes = []
    for spec in constraints:
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if kind not in CONSTRAINTS:
            raise CheckSpecError(f"unknown constraint {spec!r}; expected a dict with type in {sorted(CONSTRAINTS)}")
        try:
            r = CONSTRAINTS[kind](spec, final, initial)
        except KeyError as e:
            raise CheckSpecError(f"constraint {spec!r} lacks key {e}") from e
        if not r.success:
            return r
        notes.append(r.message)
    return _ok("; ".join(notes))


def check_task(task: Mapping[str, Any], final: Scene, initial: Scene | None = None) -> CheckResult:
    """Judge a task record (as in tasks.jsonl) against the final scene."""
    if "check" not in task:
        raise CheckSpecError(f"task {task.get('id')!r} has no 'check' list; regenerate it with `spatial-manip tasks`")
    return check_constraints(task["check"], final, initial)
