"""`spatial-manip espire-server` in its own process, driven over real ZeroMQ + MessagePack by a
client that follows ESPIRE's documented protocol: a pick and a place episode end to end (with
every reply field ESPIRE's analyze.py reads), every kind of bad request, and a session that keeps
its task when its sockets close mid-task. ESPIRE's own client is not installed here (not on
PyPI), so `EspireProtocolClient` (written from its documented behaviour) stands in for it."""
import json
import subprocess
import sys
import threading
import time
import uuid

import msgpack
import numpy as np
import pytest
from pools import pools_built_once

from spatial_manip.espire import protocol as proto
from spatial_manip.espire.client import EspireProtocolClient, book_pixel_in_box, goal_box_pixel
from spatial_manip.sim import tasks

# MuJoCo worlds, task generation and the feasibility filter: minutes on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

OBS_KEYS = {"rgb", "depth", "intrinsic", "extrinsic"}      # what ESPIRE's client saves as files


@pytest.fixture(scope="module")
def server(tmp_path_factory, free_port):
    root = tmp_path_factory.mktemp("espire")
    with pools_built_once():            # the occluded place's pool is test_episode_rules' too
        paths = [str(tasks.write(root / suite, tasks.generate(suite, 1, SEEDS.get(suite, 0), pool_size=3)))
                 for suite in ("pick", "place", "metric")]
        paths.append(str(tasks.write(root / "occluded", tasks.generate("place", 1, OCCLUDED_SEED, pool_size=3))))
    ports = {"server_port": free_port(), "client_port": free_port()}
    proc = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "espire-server", "--tasks", *paths,
                             "--server-port", str(ports["server_port"]), "--client-port", str(ports["client_port"])],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def drain():          # keep the pipe empty: the server prints a line per request
        for line in proc.stdout:
            lines.append(line)
            if "serving:" in line:
                ready.set()
    threading.Thread(target=drain, daemon=True).start()
    assert ready.wait(300), "".join(lines)      # generation and the feasibility filter first
    yield {"ports": ports, "lines": lines, "proc": proc}
    proc.terminate()
    proc.wait(timeout=20)
    out = "".join(lines)
    assert "environment update (observation render or MOVE)" in out, out[-2000:]


def _client(server, **kw) -> EspireProtocolClient:
    return EspireProtocolClient(timeout_s=30, **server["ports"], **kw)


# seed 0's pick book lies beside the robot's base, where the motion planner finds no arm
# configuration that approaches it without the arm hitting itself (the generator's reachability
# test is IK only); seed 4's is an ordinary pick. Place seed 4 asks one slot ("right above the
# geosphere sculpture"), where this test's click sees into the marked area.
SEEDS = {"pick": 4, "place": 4}
# Place seed 0 ("a slot in the upper part of the shelf": rows 1-2 of four full-width rows, the
# marked area in the middle of row 2) since the generator's draw changed (71af7a5): the arm
# carrying the book stands in front of the marked area and fills most of its drawn box, so this
# test's box-centre click lands on the arm (the wrist view's on the book it holds). The server
# released the book there, 0.8 m in front of the shelf; it fell to the floor, 1.13 m from the
# goal, and the later trials reported 0.0 (the new click's distance, not the book's).
OCCLUDED_SEED = 0


def _task(c, suite: str) -> dict:
    return next(t for t in c.call("GET_TASK_LIST")["tasks"] if t["suite"] == suite)


def _loggable(d: dict) -> dict:
    """ESPIRE's client logs every reply with json.dumps after dropping the binary fields."""
    out = {k: (_loggable(v) if isinstance(v, dict) else v) for k, v in d.items() if k not in OBS_KEYS}
    return json.loads(json.dumps(out))


def _check_observation(obs: dict) -> np.ndarray:
    h, w = obs["shape"]["row"], obs["shape"]["col"]
    rgb = proto.decode_png(obs["rgb"])
    assert rgb.shape == (h, w, 3)
    depth = np.frombuffer(obs["depth"], np.float32).reshape(h, w)
    assert np.isfinite(depth).all() and (depth > 0).mean() > 0.5
    K = np.frombuffer(obs["intrinsic"], np.float32).reshape(3, 3)
    assert K[2, 2] == 1 and 0 < K[0, 2] < w and 0 < K[1, 2] < h
    T = np.frombuffer(obs["extrinsic"], np.float32).reshape(4, 4)
    assert np.allclose(T[3], [0, 0, 0, 1]) and np.allclose(T[:3, :3].T @ T[:3, :3], np.eye(3), atol=1e-4)
    assert isinstance(obs["bbox_color"], str) and obs["bbox_color"]
    _loggable(obs)
    return rgb


def _depth(obs: dict) -> np.ndarray:
    return proto.decode_f32(obs["depth"], obs["shape"]["row"], obs["shape"]["col"])


