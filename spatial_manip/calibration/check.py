"""`spatial-manip check-calibration`: does a calibration file still hold? Take fresh board images
with their robot poses (a samples folder, as `calibrate --ros` writes), predict where the board
must be from the file, and compare with where the camera sees it: reprojection error of the
board corners (pixels), board-centre error (mm) and orientation error (degrees) per sample.

The board's own mounting (T_tool0_board eye-to-hand, T_base_board eye-in-hand) comes from the
`calibration` section `calibrate` writes. A hand-written file lacks it: it is then estimated from
the samples themselves, which checks that the file is consistent with them (a camera that was
bumped, a mount that slipped show up) but not the absolute error shared by every sample.

Exit status: 0 every sample within the bounds, 1 some are not (named), 2 unusable input.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from spatial_manip.calibration.board import BoardConfig, BoardError, project_board_points
from spatial_manip.calibration.procedure import board_views
from spatial_manip.calibration.samples import SampleError, SampleSet, load_samples
from spatial_manip.calibration.solve import estimate_y, predicted_cam_board, residuals
from spatial_manip.geometry.calibration import (CalibrationError, HandEyeCalibration, load_calibration,
                                                transform_from_dict)
from spatial_manip.calibration.cli import _config


@dataclass
class SampleCheck:
    name: str
    reprojection_px: float
    error_mm: float
    error_deg: float


@dataclass
class CheckReport:
    mode: str
    board_mount_from_file: bool
    samples: list[SampleCheck]
    skipped: dict[str, str]

    def bad(self, max_mm: float, max_deg: float) -> list[SampleCheck]:
        return [s for s in self.samples if s.error_mm > max_mm or s.error_deg > max_deg]

    def lines(self) -> list[str]:
        src = "from the file" if self.board_mount_from_file else "estimated from these samples (consistency only)"
        out = [f"mode {self.mode}: {len(self.samples)} samples checked; the board's mounting {src}"]
        out += [f"  {s.name:<16} {s.reprojection_px:6.2f} px {s.error_mm:7.2f} mm {s.error_deg:6.3f} deg" for s in self.samples]
        out += [f"  {n:<16} skipped: {why}" for n, why in self.skipped.items()]
        if self.samples:
            px = np.array([s.reprojection_px for s in self.samples])
            mm = np.array([s.error_mm for s in self.samples])
            out.append(f"reprojection rms {np.sqrt(np.mean(px ** 2)):.2f} px, max {px.max():.2f} px; "
                       f"board centre rms {np.sqrt(np.mean(mm ** 2)):.2f} mm, max {mm.max():.2f} mm")
        return out


def board_mount(cal: HandEyeCalibration) -> np.ndarray | None:
    """The board's mounting as `calibrate` stored it, or None for a hand-written file."""
    key = "T_tool0_board" if cal.mode == "eye_to_hand" else "T_base_board"
    d = (cal.extra.get("calibration") or {}).get(key)
    return None if d is None else transform_from_dict(d, f"{cal.source}: calibration.{key}")


def check_samples(cal: HandEyeCalibration, samples: SampleSet, board: BoardConfig) -> CheckReport:
    """Predicted vs seen board for every paired sample of the folder."""
    if cal.mode != samples.mode:
        raise ValueError(f"the calibration is {cal.mode} but the samples folder says {samples.mode}; "
                         "pass --mode to say which set-up the images come from")
    intr = samples.intrinsics
    if cal.intrinsics is not None and (cal.intrinsics.width, cal.intrinsics.height) != (intr.width, intr.height):
        raise ValueError(f"the calibration was made at {cal.intrinsics.width}x{cal.intrinsics.height} but these "
                         f"images are {intr.width}x{intr.height}: check with the same camera stream")
    names = [p.name for p in samples.image_paths]
    seen, views, skipped = board_views(list(samples.image_paths), names, board, intr)
    if not views:
        raise ValueError(f"the board was seen in none of the {len(names)} images: {skipped}")
    B = [samples.T_base_tool0[i] for i in seen]
    C = [v.T_cam_board for v in views]
    X = cal.T_mount_camera
    Y = board_mount(cal)
    from_file = Y is not None
    if Y is None:
        Y = estimate_y(cal.mode, X, B, C)
    mm, deg = residuals(cal.mode, X, Y, B, C, board.center)
    checks = [SampleCheck(names[i], _reprojection(predicted_cam_board(cal.mode, X, Y, b), v, intr), m, d)
              for i, b, v, m, d in zip(seen, B, views, mm, deg)]
    skipped.update({n: f"not paired: {why}" for n, why in samples.unpaired.items()})
    return CheckReport(cal.mode, from_file, checks, skipped)


def _reprojection(T_pred: np.ndarray, view, intr) -> float:
    """RMS pixel distance between the corners seen and where the calibration puts them."""
    uv = project_board_points(T_pred, view.object_points, intr)
    return float(np.sqrt(np.mean(np.sum((uv - view.corners_px) ** 2, axis=1))))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("calibration", help="the calibration YAML to check (as calibrate writes or by hand)")
    p.add_argument("--samples", required=True, metavar="DIR",
                   help="fresh board images with robot poses (samples.json), e.g. from calibrate --ros")
    p.add_argument("--mode", choices=("eye_to_hand", "eye_in_hand"), help="override the samples folder's mode")
    p.add_argument("--board", metavar="YAML", help="board and bounds (default config/calibration/charuco.yaml)")
    p.add_argument("--max-skew-ms", type=float, help="max image/robot stamp difference (default from the board file)")


def run(args) -> int:
    try:
        board, bounds, skew_s, _ = _config(args)
        cal = load_calibration(args.calibration)
        report = check_samples(cal, load_samples(args.samples, max_skew_s=skew_s, mode=args.mode or cal.mode), board)
    except (BoardError, SampleError, CalibrationError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    bad = report.bad(bounds.max_sample_mm, bounds.max_sample_deg)
    if bad:
        print(f"check failed: {len(bad)} samples beyond {bounds.max_sample_mm} mm / {bounds.max_sample_deg} deg: "
              + ", ".join(f"{s.name} ({s.error_mm:.1f} mm, {s.error_deg:.2f} deg)" for s in bad)
              + ". If the camera or its mount moved, calibrate again", file=sys.stderr)
        return 1
    print(f"calibration holds: every sample within {bounds.max_sample_mm} mm / {bounds.max_sample_deg} deg")
    return 0
