"""A recorded rosbag2 (board images, camera_info, /joint_states) -> a samples folder.

In a recording the arm moves between poses and rests at each; an image taken while it moves
blurs and, worse, belongs to no single pose. So only images inside a still period of the joint
stream are used, one per period (the one nearest its middle), and each keeps the joint states
around it for samples.pair_by_stamp to pair exactly as the live capture's are. ROS-free: the
bag is read with the `rosbags` library (spatial_manip.bags.io).
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from spatial_manip.calibration.samples import SampleError, write_samples
from spatial_manip.bags.io import BagReader
from spatial_manip.camera_model import CameraIntrinsics

KEEP_AROUND_S = 0.5


def _stamp(header) -> float:
    return int(header.stamp.sec) + int(header.stamp.nanosec) * 1e-9


def _rgb(msg) -> np.ndarray:
    """rgb8 / bgr8 / mono8 sensor_msgs/Image (as rosbags decodes it) -> RGB or grey uint8."""
    ch = {"rgb8": 3, "bgr8": 3, "mono8": 1}.get(msg.encoding)
    if ch is None:
        raise SampleError(f"board images must be rgb8, bgr8 or mono8, got {msg.encoding!r}")
    rows = np.asarray(msg.data, np.uint8).reshape(msg.height, msg.step)[:, : msg.width * ch]
    img = rows.reshape(msg.height, msg.width, ch)
    img = img[..., ::-1] if msg.encoding == "bgr8" else img
    return np.ascontiguousarray(img[..., 0] if ch == 1 else img)


def still_periods(stamps: np.ndarray, q: np.ndarray, *, max_speed_rad_s: float = 0.01,
                  min_duration_s: float = 0.3) -> list[tuple[float, float]]:
    """(start, end) of the periods in which every joint moves slower than `max_speed_rad_s`."""
    if len(stamps) < 2:
        return []
    speed = np.max(np.abs(np.diff(q, axis=0)), axis=1) / np.maximum(np.diff(stamps), 1e-6)
    still = speed < max_speed_rad_s
    out, start = [], None
    for k, s in enumerate(still):
        if s and start is None:
            start = stamps[k]
        if (not s or k == len(still) - 1) and start is not None:
            end = stamps[k + 1] if s else stamps[k]
            if end - start >= min_duration_s:
                out.append((float(start), float(end)))
            start = None
    return out


def samples_from_bag(bag: str | Path, out: str | Path, *, mode: str, image_topic: str, info_topic: str,
                     joint_topic: str, robot_model: str = "ur5e", margin_s: float = 0.05) -> tuple[Path, int]:
    """Write a samples folder from a bag; returns its samples.json and the number of images."""
    with BagReader(bag) as reader:
        reader.require([image_topic, info_topic, joint_topic])
        joints, image_stamps, info = [], [], None
        for m in reader.messages([joint_topic, info_topic, image_topic]):
            msg = reader.deserialize(m)
            if m.topic == joint_topic:
                joints.append({"stamp": _stamp(msg.header), "names": list(msg.name),
                               "joints": [float(v) for v in msg.position]})
            elif m.topic == info_topic and info is None:
                info = {"width": int(msg.width), "height": int(msg.height), "k": [float(v) for v in msg.k],
                        "d": [float(v) for v in msg.d], "distortion_model": msg.distortion_model or "plumb_bob"}
            elif m.topic == image_topic:
                image_stamps.append(_stamp(msg.header))
        chosen = _choose_images(joints, image_stamps, margin_s)
        images = _write_images(reader, image_topic, set(chosen), Path(out))
    intr = CameraIntrinsics.from_camera_info(info)
    near = [j for j in joints if any(abs(j["stamp"] - s) <= KEEP_AROUND_S for s in chosen)]
    path = write_samples(out, mode=mode, intrinsics=intr, images=images, robot=near, robot_model=robot_model)
    return path, len(images)


def _choose_images(joints: list[dict], image_stamps: list[float], margin_s: float) -> list[float]:
    if not joints:
        raise SampleError("the bag has no joint states: record /joint_states with the images")
    joints.sort(key=lambda j: j["stamp"])
    t = np.array([j["stamp"] for j in joints])
    q = np.array([j["joints"] for j in joints])
    chosen = []
    stamps = np.array(sorted(image_stamps))
    for a, b in still_periods(t, q):
        inside = stamps[(stamps >= a + margin_s) & (stamps <= b - margin_s)]
        if inside.size:
            chosen.append(float(inside[np.argmin(np.abs(inside - (a + b) / 2))]))
    if not chosen:
        raise SampleError(f"no image was taken while the arm was still ({len(image_stamps)} images, "
                          f"{len(still_periods(t, q))} still periods): hold each pose for half a second")
    return chosen


def _write_images(reader, topic: str, stamps: set, folder: Path) -> list[tuple[str, float]]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for m in reader.messages([topic]):
        msg = reader.deserialize(m)
        s = _stamp(msg.header)
        if s in stamps:
            name = f"img_{len(out):03d}.png"
            img = _rgb(msg)
            cv2.imwrite(str(folder / name), img[..., ::-1] if img.ndim == 3 else img)
            out.append((name, s))
    return out
