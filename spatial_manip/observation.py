"""One synchronized RGB-D observation, as every camera backend delivers it (L515 live or
recorded, simulator render, rosbag replay) and as perception, grasping and the planner use it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatial_manip.geometry.camera import CameraIntrinsics


@dataclass
class RGBDObservation:
    rgb: np.ndarray                 # (H, W, 3) uint8, colour camera
    depth_m: np.ndarray             # (H, W) float32 metres aligned to colour; 0 or NaN = no return
    intrinsics: CameraIntrinsics    # of the colour camera (depth is aligned to it)
    T_base_cam: np.ndarray          # 4x4 pose of the colour optical frame in the robot base frame
    stamp_s: float = 0.0            # sensor time, seconds
    frame_id: str = "camera_color_optical_frame"
    segmentation: np.ndarray | None = None   # (H, W) int32 object index, -1 background (sim only)
    segment_ids: dict = field(default_factory=dict)  # segmentation index -> scene object id (sim only)

    def __post_init__(self):
        h, w = self.intrinsics.height, self.intrinsics.width
        if self.rgb.shape[:2] != (h, w) or self.depth_m.shape != (h, w):
            raise ValueError(
                f"rgb {self.rgb.shape[:2]} and depth {self.depth_m.shape} must both be {(h, w)} (aligned)")
        self.T_base_cam = np.asarray(self.T_base_cam, float).reshape(4, 4)
