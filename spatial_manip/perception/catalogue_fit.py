"""A catalogued object seen in part: its box from its catalogue size, posed on what is in view.

A box fitted to visible points measures only what is visible. A book whose foot is hidden by
its wedge reads 4 cm short, a book leaning 45 degrees behind another reads as a cube, and a
statue cut by the image's edge has its centre 20 cm off. When a scene config lists the object's
size (`ExpectedObject.size_m`) and the measured box disagrees with it, this searches for the
pose of a box of exactly that size that agrees with the depth image:

1. orientations: the measured box's, and boxes turned about the footprint's axes (upright to
   lying, in 5 degree steps), each with every assignment of the catalogue's three sides;
2. the visible points (trimmed) must fit inside the box, which fixes it up to the slack between
   the catalogue side and the visible extent on each axis; the slack goes to one end or the
   other (the hidden side) or is split;
3. each candidate is rendered against the depth image: a pixel whose depth lies well *behind*
   the box's front face sees through where the box would be, which refutes it. Pixels where
   something nearer hides the box, with no depth, or outside the image say nothing. The box may
   not reach below the plane it rests on.
The candidate seen through least (then with the points nearest its faces) wins, if it is seen
through on few enough pixels; otherwise the measured box stays.

    box = fit_catalogue_box(obs, mask, (0.023, 0.152, 0.226), plane=plane)
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from spatial_manip.geometry.boxes import Box3D, _canonical, leaning_frames, min_area_rect_angle, surface_residual
from spatial_manip.camera_model import pixel_rays, valid_depth_mask
from spatial_manip.geometry.pointcloud import depth_edge_pixels
from spatial_manip.transforms import box_corners
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.attributes import book_size_class
from spatial_manip.perception.labelling import (no_side_measured, one_name_per_space, refuse, rename, sure_fit,
                                                words_may_name)
from spatial_manip.perception.planes import plane_under


@dataclass(frozen=True)
class CatalogueFitConfig:
    consistent_m: float = 0.015     # a measured box within this of the catalogue size (per side) is kept
    inside_tol_m: float = 0.015     # the visible extent may exceed a catalogue side by this (noise)
    see_through_m: float = 0.02     # depth this far behind a candidate's far side sees through it
    tie_scale_m: float = 0.2        # gap and residual cost their length / this (1 cm = 5% seen through)
    max_see_through: float = 0.2    # a fit seen through on a larger share of its pixels is refused
    below_plane_m: float = 0.01     # how far a candidate may reach below its support plane
    tilt_step_deg: float = 5.0
    max_points: int = 400
    max_rays: int = 1200
    render_top: int = 48            # candidates rendered (those whose faces the points lie on best)
    refine_top: int = 4             # candidates whose slack placement is searched in full

    def __post_init__(self):
        if not self.tie_scale_m > 0:
            raise ValueError(f"tie_scale_m must be > 0, got {self.tie_scale_m}")
        for name in ("consistent_m", "inside_tol_m", "see_through_m", "below_plane_m"):
            v = getattr(self, name)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite distance >= 0, got {v}")
        if not 0 < self.max_see_through <= 1:
            raise ValueError(f"max_see_through is a share in (0, 1], got {self.max_see_through}")
        if not 0 < self.tilt_step_deg <= 45:
            raise ValueError(f"tilt_step_deg must be in (0, 45], got {self.tilt_step_deg}")


def size_agrees(measured, catalogue, tol_m: float) -> bool:
    """The measured box's sides match the catalogue's (both sorted) within `tol_m` each."""
    return bool(np.all(np.abs(np.sort(np.asarray(measured, float)) - np.sort(np.asarray(catalogue, float))) <= tol_m))


def fit_catalogue_box(obs: RGBDObservation, mask: np.ndarray, size_m, *, measured: Box3D | None = None,
                      plane=None, config: CatalogueFitConfig | None = None) -> Box3D | None:
    """The box of catalogue size `size_m` that best agrees with the depth, or None when none is
    seen through on few enough pixels. `plane` (n . p + d = 0, n up) is what the object rests
    on; `measured` (the fitted box) adds its orientation to the ones tried."""
    cfg = config or CatalogueFitConfig()
    size = np.asarray(size_m, float)
    if size.shape != (3,) or not np.all(np.isfinite(size)) or np.any(size <= 0):
        raise ValueError(f"a catalogue size is 3 positive sides in metres, got {size_m!r}")
    return _fit_either(obs, mask, base_cloud(obs, mask)[0], size, measured, plane, cfg)


def whole_size(exp) -> tuple | None:
    """The catalogue box of a listed object (`ExpectedObject`): its `size_m`, widened on each side
    to the most any enrolled view (`exp.views`) measured of it, for an object on the work surface.
    Each view boxes only what it sees: a mug seen with its handle hidden is 9.1 cm across, from
    the side 12.5 cm, and a box fitted to the first cannot hold the second's points but tilted
    50 degrees, which makes the standing mug 9.1 cm 'tall' (objects-85-00003, 'the shorter mug').
    Footprint sides are matched longest to longest, heights to heights. A distant entry keeps its
    size: a painting's view from its edge boxes its easel's diagonal, no side of the painting."""
    if exp.size_m is None:
        return None
    if not exp.views or exp.placement == "distant":
        return exp.size_m
    sides = [tuple(exp.size_m)] + [tuple(v[0]) for v in exp.views if v and v[0] is not None and len(v[0]) == 3]
    foot = np.array([sorted(s[:2], reverse=True) for s in sides], float)
    own = sorted(exp.size_m[:2], reverse=True)
    longest, shortest = max(own[0], float(foot[:, 0].max())), max(own[1], float(foot[:, 1].max()))
    widened = {0: longest, 1: shortest} if exp.size_m[0] >= exp.size_m[1] else {0: shortest, 1: longest}
    return (widened[0], widened[1], max(float(exp.size_m[2]), max(float(s[2]) for s in sides)))


def _fit_either(obs, mask, pts, size, measured, plane, cfg, edges=None) -> Box3D | None:
    """_fit on all the mask's points `pts`, or, when no box fits them, on its surface_points."""
    box = _fit(obs, mask, pts, size, measured, plane, cfg)
    if box is None:
        inner = surface_points(obs, mask, edges)
        if len(inner) < len(pts):
            box = _fit(obs, mask, inner, size, measured, plane, cfg)
    return box


