"""Capture a shelf cell from one look at its front: the boards, side and divider panels as parts
of one `shelf` fixture, and the slots between them as `Region(kind="slot")`, written as the
simulator writes a shelf scene (sim/layouts.py `sample_shelf`), so SegmentationHints.from_scene
and the planner use a captured file exactly like a generated one.

    cap = capture_shelf(obs)          # cap.scene: the shelf object + slot regions
    cap.scene.save("config/workspace.json")

The camera looks at the shelf from the front at about board height, so the boards are seen
nearly edge-on and a horizontal plane fit finds few points on them. The shelf is found from its
vertical geometry instead (base frame, z up):
1. the back panel is the largest vertical plane in view (seen through every slot); its normal,
   turned towards the camera, is the shelf's front direction `n`;
2. the front face is the plane parallel to the back where the boards' and panels' front edges
   lie: the sharpest peak of the points' distance in front of the back;
3. every pixel's ray is classified where it crosses the front face: on it (a front edge), seen
   through it (the slot behind is open), or blocked in front of it (the robot): an occupancy
   grid over the face, in (across, up) cells, that counts only what the camera could see;
4. boards are the horizontal bands of that grid filled across the shelf (rows between them),
   panels the vertical bands filled over a row's height (columns); slots are the boxes between
   adjacent boards and panels, from the front face to the back panel.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from spatial_manip.errors import SpatialManipError
from spatial_manip.geometry.relations import UP
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.base import check_observation
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.planes import fit_horizontal_planes
from spatial_manip.scene import Region, Scene, SceneObject, Viewpoint

FACE, THROUGH = 0, 1            # grid channels: rays ending on the front face, rays passing through it


class ShelfCaptureError(SpatialManipError):
    """No shelf could be found in the look; says what to change."""


@dataclass(kw_only=True)
class ShelfConfig:
    seed: int = 0
    stride_px: int = 2
    plane_inlier_m: float = 0.01        # back panel RANSAC band (L515 noise is ~3 mm at 2 m)
    face_tol_m: float = 0.015           # a ray ending this close to the front face ends on an edge
    cell_m: float = 0.01                # face grid cell: boards and panels are 2 cm thick
    min_fill: float = 0.5               # a band is a board/panel when this much of what is seen of it is face
    min_seen: float = 0.25              # ...and at least this much of it is seen at all (not hidden by the robot)
    board_min_seen: float = 0.1         # the top panel at the image's edge is seen over a few pixel rows only
    min_slot_m: float = 0.06            # narrower gaps between face bands are noise, not slots
    back_thickness_m: float = 0.01      # the back panel is seen from the front only
    max_depth_m: float = 1.0            # a shelf is shallower than this (points beyond are not its front)

    def __post_init__(self):
        for name in ("plane_inlier_m", "face_tol_m", "cell_m", "min_slot_m", "back_thickness_m"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ShelfConfig.{name} must be positive, got {getattr(self, name)!r}")


@dataclass
class ShelfFrame:
    """The back panel's plane n.p + d = 0 (n horizontal, towards the camera); `across` = the
    viewer's right (up x n), so column 1 (viewer's left) has the smallest `across` coordinate."""
    n: np.ndarray
    d: float

    @property
    def across(self) -> np.ndarray:
        return np.cross(UP, self.n)

    @property
    def rotation(self) -> np.ndarray:
        return np.column_stack([self.n, self.across, UP])

    def local(self, p: np.ndarray) -> np.ndarray:
        """(N, 3) base points -> (out of the back, across, up)."""
        return np.column_stack([p @ self.n + self.d, p @ self.across, p[:, 2]])

    def world(self, s: float, u: float, z: float) -> np.ndarray:
        return self.n * (s - self.d) + self.across * u + UP * z


@dataclass
class Band:
    lo: float
    hi: float

    @property
    def mid(self) -> float:
        return (self.lo + self.hi) / 2


@dataclass
class ShelfCapture:
    scene: Scene
    frame: ShelfFrame
    front_m: float                       # the front face's distance in front of the back panel
    boards: list[Band]                   # top to bottom, each board's faces (m); zero-thick where the image cuts a row
    columns: list[list[Band]]            # per row, left to right, the panels' across extents
    floor_z: float | None
    notes: list[str] = field(default_factory=list)


def capture_shelf(obs: RGBDObservation, config: ShelfConfig | None = None) -> ShelfCapture:
    cfg = config or ShelfConfig()
    pts, _ = base_cloud(obs, check_observation(obs), stride=cfg.stride_px)
    cam = obs.T_base_cam[:3, 3]
    frame, back_in = back_plane(pts, cam, np.random.default_rng(cfg.seed), cfg)
    local, cam_u = frame.local(pts), float(cam @ frame.across)
    front = front_offset(local, back_in, cfg)
    grid, origin = face_grid(frame, pts, cam, front, cfg)
    sides = side_panels(grid, origin, cfg)
    boards, cut = open_ends(board_bands(grid, origin, sides, cfg), grid, origin, sides, cfg)
    per_row = [row_columns(local, cam_u, grid, origin, front, sides, Band(below.hi, above.lo), cfg)
               for above, below in zip(boards, boards[1:])]
    columns, guessed = continue_hidden([c for c, _ in per_row], [h for _, h in per_row], cfg.min_slot_m)
    floor_z = _floor(pts, boards[-1].hi, cfg)
    scene = shelf_scene(obs, frame, front, sides, boards, columns, floor_z, cfg)
    for r in scene.regions:
        r.extra["extent_truncated"] = [end for end, row in (("top", 1), ("bottom", len(columns)))
                                       if end in cut and r.row == row]
    notes = guessed + [
        f"the shelf runs out of the image at its {end}: the {end} row's slots are only as tall as what is seen; "
        "tilt the camera or edit their size" for end in cut]
    return ShelfCapture(scene, frame, front, boards, columns, floor_z, notes)


def back_plane(pts: np.ndarray, cam: np.ndarray, rng: np.random.Generator,
               cfg: ShelfConfig, iterations: int = 300) -> tuple[ShelfFrame, np.ndarray]:
    """The largest vertical plane (RANSAC on two points' xy line, then a least-squares line
    through its inliers), with its normal towards the camera, and its inlier mask."""
    xy = pts[:, :2]
    best, best_n = None, 0
    for _ in range(iterations):
        a, b = xy[rng.choice(len(xy), 2, replace=False)]
        t = b - a
        if np.linalg.norm(t) < 0.05:
            continue
        nrm = np.array([-t[1], t[0]]) / np.linalg.norm(t)
        count = int((np.abs((xy - a) @ nrm) < cfg.plane_inlier_m).sum())
        if count > best_n:
            best, best_n = (nrm, a), count
    if best is None:
        raise ShelfCaptureError("no vertical surface in view: point the camera at the shelf's front")
    nrm, a = best
    inl = np.abs((xy - a) @ nrm) < cfg.plane_inlier_m
    c = xy[inl].mean(axis=0)
    _, _, vt = np.linalg.svd(xy[inl] - c, full_matrices=False)
    n2 = vt[1] * np.sign(vt[1] @ (cam[:2] - c) or 1.0)
    frame = ShelfFrame(np.array([*n2, 0.0]), float(-n2 @ c))
    return frame, np.abs(frame.local(pts)[:, 0]) < cfg.plane_inlier_m


def front_offset(local: np.ndarray, back_in: np.ndarray, cfg: ShelfConfig) -> float:
    """The front face's distance from the back: the sharpest peak of the points' distance out
    of the back over the back panel's own extent. The boards' top faces and the panels' inner
    faces spread evenly over the depth, while every front edge lies at one distance."""
    u_lo, u_hi = np.percentile(local[back_in, 1], [1, 99])
    z_lo, z_hi = np.percentile(local[back_in, 2], [1, 99])
    s = local[:, 0]
    m = (s > 0.05) & (s < cfg.max_depth_m) & (local[:, 1] > u_lo) & (local[:, 1] < u_hi) \
        & (local[:, 2] > z_lo) & (local[:, 2] < z_hi)
    if m.sum() < 50:
        raise ShelfCaptureError("nothing stands in front of the largest vertical surface: is it a shelf's back? "
                                "(a wall alone has no boards)")
    hist, edges = np.histogram(s[m], bins=np.arange(0.05, cfg.max_depth_m, 0.005))
    # the peak over its surroundings: a sharp edge line, not a broad spread (the robot's stand)
    sharp = hist - ndimage.uniform_filter1d(hist.astype(float), 15)
    k = int(np.argmax(sharp))
    centre = (edges[k] + edges[k + 1]) / 2
    near = m & (np.abs(s - centre) < 0.01)
    return float(np.median(s[near]))


def face_grid(frame: ShelfFrame, pts: np.ndarray, cam: np.ndarray, front: float,
              cfg: ShelfConfig) -> tuple[np.ndarray, np.ndarray]:
    """(2, nu, nz) counts of rays ending on the front face and passing through it, per
    (across, up) cell where the ray crosses the face; rays blocked in front of it count nowhere,
    so a board behind the robot's stand is unseen, not missing. Returns the grid and its origin."""
    c = frame.local(cam[None])[0]
    if c[0] <= front + cfg.face_tol_m:
        raise ShelfCaptureError("the camera is not in front of the shelf's front face")
    p = frame.local(pts)
    on = np.abs(p[:, 0] - front) <= cfg.face_tol_m
    through = p[:, 0] < front - cfg.face_tol_m
    t = (c[0] - front) / (c[0] - p[:, 0])                 # where along camera -> point the ray crosses
    cross = c[1:] + t[:, None] * (p[:, 1:] - c[1:])
    cross[on] = p[on, 1:]                                 # an edge point is its own crossing
    keep = on | through
    origin = cross[keep].min(axis=0)
    ij = np.floor((cross - origin) / cfg.cell_m).astype(int)
    shape = tuple(ij[keep].max(axis=0) + 1)
    grid = np.zeros((2, *shape))
    for ch, m in ((FACE, on), (THROUGH, through)):
        np.add.at(grid[ch], (ij[m, 0], ij[m, 1]), 1)
    return grid, origin


