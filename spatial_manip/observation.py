"""One synchronized RGB-D observation, as every camera backend delivers it (L515 live or
recorded, simulator render, rosbag replay) and as perception, grasping and the planner use it."""
from __future__ import annotations

from dataclasses import dataclass, field
import collections
import threading

import numpy as np

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.errors import NoObservationError


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


POSE_STAMP_TOL_S = 1e-6     # one frame's stamp, as two messages of one header carry it (ExactTime)
# frames that came after the newest stamped pose, none with a pose of its own, before that pose is
# taken for a fixed calibration stamped once (a per-frame source would have sent theirs by then)
FRAMES_TO_CALL_A_POSE_FIXED = 3


class CameraPoses:
    """The camera's pose for a frame, from a source that sends either a fixed calibration (latched
    once, or from /tf_static) or the pose of every frame stamped like the frame (sim_node, whose
    camera stands elsewhere each episode). A fixed pose holds for every frame until another
    replaces it. Once a pose has come with a frame's exact stamp, the source is per-frame and a
    frame pairs only with the pose of its own stamp: topics are not ordered against each other,
    and after a reset the new scene's first frame can come before its pose, which the newest pose
    (the previous episode's) would have misplaced by the distance the camera moved (pick-51-00002).
    Until then a stamped pose is not known to be fixed: a node that has just joined holds only the
    latched pose of a frame it never saw, and the demo's first goal read the new scene's first
    frame through the start-up scene's camera, 66 cm off. So a frame waits for its own pose until
    FRAMES_TO_CALL_A_POSE_FIXED frames newer than the newest stamped pose have come without one.
    Not thread-safe: the caller holds its own lock."""

    def __init__(self, *, keep: int = 20):
        self._stamped = collections.deque(maxlen=keep)        # (stamp_s, T) as they came
        self._frames = collections.deque(maxlen=keep)         # stamps of recent frames
        self.latest: np.ndarray | None = None
        self.per_frame = False

    def add(self, T_base_cam: np.ndarray, stamp_s: float | None = None) -> None:
        """A pose; `stamp_s` None or 0 (a calibration given in code or by TF, a message left
        unstamped) makes it the fixed one."""
        T = np.asarray(T_base_cam, float).reshape(4, 4)
        if not np.all(np.isfinite(T)):
            raise ValueError(f"a camera pose must be a finite 4x4 transform, got {T.round(3).tolist()}; "
                             "check what publishes the extrinsics (or the calibration file)")
        self.latest = T
        if not stamp_s:
            self._stamped.clear()
            self.per_frame = False
            return
        self._stamped.append((float(stamp_s), T))
        self.per_frame = self.per_frame or any(abs(stamp_s - f) <= POSE_STAMP_TOL_S for f in self._frames)

    def note_frame(self, stamp_s: float) -> None:
        """A frame came (its stamp tells a per-frame source from a fixed one)."""
        self._frames.append(float(stamp_s))
        self.per_frame = self.per_frame or self._own(stamp_s) is not None

    def for_frame(self, stamp_s: float) -> np.ndarray | None:
        """The pose valid when the frame stamped `stamp_s` was taken, or None: none yet, or a
        per-frame source (or one not yet known to be fixed) whose pose of that frame has not come."""
        if self.per_frame:
            return self._own(stamp_s)
        if self._stamped and not self._stamped_is_fixed():
            return None
        return self.latest

    def _stamped_is_fixed(self) -> bool:
        newest = self._stamped[-1][0]
        return sum(f > newest + POSE_STAMP_TOL_S for f in self._frames) >= FRAMES_TO_CALL_A_POSE_FIXED

    def _own(self, stamp_s: float) -> np.ndarray | None:
        return next((T for s, T in reversed(self._stamped) if abs(s - stamp_s) <= POSE_STAMP_TOL_S), None)


