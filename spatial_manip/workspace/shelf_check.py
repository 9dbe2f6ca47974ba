"""Check a shelf workspace file against a fresh look: is every board where the file says (the
shelf is captured again, as the file was), and does any slot hold something the file does not
list: the objects the planner's own segmenter finds with the file's shelf as its fixtures and
slot floors (so a slot is occupied exactly when the planner would see something in it). A slot
the camera cannot see into (behind the robot's stand, out of the image) is reported as not
seen rather than as free: no look from there can tell.

    findings, capture = shelf_findings(Scene.load(path), obs, tolerance_m=0.02)
"""
from __future__ import annotations

import numpy as np

from spatial_manip.camera_model import project
from spatial_manip.geometry.relations import point_in_box
from spatial_manip.transforms import apply, invert
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception import SegmentationHints
from spatial_manip.perception.classical import ClassicalSegmenter
from spatial_manip.scene import Region, Scene
from spatial_manip.workspace.shelf import ShelfCapture, ShelfCaptureError, capture_shelf
from spatial_manip.workspace.findings import Finding

BOARD_MATCH_M = 0.15      # a board seen farther than this from the file's is not that board
MIN_SEEN_FRACTION = 0.5   # a slot is checked when at least this much of its front is in view
OCCLUDER_MARGIN_M = 0.03  # a return this much short of the slot's open front is something in front of it


def is_shelf(workspace: Scene) -> bool:
    return workspace.extra.get("kind") == "shelf" or any(o.category == "shelf" for o in workspace.objects)


def shelf_findings(workspace: Scene, obs: RGBDObservation, tolerance_m: float) -> tuple[list, ShelfCapture | None]:
    slots = [r for r in workspace.regions if r.kind == "slot"]
    if not slots:
        return [Finding("shelf", "ok", "the file has a shelf but no slots: nothing to check")], None
    try:
        capture = capture_shelf(obs)
    except ShelfCaptureError as e:
        return [Finding("shelf", "missing", f"the shelf is not seen: {e}")], None
    findings = board_findings(slots, capture.scene.regions, tolerance_m)
    dets = ClassicalSegmenter().segment(obs, hints=SegmentationHints.from_scene(workspace))
    return findings + [slot_finding(r, dets, seen_fraction(r, obs)) for r in slots], capture


def seen_fraction(slot: Region, obs: RGBDObservation, grid: int = 7) -> float:
    """Share of a grid over the slot's open front (inner 80%, 1 cm inside) that the camera sees:
    a depth return no nearer than that point. Something in the slot is behind its front and
    counts as seen; a return short of the front (the stand, the arm) or none (out of the image,
    no return) does not."""
    u = (np.arange(grid) + 0.5) / grid * 0.8 - 0.4
    half = np.asarray(slot.size, float) / 2
    cam = obs.T_base_cam[:3, 3]
    # the front is the side of the slot's depth axis (its x) towards the camera
    front = -1.0 if (slot.center - cam) @ slot.rotation[:, 0] > 0 else 1.0
    local = np.array([[front * (half[0] - 0.01), a * slot.size[1], b * slot.size[2]] for a in u for b in u])
    p_cam = apply(invert(obs.T_base_cam), slot.center + local @ slot.rotation.T)
    px, inside = project(p_cam, obs.intrinsics)
    seen = 0
    for (x, y), z_front, ok in zip(np.rint(np.nan_to_num(px)).astype(int), p_cam[:, 2], inside):
        z_obs = float(obs.depth_m[y, x]) if ok else float("nan")
        seen += bool(np.isfinite(z_obs) and z_obs > 0 and z_obs >= z_front - OCCLUDER_MARGIN_M)
    return seen / len(local)


