"""The TIGeR tools over a synthetic observation: JSON in, JSON out, structured errors."""
import json

import numpy as np
import pytest

from spatial_manip.geometry import synthetic as S
from spatial_manip.geometry.calibration import HandEyeCalibration
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.tools import SCHEMAS, TOOLS, ToolContext, call_tool, openai_tools

INTR = CameraIntrinsics.from_fovy(640, 480, 55)


@pytest.fixture(scope="module")
def scene():
    rng = np.random.default_rng(7)
    a = S.random_lying_box(rng, xy_range=((0.45, 0.5), (-0.15, -0.1)))
    b = S.random_lying_box(rng, xy_range=((0.45, 0.5), (0.1, 0.15)))
    obs = S.render(INTR, S.look_at([1.0, 0.0, 0.7], [0.45, 0, 0]), [a, b])
    return obs, [a, b]


def _json_roundtrip(x):
    return json.loads(json.dumps(x, allow_nan=False))


def test_registry_shapes():
    assert set(TOOLS) == {"camera_intrinsics", "camera_extrinsics", "depth_sensor", "object_segmentation",
                          "box_2d_to_box_3d", "point_3d_to_point_2d", "code_executor"}
    for name, (fn, schema) in TOOLS.items():
        assert callable(fn) and schema["name"] == name and schema["parameters"]["type"] == "object"
        json.dumps(schema)
    assert openai_tools(["depth_sensor"])[0]["function"] is SCHEMAS["depth_sensor"]


def test_camera_tools(scene):
    obs, _ = scene
    ctx = ToolContext(obs)
    i = call_tool(ctx, "camera_intrinsics")
    assert (i["width"], i["height"], i["fx"]) == (640, 480, INTR.fx)
    e = call_tool(ctx, "camera_extrinsics", "{}")
    np.testing.assert_allclose(e["T_base_camera"], obs.T_base_cam)
    assert e["frame_id"] == "base"
    cal = HandEyeCalibration.from_dict({"T_tool0_camera": {"matrix": np.eye(4).tolist()}})
    e2 = call_tool(ToolContext(obs, calibration=cal), "camera_extrinsics")
    assert e2["error"]["code"] == "INTERNAL" or "T_base_tool0" in e2["error"]["message"]
    T_bt = np.eye(4)
    T_bt[:3, 3] = [0.1, 0.2, 0.3]
    e3 = call_tool(ToolContext(obs, calibration=cal, T_base_tool0=T_bt), "camera_extrinsics")
    assert e3["position"] == pytest.approx([0.1, 0.2, 0.3]) and "eye_in_hand" in e3["source"]


def test_depth_sensor_pixel_and_box(scene):
    obs, (a, _) = scene
    ctx = ToolContext(obs)
    ys, xs = np.nonzero(obs.segmentation == 0)
    u, v = int(np.median(xs)), int(np.median(ys))
    r = _json_roundtrip(call_tool(ctx, "depth_sensor", {"pixel": [u, v], "window": 3}))
    assert r["valid_count"] == 9 and r["depth_m"] == pytest.approx(float(obs.depth_m[v, u]), abs=0.003)
    # the base point of the top face is at the box's top height
    assert r["point_base"][2] == pytest.approx(a.center[2] + a.size[2] / 2, abs=0.004)
    obs.depth_m[0:10, 0:10] = 0
    hole = call_tool(ctx, "depth_sensor", {"pixel": [4, 4]})
    assert hole["valid_count"] == 0 and hole["depth_m"] is None
    rb = call_tool(ctx, "depth_sensor", {"box": S.box_pixel_bounds(obs, 0, 0)})
    assert rb["valid_count"] > 100 and rb["depth_m"] > 0


def test_segmentation_then_box_chain(scene):
    obs, (a, b) = scene
    ctx = ToolContext(obs)
    for i, truth in enumerate((a, b)):
        seg = call_tool(ctx, "object_segmentation", {"box": S.box_pixel_bounds(obs, i, 10)})
        assert seg["area_px"] > 200
        box = _json_roundtrip(call_tool(ctx, "box_2d_to_box_3d", {"mask_id": seg["mask_id"]}))
        assert np.linalg.norm(np.array(box["center"]) - truth.center) < 0.006
        assert box["quality"] > 0.5 and box["n_points"] > 100 and len(box["corners"]) == 8
    # the same from a plain box and from ESPIRE's normalised [ymin, xmin, ymax, xmax]
    x0, y0, x1, y1 = S.box_pixel_bounds(obs, 0, 6)
    r1 = call_tool(ctx, "box_2d_to_box_3d", {"box": [x0, y0, x1, y1]})
    r2 = call_tool(ctx, "box_2d_to_box_3d", {"box": [y0 / 480 * 1000, x0 / 640 * 1000, y1 / 480 * 1000,
                                                     x1 / 640 * 1000], "box_format": "yxyx_1000"})
    assert np.allclose(r1["center"], r2["center"], atol=0.003)
    assert set(ctx.boxes) == {"box3d_0", "box3d_1", "box3d_2", "box3d_3"}


