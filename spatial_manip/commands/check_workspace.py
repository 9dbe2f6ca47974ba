"""`spatial-manip check-workspace FILE`: does the cell still look like its workspace file?

    spatial-manip check-workspace config/workspace.json --ros --calibration config/calibration/cell.yaml
    spatial-manip check-workspace /tmp/ws.json --sim --move fixture_3=0.05,0   # a moved fixture, in MuJoCo
    spatial-manip check-workspace /tmp/shelf.json --sim shelf:grid:3 --occupied  # books left in the slots

Exit status 0 when the table and every fixture are within --tolerance of the file, 1 otherwise,
each problem named with where the fixture is seen and where the file says it is. A shelf file
is checked board by board (height within --tolerance) and slot by slot (occupied or not).
"""
from __future__ import annotations

import argparse
import sys

from spatial_manip.errors import SpatialManipError
from spatial_manip.geometry.calibration import CalibrationError
from spatial_manip.scene import Scene, SceneFormatError
from spatial_manip.commands.cell_look import add_source_arguments, observation_from_args, sim_scene
from spatial_manip.workspace.check import check_workspace


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("workspace", metavar="FILE", help="the workspace file to check")
    add_source_arguments(p)
    p.add_argument("--tolerance", type=float, default=0.02, help="a fixture farther than this moved (m, default 0.02)")
    p.add_argument("--move", action="append", default=[], metavar="ID=DX,DY",
                   help="--sim demo cell: shift a fixture (pedestal, holder, block) by DX, DY metres first")
    p.add_argument("--occupied", action="store_true",
                   help="--sim shelf: leave the generator's books and bookends in their slots")


def _moves(items: list[str]) -> dict:
    out = {}
    for item in items:
        try:
            name, delta = item.split("=")
            dx, dy = (float(v) for v in delta.split(","))
        except ValueError as e:
            raise ValueError(f"--move wants ID=DX,DY (metres), got {item!r}") from e
        out[name] = (dx, dy)
    return out


def run(args) -> int:
    try:
        workspace = Scene.load(args.workspace)
        truth = sim_scene(args.sim, moved=_moves(args.move), occupied=args.occupied) if args.sim else None
        report = check_workspace(workspace, observation_from_args(args, truth), tolerance_m=args.tolerance)
    except (SpatialManipError, CalibrationError, SceneFormatError, ValueError) as e:
        print(f"check-workspace: {e}", file=sys.stderr)
        return 2
    print(report.text())
    return 0 if report.ok else 1
