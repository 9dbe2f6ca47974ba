"""The one way every segmenter turns a mask into an oriented box: the geometry core's
`box_2d_to_box_3d`, told which support plane the object rests on (when it touches it)."""
from __future__ import annotations

import numpy as np
from scipy import ndimage

from spatial_manip.geometry.boxes import Box3D, BoxFitConfig, BoxFitError, SupportPlane, box_2d_to_box_3d
from spatial_manip.geometry.pointcloud import depth_edge_pixels
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import BOOK_SIZE_RANGES_M, book_size_class, book_thickness_for_cover, colour_name, mean_rgb
from spatial_manip.perception.base import Detection
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.planes import Plane, plane_under

SUPPORT_GAP_M = 0.05       # an object whose lowest point is this close to a plane rests on it
# A mask made on the colour image holds a border of what lies behind the object (an L515's depth and
# colour disagree by 2-5 px: realsense-ros#1716, librealsense#8702): a mask pixel this much deeper
# than the nearest mask pixel within BEHIND_WINDOW_PX is background seen past the object's edge.
BEHIND_M = 0.03
BEHIND_WINDOW_PX = 3
LYING_SPAN_M = 0.06        # an object's own points spanning less height than this lie flat on something


def object_box(obs: RGBDObservation, mask: np.ndarray, plane: Plane | None, lowest_height_m: float,
               *, max_gap_m: float = SUPPORT_GAP_M) -> Box3D | None:
    """Box of the object in `mask`, extended down to `plane` when its lowest visible point is
    within `max_gap_m` of it (a book on a hidden pedestal keeps its own bottom). None when too
    few usable depth points remain."""
    if plane is None or not np.isfinite(lowest_height_m):
        support, drop_m = False, 0.0
    elif lowest_height_m <= max_gap_m:
        support, drop_m = SupportPlane(np.asarray(plane.normal, float), float(plane.d), int(plane.n_inliers)), 0.0
    else:
        # Resting on something hidden (a pedestal): fit about the same up axis, on a parallel
        # plane just under the object's own lowest point, then give the margin back.
        drop_m = BoxFitConfig().plane_tol_m + 0.001
        support = SupportPlane(np.asarray(plane.normal, float), float(plane.d) - lowest_height_m + drop_m,
                               int(plane.n_inliers))
    try:
        box = box_2d_to_box_3d(obs, mask=mask, support_plane=support)
    except BoxFitError:
        return None
    if drop_m and box.mode == "yaw" and box.size[2] > 2 * drop_m:
        box.center = box.center + box.rotation[:, 2] * drop_m / 2
        box.size = box.size - np.array([0.0, 0.0, drop_m])
    if box.mode == "full":
        complete_leaning_book(box, obs.T_base_cam[:3, 3])
    return box


SLOPE_TILT_DEG = (15.0, 75.0)   # a fixture face tilted this far from level is a slope things lean on
ON_FACE_BAND_M = (-0.015, 0.08)  # an object's points this far above a face's plane (median) lean on it
ON_FACE_SHARE = 0.6              # ... when this share of them lies within the face's width (1 cm margin)


def sloped_faces(parts) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float, float]]:
    """The tilted top faces of configured fixture parts (a book wedge's slab): per face its centre,
    outward normal n (pointing up), down-slope axis s (in the face), and half extents across and
    along the slope."""
    faces = []
    lo, hi = np.cos(np.radians(SLOPE_TILT_DEG[1])), np.cos(np.radians(SLOPE_TILT_DEG[0]))
    for part in parts:
        R, size = np.asarray(part.rotation, float), np.asarray(part.size, float)
        k = int(np.argmin(size))                    # a slab's large face is across its thinnest side
        if not lo <= abs(R[2, k]) <= hi:
            continue
        n = R[:, k] * np.sign(R[2, k])
        a, b = (j for j in range(3) if j != k)
        along = a if abs(R[2, a]) >= abs(R[2, b]) else b
        across = b if along == a else a
        down = -R[:, along] * np.sign(R[2, along])
        faces.append((np.asarray(part.center, float) + n * size[k] / 2, n, down, size[across] / 2, size[along] / 2))
    return faces


def box_on_slope(points: np.ndarray, faces, support_z: float) -> Box3D | None:
    """The box of an object leaning on a tilted face (`sloped_faces`), fitted on the face as its
    support: its bottom on the face's plane, its width across the slope and its top end its points',
    and its lower end where the face meets the support at `support_z` (what leans on a slope rests
    there, on the wedge's lip or the table) unless its points reach further. A book leaning away
    from the camera shows the underside of its upper end above the wedge and nothing of its lower
    half: the box fitted to the points alone stopped halfway, 6 cm off the book's centre
    (pick-85-00003). Its thickness is its points' height over the face, or, when the points lie on
    the face (its underside seen), the thickness of a book of that cover (`complete_leaning_book`).
    None when it leans on no configured face."""
    p = np.asarray(points, float)
    if len(p) < 20:
        return None
    for centre, n, down, half_across, half_along in faces:
        across = np.cross(down, n)
        rel = p - centre
        u, v, w = rel @ across, rel @ down, rel @ n
        if not (ON_FACE_BAND_M[0] <= np.median(w) <= ON_FACE_BAND_M[1]
                and np.mean(np.abs(u) <= half_across + 0.01) >= ON_FACE_SHARE
                and np.percentile(v, 99) <= half_along + 0.01 and down[2] < 0):
            continue
        u_lo, u_hi = np.percentile(u, [1, 99])
        rests_at = min((support_z - centre[2]) / down[2], half_along)
        top, bottom = float(np.percentile(v, 1)), max(float(np.percentile(v, 99)), rests_at)
        size = np.array([u_hi - u_lo, bottom - top, max(float(np.percentile(w, 95)), 0.0)])
        rotation = np.column_stack([across, down, n])
        center = centre + rotation @ np.array([(u_lo + u_hi) / 2, (top + bottom) / 2, size[2] / 2])
        box = Box3D(center=center, size=size, rotation=rotation, mode="full", n_points=int(len(p)),
                    n_region=int(len(p)), quality=1.0, residual_m=0.0, points=p)
        if not complete_leaning_book(box, centre - n):      # grown away from the face, into the object
            thicken_away_from(box, centre - n, max(size[2], SLOPE_MIN_THICKNESS_M))
        return box
    return None


