"""What an object set down rests on: the one support check for every place (issue 35 item 2, issue 38).

A place pose is only worth moving the arm for if the object, released there, stays there. A
`Surface` is anything that can carry it: the top of the table (the work surface), of a shelf, of
a shelf slot's floor board, or of any object whose top is level (a book lying flat, a box, a
plinth). `check_support` takes the object as it would stand at the place pose and refuses, with
`UnreachableError` saying why, when
- no surface lies under its middle (off the table: "1 m to the left of the mug" on a 1.4 m table),
- the surface under its middle is not at its bottom ("50 cm above the rubik's cube": in mid-air),
- it would hang over the work surface's edge, or its middle would be too near the edge of a
  smaller carrier's top (it would tip off),
- it would be inside another object (their boxes overlap by more than perception's error).
The planner runs it on every place it computes (`reasoning.program.execute`), so `spatial-manip
plan`, a dry run and a goal refuse alike, before anything moves; verification uses
`resting_surface` to ask what a placed object is seen resting on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial_manip.errors import UnreachableError
from spatial_manip.geometry.relations import Boxlike, _corners, is_level, point_in_box
from spatial_manip.scene import Scene, SceneObject

HEIGHT_TOL_M = 0.02         # the object's bottom within this of the surface's top rests on it
# on the work surface, the footprint may pass its edge by at most this: a book (12 cm or longer)
# standing out that far still has its middle well inside; the task generator's set-downs do up to 4 cm
MAX_OVERHANG_M = 0.05
REST_MARGIN_M = 0.01        # on anything smaller, the object's middle at least this far inside the top's edge
PENETRATION_TOL_M = 0.01    # boxes overlapping less than this are touching (perceived boxes err by ~1 cm)
CONTAINERS = ("table", "shelf", "floor")   # fixtures one sets things on or in: their volume is no obstacle
WORK_SURFACES = ("table",)  # where the whole footprint must be on the surface ("inside the work surface")
NOT_CARRIERS = ("floor",)   # the floor is outside the work area: nothing is placed there


@dataclass(frozen=True)
class Surface:
    """A level face that can carry something: its height and the box whose horizontal
    cross-section it is."""

    owner_id: str            # the scene id of the object or region it belongs to
    words: str               # for messages: "the table", "the rubik's cube", "slot_r2c2's floor"
    top_z: float
    box: Boxlike
    work_surface: bool = False   # the whole footprint must be on it, not just the middle
    slot: bool = False           # a shelf slot's floor: where along the slot is chosen at set-down

    def overhang_m(self, points) -> float:
        """How far the farthest of the world `points` lies outside this face, horizontally
        (negative: all inside, by that much)."""
        local = (np.asarray(points, float).reshape(-1, 3) - self.box.center) @ self.box.rotation
        horizontal = [k for k in range(3) if k != _vertical_axis(self.box)]
        return float(np.max(np.abs(local[:, horizontal]) - self.box.size[horizontal] / 2))


def _vertical_axis(box: Boxlike) -> int:
    return int(np.argmax(np.abs(np.asarray(box.rotation, float)[2, :])))


def _words(o) -> str:
    if isinstance(o, SceneObject):
        return f"the {o.label}" if o.category in CONTAINERS else f"the {o.label} ({o.id})"
    return f"{o.id}'s floor"


def surfaces(scene: Scene, moved_id: str | None = None) -> list[Surface]:
    """Every surface in `scene` that could carry an object, except the moved (or held) one's own."""
    out = []
    for o in scene.objects:
        if o.held or o.id == moved_id or o.category in NOT_CARRIERS or not is_level(o):
            continue
        top = float(_corners(o)[:, 2].max())
        out.append(Surface(o.id, _words(o), top, o, work_surface=o.category in WORK_SURFACES))
    for r in scene.regions:
        if r.kind == "slot":
            out.append(Surface(r.id, _words(r), float(_corners(r)[:, 2].min()), r, slot=True))
    return out


def surface_under(candidates: list[Surface], point, tol_m: float = HEIGHT_TOL_M) -> Surface | None:
    """The highest surface whose face contains `point`'s ground position and whose top is no
    higher than `point` (+ tol_m): what an object whose bottom middle is `point` would land on."""
    p = np.asarray(point, float)
    under = [s for s in candidates if s.top_z <= p[2] + tol_m and s.overhang_m(p) <= 0.0]
    return max(under, key=lambda s: s.top_z, default=None)


