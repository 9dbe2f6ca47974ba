"""Capture a cell's workspace description from one calibrated RGB-D observation.

    capture = capture_workspace(obs, CaptureConfig())     # table plane + extent, fixture boxes
    capture.scene.save("config/workspace.json")           # what the planner's workspace_file loads

Steps (base frame throughout, nothing here is new geometry):
1. horizontal planes by perception.planes.fit_horizontal_planes on a strided cloud; the table is
   the highest plane of at least `min_table_area_m2` (or the one nearest `table_z_hint`), the
   floor the best supported plane well below it;
2. the table's extent: the minimum-area rectangle (geometry.boxes.min_area_rect_angle) of the
   plane's inlier points over its footprint; a side whose points touch the image edge is only
   what is in view, and is reported as such;
3. fixtures: every segment the classical segmenter finds with the table itself as the only
   configured fixture (so its edges and legs are never a segment); pieces closer than
   `group_gap_m` are one fixture with several parts (a holder's two walls).

A fixture is written like the simulator's: category "support", its parts in `extra["parts"]`,
its own box the upright bounding box of the parts, so SegmentationHints.from_scene drops depth
inside them and uses their level tops as support surfaces.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage
from scipy.sparse.csgraph import connected_components

from spatial_manip.errors import SpatialManipError
from spatial_manip.geometry.boxes import min_area_rect_angle
from spatial_manip.camera_model import valid_depth_mask
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.base import Detection, FixturePart, SegmentationHints, check_observation
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.planes import Plane, fit_horizontal_planes, height_images
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.perception.classical import ClassicalSegmenter

FLOOR_BELOW_M = 0.2  # a plane this far under the table is the floor it stands on
EDGE_PX = 3      # table inliers this close to the image border mean the table runs out of view


class WorkspaceCaptureError(SpatialManipError):
    """No table could be found, or the observation cannot give a workspace; says what to change."""


@dataclass(kw_only=True)
class CaptureConfig:
    seed: int = 0
    plane_stride_px: int = 2
    plane_inlier_m: float = 0.008
    min_table_area_m2: float = 0.15       # smaller level patches are fixture tops, not the table
    table_z_hint: float | None = None     # choose the plane nearest this height instead
    table_thickness_m: float = 0.05       # used when no floor is in view (else the box reaches the floor)
    group_gap_m: float = 0.04             # segments this close are one fixture (a holder's walls around a book)
    min_part_size_m: float = 0.01         # thinner segments are depth noise at an edge
    segmenter: dict = field(default_factory=lambda: {
        "catalogue_fit": False,           # fixtures are not in any catalogue
        "colour_split": False,            # one fixture of two colours is still one part
        "max_object_extent_m": 1.2,       # plinths and stands are bigger than any object
        "max_object_height_m": 1.2,
    })

    def __post_init__(self):
        for name in ("plane_inlier_m", "min_table_area_m2", "table_thickness_m", "group_gap_m"):
            if not getattr(self, name) > 0:
                raise ValueError(f"CaptureConfig.{name} must be positive, got {getattr(self, name)!r}")


@dataclass
class TableEstimate:
    plane: Plane
    box: FixturePart                      # top face at the plane; down to the floor when seen
    truncated_sides: list[str]            # image edges the table's surface runs out of


@dataclass
class Capture:
    scene: Scene
    table: TableEstimate
    floor_z: float | None
    planes: list[Plane]
    detections: list[Detection]
    notes: list[str]


def capture_workspace(obs: RGBDObservation, config: CaptureConfig | None = None) -> Capture:
    cfg = config or CaptureConfig()
    valid = check_observation(obs)
    cloud, _ = base_cloud(obs, valid, stride=cfg.plane_stride_px)
    planes = fit_horizontal_planes(cloud, np.random.default_rng(cfg.seed), inlier_m=cfg.plane_inlier_m)
    table_plane, floor = choose_table(planes, cfg)
    notes: list[str] = []
    table = table_estimate(table_plane, floor, obs, cfg)
    if table.truncated_sides:
        notes.append(f"the table runs out of the image at its {', '.join(table.truncated_sides)} edge(s): "
                     "its extent there is only what is in view (and its legs beyond it may show up as "
                     "fixtures): move the camera or edit the size")
    detections = fixture_segments(obs, table.box, cfg)
    fixtures = group_fixtures(detections, cfg)
    scene = workspace_scene(obs, table, fixtures, floor)
    return Capture(scene, table, floor.z0 if floor else None, planes, detections, notes)


def choose_table(planes: list[Plane], cfg: CaptureConfig) -> tuple[Plane, Plane | None]:
    """(table, floor or None). The floor is the best supported plane FLOOR_BELOW_M under the table."""
    if not planes:
        raise WorkspaceCaptureError("no horizontal plane in view: point the camera at the table "
                                    "(the calibration must put z up in the base frame)")
    by_height = sorted(planes, key=lambda p: p.z0)
    if cfg.table_z_hint is not None:
        table = min(planes, key=lambda p: abs(p.z0 - cfg.table_z_hint))
    else:
        big = [p for p in by_height if _area(p) >= cfg.min_table_area_m2]
        if not big:
            raise WorkspaceCaptureError(
                f"no level surface of at least {cfg.min_table_area_m2} m^2 in view (found "
                + ", ".join(f"z={p.z0:+.3f} m, {_area(p):.2f} m^2" for p in by_height)
                + "): clear the table, or pass --table-z")
        table = big[-1]
    # depth noise at the floor's range can split it into several parallel slabs: the floor is
    # the best supported plane well below the table
    below = [p for p in planes if p.z0 < table.z0 - FLOOR_BELOW_M]
    return table, max(below, key=lambda p: p.n_inliers) if below else None


def _area(p: Plane) -> float:
    return float(p.footprint.sum()) * p.cell_m ** 2


def table_estimate(plane: Plane, floor: Plane | None, obs: RGBDObservation, cfg: CaptureConfig) -> TableEstimate:
    """The table's box: its top face fitted as a rectangle around the plane's inlier pixels."""
    valid = valid_depth_mask(obs.depth_m)
    height = height_images(obs.depth_m, obs.intrinsics, obs.T_base_cam, [plane])[0]
    on = valid & (np.abs(height) < cfg.plane_inlier_m)
    # A depth edge's flying pixels lie along the ray, just past the table's edge and within the
    # inlier band at grazing angles (+1.5 cm of extent with the L515 model): one pixel of
    # erosion drops them and costs about 2 mm per side.
    pts, _ = base_cloud(obs, ndimage.binary_erosion(on))
    pts = pts[plane.covers(pts)]
    if len(pts) < 3:
        raise WorkspaceCaptureError("the table plane has too few points to measure its extent")
    _, pix = base_cloud(obs, on)
    angle = min_area_rect_angle(pts[:, :2])
    axes = np.array([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])
    local = pts[:, :2] @ axes.T
    lo, hi = local.min(axis=0), local.max(axis=0)
    centre_xy = ((lo + hi) / 2) @ axes
    x_axis, size_xy = _robot_facing(axes, hi - lo, centre_xy)
    top = float(-(plane.normal[:2] @ centre_xy + plane.d) / plane.normal[2])
    bottom = floor.z0 if floor is not None else top - cfg.table_thickness_m
    R = _upright_frame(x_axis, plane.normal)
    centre = np.array([*centre_xy, top]) - R[:, 2] * (top - bottom) / 2
    box = FixturePart(centre, np.array([*size_xy, top - bottom]), R)
    return TableEstimate(plane, box, _edges_touched(pix, obs.intrinsics.width, obs.intrinsics.height))


def _robot_facing(axes: np.ndarray, size: np.ndarray, centre_xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The table's x axis (its front faces the robot at the base origin, as the simulator's
    table does) and its (length along x, width along y)."""
    to_robot = -centre_xy / max(np.linalg.norm(centre_xy), 1e-9)
    k = int(np.argmax(np.abs(axes @ to_robot)))
    x = axes[k] * np.sign(axes[k] @ to_robot or 1.0)
    return x, np.array([size[k], size[1 - k]])