SLOPE_MIN_THICKNESS_M = 0.01


def lowest_height(obs: RGBDObservation, mask: np.ndarray, plane: Plane, *, max_gap_m: float = SUPPORT_GAP_M) -> float:
    """The object's lowest point above `plane` (1st percentile of its mask's points), except for a
    flat-lying object held up by something hidden: when the mask reaches the plane only through
    its border's background (pixels behind the object's edge, flying pixels) and what remains is a
    slab spanning less than LYING_SPAN_M well above the plane, that slab's lowest point. A book on
    a 7 cm pedestal under realistic sensing otherwise read its lowest point on the table and its
    box was stretched down to it (the demo's scene, seed 1446). Tilted and upright books keep the
    whole mask's lowest point: their lower parts are thin in the image, and reading them on an
    eroded mask lifted the bottom of books leaning on wedges 10 cm up their side (4521ef4)."""
    pts, _ = base_cloud(obs, mask)
    if not len(pts):
        return np.inf
    whole = float(np.percentile(plane.height(pts), 1))
    front = in_front(obs, mask)
    if whole > max_gap_m or np.count_nonzero(front) < 20:
        return whole
    low, high = np.percentile(plane.height(base_cloud(obs, front)[0]), [1, 99])
    return float(low) if low > max_gap_m and high - low < LYING_SPAN_M else whole


def in_front(obs: RGBDObservation, mask: np.ndarray) -> np.ndarray:
    """The mask's pixels on the object itself: a valid return, not at a depth edge (flying
    pixels), and not BEHIND_M deeper than the nearest mask pixel around it (the background a
    misregistered colour mask holds past the object's edge)."""
    depth = np.asarray(obs.depth_m, float)
    valid = mask & (depth > 0)
    nearest = ndimage.minimum_filter(np.where(valid, depth, np.inf), size=2 * BEHIND_WINDOW_PX + 1)
    return valid & ~depth_edge_pixels(depth) & (depth <= nearest + BEHIND_M)


def complete_leaning_book(box: Box3D, camera_position: np.ndarray) -> bool:
    """A tilted slab seen face-on shows only its cover: its measured thickness is ~0, and the
    fit sits on the visible face. When the cover matches one of ESPIRE's book sizes, give the
    box that class's thickness, grown away from the camera (the hidden side). True if changed."""
    thin = int(np.argmin(box.size))
    min_thickness = min(r[2][0] for r in BOOK_SIZE_RANGES_M.values())
    if box.size[thin] >= min_thickness:
        return False
    cover = np.delete(box.size, thin)
    thickness = book_thickness_for_cover(cover.max(), cover.min())
    if thickness is None:
        return False
    thicken_away_from(box, camera_position, thickness)
    return True


def thicken_away_from(box: Box3D, camera_position: np.ndarray, thickness_m: float) -> None:
    """Give a box's thinnest side `thickness_m`, growing it away from the camera (the side it
    cannot see); its visible face stays where it was measured."""
    thin = int(np.argmin(box.size))
    axis = box.rotation[:, thin]
    away = np.sign(axis @ (box.center - np.asarray(camera_position, float))) or 1.0
    box.center = box.center + away * axis * (thickness_m - box.size[thin]) / 2
    box.size = box.size.copy()
    box.size[thin] = thickness_m


def detection_from_mask(obs: RGBDObservation, mask: np.ndarray, planes, *, id: str, label: str,
                        category: str, score: float, backend: str):
    """A Detection (3D box on the plane under it, mean colour, book size class) for one mask,
    or None when the box cannot be fitted. Shared by the segmenters that produce masks."""
    # the plane under the object's own points: one point of background or a flying pixel below
    # the table put the table above the object's lowest point (31 of 86 objects under realistic
    # sensing got the floor or no plane; 1 with these)
    front = in_front(obs, mask)
    pts, _ = base_cloud(obs, front if np.count_nonzero(front) >= 20 else mask)
    plane = plane_under(pts, planes)
    lowest = lowest_height(obs, mask, plane) if plane is not None else np.inf
    box = object_box(obs, mask, plane, lowest)
    if box is None:
        return None
    rgb = mean_rgb(obs.rgb, mask)
    det = Detection(id=id, label=label, category=category, mask=mask, score=float(score), box=box,
                    mean_rgb=rgb, colour=colour_name(rgb), extra={"backend": backend})
    if category == "book":
        det.size_class = book_size_class(box.size, at_least=det.truncated)
    return det
