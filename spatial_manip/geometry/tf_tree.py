"""A small TF buffer in the core (tf2_ros is not installable here): the latest transform of every
parent -> child edge heard on /tf and /tf_static, and lookups along the tree between any two
connected frames.

    tree = TfTree()
    tree.set("base", "camera_link", T_base_link, static=True)               # the calibration
    tree.set("camera_link", "camera_color_optical_frame", T_link_optical, static=True)  # realsense2_camera
    T_base_optical = tree.lookup("base", "camera_color_optical_frame")      # 4x4, or TfLookupError

Every edge keeps only its latest transform (no time interpolation): right for the static chain
from the robot base to an eye-to-hand camera, approximate for an eye-in-hand one whose chain runs
through the moving arm. A child with a second parent replaces the first, as tf2 does, and the
change is reported by `set` so a node can warn that two publishers disagree.
"""
from __future__ import annotations

import threading

import numpy as np

from spatial_manip.errors import SpatialManipError
from spatial_manip.transforms import invert


class TfLookupError(SpatialManipError):
    """No chain of transforms joins the two frames (yet)."""


class TfTree:
    def __init__(self):
        self._lock = threading.Lock()
        self._parent: dict[str, tuple[str, np.ndarray, bool]] = {}   # child -> (parent, parent<-child, static)

    def set(self, parent: str, child: str, T_parent_child, static: bool = False) -> str | None:
        """Store parent <- child; returns the child's previous parent when this one differs."""
        parent, child = parent.lstrip("/"), child.lstrip("/")      # tf2 ignores a leading slash
        T = np.asarray(T_parent_child, float)
        if not parent or not child or parent == child:
            raise ValueError(f"a transform needs two different frame names, got {parent!r} -> {child!r}")
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise ValueError(f"transform {parent} -> {child} is not a finite 4x4 matrix")
        with self._lock:
            before = self._parent.get(child)
            self._parent[child] = (parent, T, static)
        return before[0] if before is not None and before[0] != parent else None

    def frames(self) -> set[str]:
        with self._lock:
            return set(self._parent) | {p for p, _, _ in self._parent.values()}

    def lookup(self, target: str, source: str) -> np.ndarray:
        """T_target_source: maps points in `source` to `target` (tf2's lookupTransform(target, source))."""
        target, source = target.lstrip("/"), source.lstrip("/")
        with self._lock:
            up_source = self._to_root(source)
            up_target = self._to_root(target)
        depth = {frame: i for i, (frame, _) in enumerate(up_target)}
        for i, (frame, T_frame_source) in enumerate(up_source):
            if frame in depth:
                T_frame_target = up_target[depth[frame]][1]
                return invert(T_frame_target) @ T_frame_source
        known = ", ".join(sorted(self.frames())) or "none"
        raise TfLookupError(f"no TF chain joins {target} and {source} (frames heard: {known}); is the calibration "
                            "published on /tf_static (cell_tf_node) and the camera driver running?")

    def _to_root(self, frame: str) -> list[tuple[str, np.ndarray]]:
        """[(ancestor, T_ancestor_frame)] from `frame` itself up to its root (caller holds the lock)."""
        out, T, seen = [(frame, np.eye(4))], np.eye(4), {frame}
        while frame in self._parent:
            parent, T_parent_child, _ = self._parent[frame]
            if parent in seen:                 # a loop: two publishers disagree; stop rather than spin
                break
            T = T_parent_child @ T
            out.append((parent, T))
            seen.add(parent)
            frame = parent
        return out