def rest_on_support(obs: RGBDObservation, mask: np.ndarray, pts: np.ndarray, box: Box3D | None, plane,
                    cfg: CatalogueFitConfig) -> Box3D | None:
    """`box` lowered along the plane's normal onto `plane` (what its points rest on, planes.plane_under),
    when it floats above it, still holds the points' top (trimmed, within `inside_tol_m`) and is seen
    through on at most `max_see_through` of its pixels. For an object beyond the work surface, which
    stands on the floor or a plinth: seen in part, cut by the image's edge above, a catalogue box is
    pushed up where no pixel refutes it (a painting 1.4 m away, its canvas's lower 18 cm in view,
    boxed 15 cm above its plinth, its centre 15 cm high: pick-66-00001, -00005). `box` otherwise."""
    if box is None or plane is None or len(pts) < 10:
        return box
    up = np.asarray(plane.normal, float)
    corners = box_corners(box.center, box.size, box.rotation)
    lift = float(np.min(corners @ up + plane.d))
    top_room = float(np.max(corners @ up) - np.quantile(pts @ up, 0.98)) + cfg.inside_tol_m
    drop = min(lift, top_room)
    if lift <= cfg.below_plane_m or drop < lift:
        return box
    centre = np.asarray(box.center, float) - lift * up
    view = _DepthView(obs, cfg)
    _, seen_through, gap = view.score((centre, np.asarray(box.rotation, float), np.asarray(box.size, float)), pts, mask)
    if seen_through > cfg.max_see_through:
        return box
    return Box3D(center=centre, size=np.asarray(box.size, float), rotation=np.asarray(box.rotation, float),
                 mode="catalogue", n_points=box.n_points, n_region=box.n_region, quality=float(1.0 - seen_through),
                 residual_m=float(gap))


