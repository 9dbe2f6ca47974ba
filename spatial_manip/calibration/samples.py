"""Calibration samples: an image and the robot's flange pose at the same instant.

The pairing is by timestamps, never "the latest of each": a camera frame is 30-60 ms old when it
arrives while /joint_states comes at 125-500 Hz, so the latest joint state belongs to a later
arm pose whenever the arm moves (the "images paired with the wrong robot poses" that spreads
results by centimetres; easy_handeye issues 72, 143, 150).

Samples folder (offline input of `spatial-manip calibrate --samples DIR`, and what the live
capture writes), `DIR/samples.json`:

    {"mode": "eye_to_hand",
     "camera_info": {"width", "height", "k": [9], "d": [5], "distortion_model"},
     "images": [{"file": "img_000.png", "stamp": 12.300}, ...],      # stamps in seconds
     "robot":  [{"stamp": 12.296, "joints": [6 rad], "names": [6, optional]},
                {"stamp": 12.304, "tool0_pose": [x, y, z, rx, ry, rz]},   # UR pose of the flange
                {"stamp": 12.312, "tcp_pose": [x, y, z, rx, ry, rz]}, ...],  # needs "tcp_offset"
     "tcp_offset": [x, y, z, rx, ry, rz],       # the pendant's TCP, only for tcp_pose entries
     "robot_model": "ur5e"}                     # DH preset for joints (kinematics.DH_PRESETS)
"""
from __future__ import annotations

import json
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from spatial_manip.control.kinematics import JOINT_NAMES, DH_PRESETS, URKinematics, tcp_offset_matrix
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import invert, rotvec_pose_to_matrix

DEFAULT_MAX_SKEW_S = 0.02     # half a 25 Hz frame; the arm is still when a sample is taken anyway


class SampleError(ValueError):
    """A samples folder or a pairing is unusable; the message says which entry and why."""


@dataclass(frozen=True)
class TimedPose:
    stamp: float
    T_base_tool0: np.ndarray


@dataclass(frozen=True)
class Pairing:
    """image index -> robot index (or None) and the skew in seconds, with the reason per miss."""

    pairs: list[tuple[int, int, float]]
    unpaired: dict[int, str]


def pair_by_stamp(image_stamps: Sequence[float], robot_stamps: Sequence[float],
                  max_skew_s: float = DEFAULT_MAX_SKEW_S) -> Pairing:
    """Each image with the robot state nearest in time, if within `max_skew_s`.

    Robot stamps need not be sorted. A robot state serves at most one image (two images
    wanting the same state means the arm did not move between them, or the stamps are wrong:
    the later image is left unpaired and named)."""
    if max_skew_s < 0:
        raise SampleError(f"max_skew_s must be >= 0, got {max_skew_s}")
    order = np.argsort(np.asarray(robot_stamps, float), kind="stable")
    sorted_stamps = [float(robot_stamps[i]) for i in order]
    pairs, unpaired, used = [], {}, {}
    for i, s in enumerate(image_stamps):
        j = _nearest(sorted_stamps, float(s))
        if j is None:
            unpaired[i] = "no robot state at all"
            continue
        skew = sorted_stamps[j] - float(s)
        if abs(skew) > max_skew_s:
            unpaired[i] = (f"nearest robot state is {1000 * abs(skew):.0f} ms away (max {1000 * max_skew_s:.0f} ms): "
                           "record /joint_states with the images, or raise --max-skew-ms if the arm was still")
            continue
        r = int(order[j])
        if r in used:
            unpaired[i] = f"its robot state (stamp {sorted_stamps[j]:.3f}) is already paired with image {used[r]}"
            continue
        used[r] = i
        pairs.append((i, r, skew))
    return Pairing(pairs, unpaired)


def _nearest(sorted_stamps: list[float], s: float) -> int | None:
    if not sorted_stamps:
        return None
    k = bisect_left(sorted_stamps, s)
    cands = [c for c in (k - 1, k) if 0 <= c < len(sorted_stamps)]
    return min(cands, key=lambda c: abs(sorted_stamps[c] - s))


def flange_from_joints(names: Sequence[str] | None, positions: Sequence[float], kin: URKinematics) -> np.ndarray:
    """T_base_tool0 from a joint state (any order, extra joints such as the gripper ignored)."""
    pos = [float(p) for p in positions]
    if names is None:
        if len(pos) < 6:
            raise SampleError(f"a joint state without names needs the 6 UR joints in order, got {len(pos)} values")
        return kin.fk_flange(pos[:6])
    index = {n: k for k, n in enumerate(names)}
    missing = [n for n in JOINT_NAMES if not any(k.endswith(n) for k in index)]
    if missing:
        raise SampleError(f"joint state lacks {missing}; got names {list(names)} (UR driver names expected, "
                          "a prefix such as 'ur_' is fine)")
    q = [pos[next(k for nm, k in index.items() if nm.endswith(n))] for n in JOINT_NAMES]
    return kin.fk_flange(q)


