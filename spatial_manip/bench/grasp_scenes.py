"""Grasp-bench scenes: one graspable object (ESPIRE book poses, or a primitive) on a table,
built as a MuJoCo spec with a free-floating Robotiq 2F-85 on a mocap body and a depth camera.

World = base frame, z up, table top at z = 0. Every scene is drawn from an explicit Generator.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.sim.assets import book_size

KINDS = ("book_flat", "book_upright", "book_tilted", "box", "cylinder", "sphere")
FRICTION = (1.5, 0.02, 0.0001)      # TOOLCHAIN.md: holds with condim 4, elliptic cone, impratio 10
HAND_PARK = (0.0, 0.0, 2.0)         # out of the camera's view


@dataclass
class SceneSpec:
    kind: str
    spec: mujoco.MjSpec
    target_body: str
    eye: np.ndarray          # camera position (world)
    look: np.ndarray         # camera target point (world)


def _quat(R) -> list:
    q = Rotation.from_matrix(R).as_quat()  # xyzw
    return [q[3], q[0], q[1], q[2]]


def _box(body, size, pos=(0, 0, 0), R=np.eye(3), rgba=(0.6, 0.6, 0.6, 1), density=None):
    g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=np.asarray(size) / 2, pos=pos, quat=_quat(R), rgba=rgba)
    g.friction, g.condim = FRICTION, 4
    if density:
        g.density = density
    return g


def _base_spec(gripper_xml: str) -> tuple[mujoco.MjSpec, mujoco.MjsBody]:
    spec = mujoco.MjSpec()
    spec.option.timestep = 0.002
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = 10
    spec.visual.quality.shadowsize = 0
    table = spec.worldbody.add_body(name="table", pos=[0.5, 0, -0.02])
    _box(table, (1.2, 1.2, 0.04), rgba=(0.55, 0.45, 0.35, 1))
    # A mocap body teleports (no velocity), so friction never engages on its own children: the
    # gripper is a free body welded to the mocap target instead, and moves dynamically.
    hand = spec.worldbody.add_body(name="hand", mocap=True, pos=HAND_PARK)
    gripper = spec.worldbody.add_body(name="gripper", pos=HAND_PARK)
    gripper.add_freejoint(name="gripper_free")
    site = gripper.add_site(name="hand_attach")
    weld = spec.add_equality(type=mujoco.mjtEq.mjEQ_WELD, name1="hand", name2="gripper",
                             objtype=mujoco.mjtObj.mjOBJ_BODY)
    weld.solref = [0.004, 1.0]
    weld.solimp = [0.99, 0.999, 0.001, 0.5, 2]
    gspec = mujoco.MjSpec.from_file(gripper_xml)
    for g in gspec.geoms:  # grippy pads (the Menagerie default slips, see TOOLCHAIN.md)
        g.friction, g.condim = FRICTION, 4
    spec.attach(gspec, site=site, prefix="g/")
    for b in spec.bodies:  # an arm would carry the gripper's weight: no sag on the weld
        if b.name == "gripper" or b.name.startswith("g/"):
            b.gravcomp = 1.0
    return spec, hand


def _free_body(spec, name, pos, R):
    body = spec.worldbody.add_body(name=name, pos=pos, quat=_quat(R))
    body.add_freejoint()
    return body


def build_scene(kind: str, rng: np.random.Generator, gripper_xml: str) -> SceneSpec:
    if kind not in KINDS:
        raise ValueError(f"scene kind must be one of {KINDS}, got {kind!r}")
    spec, _ = _base_spec(gripper_xml)
    c = np.array([0.5 + rng.uniform(-0.05, 0.05), rng.uniform(-0.1, 0.1), 0.0])
    yaw = rng.uniform(0, np.pi)
    Rz = Rotation.from_euler("z", yaw).as_matrix()
    rgba = (*rng.uniform(0.2, 0.9, 3), 1.0)
    density = 500.0
    if kind.startswith("book"):
        W, T, L = book_size(rng, rng.choice(["small", "medium", "large"]))
        if kind == "book_flat":
            # lying on a support block, its fore-edge overhanging toward the camera (-x, +-45 deg)
            yaw = rng.uniform(-np.pi / 4, np.pi / 4)
            Rz = Rotation.from_euler("z", yaw).as_matrix()
            a, hs, ov = 0.10, rng.uniform(0.05, 0.09), rng.uniform(0.045, 0.06)
            sup_c = c + Rz @ [-W / 2 + ov + a / 2, 0, 0]  # book centre c; support starts ov behind the edge
            sup = spec.worldbody.add_body(name="support", pos=[sup_c[0], sup_c[1], hs / 2])
            _box(sup, (a, L * 0.8, hs), R=Rz, rgba=(0.35, 0.33, 0.3, 1))
            R = Rz @ Rotation.from_euler("x", 90, degrees=True).as_matrix()  # book y (thickness) -> up
            body = _free_body(spec, "target", c + [0, 0, hs + T / 2 + 0.001], R)
        elif kind == "book_upright":
            ht = rng.uniform(0.35, 0.6) * L
            for s in (-1, 1):
                end = spec.worldbody.add_body(name=f"bookend_{'ab'[s > 0]}",
                                              pos=c + Rz @ [0, s * (T / 2 + 0.0085), ht / 2])
                _box(end, (0.1, 0.015, ht), R=Rz, rgba=(0.4, 0.4, 0.45, 1))
            body = _free_body(spec, "target", c + [0, 0, L / 2 + 0.001], Rz)
        else:  # tilted against a support block
            th = np.radians(rng.uniform(12, 30))
            R = Rz @ Rotation.from_euler("x", -th).as_matrix()   # leans toward local +y
            centre = c + Rz @ [0, 0, 0]
            low = centre + R @ [0, -T / 2, -L / 2]                # lowest edge
            centre = centre + [0, 0, 0.001 - low[2]]
            hs = 0.6 * L * np.cos(th)
            s = (hs - centre[2] + (T / 2) * np.sin(th)) / np.cos(th)
            touch = centre + R @ [0, T / 2, s]                    # where the +y face meets the block top
            depth = 0.06
            blk = touch + Rz @ [0, depth / 2 + 0.002, 0]
            sup = spec.worldbody.add_body(name="support", pos=[blk[0], blk[1], hs / 2])
            _box(sup, (0.16, depth, hs), R=Rz, rgba=(0.35, 0.33, 0.3, 1))
            body = _free_body(spec, "target", centre, R)
        density = 0.45 / (W * T * L)  # about 0.45 kg whatever the size
        _box(body, (W, T, L), rgba=rgba, density=density)
        look = c + [0, 0, 0.06]
    elif kind == "box":
        size = rng.uniform([0.04, 0.04, 0.04], [0.07, 0.07, 0.10])
        body = _free_body(spec, "target", c + [0, 0, size[2] / 2 + 0.001], Rz)
        _box(body, size, rgba=rgba, density=density)
        look = c + [0, 0, size[2] / 2]
    elif kind == "cylinder":
        r, h = rng.uniform(0.02, 0.035), rng.uniform(0.06, 0.12)
        body = _free_body(spec, "target", c + [0, 0, h / 2 + 0.001], Rz)
        g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[r, h / 2, 0], rgba=rgba, density=density)
        g.friction, g.condim = FRICTION, 4
        look = c + [0, 0, h / 2]
    else:
        r = rng.uniform(0.025, 0.035)
        body = _free_body(spec, "target", c + [0, 0, r + 0.001], Rz)
        g = body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[r, 0, 0], rgba=rgba, density=density)
        g.friction, g.condim = FRICTION, 4
        look = c + [0, 0, r]
    eye = look + np.array([-0.42 + rng.uniform(-0.05, 0.05), rng.uniform(-0.15, 0.15), 0.42 + rng.uniform(-0.05, 0.08)])
    return SceneSpec(kind, spec, "target", eye, np.asarray(look))
