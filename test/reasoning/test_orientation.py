"""Situated Orientation Grounding: arrows drawn where the calibrated camera sees them, a raised
canonical view, coarse-then-fine choice through a local recorded-reply chat server, and the
resulting front used by the planner's tools."""
import base64
import io
import json
import math

import numpy as np
from canned_chat_server import CannedChatServer, call, say
from PIL import Image

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.synthetic import SynthBox, look_at, render
from spatial_manip.reasoning import orientation as sog
from spatial_manip.reasoning.examples import TABLE_TOP, table_scene
from spatial_manip.reasoning.openai_backend import ChatClient, OpenAIConfig
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.reasoning.program import execute
from spatial_manip.reasoning.vlm_tools import with_front


def observation():
    intr = CameraIntrinsics.from_fovy(160, 120, 60.0)
    T = look_at([0.0, 0.0, 1.3], [0.8, 0.0, TABLE_TOP])
    jar = SynthBox(np.array([0.9, 0.2, TABLE_TOP + 0.08]), np.array([0.1, 0.1, 0.16]), np.eye(3), (40, 40, 200))
    book = SynthBox(np.array([0.7, 0.15, TABLE_TOP + 0.11]), np.array([0.15, 0.03, 0.22]), np.eye(3), (200, 40, 40))
    return render(intr, T, [jar, book], table_z=TABLE_TOP)


def png(url):
    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def test_candidate_arrows_project_where_the_camera_sees_them():
    obs = observation()
    jar = table_scene().get("jar")
    anchor = sog.anchor_point(jar)
    assert math.isclose(anchor[2], TABLE_TOP)
    (o,), _ = sog._project_world(anchor, obs.T_base_cam, obs.intrinsics)
    base = sog._camera_heading_deg(obs.T_base_cam, anchor)
    (away,), _ = sog._project_world(anchor + 0.1 * sog.ground_direction(base), obs.T_base_cam, obs.intrinsics)
    (left,), _ = sog._project_world(anchor + 0.1 * sog.ground_direction(base + 90), obs.T_base_cam, obs.intrinsics)
    assert away[1] < o[1] - 2            # arrow 0 points away from the camera: up in the image
    assert left[0] < o[0] - 2            # +90 deg (counter-clockwise seen from above) is image-left
    drawn = sog.draw_arrows(obs.rgb, obs.T_base_cam, obs.intrinsics, anchor,
                            [sog.ground_direction(base + 45 * k) for k in range(8)], 0.12)
    assert drawn.shape == obs.rgb.shape and (drawn != obs.rgb).any(axis=2).sum() > 100


def test_canonical_view_is_raised_and_aimed_at_the_object():
    obs = observation()
    anchor = sog.anchor_point(table_scene().get("jar"))
    T_virt = sog.canonical_camera(obs.T_base_cam, anchor)
    assert T_virt[2, 3] > obs.T_base_cam[2, 3] + 0.1
    assert math.isclose(np.linalg.norm(T_virt[:3, 3] - anchor), np.linalg.norm(obs.T_base_cam[:3, 3] - anchor),
                        rel_tol=1e-6)
    (c,), inside = sog._project_world(anchor, T_virt, obs.intrinsics)
    assert inside[0] and abs(c[0] - obs.intrinsics.cx) < 1 and abs(c[1] - obs.intrinsics.cy) < 1
    canon = sog.render_canonical(obs, T_virt)
    assert canon.shape == obs.rgb.shape
    assert ((canon == (40, 40, 200)).all(axis=2)).sum() > 20      # the jar seen from above


def test_coarse_then_fine_choice_gives_a_world_vector():
    obs = observation()
    jar = table_scene().get("jar")
    base = sog._camera_heading_deg(obs.T_base_cam, sog.anchor_point(jar))
    with CannedChatServer([say("ARROW: 2"), say("I pick arrow 9"), say("ARROW: 4")]) as srv:
        client = ChatClient(OpenAIConfig(base_url=srv.url, model="m", timeout_s=2.0, max_retries=0))
        front = sog.ground_orientation(client, jar, obs, "the front of the jar")
    want = sog.ground_direction(base + 90.0 + 22.5)
    assert np.allclose(front, want, atol=1e-9) and math.isclose(np.linalg.norm(front), 1.0)
    assert len(srv.requests) == 3                 # coarse, fine, a corrective turn for the out-of-range 9
    for i, n_arrows in ((0, 8), (1, 5)):
        parts = srv.requests[i]["messages"][1]["content"]
        urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        assert len(urls) == 2 and f"Arrows 0..{n_arrows - 1}" in parts[0]["text"]
        situated, canonical = (png(u) for u in urls)
        assert situated.shape == obs.rgb.shape and (situated != obs.rgb).any()
        assert canonical.shape == obs.rgb.shape
    assert "Not accepted" in srv.requests[2]["messages"][-1]["content"]


def test_orientation_tool_gives_the_planner_a_front_for_an_unoriented_object():
    obs = observation()
    scene = table_scene()
    assert not scene.get("jar").oriented
    base = sog._camera_heading_deg(obs.T_base_cam, sog.anchor_point(scene.get("jar")))
    chosen = base + 4 * 45.0                      # coarse arrow 4 (towards the camera), fine arrow 2 (no change)
    front = sog.ground_direction(chosen)
    prog = "pick(unique(filterOri$Front(filterBook(TABLE), jar, jar)))"
    expected = execute(prog, with_front(scene, "jar", front)).targets
    assert expected
    replies = [call("relative_object_position", {"object_id": "b_med_up", "reference_id": "jar", "frame": "reference"}),
               call("situated_orientation_grounding", {"object_id": "jar", "query": "the front of the jar"}),
               say("ARROW: 4"), say("ARROW: 2"),
               call("relative_object_position", {"object_id": "b_med_up", "reference_id": "jar", "frame": "reference"}),
               say(f"PROGRAM: {prog}")]
    with CannedChatServer(replies) as srv:
        p = make_planner("openai", base_url=srv.url, model="m", timeout_s=2.0, agent={"mode": "tools"})
        res = p.plan(scene, "take a book in front of the jar", observation=obs)
    assert res.ok, res.error
    assert res.targets == expected
    first = json.loads(srv.tool_messages(1)[-1]["content"])
    assert "no known front" in first["error"] and "situated_orientation_grounding" in first["error"]
    sog_reply = json.loads(srv.tool_messages(4)[-1]["content"])
    assert np.allclose(sog_reply["front"], front, atol=1e-3)
    after = json.loads(srv.tool_messages(5)[-1]["content"])
    assert after["direction"] == "front"
    ev = next(e for e in res.trace if e["event"] == "orientation")
    assert ev["object_id"] == "jar" and np.allclose(ev["front"], front, atol=1e-3)
    assert sum(e["event"] == "image" for e in res.trace) == 4     # 2 views x (coarse, fine)
