"""ESPIRE's wire format: MessagePack maps over ZeroMQ, as spatigen/espire-eval's client speaks it.

Request (client PUSH -> server PULL):  {"uid": str, "type": str, "content": {..., "sid": str}}
Reply   (server PUB -> client SUB):    {"uid": <the request's uid>, "response":
                                         {"code": 200 | error, "info": str, "content": {...}}}

The client matches replies to requests by `uid` and raises on any code other than 200 with the
reply's `info`, so every error here carries a code and a sentence saying what was wrong.
Binary payloads (only in observation replies): `rgb` is a PNG, `depth` raw float32 metres
row-major (H x W), `intrinsic` 3x3 and `extrinsic` 4x4 raw float32 row-major, as the client's
image.py decodes them. Everything else in a reply must survive the client's `json.dumps` log.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass

import msgpack
import numpy as np
from PIL import Image

OK = 200
BAD_REQUEST = 400        # not MessagePack, not a map, a missing or mistyped field
NOT_FOUND = 404          # unknown task id or observation uid
CONFLICT = 409           # the request does not fit the session's state (no task set, stale observation)
INVALID = 422            # well-formed but out of range (a pixel outside the image)
INTERNAL = 500           # the simulator raised; the server keeps serving
TOO_LARGE = 413          # a request over MAX_MESSAGE_BYTES
BUSY = 503               # another session is running a task

REQUEST_TYPES = ("GET_TASK_LIST", "SET_TASK", "GET_OBSERVATION", "LOCALIZE", "SKIP_LOCALIZATION",
                 "MOVE", "END_TASK")
MAX_MESSAGE_BYTES = 1 << 20          # requests are small maps; anything bigger is not ours (413)
HARD_MAX_MESSAGE_BYTES = 64 << 20    # a peer sending more is disconnected by ZeroMQ, unanswered
ROTATION_AXES = ("pitch", "yaw", "roll")   # positions in SET_TASK's `rotation` and MOVE's `rotation_delta`
# The set-down poses a place MOVE can choose, as the `rotation_delta` that turns a carried book
# (thickness across the fingers: the book's own y axis) from the way it is held: kept as held it
# stands upright; rolled a quarter turn about its width (its x axis) it lies flat. The server
# sets the book down in the pose the turned book is nearer to, whatever the task asks for.
SET_DOWN_DELTAS = {"upright": (0.0, 0.0, 0.0), "flat": (0.0, 0.0, 90.0)}


class ProtocolError(Exception):
    """A request the server answers with `code` and `info` instead of a result."""

    def __init__(self, code: int, info: str, uid: str | None = None):
        super().__init__(info)
        self.code, self.info, self.uid = int(code), str(info), uid


@dataclass(frozen=True)
class Request:
    uid: str
    type: str
    content: dict
    sid: str


def decode_request(raw: bytes) -> Request:
    """Parse and check the envelope; raises ProtocolError (with the uid when it could be read)."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise ProtocolError(TOO_LARGE, f"request too large: {len(raw)} bytes, the limit is {MAX_MESSAGE_BYTES}; "
                            "requests carry a few fields (points, ids), never images", peek_uid(raw))
    try:
        msg = msgpack.unpackb(raw, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.exceptions.UnpackException) as e:
        raise ProtocolError(BAD_REQUEST, f"not a MessagePack message ({type(e).__name__}: {e})") from None
    if not isinstance(msg, dict):
        raise ProtocolError(BAD_REQUEST, f"the message must be a map with uid, type, content; got {type(msg).__name__}")
    uid = msg.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ProtocolError(BAD_REQUEST, "the message has no string 'uid' to answer to")
    kind, content = msg.get("type"), msg.get("content")
    if not isinstance(kind, str):
        raise ProtocolError(BAD_REQUEST, "the message has no string 'type'", uid)
    if kind not in REQUEST_TYPES:
        raise ProtocolError(BAD_REQUEST, f"unknown request type {kind!r}; expected one of {list(REQUEST_TYPES)}", uid)
    if not isinstance(content, dict):
        raise ProtocolError(BAD_REQUEST, f"'content' must be a map, got {type(content).__name__}", uid)
    sid = content.get("sid")
    if not isinstance(sid, str) or not sid:
        raise ProtocolError(BAD_REQUEST, "content has no string session id 'sid'", uid)
    return Request(uid, kind, content, sid)


