"""The ESPIRE wire format without a server: envelope checks, field checks, payload encodings
decoded the way ESPIRE's client (image.py) decodes them."""
import io

import msgpack
import numpy as np
import pytest
from PIL import Image

from spatial_manip.espire import protocol as proto


def _pack(obj) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def _err(raw: bytes) -> proto.ProtocolError:
    with pytest.raises(proto.ProtocolError) as e:
        proto.decode_request(raw)
    return e.value


def test_a_client_request_decodes_with_its_session_id():
    raw = _pack({"uid": "u1", "type": "SET_TASK", "content": {"task_id": "t", "rotation": [None, None, None], "sid": "s1"}})
    req = proto.decode_request(raw)
    assert (req.uid, req.type, req.sid) == ("u1", "SET_TASK", "s1")
    assert req.content["task_id"] == "t"


@pytest.mark.parametrize("raw, code, uid, words", [
    (b"\xc1not msgpack", proto.BAD_REQUEST, None, "not a MessagePack"),
    (_pack([1, 2, 3]), proto.BAD_REQUEST, None, "must be a map"),
    (_pack({"type": "END_TASK", "content": {"sid": "s"}}), proto.BAD_REQUEST, None, "uid"),
    (_pack({"uid": "u", "type": "RESET", "content": {"sid": "s"}}), proto.BAD_REQUEST, "u", "unknown request type 'RESET'"),
    (_pack({"uid": "u", "type": "END_TASK", "content": [1]}), proto.BAD_REQUEST, "u", "'content' must be a map"),
    (_pack({"uid": "u", "type": "END_TASK", "content": {}}), proto.BAD_REQUEST, "u", "sid"),
    (b"\x00" * (proto.MAX_MESSAGE_BYTES + 1), proto.TOO_LARGE, None, "too large"),
    (_pack({"uid": "big", "type": "MOVE", "content": {"pad": "x" * proto.MAX_MESSAGE_BYTES, "sid": "s"}}),
     proto.TOO_LARGE, "big", "the limit is"),
])
def test_malformed_envelopes_get_a_code_and_say_why(raw, code, uid, words):
    e = _err(raw)
    assert e.code == code and e.uid == uid
    assert words in e.info


def test_pixels_must_be_integers_inside_the_image():
    assert proto.pixel({"point": {"row": 479, "col": 0}}, "u", 480, 640) == (479, 0)
    assert proto.pixel({"point": {"row": 3.0, "col": 4}}, "u", 480, 640) == (3, 4)
    with pytest.raises(proto.ProtocolError) as e:
        proto.pixel({"point": {"row": 480, "col": 10}}, "u", 480, 640)
    assert e.value.code == proto.INVALID and "outside the 480x640 image" in e.value.info
    for bad in ({"row": True, "col": 1}, {"row": 1.5, "col": 1}, {"row": "1", "col": 1}, {"col": 1}):
        with pytest.raises(proto.ProtocolError) as e:
            proto.pixel({"point": bad}, "u", 480, 640)
        assert e.value.code == proto.BAD_REQUEST
    with pytest.raises(proto.ProtocolError, match="missing field 'point'"):
        proto.pixel({}, "u", 480, 640)


def test_rotation_fields_follow_the_pitch_yaw_roll_positions():
    assert proto.rotation_require({"rotation": ["pitch", None, "roll"]}, "u") == ["pitch", None, "roll"]
    assert proto.rotation_delta({"rotation_delta": [5.0, None, -3]}, "u") == [5.0, 0.0, -3.0]
    assert proto.rotation_delta({}, "u") == [0.0, 0.0, 0.0]
    with pytest.raises(proto.ProtocolError, match="must be 'yaw' or null"):
        proto.rotation_require({"rotation": [None, "roll", None]}, "u")
    with pytest.raises(proto.ProtocolError, match="3 entries"):
        proto.rotation_delta({"rotation_delta": [1.0, 2.0]}, "u")
    with pytest.raises(proto.ProtocolError) as e:
        proto.rotation_delta({"rotation_delta": [0, 270, 0]}, "u")
    assert e.value.code == proto.INVALID


def test_payloads_decode_as_espires_image_module_reads_them():
    rgb = np.random.default_rng(0).integers(0, 255, (6, 8, 3), dtype=np.uint8)
    depth = np.linspace(0.3, 2.0, 48, dtype=np.float32).reshape(6, 8)
    K = np.array([[605.0, 0, 320], [0, 605, 240], [0, 0, 1]])
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(proto.encode_png(rgb)))), rgb)   # lossless PNG
    # decode_mat_f32: np.frombuffer(data, float32).reshape(row, col)
    assert np.array_equal(np.frombuffer(proto.encode_f32(depth), np.float32).reshape(6, 8), depth)
    assert np.allclose(np.frombuffer(proto.encode_f32(K), np.float32).reshape(3, 3), K)


def test_a_reply_carries_the_request_uid_and_a_response_map():
    reply = msgpack.unpackb(proto.encode_reply("u9", proto.CONFLICT, "no task"), raw=False)
    assert reply == {"uid": "u9", "response": {"code": 409, "info": "no task", "content": {}}}
