"""The cell's transforms for TF, computed in the core (cell_tf_node only converts and publishes):
the robot description with the camera where the calibration puts it, its fixed joints as
static transforms, and its revolute joints at given joint positions (what robot_state_publisher
does, for machines without it).

    urdf = calibrated_description(cal, model="ur5e")          # urdf/ file, camera joint = calibration
    joints = parse_joints(urdf)
    static = fixed_transforms(joints)                         # [(parent, child, 4x4)], camera included
    moving = joint_transforms(joints, {"shoulder_pan_joint": 0.1, ...})

The camera joint of urdf/ (base -> camera_color_optical_frame eye-to-hand, tool0 -> it
eye-in-hand) holds a nominal pose; replacing it with the calibration keeps one source of truth:
the model RViz draws, the TF tree and the planner's T_base_camera all agree.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.geometry.calibration import CalibrationError, HandEyeCalibration
from spatial_manip.transforms import make_transform
from spatial_manip.geometry.tf_tree import TfLookupError, TfTree
from spatial_manip.motion.robot import description_paths

CAMERA_JOINTS = {"eye_to_hand": ("base", "base_camera_optical"), "eye_in_hand": ("tool0", "tool0_camera_optical")}


@dataclass(frozen=True)
class UrdfJoint:
    name: str
    type: str             # fixed | revolute | continuous | prismatic
    parent: str
    child: str
    origin: np.ndarray    # 4x4 parent <- joint frame at zero position
    axis: np.ndarray      # unit, in the joint frame


def calibration_transform(cal: HandEyeCalibration) -> tuple[str, str, np.ndarray]:
    """(parent, child, T) of the calibration: base <- camera, or tool0 <- camera."""
    return CAMERA_JOINTS[cal.mode][0], cal.camera_frame, np.asarray(cal.T_mount_camera, float)


def calibrated_description(cal: HandEyeCalibration, model: str = "ur5e") -> str:
    """The URDF of `model` for the calibration's mount, its camera joint set to the calibration."""
    urdf_path, _ = description_paths(model, cal.mode)
    root = ET.fromstring(urdf_path.read_text())
    parent, joint_name = CAMERA_JOINTS[cal.mode]
    joint = root.find(f"joint[@name='{joint_name}']")
    if joint is None:
        raise CalibrationError(f"{urdf_path} has no joint {joint_name!r} to place the camera on")
    joint.find("child").set("link", cal.camera_frame)
    _rename_link(root, "camera_color_optical_frame", cal.camera_frame)
    origin = joint.find("origin")
    if origin is None:
        origin = ET.SubElement(joint, "origin")
    T = np.asarray(cal.T_mount_camera, float)
    origin.set("xyz", " ".join(f"{v:.9g}" for v in T[:3, 3]))
    origin.set("rpy", " ".join(f"{v:.9g}" for v in Rotation.from_matrix(T[:3, :3]).as_euler("xyz")))
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _rename_link(root: ET.Element, old: str, new: str) -> None:
    if old == new:
        return
    for link in root.iter("link"):
        if link.get("name") == old:
            link.set("name", new)


def parse_joints(urdf: str) -> list[UrdfJoint]:
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as e:
        raise ValueError(f"robot description is not valid XML: {e}") from e
    out = []
    for j in root.iter("joint"):
        o = j.find("origin")
        xyz = _floats(o.get("xyz") if o is not None else None)
        rpy = _floats(o.get("rpy") if o is not None else None)
        a = j.find("axis")
        axis = _floats(a.get("xyz") if a is not None else None, default=(1.0, 0.0, 0.0))
        out.append(UrdfJoint(j.get("name"), j.get("type"), j.find("parent").get("link"), j.find("child").get("link"),
                             make_transform(Rotation.from_euler("xyz", rpy).as_matrix(), xyz),
                             np.asarray(axis) / np.linalg.norm(axis)))
    return out


def _floats(text: str | None, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    return np.asarray([float(v) for v in text.split()] if text else default, float)


def fixed_transforms(joints: list[UrdfJoint]) -> list[tuple[str, str, np.ndarray]]:
    return [(j.parent, j.child, j.origin) for j in joints if j.type == "fixed"]


def joint_transforms(joints: list[UrdfJoint], positions: dict[str, float]) -> list[tuple[str, str, np.ndarray]]:
    """parent <- child of every moving joint named in `positions` (others are left out: a
    joint_states message from the gripper driver alone moves only the gripper)."""
    out = []
    for j in joints:
        if j.type == "fixed" or j.name not in positions:
            continue
        q = float(positions[j.name])
        if j.type == "prismatic":
            motion = make_transform(np.eye(3), j.axis * q)
        else:
            motion = make_transform(Rotation.from_rotvec(j.axis * q).as_matrix(), np.zeros(3))
        out.append((j.parent, j.child, j.origin @ motion))
    return out


class CameraMount:
    """The calibration moved up to the camera's mounting frame. A hand-eye calibration measures
    base <- the colour optical frame; realsense2_camera publishes its own static chain from
    camera_link down to that frame, so publishing base -> optical would give the optical frame a
    second parent. Fed the driver's static transforms, `from_driver` returns the one transform to
    publish instead, base -> camera_link = (base <- optical) (camera_link <- optical)^-1, once the
    chain is known (None before, and after it was returned once)."""

    def __init__(self, mount_frame: str, calibration: tuple[str, str, np.ndarray]):
        self.parent, self.camera_frame, self.T_parent_camera = calibration
        if mount_frame in (self.parent, self.camera_frame):
            raise CalibrationError(f"camera_mount_frame {mount_frame!r} must be the camera driver's frame above "
                                   f"{self.camera_frame} (realsense2_camera: camera_link), not {self.parent} or the "
                                   "calibrated frame itself")
        self.mount_frame = mount_frame
        self.tree = TfTree()
        self.done = False

    def from_driver(self, transforms: list[tuple[str, str, np.ndarray]]) -> tuple[str, str, np.ndarray] | None:
        if self.done:
            return None
        for parent, child, T in transforms:
            if child != self.mount_frame:          # the chain below the mount, not where we put the mount
                self.tree.set(parent, child, T, static=True)
        try:
            T_mount_camera = self.tree.lookup(self.mount_frame, self.camera_frame)
        except TfLookupError:
            return None
        self.done = True
        return self.parent, self.mount_frame, self.T_parent_camera @ np.linalg.inv(T_mount_camera)