def _upright_frame(x_xy: np.ndarray, normal: np.ndarray) -> np.ndarray:
    z = np.asarray(normal, float) / np.linalg.norm(normal)
    x = np.array([x_xy[0], x_xy[1], 0.0])
    x -= z * (x @ z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _edges_touched(pix: np.ndarray, width: int, height: int) -> list[str]:
    u, v = pix[:, 0], pix[:, 1]
    touched = {"left": u.min() < EDGE_PX, "right": u.max() >= width - EDGE_PX,
               "top": v.min() < EDGE_PX, "bottom": v.max() >= height - EDGE_PX}
    return [k for k, hit in touched.items() if hit]


def fixture_segments(obs: RGBDObservation, table: FixturePart, cfg: CaptureConfig) -> list[Detection]:
    """Everything the classical segmenter finds, the table's own box excluded."""
    seg = ClassicalSegmenter(seed=cfg.seed, **cfg.segmenter)
    dets = seg.segment(obs, hints=SegmentationHints(fixtures=(table,)))
    return [d for d in dets if np.min(d.box.size) >= cfg.min_part_size_m]


def group_fixtures(dets: list[Detection], cfg: CaptureConfig) -> list[list[Detection]]:
    """Segments whose boxes come within `group_gap_m` of each other, as one fixture each,
    ordered left to right as the robot sees them (+y first), then near to far."""
    if not dets:
        return []
    n = len(dets)
    near = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(i + 1, n):
            near[i, j] = near[j, i] = _box_gap(dets[i].box, dets[j].box) < cfg.group_gap_m
    _, labels = connected_components(near, directed=False)
    groups = [[d for d, lab in zip(dets, labels) if lab == k] for k in range(labels.max() + 1)]
    return sorted(groups, key=lambda g: (-round(float(np.mean([d.box.center[1] for d in g])), 2),
                                         float(np.mean([d.box.center[0] for d in g]))))


def _box_gap(a, b) -> float:
    """Gap between two oriented boxes, bounded below by their corner sets' nearest distance in
    the other's frame (exact enough at the centimetre scale fixtures are grouped on)."""
    ca, cb = a.corners(), b.corners()
    if points_in_box(ca, b).any() or points_in_box(cb, a).any():
        return 0.0
    gaps = [float(np.max(np.abs((c - box.center) @ box.rotation) - box.size / 2, axis=1).min())
            for c, box in ((ca, b), (cb, a))]
    return max(0.0, min(gaps))


def workspace_scene(obs: RGBDObservation, table: TableEstimate, fixtures: list[list[Detection]],
                    floor: Plane | None) -> Scene:
    cam = obs.T_base_cam
    objects = [SceneObject("table", "table", "table", table.box.center, table.box.size, table.box.rotation,
                           oriented=True, extra={"captured": True, "extent_truncated": table.truncated_sides})]
    objects += [fixture_object(f"fixture_{k + 1}", parts) for k, parts in enumerate(fixtures)]
    extra = {"kind": "tabletop", "table_z": round(float(table.box.center[2] + table.box.size[2] / 2), 4)}
    if floor is not None:
        extra["ground_z"] = round(floor.z0, 4)
    return Scene(viewer=Viewpoint(cam[:3, 3], cam[:3, 2]), robot=Viewpoint([0, 0, 0], [1, 0, 0]),
                 objects=objects, extra=extra)


def fixture_object(fid: str, parts: list[Detection]) -> SceneObject:
    """A fixture from its segments: each is a part; its own box is the parts' bounding box
    about the yaw of the largest part (upright, as the planner expects fixtures)."""
    main = max(parts, key=lambda d: float(np.prod(d.box.size)))
    R = _upright_frame(main.box.rotation[:2, 0] if np.linalg.norm(main.box.rotation[:2, 0]) > 0.5
                       else main.box.rotation[:2, 1], np.array([0.0, 0.0, 1.0]))
    corners = np.vstack([d.box.corners() for d in parts]) @ R
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    dicts = [{"center": d.box.center.tolist(), "size": d.box.size.tolist(), "rotation": d.box.rotation.tolist()}
             for d in parts]
    return SceneObject(fid, "fixture", "support", R @ ((lo + hi) / 2), hi - lo, R,
                       extra={"parts": dicts, "captured": True, "colour": main.colour})


def select_fixtures(scene: Scene, *, only: list[str] | None = None, exclude: list[str] | None = None) -> Scene:
    """Keep the fixtures the user marks as fixed (`only`), or drop the ones named in `exclude`
    (a mug left on the table at capture time); unknown ids are an error naming the choices."""
    ids = [o.id for o in scene.objects if o.category == "support"]
    for name in (only or []) + (exclude or []):
        if name not in ids:
            raise WorkspaceCaptureError(f"no captured fixture {name!r}; the capture has {', '.join(ids) or 'none'} "
                                        "(see --overlay for which is which)")
    keep = [o for o in scene.objects if o.category != "support"
            or ((not only or o.id in only) and o.id not in (exclude or []))]
    out = scene.with_objects(keep)
    out.extra = dict(scene.extra)
    return out


def merge_into(base: Scene, captured: Scene, *, same_fixture_m: float = 0.05) -> Scene:
    """Update an existing workspace with a capture: the table and fixtures are the captured
    ones, but a fixture within `same_fixture_m` of one in `base` keeps that one's id, label and
    extra keys (names the user gave); the catalogue, the regions and other keys of `base` stay."""
    old = [o for o in base.objects if o.category in ("support", "shelf")]
    used: set = set()
    objects = []
    for o in captured.objects:
        twin = next((b for b in sorted(old, key=lambda b: np.linalg.norm(b.center - o.center))
                     if b.id not in used and np.linalg.norm(b.center - o.center) <= same_fixture_m), None)
        if o.category == "support" and twin is not None:
            used.add(twin.id)
            o = SceneObject(twin.id, twin.label, twin.category, o.center, o.size, o.rotation, o.oriented,
                            extra={**twin.extra, **o.extra})
        objects.append(o)
    kept = [o for o in base.objects if o.category not in ("table", "support", "shelf", "floor")]
    ids = {o.id for o in kept}
    clash = [o.id for o in objects if o.id in ids]
    if clash:
        raise WorkspaceCaptureError(f"captured fixture ids {clash} clash with catalogue ids in the base file: "
                                    "rename them there")
    # the viewer is the camera that looked now: "from my point of view" means the camera's view
    return Scene(captured.viewer, base.robot, objects + kept, list(base.regions), {**base.extra, **captured.extra})
