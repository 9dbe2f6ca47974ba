"""The one way every segmenter turns a mask into an oriented box: the geometry core's
`box_2d_to_box_3d`, told which support plane the object rests on (when it touches it)."""
from __future__ import annotations

import numpy as np

from spatial_manip.geometry.boxes import Box3D, BoxFitConfig, BoxFitError, SupportPlane, box_2d_to_box_3d
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.planes import Plane


def object_box(obs: RGBDObservation, mask: np.ndarray, plane: Plane | None, lowest_height_m: float,
               *, max_gap_m: float = 0.05) -> Box3D | None:
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


def complete_leaning_book(box: Box3D, camera_position: np.ndarray) -> bool:
    """A tilted slab seen face-on shows only its cover: its measured thickness is ~0, and the
    fit sits on the visible face. When the cover matches one of ESPIRE's book sizes, give the
    box that class's thickness, grown away from the camera (the hidden side). True if changed."""
    from spatial_manip.perception.attributes import BOOK_SIZE_RANGES_M, book_thickness_for_cover

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
    from spatial_manip.perception.attributes import book_size_class, colour_name, mean_rgb
    from spatial_manip.perception.base import Detection
    from spatial_manip.perception.cloud import base_cloud
    from spatial_manip.perception.planes import plane_under

    pts, _ = base_cloud(obs, mask)
    plane = plane_under(pts, planes)
    lowest = float(np.percentile(plane.height(pts), 1)) if plane is not None else np.inf
    box = object_box(obs, mask, plane, lowest)
    if box is None:
        return None
    rgb = mean_rgb(obs.rgb, mask)
    det = Detection(id=id, label=label, category=category, mask=mask, score=float(score), box=box,
                    mean_rgb=rgb, colour=colour_name(rgb), extra={"backend": backend})
    if category == "book":
        det.size_class = book_size_class(box.size, at_least=det.truncated)
    return det