def robot_entry_pose(entry: dict, kin: URKinematics, T_tool0_tcp: np.ndarray | None, where: str) -> np.ndarray:
    """T_base_tool0 of one `robot` entry of samples.json."""
    if "joints" in entry:
        return flange_from_joints(entry.get("names"), entry["joints"], kin)
    if "tool0_pose" in entry:
        return rotvec_pose_to_matrix(entry["tool0_pose"])
    if "tcp_pose" in entry:
        if T_tool0_tcp is None:
            raise SampleError(f"{where}: a tcp_pose needs the file's 'tcp_offset' (the pendant's TCP) to recover "
                              "the flange; or record joints instead")
        return rotvec_pose_to_matrix(entry["tcp_pose"]) @ invert(T_tool0_tcp)
    raise SampleError(f"{where}: give 'joints', 'tool0_pose' or 'tcp_pose'; got keys {sorted(entry)}")


@dataclass
class SampleSet:
    """Images (paths) paired with flange poses, plus what the folder said about the camera."""

    mode: str
    intrinsics: CameraIntrinsics
    image_paths: list[Path]
    image_stamps: list[float]
    T_base_tool0: list[np.ndarray]
    skew_s: list[float]
    unpaired: dict[str, str]          # image file -> why it has no pose


def load_samples(folder: str | Path, *, max_skew_s: float = DEFAULT_MAX_SKEW_S, mode: str | None = None) -> SampleSet:
    folder = Path(folder)
    path = folder / "samples.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as e:
        raise SampleError(f"{path} does not exist: a samples folder holds samples.json and its images "
                          "(format in spatial_manip/calibration/samples.py)") from e
    except json.JSONDecodeError as e:
        raise SampleError(f"{path} is not valid JSON: {e}") from e
    for key in ("camera_info", "images", "robot"):
        if key not in data:
            raise SampleError(f"{path}: missing required key {key!r}")
    intr = CameraIntrinsics.from_camera_info(data["camera_info"])
    kin = URKinematics(**DH_PRESETS[_model(data, path)])
    T_tcp = tcp_offset_matrix(data["tcp_offset"]) if "tcp_offset" in data else None
    _require(data["images"], ("file", "stamp"), f"{path}: images")
    for k, im in enumerate(data["images"]):
        if not isinstance(im["file"], str) or not im["file"] or isinstance(im["stamp"], bool) \
                or not isinstance(im["stamp"], (int, float)):
            raise SampleError(f"{path}: images[{k}] needs a file name (text) and a stamp (seconds), "
                              f"got file {im['file']!r}, stamp {im['stamp']!r}")
    _require(data["robot"], ("stamp",), f"{path}: robot")
    robot = [TimedPose(float(e["stamp"]), robot_entry_pose(e, kin, T_tcp, f"{path}: robot[{k}]"))
             for k, e in enumerate(data["robot"])]
    images = data["images"]
    pairing = pair_by_stamp([float(im["stamp"]) for im in images], [r.stamp for r in robot], max_skew_s)
    return SampleSet(mode=mode or data.get("mode", "eye_to_hand"), intrinsics=intr,
                     image_paths=[folder / images[i]["file"] for i, _, _ in pairing.pairs],
                     image_stamps=[float(images[i]["stamp"]) for i, _, _ in pairing.pairs],
                     T_base_tool0=[robot[r].T_base_tool0 for _, r, _ in pairing.pairs],
                     skew_s=[s for _, _, s in pairing.pairs],
                     unpaired={images[i]["file"]: why for i, why in pairing.unpaired.items()})


def _require(entries, keys: tuple, where: str) -> None:
    if not isinstance(entries, list):
        raise SampleError(f"{where} must be a list, got {type(entries).__name__}")
    for k, e in enumerate(entries):
        missing = [key for key in keys if not isinstance(e, dict) or key not in e]
        if missing:
            raise SampleError(f"{where}[{k}] lacks {missing} (each entry needs {list(keys)})")


def _model(data: dict, path: Path) -> str:
    model = str(data.get("robot_model", "ur5e")).lower()
    if model not in DH_PRESETS:
        raise SampleError(f"{path}: robot_model {model!r} is not one of {sorted(DH_PRESETS)}")
    return model


def write_samples(folder: str | Path, *, mode: str, intrinsics: CameraIntrinsics, images: list[tuple[str, float]],
                  robot: list[dict], robot_model: str = "ur5e") -> Path:
    """Write samples.json (the images themselves are written by the caller)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    data = {"mode": mode, "robot_model": robot_model, "camera_info": intrinsics.to_camera_info(),
            "images": [{"file": f, "stamp": s} for f, s in images], "robot": robot}
    path = folder / "samples.json"
    path.write_text(json.dumps(data, indent=1))
    return path
