"""`spatial-manip evaluate` must decide as the live planner did on the same frames.

It did not ("pick the leftmost book": book_2 live, TARGET_NOT_FOUND offline) for two reasons
reproduced here on MuJoCo renders through the real classical segmenter and program planner:
- it planned on the first frame after the goal started, which shows the arm on its way home
  over the books; the live planner waits for a frame after the arm is out of view and reports
  `reasoning` only after perceiving it;
- it perceived without the workspace description (`/spatial_manip/workspace`, which the recorder
  did not record either): no catalogue names, so offline ids never match the recorded ones.
"""
import json

import numpy as np
import pytest
from action_msgs.msg import GoalStatus, GoalStatusArray
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from spatial_manip.bags.evaluate import evaluate_bags
from spatial_manip.bench.evaluate_bags import real_plan_fn
from spatial_manip.bags.io import BagWriter
from spatial_manip.nodes.convert import array_to_image, intrinsics_to_camera_info, pose_stamped, seconds_to_stamp
from spatial_manip.nodes.recorder_node import DEFAULT_TOPICS
from spatial_manip.perception.synthetic import SyntheticObject, default_objects, render_tabletop
from spatial_manip.reasoning.planner import make_planner
from spatial_manip_interfaces.action import ExecuteInstruction

S = 1_000_000_000
ACTION = "/spatial_manip/execute_instruction/_action"
TOPICS = {"/camera/color/image_raw": "sensor_msgs/msg/Image",
          "/camera/aligned_depth_to_color/image_raw": "sensor_msgs/msg/Image",
          "/camera/color/camera_info": "sensor_msgs/msg/CameraInfo",
          "/camera/extrinsics": "geometry_msgs/msg/PoseStamped",
          "/spatial_manip/workspace": "std_msgs/msg/String",
          f"{ACTION}/status": "action_msgs/msg/GoalStatusArray",
          f"{ACTION}/feedback": "spatial_manip_interfaces/action/ExecuteInstruction_FeedbackMessage",
          "/spatial_manip/instruction_log": "std_msgs/msg/String"}
INSTRUCTION = "pick the leftmost book"
GOAL_ID = np.full(16, 7, np.uint8)


@pytest.fixture(scope="module")
def frames():
    clear, truth = render_tabletop(default_objects())
    # the arm on its way home, between the camera and the books
    arm = SyntheticObject("arm", (0.5, 0.75, 0.35), (0.66, 0.0), rgba=(0.6, 0.6, 0.6, 1.0))
    in_view, _ = render_tabletop(default_objects() + [arm])
    return clear, in_view, truth


def write_frame(w, t_s, obs):
    fid, stamp = "camera_color_optical_frame", seconds_to_stamp(100 + t_s)
    depth_mm = np.rint(obs.depth_m * 1000).astype(np.uint16)
    info = intrinsics_to_camera_info(obs.intrinsics, fid, stamp)
    w.write("/camera/color/camera_info", int(t_s * S), serialize_message(info))
    w.write("/camera/color/image_raw", int(t_s * S) + 1, serialize_message(array_to_image(obs.rgb, "rgb8", fid, stamp)))
    w.write("/camera/aligned_depth_to_color/image_raw", int(t_s * S) + 2,
            serialize_message(array_to_image(depth_mm, "16UC1", fid, stamp)))


def feedback(stage):
    fb = ExecuteInstruction.Impl.FeedbackMessage()
    fb.goal_id.uuid = GOAL_ID
    fb.feedback.stage, fb.feedback.attempt = stage, 1
    return serialize_message(fb)


def record_goal(path, clear, in_view, truth, live_targets):
    """What `spatial-manip record` keeps of one live goal (times in seconds of receive time)."""
    with BagWriter(path, "mcap") as w:
        for topic, msgtype in TOPICS.items():
            w.add_topic(topic, msgtype, latched=topic in ("/camera/extrinsics", "/spatial_manip/workspace"))
        extrinsics = pose_stamped(clear.T_base_cam, "base", seconds_to_stamp(1))
        w.write("/camera/extrinsics", 1 * S, serialize_message(extrinsics))
        w.write("/spatial_manip/workspace", 1 * S, serialize_message(String(data=json.dumps(truth.to_dict()))))
        st = GoalStatus(status=GoalStatus.STATUS_EXECUTING)
        st.goal_info.goal_id.uuid = GOAL_ID
        w.write(f"{ACTION}/status", int(9.9 * S), serialize_message(GoalStatusArray(status_list=[st])))
        w.write(f"{ACTION}/feedback", int(9.95 * S), feedback("perceiving"))
        write_frame(w, 10, in_view)     # the arm homing: what the old evaluation planned on
        write_frame(w, 11, in_view)
        write_frame(w, 12, clear)       # the arm out of view: the live planner's frame
        w.write(f"{ACTION}/feedback", int(12.6 * S), feedback("reasoning"))
        write_frame(w, 13, clear)
        w.write("/spatial_manip/instruction_log", 14 * S, serialize_message(String(data=json.dumps({
            "instruction": INSTRUCTION, "task_kind": 1, "success": True, "error_code": "",
            "target_ids": live_targets, "target_pose": [0.0, 0.0, 0.0]}))))


def test_offline_evaluation_matches_the_live_decision(tmp_path, frames):
    clear, in_view, truth = frames
    live = make_planner("program").plan(truth, INSTRUCTION, observation=clear, task_kind="pick")
    assert live.ok and len(live.targets) == 1  # the decision on the true scene
    record_goal(tmp_path / "bag", clear, in_view, truth, live.targets)

    plan = real_plan_fn("classical", "program")
    # the two causes, as they were: the arm frame finds no book, no workspace renames them
    assert plan(in_view, INSTRUCTION, "pick", workspace=truth).error_code == "TARGET_NOT_FOUND"
    assert plan(clear, INSTRUCTION, "pick").targets != live.targets

    rows = evaluate_bags([str(tmp_path / "bag")], plan)
    assert [r.verdict for r in rows] == ["same"], [r.to_dict() for r in rows]
    assert rows[0].offline.targets == live.targets
    assert rows[0].observation_ns == 112 * S  # the frame received last before `reasoning`
    # and deterministic: the same bag, the same answer
    assert [r.offline.targets for r in evaluate_bags([str(tmp_path / "bag")], plan)] == [live.targets]


def test_the_recorder_keeps_the_workspace_the_planner_perceives_with():
    assert "/spatial_manip/workspace" in DEFAULT_TOPICS
