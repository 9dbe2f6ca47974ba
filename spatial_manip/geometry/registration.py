"""A depth frame registered to the cell's fixtures: the small turn about the camera that lays the
returns of the shelf's boards and panels and the table (configured, not perceived) onto their
faces, measured once per look and applied to the frame's extrinsics, so that perception, the
obstacle map and the grasp service all measure on the same corrected cloud.

An L515's depth registered a few pixels off its colour (the realistic profile's 2-5 px), and the
hand-eye calibration's 0.05-0.15 deg, turn the whole cloud about the camera: 4 px lifted a shelf
board 2.5 m away by 1.6-2.1 cm, and every object measured on that depth is as far off (a lying
bottle's points 0.7-1.4 cm sideways). A real cell registers its cloud to the cell's model; the
turn found is a correction of the depth camera's orientation, so it moves the extrinsics' rotation
only (`Registration.apply`), never the camera's position.

The fit (`fixture_registration`): Gauss-Newton on the point-to-face distances of the points near
a fixture's face, Cauchy-weighted (a book on a board is no board) in a band shrinking from
band_m to 0.4 of it; bounded at max_turn_deg (a misregistration of 10 px and the extrinsics'
0.3 deg, harsh, turn it 1.2 deg; farther, the fixtures' model is off, not the frame), and kept
only when it brings the points nearer their faces.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.scene import FIXTURE_CATEGORIES
from spatial_manip.transforms import apply

REGISTRATION_POINTS = 2000   # the turn is fitted to about this many points near the faces: three unknowns
RIDGE = 0.02                 # fixture_registration's prior of no turn, against the faces' mean hold
FRAME_STRIDE_PX = 8          # register_frame samples every this many pixels along each image axis


@dataclass(frozen=True, kw_only=True)
class RegistrationConfig:
    band_m: float = 0.05          # points this close to a fixture's face measure the turn (shrinking to 0.4 of it)
    max_turn_deg: float = 2.0     # a larger turn is refused: the fixtures' model is off, not the frame
    min_points: int = 100         # ... as is one measured on fewer points near the faces
    min_turn_deg: float = 0.01    # a smaller turn is none (0.4 mm 2.5 m away): an exact frame stays exact

    def __post_init__(self):
        if not (0 < self.band_m < 1 and 0 < self.max_turn_deg <= 10 and self.min_points >= 3):
            raise ValueError(f"registration needs 0 < band_m < 1 m, 0 < max_turn_deg <= 10 and min_points >= 3, "
                             f"got {self.band_m}, {self.max_turn_deg}, {self.min_points}")


@dataclass(frozen=True)
class Registration:
    """The turn a frame was found in against the fixtures, and how well the fixtures fit."""
    turn: np.ndarray = field(default_factory=lambda: np.eye(3))   # base frame, about the camera (identity: none)
    in_camera: np.ndarray = field(default_factory=lambda: np.eye(3))   # the same turn in the camera's frame
    residual_before_m: float = float("nan")   # median |point-to-face distance| of the points within 2 cm of a face ...
    residual_after_m: float = float("nan")    # ... as the depth showed them, and turned
    points: int = 0                           # how many points near the faces measured it
    why: str = ""                             # why no turn was kept ("" when one was)

    @property
    def turn_deg(self) -> float:
        return float(np.degrees(Rotation.from_matrix(self.turn).magnitude()))

    @property
    def kept(self) -> bool:
        return not self.why

    def apply(self, T_base_cam: np.ndarray) -> np.ndarray:
        """The camera's extrinsics corrected by the turn (its position unchanged): the pose the
        depth is registered to the fixtures with. Any frame of the same camera takes it."""
        T = np.array(T_base_cam, float).reshape(4, 4)
        T[:3, :3] = T[:3, :3] @ self.in_camera
        return T

    def to_dict(self) -> dict:
        """For the trace: the turn (degrees, and as a rotation vector in the camera frame), the
        residuals before and after (mm), the points, and why none was kept."""
        def mm(v):
            return round(v * 1000, 2) if np.isfinite(v) else None
        return {"turn_deg": round(self.turn_deg, 3),
                "rotvec_cam_deg": np.round(np.degrees(Rotation.from_matrix(self.in_camera).as_rotvec()), 3).tolist(),
                "residual_before_mm": mm(self.residual_before_m), "residual_after_mm": mm(self.residual_after_m),
                "points": int(self.points), "kept": self.kept, **({"why": self.why} if self.why else {})}


NONE = Registration(why="not measured")


def register_frame(depth_m: np.ndarray, intrinsics: CameraIntrinsics, T_base_cam: np.ndarray, fixtures: Sequence,
                   config: RegistrationConfig = RegistrationConfig()) -> Registration:
    """The turn of one depth frame (metres, 0 = no return; pixels marked nearer than any return,
    as the arm's are, are not used) against `fixtures` (scene objects: those of FIXTURE_CATEGORIES
    count, a shelf by its parts), from every FRAME_STRIDE_PX-th pixel (a depth edge's flying
    pixels lie off the faces or weigh little: leaving them out changed no turn by 0.02 deg)."""
    boxes = fixture_boxes(fixtures)
    if not len(boxes[0]):
        return Registration(why="no fixture configured")
    depth = np.asarray(depth_m, np.float32)
    s = FRAME_STRIDE_PX
    sample = np.zeros(depth.shape, bool)
    sample[::s, ::s] = True
    pts, _ = backproject(depth, intrinsics, mask=sample & (depth > 0.1))
    T = np.asarray(T_base_cam, float).reshape(4, 4)
    reg = fixture_registration(apply(T, pts), T[:3, 3], boxes, config)
    return Registration(turn=reg.turn, in_camera=T[:3, :3].T @ reg.turn @ T[:3, :3],
                        residual_before_m=reg.residual_before_m, residual_after_m=reg.residual_after_m,
                        points=reg.points, why=reg.why)


def fixture_boxes(objects: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centres (n, 3), rotations (n, 3, 3), half sizes (n, 3)) of the fixtures among `objects`
    (FIXTURE_CATEGORIES; a fixture of parts, a shelf, by its parts), in the base frame."""
    out = []
    for o in objects:
        if o.category not in FIXTURE_CATEGORIES or getattr(o, "held", False):
            continue
        parts = o.extra.get("parts") if isinstance(o.extra, dict) else None
        for p in parts or [{"center": o.center, "size": o.size, "rotation": o.rotation}]:
            R = np.eye(3) if p.get("rotation") is None else np.asarray(p["rotation"], float).reshape(3, 3)
            out.append((np.asarray(p["center"], float).reshape(3), R, np.asarray(p["size"], float).reshape(3) / 2))
    if not out:
        return np.empty((0, 3)), np.empty((0, 3, 3)), np.empty((0, 3))
    c, R, h = zip(*out)
    return np.array(c), np.array(R), np.array(h)


