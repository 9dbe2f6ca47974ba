"""The `openai` planner backend with the real httpx client against a local recorded-reply chat
server: tool calling, error replies for malformed/hallucinated calls, loop and premature-stop
cut-offs, retries, timeouts."""
import base64
import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
from canned_chat_server import CannedChatServer, call, say, slow, status

from spatial_manip.errors import BackendUnavailableError
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.synthetic import look_at
from spatial_manip.observation import RGBDObservation
from spatial_manip.reasoning.examples import held_table_scene, shelf_scene, table_scene
from spatial_manip.reasoning.planner import make_planner

INSTR = "take a book behind the picture frame"
PROGRAM = "pick(unique(filterOri$Behind(filterBook(TABLE), frame, frame)))"


def planner(srv, **agent):
    return make_planner("openai", base_url=srv.url, model="test-vlm", api_key="sk-test", timeout_s=2.0,
                        max_retries=2, backoff_s=0.01, agent={"mode": "tools", **agent})


def good_episode():
    return [call("find_obj", {"description": "picture frame"}), call("find_obj", {"description": "book"}),
            call("relative_object_position", {"object_id": "b_back_up", "reference_id": "frame",
                                              "frame": "reference"}),
            say(f"PROGRAM: {PROGRAM}")]


def small_obs():
    intr = CameraIntrinsics.from_fovy(64, 48, 60.0)
    rgb = np.zeros((48, 64, 3), np.uint8)
    rgb[:, :32] = (200, 30, 30)
    return RGBDObservation(rgb=rgb, depth_m=np.ones((48, 64), np.float32), intrinsics=intr,
                           T_base_cam=look_at([0, 0, 1.3], [0.8, 0, 0.75]))