def _fill(grid: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Per line of cells along `axis`'s other index: the fraction of seen cells that are face,
    and the fraction of cells seen at all."""
    face = grid[FACE] > grid[THROUGH]
    seen = grid.sum(axis=0) > 0
    n_seen = seen.sum(axis=axis)
    return face.sum(axis=axis) / np.maximum(n_seen, 1), n_seen / grid.shape[1 + axis]


def _bands(is_band: np.ndarray, start: float, cfg: ShelfConfig) -> list[Band]:
    """Runs of True cells as (lo, hi) coordinates; a one-cell dropout inside a board is noise."""
    closed = ndimage.binary_closing(is_band, np.ones(3, bool)) | is_band
    return _merge_close(_runs(closed, start, cfg.cell_m), cfg.min_slot_m)


def _merge_close(bands: list[Band], gap_m: float) -> list[Band]:
    out: list[Band] = []
    for b in bands:
        if out and b.lo - out[-1].hi < gap_m:
            out[-1] = Band(out[-1].lo, b.hi)
        else:
            out.append(b)
    return out


def side_panels(grid: np.ndarray, origin: np.ndarray, cfg: ShelfConfig) -> tuple[Band, Band]:
    """The outermost vertical bands filled over the face's whole height (dividers of a grid
    shelf are full-height too, but always inside)."""
    fill, seen = _fill(grid, axis=1)
    bands = _bands((fill > cfg.min_fill) & (seen > cfg.min_seen), origin[0], cfg)
    if len(bands) < 2:
        raise ShelfCaptureError(f"found {len(bands)} full-height side panel(s) on the shelf's front, need 2: "
                                "the whole shelf width must be in view")
    return bands[0], bands[-1]


def _window(grid: np.ndarray, origin: np.ndarray, u: Band, z: Band, cfg: ShelfConfig) -> np.ndarray:
    i0, i1 = (int(round((v - origin[0]) / cfg.cell_m)) for v in (u.lo, u.hi))
    j0, j1 = (int(round((v - origin[1]) / cfg.cell_m)) for v in (z.lo, z.hi))
    return grid[:, max(i0, 0):max(i1, 0), max(j0, 0):max(j1, 0)]


def board_bands(grid: np.ndarray, origin: np.ndarray, sides: tuple[Band, Band], cfg: ShelfConfig) -> list[Band]:
    """Horizontal bands filled across the inside of the shelf, top first (the top panel, the
    boards, the plinth when in view)."""
    inner = _window(grid, origin, Band(sides[0].hi, sides[1].lo), Band(origin[1], origin[1] + grid.shape[2] * cfg.cell_m), cfg)
    fill, seen = _fill(inner, axis=0)
    bands = _bands((fill > cfg.min_fill) & (seen > cfg.board_min_seen), origin[1], cfg)
    if len(bands) < 2:
        raise ShelfCaptureError(f"found {len(bands)} board(s) across the shelf, need 2 to bound a row of slots")
    return bands[::-1]


def open_ends(boards: list[Band], grid: np.ndarray, origin: np.ndarray, sides: tuple[Band, Band],
              cfg: ShelfConfig) -> tuple[list[Band], list[str]]:
    """Where the side panels go on past the top (bottom) board, the shelf runs out of the
    image there: a row whose ceiling (floor) is not seen. It is bounded by the last seen cell
    (a zero-thick band, written as no part) so its slots are as tall as what is seen."""
    face = np.zeros(grid.shape[2], bool)
    for side in sides:
        fill, _ = _fill(_window(grid, origin, side, Band(origin[1], origin[1] + grid.shape[2] * cfg.cell_m), cfg), axis=0)
        face |= fill > cfg.min_fill
    j = np.flatnonzero(face)
    top, bottom = origin[1] + (j[-1] + 1) * cfg.cell_m, origin[1] + j[0] * cfg.cell_m
    cut = []
    if top - boards[0].hi > cfg.min_slot_m:
        boards, cut = [Band(top, top)] + boards, cut + ["top"]
    if boards[-1].lo - bottom > cfg.min_slot_m:
        boards, cut = boards + [Band(bottom, bottom)], cut + ["bottom"]
    return boards, cut


def column_bands(grid: np.ndarray, origin: np.ndarray, sides: tuple[Band, Band], row: Band,
                 cfg: ShelfConfig) -> tuple[list[Band], list[Band]]:
    """Vertical bands filled over one row's height, left to right (side panels included), and
    the stretches of the row hidden from the camera; the row's top and bottom cells are left
    out, they are the boards' edges."""
    margin = 2 * cfg.cell_m
    u = Band(sides[0].hi, sides[1].lo)
    win = _window(grid, origin, u, Band(row.lo + margin, row.hi - margin), cfg)
    fill, seen = _fill(win, axis=1)
    start = origin[0] + max(int(round((u.lo - origin[0]) / cfg.cell_m)), 0) * cfg.cell_m
    ok = seen > cfg.min_seen
    bands = _bands((fill > cfg.min_fill) & ok, start, cfg)
    hidden = [Band(b.lo, b.hi) for b in _runs(~ok, start, cfg.cell_m)]
    return [sides[0]] + [b for b in bands if sides[0].hi < b.mid < sides[1].lo] + [sides[1]], hidden


