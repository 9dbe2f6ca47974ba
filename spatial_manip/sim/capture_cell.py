"""A simulated cell to capture (`capture-workspace --sim`) and its ground truth, so the capture's
error is measured against the simulator's own table and fixture boxes.

The default cell is the tabletop of the task generator (same table, same robot placement)
cleared of books and references, with fixtures of the kinds the generator uses (a pedestal, a
book holder's two walls, a low block) and a camera high behind the robot that sees the whole
table, as a lab would place it for the capture.
"""
from __future__ import annotations

import copy
import math

import numpy as np

from spatial_manip.scene import FIXTURE_CATEGORIES, Scene, SceneObject, Viewpoint
from spatial_manip.sim.layouts import sample_scene
from spatial_manip.sim.sensing import IDEAL, only
from spatial_manip.sim.world import STOW_Q, SimConfig, SimWorld

TABLE_SIZE = (0.6, 1.4, 0.7)      # the generator's table (sim/assets.py): top at z = 0, front at x = 0.25
TABLE_FRONT_X = 0.25
CAMERA_POSITION = (-0.35, 0.25, 1.45)
CAMERA_TARGET = (0.55, 0.0, 0.0)


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _part(center, size, yaw_deg: float) -> dict:
    return {"center": list(map(float, center)), "size": list(map(float, size)),
            "rotation": _rz(math.radians(yaw_deg)).tolist()}


def _fixture(fid: str, label: str, parts: list[dict]) -> SceneObject:
    pts = np.vstack([SceneObject("p", "p", "p", p["center"], p["size"], p["rotation"]).corners() for p in parts])
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return SceneObject(fid, label, "support", (lo + hi) / 2, hi - lo, extra={"parts": parts})


def demo_cell(*, moved: dict | None = None) -> Scene:
    """The cell; `moved` = {fixture id: (dx, dy)} shifts fixtures (for check-workspace tests)."""
    moved = moved or {}
    tl, tw, th = TABLE_SIZE
    table = SceneObject("table", "table", "table", [TABLE_FRONT_X + tl / 2, 0.0, -th / 2], TABLE_SIZE,
                        _rz(math.pi), oriented=True, extra={"asset": "table"})
    specs = {
        "pedestal": ("pedestal", [((0.50, -0.35, 0.035), (0.15, 0.12, 0.07), 12.0)]),
        "holder": ("book holder", [((0.45, 0.30, 0.035), (0.09, 0.015, 0.07), -8.0),
                                   ((0.4535, 0.340, 0.035), (0.09, 0.015, 0.07), -8.0)]),
        "block": ("block", [((0.70, 0.02, 0.025), (0.10, 0.10, 0.05), 30.0)]),
    }
    objects = [table]
    for fid, (label, parts) in specs.items():
        dx, dy = moved.get(fid, (0.0, 0.0))
        objects.append(_fixture(fid, label, [_part((c[0] + dx, c[1] + dy, c[2]), s, yaw) for c, s, yaw in parts]))
    cam = np.array(CAMERA_POSITION)
    return Scene(viewer=Viewpoint(cam, np.array(CAMERA_TARGET) - cam), robot=Viewpoint([0, 0, 0], [1, 0, 0]),
                 objects=objects, extra={"kind": "tabletop", "ground_z": -th})


def fixtures_only(scene: Scene) -> Scene:
    """The scene with its movable objects removed (a cleared table, as the capture wants it)."""
    s = scene.with_objects([o for o in scene.objects if o.category in FIXTURE_CATEGORIES])
    s.extra = {k: v for k, v in scene.extra.items() if k != "ee_pose"}
    return s


# Facing a shelf the camera looks over the robot at board height: the arm folds down behind its
# own stand (pointing back at the camera), so it hides little more than the stand already does.
SHELF_LOOK_Q = (math.pi, 1.2, 1.2, -2.5, 0.0, 0.0)


def shelf_cell(layout: str = "grid", seed: int = 0, *, occupied: bool = False) -> Scene:
    """A generated shelf scene (layouts.sample_shelf) cleared for the capture, or with the
    generator's books, bookends and references left in their slots (`occupied`, for
    check-workspace); the held book and the arm's pose are dropped either way."""
    return clear_shelf(sample_scene("shelf", seed, layout=layout), keep_contents=occupied)


def clear_shelf(scene: Scene, *, keep_contents: bool = False) -> Scene:
    """The shelf scene without what is not part of the cell: objects in the slots (unless
    `keep_contents`), the held book, the distant references on the floor; slot occupancy 0 when
    cleared (as the capture writes it)."""
    in_slot = lambda o: "in_region" in o.extra or o.label == "bookend"     # noqa: E731
    kept = [o for o in scene.objects if o.category == "shelf" or (keep_contents and in_slot(o) and not o.held)]
    s = scene.with_objects(kept)
    s.extra = {k: v for k, v in scene.extra.items() if k != "ee_pose"}
    s.regions = [copy.deepcopy(r) for r in scene.regions]
    for r in s.regions if not keep_contents else []:
        r.occupancy = 0.0
        r.extra["free_y"] = [r.center[1] - r.size[1] / 2, r.center[1] + r.size[1] / 2]
    return s


def render_cell(scene: Scene, *, depth_noise: bool = True, seed: int = 0):
    """One RGB-D observation of the cell with the arm out of the camera's way: stowed below
    its rays over a table, folded behind its stand in front of a shelf."""
    q = SHELF_LOOK_Q if scene.extra.get("kind") == "shelf" else STOW_Q
    sensing = only("depth_noise") if depth_noise else IDEAL
    with SimWorld(scene, config=SimConfig(sensing=sensing), seed=seed) as world:
        world.pose_arm(q)
        return world.render()


