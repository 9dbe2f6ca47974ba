"""vlm_coords: each model family's box and point convention -> pixels of the original image,
Qwen2.5-VL's resize rule against hand-worked sizes, the errors, and the backends reading a canned
model reply (through their own parsing) into the pixel box the geometry receives."""
import json
import math

import numpy as np
import pytest

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.synthetic import look_at
from spatial_manip.observation import RGBDObservation
from spatial_manip.reasoning.examples import table_scene
from spatial_manip.reasoning.mssr_loop import AgentConfig, plan_with_model
from spatial_manip.reasoning.openai_backend import OpenAIPlanner
from spatial_manip.reasoning.transformers_backend import TransformersConfig, coords_of_checkpoint, parse_hermes
from spatial_manip.reasoning.vlm_coords import (CONVENTIONS, CoordAdapter, CoordinateError, CoordSettings,
                                                qwen25_resize)
from spatial_manip.reasoning.vlm_tools import ToolSet
from spatial_manip.tools import TOOLS

# (width, height) -> a known pixel box and point, and how each convention writes them (hand-worked)
PX_BOX = {(1280, 720): [128, 72, 640, 576], (640, 480): [64, 48, 320, 384]}
PX_POINT = {(1280, 720): [640, 90], (640, 480): [320, 60]}
MODEL_BOX = {
    "pixel": {(1280, 720): [128, 72, 640, 576], (640, 480): [64, 48, 320, 384]},
    "qwen3-vl": {(1280, 720): [100, 100, 500, 800], (640, 480): [100, 100, 500, 800]},
    "gemini": {(1280, 720): [100, 100, 800, 500], (640, 480): [100, 100, 800, 500]},
    "molmo": {(1280, 720): [10, 10, 50, 80], (640, 480): [10, 10, 50, 80]},
    # model frames 1288x728 and 644x476 (qwen25_resize below): x * 1288/1280, y * 728/720, ...
    "qwen2.5-vl": {(1280, 720): [128.8, 72.8, 644, 582.4], (640, 480): [64.4, 47.6, 322, 380.8]},
}
MODEL_POINT = {
    "pixel": {(1280, 720): [640, 90], (640, 480): [320, 60]},
    "qwen3-vl": {(1280, 720): [500, 125], (640, 480): [500, 125]},
    "gemini": {(1280, 720): [125, 500], (640, 480): [125, 500]},
    "molmo": {(1280, 720): [50, 12.5], (640, 480): [50, 12.5]},
    "qwen2.5-vl": {(1280, 720): [644, 91], (640, 480): [322, 59.5]},
}
SIZES = [(1280, 720), (640, 480)]


@pytest.mark.parametrize("conv", CONVENTIONS)
@pytest.mark.parametrize("size", SIZES)
def test_each_convention_reads_and_writes_a_known_box_and_point(conv, size):
    a = CoordAdapter(conv, *size)
    assert a.box(MODEL_BOX[conv][size]) == pytest.approx(PX_BOX[size])
    assert a.point(MODEL_POINT[conv][size]) == pytest.approx(PX_POINT[size])
    # and back: what a tool result tells the model is in the model's own convention
    assert a.to_model_box(PX_BOX[size]) == pytest.approx(MODEL_BOX[conv][size])
    assert a.to_model_point(PX_POINT[size]) == pytest.approx(MODEL_POINT[conv][size])


def test_gemini_is_y_first_for_boxes_and_points():
    a = CoordAdapter("gemini", 1280, 720)
    # [ymin, xmin, ymax, xmax]: a wide box at the top-right
    assert a.box([0, 500, 250, 1000]) == pytest.approx([640, 0, 1280, 180])
    assert a.point([0, 1000]) == pytest.approx([1279, 0])        # [y, x]; the far edge is the last pixel
    # the same numbers read x first (qwen3-vl) are a different, tall box
    assert CoordAdapter("qwen3-vl", 1280, 720).box([0, 500, 250, 1000]) == pytest.approx([0, 360, 320, 720])


@pytest.mark.parametrize("h, w, expected", [
    (720, 1280, (728, 1288)),      # 25.7 -> 26 * 28, 45.7 -> 46 * 28
    (480, 640, (476, 644)),        # 17.1 -> 17 * 28, 22.9 -> 23 * 28
    (576, 1024, (588, 1036)),      # the 1280x720 image sent at image_max_side_px 1024
    (252, 448, (252, 448)),        # already multiples of 28
    (70, 70, (56, 56)),            # 2.5 rounds to even (2): 56 * 56 = 3136, exactly min_pixels
    (10, 20, (56, 84)),            # below min_pixels: beta = sqrt(3136 / 200); ceil(1.41) = 2, ceil(2.83) = 3
])
def test_qwen25_resize_matches_hand_worked_sizes(h, w, expected):
    assert qwen25_resize(h, w) == expected