def _runs(mask: np.ndarray, start: float, cell_m: float) -> list[Band]:
    labels, n = ndimage.label(mask)
    return [Band(start + idx[0] * cell_m, start + (idx[-1] + 1) * cell_m)
            for idx in (np.flatnonzero(labels == k) for k in range(1, n + 1))]


def row_columns(local: np.ndarray, cam_u: float, grid: np.ndarray, origin: np.ndarray, front: float,
                sides: tuple[Band, Band], row: Band, cfg: ShelfConfig) -> tuple[list[Band], list[Band]]:
    """A row's panels left to right: those whose front edge is seen, and those hidden behind
    something in front of the shelf, as thick as the thinnest panel seen; and the hidden
    stretches in which no panel was found (a panel fully hidden there cannot be told from none)."""
    cols, hidden = column_bands(grid, origin, sides, row, cfg)
    thickness = min(b.hi - b.lo for b in cols)
    for b in hidden_dividers(local, cam_u, front, row, hidden, thickness, cfg):
        # a face next to a panel already known is that panel's own face, not a new one
        if all(abs(b.mid - c.mid) > cfg.min_slot_m for c in cols):
            cols.append(b)
    cols = _merge_close(sorted(cols, key=lambda b: b.lo), cfg.min_slot_m)   # no slot is thinner than that
    return cols, [h for h in hidden if not any(h.lo - cfg.cell_m < c.mid < h.hi + cfg.cell_m for c in cols)]