def ground_truth_parts(scene: Scene) -> list[tuple[str, SceneObject]]:
    """(fixture id, part box) of every part of every fixture except the table and the floor."""
    out = []
    for o in scene.objects:
        if o.category in ("table", "floor") or o.category not in FIXTURE_CATEGORIES:
            continue
        parts = o.extra.get("parts") or [{"center": o.center, "size": o.size, "rotation": o.rotation}]
        out += [(o.id, SceneObject(f"{o.id}:{k}", o.label, "part", p["center"], p["size"], p["rotation"]))
                for k, p in enumerate(parts)]
    return out


def box_error(measured, truth) -> tuple[float, float]:
    """(centre distance, largest size error) in metres; sizes compared in the truth's own axes
    after matching each measured axis to the truth axis it is most parallel with."""
    Rm, Rt = np.asarray(measured.rotation, float), np.asarray(truth.rotation, float)
    match = np.argmax(np.abs(Rt.T @ Rm), axis=1)           # truth axis i ~ measured axis match[i]
    size_m = np.asarray(measured.size, float)[match]
    return (float(np.linalg.norm(np.asarray(measured.center) - np.asarray(truth.center))),
            float(np.max(np.abs(size_m - np.asarray(truth.size, float)))))


def accuracy_report(captured: Scene, truth: Scene) -> dict:
    """The capture against the simulator: table top height and extent, and for every true
    fixture part the nearest captured part's centre and size error (metres)."""
    t_true, t_cap = truth.get("table"), captured.get("table")
    top = lambda o: float(o.center[2] + o.rotation[2, 2] * o.size[2] / 2)   # noqa: E731  (at the centre: tilt-free)
    cap_parts = [SceneObject(f"{o.id}:{k}", o.label, "part", p["center"], p["size"], p["rotation"])
                 for o in captured.objects if o.category == "support" for k, p in enumerate(o.extra["parts"])]
    rows = []
    for fid, part in ground_truth_parts(truth):
        best = min(cap_parts, key=lambda c: np.linalg.norm(c.center - part.center), default=None)
        if best is None or np.linalg.norm(best.center - part.center) > 0.05:
            rows.append({"part": part.id, "found": False})
            continue
        centre_err, size_err = box_error(best, part)
        rows.append({"part": part.id, "found": True, "captured_as": best.id,
                     "centre_error_m": centre_err, "size_error_m": size_err})
    return {"table_top_error_m": top(t_cap) - top(t_true),
            "table_size_error_m": box_error(t_cap, t_true)[1] if not t_cap.extra.get("extent_truncated") else None,
            "table_centre_xy_error_m": float(np.linalg.norm(t_cap.center[:2] - t_true.center[:2])),
            "parts": rows}


def shelf_accuracy(captured: Scene, truth: Scene) -> dict:
    """A captured shelf against the simulator's: every board's height error (its top face, the
    floor of the row below, or the top panel's lower face), and every true slot paired with the
    captured slot of the largest overlap: centre error, IoU and largest size error (metres);
    true slots with no capture overlapping them by IoU 0.5 (one to one: two slots merged into one
    count as one found, one missed) are missed, captured ones left over spurious."""
    cap, true = [r for r in captured.regions if r.kind == "slot"], [r for r in truth.regions if r.kind == "slot"]
    rows, used = [], set()
    for t in true:
        iou, best = max(((box_iou(c, t), c) for c in cap), key=lambda x: x[0], default=(0.0, None))
        if best is None or iou < 0.5 or best.id in used:
            rows.append({"slot": t.id, "found": False})
            continue
        used.add(best.id)
        centre_err, size_err = box_error(best, t)
        rows.append({"slot": t.id, "found": True, "captured_as": best.id, "centre_error_m": centre_err,
                     "iou": iou, "size_error_m": size_err, "truncated": bool(best.extra.get("extent_truncated"))})
    return {"slots": rows, "spurious": [c.id for c in cap if c.id not in used],
            "board_errors_m": board_errors(cap, true)}


def board_errors(captured: list, truth: list) -> list[float]:
    """Signed height error of every true row's floor and ceiling against the nearest captured
    one (so a board seen 1 cm high gives +0.01); rows cut off by the image are not boards seen."""
    def faces(slots) -> list[float]:
        # a row cut by the image has no ceiling (top) or floor (bottom) seen
        return sorted({round(float(r.center[2] + k * r.size[2] / 2), 4) for r in slots for k, end in
                       ((-1, "bottom"), (1, "top")) if end not in r.extra.get("extent_truncated", [])})

    seen = faces(captured)
    return [min((c - t for c in seen), key=abs) for t in faces(truth) if seen and min(abs(c - t) for c in seen) < 0.1]


def box_iou(a, b) -> float:
    """Volume IoU of two boxes sharing an upright frame up to a half turn about z (slots of one
    shelf), computed in `b`'s axes."""
    R = np.asarray(b.rotation, float)
    ca, cb = np.asarray(a.center) @ R, np.asarray(b.center) @ R
    half_a = np.abs(R.T @ np.asarray(a.rotation, float)) @ (np.asarray(a.size) / 2)
    lo, hi = np.maximum(ca - half_a, cb - b.size / 2), np.minimum(ca + half_a, cb + b.size / 2)
    inter = float(np.prod(np.clip(hi - lo, 0, None)))
    return inter / (float(np.prod(a.size)) + float(np.prod(b.size)) - inter)