def test_qwen25_resize_above_max_pixels_floors_both_sides():
    # 4000x3000 at max 1280*28*28: beta = sqrt(12e6 / 1003520) = 3.458; 3000/beta = 867.5 -> 30 * 28,
    # 4000/beta = 1156.7 -> 41 * 28
    assert math.isclose(math.sqrt(12e6 / 1003520), 3.458, abs_tol=1e-3)
    assert qwen25_resize(3000, 4000, max_pixels=1280 * 28 * 28) == (840, 1148)
    with pytest.raises(ValueError, match="aspect"):
        qwen25_resize(1, 300)


def test_qwen25_coordinates_are_in_the_resized_image_that_was_sent():
    # 1280x720 sent at 1024x576 -> the model sees 1036x588
    a = CoordSettings("qwen2.5-vl").adapter((720, 1280, 3), max_side_px=1024)
    assert a.scale == (1036.0, 588.0)
    assert a.box([103.6, 58.8, 518, 470.4]) == pytest.approx(PX_BOX[(1280, 720)])
    assert "1036x588" in a.describe_box()


@pytest.mark.parametrize("conv, raw, match", [
    ("qwen3-vl", [100, 100, 500], "4 numbers"),
    ("qwen3-vl", [100, 100, 500, 800, 9], "4 numbers"),
    ("qwen3-vl", "100 100 500 800", "4 numbers"),
    ("qwen3-vl", None, "4 numbers"),
    ("qwen3-vl", [100, float("nan"), 500, 800], "NaN"),
    ("gemini", [100, 100, float("inf"), 500], "NaN or infinity"),
    ("qwen3-vl", [100, 100, 1200, 800], "outside qwen3-vl's range 0-1000"),
    ("molmo", [10, 10, 50, 101.5], "outside molmo's range 0-100"),
    ("qwen2.5-vl", [0, 0, 1400, 700], "outside qwen2.5-vl's range 0-1288"),
    ("pixel", [-30, 0, 100, 100], "outside"),
    ("qwen3-vl", [500, 100, 100, 800], "inverted or empty"),
    ("gemini", [800, 100, 100, 500], "inverted or empty"),        # ymax < ymin
    ("qwen3-vl", [100, 100, 100, 800], "inverted or empty"),      # zero width
])
def test_bad_boxes_raise_a_coordinate_error(conv, raw, match):
    with pytest.raises(CoordinateError, match=match) as e:
        CoordAdapter(conv, 1280, 720).box(raw)
    assert e.value.code.value == "INVALID_GOAL"


@pytest.mark.parametrize("raw, match", [([1, 2, 3], "2 numbers"), ([float("nan"), 1], "NaN"),
                                        ([500, -40], "outside")])
def test_bad_points_raise_a_coordinate_error(raw, match):
    with pytest.raises(CoordinateError, match=match):
        CoordAdapter("qwen3-vl", 1280, 720).point(raw)


def test_only_a_rounding_overshoot_is_clamped():
    a = CoordAdapter("qwen3-vl", 1280, 720)
    assert a.box([-5, 0, 1005, 1000]) == [0.0, 0.0, 1280.0, 720.0]     # within 1% of the range
    with pytest.raises(CoordinateError):
        a.box([-15, 0, 1000, 1000])                                     # past it: an error, not a clamp


def test_a_config_with_an_unknown_convention_fails_when_the_planner_is_built(tmp_path):
    with pytest.raises(ValueError, match="coords must be one of"):
        OpenAIPlanner(model="m", coords="yolo")
    with pytest.raises(ValueError, match="min/max pixels"):
        CoordSettings("qwen2.5-vl", min_pixels=10, max_pixels=5)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llava"}))
    with pytest.raises(ValueError, match="set coords"):
        TransformersConfig(model_path=str(tmp_path))
    assert TransformersConfig(model_path=str(tmp_path), coords="molmo").coord_settings.convention == "molmo"
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3_vl"}))
    assert coords_of_checkpoint(str(tmp_path)) == "qwen3-vl"


# --- where model output enters the geometry ---------------------------------------------------------

def obs_1280x720():
    return RGBDObservation(rgb=np.zeros((720, 1280, 3), np.uint8), depth_m=np.ones((720, 1280), np.float32),
                           intrinsics=CameraIntrinsics.from_fovy(1280, 720, 60.0),
                           T_base_cam=look_at([0, 0, 1.3], [0.8, 0, 0.75]))


@pytest.fixture
def geometry_spy(monkeypatch):
    """box_2d_to_box_3d replaced by a recorder of the arguments the geometry receives."""
    seen = []
    _, schema = TOOLS["box_2d_to_box_3d"]

    def spy(ctx, **kw):
        seen.append(kw)
        return {"box_id": "box3d_0"}
    monkeypatch.setitem(TOOLS, "box_2d_to_box_3d", (spy, schema))
    return seen


