"""Where the one observation of a capture comes from: a saved observation (.npz), a rosbag2,
the MuJoCo cell, or the live camera (nodes/live_observation.py: ROS, so above workspace/).

Every source returns an `RGBDObservation` whose `T_base_cam` comes from the hand-eye
calibration (eye-to-hand; an eye-in-hand camera needs the flange pose of the same instant,
which a live capture or a bag with /camera/extrinsics provides).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from spatial_manip.errors import NoObservationError
from spatial_manip.geometry.calibration import HandEyeCalibration
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import RGBDObservation
from spatial_manip.bags.evaluate import _image_array, _stamp_ns
from spatial_manip.bags.io import BagReader
from spatial_manip import transforms as tf

COLOR = "/camera/color/image_raw"
DEPTH = "/camera/aligned_depth_to_color/image_raw"
INFO = "/camera/color/camera_info"
EXTRINSICS = "/camera/extrinsics"


def save_observation(obs: RGBDObservation, path: str | Path) -> None:
    """One observation as .npz (rgb, depth in metres, K, size, T_base_cam, stamp): what
    `--observation` reads back, so a capture or a check can be re-run offline."""
    i = obs.intrinsics
    np.savez_compressed(Path(path), rgb=obs.rgb, depth_m=obs.depth_m.astype(np.float32), K=i.K,
                        size=np.array([i.width, i.height]), distortion=np.array(i.distortion),
                        T_base_cam=obs.T_base_cam, stamp_s=np.array(obs.stamp_s))


def load_observation(path: str | Path, calibration: HandEyeCalibration | None = None) -> RGBDObservation:
    """A saved observation; `calibration` (eye-to-hand) replaces the extrinsics stored with it."""
    path = Path(path)
    try:
        with np.load(path) as z:
            d = {k: z[k] for k in z.files}
    except FileNotFoundError as e:
        raise NoObservationError(f"observation file {path} does not exist") from e
    except (ValueError, OSError) as e:
        raise NoObservationError(f"{path} is not a saved observation (.npz from --save-observation): {e}") from e
    missing = [k for k in ("rgb", "depth_m", "K", "size", "T_base_cam") if k not in d]
    if missing:
        raise NoObservationError(f"{path} lacks {', '.join(missing)}: not written by --save-observation")
    w, h = (int(v) for v in d["size"])
    intr = CameraIntrinsics.from_K(d["K"], w, h, distortion=tuple(d.get("distortion", np.zeros(5))))
    T = _extrinsics(calibration, d["T_base_cam"], str(path))
    return RGBDObservation(rgb=d["rgb"], depth_m=d["depth_m"], intrinsics=intr, T_base_cam=T,
                           stamp_s=float(d.get("stamp_s", 0.0)))


def _extrinsics(calibration: HandEyeCalibration | None, recorded, where: str) -> np.ndarray:
    if calibration is not None and not calibration.eye_in_hand:
        return calibration.T_base_camera()
    if recorded is None:
        raise NoObservationError(
            f"{where}: no camera pose: give an eye-to-hand --calibration (an eye-in-hand camera's pose "
            f"needs the flange pose of the same instant, which {EXTRINSICS} carries)")
    return np.asarray(recorded, float).reshape(4, 4)


def observation_from_bag(path: str | Path, calibration: HandEyeCalibration | None = None, *,
                         color: str = COLOR, depth: str = DEPTH, info: str = INFO) -> RGBDObservation:
    """The first colour/depth pair of a rosbag2 with the same stamp, with its camera_info."""
    with BagReader(path) as reader:
        reader.require([color, depth, info])
        topics = [color, depth, info] + ([EXTRINSICS] if EXTRINSICS in reader.topics else [])
        seen: dict = {color: {}, depth: {}}
        cam_info = pose = None
        for m in reader.messages(topics):
            msg = reader.deserialize(m)
            if m.topic == info:
                cam_info = msg
            elif m.topic == EXTRINSICS:
                pose = msg.pose
            else:
                seen[m.topic][_stamp_ns(msg.header)] = msg
                pair = _pair(seen, color, depth)
                if pair and cam_info is not None:
                    return _bag_observation(pair, cam_info, pose, calibration, str(path))
    raise NoObservationError(f"bag {path}: no colour and depth image share a stamp (with {info} before them); "
                             "record with align_depth.enable:=true")


def _pair(seen: dict, color: str, depth: str):
    common = set(seen[color]) & set(seen[depth])
    return (seen[color][min(common)], seen[depth][min(common)]) if common else None


def _bag_observation(pair, info, pose, calibration, where) -> RGBDObservation:
    cmsg, dmsg = pair
    rgb, depth = _image_array(cmsg), _image_array(dmsg)
    depth_m = depth.astype(np.float32) * np.float32(0.001) if depth.dtype == np.uint16 else depth.astype(np.float32)
    recorded = None
    if pose is not None:
        p, q = pose.position, pose.orientation
        recorded = tf.pose_to_matrix([p.x, p.y, p.z], [q.x, q.y, q.z, q.w])
    return RGBDObservation(rgb=rgb, depth_m=depth_m, intrinsics=CameraIntrinsics.from_camera_info(info),
                           T_base_cam=_extrinsics(calibration, recorded, where), stamp_s=_stamp_ns(cmsg.header) / 1e9)