def peek_uid(raw: bytes) -> str | None:
    """The `uid` of a MessagePack map without decoding its other values (they are skipped), so
    an oversized request can still be answered to; None when there is none to read."""
    u = msgpack.Unpacker(max_buffer_size=len(raw) + 1, raw=False)
    u.feed(raw)
    try:
        for _ in range(min(u.read_map_header(), 8)):
            key = u.unpack()
            if key == "uid":
                uid = u.unpack()
                return uid if isinstance(uid, str) and 0 < len(uid) <= 200 else None
            u.skip()
    except (ValueError, TypeError, msgpack.exceptions.UnpackException, msgpack.exceptions.OutOfData,
            msgpack.exceptions.StackError):
        return None
    return None


def encode_reply(uid: str | None, code: int, info: str = "", content: dict | None = None) -> bytes:
    reply = {"uid": uid, "response": {"code": int(code), "info": str(info), "content": content or {}}}
    return msgpack.packb(reply, use_bin_type=True)


def decode_reply(raw: bytes) -> dict:
    return msgpack.unpackb(raw, raw=False)


def encode_request(uid: str, kind: str, content: dict) -> bytes:
    return msgpack.packb({"uid": uid, "type": kind, "content": content}, use_bin_type=True)


# --- field checks ---------------------------------------------------------------------------------
def field(content: dict, key: str, types, what: str, uid: str):
    if key not in content:
        raise ProtocolError(BAD_REQUEST, f"missing field {key!r} ({what})", uid)
    v = content[key]
    if not isinstance(v, types) or isinstance(v, bool) and bool not in _as_tuple(types):
        raise ProtocolError(BAD_REQUEST, f"field {key!r} must be {what}, got {v!r}", uid)
    return v


def _as_tuple(t) -> tuple:
    return t if isinstance(t, tuple) else (t,)


def pixel(content: dict, uid: str, height: int, width: int) -> tuple[int, int]:
    """`point` {"row", "col"} as ints inside a height x width image."""
    p = field(content, "point", dict, "a map {row, col}", uid)
    out = []
    for k in ("row", "col"):
        v = p.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v != int(v):
            raise ProtocolError(BAD_REQUEST, f"point.{k} must be an integer pixel index, got {v!r}", uid)
        out.append(int(v))
    row, col = out
    if not (0 <= row < height and 0 <= col < width):
        raise ProtocolError(INVALID, f"pixel (row {row}, col {col}) is outside the {height}x{width} image "
                            f"(rows 0..{height - 1}, cols 0..{width - 1})", uid)
    return row, col


def rotation_require(content: dict, uid: str) -> list:
    """SET_TASK's `rotation`: three entries, each None or the axis name of its position."""
    rot = content.get("rotation", [None, None, None])
    if not isinstance(rot, (list, tuple)) or len(rot) != 3:
        raise ProtocolError(BAD_REQUEST, f"'rotation' must be 3 entries (pitch, yaw, roll), got {rot!r}", uid)
    for axis, v in zip(ROTATION_AXES, rot):
        if v is not None and v != axis:
            raise ProtocolError(BAD_REQUEST, f"'rotation' entry for {axis} must be {axis!r} or null, got {v!r}", uid)
    return list(rot)


def rotation_delta(content: dict, uid: str) -> list:
    """MOVE's optional `rotation_delta`: (pitch, yaw, roll) degrees, null meaning 0."""
    rd = content.get("rotation_delta")
    if rd is None:
        return [0.0, 0.0, 0.0]
    if not isinstance(rd, (list, tuple)) or len(rd) != 3:
        raise ProtocolError(BAD_REQUEST, f"'rotation_delta' must be 3 entries (pitch, yaw, roll), got {rd!r}", uid)
    out = []
    for axis, v in zip(ROTATION_AXES, rd):
        if v is None:
            out.append(0.0)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ProtocolError(BAD_REQUEST, f"rotation_delta {axis} must be a number of degrees or null, got {v!r}", uid)
        if abs(v) > 180.0:
            raise ProtocolError(INVALID, f"rotation_delta {axis} = {v} deg is beyond +-180", uid)
        out.append(float(v))
    return out


# --- payload encodings (the client's image.py decodes these) --------------------------------------
def encode_png(rgb: np.ndarray) -> bytes:
    buf = io.BytesIO()
    # stored, not deflated: the PNG is re-decoded at once on loopback, where 900 KiB (beside the
    # 1.2 MB of float32 depth) cost less than deflating, 72-91 -> 43-49 ms per 640x480 view at load 20
    Image.fromarray(np.ascontiguousarray(rgb[..., :3], np.uint8)).save(buf, format="PNG", compress_level=0)
    return buf.getvalue()


def encode_f32(a: np.ndarray) -> bytes:
    """Row-major little-endian float32, as the client's decode_mat_f32 reads it."""
    return np.ascontiguousarray(a, dtype="<f4").tobytes()


def decode_f32(data: bytes, rows: int, cols: int) -> np.ndarray:
    return np.frombuffer(data, dtype="<f4").reshape(rows, cols)


def decode_png(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