def continue_hidden(columns: list[list[Band]], hidden: list[list[Band]],
                    same_m: float) -> tuple[list[list[Band]], list[str]]:
    """A divider fully hidden in one row (the camera right behind the robot's stand) is assumed
    to continue a divider of the row above or below that lies in the hidden stretch, as in a
    grid shelf, unless the rows disagree: the other neighbour is seen there without it, or the
    row's own seen dividers are not that neighbour's. Guessing errs the safe way: a slot drawn
    across a real panel would send the gripper into it, a wrong divider only splits a slot.
    Every guess, and every hidden stretch left unguessed, is a note."""
    notes = []
    for r, stretches in enumerate(hidden):
        rows = [rr for rr in (r - 1, r + 1) if 0 <= rr < len(columns)]
        has = lambda rr, u: any(abs(b.mid - u) < same_m for b in columns[rr])            # noqa: E731
        blind = lambda rr, u: any(h.lo < u < h.hi for h in hidden[rr])                     # noqa: E731
        for h in stretches:
            found = [(rr, b) for rr in rows for b in columns[rr][1:-1] if h.lo < b.mid < h.hi][:1]
            for rr, b in found:
                if all(has(o, b.mid) or blind(o, b.mid) for o in rows if o != rr) \
                        and all(has(rr, c.mid) for c in columns[r][1:-1]):
                    columns[r] = sorted(columns[r] + [b], key=lambda c: c.mid)
                    notes.append(f"row {r + 1}: its divider at {b.mid:+.3f} m across is hidden from the camera "
                                 f"and assumed to continue the one in row {rr + 1}: check that row's slots")
                    break
            else:
                notes.append(f"row {r + 1}: {100 * (h.hi - h.lo):.0f} cm of it ({h.lo:+.2f}..{h.hi:+.2f} m across) "
                             "is hidden from the camera (by the robot?): a divider there cannot be seen; check its slots")
    return columns, notes


