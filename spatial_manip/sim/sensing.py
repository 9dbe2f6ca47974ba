"""The sensing profile: how far the simulated cell is from a clean render, by name.

A real cell has an L515 whose depth is noisy and registered to colour a few pixels off, a
hand-eye calibration that is off by a millimetre or two, an arm that differs from its nominal
model, and light that is never the same twice. The simulator reproduces each of these as a
named *effect*; a *profile* switches them together, and any effect can be switched off by name
for diagnosis:

    ideal      none of them (clean renders, exact extrinsics, the nominal arm)
    realistic  all of them, at what a calibrated L515 + UR5 cell shows (the default of the
               benchmark, the demo, the oracle and sim_node)
    harsh      all of them with every noise and error doubled

    profile = sensing_profile("realistic", off="misregistration,arm_kinematics")
    draw = profile.draw(seed)   # one episode's realisation, the same for the same seed

Each effect draws from its own stream of the episode seed, so switching one off leaves the
others' draws unchanged. SimWorld applies a draw (sim/world.py); nothing here needs MuJoCo.
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.errors import ConfigError
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.transforms import make_transform

PROFILES = {"ideal": 0.0, "realistic": 1.0, "harsh": 2.0}      # name -> scale of every noise and error
EFFECTS = {
    "depth_noise": "L515 depth noise (range noise, flying pixels, holes, mm quantisation; geometry/noise.py)",
    "misregistration": "depth shifted against colour by 2-5 px (realsense-ros#1716), fixed per episode",
    "calibration": "the given camera extrinsics off the true pose by 1-2 mm and 0.05-0.15 deg, per episode",
    "arm_kinematics": "the simulated arm's links offset 0.2-1.0 mm each from the nominal model, per episode",
    "lighting": "light intensity 0.75-1.25 of nominal, per episode",
    "surface_colour": "each object's colour scaled by 0.92-1.08 per channel, per episode",
}
# The magnitudes of the realistic profile; harsh doubles each deviation.
MISREGISTRATION_PX = (2.0, 5.0)
CALIBRATION_M = (0.001, 0.002)             # what `calibrate --sim` achieves (issue #36)
CALIBRATION_DEG = (0.05, 0.15)
LINK_OFFSET_M = (0.0002, 0.001)            # per link: tenths of a millimetre to a millimetre
ARM_LINKS = ("shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link")
LIGHT_SPREAD = 0.25
COLOUR_SPREAD = 0.08


@dataclass(frozen=True, kw_only=True)
class SensingProfile:
    name: str = "ideal"
    off: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        if self.name not in PROFILES:
            raise ConfigError(f"unknown sensing profile {self.name!r}; expected one of {', '.join(PROFILES)}")
        object.__setattr__(self, "off", frozenset(parse_effects(self.off)))

    @property
    def scale(self) -> float:
        return PROFILES[self.name]

    def enabled(self, effect: str) -> bool:
        if effect not in EFFECTS:
            raise ValueError(f"unknown sensing effect {effect!r}; known: {', '.join(EFFECTS)}")
        return self.scale > 0 and effect not in self.off

    @property
    def label(self) -> str:
        """One line for reports: 'realistic' or 'realistic (off: calibration, misregistration)'."""
        return self.name + (f" (off: {', '.join(sorted(self.off))})" if self.off and self.scale > 0 else "")

    def to_dict(self) -> dict:
        return {"profile": self.name, "off": sorted(self.off), "scale": self.scale,
                "effects": [e for e in EFFECTS if self.enabled(e)]}

    def draw(self, seed: int) -> SensingDraw:
        """This profile's effects for the episode with `seed` (each from its own stream)."""
        k = self.scale
        on = self.enabled
        return SensingDraw(
            profile=self,
            depth_noise=L515Noise().scaled(k) if on("depth_noise") else None,
            depth_shift_px=_shift_px(_stream(seed, "misregistration"), k) if on("misregistration") else (0, 0),
            T_cam_error=_pose_error(_stream(seed, "calibration"), k) if on("calibration") else np.eye(4),
            link_offsets_m=_link_offsets(_stream(seed, "arm_kinematics"), k) if on("arm_kinematics") else {},
            light_scale=float(1 + k * LIGHT_SPREAD * _stream(seed, "lighting").uniform(-1, 1)) if on("lighting") else 1.0,
            colour_seed=int(_stream(seed, "surface_colour").integers(2 ** 31)),
            colour_spread=k * COLOUR_SPREAD if on("surface_colour") else 0.0)


