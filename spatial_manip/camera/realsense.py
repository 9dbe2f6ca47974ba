"""RealSense RGB-D source over pyrealsense2: a live camera (L515 or any depth RealSense) or an
SDK recording, played through the very same pipeline code.

pyrealsense2 is imported here only. A capture thread keeps the newest aligned frameset;
`read_latest(max_age_s)` refuses a stale one. When the device disappears the source reports it
(`status`, `on_status`) and reconnects with exponential back-off; it never raises out of the
thread. L515 support ended with librealsense 2.54: a live L515 needs pyrealsense2 <= 2.54.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from spatial_manip.device import Device
from spatial_manip.camera.types import (DeviceConfigError, DeviceLostError, NoFrameYetError, RGBDFrame,
                                        StaleFrameError, depth_to_mm)
from spatial_manip.camera_model import CameraIntrinsics

log = logging.getLogger(__name__)

DEPTH_PROFILES = {(1024, 768), (640, 480), (320, 240), (848, 480), (1280, 720)}  # L515 first, then D4xx
COLOR_PROFILES = {(1280, 720), (1920, 1080), (640, 480), (960, 540), (848, 480)}
L515_PRESETS = ("custom", "default", "no_ambient_light", "low_ambient_light", "max_range", "short_range")


@dataclass(kw_only=True)
class RealSenseConfig:
    source: str = "live"              # "live" camera or "file" (an SDK recording, .bag or .db3)
    serial: str = ""                  # live: this serial number; "" = the first device found
    file_path: str = ""               # file: the recording
    real_time: bool = True            # file: False plays every frame without drops
    repeat_playback: bool = False     # file: loop the recording
    depth_width: int = 640
    depth_height: int = 480
    color_width: int = 640
    color_height: int = 480
    fps: int = 30
    align_to_color: bool = True
    laser_power: float | None = None           # L515 options: set only when the sensor supports them
    receiver_gain: float | None = None
    confidence_threshold: float | None = None
    visual_preset: str | int | None = None      # an L515 preset name (L515_PRESETS) or its number
    temporal_filter: bool = False
    spatial_filter: bool = False
    hole_filling_filter: bool = False
    frame_timeout_s: float = 2.0       # no frame for this long on a live camera = device lost
    reconnect_initial_s: float = 0.5
    reconnect_max_s: float = 8.0
    extra: dict = field(default_factory=dict)   # ignored keys from a wider parameter set

    def __post_init__(self):
        if self.source not in ("live", "file"):
            raise ValueError(f"source must be 'live' or 'file', got {self.source!r}")
        if self.source == "file" and not self.file_path:
            raise ValueError("source 'file' needs file_path (an SDK recording .bag or .db3)")
        if self.fps <= 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        for name in ("depth", "color"):
            w, h = getattr(self, f"{name}_width"), getattr(self, f"{name}_height")
            if w <= 0 or h <= 0:
                raise ValueError(f"{name} resolution must be positive, got {w}x{h}")
        if not 0 < self.reconnect_initial_s <= self.reconnect_max_s:
            raise ValueError("need 0 < reconnect_initial_s <= reconnect_max_s, got "
                             f"{self.reconnect_initial_s} and {self.reconnect_max_s}")
        if isinstance(self.visual_preset, str) and self.visual_preset not in L515_PRESETS:
            raise ValueError(f"visual_preset must be one of {L515_PRESETS} or a number, got {self.visual_preset!r}")


def make_realsense_source(**cfg) -> "RealSenseSource":
    return RealSenseSource(RealSenseConfig(**cfg))


def intrinsics_from_rs(intr) -> CameraIntrinsics:
    return CameraIntrinsics.from_realsense(intr)


class _Pipeline:
    """One open pyrealsense2 pipeline with its alignment and filters (live or file)."""

    def __init__(self, cfg: RealSenseConfig):
        import pyrealsense2 as rs

        self.rs = rs
        self.cfg = cfg
        rsconf = rs.config()
        if cfg.source == "file":
            if not os.path.isfile(cfg.file_path):
                raise DeviceConfigError(f"RealSense recording {cfg.file_path!r} does not exist; "
                                        "record one with rs.recorder or pass an existing .bag/.db3")
            rsconf.enable_device_from_file(cfg.file_path, repeat_playback=cfg.repeat_playback)
        else:
            self._check_device_present(rs, cfg.serial)
            if cfg.serial:
                rsconf.enable_device(cfg.serial)
            rsconf.enable_stream(rs.stream.depth, cfg.depth_width, cfg.depth_height, rs.format.z16, cfg.fps)
            rsconf.enable_stream(rs.stream.color, cfg.color_width, cfg.color_height, rs.format.rgb8, cfg.fps)
        self.pipe = rs.pipeline()
        try:
            self.profile = self.pipe.start(rsconf)
        except RuntimeError as e:
            raise DeviceConfigError(f"could not start the RealSense pipeline ({cfg.source} "
                                    f"{cfg.file_path or cfg.serial or 'first device'}): {e}. Check the "
                                    "profile (depth/colour resolution and fps) is one the device offers") from e
        device = self.profile.get_device()
        self.color_fps = self.profile.get_stream(rs.stream.color).fps() or cfg.fps
        self.playback = device.as_playback() if cfg.source == "file" else None
        if self.playback is not None:
            self.playback.set_real_time(cfg.real_time)
        else:
            self.unsupported_options = self._set_options(device)
        self.align = rs.align(rs.stream.color) if cfg.align_to_color else None
        self.filters = [f for on, f in ((cfg.spatial_filter, rs.spatial_filter),
                                        (cfg.temporal_filter, rs.temporal_filter),
                                        (cfg.hole_filling_filter, rs.hole_filling_filter)) if on]
        self.filters = [f() for f in self.filters]

    @staticmethod
    def _check_device_present(rs, serial: str) -> None:
        devices = rs.context().query_devices()
        serials = [d.get_info(rs.camera_info.serial_number) for d in devices]
        if not serials:
            raise DeviceLostError("no RealSense device found: check the USB 3 cable and `rs-enumerate-devices`"
                                  " (an L515 needs librealsense <= 2.54)")
        if serial and serial not in serials:
            raise DeviceLostError(f"RealSense serial {serial!r} not found; connected: {serials}")

    def _set_options(self, device) -> list[str]:
        """Apply the L515 options the depth sensor supports; return the names it did not."""
        rs, cfg = self.rs, self.cfg
        sensor = device.first_depth_sensor()
        wanted = {rs.option.laser_power: cfg.laser_power, rs.option.receiver_gain: cfg.receiver_gain,
                  rs.option.confidence_threshold: cfg.confidence_threshold}
        if cfg.visual_preset is not None:
            preset = cfg.visual_preset
            if isinstance(preset, str):
                preset = L515_PRESETS.index(preset)
            wanted[rs.option.visual_preset] = float(preset)
        skipped = []
        for opt, value in wanted.items():
            if value is None:
                continue
            if sensor.supports(opt):
                sensor.set_option(opt, float(value))
            else:
                skipped.append(str(opt))
        if skipped:
            log.warning("depth sensor does not support %s; left unchanged", skipped)
        return skipped

    def read(self, timeout_s: float):
        """The next processed frameset as (colour frame, aligned depth frame), or None on timeout."""
        ok, frames = self.pipe.try_wait_for_frames(int(timeout_s * 1000))
        if not ok:
            return None
        if self.align is not None:
            frames = self.align.process(frames)
        depth, color = frames.get_depth_frame(), frames.get_color_frame()
        if not depth or not color:
            return None
        for f in self.filters:
            depth = f.process(depth).as_depth_frame()
        return color, depth

    def ended(self) -> bool:
        return self.playback is not None and self.playback.current_status() == self.rs.playback_status.stopped

    def close(self) -> None:
        try:
            self.pipe.stop()
        except RuntimeError:
            pass  # already stopped (device gone)


def frame_from_rs(color, depth, seq: int) -> RGBDFrame:
    """Copy an aligned pair out of SDK memory into an RGBDFrame (depth rescaled to mm)."""
    vp = color.profile.as_video_stream_profile()
    rgb = np.asanyarray(color.get_data())
    if rgb.ndim != 3 or rgb.shape[2] != 3:
        raise DeviceConfigError(f"colour frames must be RGB8 (H, W, 3); the stream delivers {vp.format()} "
                                f"with shape {rgb.shape}")
    raw = np.asanyarray(depth.get_data())
    return RGBDFrame(rgb=rgb.copy(), depth_mm=depth_to_mm(raw, float(depth.get_units())),
                     intrinsics=intrinsics_from_rs(vp.get_intrinsics()),
                     stamp_ms=float(color.get_timestamp()),
                     timestamp_domain=str(color.get_frame_timestamp_domain()).split(".")[-1],
                     color_frame_number=int(color.get_frame_number()),
                     depth_frame_number=int(depth.get_frame_number()),
                     received_monotonic_s=time.monotonic(), seq=seq)


class RealSenseSource(Device):
    """The newest aligned RGB-D frame of a RealSense camera or recording, from a capture thread."""

    def __init__(self, config: RealSenseConfig, on_status: Callable[[str, str], None] | None = None):
        self.config = config
        self.on_status = on_status or (lambda status, detail: None)
        self._lock = threading.Condition()
        self._latest: RGBDFrame | None = None
        self._seq = 0
        self._status = "closed"
        self._detail = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reconnect_attempts = 0
        self.frames_delivered = 0

    # -- lifecycle -----------------------------------------------------------------------------
    def connect(self) -> None:
        """Start the capture thread; it opens the device (retrying with back-off if absent).

        A recording that does not exist or cannot be opened raises DeviceConfigError at once."""
        if self._thread is not None:
            return
        if self.config.source == "file" and not os.path.isfile(self.config.file_path):
            raise DeviceConfigError(f"RealSense recording {self.config.file_path!r} does not exist")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="realsense-capture", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._set_status("closed", "")


    @property
    def status(self) -> str:
        """"connecting" | "streaming" | "reconnecting" | "ended" (recording finished) | "closed"."""
        return self._status

    @property
    def status_detail(self) -> str:
        return self._detail

    # -- reading ------------------------------------------------------------------------------
    def read_latest(self, max_age_s: float | None = None) -> RGBDFrame:
        with self._lock:
            frame = self._latest
        if frame is None:
            if self._status in ("reconnecting", "ended"):
                raise DeviceLostError(f"no RealSense frame: {self._status} ({self._detail})")
            raise NoFrameYetError(f"no RealSense frame yet (status {self._status}); wait for the camera to start")
        age = frame.age_s()
        if max_age_s is not None and age > max_age_s:
            raise StaleFrameError(f"newest RealSense frame is {age:.3f} s old, older than max_age_s={max_age_s}"
                                  f" (status {self._status}: {self._detail or 'no detail'})", age)
        return frame

    def wait_for_frame(self, timeout_s: float, newer_than_seq: int = 0) -> RGBDFrame:
        """Block until a frame with seq > newer_than_seq arrives (or raise after timeout_s)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._latest is None or self._latest.seq <= newer_than_seq:
                left = deadline - time.monotonic()
                if left <= 0 or self._status in ("ended", "closed"):
                    raise NoFrameYetError(f"no new RealSense frame within {timeout_s} s (status {self._status}:"
                                          f" {self._detail or 'no detail'})")
                self._lock.wait(min(left, 0.1))
            return self._latest

    # -- capture thread -------------------------------------------------------------------------
    def _set_status(self, status: str, detail: str) -> None:
        changed = (status, detail) != (self._status, self._detail)
        with self._lock:
            self._status, self._detail = status, detail
            self._lock.notify_all()
        if changed:
            (log.warning if status == "reconnecting" else log.info)("camera %s: %s", status, detail)
            try:
                self.on_status(status, detail)
            except Exception:  # a user callback must never kill capture
                log.exception("on_status callback failed")

    def _run(self) -> None:
        backoff = self.config.reconnect_initial_s
        self._set_status("connecting", self.config.file_path or self.config.serial or "first device")
        while not self._stop.is_set():
            try:
                pipe = _Pipeline(self.config)
            except (DeviceLostError, DeviceConfigError, RuntimeError) as e:
                if self.config.source == "file":
                    self._set_status("ended", f"cannot play {self.config.file_path}: {e}")
                    return
                self.reconnect_attempts += 1
                self._set_status("reconnecting", f"{e}; retry {self.reconnect_attempts} in {backoff:.1f} s")
                self._stop.wait(backoff)
                backoff = min(2 * backoff, self.config.reconnect_max_s)
                continue
            backoff = self.config.reconnect_initial_s
            self._set_status("streaming", self.config.file_path or self.config.serial or "first device")
            try:
                reason = self._capture(pipe)
            finally:
                pipe.close()
            if reason == "ended":
                self._set_status("ended", f"recording {self.config.file_path} finished")
                return
            if reason != "stopped":
                self.reconnect_attempts += 1
                self._set_status("reconnecting", reason)

    def _capture(self, pipe: _Pipeline) -> str:
        """Read until stopped, the recording ends, or the device stops delivering."""
        silent_since = time.monotonic()
        last = (None, None)
        half_period_ms = 500.0 / pipe.color_fps
        while not self._stop.is_set():
            try:
                pair = pipe.read(timeout_s=0.2)
            except RuntimeError as e:  # device unplugged mid-read
                return f"device lost: {e}"
            if pair is None:
                if pipe.ended():
                    return "ended"
                if pipe.playback is None and time.monotonic() - silent_since > self.config.frame_timeout_s:
                    return f"device lost: no frame for {self.config.frame_timeout_s} s"
                continue
            silent_since = time.monotonic()
            numbers = (pair[0].get_frame_number(), pair[1].get_frame_number())
            # The syncer emits a set whenever either stream has a new frame, pairing it with the
            # other stream's previous one; deliver only sets where both frames are new and taken
            # within half a frame period of each other (the SDK syncer's own tolerance).
            if numbers[0] == last[0] or numbers[1] == last[1]:
                continue
            if abs(pair[0].get_timestamp() - pair[1].get_timestamp()) > half_period_ms:
                continue
            last = numbers
            self._seq += 1
            frame = frame_from_rs(*pair, seq=self._seq)
            with self._lock:
                self._latest = frame
                self.frames_delivered += 1
                self._lock.notify_all()
        return "stopped"
