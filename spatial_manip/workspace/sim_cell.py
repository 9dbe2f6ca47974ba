"""A simulated cell to capture (`capture-workspace --sim`) and its ground truth, so the capture's
error is measured against the simulator's own table and fixture boxes.

The default cell is the tabletop of the task generator (same table, same robot placement)
cleared of books and references, with fixtures of the kinds the generator uses (a pedestal, a
book holder's two walls, a low block) and a camera high behind the robot that sees the whole
table, as a lab would place it for the capture.
"""
from __future__ import annotations

import math

import numpy as np

from spatial_manip.scene import FIXTURE_CATEGORIES, Scene, SceneObject, Viewpoint

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


def render_cell(scene: Scene, *, depth_noise: bool = True, seed: int = 0):
    """One RGB-D observation of the cell with the arm stowed below the camera's rays."""
    from spatial_manip.sim.world import STOW_Q, SimConfig, SimWorld

    with SimWorld(scene, config=SimConfig(depth_noise=depth_noise, vary_lighting=False), seed=seed) as world:
        world.pose_arm(STOW_Q)
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
