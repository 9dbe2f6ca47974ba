"""Which way an enrolled object faces, measured from its appearance.

Enrollment (workspace/enroll.py) records, for an object that has a front, the person's word for
which way it stands (facing the camera, say) as a *front signature*: which footprint side of its
box the front is on (its longer or its shorter side) and what its front face looks like (a grid
of colours over the face, each channel over the object's own median in that view, so its plain
body reads 1 and a brighter or dimmer room does not change it). In a scene, the detected box's footprint axes leave
two candidate faces on that side; each face the camera sees is compared with the enrolled front:
the one that looks like it is the front. When neither face is seen well enough, both look alike, the enrolled
front looks like the rest of the object, or the footprint is nearly square (the side cannot be
told from the box), the measurement refuses and says why; it never names a front it did not see.

    sig = front_signature(obs, mask, box, toward=camera_xy - centre_xy)      # at enrollment
    front, why = measure_front(obs, mask, box, sig)                          # in a scene
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from spatial_manip.camera_model import project
from spatial_manip.geometry import relations as rel
from spatial_manip.observation import RGBDObservation
from spatial_manip.transforms import apply, invert

FACE_GRID = 4                  # samples per side of the face's grid
FACE_SPAN = 0.7                # the grid covers this share of the face's width and height (its edges blur)
MIN_FACE_SAMPLES = 6           # of FACE_GRID**2, seen on the face, for a face to count as seen
MIN_CHANNEL = 20.0             # 0-255: a darker channel median is noise, not a colour to divide by
FACE_DEPTH_TOL_M = 0.03        # a sample is seen when the depth there is within this of the face
# A footprint whose sides differ by less than this ratio is nearly square: which side holds the
# front is not told by the box (a sitting teddy bear measured 16 x 15 cm at enrollment and
# 16-19 x 9-12 cm in scenes, its box axes turning with the view).
MIN_FOOTPRINT_ASPECT = 1.25
# Face colours are RGB over the object's median brightness, compared as the mean absolute
# difference per sample and channel. A face this close to the enrolled front is the front; an
# enrolled front that differs from the object's plain body by less than
# MIN_FRONT_CONTRAST is not told apart from a side.
FRONT_MATCH = 0.12
MIN_FRONT_CONTRAST = 0.25


def footprint_axes(box) -> tuple[np.ndarray, np.ndarray, float]:
    """(the box's longer horizontal axis, its shorter one, longer / shorter side) in the base frame."""
    R, size = np.asarray(box.rotation, float), np.asarray(box.size, float)
    up = int(np.argmax(np.abs(R[2])))
    long_k, short_k = sorted((k for k in range(3) if k != up), key=lambda k: -size[k])
    return (rel.horizontal(R[:, long_k]), rel.horizontal(R[:, short_k]),
            float(size[long_k] / max(size[short_k], 1e-6)))


def _extent(box, axis) -> float:
    return float(np.asarray(box.size, float) @ np.abs(np.asarray(box.rotation, float).T @ axis))


def face_colours(obs: RGBDObservation, mask: np.ndarray, box, front) -> np.ndarray:
    """(FACE_GRID**2, 3) colours of the box face on the `front` side, each channel over the
    median of the object's pixels (`mask`); NaN rows where the camera does not see that
    point of the face (turned away, hidden, or no depth)."""
    f = rel.horizontal(front)
    side = np.cross(rel.UP, f)
    centre = np.asarray(box.center, float) + f * _extent(box, f) / 2
    steps = (np.arange(FACE_GRID) / (FACE_GRID - 1) - 0.5) * FACE_SPAN
    grid = np.array([centre + side * _extent(box, side) * a + rel.UP * _extent(box, rel.UP) * b
                     for b in steps[::-1] for a in steps])
    out = np.full((len(grid), 3), np.nan)
    camera = np.asarray(obs.T_base_cam, float)[:3, 3]
    if float(f @ (camera - centre)) <= 0:
        return out                                       # the face looks away from the camera
    pts_cam = apply(invert(obs.T_base_cam), grid)
    uv, inside = project(pts_cam, obs.intrinsics)
    h, w = obs.depth_m.shape
    body = np.asarray(obs.rgb, float)[np.asarray(mask, bool)]
    if not len(body):
        return out
    # each channel over the object's own median: its plain body reads 1, a room's light cancels
    reference = np.maximum(np.median(body, axis=0), MIN_CHANNEL)
    for i in np.flatnonzero(inside):
        u, v = int(round(uv[i, 0])), int(round(uv[i, 1]))
        if not (0 <= u < w and 0 <= v < h):
            continue
        if abs(float(obs.depth_m[v, u]) - float(pts_cam[i, 2])) <= FACE_DEPTH_TOL_M:
            out[i] = np.asarray(obs.rgb, float)[max(v - 1, 0):v + 2, max(u - 1, 0):u + 2].reshape(-1, 3).mean(0) / reference
    return out


def front_signature(obs: RGBDObservation, mask: np.ndarray, box, toward) -> dict:
    """What enrollment records of an object's front: `toward` is the horizontal direction the
    person says it faces (in the base frame); the front is the footprint side nearest it."""
    long_axis, short_axis, aspect = footprint_axes(box)
    toward = rel.horizontal(toward)
    side, axis = max((("long", long_axis), ("short", short_axis)), key=lambda s: abs(float(s[1] @ toward)))
    face = face_colours(obs, mask, box, axis * np.sign(float(axis @ toward)))
    return {"side": side, "aspect": round(aspect, 3),
            "face": [None if np.isnan(c).any() else [round(float(x), 3) for x in c] for c in face]}


def face_distance(seen: np.ndarray, enrolled: np.ndarray) -> float:
    """Mean absolute difference over the samples both saw; inf when fewer than MIN_FACE_SAMPLES."""
    both = ~np.isnan(seen).any(axis=1) & ~np.isnan(enrolled).any(axis=1)
    if np.count_nonzero(both) < MIN_FACE_SAMPLES:
        return np.inf
    return float(np.mean(np.abs(seen[both] - enrolled[both])))


def _enrolled_face(signature: dict) -> np.ndarray:
    return np.array([[np.nan] * 3 if c is None else c for c in signature.get("face") or []], float).reshape(-1, 3)


def measure_front(obs: RGBDObservation, mask: np.ndarray, box, signature: dict) -> tuple[np.ndarray | None, str]:
    """(the horizontal unit vector the object faces, how it was told) or (None, why not)."""
    enrolled = _enrolled_face(signature)
    if float(signature.get("aspect", 0.0)) < MIN_FOOTPRINT_ASPECT:
        return None, (f"its footprint was nearly square at enrollment ({signature.get('aspect')}:1), so its box "
                      "does not show which side is the front")
    seen_rows = ~np.isnan(enrolled).any(axis=1)
    if np.count_nonzero(seen_rows) < MIN_FACE_SAMPLES:
        return None, "its front face was not seen at enrollment: enroll it again facing the camera"
    contrast = float(np.mean(np.abs(enrolled[seen_rows] - 1.0)))
    if contrast < MIN_FRONT_CONTRAST:
        return None, (f"its enrolled front looks like the rest of it (contrast {contrast:.2f}, need "
                      f"{MIN_FRONT_CONTRAST}), so a view does not tell front from back")
    long_axis, short_axis, aspect = footprint_axes(box)
    if aspect < MIN_FOOTPRINT_ASPECT:
        return None, f"its footprint looks nearly square in this view ({aspect:.2f}:1), so its box does not show the front's side"
    axis = long_axis if signature["side"] == "long" else short_axis
    d = {s: face_distance(face_colours(obs, mask, box, s * axis), enrolled) for s in (1.0, -1.0)}
    fronts = [s for s in d if d[s] <= FRONT_MATCH]
    faces = ", ".join(f"{d[s]:.2f}" if d[s] < np.inf else "unseen" for s in (1.0, -1.0))
    if len(fronts) == 1:
        return fronts[0] * axis, f"a face on its {signature['side']} side looks like the enrolled front ({faces})"
    # a face seen that is not the front does not make the hidden one the front: a box fitted short
    # of a dark front panel (cut off by colour) puts the grid on the body, which then reads "not front"
    return None, (f"no face on its {signature['side']} side was seen to look like the enrolled front "
                  f"(distances {faces}; a front within {FRONT_MATCH})")


def orient_measured_fronts(scene, detections, obs: RGBDObservation, signatures: dict):
    """`scene` with each detected object whose catalogue entry has a front signature (`signatures`:
    id -> signature) turned to the front measured from `detections`' masks; where the measurement
    could not tell it, why not goes to `extra["front_unmeasured"]` (the planner then assumes, and
    says so: reasoning.program.assume_visible_fronts)."""
    masks = {d.id: d.mask for d in detections}
    objects = []
    for o in scene.objects:
        sig = signatures.get(o.id)
        if not sig or o.id not in masks or not o.extra.get("has_front"):
            objects.append(o)
            continue
        front, why = measure_front(obs, masks[o.id], o, sig)
        objects.append(rel.turned_to_face(o, front, f"measured: {why}") if front is not None else
                       replace(o, extra={**o.extra, "front_unmeasured": why}))
    return scene.with_objects(objects)
