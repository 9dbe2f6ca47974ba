"""`GraspGroup`: many 6-DoF parallel-jaw grasps in one (N, 17) array (graspnetAPI / AnyGrasp layout).

Row layout: [score, width, height, depth, R(9, row-major), t(3), object_id]. The gripper frame
follows graspnetAPI: approach along the gripper's local +x, closing (width) along +y, finger
height along +z; `t` is the grasp point and the fingers reach `depth` metres past it along +x.
Every method returns a new group; the array is never modified in place. The frame id and the
length unit travel with the group so a camera-frame group is not mistaken for a base-frame one.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Column layout (named so nobody counts columns by hand)
SCORE, WIDTH, HEIGHT, DEPTH = 0, 1, 2, 3
ROTATION = slice(4, 13)
TRANSLATION = slice(13, 16)
OBJECT_ID = 16
N_COLUMNS = 17


@dataclass(frozen=True)
class Grasp:
    """One grasp (a copy of one row)."""

    score: float
    width: float
    height: float
    depth: float
    rotation_matrix: np.ndarray
    translation: np.ndarray
    object_id: int
    frame_id: str = "camera_color_optical_frame"

    @property
    def approach(self) -> np.ndarray:
        return self.rotation_matrix[:, 0]

    @property
    def closing_axis(self) -> np.ndarray:
        return self.rotation_matrix[:, 1]

    def matrix(self) -> np.ndarray:
        """4x4 pose of the grasp frame in `frame_id`."""
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = self.rotation_matrix, self.translation
        return T

    def to_row(self) -> np.ndarray:
        row = np.zeros(N_COLUMNS)
        row[SCORE], row[WIDTH], row[HEIGHT], row[DEPTH] = self.score, self.width, self.height, self.depth
        row[ROTATION] = np.asarray(self.rotation_matrix, float).reshape(9)
        row[TRANSLATION] = np.asarray(self.translation, float).reshape(3)
        row[OBJECT_ID] = self.object_id
        return row


class GraspGroup:
    """An immutable-by-convention set of grasps; see the module docstring for the layout."""

    def __init__(self, array: np.ndarray | None = None, *, frame_id: str = "camera_color_optical_frame",
                 unit: str = "m", note: str = ""):
        arr = np.zeros((0, N_COLUMNS)) if array is None else np.asarray(array, dtype=np.float64)
        if arr.ndim == 1 and arr.size == N_COLUMNS:
            arr = arr.reshape(1, N_COLUMNS)
        if arr.ndim != 2 or arr.shape[1] != N_COLUMNS:
            raise ValueError(f"a grasp array must be (N, {N_COLUMNS}) rows [score, width, height, depth, "
                             f"R(9), t(3), object_id], got shape {arr.shape}")
        if unit != "m":
            raise ValueError(f"grasps are stored in metres; got unit {unit!r} (convert before building the group)")
        self._array = arr
        self._array.setflags(write=False)
        self.frame_id = frame_id
        self.unit = unit
        self.note = note  # why a group is empty or what filtered it; shown to users

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_parts(cls, *, scores, widths, heights, depths, rotations, translations, object_ids=None,
                   frame_id: str = "camera_color_optical_frame", note: str = "") -> "GraspGroup":
        scores = np.asarray(scores, float).reshape(-1)
        n = scores.shape[0]
        arr = np.zeros((n, N_COLUMNS))
        arr[:, SCORE] = scores
        arr[:, WIDTH] = np.broadcast_to(np.asarray(widths, float), (n,))
        arr[:, HEIGHT] = np.broadcast_to(np.asarray(heights, float), (n,))
        arr[:, DEPTH] = np.broadcast_to(np.asarray(depths, float), (n,))
        arr[:, ROTATION] = np.asarray(rotations, float).reshape(n, 9)
        arr[:, TRANSLATION] = np.asarray(translations, float).reshape(n, 3)
        arr[:, OBJECT_ID] = -1 if object_ids is None else np.broadcast_to(np.asarray(object_ids, float), (n,))
        return cls(arr, frame_id=frame_id, note=note)

    def _new(self, array: np.ndarray, note: str | None = None) -> "GraspGroup":
        return GraspGroup(np.array(array, copy=True), frame_id=self.frame_id, unit=self.unit,
                          note=self.note if note is None else note)

    # ---- views of the columns (read-only) ------------------------------------------------
    @property
    def grasp_group_array(self) -> np.ndarray:
        return self._array

    @property
    def scores(self) -> np.ndarray:
        return self._array[:, SCORE]

    @property
    def widths(self) -> np.ndarray:
        return self._array[:, WIDTH]

    @property
    def heights(self) -> np.ndarray:
        return self._array[:, HEIGHT]

    @property
    def depths(self) -> np.ndarray:
        return self._array[:, DEPTH]

    @property
    def rotation_matrices(self) -> np.ndarray:
        return self._array[:, ROTATION].reshape(-1, 3, 3)

    @property
    def translations(self) -> np.ndarray:
        return self._array[:, TRANSLATION]

    @property
    def object_ids(self) -> np.ndarray:
        return self._array[:, OBJECT_ID].astype(np.int64)

    @property
    def approaches(self) -> np.ndarray:
        return self.rotation_matrices[:, :, 0]

    def matrices(self) -> np.ndarray:
        """(N, 4, 4) poses of the grasp frames."""
        T = np.tile(np.eye(4), (len(self), 1, 1))
        T[:, :3, :3], T[:, :3, 3] = self.rotation_matrices, self.translations
        return T

    # ---- container protocol --------------------------------------------------------------
    def __len__(self) -> int:
        return self._array.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        if isinstance(index, numbers.Integral) and not isinstance(index, (bool, np.bool_)):
            row = self._array[int(index)]  # raises IndexError out of range, like a list
            return Grasp(float(row[SCORE]), float(row[WIDTH]), float(row[HEIGHT]), float(row[DEPTH]),
                         row[ROTATION].reshape(3, 3).copy(), row[TRANSLATION].copy(), int(row[OBJECT_ID]),
                         self.frame_id)
        if isinstance(index, slice):
            return self._new(self._array[index])
        idx = np.asarray(index)
        if idx.dtype == bool and idx.shape != (len(self),):
            raise IndexError(f"a boolean mask must have shape ({len(self)},), got {idx.shape}")
        if idx.dtype != bool and not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"index a GraspGroup with an int, a slice, a bool mask or int indices, got {idx.dtype}")
        return self._new(self._array[idx])

    def to_dicts(self) -> list[dict]:
        """Each grasp as plain fields (4x4 `pose` in this group's frame, score, width, depth): what a
        trace records and the overlay draws."""
        return [{"pose": T, "score": float(s), "width": float(w), "depth": float(d)}
                for T, s, w, d in zip(self.matrices(), self.scores, self.widths, self.depths)]

    def __repr__(self) -> str:
        return f"GraspGroup({len(self)} grasps, frame={self.frame_id!r}{', note=' + repr(self.note) if self.note else ''})"

    # ---- operations (all return new groups) ----------------------------------------------
    def sort_by_score(self, reverse: bool = False) -> "GraspGroup":
        """Best first (descending score); `reverse=True` gives worst first. Stable for ties."""
        order = np.argsort(self.scores, kind="stable") if reverse else np.argsort(-self.scores, kind="stable")
        return self._new(self._array[order])

    def transform(self, T: np.ndarray, frame_id: str | None = None) -> "GraspGroup":
        """Grasps expressed in another frame: T maps points of this group's frame into the new frame."""
        T = np.asarray(T, float)
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise ValueError(f"transform must be a finite 4x4 matrix, got shape {T.shape}")
        arr = np.array(self._array, copy=True)
        R, t = T[:3, :3], T[:3, 3]
        arr[:, ROTATION] = np.einsum("ij,njk->nik", R, self.rotation_matrices).reshape(-1, 9)
        arr[:, TRANSLATION] = self.translations @ R.T + t
        out = GraspGroup(arr, frame_id=frame_id or self.frame_id, unit=self.unit, note=self.note)
        return out

    def nms(self, translation_thresh: float = 0.03, rotation_thresh: float = np.deg2rad(30.0)) -> "GraspGroup":
        """Greedy non-maximum suppression: keep the best grasp, drop others closer than
        `translation_thresh` metres AND `rotation_thresh` radians to a kept one. Sorted output.

        The gripper is symmetric under a half-turn about its approach axis, so a grasp and its
        flipped twin count as the same rotation.
        """
        if translation_thresh < 0 or rotation_thresh < 0:
            raise ValueError("nms thresholds must be non-negative")
        g = self.sort_by_score()
        n = len(g)
        if n == 0:
            return g
        t, R = g.translations, g.rotation_matrices
        flip = np.diag([1.0, -1.0, -1.0])
        keep = np.ones(n, bool)
        cos_thresh = np.cos(rotation_thresh)
        for i in range(n):  # loop over kept grasps only; each step is vectorised over the rest
            if not keep[i]:
                continue
            rest = np.arange(i + 1, n)
            rest = rest[keep[rest]]
            if rest.size == 0:
                break
            close = np.linalg.norm(t[rest] - t[i], axis=1) < translation_thresh
            # angle of R_i^T R_j from its trace, for R_j and the flipped R_j
            tr = np.einsum("ji,nji->n", R[i], R[rest])
            tr_f = np.einsum("ji,nji->n", R[i], R[rest] @ flip)
            cos_a = np.clip((np.maximum(tr, tr_f) - 1.0) / 2.0, -1.0, 1.0)
            keep[rest[close & (cos_a > cos_thresh)]] = False
        return g._new(g._array[keep])

    def concatenate(self, other: "GraspGroup") -> "GraspGroup":
        if other.frame_id != self.frame_id:
            raise ValueError(f"cannot join grasps in {self.frame_id!r} with grasps in {other.frame_id!r}; transform first")
        return self._new(np.vstack([self._array, other._array]))

    # ---- files -----------------------------------------------------------------------------
    def save_npy(self, path: str | Path) -> None:
        np.save(Path(path), self._array)

    @classmethod
    def from_npy(cls, path: str | Path, *, frame_id: str = "camera_color_optical_frame") -> "GraspGroup":
        return cls(np.load(Path(path)), frame_id=frame_id)
