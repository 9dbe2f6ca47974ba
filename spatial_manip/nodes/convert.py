"""Message <-> core conversions shared by every node. Imports ROS message types only."""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Vector3
from sensor_msgs.msg import JointState, PointCloud2, PointField

from spatial_manip.control.kinematics import JOINT_NAMES
from spatial_manip import transforms as tf
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import make_transform
from spatial_manip.scene import Scene


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


# --- images and camera_info (the RealSense driver's encodings) --------------------------------
def image_to_array(msg) -> np.ndarray:
    """sensor_msgs/Image -> numpy: rgb8/bgr8 -> (H, W, 3) uint8 RGB; 16UC1/mono16 -> (H, W)
    uint16; 32FC1 -> (H, W) float32. Raises ValueError on an unknown encoding or a short buffer."""
    dtypes = {"rgb8": (np.uint8, 3), "bgr8": (np.uint8, 3), "16UC1": (np.uint16, 1),
              "mono16": (np.uint16, 1), "32FC1": (np.float32, 1), "mono8": (np.uint8, 1)}
    if msg.encoding not in dtypes:
        raise ValueError(f"unsupported image encoding {msg.encoding!r}; expected one of {sorted(dtypes)}")
    dtype, ch = dtypes[msg.encoding]
    itemsize = np.dtype(dtype).itemsize
    if msg.step < msg.width * ch * itemsize or len(msg.data) < msg.step * msg.height:
        raise ValueError(f"image buffer too short for {msg.width}x{msg.height} {msg.encoding}")
    dt = np.dtype(dtype).newbyteorder(">" if msg.is_bigendian else "<")
    rows = np.frombuffer(bytes(msg.data), dtype=np.uint8).reshape(msg.height, msg.step)
    arr = rows[:, : msg.width * ch * itemsize].copy().view(dt).reshape(msg.height, msg.width, ch)
    arr = arr.astype(dtype, copy=False)
    if msg.encoding == "bgr8":
        arr = arr[..., ::-1]
    return arr[..., 0] if ch == 1 else np.ascontiguousarray(arr)


def array_to_image(arr: np.ndarray, encoding: str, frame_id: str, stamp=None):
    """numpy -> sensor_msgs/Image for rgb8 (H, W, 3 uint8) or 16UC1 (H, W uint16)."""
    from sensor_msgs.msg import Image

    arr = np.ascontiguousarray(arr)
    expected = {"rgb8": (np.uint8, 3), "16UC1": (np.uint16, 2), "32FC1": (np.float32, 2)}
    if encoding not in expected or arr.dtype != expected[encoding][0] or arr.ndim != expected[encoding][1]:
        raise ValueError(f"array {arr.dtype} {arr.shape} does not fit encoding {encoding!r}")
    msg = Image()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.height, msg.width = arr.shape[:2]
    msg.encoding = encoding
    msg.is_bigendian = 0
    msg.step = arr.strides[0]
    msg.data = arr.tobytes()
    return msg


def camera_info_to_intrinsics(msg):
    k = list(msg.k)
    return CameraIntrinsics(int(msg.width), int(msg.height), float(k[0]), float(k[4]), float(k[2]),
                            float(k[5]), msg.distortion_model or "plumb_bob", tuple(float(x) for x in msg.d))