# Flying pixels are dropped from an object's points only when at least this share of them remains:
# an upright book seen spine-on is edge from side to side, and then all its points are kept.
MIN_SURFACE_SHARE = 0.5


def surface_points(obs: RGBDObservation, mask: np.ndarray, edges: np.ndarray | None = None) -> np.ndarray:
    """The mask's base-frame points off the depth edges (geometry.pointcloud.depth_edge_pixels:
    a 3x3 depth span beyond the sensor's noise at that range), where an L515's flying pixels lie
    strewn between the object and what is behind it and stretch its extent past any catalogue
    side (the book leaning 50 deg on its wedge read 27 cm deep, pick-51-00005); all of them when
    fewer than MIN_SURFACE_SHARE would remain. Used only when no box holds all the points: where
    one does, the edges' true points place it better. `edges`: depth_edge_pixels of the frame,
    when the caller computed it once for all its masks."""
    mask = np.asarray(mask, bool)
    inner = mask & ~(depth_edge_pixels(obs.depth_m) if edges is None else edges)
    valid = obs.depth_m > 0
    if np.count_nonzero(inner & valid) < max(10, MIN_SURFACE_SHARE * np.count_nonzero(mask & valid)):
        inner = mask
    return base_cloud(obs, inner)[0]


def _fit(obs, mask, pts, size, measured, plane, cfg) -> Box3D | None:
    """fit_catalogue_box on the mask's base-frame points `pts`."""
    if len(pts) < 10:
        return None
    pts = pts[:: max(1, len(pts) // cfg.max_points)]
    view = _DepthView(obs, cfg)
    candidates = _candidates(pts, size, measured, plane, cfg)
    if not candidates:
        return None
    # Rendering is the costly part: render only the candidates whose faces the points lie on best,
    # each with its slack away from the camera (most often the hidden side), and with its largest
    # level slack towards it (an object in front hides the near part: a flat book behind an
    # upright one, pick-21-00006). Upward slack is never turned: above a book, a background with
    # no depth refutes nothing, and a box may float there (pick-22-00002).
    up = np.asarray(plane.normal, float) if plane is not None else np.array([0.0, 0.0, 1.0])
    away = [c.away(view.eye) for c in candidates]
    near = sorted(range(len(candidates)), key=lambda i: candidates[i].residual(candidates[i].placed(away[i]), pts))
    first = sorted((min(view.score((candidates[i].placed(ends), candidates[i].R, candidates[i].size), pts, mask)[0]
                        for ends in candidates[i].placements(away[i], up)), i)
                   for i in near[: cfg.render_top])
    best = None
    for _, i in first[: cfg.refine_top]:
        c = candidates[i]
        for choice in itertools.product((-1, 0, 1), repeat=3):
            centre = c.placed(np.array(choice))
            if plane is not None and not c.above(centre, plane, cfg.below_plane_m):
                continue
            s = view.score((centre, c.R, c.size), pts, mask)
            if best is None or s[0] < best[0][0]:
                best = (s, centre, c)
    if best is None or best[0][1] > cfg.max_see_through:
        return None
    (_, seen_through, gap), centre, c = best
    R, sz = _canonical(c.R, c.size)
    return Box3D(center=centre, size=sz, rotation=R, mode="catalogue", n_points=len(pts),
                 n_region=int(np.count_nonzero(mask)), quality=float(1.0 - seen_through),
                 residual_m=float(gap))


LEVEL_AXIS_MAX_COS = 0.5   # an axis within 60 degrees of vertical is not level


@dataclass
class _Candidate:
    R: np.ndarray          # box axes (columns) in base
    size: np.ndarray       # catalogue sides along them
    lo: np.ndarray         # trimmed visible extent along each axis
    hi: np.ndarray

    def placed(self, ends: np.ndarray) -> np.ndarray:
        """Centre with each axis' slack put beyond the visible part's high end (+1), its low
        end (-1), or split (0)."""
        slack = self.size - (self.hi - self.lo)
        centre_local = (self.lo + self.hi) / 2 + np.asarray(ends, float) * np.maximum(slack, 0) / 2
        return self.R @ centre_local

    def placements(self, away: np.ndarray, up: np.ndarray, min_slack_m: float = 0.01) -> list[np.ndarray]:
        """`away`, and `away` with the level axis of the largest slack (at least `min_slack_m`)
        sent the other way."""
        slack = np.where(np.abs(self.R.T @ up) < LEVEL_AXIS_MAX_COS, self.size - (self.hi - self.lo), 0.0)
        k = int(np.argmax(slack))
        if slack[k] < min_slack_m:
            return [away]
        turned = np.array(away, float)
        turned[k] = -turned[k] if turned[k] else 1.0
        return [away, turned]

    def away(self, eye: np.ndarray) -> np.ndarray:
        """Each axis' slack on the side away from the camera: the hidden side, most often."""
        mid = self.R @ ((self.lo + self.hi) / 2)
        return np.sign(self.R.T @ (mid - eye))

    def residual(self, centre: np.ndarray, pts: np.ndarray) -> float:
        return surface_residual((pts - centre) @ self.R, self.size / 2)

    def above(self, centre: np.ndarray, plane, tol_m: float) -> bool:
        corners = box_corners(centre, self.size, self.R)
        return bool(np.min(corners @ np.asarray(plane.normal, float) + plane.d) >= -tol_m)


_SIDE_ORDERS = np.array(list(set(itertools.permutations(range(3)))))   # the order the candidates were always listed in


def _candidates(pts: np.ndarray, size: np.ndarray, measured: Box3D | None, plane, cfg) -> list[_Candidate]:
    # every orientation's extent in one batch: a quantile per orientation cost 3x (issue 42)
    frames = _orientations(pts, measured, plane, cfg.tilt_step_deg)
    lo, hi = np.quantile(np.matmul(pts, np.stack(frames)), [0.02, 0.98], axis=1)    # (orientations, 3) each
    sides = size[_SIDE_ORDERS]
    fits = np.all((hi - lo)[:, None, :] <= sides + cfg.inside_tol_m, axis=2)       # (orientations, side orders)
    return [_Candidate(frames[k], sides[j].copy(), lo[k], hi[k]) for k, j in zip(*np.nonzero(fits))]


def _orientations(pts: np.ndarray, measured: Box3D | None, plane, step_deg: float) -> list[np.ndarray]:
    """The measured box's axes, and for each footprint yaw (the measured box's and the points'
    minimum-area rectangle's) the upright frame turned about either horizontal axis."""
    up = np.asarray(plane.normal, float) if plane is not None else np.array([0.0, 0.0, 1.0])
    out = [np.asarray(measured.rotation, float)] if measured is not None else []
    yaws = [min_area_rect_angle(pts[:, :2])]
    if measured is not None:
        yaws.append(measured.yaw_rad)
    for yaw in yaws:
        R_yaw = _upright(up, yaw)
        out += [R_yaw, *leaning_frames(R_yaw, step_deg)]
    return out


def _upright(up: np.ndarray, yaw: float) -> np.ndarray:
    x = np.array([np.cos(yaw), np.sin(yaw), 0.0])
    x -= (x @ up) * up
    x /= np.linalg.norm(x)
    return np.stack([x, np.cross(up, x), up], axis=1)


class _DepthView:
    """The depth image as rays from the camera, for rendering a box against it."""

    def __init__(self, obs: RGBDObservation, cfg: CatalogueFitConfig):
        self.cfg = cfg
        self.obs = obs
        T = np.asarray(obs.T_base_cam, float)
        self.R_bc, self.eye = T[:3, :3], T[:3, 3]
        self.valid = valid_depth_mask(obs.depth_m)

    def score(self, box, pts: np.ndarray, mask: np.ndarray) -> tuple[float, float, float]:
        """(cost, share of the box's pixels that see through it, median gap between the
        object's visible surface and the box's front face): lower is better.

        A pixel sees through the box when its depth lies behind the box's far side: the ray
        crossed the whole box and met nothing. (A catalogue box bounds its object, which need
        not fill it, so only a ray that clears the far side refutes it.) The front gap and the
        points' distance to the faces break ties between boxes nothing refutes."""
        centre, R, size = box
        u, v = self._pixels(centre, R, size)
        if u.size == 0:
            return np.inf, 1.0, np.inf
        x, y = pixel_rays(u, v, self.obs.intrinsics)
        dirs = np.stack([x, y, np.ones_like(x)], axis=1) @ self.R_bc.T      # z-depth 1 along each ray
        t_in, t_out = _slab(self.eye, dirs, centre, R, size / 2)
        hit = np.isfinite(t_in)
        if not np.any(hit):
            return np.inf, 1.0, np.inf
        u, v, t_in, t_out = u[hit], v[hit], t_in[hit], t_out[hit]
        ok = self.valid[v, u]
        seen = self.obs.depth_m[v, u]
        through = np.count_nonzero(ok & (seen > t_out + self.cfg.see_through_m)) / u.size
        own = ok & mask[v, u]
        gap = float(np.median(np.maximum(seen[own] - t_in[own], 0.0))) if np.any(own) else 0.0
        residual = surface_residual((pts - centre) @ R, size / 2)
        return through + (gap + residual) / self.cfg.tie_scale_m, through, gap

    def _pixels(self, centre, R, size) -> tuple[np.ndarray, np.ndarray]:
        """A grid of at most `max_rays` pixels over the box's projection, clipped to the image."""
        corners = box_corners(centre, size, R)
        cam = (corners - self.eye) @ self.R_bc
        if np.any(cam[:, 2] <= 0.01):
            return np.empty(0, int), np.empty(0, int)
        intr = self.obs.intrinsics
        h, w = self.valid.shape
        pu = intr.fx * cam[:, 0] / cam[:, 2] + intr.cx
        pv = intr.fy * cam[:, 1] / cam[:, 2] + intr.cy
        u0, u1 = max(0, int(pu.min())), min(w - 1, int(np.ceil(pu.max())))
        v0, v1 = max(0, int(pv.min())), min(h - 1, int(np.ceil(pv.max())))
        if u1 < u0 or v1 < v0:
            return np.empty(0, int), np.empty(0, int)
        stride = max(1, int(np.ceil(np.sqrt((u1 - u0 + 1) * (v1 - v0 + 1) / self.cfg.max_rays))))
        uu, vv = np.meshgrid(np.arange(u0, u1 + 1, stride), np.arange(v0, v1 + 1, stride))
        return uu.ravel(), vv.ravel()


def _slab(eye: np.ndarray, dirs: np.ndarray, centre: np.ndarray, R: np.ndarray,
          half: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ray parameters (z-depths, for rays scaled to unit z) where each ray enters and leaves
    the box; inf for both on a miss (slab test in the box's frame)."""
    o = R.T @ (eye - centre)
    d = dirs @ R
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (-half - o) / d, (half - o) / d
    t_lo = np.nanmax(np.minimum(t1, t2), axis=1)
    t_hi = np.nanmin(np.maximum(t1, t2), axis=1)
    miss = (t_lo > t_hi) | (t_hi <= 0)
    return np.where(miss, np.inf, np.maximum(t_lo, 0)), np.where(miss, np.inf, t_hi)


def settle_names_by_depth(obs: RGBDObservation, detections, expected, planes,
                          config: CatalogueFitConfig | None = None) -> dict:
    """A part is never larger than its whole: a detection left unnamed between two listed objects
    (`extra["candidates"]`, labelling.assign_labels), or named after one whose catalogue box
    cannot hold what the depth shows while the runner-up's (`extra["runner_up"]`) can, is named
    after the one whose box, in some orientation, holds the visible points (within
    `inside_tol_m`, the sensor's error) when the other's cannot: a mug's box does not hold the
    14 cm cover of a book leaning on its wedge (pick-52-00005). Only what cannot be held
    settles it; how much of a box the depth sees through does not, since a bicycle sculpture or a
    frame fills its box no more than a book's box fills a mug's. Returns {id: catalogue box (or
    None)} of the detections it named, for complete_from_catalogue."""
    cfg = config or CatalogueFitConfig()
    by_id = {e.id: e for e in expected or () if e.id and e.size_m is not None}
    whole = {i: np.asarray(whole_size(e), float) for i, e in by_id.items()}
    settled = {}
    edges = _LazyEdges(obs)
    for d in detections:
        runner_up = d.extra.get("runner_up")
        further = []                      # the candidates after the first two
        if d.extra.get("weak_fit"):
            continue                      # fits no candidate well: that one box holds it says little
        if d.extra.get("candidates"):
            ids = [c["id"] for c in d.extra["candidates"][:2]]
            further = [c["id"] for c in d.extra["candidates"][2:] if c["id"] in by_id]
        elif runner_up and d.id in by_id and not size_agrees(d.box.size, whole[d.id], cfg.consistent_m):
            if _holds_measured(d, whole[d.id], cfg):
                # the measured box itself fits in the named entry's: the name stands, whatever the
                # stray points around it span (a large book leaning 49 degrees on its wedge, boxed
                # 20 x 27 x 3 cm, its points 7.6 cm deep with the wedge's edge and flying pixels, lost
                # its name to the armento rider's box and was no tilted book: pick-67-00004)
                continue
            ids = [d.id, runner_up["id"]]
        else:
            continue
        if len(ids) != 2 or not all(i in by_id for i in ids):
            continue
        pts = base_cloud(obs, d.mask)[0]
        if len(pts) < 10:
            continue
        plane = plane_under(pts, planes) if planes else None
        inner = surface_points(obs, d.mask, edges())
        def held_by(i):
            return any(_candidates(p[:: max(1, len(p) // cfg.max_points)], whole[i], d.box,
                                   plane, cfg) for p in (pts, inner))
        holds = [held_by(i) for i in ids]
        if holds[0] == holds[1] or (runner_up and holds[0]):
            continue                      # both or neither hold it, or the name given stands
        if _holds_measured(d, whole[ids[holds.index(False)]], cfg):
            continue                      # what it cannot hold is the range noise's spread, not the object
        if any(held_by(i) for i in further if i not in ids):
            # another candidate's box holds it too: the depth rules out one name, not all but one (a
            # book leaning edge on, 14 cm, fits no mug but the pagoda statue and its own book: pick-86-00004)
            continue
        win = holds.index(True)
        e, other = by_id[ids[win]], by_id[ids[1 - win]]
        if other.category == "book" and e.category != "book":
            # books standing together outgrow any one book's box: too large for a book is not yet
            # the other object, so a book's name gives way to a refusal (the words may choose)
            if runner_up:
                refuse(d, [e, other], f"the {other.label}'s catalogue box cannot hold what the depth shows, "
                                      f"the {e.label}'s can, but books standing together outgrow one book's")
            continue
        if not sure_fit(d, e):
            continue                      # a 5 cm piece of a book fits in a bottle's box, and no better
        rename(detections, d, e, f"the {other.label}'s catalogue box cannot hold what the depth shows; the {e.label}'s can")
        settled[d.id] = _fit_either(obs, d.mask, pts, whole[e.id], d.box, plane, cfg, edges())
    return settled


def _holds_measured(d, size, cfg: CatalogueFitConfig) -> bool:
    """Whether a box of catalogue `size` holds `d`'s measured box, each side shortened by the range
    noise's spread along it (`extra["range_smear_m"]`, as labelling.match_cost forgives it) and
    allowed `inside_tol_m`, sides matched in sorted order. Points smeared along the line of sight
    outgrow a thin object's box though the object fits: a bookend 2.5 m away, boxed 2.7 cm deeper
    than it is by 3 cm of range noise, was renamed a deeper entry whose box held the smear (a
    regression frame in test/perception/frames)."""
    smear = np.asarray(d.extra.get("range_smear_m") or (0.0, 0.0, 0.0), float)
    shed = np.maximum(np.asarray(d.box.size, float) - smear, 0.0)
    return bool(np.all(np.sort(shed) <= np.sort(np.asarray(size, float)) + cfg.inside_tol_m))


class _LazyEdges:
    """The frame's depth_edge_pixels, computed on the first call only (most frames need none)."""

    def __init__(self, obs: RGBDObservation):
        self.obs, self.edges = obs, None

    def __call__(self) -> np.ndarray:
        if self.edges is None:
            self.edges = depth_edge_pixels(self.obs.depth_m)
        return self.edges


def complete_from_catalogue(obs: RGBDObservation, detections, expected, planes,
                            config: CatalogueFitConfig | None = None) -> list[str]:
    """Settle names the depth can (settle_names_by_depth), then give each detection whose
    catalogue entry (same id) lists a size its catalogue box, posed on the depth, when the
    measured box disagrees with that size. Returns the ids whose boxes changed; each keeps its
    measured box in `extra["measured_box"]`."""
    cfg = config or CatalogueFitConfig()
    settled = settle_names_by_depth(obs, detections, expected, planes, cfg)
    edges = _LazyEdges(obs)
    sizes = {e.id: whole_size(e) for e in expected or () if e.id and e.size_m is not None}
    standing = {e.id for e in expected or () if e.id and e.placement == "distant"}   # on the floor or a plinth
    changed = []
    for d in detections:
        size = sizes.get(d.id)
        if size is None or size_agrees(d.box.size, size, cfg.consistent_m):
            continue
        pts = base_cloud(obs, d.mask)[0]
        plane = plane_under(pts, planes) if planes else None
        if settled.get(d.id) is not None:
            box = settled[d.id]
        else:
            box = _fit_either(obs, d.mask, pts, np.asarray(size, float), d.box, plane, cfg, edges())
        if d.id in standing:
            box = rest_on_support(obs, d.mask, pts, box, plane, cfg)
        if box is None:
            continue
        d.extra["measured_box"] = d.box.to_dict()
        d.box = box
        if d.category == "book":
            d.size_class = book_size_class(box.size)
        changed.append(d.id)
    _pose_tied_candidates(obs, detections, sizes, standing, planes, cfg, edges)
    one_name_per_space(detections)
    _id_the_unnamed(detections)
    return changed


def _pose_tied_candidates(obs: RGBDObservation, detections, sizes: dict, standing: set, planes,
                          cfg: CatalogueFitConfig, edges: "_LazyEdges") -> None:
    """Give each candidate the words may name a detection after (labelling.words_may_name: a tie,
    not a book) whose entry is placed distant (`standing`), or any entry when no side of the
    detection was measured in full (labelling.no_side_measured; frame place-124-00008), and lists a size, its catalogue box posed on the
    depth (a distant entry's resting on its support, rest_on_support, as complete_from_catalogue
    poses it), as `candidate["box"]` (centre, size, rotation), which the words' name takes with it:
    a distant painting seen as a 15 cm piece of its canvas has its centre 21 cm from the painting's,
    and a distance to it measured from that piece is 20 cm off (pick-66-00001)."""
    for d in detections:
        # a distant entry's only (standing), or a piece's with every side a lower bound: a near
        # object's piece lies near its centre, and each fit costs 0.3-1 s of the look (issue 42);
        # a book's never, since the words never name one (its fit would be thrown away)
        tied = [c for c in d.extra.get("candidates") or () if words_may_name(c)
                and (c.get("id") in standing or no_side_measured(d)) and sizes.get(c.get("id")) is not None]
        if not tied:
            continue
        pts = base_cloud(obs, d.mask)[0]
        plane = plane_under(pts, planes) if planes else None
        for c in tied:
            box = _fit_either(obs, d.mask, pts, np.asarray(sizes[c["id"]], float), d.box, plane, cfg, edges())
            if c["id"] in standing:
                box = rest_on_support(obs, d.mask, pts, box, plane, cfg)    # as its name would pose it
            if box is not None:
                c["box"] = {"center": box.center.tolist(), "size": box.size.tolist(), "rotation": box.rotation.tolist()}


def _id_the_unnamed(detections) -> None:
    """A fresh "object_<k>" id for each detection one_name_per_space left unnamed (it clears the
    id): two such in one look shared the id '' and the planner's scene refused them, an INTERNAL
    error ending the goal (pick-52-00015 at 4fafae7)."""
    taken = {d.id for d in detections if d.id}
    k = 0
    for d in detections:
        if d.id:
            continue
        while f"object_{k}" in taken:
            k += 1
        d.id = f"object_{k}"
        taken.add(d.id)
