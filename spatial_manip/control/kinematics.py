"""UR5 / UR5e forward and analytic inverse kinematics from the standard DH parameters.

Frames: `base` is the robot base (z up), the chain ends at `tool0` (the flange); a fixed TCP
offset `T_tool0_tcp` (the gripper's grasp point) is applied on top. The inverse follows the
closed-form derivation for the UR family (K. Hawkins, "Analytic Inverse Kinematics for the
Universal Robots UR-5/UR-10 Arms", 2013): shoulder (2 branches) x wrist (2) x elbow (2) = up
to 8 solutions, each then wrapped by 2*pi into the joint limits as close as possible to a
reference configuration.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import numpy as np

from spatial_manip.errors import ConfigError, InvalidGoalError, UnreachableError
from spatial_manip.transforms import rotvec_pose_to_matrix

JOINT_NAMES = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint",
               "wrist_1_joint", "wrist_2_joint", "wrist_3_joint")

# UR's published DH values, metres (INTEROP.md); alpha = pi/2, 0, 0, pi/2, -pi/2, 0.
SECTION_KEYS = ("model", "dh", "joint_limits", "tcp_offset")
DH_KEYS = ("d1", "a2", "a3", "d4", "d5", "d6")

DH_PRESETS: dict[str, dict[str, float]] = {
    "ur5": {"d1": 0.089159, "a2": -0.425, "a3": -0.39225, "d4": 0.10915, "d5": 0.09465, "d6": 0.0823},
    "ur5e": {"d1": 0.1625, "a2": -0.425, "a3": -0.3922, "d4": 0.1333, "d5": 0.0997, "d6": 0.0996},
}
_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)
_EPS = 1e-9


@dataclasses.dataclass(frozen=True, kw_only=True)
class URKinematics:
    """DH chain of a UR arm plus joint limits (radians) and the flange->TCP transform."""

    d1: float
    a2: float
    a3: float
    d4: float
    d5: float
    d6: float
    q_min: tuple[float, ...] = (-2 * math.pi,) * 6
    q_max: tuple[float, ...] = (2 * math.pi,) * 6
    T_tool0_tcp: np.ndarray = dataclasses.field(default_factory=lambda: np.eye(4))

    def __post_init__(self):
        if len(self.q_min) != 6 or len(self.q_max) != 6:
            raise InvalidGoalError(f"joint limits need 6 values each, got {len(self.q_min)} and {len(self.q_max)}")
        if any(lo >= hi for lo, hi in zip(self.q_min, self.q_max)):
            raise InvalidGoalError(f"every q_min must be below q_max, got {self.q_min} / {self.q_max}")
        T = np.asarray(self.T_tool0_tcp, float)
        if T.shape != (4, 4):
            raise InvalidGoalError(f"T_tool0_tcp must be 4x4, got shape {T.shape}")
        object.__setattr__(self, "T_tool0_tcp", T)

    @classmethod
    def from_config(cls, cfg: Mapping) -> "URKinematics":
        """Build from the `kinematics` section of arm.yaml: `model`, `dh` presets, limits, TCP
        offset. A misspelt key is refused by name (a dropped `tcp_offset` would move every grasp)."""
        _only_keys(cfg, SECTION_KEYS, "kinematics")
        model = str(cfg.get("model", "ur5e")).lower()
        dh_table = dict(DH_PRESETS)
        for name, dh in (cfg.get("dh") or {}).items():
            _only_keys(dh, DH_KEYS, f"kinematics.dh.{name}", required=True)
            dh_table[name.lower()] = dh
        if model not in dh_table:
            raise ConfigError(f"kinematics.model: unknown UR model {model!r}; known: {sorted(dh_table)} (add its DH under kinematics.dh)")
        limits = cfg.get("joint_limits") or {}
        kwargs = dict(dh_table[model])
        if limits:
            _only_keys(limits, ("min", "max"), "kinematics.joint_limits", required=True)
            kwargs["q_min"] = tuple(float(v) for v in limits["min"])
            kwargs["q_max"] = tuple(float(v) for v in limits["max"])
        kwargs["T_tool0_tcp"] = tcp_offset_matrix(cfg.get("tcp_offset", [0, 0, 0, 0, 0, 0]))
        return cls(**{k: (float(v) if isinstance(v, (int, float)) else v) for k, v in kwargs.items()})

    # ---- forward -------------------------------------------------------------------------
    @property
    def _a(self):
        return (0.0, self.a2, self.a3, 0.0, 0.0, 0.0)

    @property
    def _d(self):
        return (self.d1, 0.0, 0.0, self.d4, self.d5, self.d6)

    def _link(self, i: int, theta: float) -> np.ndarray:
        ct, st = math.cos(theta), math.sin(theta)
        ca, sa = math.cos(_ALPHA[i]), math.sin(_ALPHA[i])
        return np.array([[ct, -st * ca, st * sa, self._a[i] * ct],
                         [st, ct * ca, -ct * sa, self._a[i] * st],
                         [0.0, sa, ca, self._d[i]],
                         [0.0, 0.0, 0.0, 1.0]])

    def fk_flange(self, q: Sequence[float]) -> np.ndarray:
        """T_base_tool0 for joint angles q (6, radians)."""
        T = np.eye(4)
        for i, th in enumerate(np.asarray(q, float).reshape(6)):
            T = T @ self._link(i, th)
        return T

    def joint_origins(self, q: Sequence[float]) -> np.ndarray:
        """(7, 3) origins of DH frames 0..6 (base, shoulder, elbow, wrist 1-3, tool0) for q: the
        polyline the arm's links follow, for clearance checks against a point cloud."""
        T, out = np.eye(4), [np.zeros(3)]
        for i, th in enumerate(np.asarray(q, float).reshape(6)):
            T = T @ self._link(i, th)
            out.append(T[:3, 3].copy())
        return np.array(out)

    def fk(self, q: Sequence[float]) -> np.ndarray:
        """T_base_tcp for joint angles q."""
        return self.fk_flange(q) @ self.T_tool0_tcp

    # ---- inverse -------------------------------------------------------------------------
    def ik_flange(self, T06: np.ndarray, q6_default: float = 0.0) -> list[np.ndarray]:
        """All (up to 8) raw solutions in (-pi, pi] for a flange pose; [] when unreachable."""
        T06 = np.asarray(T06, float)
        a2, a3, d4, d6 = self.a2, self.a3, self.d4, self.d6
        p05 = T06 @ np.array([0.0, 0.0, -d6, 1.0])
        r = math.hypot(p05[0], p05[1])
        if r < abs(d4) - 1e-12:
            return []  # wrist centre inside the shoulder cylinder
        psi = math.atan2(p05[1], p05[0])
        phi = math.acos(np.clip(d4 / max(r, _EPS), -1.0, 1.0))
        out: list[np.ndarray] = []
        for s1 in (1, -1):
            th1 = psi + s1 * phi + math.pi / 2
            c1, sn1 = math.cos(th1), math.sin(th1)
            c5v = (T06[0, 3] * sn1 - T06[1, 3] * c1 - d4) / d6
            if abs(c5v) > 1.0 + 1e-9:
                continue
            for s5 in (1, -1):
                th5 = s5 * math.acos(np.clip(c5v, -1.0, 1.0))
                s5v = math.sin(th5)
                if abs(s5v) < 1e-7:
                    th6 = q6_default  # wrist singularity: q6 is free, keep the caller's value
                else:
                    th6 = math.atan2(-(T06[0, 1] * sn1 - T06[1, 1] * c1) / s5v,
                                     (T06[0, 0] * sn1 - T06[1, 0] * c1) / s5v)
                T14 = (np.linalg.inv(self._link(0, th1)) @ T06
                       @ np.linalg.inv(self._link(4, th5) @ self._link(5, th6)))
                px, py = T14[0, 3], T14[1, 3]
                # frame 4's origin sits d4 out of the arm plane (along z of frame 1); the
                # shoulder-elbow-wrist triangle lies in x/y of frame 1.
                norm2 = px * px + py * py
                c3 = (norm2 - a2 * a2 - a3 * a3) / (2 * a2 * a3)
                if abs(c3) > 1.0 + 1e-9:
                    continue
                for s3 in (1, -1):
                    th3 = s3 * math.acos(np.clip(c3, -1.0, 1.0))
                    # planar two-link: p = a2 [c2, s2] + a3 [c23, s23]
                    th2 = math.atan2(py, px) - math.atan2(a3 * math.sin(th3), a2 + a3 * math.cos(th3))
                    T13 = self._link(1, th2) @ self._link(2, th3)
                    T34 = np.linalg.inv(T13) @ T14
                    th4 = math.atan2(T34[1, 0], T34[0, 0])
                    q = np.array([th1, th2, th3, th4, th5, th6])
                    out.append(np.arctan2(np.sin(q), np.cos(q)))
        return [q for q in out if _pose_error(self.fk_flange(q), T06) < 1e-6]

    def ik_all(self, T_base_tcp: np.ndarray, q_ref: Sequence[float] | None = None) -> list[np.ndarray]:
        """Every solution within the joint limits for a TCP pose, each wrapped closest to q_ref."""
        q_ref = np.zeros(6) if q_ref is None else np.asarray(q_ref, float).reshape(6)
        T06 = np.asarray(T_base_tcp, float) @ np.linalg.inv(self.T_tool0_tcp)
        sols = []
        for q in self.ik_flange(T06, q6_default=float(q_ref[5])):
            wrapped = self._wrap_into_limits(q, q_ref)
            if wrapped is not None:
                sols.append(wrapped)
        return sols

    def ik(self, T_base_tcp: np.ndarray, q_ref: Sequence[float] | None = None) -> np.ndarray:
        """The solution closest to q_ref (max joint change); UnreachableError if none."""
        q_ref = np.zeros(6) if q_ref is None else np.asarray(q_ref, float).reshape(6)
        sols = self.ik_all(T_base_tcp, q_ref)
        if not sols:
            p = np.asarray(T_base_tcp)[:3, 3]
            raise UnreachableError(
                f"no inverse-kinematics solution within the joint limits for TCP position "
                f"{np.round(p, 4).tolist()} m; move the target closer to the robot or change its orientation")
        return min(sols, key=lambda q: float(np.max(np.abs(q - q_ref))) + 1e-3 * float(np.sum(np.abs(q - q_ref))))

    def within_limits(self, q: Sequence[float]) -> bool:
        q = np.asarray(q, float)
        return bool(np.all(q >= np.asarray(self.q_min) - 1e-9) and np.all(q <= np.asarray(self.q_max) + 1e-9))

    def _wrap_into_limits(self, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray | None:
        out = np.empty(6)
        for j in range(6):
            # candidates q + 2*pi*k inside the limits; keep the one nearest the reference
            ks = range(math.ceil((self.q_min[j] - q[j]) / (2 * math.pi) - 1e-12),
                       math.floor((self.q_max[j] - q[j]) / (2 * math.pi) + 1e-12) + 1)
            cands = [q[j] + 2 * math.pi * k for k in ks]
            if not cands:
                return None
            out[j] = min(cands, key=lambda v: abs(v - q_ref[j]))
        return out


def tcp_offset_matrix(offset6: Sequence[float]) -> np.ndarray:
    """UR-style TCP offset [x, y, z, rx, ry, rz] (as set on the teach pendant) to T_tool0_tcp."""
    vals = [float(v) for v in offset6]
    if len(vals) != 6:
        raise InvalidGoalError(f"tcp_offset must be [x, y, z, rx, ry, rz], got {offset6!r}")
    return rotvec_pose_to_matrix(vals)


def _pose_error(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(A[:3, 3] - B[:3, 3]) + np.linalg.norm(A[:3, :3] - B[:3, :3]))


def _only_keys(values, known: tuple, where: str, *, required: bool = False) -> None:
    """Refuse a key of `values` that is not in `known` (and, if `required`, a missing one)."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where} must be a mapping, got {values!r}")
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(known)}")
    missing = [k for k in known if k not in values] if required else []
    if missing:
        raise ConfigError(f"{where}: missing key {missing[0]!r}")
