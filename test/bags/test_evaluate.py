"""Offline evaluation from a recorded bag: goal discovery, observation choice, comparison."""
import json

import numpy as np
import pytest
from action_msgs.msg import GoalStatus, GoalStatusArray
from geometry_msgs.msg import PoseStamped
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from spatial_manip.bags.evaluate import BagIndex, OfflinePlan, evaluate_bags, format_table
from spatial_manip.bags.io import BagReader, BagTopicError, BagWriter
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.nodes.convert import array_to_image, intrinsics_to_camera_info, seconds_to_stamp

S = 1_000_000_000
TOPICS = {"/camera/color/image_raw": "sensor_msgs/msg/Image",
          "/camera/aligned_depth_to_color/image_raw": "sensor_msgs/msg/Image",
          "/camera/color/camera_info": "sensor_msgs/msg/CameraInfo",
          "/camera/extrinsics": "geometry_msgs/msg/PoseStamped",
          "/spatial_manip/execute_instruction/_action/status": "action_msgs/msg/GoalStatusArray",
          "/spatial_manip/instruction_log": "std_msgs/msg/String"}


def status(goal_byte, code, t):
    st = GoalStatus(status=code)
    st.goal_info.goal_id.uuid = np.full(16, goal_byte, np.uint8)
    st.goal_info.stamp = seconds_to_stamp(t)
    return GoalStatusArray(status_list=[st])


def make_bag(path):
    intr = CameraIntrinsics(32, 24, 30.0, 30.0, 15.5, 11.5)
    fid = "camera_color_optical_frame"
    with BagWriter(path, "sqlite3") as w:
        for t, ty in TOPICS.items():
            w.add_topic(t, ty, latched=t == "/camera/extrinsics")
        extr = PoseStamped()
        extr.pose.position.x, extr.pose.orientation.w = 0.5, 1.0
        w.write("/camera/extrinsics", 1 * S, serialize_message(extr))
        for i in range(10):   # frame i at 10 + i seconds; pixel value = i
            t = 10 + i
            st = seconds_to_stamp(100 + i)
            w.write("/camera/color/camera_info", t * S, serialize_message(intrinsics_to_camera_info(intr, fid, st)))
            w.write("/camera/color/image_raw", t * S + 1, serialize_message(
                array_to_image(np.full((24, 32, 3), i, np.uint8), "rgb8", fid, st)))
            w.write("/camera/aligned_depth_to_color/image_raw", t * S + 2, serialize_message(
                array_to_image(np.full((24, 32), 1000 + i, np.uint16), "16UC1", fid, st)))
        status_topic = "/spatial_manip/execute_instruction/_action/status"
        log = "/spatial_manip/instruction_log"
        w.write(status_topic, int(12.5 * S), serialize_message(status(1, GoalStatus.STATUS_EXECUTING, 12.5)))
        w.write(log, int(14.5 * S), serialize_message(String(data=json.dumps({
            "instruction": "pick the red box", "task_kind": 1, "success": True, "error_code": "",
            "target_ids": ["box_red"], "target_pose": [0.5, -0.15, 0.06]}))))
        w.write(status_topic, int(14.6 * S), serialize_message(status(1, GoalStatus.STATUS_SUCCEEDED, 12.5)))
        w.write(status_topic, int(16.2 * S), serialize_message(status(2, GoalStatus.STATUS_EXECUTING, 16.2)))
        w.write(log, int(18.5 * S), serialize_message(String(data=json.dumps({
            "instruction": "pick the blue box", "task_kind": 0, "success": False, "error_code": "GRASP_FAILED",
            "target_ids": ["box_blue"], "target_pose": [0.74, 0.0, 0.03]}))))


def test_goals_observations_and_comparison(tmp_path):
    make_bag(tmp_path / "b")
    seen = []

    def plan_fn(obs, instruction, kind):
        seen.append((int(obs.rgb[0, 0, 0]), float(obs.depth_m[0, 0]), obs.T_base_cam[0, 3], instruction, kind))
        if "red" in instruction:
            return OfflinePlan(True, ["box_red"], [0.5, -0.15, 0.07])
        return OfflinePlan(True, ["box_green"], [0.6, 0.1, 0.05])
    rows = evaluate_bags([str(tmp_path / "b")], plan_fn)
    # the first pair received after each goal started (13 s -> frame 3, 17 s -> frame 7)
    assert seen == [(3, pytest.approx(1.003), 0.5, "pick the red box", "pick"),
                    (7, pytest.approx(1.007), 0.5, "pick the blue box", "auto")]
    assert rows[0].verdict == "same" and rows[0].pose_error_m == pytest.approx(0.01)
    assert rows[1].verdict == "DIFFERENT" and not rows[1].targets_match
    assert rows[1].outcome_match  # a grasp failure happened after planning had succeeded
    table = format_table(rows)
    assert "1/2 instructions planned the same" in table and "box_green" in table
    json.dumps([r.to_dict() for r in rows])


def test_bag_without_instruction_log_is_refused(tmp_path):
    with BagWriter(tmp_path / "b", "mcap") as w:
        w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    with BagReader(tmp_path / "b") as r:
        with pytest.raises(BagTopicError, match="no topic /spatial_manip/instruction_log"):
            BagIndex(r)