@dataclass(frozen=True, kw_only=True, eq=False)
class SensingDraw:
    """One episode's realisation of a profile."""
    profile: SensingProfile
    depth_noise: L515Noise | None            # None: clean depth
    depth_shift_px: tuple[int, int]          # (du, dv): the depth image moved right and down by this
    T_cam_error: np.ndarray                  # the calibrated extrinsics are T_base_cam_true @ T_cam_error
    link_offsets_m: dict                     # arm body name -> (3,) offset of its origin in its parent
    light_scale: float
    colour_seed: int
    colour_spread: float

    def colour_gains(self, n: int) -> np.ndarray:
        """(n, 3) factors on the RGB of n objects (ones when surface colour is off)."""
        if self.colour_spread == 0:
            return np.ones((n, 3))
        return 1 + self.colour_spread * np.random.default_rng(self.colour_seed).uniform(-1, 1, (n, 3))

    def shift_depth(self, depth_m: np.ndarray) -> np.ndarray:
        """The depth image moved by depth_shift_px against the colour image (no return where it
        moved in from beyond the edge)."""
        du, dv = self.depth_shift_px
        if du == 0 and dv == 0:
            return depth_m
        out = np.zeros_like(depth_m)
        h, w = depth_m.shape
        out[max(dv, 0):h + min(dv, 0), max(du, 0):w + min(du, 0)] = \
            depth_m[max(-dv, 0):h + min(-dv, 0), max(-du, 0):w + min(-du, 0)]
        return out

    def summary(self) -> dict:
        """The draw's magnitudes, for a log line or a test."""
        rot = Rotation.from_matrix(self.T_cam_error[:3, :3]).magnitude()
        return {"profile": self.profile.label, "depth_noise": self.depth_noise is not None,
                "depth_shift_px": list(self.depth_shift_px),
                "calibration_mm": round(float(np.linalg.norm(self.T_cam_error[:3, 3])) * 1000, 2),
                "calibration_deg": round(math.degrees(rot), 3),
                "link_offsets_mm": {k: round(float(np.linalg.norm(v)) * 1000, 2) for k, v in self.link_offsets_m.items()},
                "light_scale": round(self.light_scale, 3), "colour_spread": self.colour_spread}


def parse_effects(off) -> list[str]:
    """Effect names from 'a,b', a list of them, or nothing; an unknown name is refused."""
    names = [s.strip() for s in off.split(",")] if isinstance(off, str) else [str(s).strip() for s in off or ()]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in EFFECTS]
    if unknown:
        raise ConfigError(f"unknown sensing effect {unknown[0]!r} to switch off; known: {', '.join(EFFECTS)}")
    return names


def sensing_profile(name: str = "realistic", off="") -> SensingProfile:
    return SensingProfile(name=str(name).strip(), off=frozenset(parse_effects(off)))


def only(*effects: str) -> SensingProfile:
    """The realistic profile with every effect but `effects` off."""
    return sensing_profile("realistic", [e for e in EFFECTS if e not in parse_effects(effects)])


IDEAL = SensingProfile(name="ideal")


def add_arguments(p: argparse.ArgumentParser, default: str = "realistic") -> None:
    p.add_argument("--sensing", default=default, choices=list(PROFILES),
                   help="sensing profile: ideal (clean renders, exact extrinsics, nominal arm), realistic (L515 "
                        "noise, misregistration, calibration and arm errors, lighting), harsh (doubled) "
                        "(default: %(default)s)")
    p.add_argument("--sensing-off", default="", type=_effects_arg, metavar="EFFECT[,EFFECT]",
                   help=f"switch effects of the profile off, for diagnosis: {', '.join(EFFECTS)}")


def from_args(args) -> SensingProfile:
    return sensing_profile(args.sensing, args.sensing_off)


def _effects_arg(text: str) -> str:
    try:
        return ",".join(parse_effects(text))
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _stream(seed: int, effect: str) -> np.random.Generator:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, 36, list(EFFECTS).index(effect)])


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(3)
    return v / np.linalg.norm(v)


def _shift_px(rng: np.random.Generator, k: float) -> tuple[int, int]:
    r = k * rng.uniform(*MISREGISTRATION_PX)
    a = rng.uniform(0, 2 * math.pi)
    return round(r * math.cos(a)), round(r * math.sin(a))


def _pose_error(rng: np.random.Generator, k: float) -> np.ndarray:
    t = _unit(rng) * k * rng.uniform(*CALIBRATION_M)
    R = Rotation.from_rotvec(_unit(rng) * math.radians(k * rng.uniform(*CALIBRATION_DEG))).as_matrix()
    return make_transform(R, t)


def _link_offsets(rng: np.random.Generator, k: float) -> dict:
    return {link: _unit(rng) * k * rng.uniform(*LINK_OFFSET_M) for link in ARM_LINKS}