def intrinsics_to_camera_info(intr, frame_id: str, stamp=None):
    from sensor_msgs.msg import CameraInfo

    msg = CameraInfo()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.width, msg.height = intr.width, intr.height
    msg.distortion_model = intr.distortion_model
    msg.d = [float(x) for x in intr.distortion]
    msg.k = [intr.fx, 0.0, intr.cx, 0.0, intr.fy, intr.cy, 0.0, 0.0, 1.0]
    msg.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    msg.p = [intr.fx, 0.0, intr.cx, 0.0, 0.0, intr.fy, intr.cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    return msg


def stamp_to_seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def seconds_to_stamp(t: float):
    from builtin_interfaces.msg import Time

    sec = int(t // 1)
    return Time(sec=sec, nanosec=int(round((t - sec) * 1e9)) % 1_000_000_000)


def scene_to_msg(scene, frame_id: str = "base", stamp=None):
    """core Scene -> spatial_manip_interfaces/Scene: what the grasp node, the arm server and RViz
    read. Carries what a motion plans around too: fixtures' part boxes, a held object's grasp,
    supports, slots and the floor (scene_from_msg reads them back)."""
    from spatial_manip_interfaces.msg import PlacementRegion, Scene as SceneMsg

    msg = SceneMsg()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    for vp, field_name in ((scene.viewer, "viewer"), (scene.robot, "robot")):
        setattr(msg, field_name, pose_msg_from_matrix(make_transform(_look_rotation(vp.forward), vp.position)))
    msg.objects = [_object_to_msg(o) for o in scene.objects]
    for r in scene.regions:
        msg.regions.append(PlacementRegion(
            id=r.id, kind=r.kind, row=int(r.row), col=int(r.col),
            pose=pose_msg_from_matrix(make_transform(r.rotation, r.center)), size=vector3(r.size),
            occupancy=float(r.occupancy)))
    if "ground_z" in scene.extra:
        msg.ground_known, msg.ground_z = True, float(scene.extra["ground_z"])
    return msg


def _object_to_msg(o):
    from spatial_manip_interfaces.msg import Box, DetectedObject

    msg = DetectedObject(
        id=o.id, label=o.label, category=o.category, pose=pose_msg_from_matrix(make_transform(o.rotation, o.center)),
        size=vector3(o.size), score=float(o.extra.get("score", 1.0)), oriented=bool(o.oriented),
        size_class=o.size_class or "", held=bool(o.held), supports=str(o.extra.get("supports") or ""),
        in_region=str(o.extra.get("in_region") or ""))
    msg.parts = [Box(pose=pose_msg_from_matrix(make_transform(p.get("rotation", np.eye(3)), p["center"])),
                     size=vector3(p["size"])) for p in o.extra.get("parts") or []]
    if "T_object_tcp" in o.extra:
        msg.grasp_known, msg.tcp_in_object = True, pose_msg_from_matrix(np.asarray(o.extra["T_object_tcp"], float))
    return msg


def _look_rotation(forward) -> np.ndarray:
    """A rotation whose +x is `forward` and whose +z is as close to world up as possible."""
    f = np.asarray(forward, float) / np.linalg.norm(forward)
    up = np.array([0.0, 0.0, 1.0])
    left = np.cross(up, f)
    if np.linalg.norm(left) < 1e-6:
        left = np.array([0.0, 1.0, 0.0])
    left /= np.linalg.norm(left)
    return np.column_stack([f, left, np.cross(f, left)])


def cloud_to_points(msg: PointCloud2) -> np.ndarray:
    """x, y, z float32 fields of a PointCloud2 -> (N, 3) float64 (NaN rows kept for the core to drop)."""
    fields = {f.name: f for f in msg.fields}
    if not all(k in fields and fields[k].datatype == 7 for k in "xyz"):  # 7 = FLOAT32
        raise ValueError("cloud must have float32 fields x, y, z")
    dt = np.dtype({"names": list("xyz"), "formats": ["<f4"] * 3,
                   "offsets": [fields[k].offset for k in "xyz"], "itemsize": msg.point_step})
    raw = np.frombuffer(bytes(msg.data), dtype=dt, count=msg.width * msg.height)
    return np.stack([raw["x"], raw["y"], raw["z"]], axis=1).astype(np.float64)


def points_to_cloud(points, frame_id: str, stamp=None) -> PointCloud2:
    """(N, 3) points -> an unorganised PointCloud2 of float32 x, y, z (what RViz shows)."""
    pts = np.ascontiguousarray(np.asarray(points, float).reshape(-1, 3), dtype="<f4")
    msg = PointCloud2(height=1, width=len(pts), point_step=12, row_step=12 * len(pts), is_bigendian=False,
                      is_dense=bool(np.all(np.isfinite(pts))), data=pts.tobytes(),
                      fields=[PointField(name=k, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                              for i, k in enumerate("xyz")])
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def scene_from_msg(msg) -> Scene:
    """spatial_manip_interfaces/Scene -> core Scene, checked as a scene file is
    (`Scene.from_dict`: SceneFormatError naming the object; a bad pose is a ValueError)."""
    def viewpoint(pose):
        T = matrix_from_pose_msg(pose)
        return {"position": T[:3, 3], "forward": T[:3, 0]}

    scene = {"viewer": viewpoint(msg.viewer), "robot": viewpoint(msg.robot),
             "objects": [_object_dict(o) for o in msg.objects], "regions": [_region_dict(r) for r in msg.regions]}
    if msg.ground_known:
        scene["ground_z"] = float(msg.ground_z)
    return Scene.from_dict(scene)


def _box_dict(pose, size) -> dict:
    T = matrix_from_pose_msg(pose)
    return {"center": T[:3, 3].tolist(), "size": [size.x, size.y, size.z], "rotation": T[:3, :3].tolist()}


def _object_dict(o) -> dict:
    d = {"id": o.id, "label": o.label, "category": o.category, **_box_dict(o.pose, o.size),
         "oriented": bool(o.oriented), "held": bool(o.held)}
    if o.size_class:
        d["size_class"] = o.size_class
    if o.parts:
        d["parts"] = [_box_dict(p.pose, p.size) for p in o.parts]
    for key in ("supports", "in_region"):
        if getattr(o, key):
            d[key] = getattr(o, key)
    if o.grasp_known:
        d["T_object_tcp"] = matrix_from_pose_msg(o.tcp_in_object).tolist()
    return d


def _region_dict(r) -> dict:
    return {"id": r.id, "kind": r.kind, "row": int(r.row), "col": int(r.col), **_box_dict(r.pose, r.size),
            "occupancy": float(r.occupancy)}


def joints_from_msg(msg: JointState):
    """The six UR joints of a JointState by name (the gripper's and others ignored), or None
    when any is missing."""
    pos = dict(zip(msg.name, msg.position))
    if not all(n in pos for n in JOINT_NAMES):
        return None
    return np.array([pos[n] for n in JOINT_NAMES], float)
