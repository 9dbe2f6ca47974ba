"""Message <-> core conversions shared by every node. Imports ROS message types only."""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Vector3

from spatial_manip.geometry import transforms as tf


def pose_msg_from_matrix(T: np.ndarray) -> Pose:
    p, q = tf.matrix_to_pose(T)
    return Pose(position=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                orientation=Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3])))


def matrix_from_pose_msg(pose: Pose) -> np.ndarray:
    p, o = pose.position, pose.orientation
    q = np.array([o.x, o.y, o.z, o.w], float)
    if not np.all(np.isfinite(q)) or np.linalg.norm(q) < 1e-9:
        raise ValueError(f"pose orientation must be a non-zero finite quaternion, got {q.tolist()}")
    return tf.pose_to_matrix([p.x, p.y, p.z], q / np.linalg.norm(q))


def pose_stamped(T: np.ndarray, frame_id: str, stamp=None) -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.pose = pose_msg_from_matrix(T)
    return msg


def vector3(v) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))
