"""Synthetic RealSense recordings without a camera: a table-plus-boxes scene ray-cast in numpy,
fed to a pyrealsense2 software device (Z16 depth + RGB8 colour sensors, intrinsics, extrinsics
and depth units set) and written by `rs.recorder` (pyrealsense2 2.59 writes a rosbag2 `.db3`).

The recording plays back through `RealSenseSource(source="file")` like a real one, which is how
tests and `spatial-manip camera-bench` exercise the camera code on a machine with no camera.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from spatial_manip import transforms as tf
from spatial_manip.camera_model import CameraIntrinsics

L515_DEPTH_UNITS_M = 0.00025
EPOCH_MS = 1_700_000_000_000.0  # recordings use global_time stamps from this instant


@dataclass(kw_only=True)
class SyntheticConfig:
    depth_width: int = 640
    depth_height: int = 480
    color_width: int = 640
    color_height: int = 480
    fps: int = 30
    n_frames: int = 30
    depth_units_m: float = L515_DEPTH_UNITS_M
    distinct_frames: int = 0          # render this many and cycle (0 = every frame); speeds up long recordings
    depth_to_color_m: tuple = (0.0, 0.0, 0.0)   # translation of the colour camera in the depth frame
    seed: int = 0

    def __post_init__(self):
        if self.n_frames < 1 or self.fps <= 0:
            raise ValueError(f"need n_frames >= 1 and fps > 0, got {self.n_frames}, {self.fps}")
        if not self.depth_units_m > 0:
            raise ValueError(f"depth_units_m must be positive, got {self.depth_units_m}")


@dataclass
class RecordedFrame:
    index: int
    stamp_ms: float
    rgb: np.ndarray           # (Hc, Wc, 3) uint8
    depth_raw: np.ndarray     # (Hd, Wd) uint16 in depth units


@dataclass
class SyntheticRecording:
    path: str
    config: SyntheticConfig
    depth_intrinsics: CameraIntrinsics
    color_intrinsics: CameraIntrinsics
    frames: list[RecordedFrame] = field(default_factory=list)


def _intrinsics(w: int, h: int, hfov_deg: float, k1: float) -> CameraIntrinsics:
    f = 0.5 * w / np.tan(np.radians(hfov_deg) / 2)
    return CameraIntrinsics(w, h, f, f * 1.001, (w - 1) / 2 + 0.25, (h - 1) / 2 - 0.5,
                            distortion_model="plumb_bob", distortion=(k1, 0.0, 0.0, 0.0, 0.0))


def default_camera_pose() -> np.ndarray:
    """Colour optical frame in base: 0.55 m above a table in front of the robot, pitched down."""
    pitch = np.radians(50)
    z = np.array([np.cos(pitch), 0.0, -np.sin(pitch)])   # looks along +x, down
    x = np.array([0.0, -1.0, 0.0])                        # image right = robot's -y
    return tf.make_transform(np.stack([x, np.cross(z, x), z], axis=1), [0.15, 0.0, 0.70])


def _boxes(t: float) -> list[tuple[np.ndarray, np.ndarray, tuple[int, int, int]]]:
    """(min corner, max corner, colour) of the table top and the boxes at time t (one moves)."""
    slide = 0.04 * np.sin(2 * np.pi * 0.5 * t)
    return [
        (np.array([0.25, -0.45, -0.05]), np.array([0.95, 0.45, 0.0]), (150, 110, 70)),     # table top
        (np.array([0.45, -0.20, 0.0]), np.array([0.55, -0.10, 0.12]), (200, 40, 40)),
        (np.array([0.55, 0.05 + slide, 0.0]), np.array([0.62, 0.12 + slide, 0.20]), (40, 160, 60)),
        (np.array([0.70, -0.05, 0.0]), np.array([0.78, 0.08, 0.05]), (50, 70, 200)),
    ]


def render(intr: CameraIntrinsics, T_base_cam: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Ray-cast the scene: (rgb uint8, planar depth metres float32, 0 = no return)."""
    v, u = np.mgrid[0:intr.height, 0:intr.width].astype(np.float32)
    d_cam = np.stack([(u - intr.cx) / intr.fx, (v - intr.cy) / intr.fy, np.ones_like(u)], -1).reshape(-1, 3)
    R, o = T_base_cam[:3, :3], T_base_cam[:3, 3]
    d = d_cam @ R.T                              # ray directions in base, z_cam component 1
    best = np.full(d.shape[0], np.inf, np.float32)
    colour = np.zeros((d.shape[0], 3), np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / d
        for lo, hi, rgb in _boxes(t):
            t0, t1 = (lo - o) * inv, (hi - o) * inv
            near = np.nanmax(np.minimum(t0, t1), axis=1)
            far = np.nanmin(np.maximum(t0, t1), axis=1)
            hit = (near <= far) & (near > 0) & (near < best)
            best[hit] = near[hit]
            colour[hit] = rgb
    depth = np.where(np.isfinite(best), best, 0).astype(np.float32)  # t along d = z in camera
    shade = (np.clip(depth, 0.3, 2.0) * 40).astype(np.uint8)[:, None]  # depth cue so pixels differ
    colour = np.where(np.isfinite(best)[:, None], colour - np.minimum(colour, shade), 20)
    return colour.reshape(intr.height, intr.width, 3).astype(np.uint8), depth.reshape(intr.height, intr.width)


def _rs_intrinsics(rs, ci: CameraIntrinsics):
    i = rs.intrinsics()
    i.width, i.height, i.fx, i.fy, i.ppx, i.ppy = ci.width, ci.height, ci.fx, ci.fy, ci.cx, ci.cy
    i.model = rs.distortion.brown_conrady
    i.coeffs = list(ci.distortion)
    return i


def build_recording(path: str, config: SyntheticConfig | None = None, keep_frames: bool = True) -> SyntheticRecording:
    """Write a RealSense recording of the synthetic scene to `path` (.db3) and return what was fed."""
    import pyrealsense2 as rs

    cfg = config or SyntheticConfig()
    if os.path.exists(path):
        os.remove(path)
    # Same field of view and no distortion: at equal resolutions alignment is then the identity,
    # so tests can compare published depth with the recorded pixels exactly.
    d_intr = _intrinsics(cfg.depth_width, cfg.depth_height, 65.0, 0.0)
    c_intr = _intrinsics(cfg.color_width, cfg.color_height, 65.0, 0.0)
    out = SyntheticRecording(path, cfg, d_intr, c_intr)

    dev = rs.software_device()
    sensors, profiles = [], []
    for name, ci, stype, fmt, bpp, uid in (("Depth", d_intr, rs.stream.depth, rs.format.z16, 2, 0),
                                          ("Color", c_intr, rs.stream.color, rs.format.rgb8, 3, 1)):
        sensor = dev.add_sensor(name)
        vs = rs.video_stream()
        vs.type, vs.width, vs.height, vs.fps, vs.fmt, vs.bpp, vs.index, vs.uid = (
            stype, ci.width, ci.height, cfg.fps, fmt, bpp, 0, uid)
        vs.intrinsics = _rs_intrinsics(rs, ci)
        sensors.append(sensor)
        profiles.append(sensor.add_video_stream(vs))
    sensors[0].add_read_only_option(rs.option.depth_units, cfg.depth_units_m)
    ext = rs.extrinsics()
    ext.rotation = [1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0]
    ext.translation = [float(x) for x in cfg.depth_to_color_m]
    profiles[0].register_extrinsics_to(profiles[1], ext)
    dev.create_matcher(rs.matchers.default)

    recorder = rs.recorder(path, dev)
    syncer = rs.syncer()
    for s, p in zip(sensors, profiles):
        s.open(p)
        s.start(syncer)
    T_color = default_camera_pose()
    T_depth = T_color @ tf.make_transform(t=-np.asarray(cfg.depth_to_color_m, float))
    cache: dict[int, tuple] = {}
    try:
        for n in range(cfg.n_frames):
            key = n % cfg.distinct_frames if cfg.distinct_frames else n
            if key not in cache:
                rgb, _ = render(c_intr, T_color, key / cfg.fps)
                _, depth_m = render(d_intr, T_depth, key / cfg.fps)
                raw = np.clip(np.rint(depth_m / cfg.depth_units_m), 0, 65535).astype(np.uint16)
                cache[key] = (np.ascontiguousarray(rgb), np.ascontiguousarray(raw))
            rgb, raw = cache[key]
            stamp = EPOCH_MS + n * 1000.0 / cfg.fps
            # colour first: playback then pairs each depth frame with its own colour frame
            for sensor, prof, arr, bpp in ((sensors[1], profiles[1], rgb, 3), (sensors[0], profiles[0], raw, 2)):
                f = rs.software_video_frame()
                f.pixels, f.stride, f.bpp = arr, arr.shape[1] * bpp, bpp
                f.timestamp, f.domain, f.frame_number = stamp, rs.timestamp_domain.global_time, n
                f.profile = prof.as_video_stream_profile()
                if bpp == 2:
                    f.depth_units = cfg.depth_units_m
                sensor.on_video_frame(f)
            syncer.wait_for_frames(2000)
            if keep_frames:
                out.frames.append(RecordedFrame(n, stamp, rgb, raw))
    finally:
        for s in sensors:
            s.stop()
            s.close()
        del recorder  # the recorder writes the file when released
    return out