def test_point_projection_and_visibility(scene):
    obs, (a, b) = scene
    ctx = ToolContext(obs)
    top = a.center + [0, 0, a.size[2] / 2]
    under = a.center - [0, 0, a.size[2] / 4]          # inside the box: hidden by its top
    behind_cam = obs.T_base_cam[:3, 3] - obs.T_base_cam[:3, 2]
    r = _json_roundtrip(call_tool(ctx, "point_3d_to_point_2d", {"points": [top.tolist(), under.tolist(),
                                                                          behind_cam.tolist()]}))
    p_top, p_under, p_behind = r["points"]
    assert p_top["in_image"] and p_top["visible"]
    assert p_under["in_image"] and p_under["occluded"] and not p_under["visible"]
    assert not p_behind["in_image"] and not p_behind["visible"]
    u, v = p_top["pixel"]
    assert obs.segmentation[int(round(v)), int(round(u))] == 0


def test_code_executor_tool(scene):
    ctx = ToolContext(scene[0])
    r = call_tool(ctx, "code_executor", {"code": "result = float(np.hypot(*inputs))", "inputs": [3, 4]})
    assert r["result"] == 5.0
    assert call_tool(ctx, "code_executor", {"code": "import os\nresult = 1"})["error"]["code"] == "REFUSED"


@pytest.mark.parametrize("name, args, code", [
    ("nope", {}, "UNKNOWN_TOOL"),
    ("depth_sensor", "{not json", "INVALID_ARGUMENT"),
    ("depth_sensor", {}, "INVALID_GOAL"),
    ("depth_sensor", {"pixel": [1, 2, 3]}, "INVALID_ARGUMENT"),
    ("depth_sensor", {"pixel": [9999, 2]}, "INVALID_GOAL"),
    ("depth_sensor", {"pixel": [1, 2], "bogus": 1}, "INVALID_ARGUMENT"),
    ("depth_sensor", {"pixel": ["a", 2]}, "INVALID_ARGUMENT"),
    ("box_2d_to_box_3d", {"mask_id": "mask_99"}, "TARGET_NOT_FOUND"),
    ("box_2d_to_box_3d", {"box": [0, 0, 2, 2]}, "TARGET_NOT_FOUND"),
    ("box_2d_to_box_3d", {"box": [5, 5, 5, 5]}, "INVALID_GOAL"),
    ("object_segmentation", {"box": [1, 1, 50, 50], "box_format": "weird"}, "INVALID_ARGUMENT"),
    ("point_3d_to_point_2d", {"points": [[1, 2]]}, "INVALID_ARGUMENT"),
    ("code_executor", {}, "INVALID_ARGUMENT"),
    ("depth_sensor", [1, 2], "INVALID_ARGUMENT"),
])
def test_errors_are_structured(scene, name, args, code):
    r = call_tool(ToolContext(scene[0]), name, args)
    assert set(r) == {"error"} and r["error"]["code"] == code, r
    assert r["error"]["message"]


def test_no_observation_and_direct_calls_never_raise():
    fn, _ = TOOLS["box_2d_to_box_3d"]
    assert fn(ToolContext(None), box=[0, 0, 10, 10])["error"]["code"] == "NO_OBSERVATION"
    assert TOOLS["depth_sensor"][0](ToolContext(None), pixel=[1, 1], box=[1, 2, 3, 4])["error"]["code"] in (
        "NO_OBSERVATION", "INVALID_GOAL")


def test_a_whole_scene_segmenter_plugs_in(scene):
    from types import SimpleNamespace

    from spatial_manip.tools.geometry_tools import prompted
    obs, (a, b) = scene

    class GroundTruth:  # the shape of perception's Segmenter: segment(obs) -> detections with masks
        def segment(self, o, hints=None):
            return [SimpleNamespace(mask=o.segmentation == i, score=1.0) for i in (0, 1)]

    ctx = ToolContext(obs, segmenter=prompted(GroundTruth()))
    seg = call_tool(ctx, "object_segmentation", {"box": S.box_pixel_bounds(obs, 1, 3)})
    assert seg["area_px"] == int((obs.segmentation == 1).sum())
    ys, xs = np.nonzero(obs.segmentation == 0)
    seg0 = call_tool(ctx, "object_segmentation", {"point": [int(xs[0]), int(ys[0])]})
    assert seg0["area_px"] == len(xs)
    assert call_tool(ctx, "object_segmentation", {"point": [0, 0]})["error"]["code"] == "TARGET_NOT_FOUND"