def test_tool_calling_episode_gives_the_program_backends_targets():
    scene = table_scene()
    expected = make_planner("program").plan(scene, INSTR)
    with CannedChatServer(good_episode()) as srv:
        res = planner(srv).plan(scene, INSTR, observation=small_obs())
    assert res.ok, res.error
    assert res.targets == expected.targets == ["b_back_up"]
    assert res.to_json()["program"] == PROGRAM and res.action == "pick"
    first = srv.requests[0]
    assert first["model"] == "test-vlm" and srv.headers[0]["Authorization"] == "Bearer sk-test"
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"find_obj", "get_object_3d_position", "relative_object_position", "calculate_direction",
            "distance", "run_program"} <= names
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in first["tools"])
    # the observation's RGB went out as a PNG data URL
    parts = first["messages"][1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    assert url.startswith("data:image/png;base64,")
    from PIL import Image

    img = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert img.format == "PNG" and img.size == (64, 48)
    # the model saw real geometry: the relative position came from the geometry core
    rel_reply = json.loads(srv.tool_messages(3)[-1]["content"])
    assert rel_reply["direction"] == "behind" and rel_reply["forward_m"] < 0
    assert [e["event"] for e in res.trace].count("tool_call") == 3


def test_target_list_answer_and_slot_place_pose():
    scene = shelf_scene()
    replies = [call("find_obj", {"description": "slot"}),
               call("get_object_3d_position", {"object_id": "slot_r2c2"}),
               say('TARGETS: ["slot_r2c2"]')]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(scene, "place the book in the middle slot")
    assert res.ok, res.error
    assert res.action == "place" and res.targets == ["slot_r2c2"]
    assert res.place_pose is not None and abs(res.place_pose.position[1]) < 1e-6


def test_metric_placement_numbers_come_from_geometry():
    scene = held_table_scene()
    text = "place the book 10 cm to the right of the jar"
    expected = make_planner("program").plan(scene, text)
    replies = [call("find_obj", {"description": "jar"}), say(f"PROGRAM: {expected.program}")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(scene, text)
    assert res.ok, res.error
    assert res.to_json()["place_pose"] == expected.to_json()["place_pose"]


def test_hallucinated_tool_bad_arguments_and_unknown_object_each_get_an_error_message():
    replies = [call("teleport_book", {"to": "shelf"}),
               call("distance", '{"object_a": "jar", "object_b": '),
               call("get_object_3d_position", {"object_id": "coffee_mug"}),
               *good_episode()]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok and res.targets == ["b_back_up"]
    errs = [json.loads(srv.tool_messages(i)[-1]["content"])["error"] for i in (1, 2, 3)]
    assert "there is no tool 'teleport_book'" in errs[0] and "find_obj" in errs[0]
    assert "must be a JSON object" in errs[1]
    assert "'coffee_mug' is not an object in the scene" in errs[2] and "b_back_up" in errs[2]
    assert [e["ok"] for e in res.trace if e["event"] == "tool_call"][:3] == [False, False, False]


def test_too_many_bad_calls_fail_with_not_understood():
    replies = [call("nope", {}), call("nope2", {}), call("distance", {"object_a": "x", "object_b": "y"}),
               call("distance", "not json")]
    with CannedChatServer(replies) as srv:
        res = planner(srv, max_tool_errors=3).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "4 malformed or hallucinated" in res.error["message"]
    assert len(srv.requests) == 4


def test_action_loop_is_cut_off():
    same = call("find_obj", {"description": "book"})
    with CannedChatServer([same, same, same, same, same]) as srv:
        res = planner(srv, loop_repeats=3).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "action loop" in res.error["message"]
    assert len(srv.requests) == 3               # the third identical call was not executed
    assert "already made this exact call" in srv.tool_messages(2)[-1]["content"]
    assert any(e["event"] == "cutoff" and e["reason"] == "loop" for e in res.trace)


def test_step_budget_ends_the_goal():
    replies = [call("find_obj", {"description": w}) for w in ("a", "b", "c", "d")]
    with CannedChatServer(replies) as srv:
        res = planner(srv, max_turns=3).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "step budget" in res.error["message"]
    assert len(srv.requests) == 3


def test_premature_stop_gets_one_corrective_turn_then_fails():
    replies = [say('TARGETS: ["b_back_up"]'), say('TARGETS: ["b_back_up"]')]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "stopped before gathering" in res.error["message"]
    assert "before gathering any fact" in srv.requests[1]["messages"][-1]["content"]


def test_premature_stop_then_tools_succeeds():
    replies = [say(f"PROGRAM: {PROGRAM}"), *good_episode()]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok and res.targets == ["b_back_up"]


def test_answer_naming_an_unseen_object_is_premature():
    replies = [call("find_obj", {"description": "book"}), say(f"PROGRAM: {PROGRAM}"),
               call("find_obj", {"description": "frame"}), say(f"PROGRAM: {PROGRAM}")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok
    assert "no fact mentions them" in srv.requests[2]["messages"][-1]["content"]


def test_invalid_answer_gets_one_corrective_turn():
    replies = [call("find_obj", {"description": "book"}), call("find_obj", {"description": "frame"}),
               say("It is probably the book at the back."), say(f"```\nPROGRAM: {PROGRAM}\n```")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok and res.targets == ["b_back_up"]
    assert "not accepted" in srv.requests[3]["messages"][-1]["content"]


def test_hallucinated_object_in_the_answer_then_again_fails():
    bad = "PROGRAM: pick(unique(filterOri$Behind(filterBook(TABLE), vase, viewer)))"
    replies = [call("find_obj", {"description": "book"}), say(bad), say(bad)]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "vase" in res.error["message"]


def test_empty_answer_set_is_target_not_found():
    prog = "pick(unique(filterAttr$Height(0.9, filterBook(TABLE))))"
    with CannedChatServer([call("find_obj", {"description": "book"}), say(f"PROGRAM: {prog}")]) as srv:
        res = planner(srv).plan(table_scene(), "take a 90 cm tall book")
    assert res.error["code"] == "TARGET_NOT_FOUND"


def test_server_500_is_retried_then_succeeds():
    replies = [status(500), status(503), *good_episode()]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok and len(srv.requests) == 6


def test_server_500_is_retried_then_fails_cleanly():
    with CannedChatServer([status(500, "boom")] * 5) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.error["code"] == "INTERNAL" and "HTTP 500" in res.error["message"] and "boom" in res.error["message"]
    assert len(srv.requests) == 3                # 1 + max_retries


def test_client_error_is_not_retried():
    with CannedChatServer([status(401, "bad key")]) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.error["code"] == "INTERNAL" and "OPENAI_API_KEY" in res.error["message"]
    assert len(srv.requests) == 1


def test_timeout_fails_with_timeout():
    with CannedChatServer([slow(1.0, say("late"))] * 2) as srv:
        p = make_planner("openai", base_url=srv.url, model="m", timeout_s=0.15, max_retries=1, backoff_s=0.01)
        t0 = time.perf_counter()
        res = p.plan(table_scene(), INSTR)
        elapsed = time.perf_counter() - t0
    assert res.error["code"] == "TIMEOUT" and "2 attempt" in res.error["message"]
    assert elapsed < 0.9


def test_unreachable_server_fails_cleanly():
    p = make_planner("openai", base_url="http://127.0.0.1:9/v1", model="m", max_retries=0, timeout_s=0.5)
    res = p.plan(table_scene(), INSTR)
    assert res.error["code"] == "INTERNAL" and "connection failed" in res.error["message"]


def test_config_from_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://example.invalid:1234/v1/")
    monkeypatch.setenv("SPATIAL_MANIP_VLM_MODEL", "qwen2.5vl:7b")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    p = make_planner("openai")
    assert (p.config.base_url, p.config.model, p.config.api_key) == \
        ("http://example.invalid:1234/v1", "qwen2.5vl:7b", "sk-env")
    monkeypatch.delenv("SPATIAL_MANIP_VLM_MODEL")
    with pytest.raises(BackendUnavailableError, match="SPATIAL_MANIP_VLM_MODEL"):
        make_planner("openai")
    with pytest.raises(ValueError, match="mode"):
        make_planner("openai", model="m", agent={"mode": "guess"})


def test_backend_config_file_parses():
    import yaml

    from spatial_manip.reasoning.openai_backend import OpenAIConfig

    data = yaml.safe_load(open(Path(__file__).parents[2] / "config/params/planner_backends.yaml"))
    cfg = OpenAIConfig(**{**data["planner"]["openai"], "model": "m"})
    assert cfg.agent.mode in ("mssr", "tools") and cfg.timeout_s > 0
    from spatial_manip.reasoning.planner import ProgramPlannerConfig
    assert ProgramPlannerConfig(**data["planner"]["program"]).assume_fronts is True


def test_tiger_geometry_tools_are_offered_with_an_observation():
    from spatial_manip.geometry.synthetic import SynthBox, render

    intr = CameraIntrinsics.from_fovy(160, 120, 60.0)
    box = SynthBox(np.array([0.9, 0.2, 0.83]), np.array([0.1, 0.1, 0.16]), np.eye(3), (40, 40, 200))
    obs = render(intr, look_at([0, 0, 1.3], [0.8, 0, 0.75]), [box], table_z=0.75)
    replies = [call("camera_intrinsics", {}), call("depth_sensor", {"pixel": [80, 60]}),
               call("depth_sensor", {"pixel": [5000, 60]}), *good_episode()]
    with CannedChatServer(replies) as srv:
        res = planner(srv, orientation=False).plan(table_scene(), INSTR, observation=obs)
    assert res.ok, res.error
    names = {t["function"]["name"] for t in srv.requests[0]["tools"]}
    assert {"camera_intrinsics", "depth_sensor", "box_2d_to_box_3d", "point_3d_to_point_2d",
            "code_executor"} <= names
    assert json.loads(srv.tool_messages(1)[-1]["content"])["fx"] == pytest.approx(intr.fx)
    depth = json.loads(srv.tool_messages(2)[-1]["content"])
    assert "error" not in depth
    assert "error" in json.loads(srv.tool_messages(3)[-1]["content"])      # a pixel outside the image