def hidden_dividers(local: np.ndarray, cam_u: float, front: float, row: Band, hidden: list[Band],
                    thickness: float, cfg: ShelfConfig) -> list[Band]:
    """Dividers whose front edge is hidden (behind the robot's stand), found by their side face
    seen past the edge of what hides them: a vertical face at one `across` position covering
    much of the slot's depth and height. The divider lies on that face's far side from the camera."""
    margin = 3 * cfg.cell_m
    m = (local[:, 0] > margin) & (local[:, 0] < front - cfg.face_tol_m) \
        & (local[:, 2] > row.lo + margin) & (local[:, 2] < row.hi - margin)
    out = []
    for h in hidden:
        q = local[m & (local[:, 1] > h.lo - margin) & (local[:, 1] < h.hi + margin)]
        face = _side_face(q, Band(margin, front), Band(row.lo + margin, row.hi - margin), cfg)
        if face is not None:
            out.append(Band(face - thickness, face) if cam_u > face else Band(face, face + thickness))
    return out


def _side_face(q: np.ndarray, s: Band, z: Band, cfg: ShelfConfig, min_points: int = 20,
               spread_s: float = 0.15, spread_z: float = 0.4) -> float | None:
    """The `across` position of the fullest 1-cm slice of `q` if its points spread over the
    slot's height and into its depth (a panel's face, seen at a steep angle over a few pixels
    and often only near the front, the rest hidden too), else None (stray depth noise is a
    handful of points)."""
    if len(q) < min_points:
        return None
    k = np.floor((q[:, 1] - q[:, 1].min()) / cfg.cell_m).astype(int)
    pts = q[k == np.bincount(k).argmax()]
    (s10, z10), (s90, z90) = np.percentile(pts[:, [0, 2]], [10, 90], axis=0)
    if len(pts) < min_points or s90 - s10 < spread_s * (s.hi - s.lo) or z90 - z10 < spread_z * (z.hi - z.lo):
        return None
    return float(np.median(pts[:, 1]))


def _floor(pts: np.ndarray, lowest_z: float, cfg: ShelfConfig) -> float | None:
    """The floor the shelf stands on: the best supported level plane at or below its lowest
    board's edge (none when the floor is out of view)."""
    planes = fit_horizontal_planes(pts, np.random.default_rng(cfg.seed), inlier_m=cfg.plane_inlier_m)
    below = [p for p in planes if p.z0 < lowest_z]
    return max(below, key=lambda p: p.n_inliers).z0 if below else None


