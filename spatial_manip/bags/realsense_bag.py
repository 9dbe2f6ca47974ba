"""RealSense SDK recordings as rosbag2 (.db3 written by pyrealsense2 >= 2.55's recorder): map
their /device_0/... topics onto the official driver's camera topics (ROS-free).

Colour: `.../Color_0/image/data/compressed` (PNG) -> /camera/color/image_raw (rgb8).
Depth: `.../Depth_0/image/data/compressedDepth` ("16UC1; compressedDepth png": 12-byte header +
16-bit PNG, device units) or `.../image/data` (mono16) -> /camera/depth/image_rect_raw in
millimetres. The SDK records unaligned depth, so it goes on the driver's unaligned topic; for
aligned depth play the recording through camera_node (`source:=file`), the SDK's own pipeline.
Header stamps are the frames' sensor timestamps from the `.../image/metadata` strings.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
from PIL import Image

from spatial_manip.bags.io import BagError, BagMessage, BagReader
from spatial_manip.camera.types import depth_to_mm
from spatial_manip.camera_model import CameraIntrinsics

COLOR_TOPIC, COLOR_INFO = "/camera/color/image_raw", "/camera/color/camera_info"
DEPTH_TOPIC, DEPTH_INFO = "/camera/depth/image_rect_raw", "/camera/depth/camera_info"
FRAMES = {"Color": "camera_color_optical_frame", "Depth": "camera_depth_optical_frame"}
_SENSOR = re.compile(r"^/device_\d+/sensor_\d+/(Color|Depth)_\d+/image/(data(?:/compressed|/compressedDepth)?|metadata|camera_info)$")


def is_realsense_bag(reader: BagReader) -> bool:
    return any(t.startswith("/device_0/") for t in reader.topics)


@dataclass
class CameraItem:
    """One mapped message: kind "image" (array) or "info" (intrinsics), for a standard topic."""
    topic: str
    kind: str
    frame_id: str
    stamp_ns: int
    image: np.ndarray | None = None
    encoding: str = ""
    intrinsics: CameraIntrinsics | None = None


def _metadata(text: str) -> dict:
    return dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv)


def decode_png(data: bytes) -> np.ndarray:
    return np.array(Image.open(io.BytesIO(data)))


def _image_fields(msg) -> np.ndarray:
    """A decoded rosbags sensor_msgs/Image (mono16 / 16UC1 / rgb8 / bgr8) as an array."""
    dtype, ch = {"mono16": (np.uint16, 1), "16UC1": (np.uint16, 1), "z16": (np.uint16, 1),
                 "rgb8": (np.uint8, 3), "bgr8": (np.uint8, 3)}.get(msg.encoding.lower() if msg.encoding.lower() == "z16"
                                                                   else msg.encoding, (None, 0))
    if dtype is None:
        raise ValueError(f"image encoding {msg.encoding!r} is not supported (mono16, 16UC1, rgb8, bgr8)")
    rows = np.asarray(msg.data, np.uint8).reshape(msg.height, msg.step)
    dt = np.dtype(dtype).newbyteorder(">" if msg.is_bigendian else "<")
    arr = rows[:, : msg.width * ch * np.dtype(dtype).itemsize].copy().view(dt).astype(dtype)
    arr = arr.reshape(msg.height, msg.width, ch)
    arr = arr[..., ::-1] if msg.encoding == "bgr8" else arr
    return arr[..., 0] if ch == 1 else arr


class RealSenseBagMapper:
    """Stateful: the SDK writes a frame's image and camera_info before its metadata (stamp, depth
    units), so a stream's items wait for that metadata; `flush()` releases what is left."""

    def __init__(self, reader: BagReader):
        self.reader = reader
        self.pending: dict[str, list] = {"Color": [], "Depth": []}
        self.last_stamp: dict[str, int] = {}

    def topics(self) -> list[str]:
        return [t for t in self.reader.topics if _SENSOR.match(t)]

    def map(self, msg: BagMessage) -> list[CameraItem]:
        m = _SENSOR.match(msg.topic)
        if not m:
            return []
        stream, part = m.group(1), m.group(2)
        decoded = self.reader.deserialize(msg)
        if part == "metadata":
            return self._release(stream, _metadata(decoded.data))
        if part == "camera_info":  # written after its frame's metadata: same stamp as that frame
            return [CameraItem(COLOR_INFO if stream == "Color" else DEPTH_INFO, "info", FRAMES[stream],
                               self.last_stamp.get(stream, msg.t_ns),
                               intrinsics=CameraIntrinsics.from_camera_info(decoded))]
        out = []
        if self.pending[stream] and self.pending[stream][0][0].t_ns != msg.t_ns:
            out = self._release(stream, {})  # the previous frame never got its metadata
        self.pending[stream].append((msg, part, decoded))
        return out

    def flush(self) -> list[CameraItem]:
        return self._release("Color", {}) + self._release("Depth", {})

    def _release(self, stream: str, meta: dict) -> list[CameraItem]:
        items, self.pending[stream] = self.pending[stream], []
        out = []
        for msg, part, decoded in items:
            stamp_ns = int(round(float(meta["timestamp"]) * 1e6)) if "timestamp" in meta else msg.t_ns
            frame = FRAMES[stream]
            self.last_stamp[stream] = stamp_ns
            try:
                image = self._image(stream, part, decoded, meta)
            except (OSError, ValueError) as e:
                raise BagError(f"bag {self.reader.path}: cannot decode the {stream} image on {msg.topic}: {e}") from e
            out.append(CameraItem(COLOR_TOPIC if stream == "Color" else DEPTH_TOPIC, "image", frame, stamp_ns,
                                  image=image, encoding="rgb8" if stream == "Color" else "16UC1"))
        return out

    def _image(self, stream: str, part: str, decoded, meta: dict) -> np.ndarray:
        if part == "data/compressedDepth":
            raw = decode_png(bytes(decoded.data[12:]))  # 12-byte compressedDepth header
        elif part == "data/compressed":
            raw = decode_png(bytes(decoded.data))
        else:  # uncompressed sensor_msgs/Image (recorded with rs.recorder(path, dev, False))
            raw = _image_fields(decoded)
        if stream == "Depth":
            if "depth_units" not in meta:
                raise ValueError("no depth_units in the frame's metadata: cannot convert depth to millimetres")
            return depth_to_mm(raw.astype(np.uint16), float(meta["depth_units"]))
        return np.ascontiguousarray(raw[..., :3].astype(np.uint8))
