"""Hand-built scenes with known answers (world = robot base, robot at origin facing +x).

Viewer right is world -y, so "left" means larger y. The table's front faces the robot.
"""
from __future__ import annotations

import math

import numpy as np

from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint

TABLE_TOP = 0.75


def rot_z(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def rot_x(deg):
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def book(id_, x, y, pose="upright", size_class="medium", tilt=45.0, yaw=0.0):
    size = {"small": [0.12, 0.03, 0.17], "medium": [0.15, 0.03, 0.22], "large": [0.2, 0.04, 0.29]}[size_class]
    ang = {"upright": 0.0, "flat": 90.0, "tilted": tilt}[pose]
    R = rot_z(yaw) @ rot_x(ang)
    half_h = float(np.abs(R.T @ np.array([0, 0, 1.0])) @ (np.array(size) / 2))
    return SceneObject(id_, "book", "book", [x, y, TABLE_TOP + half_h], size, R, False, size_class)


def table_scene(extra_books=()):
    objs = [
        SceneObject("table", "table", "table", [0.7, 0.0, TABLE_TOP / 2], [0.8, 1.4, TABLE_TOP], rot_z(180), True),
        book("b_small_flat", 0.55, 0.45, "flat", "small"),
        book("b_med_up", 0.7, 0.15, "upright", "medium"),
        book("b_large_tilt", 0.85, -0.2, "tilted", "large"),
        book("b_med_flat", 0.45, -0.45, "flat", "medium"),
        SceneObject("jar", "ceramic jar", "reference", [0.9, 0.2, TABLE_TOP + 0.08], [0.1, 0.1, 0.16]),
        # the picture frame faces the robot (+x of the frame points to world -x)
        SceneObject("frame", "picture frame", "reference", [1.0, -0.3, TABLE_TOP + 0.1], [0.02, 0.15, 0.2],
                    rot_z(180), True),
        *extra_books,
    ]
    return Scene(Viewpoint([0.0, 0.0, 1.3], [1.0, 0.0, -0.5]), Viewpoint([0, 0, 0], [1, 0, 0]), objs, [])


def shelf_scene(held=True):
    """A 3 x 3 shelf at x = 0.9 facing the robot; rows from the top, columns from the viewer's left."""
    regions = []
    occ = {(1, 1): 0.0, (1, 2): 0.5, (1, 3): 0.0, (2, 1): 0.3, (2, 2): 0.0, (2, 3): 0.9,
           (3, 1): 0.6, (3, 2): 0.2, (3, 3): 1.0}
    widths = {1: 0.30, 2: 0.45, 3: 0.30}
    ys = {1: 0.45, 2: 0.0, 3: -0.45}
    for row in (1, 2, 3):
        for col in (1, 2, 3):
            z = 1.5 - 0.35 * row + 0.175
            regions.append(Region(f"slot_r{row}c{col}", "slot", [0.9, ys[col], z], [0.3, widths[col], 0.33],
                                  row, col, occ[(row, col)]))
    objs = [
        SceneObject("shelf", "shelf", "shelf", [0.9, 0.0, 0.75], [0.32, 1.4, 1.5], rot_z(180), True),
        SceneObject("clock", "alarm clock", "reference", [0.9, 0.0, 0.5 + 0.05], [0.08, 0.1, 0.1]),
        SceneObject("pframe", "picture frame", "reference", [0.9, 0.45, 0.85 + 0.1], [0.02, 0.15, 0.2],
                    rot_z(180), True),
    ]
    if held:
        objs.append(SceneObject("held_book", "book", "book", [0.3, 0.0, 1.0], [0.15, 0.03, 0.22], held=True))
    return Scene(Viewpoint([-0.3, 0.0, 1.4], [1.0, 0.0, -0.3]), Viewpoint([0, 0, 0], [1, 0, 0]), objs, regions)
