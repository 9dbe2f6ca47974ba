"""What the motion planner saw and chose, for RViz / Foxglove: a `visualization_msgs/MarkerArray`
with one box per collision body, the depth cloud's occupied voxels, and the planned TCP path.

`world_boxes` is plain numpy (the trace page can draw the same bodies); `motion_markers` imports
the ROS message types on call, so the motion package stays importable without ROS.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

MAX_VOXELS = 20000          # a cube list beyond this slows RViz more than it informs
BODY_RGBA = (0.9, 0.5, 0.1, 0.35)
CLOUD_RGBA = (0.5, 0.5, 0.9, 0.5)
PATH_RGBA = (0.1, 0.9, 0.2, 1.0)


def world_boxes(world) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, 4x4 pose in base, full size) of every box obstacle of a CollisionWorld."""
    out = []
    for o in world.obstacles:
        half = getattr(o.geometry, "halfSide", None)
        if half is not None:
            out.append((o.name, np.asarray(o.pose, float), 2.0 * np.asarray(half, float)))
    return out


def world_voxels(world) -> tuple[np.ndarray, float]:
    """Centres (n, 3) of the occupied voxels of the world's cloud octree(s), and their size."""
    centres, size = [], 0.0
    for o in world.obstacles:
        if hasattr(o.geometry, "toBoxes"):
            boxes = np.array([list(b) for b in o.geometry.toBoxes()], float).reshape(-1, 6)
            if len(boxes):
                centres.append(boxes[:, :3] @ o.pose[:3, :3].T + o.pose[:3, 3])
                size = float(boxes[0, 3])
    return (np.vstack(centres) if centres else np.empty((0, 3))), size


def motion_markers(world, tcp_path=None, header=None, ns: str = "motion"):
    """MarkerArray: DELETEALL, a CUBE per box body (ns "<ns>/bodies", its name in `text`), a
    CUBE_LIST of cloud voxels ("<ns>/cloud") and a LINE_STRIP of the TCP path ("<ns>/path")."""
    from visualization_msgs.msg import Marker, MarkerArray

    arr = MarkerArray(markers=[Marker(action=Marker.DELETEALL)])
    if header is not None:
        arr.markers[0].header = header
    for i, (name, T, size) in enumerate(world_boxes(world) if world is not None else []):
        m = _marker(Marker.CUBE, f"{ns}/bodies", i, header, BODY_RGBA)
        m.pose = _pose(T)
        m.scale.x, m.scale.y, m.scale.z = (float(v) for v in size)
        m.text = name
        arr.markers.append(m)
    centres, voxel = world_voxels(world) if world is not None else (np.empty((0, 3)), 0.0)
    if len(centres):
        m = _marker(Marker.CUBE_LIST, f"{ns}/cloud", 0, header, CLOUD_RGBA)
        m.scale.x = m.scale.y = m.scale.z = voxel
        m.points = _points(centres[:MAX_VOXELS])
        arr.markers.append(m)
    if tcp_path is not None and len(tcp_path) >= 2:
        m = _marker(Marker.LINE_STRIP, f"{ns}/path", 0, header, PATH_RGBA)
        m.scale.x = 0.005                           # line width (m)
        m.points = _points(np.asarray(tcp_path, float).reshape(-1, 3))
        arr.markers.append(m)
    return arr


def _marker(kind: int, ns: str, i: int, header, rgba):
    from visualization_msgs.msg import Marker

    m = Marker(ns=ns, id=i, type=kind, action=Marker.ADD)
    if header is not None:
        m.header = header
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b, m.color.a = (float(c) for c in rgba)
    return m


def _pose(T: np.ndarray):
    from geometry_msgs.msg import Pose
    x, y, z, w = Rotation.from_matrix(T[:3, :3]).as_quat()
    p = Pose()
    p.position.x, p.position.y, p.position.z = (float(v) for v in T[:3, 3])
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = float(x), float(y), float(z), float(w)
    return p


def _points(xyz: np.ndarray) -> list:
    from geometry_msgs.msg import Point

    return [Point(x=float(a), y=float(b), z=float(c)) for a, b, c in xyz]
