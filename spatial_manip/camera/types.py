"""What every camera source delivers, its errors, and sensor-time to ROS-time conversion.

SDK-free so nodes, bags and tests can use these without pyrealsense2.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from spatial_manip.errors import NoObservationError
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import RGBDObservation


class CameraError(NoObservationError):
    """No usable frame: the base of the camera errors (code NO_OBSERVATION)."""


class NoFrameYetError(CameraError):
    """The source runs but has not delivered a frame yet."""


class StaleFrameError(CameraError):
    """The newest frame is older than the caller accepts."""

    def __init__(self, message: str, age_s: float):
        super().__init__(message)
        self.age_s = age_s


class DeviceLostError(CameraError):
    """The device is gone (unplugged, USB reset, file ended); the source is reconnecting."""


class DeviceConfigError(CameraError):
    """The requested device, file or profile does not exist: retrying will not help."""


@dataclass
class RGBDFrame:
    """One aligned colour + depth pair as the SDK gave it, plus what publishing needs."""

    rgb: np.ndarray                 # (H, W, 3) uint8
    depth_mm: np.ndarray            # (H, W) uint16 millimetres, aligned to colour, 0 = no return
    intrinsics: CameraIntrinsics    # colour camera (depth is aligned to it)
    stamp_ms: float                 # sensor timestamp of the colour frame, milliseconds
    timestamp_domain: str           # "hardware_clock" | "system_time" | "global_time"
    color_frame_number: int
    depth_frame_number: int
    received_monotonic_s: float     # time.monotonic() when the capture thread got it
    seq: int = 0                    # counts framesets delivered by the source, from 1

    def age_s(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.received_monotonic_s

    def to_observation(self, T_base_cam=None, stamp_s: float | None = None) -> RGBDObservation:
        depth_m = self.depth_mm.astype(np.float32) * np.float32(0.001)
        return RGBDObservation(rgb=self.rgb, depth_m=depth_m, intrinsics=self.intrinsics,
                               T_base_cam=np.eye(4) if T_base_cam is None else T_base_cam,
                               stamp_s=self.stamp_ms / 1000.0 if stamp_s is None else stamp_s)


class RGBDSource(Protocol):
    """A camera backend: a capture thread keeps the newest frame."""

    def connect(self) -> None: ...
    def close(self) -> None: ...
    def read_latest(self, max_age_s: float | None = None) -> RGBDFrame: ...
    def wait_for_frame(self, timeout_s: float, newer_than_seq: int = 0) -> RGBDFrame: ...

    @property
    def status(self) -> str: ...


def depth_to_mm(depth_raw: np.ndarray, depth_units_m: float) -> np.ndarray:
    """Raw Z16 depth in device units (L515: 0.25 mm, D4xx: 1 mm) -> uint16 millimetres,
    as the official driver publishes (rounded; values beyond 65.535 m saturate)."""
    raw = np.asarray(depth_raw)
    if raw.dtype != np.uint16:
        raise ValueError(f"raw depth must be uint16 (Z16), got {raw.dtype}")
    if not depth_units_m > 0:
        raise ValueError(f"depth units must be positive metres per unit, got {depth_units_m}")
    scale = depth_units_m * 1000.0
    if abs(scale - 1.0) < 1e-6:
        return raw.copy()
    mm = np.rint(raw.astype(np.float32) * np.float32(scale))
    return np.clip(mm, 0, 65535).astype(np.uint16)


def metres_to_mm(depth_m: np.ndarray) -> np.ndarray:
    """Depth in metres (a renderer's) -> uint16 millimetres, rounded, as a driver publishes it
    (0 = no return; beyond 65.535 m saturates)."""
    return np.clip(np.round(np.asarray(depth_m) * 1000.0), 0, 65535).astype(np.uint16)


class StampConverter:
    """Sensor timestamps -> ROS time seconds, as realsense-ros does.

    `global_time` and `system_time` stamps are already milliseconds since the epoch and are used
    as they are. `hardware_clock` stamps count from the device's power-on, so they are anchored to
    the host clock at the first frame and advance with the sensor's own clock after that.
    """

    def __init__(self, now_s=time.time):
        self._now_s = now_s
        self._offset_s: float | None = None

    def to_ros_seconds(self, stamp_ms: float, domain: str) -> float:
        if domain in ("global_time", "system_time"):
            return stamp_ms / 1000.0
        if self._offset_s is None:
            self._offset_s = self._now_s() - stamp_ms / 1000.0
        return self._offset_s + stamp_ms / 1000.0

    def reset(self) -> None:
        """Call after a reconnect: a new device clock starts again from zero."""
        self._offset_s = None
