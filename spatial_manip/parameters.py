"""Every node's ROS parameters, declared once: name, default (its type), allowed range or choices,
a description, and whether it may change while the node runs. The nodes declare them from here
(spatial_manip.nodes.parameters: descriptors, read-only flags, on-set validation) and the
parameter reference can be generated from it: `python -m spatial_manip.parameters` prints it
as Markdown. Plain data: no ROS import.

A parameter that is not `runtime` is read once at start-up and is read-only afterwards; a
`runtime` one takes effect at the node's next use of it (the next goal, request or frame)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

INF = math.inf
SIM_STOW_Q = [0.0, 0.5, 1.0, -3.0, 0.0, 0.0]   # spatial_manip.sim.world.STOW_Q (a test keeps them equal)


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    description: str
    range: tuple[float, float] | None = None     # inclusive bounds of a number (or of each list item)
    choices: tuple[str, ...] = ()                # the values a string may take ("" included only if listed)
    runtime: bool = False                        # may be set while the node runs

    @property
    def type_name(self) -> str:
        d = self.default
        if isinstance(d, bool):
            return "bool"
        if isinstance(d, list):
            return f"{type(d[0]).__name__}[]" if d else "string[]"
        return {int: "int", float: "double", str: "string"}[type(d)]

    def problem(self, value) -> str | None:
        """Why `value` is not allowed (None: it is)."""
        items = value if isinstance(value, (list, tuple)) else [value]
        if self.range is not None:
            lo, hi = self.range
            bad = [v for v in items if isinstance(v, (int, float)) and not isinstance(v, bool)
                   and not (lo <= v <= hi)]
            if bad:
                return f"{bad[0]!r} is outside [{_num(lo)}, {_num(hi)}]"
        if self.choices and value not in self.choices:
            return f"{value!r} is not one of {', '.join(repr(c) for c in self.choices)}"
        return None


def _num(x: float) -> str:
    return "inf" if x == INF else "-inf" if x == -INF else f"{x:g}"


DEFAULT_SEGMENTER = "classical"   # the perception backend the node, the agent and the CLIs default to
POSITIVE = (1e-9, INF)
NON_NEGATIVE = (0.0, INF)

# the camera pose from TF (spatial_manip.nodes.camera_tf), for every node that reads the extrinsics
CAMERA_TF = (
    Param("tf_base_frame", "base", "the robot base frame the camera pose is looked up in on /tf and /tf_static"),
    Param("tf_camera_frame", "camera_color_optical_frame", "the colour camera's optical frame (the images' "
          "frame_id); the calibration may end at the camera's mounting frame above it (realsense2_camera "
          "publishes the rest)"),
)

# best effort matches any driver, but a large image lost in one fragment is lost whole: on a
# loaded machine grasp_node heard no depth image for 7 s of the demo (realistic, noise seed 1)
IMAGE_QOS = Param("image_qos", "sensor_data", "image subscriptions' QoS: sensor_data (best effort, matches any "
                  "driver) or reliable", choices=("sensor_data", "reliable"))

# What a camera publisher (camera_node, or sim_node's rendered camera) names its topics and frame:
# realsense2_camera's names, so either feeds the planner.
CAMERA_OUTPUTS = (
    Param("color_topic", "camera/color/image_raw", "colour image topic"),
    Param("color_info_topic", "camera/color/camera_info", "colour intrinsics topic"),
    Param("depth_topic", "camera/aligned_depth_to_color/image_raw", "aligned depth topic"),
    Param("depth_info_topic", "camera/aligned_depth_to_color/camera_info", "aligned depth intrinsics topic"),
    Param("extrinsics_topic", "camera/extrinsics", "base<-camera pose (latched)"),
    Param("color_frame_id", "camera_color_optical_frame", "frame of the images"),
)

NODE_PARAMETERS: dict[str, tuple[Param, ...]] = {
    "planner_node": (
        Param("color_topic", "camera/color/image_raw", "colour image (rgb8), realsense2_camera's name"),
        Param("depth_topic", "camera/aligned_depth_to_color/image_raw", "depth aligned to colour (16UC1 mm)"),
        Param("camera_info_topic", "camera/color/camera_info", "intrinsics of the colour image"),
        Param("extrinsics_topic", "camera/extrinsics", "base<-camera pose (latched PoseStamped); a fallback, "
              "ignored once TF joins tf_base_frame and tf_camera_frame"),
        *CAMERA_TF,
        Param("workspace_topic", "spatial_manip/workspace", "the cell's fixtures, slots and catalogue (JSON scene, latched)"),
        Param("workspace_file", "", "the same as a file, for a real cell (\"\": the topic's)"),
        Param("library_file", "", "the enrolled object library (spatial-manip enroll --library; relative: under "
              "config/): its objects are the workspace's catalogue, whichever way the workspace comes (\"\": the "
              "workspace's own catalogue)"),
        Param("workspace_ack_topic", "spatial_manip/planner/workspace_revision", "the workspace revision in use (latched)"),
        Param("tcp_topic", "tcp_pose_broadcaster/pose", "the arm's TCP pose, as the UR driver publishes it"),
        Param("joint_states_topic", "joint_states", "the arm's joints: its own pixels are left out of each look"),
        Param("segmentation_topic", "sim/segmentation", "simulator segmentation (the ground_truth segmenter only)"),
        IMAGE_QOS,
        Param("observation_timeout_s", 5.0, "how long a goal waits for a synchronized RGB-D pair", POSITIVE, runtime=True),
        Param("observation_retry_s", 5.0, "none came in that time: how much longer a look waits, once, before "
              "NO_OBSERVATION (a loaded cell's camera is slow, not gone; the goal's feedback says so; 0: no "
              "second wait)", (0.0, 120.0), runtime=True),
        Param("max_skew_s", 0.05, "colour/depth stamps further apart are not a pair", NON_NEGATIVE),
        Param("segmenter", DEFAULT_SEGMENTER, "perception backend (\"\": perception.yaml's)"),
        Param("perception_config_file", "", "the segmenters' settings (\"\": config/params/perception.yaml)"),
        Param("planner", "program", "reasoning backend: program | openai | transformers"),
        Param("unnamed_frame", "intrinsic", "left/right of a reference whose front was only assumed, when the "
              "words name no frame", choices=("intrinsic", "viewer", "ask")),
        Param("grasp_service", "spatial_manip/propose_grasps", "grasp_node's ProposeGrasps service"),
        Param("grasp_timeout_s", 30.0, "how long a grasp request may take (a busy 2-core host: 8-16 s)", POSITIVE,
              runtime=True),
        Param("max_grasp_tries", 5, "top-k grasps tried before GRASP_FAILED", (1, 100), runtime=True),
        Param("home_before_perceiving", True, "move the arm out of view before each look", runtime=True),
        Param("carry_out_of_view", True, "holding an object whose grasp is known, carry it home (a body on the "
              "gripper) before a look too, where the arm server finds home a carry pose on the layout (clear of "
              "every keep-out, hiding less than the arm where it is: motion/carry.py)", runtime=True),
        Param("look_max_age_s", 3.0, "a goal reasons at once on the newest look when it is younger than this and "
              "the arm has not moved since; an older look only when a new frame's depth shows the table unchanged, "
              "else it is taken again (0: every goal takes its own)", (0.0, 60.0)),
        Param("look_cpu_share", 0.5, "while no goal runs, the planner looks ahead (after the arm stops or the table "
              "changes) with at most this share of one core (0: no idle looks)", (0.0, 1.0)),
        Param("arm_config_file", "", "arm.yaml for the place-pose IK check (\"\": the default file)"),
        Param("arm_backend", "", "that file's per-backend overrides (sim: the model's TCP)"),
        Param("ur_type", "", "arm model preset of that file (\"\": its arm.model): ur5 | ur5e, the launch's "
              "ur_type as the arm and grasp nodes have it", choices=("", "ur5", "ur5e")),
        Param("arm_action", "spatial_manip/arm_motion", "the ArmMotion action server (arm_node or sim_node)"),
        Param("motion_timeout_s", 60.0, "longest single motion before it is stopped", POSITIVE, runtime=True),
        Param("arm_lost_after_s", 3.0, "no TCP pose for this long during a motion: the arm server is gone",
              POSITIVE, runtime=True),
        Param("default_max_attempts", 3, "attempts (with reflection) for a goal that leaves max_attempts at 0",
              (1, 20), runtime=True),
        Param("verify_tolerance_m", 0.03, "a placed object within this of the expected position succeeds "
              "(ESPIRE: 3 cm)", (0.001, 0.5), runtime=True),
        Param("trace_dir", "traces", "one sub-directory per goal"),
        Param("trace_keep_goals", 200, "the newest goals' traces kept under trace_dir (0: every one)",
              (0, 2**31 - 1), runtime=True),
        Param("trace_keep_mb", 0.0, "and at most this many MB of them (0: no limit)", NON_NEGATIVE, runtime=True),
    ),
    "grasp_node": (
        Param("config_file", "", "grasp.yaml (\"\": config/params/grasp.yaml)"),
        Param("backend", "", "grasp proposer: antipodal | contact_graspnet | anygrasp (\"\": grasp.yaml's)"),
        Param("depth_topic", "camera/aligned_depth_to_color/image_raw", "depth aligned to colour (16UC1 mm)"),
        Param("depth_info_topic", "camera/aligned_depth_to_color/camera_info", "its intrinsics"),
        IMAGE_QOS,
        Param("extrinsics_topic", "camera/extrinsics", "base<-camera pose (latched PoseStamped); a fallback, "
              "ignored once TF joins tf_base_frame and tf_camera_frame"),
        *CAMERA_TF,
        Param("scene_topic", "spatial_manip/scene", "the planner's latest scene (latched)"),
        Param("marker_topic", "spatial_manip/grasp_markers", "MarkerArray of the proposed grasps"),
        Param("service", "spatial_manip/propose_grasps", "the ProposeGrasps service this node serves"),
        Param("max_grasps", 10, "grasps returned at most", (1, 1000)),
        Param("pixel_stride", 2, "depth pixels sampled every this many", (1, 32)),
        Param("max_frame_age_s", 0.0, "refuse older depth (0: any age)", NON_NEGATIVE),
        Param("arm_config_file", "", "arm.yaml: its safety workspace drops grasps outside it, its kinematics "
              "the unreachable ones (\"\": the default file)"),
        Param("arm_backend", "", "that file's per-backend overrides (sim: the model's TCP)"),
        Param("ur_type", "", "arm model preset of that file (\"\": its arm.model): ur5 | ur5e",
              choices=("", "ur5", "ur5e")),
        Param("check_reachability", True, "keep only grasps the arm reaches (IK)"),
        Param("joint_states_topic", "joint_states", "the arm's joints, for the motion check"),
        Param("joint_state_max_age_s", 2.0, "older joints are unknown (the check is skipped)", NON_NEGATIVE, runtime=True),
        Param("motion_marker_topic", "spatial_manip/motion_markers", "collision bodies and the best grasp's path"),
    ),
    "camera_node": (
        Param("source", "live", "live (a RealSense on USB), file (an SDK recording) or none (another driver "
              "publishes the images: only the calibrated pose is published)", choices=("live", "file", "none")),
        Param("serial", "", "device serial (\"\": the first found)"),
        Param("file_path", "", "the recording (.bag, or .db3 from pyrealsense2 >= 2.55) for source file"),
        Param("real_time", True, "file playback at recorded speed (false: every frame, as fast as published)"),
        Param("repeat_playback", False, "loop the recording"),
        Param("depth_width", 640, "depth stream width (px)", (1, 4096)),
        Param("depth_height", 480, "depth stream height (px)", (1, 4096)),
        Param("color_width", 640, "colour stream width (px)", (1, 4096)),
        Param("color_height", 480, "colour stream height (px)", (1, 4096)),
        Param("fps", 30, "stream rate (Hz)", (1, 300)),
        Param("laser_power", -1.0, "L515 laser power in percent (< 0: the device's)", (-1.0, 100.0)),
        Param("receiver_gain", -1.0, "L515 receiver gain, 8..18 (< 0: the device's)", (-1.0, 18.0)),
        Param("confidence_threshold", -1.0, "L515 confidence threshold, 0..3 (< 0: the device's)", (-1.0, 3.0)),
        Param("visual_preset", "", "device preset name or number (\"\": the device's)"),
        Param("temporal_filter", False, "librealsense temporal filter"),
        Param("spatial_filter", False, "librealsense spatial filter"),
        Param("hole_filling_filter", False, "librealsense hole-filling filter"),
        Param("reconnect_initial_s", 0.5, "first back-off after the camera disappears", POSITIVE),
        Param("reconnect_max_s", 8.0, "longest back-off", POSITIVE),
        Param("max_frame_age_s", 0.5, "older frames are counted and not published", POSITIVE, runtime=True),
        Param("calibration_file", "", "hand-eye YAML: publishes the camera pose (relative: under config/)"),
        *CAMERA_OUTPUTS,
        Param("base_frame_id", "base", "frame of the camera pose"),
        Param("reliable", True, "reliable QoS (false: sensor-data, best effort, as realsense2_camera)"),
    ),
    "cell_tf_node": (
        Param("calibration_file", "", "hand-eye YAML (required; relative: under config/)"),
        Param("model", "", "arm model of the published description (\"\": arm.yaml's arm.model)",
              choices=("", "ur5", "ur5e")),
        Param("publish_robot_tf", True, "also publish the robot description and the arm's TF (from joint_states and "
              "its fixed joints); off by itself when a robot_state_publisher already publishes the description"),
        Param("joint_states_topic", "joint_states", "the arm's joints"),
        Param("description_topic", "robot_description", "where the URDF is published (latched)"),
        Param("driver_discovery_s", 3.0, "how long after start to look for a robot_state_publisher (the UR "
              "driver's) already publishing the description before publishing the robot too", (0.1, 120.0)),
        Param("camera_mount_frame", "", "publish the calibration as base -> this frame (realsense2_camera's "
              "camera_link), computed through the camera driver's own static frames down to the calibrated "
              "optical frame, so the optical frame keeps one parent; \"\": base -> the optical frame itself"),
    ),
    "arm_node": (
        Param("config_file", "", "arm.yaml (\"\": config/params/arm.yaml)"),
        Param("arm.backend", "", "ur_rtde (the controller over RTDE) | ur_driver (a running UR ROS 2 driver's "
              "FollowJointTrajectory action; the driver then publishes the arm's joints and TCP pose) | sim | "
              "joint_trajectory (\"\": arm.yaml's)", choices=("", "ur_rtde", "ur_driver", "sim", "joint_trajectory")),
        Param("arm.host", "", "the UR controller's address, for ur_rtde and the gripper socket (\"\": arm.yaml's)"),
        Param("ur_type", "", "arm model preset of arm.yaml (\"\": its arm.model); refused when the controller's "
              "version contradicts it (3.x: CB3 = ur5, 5.x: e-series = ur5e)", choices=("", "ur5", "ur5e")),
        Param("state_rate_hz", 50.0, "/joint_states and TCP pose rate", (0.1, 500.0)),
        Param("frame_id", "base", "frame of the published TCP pose"),
        Param("reconnect_max_delay_s", 0.0, "longest back-off re-connecting the controller (0: arm.yaml's)",
              NON_NEGATIVE),
    ),
    "sim_node": (
        Param("scene_file", "", "a scene JSON (overrides scene_kind)"),
        Param("scene_kind", "tabletop", "generated scene when scene_file is empty: tabletop | shelf"),
        Param("seed", 0, "scene and noise seed", (0, 2**31 - 1)),
        Param("tasks_dir", "", "where relative 'scene' paths of ResetTask task records resolve"),
        Param("width", 640, "rendered image width (px)", (16, 4096)),
        Param("height", 480, "rendered image height (px)", (16, 4096)),
        Param("fovy_deg", 43.3, "vertical field of view (L515 colour at 640x480)", (1.0, 179.0)),
        Param("sensing", "realistic", "how far the simulated cell is from ideal (sim/sensing.py)",
              choices=("ideal", "realistic", "harsh")),
        Param("sensing_off", "", "sensing effects switched off by name, comma-separated"),
        Param("catalogue", "episode", "what the planner is told may be in the scene: library (the enrolled objects, "
              "most absent; what the benchmark uses) | episode (this episode's objects, true sizes: a diagnostic, "
              "and what the ground_truth segmenter needs)", choices=("library", "episode")),
        Param("library_file", "", "the enrolled object library (\"\": config/library/sim_assets.json)"),
        Param("camera_rate_hz", 5.0, "rendered frames per second", (0.1, 60.0)),
        Param("state_rate_hz", 30.0, "/joint_states and TCP pose rate", (0.1, 500.0)),
        Param("arm_config_file", "", "arm.yaml with its arm.sim.overrides (\"\": the default file)"),
        Param("home_q", SIM_STOW_Q, "MOTION_HOME joints (rad): the arm out of the camera's view",
              (-2 * math.pi, 2 * math.pi)),
        *CAMERA_OUTPUTS,
        Param("base_frame_id", "base", "frame of the camera pose and TCP"),
    ),
}


def defaults(node: str) -> dict[str, Any]:
    return {p.name: p.default for p in NODE_PARAMETERS[node]}


def markdown() -> str:
    """The parameter reference, one table per node."""
    out = []
    for node, params in NODE_PARAMETERS.items():
        out += [f"### {node}", "", "| parameter | type | default | allowed | runtime | description |",
                "| --- | --- | --- | --- | --- | --- |"]
        for p in params:
            allowed = (f"[{_num(p.range[0])}, {_num(p.range[1])}]" if p.range else
                       " \\| ".join(c or '""' for c in p.choices))
            out.append(f"| `{p.name}` | {p.type_name} | `{p.default!r}` | {allowed} | "
                       f"{'yes' if p.runtime else 'no (read-only)'} | {p.description} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown())