def _goal_pixel(plain: dict, plain_rgb: np.ndarray, high_rgb: np.ndarray, place: bool):
    """Where a driver that knows the goal clicks: a shelf slot where the camera sees into it, a
    book on the book itself (the server grasps only at a point on it; the box's centre can fall on
    its support)."""
    if place:
        return goal_box_pixel(plain_rgb, high_rgb, _depth(plain))
    camera = (proto.decode_f32(plain["intrinsic"], 3, 3), proto.decode_f32(plain["extrinsic"], 4, 4))
    return book_pixel_in_box(plain_rgb, high_rgb, _depth(plain), camera)


def _play(c: EspireProtocolClient, task: dict) -> dict:
    """ESPIRE's driver flow (localize on the plain view, move on highlighted views, end), with
    pixels read off the goal box; returns what analyze.py extracts from the replies."""
    st = c.call("SET_TASK", task_id=task["id"], rotation=[None, None, None])
    env = st["start_state"]["env_state"]
    got = {"set_task": {k: env[k] for k in ("robot_js", "wrapped_robot_ee_pos", "wrapped_robot_ee_ori", "world_info")}}
    plain = c.observe("world", False)
    high = c.observe("world", True)
    place = task["family_key"].startswith("place:")      # a shelf slot: click where the camera sees in
    px = _goal_pixel(plain, _check_observation(plain), _check_observation(high), place)
    assert px is not None, "no goal box drawn on the highlighted view"
    loc = c.call("LOCALIZE", reference_uid=plain["uid"], point={"row": px[0], "col": px[1]})
    got["localize"] = {"success": loc["goal_met"],
                       "distance": loc["post_state"]["localization"]["details"]["click_distance_px"]}
    if not loc["goal_met"]:
        c.call("SKIP_LOCALIZATION", goal=None)
    got["move"] = []
    for trial in range(3):
        view = "ego" if trial else "world"      # ESPIRE re-plans from the wrist view after a miss
        plain = c.observe(view, False)
        px = _goal_pixel(plain, proto.decode_png(plain["rgb"]), proto.decode_png(c.observe(view, True)["rgb"]), place)
        if px is None:
            break
        mv = c.point("MOVE", *px)          # on the highlighted view, the last one observed
        ex, env = mv["post_state"]["execution"]["details"], mv["post_state"]["env_state"]
        got["move"].append({"success": mv["goal_met"], "status": mv["status"], "distance": ex["distance"],
                            "wrapped_robot_ee_pos": ex["wrapped_robot_ee_pos"], "wrapped_robot_ee_ori": ex["wrapped_robot_ee_ori"],
                            "robot_js": env["robot_js"], "world_info": env["world_info"],
                            "message": ex["message"]})
        _loggable(mv)
        if mv["goal_met"]:
            break
    c.observe("world", True)
    end = c.call("END_TASK")
    got["end_task"] = end["post_state"]
    c.observe("world", True)        # ESPIRE's finalize_task observes once more after END_TASK
    return got


def _assert_analyze_fields(got: dict) -> None:
    s = got["set_task"]
    assert len(s["robot_js"]) == 7 and len(s["wrapped_robot_ee_pos"]) == 3 and len(s["wrapped_robot_ee_ori"]) == 4
    assert isinstance(s["world_info"], dict)
    assert isinstance(got["localize"]["success"], bool)
    assert got["localize"]["distance"] is None or got["localize"]["distance"] >= 0
    for m in got["move"]:
        assert isinstance(m["success"], bool) and m["status"] in ("success", "refocus")
        assert isinstance(m["distance"], float) and m["distance"] >= 0
        assert len(m["wrapped_robot_ee_pos"]) == 3 and np.isclose(np.linalg.norm(m["wrapped_robot_ee_ori"]), 1, atol=1e-3)
    assert isinstance(got["end_task"]["execution"]["finish_goal"], bool)


@pytest.mark.parametrize("suite", ["pick", "place", "metric"])     # metric: "10 cm right of the jar", on the table
def test_an_episode_runs_end_to_end_with_every_field_analyze_reads(server, suite):
    with _client(server) as c:
        got = _play(c, _task(c, suite))
    _assert_analyze_fields(got)
    assert got["localize"]["success"], got["localize"]
    assert got["move"][-1]["success"] and got["move"][-1]["distance"] < 0.02, [(m["message"], m["status"], m["distance"]) for m in got["move"]]
    assert got["end_task"]["execution"]["finish_goal"], got["end_task"]["execution"]
    assert server["proc"].poll() is None


