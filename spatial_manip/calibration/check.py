"""Does a calibration file still hold? (The comparison; its command line is
`spatial-manip check-calibration`, commands/check_calibration.py.) Take fresh board images with
their robot poses (a samples folder, as `calibrate --ros` writes), predict where the board
must be from the file, and compare with where the camera sees it: reprojection error of the
board corners (pixels), board-centre error (mm) and orientation error (degrees) per sample.

The board's own mounting (T_tool0_board eye-to-hand, T_base_board eye-in-hand) comes from the
`calibration` section `calibrate` writes. A hand-written file lacks it: it is then estimated from
the samples themselves, which checks that the file is consistent with them (a camera that was
bumped, a mount that slipped show up) but not the absolute error shared by every sample.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial_manip.calibration.board import BoardConfig, project_board_points
from spatial_manip.calibration.procedure import board_views
from spatial_manip.calibration.samples import SampleSet
from spatial_manip.calibration.solve import estimate_y, predicted_cam_board, residuals
from spatial_manip.geometry.calibration import HandEyeCalibration, transform_from_dict


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
