"""Parallel-jaw gripper geometry (Robotiq 2F-85 by default) and the fixed grasp->TCP rotation.

The grasp frame is graspnetAPI's (approach +x, closing +y, finger height +z). A real tool's TCP
frame differs: on a UR with a Robotiq 2F-85 the TCP approaches along its +z. One configured
rotation `grasp_to_tcp_rotation` (columns = TCP axes written in the grasp frame) maps one to the
other: R_base_tcp = R_base_grasp @ grasp_to_tcp_rotation. The control code uses the same key.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spatial_manip.config import backend_section, build, read_yaml, section

# TCP z = grasp x (approach), TCP y = grasp y (closing), TCP x = -grasp z (right-handed).
DEFAULT_GRASP_TO_TCP = ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0))
# How far the 2F-85's knuckles have swung out (0 closed .. 1 fully open) at each share of the full
# opening, measured on the Menagerie model every 5 mm (62.3-74.1 mm out, rounded up): they swing
# most in the last 15 mm of the opening.
KNUCKLE_SWING = ((0.0, 0.12, 0.24, 0.35, 0.47, 0.59, 0.71, 0.82, 0.88, 0.94, 1.0),
                 (0.0, 0.13, 0.25, 0.35, 0.43, 0.49, 0.53, 0.55, 0.67, 0.84, 1.0))


@dataclass(frozen=True, kw_only=True)
class GripperGeometry:
    """Boxes of a parallel-jaw gripper in the grasp frame, metres, measured back from the
    fingertips (at x = depth) with the fingers open to `opening_m(width)`, as the arm opens
    them on the way in.

    Fingers: x in [depth - finger_length_m, depth], |y| in [o/2, o/2 + finger_thickness_m],
    |z| <= finger_height_m / 2. Knuckles (the linkage driving each finger, beside and behind
    its root): from knuckle_offset_m behind the tips, knuckle_length_m long, |y| in
    [o/2, knuckle_reach(o)], |z| <= palm_height_m / 2. Palm (between the fingers' roots: the
    inner links and the base's front plate): from finger_length_m behind the tips, |y| <= o/2 +
    finger_thickness_m, |z| <= palm_height_m / 2. Base: from base_offset_m behind the tips to
    the palm's back (finger_length_m + palm_length_m), |y| <= base_width_m / 2,
    |z| <= base_height_m / 2.

    The defaults are the Robotiq 2F-85 as the simulator's MuJoCo Menagerie model measures
    (its collision meshes, TCP at the `pinch` site; 2F-85 datasheet: 85 mm stroke, about 150 mm
    across the open fingers): the knuckles reach 74 mm out fully open and 62 mm closed, 19 mm
    either side of the pads' plane, from 27 mm behind the tips; the base is 84 x 76 mm from
    100 to 160 mm behind them. A model smaller than the real body let mugs' low side grasps
    through: the base and knuckles met the table and the approach stopped 4-7 cm short.
    """

    name: str = "robotiq_2f85"
    max_width_m: float = 0.085
    min_width_m: float = 0.0
    finger_length_m: float = 0.045
    finger_thickness_m: float = 0.012
    finger_height_m: float = 0.022
    palm_length_m: float = 0.115
    palm_height_m: float = 0.038
    knuckle_offset_m: float = 0.027
    knuckle_length_m: float = 0.083
    knuckle_reach_m: float = 0.074          # |y| of the knuckles' outer face, fingers fully open
    knuckle_reach_closed_m: float = 0.062   # ... and closed
    base_offset_m: float = 0.10
    base_width_m: float = 0.084
    base_height_m: float = 0.076
    open_margin_m: float = 0.02             # the arm opens the fingers this much wider than the grasp's width
    max_depth_m: float = 0.035
    min_depth_m: float = 0.012
    grasp_to_tcp_rotation: tuple = DEFAULT_GRASP_TO_TCP

    def __post_init__(self):
        for k in ("max_width_m", "finger_length_m", "finger_thickness_m", "finger_height_m",
                  "palm_length_m", "palm_height_m", "knuckle_offset_m", "knuckle_length_m", "knuckle_reach_m",
                  "knuckle_reach_closed_m", "base_offset_m", "base_width_m", "base_height_m", "open_margin_m",
                  "max_depth_m", "min_depth_m"):
            v = getattr(self, k)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ValueError(f"gripper {k} must be a positive number of metres, got {v!r}")
        if self.max_width_m > 0.3:
            raise ValueError(f"max_width_m={self.max_width_m} looks like millimetres; give metres (0.085 for a 2F-85)")
        if not 0 <= self.min_width_m < self.max_width_m:
            raise ValueError("min_width_m must be in [0, max_width_m)")
        if self.min_depth_m > self.max_depth_m or self.max_depth_m > self.finger_length_m:
            raise ValueError("need min_depth_m <= max_depth_m <= finger_length_m")
        if self.knuckle_reach_closed_m > self.knuckle_reach_m:
            raise ValueError(f"knuckle_reach_closed_m ({self.knuckle_reach_closed_m}) must not exceed knuckle_reach_m "
                             f"({self.knuckle_reach_m}): the knuckles swing in as the fingers close")
        if self.base_offset_m > self.finger_length_m + self.palm_length_m:
            raise ValueError(f"base_offset_m ({self.base_offset_m}) must lie within the palm (finger_length_m + "
                             f"palm_length_m = {self.finger_length_m + self.palm_length_m})")
        try:
            R = np.asarray(self.grasp_to_tcp_rotation, float)
        except (TypeError, ValueError):
            R = np.zeros(0)            # ragged or not numbers: refused below with the value
        if R.shape != (3, 3) or not np.allclose(R.T @ R, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise ValueError(f"grasp_to_tcp_rotation must be a proper 3x3 rotation, got {self.grasp_to_tcp_rotation}")

    def opening_m(self, widths) -> np.ndarray:
        """How far apart the fingers ride on the way in to grasps of these widths."""
        return np.minimum(self.max_width_m, np.asarray(widths, float) + self.open_margin_m)

    def knuckle_reach(self, openings) -> np.ndarray:
        """|y| of the knuckles' outer face with the fingers this far apart: between the closed and
        the open reach along the curve the Menagerie model's linkage follows (KNUCKLE_SWING; a
        straight line put it 3-4 mm too far out at a lying book's 6-7 cm opening, and the knuckle
        under the demo's book met the table's noise)."""
        share = np.clip(np.asarray(openings, float) / self.max_width_m, 0.0, 1.0)
        swing = np.interp(share, *KNUCKLE_SWING)
        return self.knuckle_reach_closed_m + swing * (self.knuckle_reach_m - self.knuckle_reach_closed_m)

    @property
    def R_grasp_tcp(self) -> np.ndarray:
        return np.asarray(self.grasp_to_tcp_rotation, float)

    def tcp_poses(self, grasp_matrices: np.ndarray, depths=None) -> np.ndarray:
        """(N, 4, 4) TCP poses for (N, 4, 4) grasp poses: rotated axes and, with `depths`, the
        TCP moved `depth` along the approach. The TCP of a UR + 2F-85 is the midpoint of the open
        fingertips, and a graspnetAPI grasp puts the fingertips `depth` past its translation; at
        depth 0 the object would sit at the very tips of the pads and slip."""
        T = np.array(grasp_matrices, float, copy=True)
        if depths is not None:
            T[..., :3, 3] += np.asarray(depths, float)[..., None] * T[..., :3, 0]
        T[..., :3, :3] = T[..., :3, :3] @ self.R_grasp_tcp
        return T


def load_grasp_config(path: str | Path, backend: str = "") -> tuple[GripperGeometry, str, dict]:
    """Read config/params/grasp.yaml: (gripper geometry, backend name, that backend's params),
    each checked through its config dataclass (ConfigError naming the file, key and value).
    `backend` overrides the file's choice ("" = the file's); its section is the file's too."""
    where = f"{path}: grasp"
    data = read_yaml(path)
    g = section(data, "grasp", str(path)) if "grasp" in data else data
    gripper_cfg = section(g, "gripper", where, required=False)
    if "grasp_to_tcp_rotation" in g:
        gripper_cfg["grasp_to_tcp_rotation"] = g["grasp_to_tcp_rotation"]
    gripper = build(GripperGeometry, gripper_cfg, f"{where}.gripper")
    backend = backend or g.get("backend", "antipodal")
    return gripper, backend, backend_section("grasp", backend, section(g, backend, where, required=False), where)