def _floors(slots: list[Region], seen: bool = False) -> dict[int, tuple[float, list[str]]]:
    """row -> (height of the board the row stands on, the row's slot ids); rows whose floor the
    capture could not see (cut by the image) have none."""
    out: dict[int, tuple[float, list[str]]] = {}
    for r in sorted(slots, key=lambda r: r.col):
        if seen and "bottom" in r.extra.get("extent_truncated", []):
            continue
        z, ids = out.get(r.row, (float(r.center[2] - r.size[2] / 2), []))
        out[r.row] = (z, ids + [r.id])
    return out


def board_findings(file_slots: list[Region], seen_slots: list[Region], tolerance_m: float) -> list:
    """One finding per board of the file (the floor of each row of slots): in place, moved
    (by how much, and which slots stand on it), or not seen at all."""
    seen = [z for z, _ in _floors(seen_slots, seen=True).values()]
    out = []
    for row, (z, ids) in sorted(_floors(file_slots).items()):
        name = f"board under row {row}"
        what = f"the floor of {', '.join(ids)}"
        near = min(seen, key=lambda s: abs(s - z), default=None)
        if near is None or abs(near - z) > BOARD_MATCH_M:
            out.append(Finding(name, "board_moved", f"{name} ({what}) is not seen near z = {z:+.3f} m, where the "
                               f"file says it is: removed, moved more than {100 * BOARD_MATCH_M:.0f} cm, or hidden"))
        elif abs(near - z) > tolerance_m:
            out.append(Finding(name, "board_moved", f"{name} ({what}) is seen at z = {near:+.3f} m, the file says "
                               f"{z:+.3f} m ({100 * (near - z):+.1f} cm; tolerance {100 * tolerance_m:.0f} cm): "
                               "move the board back or capture the workspace again", abs(near - z)))
        else:
            out.append(Finding(name, "ok", f"{name} is in place ({100 * abs(near - z):.1f} cm off)", abs(near - z)))
    return out


def occupied_span(slot: Region, dets: list) -> tuple[float, float, float] | None:
    """(lo, hi) across the slot (its own y axis, metres from its centre) covered by the
    objects standing in it, and their height above its floor; None when it holds nothing."""
    inside = [d for d in dets if point_in_box(d.box.center, slot)]
    if not inside:
        return None
    local = np.vstack([(d.box.corners() - slot.center) @ slot.rotation for d in inside])
    lo, hi = np.clip([local[:, 1].min(), local[:, 1].max()], -slot.size[1] / 2, slot.size[1] / 2)
    return float(lo), float(hi), float(local[:, 2].max() + slot.size[2] / 2)


def slot_finding(slot: Region, dets: list, seen: float = 1.0, min_extra_m: float = 0.03):
    """Occupied when more of its width is taken than the file's occupancy says, by at least
    `min_extra_m` (a book is 2 cm thick or more); not seen when less than MIN_SEEN_FRACTION of
    it is in view and nothing found in it says otherwise."""
    span = occupied_span(slot, dets)
    if span is None and seen < MIN_SEEN_FRACTION:
        return Finding(slot.id, "not_seen", f"{slot.id} (row {slot.row}, column {slot.col}) is not seen from this "
                       f"camera ({100 * seen:.0f}% of its front in view; something stands in front of it, or it is "
                       "out of the image): not checked", seen)
    listed = slot.occupancy * slot.size[1]
    taken = 0.0 if span is None else span[1] - span[0]
    if taken - listed < min_extra_m:
        return Finding(slot.id, "ok", f"{slot.id} is as the file says ({100 * taken:.0f} cm of its "
                       f"{100 * slot.size[1]:.0f} cm taken)")
    lo, hi, height = span
    return Finding(slot.id, "occupied", f"{slot.id} (row {slot.row}, column {slot.col}) holds something the file "
                   f"does not list: {100 * taken:.0f} cm of its {100 * slot.size[1]:.0f} cm width is taken "
                   f"({100 * lo:+.0f}..{100 * hi:+.0f} cm across its centre, up to {100 * height:.0f} cm tall), the file "
                   f"says {100 * slot.occupancy:.0f}% full: clear it, or set its occupancy in the file", taken - listed)
