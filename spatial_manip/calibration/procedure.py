"""The procedure shared by the offline, live and simulated runs: images -> board poses ->
hand-eye -> a report that may be checked against the bounds and written."""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from spatial_manip.calibration.board import BoardConfig, BoardError, BoardView, detect
from spatial_manip.calibration.result import Bounds, CalibrationReport, to_yaml
from spatial_manip.calibration.samples import SampleError, SampleSet
from spatial_manip.calibration.solve import METHODS, MIN_SAMPLES, calibrate_hand_eye, residuals
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.calibration import load_calibration


MAX_IMAGE_PIXELS = 8192 * 8192   # a calibration camera's frame is a few megapixels


def read_rgb(path: Path) -> np.ndarray:
    w, h = png_size(path)
    if w * h > MAX_IMAGE_PIXELS:
        raise SampleError(f"image {path} claims {w}x{h} pixels; a camera frame is at most "
                          f"{MAX_IMAGE_PIXELS} pixels (a damaged or forged file?)")
    try:
        img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    except cv2.error as e:          # OpenCV refuses an absurd size with an assertion
        raise SampleError(f"cannot read image {path}: {' '.join(str(e).split())}") from e
    if img is None:
        raise SampleError(f"cannot read image {path}: missing or not an image file")
    return img[..., ::-1]


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's header, read before decoding it; (0, 0) for anything else."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return 0, 0
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return 0, 0
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def board_views(images: list, names: list[str], board: BoardConfig,
                intr: CameraIntrinsics) -> tuple[list[int], list[BoardView], dict[str, str]]:
    """Detect the board in each image (arrays or paths); (indices seen, views, skipped name -> why)."""
    seen, views, skipped = [], [], {}
    for i, (img, name) in enumerate(zip(images, names)):
        try:
            views.append(detect(read_rgb(img) if isinstance(img, (str, Path)) else img, board, intr))
            seen.append(i)
        except (BoardError, SampleError) as e:     # a missing image costs one sample, not the run
            skipped[name] = str(e)
    return seen, views, skipped


def calibrate(mode: str, images: list, names: list[str], T_base_tool0: list[np.ndarray], board: BoardConfig,
              intr: CameraIntrinsics, *, methods=METHODS, reject: bool = True) -> CalibrationReport:
    """The whole solve from paired images and flange poses (same order)."""
    if len(images) != len(T_base_tool0) or len(images) != len(names):
        raise SampleError(f"{len(images)} images, {len(names)} names and {len(T_base_tool0)} robot poses: "
                          "each image needs its own robot pose")
    seen, views, skipped = board_views(images, names, board, intr)
    if len(views) < MIN_SAMPLES and skipped:     # say why the images were unusable, not only how many
        why = "; ".join(f"{name}: {reason}" for name, reason in list(skipped.items())[:3])
        raise SampleError(f"only {len(views)} of {len(images)} images give a board pose, hand-eye needs "
                          f"{MIN_SAMPLES}: {why}")
    B = [np.asarray(T_base_tool0[i], float) for i in seen]
    C = [v.T_cam_board for v in views]
    sol = calibrate_hand_eye(mode, B, C, board.center, methods=methods, reject=reject)
    mm, deg = residuals(mode, sol.best.X, sol.best.Y, B, C, board.center)
    return CalibrationReport(mode=mode, board=board, intrinsics=intr, names=[names[i] for i in seen], solution=sol,
                             residual_mm=mm, residual_deg=deg, reprojection_px=[v.reprojection_px for v in views],
                             skipped=skipped)


def calibrate_folder(samples: SampleSet, board: BoardConfig, **kw) -> CalibrationReport:
    """Offline: a samples folder already paired by timestamps (samples.load_samples)."""
    report = calibrate(samples.mode, list(samples.image_paths), [p.name for p in samples.image_paths],
                       samples.T_base_tool0, board, samples.intrinsics, **kw)
    report.skipped.update({name: f"not paired: {why}" for name, why in samples.unpaired.items()})
    return report


def write_calibration(report: CalibrationReport, path: str | Path, bounds: Bounds, *,
                      command: str = "spatial-manip calibrate") -> Path:
    """Check the bounds, then write the YAML; the loader must read it back. There is no override:
    a result outside the bounds is the one that puts a grasp 2 cm off."""
    report.check(bounds)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_yaml(report, command=command))
    load_calibration(path)        # what we write, the stack must read
    return path
