"""`spatial-manip check-calibration CALIBRATION --samples DIR`: does a calibration file still hold?
The comparison is calibration/check.py's; this is its command line.

Exit status: 0 every sample within the bounds, 1 some are not (named), 2 unusable input.
"""
from __future__ import annotations

import argparse
import sys

from spatial_manip.calibration.board import BoardError
from spatial_manip.calibration.check import check_samples
from spatial_manip.calibration.samples import SampleError, load_samples
from spatial_manip.commands.calibrate import board_and_bounds
from spatial_manip.geometry.calibration import CalibrationError, load_calibration


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("calibration", help="the calibration YAML to check (as calibrate writes or by hand)")
    p.add_argument("--samples", required=True, metavar="DIR",
                   help="fresh board images with robot poses (samples.json), e.g. from calibrate --ros")
    p.add_argument("--mode", choices=("eye_to_hand", "eye_in_hand"), help="override the samples folder's mode")
    p.add_argument("--board", metavar="YAML", help="board and bounds (default config/calibration/charuco.yaml)")
    p.add_argument("--max-skew-ms", type=float, help="max image/robot stamp difference (default from the board file)")


def run(args) -> int:
    try:
        board, bounds, skew_s, _ = board_and_bounds(args)
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
