"""The calibration's outcome: bounds it must meet, the refusal that names bad samples, and the
YAML file that spatial_manip.geometry.calibration.load_calibration reads (residuals as comments)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation
import yaml

from spatial_manip.calibration.board import BoardConfig
from spatial_manip.calibration.solve import HandEyeSolution, METHODS
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import rotation_angle


class CalibrationRejected(ValueError):
    """The result is not good enough to write; the message names the bad samples and what to do."""


@dataclass(frozen=True)
class Bounds:
    """What a result must meet before it is written (config/calibration/charuco.yaml `bounds`).
    Per-sample residuals are at the board centre; the spread is between the methods' answers."""

    max_sample_mm: float = 5.0
    max_sample_deg: float = 0.5
    max_spread_mm: float = 10.0
    max_spread_deg: float = 1.0
    min_samples: int = 10

    @classmethod
    def from_dict(cls, d: dict | None, where: str = "bounds") -> "Bounds":
        d = dict(d or {})
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}; expected {sorted(cls.__dataclass_fields__)}")
        try:
            b = cls(**{k: (int(v) if k == "min_samples" else float(v)) for k, v in d.items()})
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: every bound must be a number: {e}") from e
        if min(b.max_sample_mm, b.max_sample_deg, b.max_spread_mm, b.max_spread_deg) <= 0 or b.min_samples < 3:
            raise ValueError(f"{where}: bounds must be positive and min_samples at least 3, got {b}")
        return b


@dataclass
class CalibrationReport:
    """Everything `spatial-manip calibrate` prints and writes. `names` label every sample that
    had a board pose (file names); residuals are against the chosen solution, rejected ones too."""

    mode: str
    board: BoardConfig
    intrinsics: CameraIntrinsics
    names: list[str]
    solution: HandEyeSolution
    residual_mm: np.ndarray
    residual_deg: np.ndarray
    reprojection_px: list[float]
    skipped: dict[str, str] = field(default_factory=dict)    # sample -> why it gave no board pose

    @property
    def T_mount_camera(self) -> np.ndarray:
        return self.solution.best.X

    @property
    def inlier_names(self) -> list[str]:
        return [self.names[i] for i in self.solution.inliers]

    def problems(self, bounds: Bounds) -> list[str]:
        """Why this result must not be written ([] when it may)."""
        out = []
        inl = self.solution.inliers
        if len(inl) < bounds.min_samples:
            out.append(f"only {len(inl)} usable samples, need {bounds.min_samples}: take more poses "
                       f"({len(self.skipped)} gave no board pose, {len(self.solution.rejected)} were outliers)")
        bad = [f"{self.names[i]} ({self.residual_mm[i]:.1f} mm, {self.residual_deg[i]:.2f} deg)" for i in inl
               if self.residual_mm[i] > bounds.max_sample_mm or self.residual_deg[i] > bounds.max_sample_deg]
        if bad:
            out.append(f"{len(bad)} of {len(inl)} samples exceed {bounds.max_sample_mm} mm / {bounds.max_sample_deg} deg: "
                       + ", ".join(bad) + ". Check that each image was paired with the robot pose of its "
                       "instant (timestamps), that the board did not slip, and retake those poses")
        s = self.solution
        if s.spread_mm > bounds.max_spread_mm or s.spread_deg > bounds.max_spread_deg:
            out.append(f"the methods disagree by {s.spread_mm:.1f} mm / {s.spread_deg:.2f} deg (bounds "
                       f"{bounds.max_spread_mm} mm / {bounds.max_spread_deg} deg): add poses with larger rotations "
                       "about more than one axis")
        return out

    def check(self, bounds: Bounds) -> None:
        problems = self.problems(bounds)
        if problems:
            raise CalibrationRejected("calibration refused, nothing written: " + "; ".join(problems))

    def summary_lines(self) -> list[str]:
        s = self.solution
        lines = [f"mode {self.mode}: {len(s.inliers)} samples used, {len(s.rejected)} rejected as outliers, "
                 f"{len(self.skipped)} without a board pose",
                 f"best method: {s.best.method} (rms {s.best.rms_mm:.2f} mm, {s.best.rms_deg:.3f} deg)",
                 f"spread between methods: {s.spread_mm:.2f} mm, {s.spread_deg:.3f} deg"]
        for name, r in s.methods.items():
            d_mm = 1000 * float(np.linalg.norm(r.X[:3, 3] - s.best.X[:3, 3]))
            d_deg = float(np.degrees(rotation_angle(r.X[:3, :3], s.best.X[:3, :3])))
            lines.append(f"  {name:<11} rms {r.rms_mm:6.2f} mm {r.rms_deg:6.3f} deg   "
                         f"from best {d_mm:6.2f} mm {d_deg:6.3f} deg")
        lines += [f"  {m:<11} failed: {why}" for m, why in s.failed.items()]
        lines.append("per sample (residual at the board centre; reprojection of the board corners):")
        for i, name in enumerate(self.names):
            tag = " REJECTED " + s.rejected[i] if i in s.rejected else ""
            lines.append(f"  {name:<16} {self.residual_mm[i]:7.2f} mm {self.residual_deg[i]:6.3f} deg "
                         f"{self.reprojection_px[i]:5.2f} px{tag}")
        lines += [f"  {name:<16} skipped: {why}" for name, why in self.skipped.items()]
        return lines


def _transform_yaml(T: np.ndarray) -> dict:
    q = Rotation.from_matrix(T[:3, :3]).as_quat()
    return {"translation": [round(float(v), 6) for v in T[:3, 3]],
            "rotation_xyzw": [round(float(v), 8) for v in q]}


def to_yaml(report: CalibrationReport, *, command: str = "spatial-manip calibrate") -> str:
    """The calibration file: the loader's keys, the residuals as comments, and the solve's
    statistics under `calibration` (kept by the loader in `extra`)."""
    s = report.solution
    key = "T_base_camera" if report.mode == "eye_to_hand" else "T_tool0_camera"
    other = "T_tool0_board" if report.mode == "eye_to_hand" else "T_base_board"
    body = {"mode": report.mode, "camera_frame": "camera_color_optical_frame",
            key: _transform_yaml(s.best.X), "camera_info": report.intrinsics.to_camera_info(),
            "calibration": {"method": s.best.method, "methods_tried": [m for m in METHODS if m in s.methods],
                            "samples_used": len(s.inliers), "samples_rejected": len(s.rejected),
                            "rms_mm": round(s.best.rms_mm, 3), "rms_deg": round(s.best.rms_deg, 4),
                            "spread_mm": round(s.spread_mm, 3), "spread_deg": round(s.spread_deg, 4),
                            "board": report.board.to_dict(), other: _transform_yaml(s.best.Y)}}
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"# Hand-eye calibration written by `{command}` on {stamp}.",
            "# Load with spatial_manip.geometry.calibration.load_calibration(path).",
            f"# {key}: the colour optical frame (x right, y down, z forward) "
            + ("in the robot base frame." if report.mode == "eye_to_hand" else "in the flange (tool0) frame."),
            "#"] + ["# " + line for line in report.summary_lines()]
    return "\n".join(head) + "\n" + yaml.safe_dump(body, sort_keys=False, default_flow_style=None)


def pose_error(T_est: np.ndarray, T_true: np.ndarray) -> tuple[float, float]:
    """Position error (mm) and rotation error (degrees) of an estimate against the truth."""
    return (1000.0 * float(np.linalg.norm(T_est[:3, 3] - T_true[:3, 3])),
            float(np.degrees(rotation_angle(T_est[:3, :3], T_true[:3, :3]))))
