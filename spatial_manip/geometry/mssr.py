"""MSSR's numeric modules (seeds/004 B.3 and B.5), on the project's frames.

- Cardinal calibration: from "A is north of B" (or any of the 8 compass words) and the two
  positions, a ground-plane frame with north, east, south and west; then compass labels for
  other pairs of objects. West = ground normal x north (MSSR B.3), so with z up and north = +y,
  east is +x, as relations.frame_axes("absolute").
- Relative camera movement between two camera poses, in the first camera's view: forward,
  right, up (metres) and rotate_right, rotate_up, roll_right (degrees).
- Relative object position from a camera: forward, right, up (metres) in its optical frame.

Camera poses are `T_base_cam` (the optical frame's pose in `base`, x right, y down, z forward),
the project's convention. MSSR's extrinsics E map world to camera: pass `inv(E)` (or use
`world_to_camera=True`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.geometry.transforms import invert

UP = np.array([0.0, 0.0, 1.0])
COMPASS = {"north": 0.0, "northeast": 45.0, "east": 90.0, "southeast": 135.0, "south": 180.0,
           "southwest": 225.0, "west": 270.0, "northwest": 315.0}


@dataclass(frozen=True)
class CardinalFrame:
    """Unit ground-plane vectors of the compass directions in `base`."""

    north: np.ndarray
    east: np.ndarray
    normal: np.ndarray

    @property
    def south(self) -> np.ndarray:
        return -self.north

    @property
    def west(self) -> np.ndarray:
        return -self.east

    def direction(self, word: str) -> np.ndarray:
        a = math.radians(COMPASS[_compass_word(word)])
        return math.cos(a) * self.north + math.sin(a) * self.east

    def to_dict(self) -> dict:
        return {k: getattr(self, k).tolist() for k in ("north", "east", "south", "west", "normal")}


def _compass_word(word: str) -> str:
    w = word.lower().replace("-", "").replace(" ", "").replace("_", "")
    if w not in COMPASS:
        raise ValueError(f"unknown compass direction {word!r}; expected one of {sorted(COMPASS)}")
    return w


def _on_ground(p, normal) -> np.ndarray:
    p = np.asarray(p, float).reshape(3)
    return p - (p @ normal) * normal


def calibrate_directions(target, anchor, direction: str = "north", ground_normal=UP) -> CardinalFrame:
    """The compass frame in which `target` lies exactly `direction` of `anchor` ("A is north of B":
    target A, anchor B). Positions are projected on the ground plane first (MSSR B.3)."""
    n = np.asarray(ground_normal, float)
    n = n / np.linalg.norm(n)
    v = _on_ground(target, n) - _on_ground(anchor, n)
    if np.linalg.norm(v) < 1e-6:
        raise ValueError("the two objects are at the same ground position: their direction is undefined")
    v /= np.linalg.norm(v)
    # rotate the observed bearing back to north: about the normal by +angle (east is clockwise seen from above)
    a = math.radians(COMPASS[_compass_word(direction)])
    north = Rotation.from_rotvec(n * a).apply(v)
    west = np.cross(n, north)
    return CardinalFrame(north=north, east=-west / np.linalg.norm(west), normal=n)


def compass_direction(target, anchor, frame: CardinalFrame, eight: bool = False) -> str:
    """The compass word whose direction makes the smallest angle with anchor -> target."""
    v = _on_ground(target, frame.normal) - _on_ground(anchor, frame.normal)
    if np.linalg.norm(v) < 1e-6:
        raise ValueError("the two objects are at the same ground position: their direction is undefined")
    words = COMPASS if eight else ("north", "east", "south", "west")
    return max(words, key=lambda w: float(v @ frame.direction(w)))


def relative_camera_movement(T_base_cam0, T_base_cam1, world_to_camera: bool = False) -> dict:
    """How camera 1 is placed relative to camera 0, in camera 0's view (MSSR B.5): translation as
    forward/right/up metres, rotation as rotate_right (yaw), rotate_up (pitch), roll_right degrees."""
    E0, E1 = (np.asarray(T, float).reshape(4, 4) for T in (T_base_cam0, T_base_cam1))
    if world_to_camera:
        E0, E1 = invert(E0), invert(E1)
    T = invert(E0) @ E1  # camera 1 in camera 0's optical frame
    t = T[:3, 3]
    # optical frame: turning right is about +y (down), looking up about +x, rolling about +z
    yaw, pitch, roll = Rotation.from_matrix(T[:3, :3]).as_euler("YXZ", degrees=True)
    return {"forward": float(t[2]), "right": float(t[0]), "up": float(-t[1]),
            "rotate_right": float(yaw), "rotate_up": float(pitch), "roll_right": float(roll)}


def relative_object_position(T_base_cam, point_base, world_to_camera: bool = False) -> dict:
    """Where a base-frame point is from a camera (MSSR B.5): forward, right, up metres in the
    optical frame, and the straight-line distance."""
    E = np.asarray(T_base_cam, float).reshape(4, 4)
    T_cam_base = E if world_to_camera else invert(E)
    p = T_cam_base[:3, :3] @ np.asarray(point_base, float).reshape(3) + T_cam_base[:3, 3]
    return {"forward": float(p[2]), "right": float(p[0]), "up": float(-p[1]), "distance": float(np.linalg.norm(p))}