class ObservationBuffer:
    """Newest colour, depth, camera_info and extrinsics from separate topics, paired by stamp
    (the role message_filters' approximate sync plays on a ROS machine; it is absent here), each
    frame with the camera pose valid when it was taken (`CameraPoses`).
    Thread-safe; `wait_pair` blocks until a fresh, synchronized pair exists or the time is up."""

    def __init__(self, *, max_skew_s: float = 0.05, keep: int = 5, require_segmentation: bool = False):
        self.max_skew_s = max_skew_s
        self._color = collections.deque(maxlen=keep)   # (stamp_s, rgb, received_monotonic)
        self._depth = collections.deque(maxlen=keep)   # (stamp_s, depth_m, received_monotonic)
        self._seg = collections.deque(maxlen=keep)     # (stamp_s, segmentation) from a simulator
        self.segment_ids: dict = {}
        self.require_segmentation = require_segmentation
        self.intrinsics: CameraIntrinsics | None = None
        self.poses = CameraPoses()
        self._cv = threading.Condition()

    def add_color(self, stamp_s: float, rgb: np.ndarray, received_s: float) -> None:
        with self._cv:
            self._color.append((stamp_s, rgb, received_s))
            self.poses.note_frame(stamp_s)
            self._cv.notify_all()

    def add_depth(self, stamp_s: float, depth_m: np.ndarray, received_s: float) -> None:
        with self._cv:
            self._depth.append((stamp_s, depth_m, received_s))
            self._cv.notify_all()

    def add_segmentation(self, stamp_s: float, seg: np.ndarray, segment_ids: dict) -> None:
        """A simulator's segmentation image (object index per pixel, -1 none) for the
        ground-truth segmenter; attached to the observation whose colour stamp it matches."""
        with self._cv:
            self._seg.append((stamp_s, seg))
            self.segment_ids = dict(segment_ids)

    def set_intrinsics(self, intr: CameraIntrinsics) -> None:
        with self._cv:
            self.intrinsics = intr
            self._cv.notify_all()

    def set_extrinsics(self, T_base_cam: np.ndarray, stamp_s: float | None = None) -> None:
        """The camera pose: fixed (`stamp_s` None: a calibration, TF's) or stamped as the message
        carried it (a per-frame pose is recognised by its frame's stamp)."""
        with self._cv:
            self.poses.add(T_base_cam, stamp_s)
            self._cv.notify_all()

    @property
    def T_base_cam(self) -> np.ndarray | None:
        """The newest camera pose (a frame's own is `poses.for_frame`)."""
        return self.poses.latest

    def missing(self) -> list[str]:
        """What is still missing for an observation (for a precise NO_OBSERVATION message)."""
        out = []
        if not self._color:
            out.append("colour image")
        if not self._depth:
            out.append("aligned depth image")
        if self.intrinsics is None:
            out.append("camera_info")
        if self.poses.latest is None:
            out.append("camera extrinsics")
        elif self._color and all(self.poses.for_frame(st) is None for st, _, _ in self._color):
            out.append("the camera pose of a recent frame (the extrinsics topic sends one per frame, stamped like it)")
        if self.require_segmentation and not self._seg:
            out.append("segmentation image (/sim/segmentation: the ground_truth segmenter works in simulation only)")
        return out

    def _pair(self, newer_than_s: float):
        """The newest colour received after `newer_than_s` with a depth image of its stamp and
        the camera pose of its time."""
        for cs, rgb, cr in reversed(self._color):
            if cr < newer_than_s:
                break
            T = self.poses.for_frame(cs)
            if T is None:
                continue
            for ds, depth, dr in reversed(self._depth):
                if dr >= newer_than_s and abs(cs - ds) <= self.max_skew_s:
                    return cs, rgb, depth, T
        return None

    def _ready(self, newer_than_s: float) -> RGBDObservation | None:
        pair = self._pair(newer_than_s)
        if pair is None or self.intrinsics is None:
            return None
        stamp, rgb, depth, T_base_cam = pair
        if rgb.shape[:2] != depth.shape or rgb.shape[:2] != (self.intrinsics.height, self.intrinsics.width):
            raise NoObservationError(
                f"colour {rgb.shape[:2]}, depth {depth.shape} and camera_info {self.intrinsics.width}x"
                f"{self.intrinsics.height} disagree: is depth aligned to colour?")
        seg = next((m for st, m in reversed(self._seg) if abs(st - stamp) <= self.max_skew_s), None)
        if seg is None and self.require_segmentation:
            return None
        return RGBDObservation(rgb=rgb, depth_m=depth, intrinsics=self.intrinsics, T_base_cam=T_base_cam,
                               stamp_s=stamp, segmentation=seg,
                               segment_ids=self.segment_ids if seg is not None else {})

    def stamp_lag_s(self) -> float | None:
        """How far the colour images' stamps lie behind their arrival (arrival, monotonic, minus
        stamp): the least over those kept, as transport and a loaded machine only add to it. Two
        streams stamped on one clock show about the same (the clocks' fixed offset); one on a
        clock of its own stands apart by that clock's. None: no stamped image yet."""
        with self._cv:
            lags = [r - st for st, _, r in self._color if st > 0]
        return min(lags) if lags else None

    def frame_period_s(self) -> float | None:
        """The camera's recent period as the colour images arrived (the median gap between those
        kept; a loaded machine renders, sends and receives them slower). None: fewer than two."""
        with self._cv:
            arrived = [r for _, _, r in self._color]
        gaps = np.diff(arrived)
        return float(np.median(gaps)) if len(gaps) else None

    def newest_stamp_s(self) -> float | None:
        """The newest colour image's stamp (None: none yet)."""
        with self._cv:
            return self._color[-1][0] if self._color else None

    def wait_pair(self, *, timeout_s: float, newer_than_s: float, now, cancel=None) -> RGBDObservation | None:
        """A synchronized observation received after `newer_than_s` (monotonic), or None on timeout
        or cancel. `now` is the monotonic clock used for `received_s`."""
        deadline = now() + timeout_s
        with self._cv:
            while True:
                obs = self._ready(newer_than_s)
                if obs is not None:
                    return obs
                left = deadline - now()
                if left <= 0 or (cancel is not None and cancel.is_set()):
                    return None
                self._cv.wait(min(left, 0.05))