def fixture_registration(points: np.ndarray, camera_m, boxes,
                         config: RegistrationConfig = RegistrationConfig()) -> Registration:
    """The small rotation about the camera that lays the points (base frame) near the fixture
    boxes' faces onto them (`turn` only; `in_camera` is the caller's). No turn (`why` says) when
    fewer than min_points points lie near a face, when the turn found exceeds max_turn_deg, or when
    it does not bring the points nearer their faces."""
    camera = np.asarray(camera_m, float).reshape(3)
    pts = np.asarray(points, float).reshape(-1, 3)
    if len(pts) > REGISTRATION_POINTS:          # first the points near a face, then a few thousand of them
        r, _ = face_distances(pts, boxes, config.band_m)
        near = pts[np.isfinite(r)]
        pts = near if len(near) >= config.min_points else pts
        pts = pts[::max(1, len(pts) // REGISTRATION_POINTS)]
    omega = np.zeros(3)
    bands = config.band_m * np.array([1.0, 0.7, 0.5, 0.4, 0.4])
    for band in bands:
        q = camera + Rotation.from_rotvec(omega).apply(pts - camera)
        r, n = face_distances(q, boxes, band)
        ok = np.isfinite(r)
        if np.count_nonzero(ok) < config.min_points:
            return Registration(points=int(np.count_nonzero(ok)),
                                why=f"{int(np.count_nonzero(ok))} points near the fixtures' faces, fewer than "
                                    f"{config.min_points}")
        A = np.cross(q[ok] - camera, n[ok])               # d(distance)/d(omega) for a small turn
        w = 1.0 / (1.0 + (r[ok] / (0.25 * band)) ** 2)
        # a prior of no turn, as strong as RIDGE of the faces' mean hold: a direction the faces hardly fix
        # (about the vertical, over a table alone) stays near none instead of following the noise
        H = (A * w[:, None]).T @ A
        ridge = RIDGE * np.trace(H) / 3
        omega = omega + np.linalg.solve(H + ridge * np.eye(3), -(A * w[:, None]).T @ r[ok] - ridge * omega)
    # judged by the fit's own robust cost in the last band (a point off every face costs what one at
    # its edge does): the median distance over the widest band followed the books on the boards
    turned = camera + Rotation.from_rotvec(omega).apply(pts - camera)
    r0, r1 = face_distances(pts, boxes, bands[-1])[0], face_distances(turned, boxes, bands[-1])[0]
    deg = float(np.degrees(np.linalg.norm(omega)))
    why = (f"the turn found, {deg:.2f} deg, is past {config.max_turn_deg} deg" if deg > config.max_turn_deg else
           f"the turn found, {deg:.3f} deg, is below {config.min_turn_deg} deg" if deg < config.min_turn_deg else
           "the turn found brings the points no nearer the faces" if not _cost(r1, bands[-1]) < _cost(r0, bands[-1])
           else "")
    near = np.isfinite(r0)          # the residual of the points near a face as the depth showed them, then turned
    moved = face_distances(turned[near], boxes, config.band_m)[0]
    return Registration(turn=np.eye(3) if why else Rotation.from_rotvec(omega).as_matrix(),
                        residual_before_m=float(np.median(np.abs(r0[near]))),
                        residual_after_m=float(np.median(np.where(np.isfinite(moved), np.abs(moved), config.band_m))),
                        points=int(np.count_nonzero(near)), why=why)


def _cost(r: np.ndarray, band_m: float) -> float:
    """The fit's robust cost of point-to-face distances `r` (NaN: no face within `band_m`, costing
    what a point at the band's edge does): Cauchy at a quarter of the band."""
    r = np.where(np.isfinite(r), r, band_m)
    return float(np.mean(np.log1p((r / (0.25 * band_m)) ** 2)))


def face_distances(points: np.ndarray, boxes, band_m: float) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the signed distance (outside positive) to the nearest face of the boxes
    (centres, rotations, half sizes) it lies over or under, and that face's outward normal; NaN
    where no face is within `band_m`, or the nearest box is nearest at an edge or a corner."""
    centres, rotations, halves = boxes
    local = np.stack([(points - c) @ R for c, R in zip(centres, rotations)], axis=1)    # (n, b, 3)
    past = np.abs(local) - halves[None]
    axis = np.argmax(past, axis=2)                                                      # (n, b)
    beyond = np.count_nonzero(past > 0, axis=2)
    dist = np.take_along_axis(past, axis[..., None], 2)[..., 0]
    dist = np.where(beyond <= 1, dist, np.nan)                                          # over a face, or inside
    far = ~(np.abs(dist) <= band_m)
    dist = np.where(far, np.inf, dist)
    b = np.argmin(np.abs(dist), axis=1)
    idx = np.arange(len(points))
    d = dist[idx, b]
    k = axis[idx, b]
    sign = np.sign(local[idx, b, k])
    normal = rotations[b, :, k] * np.where(sign == 0, 1.0, sign)[:, None]
    return np.where(np.isfinite(d), d, np.nan), normal