def overlap_depth(a: Boxlike, b: Boxlike) -> float:
    """How deep two oriented boxes overlap: the smallest overlap of their projections over the
    separating axes (0 when they are apart or just touch)."""
    ca, cb = _corners(a), _corners(b)
    if np.any(ca.max(0) <= cb.min(0)) or np.any(cb.max(0) <= ca.min(0)):
        return 0.0          # their axis-aligned bounds are apart (most pairs: the cheap test first)
    Ra, Rb = np.asarray(a.rotation, float), np.asarray(b.rotation, float)
    axes = [Ra[:, i] for i in range(3)] + [Rb[:, i] for i in range(3)]
    axes += [np.cross(Ra[:, i], Rb[:, j]) for i in range(3) for j in range(3)]
    depth = np.inf
    for ax in axes:
        n = np.linalg.norm(ax)
        if n < 1e-9:
            continue
        pa, pb = ca @ (ax / n), cb @ (ax / n)
        depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
        if depth <= 0.0:
            return 0.0
    return float(depth)


def check_support(scene: Scene, placed: SceneObject, what: str | None = None) -> Surface:
    """The surface `placed` (an object's box as it would stand at a place pose) rests on; raises
    UnreachableError saying why it would not rest there (see the module's list). `what` names the
    object in messages (default "the <label>")."""
    what = what or f"the {placed.label}"
    corners = _corners(placed)
    bottom = float(corners[:, 2].min())
    middle = np.array([placed.center[0], placed.center[1], bottom])
    candidates = surfaces(scene, placed.id)
    surface = surface_under(candidates, middle)
    if surface is None:
        raise UnreachableError(f"no support under {what} at {_xy(middle)}: {_off_surface(candidates, middle)}; "
                               "choose a place on the work surface")
    gap = bottom - surface.top_z
    if gap > HEIGHT_TOL_M:
        raise UnreachableError(
            f"no support under {what} at {gap:.2f} m above {surface.words}: the nearest surface below it is "
            f"{surface.words} at z {surface.top_z:.2f} m, so it would fall; say 'on' to set it on something")
    _check_footing(surface, what, corners, middle)
    _check_clearance(scene, placed, surface, what)
    return surface


def _check_footing(surface: Surface, what: str, corners, middle) -> None:
    if surface.work_surface:
        out = surface.overhang_m(corners)
        if out > MAX_OVERHANG_M:
            raise UnreachableError(f"{what} would hang {out * 100:.0f} cm over the edge of {surface.words} at "
                                   f"{_xy(middle)} (at most {MAX_OVERHANG_M * 100:.0f} cm); choose a place further in")
        return
    inside = -surface.overhang_m(middle)
    if inside < REST_MARGIN_M:
        raise UnreachableError(f"{what}'s middle would be {inside * 100:.1f} cm from the edge of {surface.words}'s "
                               f"top (at least {REST_MARGIN_M * 100:.0f} cm): it would tip off")


def _check_clearance(scene: Scene, placed: SceneObject, surface: Surface, what: str) -> None:
    for o in scene.objects:
        if o.held or o.id in (placed.id, surface.owner_id) or o.category in CONTAINERS:
            continue
        if surface.slot and point_in_box(o.center, surface.box):
            continue     # in a slot, the set-down slides along it clear of what stands there (place_fit)
        depth = overlap_depth(placed, o)
        if depth > PENETRATION_TOL_M:
            raise UnreachableError(f"{what} at {_xy(placed.center)} would be inside {_words(o)}: their boxes "
                                   f"overlap by {depth * 100:.0f} cm; choose a place clear of it")


def _off_surface(candidates: list[Surface], point) -> str:
    work = [s for s in candidates if s.work_surface]
    if not work:
        return "there is no surface under it"
    s = min(work, key=lambda s: s.overhang_m(point))
    return f"it is {s.overhang_m(point):.2f} m beyond the edge of {s.words}"


def resting_surface(scene: Scene, obj: SceneObject, tol_m: float = HEIGHT_TOL_M) -> tuple[Surface | None, float]:
    """What `obj` (as seen) rests on, and how far its bottom is above the nearest surface under
    its middle (inf when there is none): (None, gap) when that is more than `tol_m`."""
    bottom = float(_corners(obj)[:, 2].min())
    s = surface_under(surfaces(scene, obj.id), [obj.center[0], obj.center[1], bottom], tol_m)
    if s is None:
        return None, float("inf")
    gap = bottom - s.top_z
    return (s if gap <= tol_m else None), gap


def _xy(p) -> str:
    return f"({p[0]:.2f}, {p[1]:.2f})"
