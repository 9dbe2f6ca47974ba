"""Classical segmentation of any RGB-D frame, no weights: support planes, clusters of what stands
on them, a colour split of touching objects, an oriented box per cluster, colour and size
attributes, and labels from what the scene config expects.

Pipeline (base frame throughout):
1. horizontal planes by seeded RANSAC on a pixel-strided cloud (table top, shelf boards, floor),
   plus the configured ones (shelf slot floors, the level tops of fixtures such as pedestals);
2. every valid pixel's height above the highest plane under it; pixels higher than
   `min_height_m` are object candidates, except depth inside a configured fixture's box;
3. voxel downsampling + connected components of the radius graph; small, huge, floating or
   structural (reaching the board above) clusters are dropped;
4. clusters holding two clearly different colours in two coherent parts are split;
5. each cluster's pixels -> mask, its points -> oriented box on its plane, colour, size class;
6. labels by one-to-one matching with `hints.expected`, books by ESPIRE's dimensions.
"""
from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import ndimage
from scipy.spatial import cKDTree

from spatial_manip.errors import CanceledError
from spatial_manip.geometry import pointcloud as pc
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.geometry.pointcloud import SENSOR
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import main_colour, mean_rgb
from spatial_manip.perception.base import (UNREPORTED_CATEGORIES, Detection, SegmentationHints, along_line_of_sight,
                                          check_observation, lower_bound_sides,
                                          range_smear_sides_m)
