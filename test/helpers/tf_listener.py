"""Child process of the TF test: what a tf2 listener and RViz receive. Subscribes to /tf_static
and /robot_description (transient-local, so it gets what was published before it started),
publishes /joint_states until /tf answers, and prints one JSON line with what it got."""
import json
import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]


def as_dict(t):
    return {"parent": t.header.frame_id, "child": t.child_frame_id,
            "xyz": [t.transform.translation.x, t.transform.translation.y, t.transform.translation.z],
            "xyzw": [t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w]}


def main(q: list, timeout_s: float) -> int:
    rclpy.init()
    node = rclpy.create_node("tf_test_listener")
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    got = {"static": None, "description": None, "tf": None}
    node.create_subscription(TFMessage, "/tf_static", lambda m: got.update(static=[as_dict(t) for t in m.transforms]), latched)
    node.create_subscription(String, "/robot_description", lambda m: got.update(description=m.data), latched)
    node.create_subscription(TFMessage, "/tf", lambda m: got.update(tf=[as_dict(t) for t in m.transforms]), 10)
    pub = node.create_publisher(JointState, "/joint_states", 10)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(got.values()):
        js = JointState(name=JOINTS, position=q)
        js.header.stamp = node.get_clock().now().to_msg()
        pub.publish(js)
        rclpy.spin_once(node, timeout_sec=0.1)
    print(json.dumps(got))
    node.destroy_node()
    rclpy.shutdown()
    return 0 if all(got.values()) else 1


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1]), float(sys.argv[2])))
