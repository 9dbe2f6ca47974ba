"""`spatial-manip capture-workspace`: one look at the cell -> the workspace file the planner reads.

    spatial-manip capture-workspace --ros --calibration config/calibration/cell.yaml \\
        --out config/workspace.json --overlay workspace.png
    spatial-manip capture-workspace --sim --out /tmp/ws.json     # MuJoCo, with its error printed
    spatial-manip capture-workspace --shelf --sim shelf:grid:3 --out /tmp/shelf.json   # a shelf, from its front

Clear the table of movable objects first (or drop them with --exclude after looking at the
overlay); then name the fixtures in the file (ids and labels) and add the catalogue, or pass
--base with the previous file to keep its names, catalogue and shelf slots.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from PIL import Image

from spatial_manip.errors import SpatialManipError
from spatial_manip.geometry.calibration import CalibrationError
from spatial_manip.scene import Scene, SceneFormatError
from spatial_manip.commands.cell_look import add_source_arguments, observation_from_args, sim_scene
from spatial_manip.overlay import draw_overlay
from spatial_manip.perception import SegmentationHints
from spatial_manip.workspace.capture import CaptureConfig, capture_workspace, merge_into, select_fixtures
from spatial_manip.workspace.shelf import capture_shelf
from spatial_manip.bench.shelf_bench import scene_line
from spatial_manip.sim.capture_cell import accuracy_report, shelf_accuracy


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_source_arguments(p)
    p.add_argument("--out", metavar="JSON", help="workspace file to write (the planner's workspace_file)")
    p.add_argument("--base", metavar="JSON", help="an existing workspace: keep its fixture names, catalogue and slots")
    p.add_argument("--only", metavar="IDS", help="comma-separated fixture ids to keep (the ones that are fixed)")
    p.add_argument("--exclude", metavar="IDS", help="comma-separated fixture ids to drop (objects left on the table)")
    p.add_argument("--table-z", type=float, help="approximate table height (m, base frame) when several levels are seen")
    p.add_argument("--table-thickness", type=float, default=0.05,
                   help="table box thickness (m) when the floor is not in view (default 0.05)")
    p.add_argument("--overlay", metavar="PNG", help="write the image with every captured box and its id")
    p.add_argument("--shelf", action="store_true",
                   help="the camera faces a shelf: capture its boards, panels and slots (implied by a --sim shelf)")


def run(args) -> int:
    try:
        truth = sim_scene(args.sim) if args.sim else None
        obs = observation_from_args(args, truth)
        shelf = args.shelf or (truth is not None and truth.extra.get("kind") == "shelf")
        scene, notes = _capture_shelf(obs) if shelf else _capture_table(obs, args)
        if args.base:
            scene = _merged(Scene.load(args.base), scene)
    except (SpatialManipError, CalibrationError, SceneFormatError, ValueError) as e:
        print(f"capture-workspace: {e}", file=sys.stderr)
        return 1
    print(shelf_summary(scene, notes) if shelf else summary(scene, notes))
    if truth is not None:
        print(shelf_accuracy_text(scene, truth) if shelf else accuracy_text(scene, truth))
    if args.overlay:
        _write_overlay(args.overlay, obs, scene)
    if args.out:
        return write_and_validate(scene, args.out)
    print("(no --out: nothing written)")
    return 0


def _capture_table(obs, args):
    cap = capture_workspace(obs, CaptureConfig(table_z_hint=args.table_z, table_thickness_m=args.table_thickness))
    return select_fixtures(cap.scene, only=_ids(args.only), exclude=_ids(args.exclude)), cap.notes


def _capture_shelf(obs):
    cap = capture_shelf(obs)
    return cap.scene, cap.notes


def _merged(base: Scene, scene: Scene) -> Scene:
    """merge_into keeps the base's slots; a shelf capture's own slots replace them."""
    out = merge_into(base, scene)
    if scene.regions:
        out.regions = list(scene.regions)
    return out


def _ids(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def summary(scene: Scene, notes: list[str]) -> str:
    t = scene.get("table")
    top = t.center[2] + t.rotation[2, 2] * t.size[2] / 2
    lines = [f"table: top at z = {top:+.3f} m, {100 * t.size[0]:.0f} x {100 * t.size[1]:.0f} cm, "
             f"centre ({t.center[0]:+.3f}, {t.center[1]:+.3f}) m, yaw {np.degrees(np.arctan2(t.rotation[1, 0], t.rotation[0, 0])):.1f} deg"]
    if "ground_z" in scene.extra:
        lines.append(f"floor: z = {scene.extra['ground_z']:+.3f} m")
    for o in scene.objects:
        if o.category in ("support", "shelf"):
            lines.append(f"{o.id}: {o.label}, centre ({', '.join(f'{v:+.3f}' for v in o.center)}) m, "
                         f"{' x '.join(f'{100 * v:.1f}' for v in o.size)} cm, {len(o.extra.get('parts', []))} part(s)")
    return "\n".join(lines + [f"note: {n}" for n in notes])


def accuracy_text(scene: Scene, truth: Scene) -> str:
    r = accuracy_report(scene, truth)
    size = r["table_size_error_m"]
    lines = ["against the simulator:",
             f"  table top height error {1000 * r['table_top_error_m']:+.1f} mm, centre (xy) "
             f"{1000 * r['table_centre_xy_error_m']:.1f} mm, largest size error "
             + (f"{1000 * size:.1f} mm" if size is not None else "n/a (runs out of view)")]
    for row in r["parts"]:
        lines.append(f"  {row['part']}: " + (f"centre {1000 * row['centre_error_m']:.1f} mm, size "
                                              f"{1000 * row['size_error_m']:.1f} mm (as {row['captured_as']})"
                                              if row["found"] else "not captured"))
    return "\n".join(lines)


def shelf_summary(scene: Scene, notes: list[str]) -> str:
    shelf = scene.get("shelf")
    lines = [f"shelf: {len(shelf.extra['cols'])} rows ({', '.join(map(str, shelf.extra['cols']))} slots each), "
             f"{' x '.join(f'{100 * v:.0f}' for v in shelf.size)} cm, front centre "
             f"({', '.join(f'{v:+.3f}' for v in shelf.center + shelf.rotation[:, 0] * shelf.size[0] / 2)}) m"]
    if "ground_z" in scene.extra:
        lines.append(f"floor: z = {scene.extra['ground_z']:+.3f} m")
    for r in scene.regions:
        lines.append(f"{r.id}: floor at z = {r.center[2] - r.size[2] / 2:+.3f} m, {100 * r.size[1]:.0f} cm wide, "
                     f"{100 * r.size[2]:.0f} cm tall, {100 * r.size[0]:.0f} cm deep"
                     + (" (cut by the image)" if r.extra.get("extent_truncated") else ""))
    return "\n".join(lines + [f"note: {n}" for n in notes])


def shelf_accuracy_text(scene: Scene, truth: Scene) -> str:
    r = shelf_accuracy(scene, truth)
    lines = ["against the simulator:", scene_line(r, label="  all")]
    for row in r["slots"]:
        lines.append(f"  {row['slot']}: " + (f"centre {1000 * row['centre_error_m']:.1f} mm, IoU {row['iou']:.2f}, "
                                              f"size {1000 * row['size_error_m']:.1f} mm (as {row['captured_as']})"
                                              if row["found"] else "not captured"))
    if r["spurious"]:
        lines.append(f"  spurious: {', '.join(r['spurious'])}")
    return "\n".join(lines)


def _write_overlay(path: str, obs, scene: Scene) -> None:

    boxes = [o for o in scene.objects if o.category in ("support", "shelf")] + list(scene.regions)
    Image.fromarray(draw_overlay(obs.rgb, obs.T_base_cam, obs.intrinsics, objects=boxes)).save(path)
    print(f"overlay written to {path}")


def write_and_validate(scene: Scene, path: str) -> int:
    """Write, then load it back exactly as the planner does (Scene.load, then the segmentation
    hints that refuse a bad fixture box by name)."""
    with open(path, "w") as f:
        json.dump(scene.to_dict(), f, indent=1)
    try:
        hints = SegmentationHints.from_scene(Scene.load(path))
    except (SceneFormatError, ValueError) as e:
        print(f"capture-workspace: the written file {path} does not load: {e}", file=sys.stderr)
        return 1
    print(f"workspace written to {path} ({len(hints.fixtures)} fixture boxes the planner will use); "
          "name the fixtures and add the catalogue there")
    return 0
