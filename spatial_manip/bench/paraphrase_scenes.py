"""The pieces every everyday phrase set builds its scenes from: the 1 x 1.6 m table, objects standing
on it, the object in the gripper, a scene seen from the sets' viewer (`paraphrase_eval.VIEWER`), and
a shelf of slots facing the viewer with objects standing in them."""
from __future__ import annotations

from dataclasses import dataclass

from spatial_manip.bench.paraphrase_eval import VIEWER
from spatial_manip.reasoning.examples import TABLE_TOP, rot_z
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint


def _appearance(colours, rgb) -> dict:
    """A scene object's `extra`: its colour names, and its mean colour when the set gives one."""
    extra = {"colour_names": list(colours)}
    if rgb is not None:
        extra["rgb"] = list(rgb)
    return extra


def on_table(id_, label, x, y, size, colours, rgb=None, yaw: float | None = None) -> SceneObject:
    """An object standing on the table; `yaw` (degrees) gives it a front, turned from +x."""
    rotation = rot_z(0 if yaw is None else yaw)
    return SceneObject(id_, label, "reference", [x, y, TABLE_TOP + size[2] / 2], size, rotation, yaw is not None,
                       extra=_appearance(colours, rgb))


def held_object(label, size, colours, rgb=None) -> SceneObject:
    """The object in the gripper, above the table's near edge."""
    return SceneObject("held", label, "reference", [0.3, 0.0, 1.0], size, held=True, extra=_appearance(colours, rgb))


def table() -> SceneObject:
    return SceneObject("table", "table", "table", [0.7, 0.0, 0.375], [1.0, 1.6, 0.75], rot_z(180), True)


def table_scene(objects) -> Scene:
    """A scene of `objects` (no shelf regions) seen from the sets' viewer."""
    return Scene(Viewpoint(*VIEWER), Viewpoint([0, 0, 0], [1, 0, 0]), objects, [])


@dataclass(frozen=True)
class Shelf:
    """A shelf facing the viewer at `x`, 1.44 m tall and `width` wide: rows by their centre height
    (1 = the top), columns by their centre y (1 = the viewer's left), every slot 33 cm high and
    `slot_width` wide."""
    x: float
    rows: dict
    cols: dict
    slot_width: float
    width: float

    def on(self, id_, label, row, col, size, colours, rgb=None) -> SceneObject:
        """An object standing on the board of slot (row, col)."""
        bottom = self.rows[row] - 0.165
        return SceneObject(id_, label, "reference", [self.x, self.cols[col], bottom + size[2] / 2], size,
                           extra=_appearance(colours, rgb))

    def scene(self, objects, occupancy: dict) -> Scene:
        """The shelf with `objects`, its slots filled as `occupancy[(row, col)]` says, seen from in
        front and above."""
        slots = [Region(f"r{r}c{c}", "slot", [self.x, y, z], [0.3, self.slot_width, 0.33], r, c, occupancy[(r, c)])
                 for r, z in self.rows.items() for c, y in self.cols.items()]
        shelf = SceneObject("shelf", "shelf", "shelf", [self.x, 0.0, 0.72], [0.32, self.width, 1.44], rot_z(180), True)
        return Scene(Viewpoint([-0.3, 0.0, 1.4], [1.0, 0.0, -0.3]), Viewpoint([0, 0, 0], [1, 0, 0]),
                     [shelf, *objects], slots)