from spatial_manip.perception.box import box_on_slope, object_box, sloped_faces, thicken_away_from
from spatial_manip.perception.cloud import base_cloud, pixels_to_mask
from spatial_manip.perception.cluster import Voxels, components, frame_noise, split_by_colour, stands_out_of_noise
from spatial_manip.perception.catalogue_fit import complete_from_catalogue
from spatial_manip.perception.labelling import assign_labels, match_cost
from spatial_manip.perception.planes import (Plane, box_top_plane, fit_horizontal_planes, height_images, known_plane,
                                             settled_known_planes, support_of, surface_image,
                                             with_known_planes)

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class ClassicalConfig:
    seed: int = 0
    plane_stride_px: int = 4          # pixel stride of the cloud the planes are fit on
    plane_inlier_m: float = 0.008
    plane_max_tilt_deg: float = 10.0
    max_planes: int = 4
    min_height_m: float = 0.007       # above the plane: thinner is table noise (small books are 15 mm)
    voxel_m: float = 0.005
    cluster_radius_m: float = 0.011   # voxel centres closer than this are one object
    min_cluster_voxels: int = 25
    max_object_extent_m: float = 0.6  # larger footprints are furniture, unless the scene expects one that large
    max_object_height_m: float = 0.5
    max_support_gap_m: float = 0.05   # a connected cluster must reach this close to its plane (else it floats: an arm)
    rest_reach_m: float = 0.08        # ... or rest on a grounded cluster this close sideways (hidden support)
    min_extent_m: float = 0.004       # thinner boxes are slivers of a surface seen edge-on, not objects
    robot_keepout_radius_m: float = 0.2   # points this close to the base's z axis are the robot
    arm_reach_m: float = 1.0          # beyond this from the base's z axis nothing is the arm (UR5e 0.85 m + gripper)
    fixture_margin_m: float = 0.004   # depth this close to a configured fixture's box is the fixture
    merge_gap_m: float = 0.04         # pieces this close may be one expected object (see _merge_pieces)
    colour_split: bool = True
    colour_split_distance: float = 0.25
    workspace_min_m: tuple | None = None   # optional base-frame crop (x, y, z)
    workspace_max_m: tuple | None = None
    match_max_cost: float = 0.8
    name_margin: float = 0.08         # a name another listed label fits within this cost is refused (labelling.py)
    catalogue_fit: bool = True        # a catalogued object seen in part gets its catalogue box (catalogue_fit.py)

    def __post_init__(self):
        for name in ("plane_inlier_m", "min_height_m", "voxel_m", "cluster_radius_m",
                     "max_object_extent_m", "max_object_height_m", "arm_reach_m"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ClassicalConfig.{name} must be positive, got {getattr(self, name)!r}")
        if self.plane_stride_px < 1 or self.min_cluster_voxels < 1:
            raise ValueError("plane_stride_px and min_cluster_voxels must be >= 1")
        if self.cluster_radius_m < self.voxel_m:
            raise ValueError(f"cluster_radius_m ({self.cluster_radius_m}) must be at least voxel_m "
                             f"({self.voxel_m}) or neighbouring voxels never connect")
        if (self.workspace_min_m is None) != (self.workspace_max_m is None):
            raise ValueError("give both workspace_min_m and workspace_max_m, or neither")


class ClassicalSegmenter:
    def __init__(self, **config):
        self.config = ClassicalConfig(**config)
        self.last_timing_s: dict = {}
        self.last_planes: list[Plane] = []
        # asked as each stage ends: True stops the segmenting there (CanceledError). The planner's
        # idle look sets it: a look the world changed under (a reset) serves nothing, and a goal
        # waited for it to end (issue 42)
        self.should_stop: Callable[[], bool] = lambda: False

    def segment(self, obs: RGBDObservation, *, hints: SegmentationHints | None = None) -> list[Detection]:
        cfg = self.config
        timer = _Timer(self.should_stop)
        valid = check_observation(obs)
        rng = np.random.default_rng(cfg.seed)
        cloud, _ = base_cloud(obs, valid, stride=cfg.plane_stride_px)
        planes = fit_horizontal_planes(cloud, rng, max_planes=cfg.max_planes, inlier_m=cfg.plane_inlier_m,
                                       max_tilt_deg=cfg.plane_max_tilt_deg, camera_m=obs.T_base_cam[:3, 3])
        hints = hints or SegmentationHints()
        tops = _fixture_tops(hints.fixtures)
        known = settled_known_planes([known_plane(*s) for s in hints.supports] + [t for t, _ in tops],
                                     [None] * len(hints.supports) + [b for _, b in tops], cloud, obs.T_base_cam[:3, 3])
        if known:
            planes = with_known_planes(planes, known)
        self.last_planes = planes
        timer.lap("planes")
        if not planes:
            log.warning("no horizontal support plane in view: no objects can be segmented")
            self.last_timing_s = timer.laps
            return []

        # Candidates in image space first (cheap), then the cloud of those pixels only.
        heights = height_images(obs.depth_m, obs.intrinsics, obs.T_base_cam, planes)
        above = valid & np.any(heights > cfg.min_height_m, axis=0)
        above &= ~surface_image(obs.depth_m, obs.intrinsics, obs.T_base_cam, planes, heights, cfg.min_height_m)
        # Speckle (isolated noisy pixels just above the table) never forms an object but costs
        # clustering time: an image-space opening removes it for a few ms.
        above = ndimage.binary_opening(above, structure=np.ones((3, 3), bool))
        pts, uv = base_cloud(obs, above)
        if cfg.workspace_min_m is not None:
            inside = np.all((pts >= cfg.workspace_min_m) & (pts <= cfg.workspace_max_m), axis=1)
            pts, uv = pts[inside], uv[inside]
        support, height = support_of(pts, planes, min_height_m=cfg.min_height_m)
        keep = (support >= 0) & (np.hypot(pts[:, 0], pts[:, 1]) > cfg.robot_keepout_radius_m)
        keep &= ~_on_fixtures(pts, obs.T_base_cam[:3, 3], hints.fixtures, cfg.fixture_margin_m)
        pts, uv, support, height = pts[keep], uv[keep], support[keep], height[keep]
        timer.lap("candidates")

        detections = []
        if len(pts):
            rgb = obs.rgb[uv[:, 1], uv[:, 0]].astype(float)
            vox = Voxels(pts, rgb, cfg.voxel_m, height)

            def foot_hidden(members):
                return _foot_hidden(obs.depth_m, uv[np.isin(vox.inverse, members)])

            limits = _size_limits(cfg, hints.expected)

            noise = frame_noise(cloud, planes, obs.T_base_cam[:3, 3])     # this frame's, not the nominal
            slopes = sloped_faces(hints.fixtures)

            def detect(members):
                return self._detection(obs, vox, members, pts, uv, support, height, planes, limits, noise, slopes)

            clusters, pieces_of = self._clusters(vox, hints.fixtures, foot_hidden)
            detections = self._merge_pieces(clusters, [detect(c) for c in clusters], vox.centres, detect,
                                            hints.expected, pieces_of=pieces_of, height=vox.height)
        timer.lap("clusters")
        detections.sort(key=lambda d: (round(d.box.center[0], 2), -d.box.center[1]))
        assign_labels(detections, hints.expected, max_cost=cfg.match_max_cost, work_areas=hints.work_areas,
                      shelves=hints.shelves, name_margin=cfg.name_margin)
        detections = [d for d in detections if d.category not in UNREPORTED_CATEGORIES]
        timer.lap("labels")
        if cfg.catalogue_fit:
            complete_from_catalogue(obs, detections, hints.expected, planes)
            timer.lap("catalogue")
        self.last_timing_s = timer.laps
        return detections

    def _clusters(self, vox: Voxels, fixtures, foot_hidden) -> tuple[list[np.ndarray], list[int]]:
        """The clusters (voxel indices) of what stands on a support, and for each, the connected
        component of the radius graph it is a piece of (pieces of one component were cut by colour
        alone: nothing in 3-D separates them)."""
        cfg = self.config
        comp = components(vox.centres, cfg.cluster_radius_m)
        order = np.argsort(comp, kind="stable")
        bounds = np.flatnonzero(np.diff(comp[order])) + 1
        groups = [m for m in np.split(order, bounds) if len(m) >= cfg.min_cluster_voxels]
        grounded = [vox.height[m].min() <= cfg.max_support_gap_m for m in groups]
        tree = cKDTree(vox.centres[:, :2])
        out, pieces_of = [], []
        for component, (members, on_plane) in enumerate(zip(groups, grounded)):
            # Something must reach down to the support, rest on a grounded cluster or a fixture
            # (a book in its holder, whose walls hide the book's foot), have its foot hidden
            # from the camera (a plant's pot behind a book), or lie beyond the arm's reach (a
            # painting on a thin easel); else it floats: the arm, a hand.
            if not (on_plane or self._rests_on_fixture(vox, members, fixtures)
                    or self._rests_on_other(vox, members, comp, tree) or foot_hidden(members)
                    or self._out_of_reach(vox, members)):
                continue
            parts = [members]
            if cfg.colour_split:
                parts = [p for p in split_by_colour(
                    vox.centres, vox.rgb, members, radius_m=cfg.cluster_radius_m,
                    min_voxels=cfg.min_cluster_voxels, min_distance=cfg.colour_split_distance)
                    if len(p) >= cfg.min_cluster_voxels]
            out.extend(parts)
            pieces_of.extend([component] * len(parts))
        return out, pieces_of

    def _merge_pieces(self, clusters: list, dets: list, centres: np.ndarray, detect, expected, *,
                      pieces_of: list | None = None, height: np.ndarray | None = None) -> list:
        """Join neighbouring clusters whose union matches an expected object better than either
        does alone, or matches the one entry both match best: depth gaps and colour cut one
        object into pieces (a teddy bear's head and body, a shrub's foliage and pot, a frame and
        its picture), and two pieces cannot both be the one teddy bear the cell lists; while two
        touching books each match their own entry better than their union does.

        Pieces of one connected surface (`pieces_of`: the same component of the radius graph, cut
        by colour alone) are one object unless they show otherwise: their union is taken when it
        fits an entry within JOINED_MARGIN of the better piece and better than the worse one,
        unless one piece lies wholly under the other (what an object rests on: a holder's edge).
        A two-coloured mug's red side and grey side, a bottle and its label, fit a mug or a bottle
        together while the smaller part alone fits nothing well; and so are such pieces whose
        boxes mostly fill one space (`_overlap`): two solids cannot."""
        if not expected:
            return [d for d in dets if d is not None]
        pieces_of = pieces_of if pieces_of is not None else list(range(len(clusters)))

        def best(d):
            """(cost, index) of the expected entry `d` matches best; index -1 when another entry
            of the same label is within CLEAR_BEST_MARGIN (two books of one size without colours
            tie: a piece of either is no piece of one)."""
            if d is None:
                return np.inf, -1
            costs = np.array([match_cost(d, e) for e in expected])
            k = int(np.argmin(costs))
            twins = [i for i, e in enumerate(expected) if i != k and e.label == expected[k].label]
            clear = np.all(costs[twins] >= costs[k] + CLEAR_BEST_MARGIN)
            return float(costs[k]), k if clear else -1
        pieces = {k: (c, d, best(d), {pieces_of[k]}) for k, (c, d) in enumerate(zip(clusters, dets))}
        gaps = self._close_pairs(clusters, centres)
        new_keys = itertools.count(len(pieces))     # a union is a new piece: pairs tried before do not apply
        while gaps:
            pair = min(gaps, key=lambda ab: (gaps[ab], ab))    # the nearest two pieces not yet tried
            del gaps[pair]
            (a, da, ca, ka), (b, db, cb, kb) = pieces[pair[0]], pieces[pair[1]]
            union = np.concatenate([a, b])
            d = detect(union)
            if d is not None and not (_box_holds(d, centres[a]) and _box_holds(d, centres[b])):
                continue       # the union's box is one piece's: the other lies outside it (a second object)
            cost, entry = best(d)
            main = da if len(a) >= len(b) else db      # the larger piece (None: too thin for a box)
            if d is not None and main is not None:
                # a catalogue gives the colour of an object's main material (a shrub is green over
                # its brown pot, a frame's picture is not its colour), or of all of it (a
                # two-coloured mug enrolled as the mean of its sides): the union takes the one it fits
                own = (d.mean_rgb, d.colour)
                d.mean_rgb, d.colour = main.mean_rgb, main.colour
                as_main = best(d)
                if as_main[0] <= cost:
                    cost, entry = as_main
                else:
                    d.mean_rgb, d.colour = own
            same_entry = entry == ca[1] == cb[1] != -1
            joined = bool(ka & kb) and height is not None and not _one_under_other(height[a], height[b])
            one_object = joined and (cost <= min(ca[0], cb[0]) + JOINED_MARGIN and cost < max(ca[0], cb[0])
                                     or _overlap(da, db) >= SAME_SPACE_SHARE)
            if cost <= self.config.match_max_cost and (cost < min(ca[0], cb[0]) or same_entry or one_object):
                del pieces[pair[0]], pieces[pair[1]]
                key = next(new_keys)
                pieces[key] = (union, d, (cost, entry), ka | kb)
                # the union's gap to a third piece is the nearer of its two pieces' gaps
                for k in list(pieces)[:-1]:
                    near = [gaps.pop(tuple(sorted((k, old))), np.inf) for old in pair]
                    if min(near) < np.inf:
                        gaps[(k, key)] = min(near)
        return [d for _, d, _, _ in pieces.values() if d is not None]

    def _close_pairs(self, clusters: list, centres: np.ndarray) -> dict:
        """{(i, j): gap} for the clusters whose nearest voxels are closer than `merge_gap_m`."""
        limit = self.config.merge_gap_m
        lo = [centres[c].min(axis=0) for c in clusters]
        hi = [centres[c].max(axis=0) for c in clusters]
        trees = [cKDTree(centres[c]) for c in clusters]
        gaps = {}
        for i, j in itertools.combinations(range(len(clusters)), 2):
            if np.any(lo[i] - hi[j] >= limit) or np.any(lo[j] - hi[i] >= limit):
                continue                                # bounding boxes already too far apart
            gap = float(trees[i].query(centres[clusters[j]], distance_upper_bound=limit)[0].min())
            if gap < limit:
                gaps[(i, j)] = gap
        return gaps

    def _rests_on_fixture(self, vox: Voxels, members: np.ndarray, fixtures) -> bool:
        """Whether this cluster's lowest voxels are within `max_support_gap_m` of a fixture.
        Lowest in z, not in height: a statue broader than its plinth hides the plinth's top, so
        its foot lies off the plane's seen footprint and measures its height from the floor."""
        low = vox.centres[_lowest(vox.centres[:, 2], members)]
        return any(points_in_box(low, part, self.config.max_support_gap_m).any() for part in fixtures)

    def _out_of_reach(self, vox: Voxels, members: np.ndarray) -> bool:
        return bool(np.hypot(vox.centres[members, 0], vox.centres[members, 1]).min() > self.config.arm_reach_m)

    def _rests_on_other(self, vox: Voxels, members: np.ndarray, comp: np.ndarray, tree) -> bool:
        """Whether another cluster lies just below this one's lowest voxels (within
        `rest_reach_m` sideways and `max_support_gap_m` down) and reaches its support."""
        cfg = self.config
        low = _lowest(vox.height, members)
        bottom = vox.height[low].min()
        hits = tree.query_ball_point(vox.centres[low, :2], cfg.rest_reach_m)
        near = np.unique(np.concatenate([np.asarray(x, int) for x in hits] + [np.zeros(0, int)]))
        me = comp[members[0]]
        near = near[comp[near] != me]
        below = near[(vox.height[near] < bottom) & (vox.height[near] > bottom - cfg.max_support_gap_m)]
        return any(vox.height[comp == c].min() <= cfg.max_support_gap_m for c in np.unique(comp[below]))

    def _detection(self, obs, vox, members, pts, uv, support, height, planes, limits,
                   noise: L515Noise = SENSOR, slopes=()) -> Detection | None:
        cfg = self.config
        max_extent_m, max_height_m = limits
        in_cluster = np.zeros(len(vox.counts), bool)
        in_cluster[members] = True
        sel = in_cluster[vox.inverse]
        p = pts[sel]
        # The highest plane under a good share of the cluster: a coarse footprint must not let
        # part of a book fall through to the floor.
        share = np.bincount(support[sel], minlength=len(planes)) / sel.sum()
        plane = max((planes[k] for k in np.flatnonzero(share >= 0.1)), key=lambda q: q.z0)
        h = plane.height(p)
        if np.percentile(h, 99) > max_height_m:
            return None
        if not stands_out_of_noise(p, h, obs.T_base_cam[:3, 3], sensor=noise):
            return None          # a speck of the plane's own depth noise at its range (cluster.py)
        if _reaches_plane_above(p, plane, planes):
            return None          # a shelf's side panel or back wall, not an object
        if _under_furniture(p, plane, planes):
            return None          # on the floor beneath the table top: legs, not objects
        mask = pixels_to_mask(uv[sel], obs.depth_m.shape)
        if image_width_px(mask) <= EDGE_BAND_PX:
            return None          # a depth edge's band, not an object (EDGE_BAND_PX)
        # leaning on a configured slope (a book wedge), the object is fitted on the slope, its own support
        box = (box_on_slope(p, slopes, plane.z0) if slopes else None) or object_box(
            obs, mask, plane, float(np.percentile(h, 1)), max_gap_m=cfg.max_support_gap_m)
        if box is None or box.size.max() > max_extent_m:
            return None
        face_on = box.size.min() < cfg.min_extent_m
        if face_on:
            # thin along the line of sight: an object's face seen head-on (a cube in a slot at
            # eye level shows one face), whose depth the camera cannot measure, so it gets some
            # depth behind the face and its size is a lower bound; thin across it: a board's edge
            if not along_line_of_sight(box, obs.T_base_cam[:3, 3])[int(np.argmin(box.size))]:
                return None      # a sliver of a surface seen edge-on
            thicken_away_from(box, obs.T_base_cam[:3, 3], cfg.min_extent_m)
        rgb = mean_rgb(obs.rgb, mask)
        return Detection(id="", label="object", category="object", mask=mask, score=0.5, box=box,
                         mean_rgb=rgb, colour=main_colour(obs.rgb, mask),
                         extra={"backend": "classical", "support_z_m": round(plane.z0, 4),
                                "n_points": int(sel.sum()), "depth_unseen": face_on,
                                "lower_bound_sides": lower_bound_sides(box, mask, obs.intrinsics, obs.T_base_cam,
                                                                       obs.depth_m, plane),
                                "range_smear_m": range_smear_sides_m(box, obs.T_base_cam[:3, 3]),
                                "along_sight": [bool(x) for x in along_line_of_sight(box, obs.T_base_cam[:3, 3])]})


CLEAR_BEST_MARGIN = 0.1        # _merge_pieces: a piece's best entry beats its same-label twins by this much
JOINED_MARGIN = 0.1            # _merge_pieces: pieces cut by colour alone join when their union fits this close
UNDER_BAND_M = 0.015           # _one_under_other: a piece topping out this close above the other's foot is under it


SAME_SPACE_SHARE = 0.5         # _merge_pieces: pieces whose boxes share this much of the smaller are one object
UNION_HOLDS_SHARE = 0.5        # _box_holds: a union's box holds at least this share of each piece's voxels
UNION_HOLDS_MARGIN_M = 0.03    # ... within this margin (a tilted book's cover, flying pixels and a voxel off its box)


def _box_holds(d: Detection, points: np.ndarray) -> bool:
    """Whether `d`'s box holds most of `points` (a piece's voxel centres). A union's box fitted to
    the larger of two pieces apart in the image (two books on neighbouring pedestals joined by a
    sliver of an edge) holds that piece only, and the other object would vanish into it
    (pick-84-00005: a red book lying flat on its pedestal was never reported)."""
    return float(np.mean(points_in_box(points, d.box, UNION_HOLDS_MARGIN_M))) >= UNION_HOLDS_SHARE


def _overlap(a: Detection | None, b: Detection | None, steps: int = 5) -> float:
    """The share of the smaller of two detections' boxes inside the larger (on a grid of points):
    two solid objects cannot fill one space, so pieces whose boxes mostly coincide are one object
    (the white and the pink side of a book on a wedge, each fitted on the wedge as a whole book)."""
    if a is None or b is None:
        return 0.0
    small, large = sorted((a.box, b.box), key=lambda x: float(np.prod(x.size)))
    grid = (np.stack(np.meshgrid(*[np.linspace(-0.4, 0.4, steps)] * 3, indexing="ij"), -1).reshape(-1, 3) * small.size)
    return float(points_in_box(small.center + grid @ small.rotation.T, large).mean())


def _one_under_other(height_a: np.ndarray, height_b: np.ndarray) -> bool:
    """Whether one piece (its voxels' heights above the support) lies wholly under the other: its
    top no higher than UNDER_BAND_M above the other's lowest point. What an object rests on (a
    holder's edge, a pedestal's rim) touches it without being part of it."""
    return bool(height_a.max() <= height_b.min() + UNDER_BAND_M or height_b.max() <= height_a.min() + UNDER_BAND_M)

EXPECTED_SIZE_MARGIN = 1.15     # a measured box exceeds its catalogue size by noise and lean


def _size_limits(cfg: ClassicalConfig, expected) -> tuple[float, float]:
    """(largest footprint side, tallest height) of an object: the configured limits, raised to
    fit the largest object the scene expects (a floor lamp, a painting on its easel). Anything
    larger is furniture or a wall."""
    sizes = [np.asarray(e.size_m, float) for e in expected if e.size_m is not None]
    longest = max((float(s.max()) for s in sizes), default=0.0) * EXPECTED_SIZE_MARGIN
    return max(cfg.max_object_extent_m, longest), max(cfg.max_object_height_m, longest)


# A cluster whose image is at most this many pixels across (image_width_px) is a depth edge's band:
# the sensor mixes the two sides of an edge over a pixel or so each way (flying pixels, and depth
# registered to colour a few pixels off), so a strip that narrow shows no object's shape. The
# front edge of a shelf's side panel 2.5-2.7 m away, just outside the shelf's configured box, was
# seen as three 2-px strips with the floor's colour, named the white bottle and two books where
# nothing stands (place-97-00001). The thinnest book (1.5 cm) spans 3 px 3 m away.
EDGE_BAND_PX = 2


def image_width_px(mask: np.ndarray) -> float:
    """How many pixels across `mask` is: the median count of its rows or of its columns,
    whichever is narrower (a standing strip's rows, a lying one's columns)."""
    m = np.asarray(mask, bool)
    rows, cols = m.sum(axis=1), m.sum(axis=0)
    if not rows.any():
        return 0.0
    return float(min(np.median(rows[rows > 0]), np.median(cols[cols > 0])))


def _lowest(per_voxel: np.ndarray, members: np.ndarray, band_m: float = 0.01) -> np.ndarray:
    """The cluster's voxels within `band_m` of its lowest value of `per_voxel` (z, or height
    above the support)."""
    v = per_voxel[members]
    return members[v <= v.min() + band_m]


def _foot_hidden(depth_m: np.ndarray, uv: np.ndarray, *, look_px: int = 6, nearer_m: float = 0.02,
                 share: float = 0.5) -> bool:
    """Whether something nearer the camera (or the image's bottom edge) hides the foot of the
    object at pixels `uv`: in most of its columns, a pixel a few rows below its lowest one is
    nearer by `nearer_m`, or out of the image."""
    u, v = uv[:, 0], uv[:, 1]
    order = np.lexsort((-v, u))                      # per column, the lowest pixel first
    cols, first = np.unique(u[order], return_index=True)
    v_foot = v[order][first]
    d_foot = depth_m[v_foot, cols]
    rows = v_foot[:, None] + np.arange(2, look_px + 1)[None]
    out_of_view = rows >= depth_m.shape[0]
    below = depth_m[np.minimum(rows, depth_m.shape[0] - 1), cols[:, None]]
    nearer = np.isfinite(below) & (below > 0) & (below < d_foot[:, None] - nearer_m)
    return bool(np.mean(np.any(nearer | out_of_view, axis=1)) >= share)


def _on_fixtures(pts: np.ndarray, camera: np.ndarray, parts, margin_m: float) -> np.ndarray:
    """Points that are a configured fixture's: on or in one of its boxes, allowing each point the
    sensor's range error along its ray (3 sigma at its range) and `margin_m` sideways. A fixed
    margin left a shelf's back wall, read a centimetre off its plane at 1.5 m, as a row of
    object-sized fragments (named as catalogue objects)."""
    on = np.zeros(len(pts), bool)
    if not len(pts) or not parts:
        return on
    along = pc.range_tolerance_m(np.linalg.norm(pts - camera, axis=1), floor_m=margin_m)
    for part in parts:
        on |= pc.in_box_along_rays(pts, camera, part, along_m=along, margin_m=margin_m)
    return on


def _fixture_tops(parts) -> list[tuple[Plane, float]]:
    """Support planes on the level tops of configured fixtures (pedestals, plinths), each with the
    height of its fixture's bottom (what it stands on)."""
    tops = ((box_top_plane(f.center, f.size, f.rotation), _bottom_z(f)) for f in parts)
    return [(p, z) for p, z in tops if p is not None]


def _bottom_z(part) -> float:
    return float(np.asarray(part.center, float)[2] - np.abs(np.asarray(part.rotation, float)[2]) @ np.asarray(part.size, float) / 2)


def _reaches_plane_above(points: np.ndarray, support: Plane, planes: list[Plane], tol_m: float = 0.02) -> bool:
    top = points[np.argmax(points[:, 2])][None]
    for q in planes:
        if q.z0 > support.z0 + 0.05 and q.covers(top)[0] and abs(q.height(top)[0]) < tol_m:
            return True
    return False


def _under_furniture(points: np.ndarray, support: Plane, planes: list[Plane]) -> bool:
    """On the lowest plane (the floor) and beneath a higher plane that covers it (a table)."""
    if len(planes) < 2 or support.z0 > min(q.z0 for q in planes) + 1e-6:
        return False
    centroid = points.mean(axis=0, keepdims=True)
    top = points[:, 2].max()
    return any(q.z0 > top and q.covers(centroid)[0] for q in planes if q is not support)


class _Timer:
    def __init__(self, should_stop: Callable[[], bool] = lambda: False):
        import time
        self._now = time.perf_counter
        self._t = self._now()
        self._should_stop = should_stop
        self.laps: dict = {}

    def lap(self, name: str) -> None:
        """A stage ended; CanceledError when the segmenting is to stop."""
        t = self._now()
        self.laps[name] = t - self._t
        self._t = t
        if self._should_stop():
            raise CanceledError(f"segmenting stopped after {name}: its look is no longer wanted")