INSTR = "take a book behind the picture frame"
PROGRAM = "pick(unique(filterOri$Behind(filterBook(TABLE), frame, frame)))"
AGENT = {"mode": "tools", "orientation": False, "max_tool_errors": 0}
# what each family writes for PX_BOX[(1280, 720)] in each backend's sent image
# (openai sends at most 1024 px: Qwen2.5-VL sees 1036x588; transformers 448 px: 448x252)
OPENAI_BOX = {**{c: MODEL_BOX[c][(1280, 720)] for c in CONVENTIONS}, "qwen2.5-vl": [103.6, 58.8, 518, 470.4]}
LOCAL_BOX = {**{c: MODEL_BOX[c][(1280, 720)] for c in CONVENTIONS}, "qwen2.5-vl": [44.8, 25.2, 224, 201.6]}


def openai_reply(name, args) -> dict:
    """A chat.completions response body as a server sends it."""
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}


@pytest.mark.parametrize("conv", CONVENTIONS)
def test_openai_backend_reads_a_reply_box_in_its_configured_convention(conv, geometry_spy):
    planner = OpenAIPlanner(model="m", coords=conv, agent=AGENT)
    replies = iter([openai_reply("box_2d_to_box_3d", {"box": OPENAI_BOX[conv]}),
                    openai_reply("find_obj", {"description": "picture frame"}),   # the answer's id, looked up
                    {"choices": [{"message": {"role": "assistant", "content": f"PROGRAM: {PROGRAM}"}}]}])
    planner.client._post = lambda body: next(replies)     # the reply, parsed by the client's own code
    try:
        res = planner.plan(table_scene(), INSTR, observation=obs_1280x720())
    finally:
        planner.close()
    assert res.ok, res.error
    assert geometry_spy[0]["box"] == pytest.approx(PX_BOX[(1280, 720)], abs=1e-6)
    assert geometry_spy[0]["box_format"] == "xyxy_px"


class CannedLocalModel:
    """The transformers backend's chat model, minus the weights: generated text through parse_hermes."""

    def __init__(self, texts):
        self.texts = iter(texts)

    def complete(self, messages, tools=None):
        return parse_hermes(next(self.texts))


@pytest.mark.parametrize("conv", CONVENTIONS)
def test_transformers_backend_reads_a_generated_box_in_its_configured_convention(conv, geometry_spy, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2_5_vl"}))
    cfg = TransformersConfig(model_path=str(tmp_path), coords=conv, agent=AGENT)
    text = f'<tool_call>\n{{"name": "box_2d_to_box_3d", "arguments": {{"box": {LOCAL_BOX[conv]}}}}}\n</tool_call>'
    look_up = '<tool_call>{"name": "find_obj", "arguments": {"description": "picture frame"}}</tool_call>'
    model = CannedLocalModel([text, look_up, f"PROGRAM: {PROGRAM}"])
    # as TransformersPlanner.plan calls it
    res = plan_with_model(model, table_scene(), INSTR, cfg.agent, observation=obs_1280x720(),
                          image_max_side_px=cfg.image_max_side_px, coords=cfg.coord_settings)
    assert res.ok, res.error
    assert geometry_spy[0]["box"] == pytest.approx(PX_BOX[(1280, 720)], abs=1e-6)


def test_a_box_the_model_cannot_mean_becomes_a_clear_refusal(geometry_spy):
    model = CannedLocalModel(['<tool_call>{"name": "box_2d_to_box_3d", "arguments": {"box": [800, 100, 100, 500]}}'
                              '</tool_call>'])
    res = plan_with_model(model, table_scene(), INSTR, AgentConfig(**AGENT), observation=obs_1280x720(),
                          coords=CoordSettings("gemini"))
    assert not res.ok and geometry_spy == []                       # nothing reached the geometry
    assert res.error["code"] == "NOT_UNDERSTOOD"
    assert "inverted or empty" in res.error["message"] and "gemini" in res.error["message"]


def test_the_model_is_told_its_convention_and_tool_results_come_back_in_it():
    obs = obs_1280x720()
    tools = ToolSet(table_scene(), observation=obs, coords=CoordSettings("gemini").adapter(obs.rgb.shape))
    params = tools.tools["depth_sensor"].parameters["properties"]
    assert "box_format" not in params and "[ymin, xmin, ymax, xmax]" in params["box"]["description"]
    out = tools.call("depth_sensor", {"box": [100, 100, 800, 500]})
    assert out.ok, out.error
    assert out.result["window"] == pytest.approx([100, 100, 800, 500])    # pixels [128, 72, 640, 576], in gemini
    assert not tools.call("depth_sensor", {"box": [0, 0, 100, 100], "box_format": "yxyx_1000"}).ok


def test_the_shipped_backend_config_names_valid_conventions():
    import yaml
    from pathlib import Path

    data = yaml.safe_load(open(Path(__file__).parents[2] / "config/params/planner_backends.yaml"))["planner"]
    openai = data["openai"]
    settings = CoordSettings(openai["coords"], openai["coords_min_pixels"], openai["coords_max_pixels"])
    assert settings.convention == "qwen2.5-vl" and settings.max_pixels == 16384 * 28 * 28
    assert data["transformers"]["coords"] is None          # read from the checkpoint's model_type