def test_a_click_on_the_arm_inside_the_drawn_box_is_refused_and_the_book_stays_held(server):
    """Place seed 0 (OCCLUDED_SEED): every trial's click shows the robot or the book it holds, which
    ESPIRE counts as "another object", not the target area: nothing is set down, each reply's
    distance is the held book's (the same every trial), and the episode ends not met."""
    with _client(server) as c:
        task = next(t for t in c.call("GET_TASK_LIST")["tasks"] if t["id"].startswith(f"place-{OCCLUDED_SEED}-"))
        got = _play(c, task)
    _assert_analyze_fields(got)
    moves = got["move"]
    assert moves, got
    for m in moves:
        assert not m["success"] and m["status"] == "refocus" and "nothing was set down" in m["message"], m["message"]
        assert m["world_info"]["gripper_holds_object"], m
    dist = [m["distance"] for m in moves]
    assert min(dist) > 0.05 and max(dist) - min(dist) < 0.005, dist
    assert not got["end_task"]["execution"]["finish_goal"]


def _raw(c: EspireProtocolClient, raw: bytes, uid: str | None) -> dict:
    c.send_raw(raw)
    return c.receive(uid)


def test_bad_requests_get_a_code_and_a_reason_and_the_server_keeps_serving(server):
    with _client(server) as c:
        c.call("GET_TASK_LIST")          # a message without a session is answered at once: listen first
        r = _raw(c, b"\xc1garbage", None)
        assert r["code"] == 400 and "MessagePack" in r["info"]
        r = _raw(c, msgpack.packb({"type": "END_TASK"}), None)
        assert r["code"] == 400 and "uid" in r["info"]
        uid = str(uuid.uuid4())
        r = _raw(c, proto.encode_request(uid, "RESET", {"sid": c.sid}), uid)
        assert r["code"] == 400 and "unknown request type 'RESET'" in r["info"]
        uid = str(uuid.uuid4())
        r = _raw(c, proto.encode_request(uid, "END_TASK", {}), uid)
        assert r["code"] == 400 and "sid" in r["info"]
        r = c.request("GET_OBSERVATION", view="world", highlight_goal=False)
        assert r["code"] == 409 and "SET_TASK" in r["info"]
        r = c.request("SET_TASK", task_id="no-such-task", rotation=[None, None, None])
        assert r["code"] == 404 and "no-such-task" in r["info"]
        r = c.request("SET_TASK", task_id=_task(c, "pick")["id"], rotation=["roll", None, None])
        assert r["code"] == 400 and "pitch" in r["info"]
        c.call("SET_TASK", task_id=_task(c, "pick")["id"], rotation=[None, None, None])
        assert c.request("GET_OBSERVATION", view="top", highlight_goal=False)["code"] == 400
        assert c.request("GET_OBSERVATION", view="world", highlight_goal="yes")["code"] == 400
        obs = c.observe("world", False)
        r = c.request("LOCALIZE", reference_uid=obs["uid"], point={"row": 10_000, "col": 5})
        assert r["code"] == 422 and "outside" in r["info"]
        r = c.request("LOCALIZE", reference_uid="never-sent", point={"row": 1, "col": 1})
        assert r["code"] == 404
        r = c.request("MOVE", reference_uid=obs["uid"], point={"row": 1, "col": 1}, rotation_delta=[0, "x", 0])
        assert r["code"] == 400 and "rotation_delta" in r["info"]
        c.call("MOVE", reference_uid=obs["uid"], point={"row": 0, "col": 0})    # the sky: refocus, no motion
        r = c.request("MOVE", reference_uid=obs["uid"], point={"row": 1, "col": 1})
        assert r["code"] == 409 and "stale" in r["info"]
        first = c.call("END_TASK")
        assert c.call("END_TASK") == first      # ESPIRE's client sends two when it skips moving
        assert c.request("MOVE", reference_uid=obs["uid"], point={"row": 1, "col": 1})["code"] == 409
        assert len(c.call("GET_TASK_LIST")["tasks"]) == 4
    assert server["proc"].poll() is None


def test_a_session_keeps_its_task_when_its_sockets_close_until_it_ends_it(server):
    a = _client(server)
    task = _task(a, "pick")
    a.call("SET_TASK", task_id=task["id"], rotation=[None, None, None])
    sid = a.sid
    with _client(server) as b:
        r = b.request("SET_TASK", task_id=task["id"], rotation=[None, None, None])
        assert r["code"] == 503 and "one session at a time" in r["info"]
        a.close()                    # mid-task: its subscription drops, the session stays
        time.sleep(0.5)
        assert b.request("SET_TASK", task_id=task["id"], rotation=[None, None, None])["code"] == 503
        with _client(server, sid=sid) as a_again:      # the same session, new sockets
            assert a_again.call("END_TASK")["post_state"]["execution"]["finish_goal"] is False
        assert b.request("SET_TASK", task_id=task["id"], rotation=[None, None, None])["code"] == 200
        b.call("END_TASK")
