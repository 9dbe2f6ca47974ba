"""sim_node as a real process: camera topics like realsense2_camera, joint states, reset and
check services, and one ArmMotion goal, over real DDS."""
import json
import subprocess
import sys
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image, JointState  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from spatial_manip.sim import layouts as L  # noqa: E402
from spatial_manip_interfaces.action import ArmMotion  # noqa: E402
from spatial_manip_interfaces.srv import CheckSuccess, ResetTask  # noqa: E402
from node_process import start_sim_node  # noqa: E402


def _spin_until(node, pred, timeout_s):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not pred():
        rclpy.spin_once(node, timeout_sec=0.05)
    return pred()


def _call(node, client, req, timeout_s=60):
    fut = client.call_async(req)
    _spin_until(node, fut.done, timeout_s)
    assert fut.done(), "service call timed out"
    return fut.result()


@pytest.mark.ros
@pytest.mark.slow
def test_sim_node_across_processes(tmp_path):
    log = open(tmp_path / "sim_node.log", "w")    # a file, not a pipe nobody reads that could fill and block the node
    proc = start_sim_node("width:=320", "height:=240", "camera_rate_hz:=4.0", "seed:=1", log=log)
    rclpy.init()
    node = rclpy.create_node("sim_node_test")
    got: dict = {}
    try:
        for topic, typ in [("/camera/color/image_raw", Image), ("/camera/aligned_depth_to_color/image_raw", Image),
                           ("/camera/color/camera_info", CameraInfo), ("/joint_states", JointState),
                           ("/tcp_pose_broadcaster/pose", PoseStamped)]:
            node.create_subscription(typ, topic, lambda m, t=topic: got.__setitem__(t, m), 5)
        node.create_subscription(PoseStamped, "/camera/extrinsics", lambda m: got.__setitem__("ext", m),
                                 QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        markers: list = []
        node.create_subscription(MarkerArray, "/spatial_manip/arm_motion_markers", markers.append,
                                 QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        assert _spin_until(node, lambda: len(got) == 6, 60), f"topics seen: {sorted(got)}"
        rgb, depth = got["/camera/color/image_raw"], got["/camera/aligned_depth_to_color/image_raw"]
        assert (rgb.encoding, rgb.width, rgb.height) == ("rgb8", 320, 240)
        assert depth.encoding == "16UC1" and depth.header.frame_id == "camera_color_optical_frame"
        d = np.frombuffer(bytes(depth.data), np.uint16).reshape(240, 320)
        assert 300 < np.median(d[d > 0]) < 5000                      # millimetres
        info = got["/camera/color/camera_info"]
        assert info.k[0] > 0 and abs(info.k[2] - 159.5) < 1e-6 and info.width == 320
        assert got["ext"].header.frame_id == "base"
        js = got["/joint_states"]
        assert list(js.name[:6]) == ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
                                     "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]

        reset = node.create_client(ResetTask, "/sim/reset_task")
        check = node.create_client(CheckSuccess, "/sim/check_success")
        assert reset.wait_for_service(timeout_sec=30) and check.wait_for_service(timeout_sec=30)
        r = _call(node, check, CheckSuccess.Request())
        assert not r.success and r.failure_category == "no_task"
        scene = L.sample_tabletop(np.random.default_rng(0), n_books=1, poses=("flat",), size_classes=("large",))
        task = {"id": "t1", "check": [{"type": "held", "ids": ["book_1"], "lift_m": 0.03}]}
        r = _call(node, reset, ResetTask.Request(task_json=json.dumps(task), scene_json=json.dumps(scene.to_dict()), seed=0))
        assert r.success and r.task_id == "t1", r.message
        bad = _call(node, reset, ResetTask.Request(task_json="", scene_json="{", seed=0))
        assert not bad.success and "JSON" in bad.message or "Expecting" in bad.message

        # pick the flat book by its overhang through the ArmMotion action
        r2 = _call(node, reset, ResetTask.Request(task_json=json.dumps(task), scene_json=json.dumps(scene.to_dict()), seed=0))
        assert r2.success
        b = scene.get("book_1")
        R, Lb = b.rotation, b.size[2]
        z_app, y_cl = -R[:, 2], R[:, 1]
        Rt = np.column_stack([np.cross(y_cl, z_app), y_cl, z_app])
        from spatial_manip.transforms import make_transform
        from spatial_manip.nodes.convert import pose_stamped
        goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_PICK, gripper_width=float(b.size[1] + 0.03),
                              target=pose_stamped(make_transform(Rt, b.center + R[:, 2] * (Lb / 2 - 0.025)), "base"))
        ac = ActionClient(node, ArmMotion, "/spatial_manip/arm_motion")
        assert ac.wait_for_server(timeout_sec=30)
        for bad_lift in (float("nan"), -0.1, 0.8):        # refused before the arm moves, as the real arm does
            bad = ArmMotion.Goal(motion=goal.motion, gripper_width=goal.gripper_width, target=goal.target,
                                 lift_height=bad_lift)
            bf = ac.send_goal_async(bad)
            _spin_until(node, bf.done, 30)
            brf = bf.result().get_result_async()
            _spin_until(node, brf.done, 30)
            refused = brf.result().result
            assert not refused.success and refused.error_code == "INVALID_GOAL", refused.message
            assert "approach/lift distances" in refused.message and not refused.object_held
        phases = []
        gf = ac.send_goal_async(goal, feedback_callback=lambda f: phases.append(f.feedback.phase))
        _spin_until(node, gf.done, 30)
        rf = gf.result().get_result_async()
        _spin_until(node, rf.done, 120)
        result = rf.result().result
        assert result.success and result.object_held, (result.message, phases)
        # the fingers open during the transit to the pre-grasp, awaited after it (c5372d9)
        assert [p for p in dict.fromkeys(phases)][:4] == ["pre_grasp", "open", "approach", "close"]
        # the TCP's planned way: from where the arm was, through the grasp, up to the lift
        way = np.array([[p.x, p.y, p.z] for p in result.tcp_path])
        target = goal.target.pose.position
        assert len(way) > 3 and np.allclose(way[-2], [target.x, target.y, target.z], atol=1e-6)
        assert way[-1][2] > way[-2][2]
        assert _spin_until(node, lambda: bool(markers), 30)       # and for RViz: the same way as a line strip
        strips = [m for m in markers[-1].markers if m.ns == "arm_motion/path"]
        assert len(strips) == 1 and len(strips[0].points) == len(way)
        r = _call(node, check, CheckSuccess.Request())
        assert r.success, r.message
        state = json.loads(r.final_state_json)
        assert state["objects"]
        # the contact monitor heard every phase of the pick; touching the target book is intended
        contacts = state["contacts"]
        assert set(phases) <= set(contacts["by_phase"]) and all(n >= 0 for n in contacts["by_phase"].values())
        assert not [e for e in contacts["events"] if "book_1" in e["bodies"]], contacts["events"]
    finally:
        node.destroy_node()
        rclpy.shutdown()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_a_malformed_home_pose_is_refused_at_start_naming_the_parameter():
    """sim_node exits at start-up, before the arm could be sent anywhere, and says what home_q needs."""
    proc = subprocess.run([sys.executable, "-m", "spatial_manip.nodes.sim_node", "--ros-args",
                           "-p", "home_q:=[0.0, 1.0]", "-p", "width:=160", "-p", "height:=120"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "home_q must be 6 finite joint angles" in proc.stdout + proc.stderr


def test_intended_contacts_are_the_tasks_targets_and_supports_and_survive_a_malformed_task():
    from spatial_manip.nodes.sim_node import _intended_contacts
    scene = L.sample_tabletop(np.random.default_rng(0), n_books=1, poses=("flat",), size_classes=("large",))
    task = {"answer": ["book_1"], "check": [{"type": "held", "ids": ["book_1"]}]}
    from spatial_manip.motion.world import support_ids
    assert _intended_contacts(task, scene) == set(support_ids(scene, "book_1")) and len(support_ids(scene, "book_1")) > 1
    for bad in (None, [], {"answer": "book_1"}, {"check": [1, None, {"ids": [3]}, {"ids": 5}]}, {"check": 5},
                {"held": 7}, {"answer": 5}):
        assert "book_1" not in _intended_contacts(bad, scene)


def _nested_scene_json(levels: int = 100_000) -> str:
    return '{"objects": ' + "[" * levels + "]" * levels + "}"      # 200 KB


@pytest.mark.ros
@pytest.mark.slow
def test_malformed_resets_are_answered_and_the_node_keeps_serving():
    """Issue 35: three malformed ResetTask requests killed sim_node and the graph with it."""
    proc = start_sim_node("width:=160", "height:=120", "camera_rate_hz:=2.0")
    rclpy.init()
    node = rclpy.create_node("sim_node_malformed_test")
    try:
        reset = node.create_client(ResetTask, "/sim/reset_task")
        check = node.create_client(CheckSuccess, "/sim/check_success")
        assert reset.wait_for_service(timeout_sec=90) and check.wait_for_service(timeout_sec=30)
        scene = json.dumps(L.sample_tabletop(np.random.default_rng(0), n_books=1, poses=("flat",),
                                             size_classes=("large",)).to_dict())
        for task_json, scene_json, expected in [
                ('"x"', scene, "must be a JSON object"),
                (json.dumps({"id": "t", "answer": 5, "check": []}), scene, "field 'answer' must be list"),
                ("", _nested_scene_json(), "nested too deeply"),
                (json.dumps({"id": "t", "check": []}), "[1, 2]", "a scene must be a JSON object")]:
            r = _call(node, reset, ResetTask.Request(task_json=task_json, scene_json=scene_json, seed=0))
            assert not r.success and expected in r.message, (task_json[:40], r.message)
        # a task whose check list is malformed is accepted, and its check answers bad_task
        bad_check = {"id": "t2", "check": [{"type": "held", "ids": 5}]}
        r = _call(node, reset, ResetTask.Request(task_json=json.dumps(bad_check), scene_json=scene, seed=0))
        assert r.success and r.task_id == "t2", r.message
        c = _call(node, check, CheckSuccess.Request())
        assert not c.success and c.failure_category == "bad_task", c.message
        assert proc.poll() is None, "sim_node died"
    finally:
        node.destroy_node()
        rclpy.shutdown()
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out = ""
    assert "Traceback" not in out, out[-3000:]


def test_parameters_the_node_cannot_run_with_are_refused_by_name():
    from spatial_manip.errors import ConfigError
    from spatial_manip.nodes.sim_node import PARAMS, _check_parameters

    _check_parameters(dict(PARAMS))
    for name, value in [("camera_rate_hz", 0.0), ("camera_rate_hz", -5.0), ("camera_rate_hz", 1e9),
                        ("width", -640), ("height", 0), ("fovy_deg", 500.0), ("seed", -1), ("state_rate_hz", 0.0),
                        ("home_q", [0.0, 1.0])]:
        with pytest.raises(ConfigError, match=f"parameter {name}"):
            _check_parameters(dict(PARAMS, **{name: value}))


def test_a_task_record_of_the_wrong_shape_is_refused_by_field():
    from spatial_manip.nodes.sim_node import _parse_task
    from spatial_manip.scene import SceneFormatError

    assert _parse_task("") is None and _parse_task('{"id": 3, "answer": ["b"]}')["id"] == 3
    for text, words in [('"x"', "must be a JSON object .*, got str"), ("[1]", "got list"),
                        ('{"answer": 5}', "field 'answer' must be list"), ('{"scene": 7}', "field 'scene'"),
                        ('{"check": {}}', "field 'check'"), ("{", "not valid JSON"),
                        ("[" * 100_000 + "]" * 100_000, "nested too deeply")]:
        with pytest.raises(SceneFormatError, match=words):
            _parse_task(text)