def _box(frame: ShelfFrame, s: Band, u: Band, z: Band) -> dict:
    """A part box from its extents in the shelf frame, as layouts.py writes parts."""
    return {"center": frame.world(s.mid, u.mid, z.mid).tolist(),
            "size": [s.hi - s.lo, u.hi - u.lo, z.hi - z.lo], "rotation": frame.rotation.tolist()}


def shelf_parts(frame: ShelfFrame, front: float, sides: tuple[Band, Band], boards: list[Band],
                columns: list[list[Band]], bottom: float, cfg: ShelfConfig) -> list[dict]:
    """Back, sides, top, boards, plinth and dividers, each as deep as the shelf."""
    depth, height = Band(0.0, front), Band(bottom, boards[0].hi)
    inner = Band(sides[0].hi, sides[1].lo)
    # the back's box reaches the front face band's depth into the slots: its surface is seen
    # through them at 2 m and more, where L515 depth scatters by about a centimetre, and what
    # sticks out of the box would be taken for an object standing at the back of a slot
    parts = [_box(frame, Band(-cfg.back_thickness_m, cfg.face_tol_m), Band(sides[0].lo, sides[1].hi), height)]
    parts += [_box(frame, depth, side, height) for side in sides]
    # a lowest band that nearly reaches the floor is the plinth: it stands on the floor
    low = boards[-1]
    plinth = Band(bottom, low.hi) if low.hi > low.lo and low.lo - bottom < 2 * cfg.min_slot_m else low
    parts += [_box(frame, depth, inner, b) for b in boards[:-1] + [plinth] if b.hi > b.lo]
    for row, cols in zip(zip(boards, boards[1:]), columns):
        z = Band(row[1].hi, row[0].lo)
        parts += [_box(frame, depth, c, z) for c in cols[1:-1]]
    return parts


def slot_regions(frame: ShelfFrame, front: float, boards: list[Band], columns: list[list[Band]]) -> list[Region]:
    """Slot r, c between boards r-1/r and panels c-1/c, from the front face to the back panel,
    facing the robot along the shelf's x (as sample_shelf writes them)."""
    out = []
    for r, ((above, below), cols) in enumerate(zip(zip(boards, boards[1:]), columns), start=1):
        z = Band(below.hi, above.lo)
        for c, (left, right) in enumerate(zip(cols, cols[1:]), start=1):
            u = Band(left.hi, right.lo)
            centre = frame.world(front / 2, u.mid, z.mid)
            ys = [frame.world(front / 2, v, z.mid)[1] for v in (u.lo, u.hi)]
            out.append(Region(f"slot_r{r}c{c}", "slot", centre, [front, u.hi - u.lo, z.hi - z.lo], row=r, col=c,
                              rotation=frame.rotation,
                              extra={"free_y": [min(ys), max(ys)], "captured": True}))
    return out


def shelf_scene(obs: RGBDObservation, frame: ShelfFrame, front: float, sides: tuple[Band, Band],
                boards: list[Band], columns: list[list[Band]], floor_z: float | None, cfg: ShelfConfig) -> Scene:
    bottom = floor_z if floor_z is not None else boards[-1].lo
    parts = shelf_parts(frame, front, sides, boards, columns, bottom, cfg)
    s, u, z = Band(-cfg.back_thickness_m, front), Band(sides[0].lo, sides[1].hi), Band(bottom, boards[0].hi)
    shelf = SceneObject("shelf", "shelf", "shelf", frame.world(s.mid, u.mid, z.mid),
                        [s.hi - s.lo, u.hi - u.lo, z.hi - z.lo], frame.rotation, oriented=True,
                        extra={"rows": len(columns), "cols": [len(c) - 1 for c in columns], "parts": parts,
                               "captured": True})
    extra = {"kind": "shelf"}
    if floor_z is not None:
        extra["ground_z"] = round(floor_z, 4)
    cam = obs.T_base_cam
    return Scene(viewer=Viewpoint(cam[:3, 3], cam[:3, 2]), robot=Viewpoint([0, 0, 0], [1, 0, 0]),
                 objects=[shelf], regions=slot_regions(frame, front, boards, columns), extra=extra)
