"""The camera pose from TF, for nodes that read the camera's extrinsics (planner_node's ports,
grasp_node). Subscribes /tf and /tf_static into the core's TfTree (spatial_manip.geometry.tf_tree)
and hands `on_pose(T_base_camera)` the pose of the camera frame in the base frame whenever a chain
joins them: the calibration as cell_tf_node publishes it (base -> the camera's mounting frame or
its optical frame), with realsense2_camera's own frames below it. The `extrinsics` topic stays a
fallback: `has_pose` tells the node to ignore it once TF has given a pose.

tf2_msgs is part of every ROS 2 install but not of the PyPI wheels: without it this listener
does nothing (one log line) and the extrinsics topic is the only source.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from spatial_manip.geometry.tf_tree import TfLookupError, TfTree
from spatial_manip.nodes import convert


def transform_to_matrix(t) -> np.ndarray:
    """geometry_msgs/Transform -> 4x4."""
    from geometry_msgs.msg import Point, Pose

    pose = Pose(position=Point(x=t.translation.x, y=t.translation.y, z=t.translation.z), orientation=t.rotation)
    return convert.matrix_from_pose_msg(pose)


class CameraPoseFromTf:
    def __init__(self, node, on_pose: Callable[[np.ndarray], None], *, base_frame: str, camera_frame: str,
                 callback_group=None):
        self.node, self.on_pose = node, on_pose
        self.base_frame, self.camera_frame = base_frame, camera_frame
        self.tree = TfTree()
        self.has_pose = False
        self._last: np.ndarray | None = None
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            node.get_logger().info("tf2_msgs does not import (PyPI wheels): the camera pose comes from the "
                                   "extrinsics topic only")
            return
        static = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(TFMessage, "/tf_static", lambda m: self._on_tf(m, True), static,
                                 callback_group=callback_group)
        node.create_subscription(TFMessage, "/tf", lambda m: self._on_tf(m, False), 100, callback_group=callback_group)

    def _on_tf(self, msg, static: bool) -> None:
        for t in msg.transforms:
            try:
                before = self.tree.set(t.header.frame_id, t.child_frame_id, transform_to_matrix(t.transform), static)
            except ValueError as e:
                self.node.get_logger().warning(f"ignoring a TF transform: {e}")
                continue
            if before is not None:
                self.node.get_logger().warning(
                    f"TF frame {t.child_frame_id} changed parent from {before} to {t.header.frame_id}: two nodes "
                    "publish it (run cell_tf_node with publish_robot_tf:=false where robot_state_publisher runs)")
        try:
            T = self.tree.lookup(self.base_frame, self.camera_frame)
        except TfLookupError:
            return                              # not joined yet: the extrinsics topic still counts
        if self._last is None or not np.allclose(T, self._last, atol=1e-9):
            if not self.has_pose:
                self.node.get_logger().info(f"camera pose from TF: {self.base_frame} <- {self.camera_frame} "
                                            "(the extrinsics topic is ignored from now on)")
            try:
                self.on_pose(T)
            except ValueError as e:             # e.g. a degenerate rotation: keep the topic's pose
                self.node.get_logger().warning(f"ignoring the camera pose from TF: {e}")
                return
            self._last, self.has_pose = T, True
