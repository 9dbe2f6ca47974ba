"""Hand-built example scenes with known answers (world = robot base, robot at origin facing +x),
used by the tests, `spatial-manip plan-bench` and the docs.

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
        book("b_left_up", 0.35, 0.6, "upright", "small", yaw=90.0),     # in the viewer's left sector
        book("b_back_up", 1.05, -0.35, "upright", "medium"),            # behind the picture frame
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


# ESPIRE Table 10's example instructions (and a few paraphrases) on these scenes.
TABLE_INSTRUCTIONS = [
    "take a small book from the table", "take a medium-sized book", "take a large book",
    "take a book around 20 centimeters high", "take a book among the books closest to you",
    "take a book among the books farthest from you", "take a book more than 1 meter away from you",
    "take a book among the books second closest to you", "take a book about 1.1 meters away from you",
    "take a book 80 to 90 centimeters away from you", "take a book on the left of the table",
    "take a book at the front of the table", "take a book at the back of the table",
    "take the leftmost book from the table", "take the second leftmost book on the table",
    "take a flat-lying book from the table", "take a book to your left", "take a book behind the picture frame",
    "take the second leftmost book lying flat", "pick up the book at a tilt of about 45 degrees",
]
SHELF_INSTRUCTIONS = [
    "place the book in an empty slot", "place the book in a partly occupied slot", "place the book in the emptiest slot",
    "place the book in a slot around 45 centimeters wide", "place the book at row 2 of the shelf",
    "place the book at row 2, column 3 of the shelf", "place the book in a slot within 1.5 meters of you",
    "place the book in a slot on the left of the shelf", "place the book in a slot in the upper part of the shelf",
    "place the book in a slot in the lower part of the shelf", "place the book in a second rightmost slot on the shelf",
    "place the book upright on the shelf", "place the book at a tilt on the shelf",
    "place the book in a slot to the right of the alarm clock", "place the book in a slot above the picture frame",
    "place the book in a slot directly above the alarm clock", "place the book in a slot directly below the picture frame",
    "place the book at a tilt angle of about 30 degrees in the emptiest slot",
]
METRIC_INSTRUCTIONS = [
    "place the book 10 cm to the right of the jar", "put it twenty centimeters in front of the picture frame",
    "place the book between the jar and the picture frame", "place the book immediately to the left of the jar",
    "place the book 15 cm from the jar",
]


def held_table_scene():
    """The table scene with a book in the gripper (for metric placements)."""
    s = table_scene()
    held = book("held_book", 0.3, 0.0, "upright")
    held.held = True
    s.objects.append(held)
    return s
