"""Tabletop scenes of everyday objects (sim/object_sets.py) for the objects suite.

    sample_objects_tabletop(rng, n_objects=4, held=False) -> Scene

The table, camera and starting arm pose are the ESPIRE tabletop's (layouts.sample_tabletop); on
the table stand `n_objects` everyday objects as their files pose them (z up, turned about z at
random) and one near reference (an ESPIRE asset: the jar, the cube ...). Colours are not unique:
every scene holds a pair of one category (two mugs, two bowls, two bottles or two cartons), so
tasks must tell them apart by colour, size or place. With `held=True` the robot starts holding
one more object from above, pinched across its narrow side, for place tasks.

Everyday objects are SceneObjects with label = category = the model's category ("mug") and
extra {"model", "colour_names" (as perception names its pixels, most first: the key perception
puts on a detection), "rgb" (mean texture colour)}; the box is the model's measured one, centred.
"""
from __future__ import annotations

import math

import numpy as np

from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.sim import assets as A
from spatial_manip.sim import layouts as L
from spatial_manip.sim import object_sets as OS

PAIR_MIN_MODELS = 2
TABLE_GAP_M = 0.0005         # objects' collision geoms are set this far above the table
HELD_GRIP_DEPTH_M = 0.025    # the fingers cover this much of a carried object's top
HELD_MAX_WIDTH_M = 0.07      # a carried object is pinched across a side no wider than this
HELD_MIN_HEIGHT_M = 0.04     # ... and stands taller than the fingers cover (butter: the palm hits the table)
HELD_MAX_HEIGHT_M = 0.12     # ... and short enough to hang below the gripper over the table
NEAR_REFERENCE_KEYS = ("ceramic_jar", "rubiks_cube", "alarm_clock", "pillar_bookend", "newtons_cradle")


def everyday_object(oid: str, model: OS.ObjectModel, center, R) -> SceneObject:
    extra = {"model": model.name, "colour_names": list(model.colours), "rgb": list(model.rgb)}
    folder = OS.folder_of(model)
    if folder is not None:       # a lab's own set: the scene file says where its model lives
        extra["object_set"] = folder
    return SceneObject(oid, model.label, model.category, center, model.size_m, R, extra=extra)


def _choose_models(rng, models: dict, n: int) -> list[OS.ObjectModel]:
    """n distinct models, two of them sharing a category."""
    by_cat: dict = {}
    for m in models.values():
        by_cat.setdefault(m.category, []).append(m)
    pair_cats = sorted(c for c, ms in by_cat.items() if len(ms) >= PAIR_MIN_MODELS)
    if not pair_cats:
        raise ValueError("the object sets hold no two models of one category; the objects suite needs pairs")
    cat = pair_cats[int(rng.integers(len(pair_cats)))]
    pair = [by_cat[cat][i] for i in rng.choice(len(by_cat[cat]), 2, replace=False)]
    rest = [m for m in sorted(models.values(), key=lambda m: m.name) if m not in pair]
    more = [rest[i] for i in rng.choice(len(rest), max(0, n - 2), replace=False)]
    out = pair + more
    return [out[i] for i in rng.permutation(len(out))]


def _holdable(models: dict) -> list[OS.ObjectModel]:
    """Models a top-down grasp carries: a horizontal side the fingers span, short enough to lift."""
    return [m for m in sorted(models.values(), key=lambda m: m.name)
            if min(m.size_m[:2]) <= HELD_MAX_WIDTH_M and HELD_MIN_HEIGHT_M <= m.size_m[2] <= HELD_MAX_HEIGHT_M]


def held_object(rng, ee: np.ndarray, oid: str, model: OS.ObjectModel) -> SceneObject:
    """The carried object in the gripper's frame: its up axis against the approach (TCP -z), its
    narrow horizontal side along the fingers' closing axis (TCP y), its top HELD_GRIP_DEPTH_M past
    the pinch point towards the palm (as a carried book's edge, layouts.GRIP_DEPTH_M)."""
    narrow = 0 if model.size_m[0] <= model.size_m[1] else 1
    up, closing = -ee[:3, 2], ee[:3, 1]
    axes = [None, None, up]
    axes[narrow] = closing
    axes[1 - narrow] = np.cross(up, closing) if narrow == 0 else np.cross(closing, up)
    R = np.column_stack(axes)
    center = ee[:3, 3] - up * (model.size_m[2] / 2 - HELD_GRIP_DEPTH_M)
    o = everyday_object(oid, model, center, R)
    o.held = True
    return o


def sample_objects_tabletop(rng: np.random.Generator, *, n_objects: int = 4, held: bool = False,
                            models: dict | None = None) -> Scene:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if not 2 <= n_objects <= 6:
        raise ValueError(f"expected 2-6 everyday objects, got {n_objects}")
    models = models if models is not None else OS.everyday_models()
    tl, tw, th = A.ASSETS["table"].size_m
    table_c = np.array([L.TABLE_FRONT_X + tl / 2, 0.0, L.TABLE_TOP_Z - th / 2])
    objects = [SceneObject("table", "table", "table", table_c, [tl, tw, th], L._rz(math.pi), oriented=True,
                           extra={"asset": "table"})]
    reach = (L.TABLE_FRONT_X + 0.06, -0.50, L.TABLE_FRONT_X + 0.48, 0.50)
    table_area = (L.TABLE_FRONT_X + 0.04, -tw / 2 + 0.10, L.TABLE_FRONT_X + tl - 0.10, tw / 2 - 0.10)
    chosen = _choose_models(rng, models, n_objects)
    placed: list = []
    for i, m in enumerate(chosen):
        comp = L._Composite([(np.array([0, 0, L.TABLE_TOP_Z + m.size_m[2] / 2 - m.rest_offset_m + TABLE_GAP_M]), np.asarray(m.size_m),
                              np.eye(3))])
        x, y, yaw = L._place(rng, comp, reach, placed, (-math.pi, math.pi), gaps=(0.06, 0.04), tries=150)
        c, _, R = comp.placed(x, y, yaw)[0]
        objects.append(everyday_object(f"{m.category}_{i + 1}", m, c, R))
    key = str(rng.choice(NEAR_REFERENCE_KEYS))
    objects.append(L._place_near(rng, A.ASSETS[key], "near_1", table_area, placed))
    target = np.array([L.TABLE_FRONT_X, rng.uniform(-0.4, 0.4), L.TABLE_TOP_Z])
    cam = np.array([rng.uniform(-0.95, -0.6), rng.choice([-1, 1]) * rng.uniform(0.15, 0.55),
                    L.TABLE_TOP_Z + rng.uniform(0.6, 1.0)])
    ee = L._ee_pose(rng, cam[2], L.R_TCP_DOWN, ((0.25, 0.35), (-0.25, 0.25)), (-45.0, 45.0), z_min=0.25)
    if held:
        options = [m for m in _holdable(models) if m not in chosen]
        m = options[int(rng.integers(len(options)))]
        objects.append(held_object(rng, ee, f"{m.category}_held", m))
    return Scene(viewer=Viewpoint(cam, target - cam), robot=Viewpoint([0, 0, 0], [1, 0, 0]), objects=objects,
                 extra={"kind": "tabletop", "ground_z": L.TABLETOP_GROUND_Z, "ee_pose": ee.tolist()})
