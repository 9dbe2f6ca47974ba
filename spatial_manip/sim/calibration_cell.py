"""A simulated calibration cell in MuJoCo: the project's UR5e + Robotiq 2F-85 model with a ChArUco
plate (OpenCV's own board image as a texture) either fixed beyond the gripper's fingertips
(eye-to-hand, camera fixed in the cell) or lying on the table (eye-in-hand, camera on the flange).

Everything a real session records comes out of it: rendered RGB images with sensor noise, their
exposure stamps, and a /joint_states-like stream at 125 Hz in which the arm moves between the
poses and rests at each while the image is taken. The ground truth (the camera's mounting) comes
from MuJoCo's model, not from the DH kinematics the calibration uses (they differ by ~1 mm, as a
real arm's nominal model differs from the arm).
"""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
import json

import cv2
import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.device import Closeable
from spatial_manip.calibration.board import BoardConfig
from spatial_manip.control.kinematics import DH_PRESETS, JOINT_NAMES, URKinematics
from spatial_manip.errors import UnreachableError
from spatial_manip.camera_model import CameraIntrinsics, project
from spatial_manip.transforms import apply, invert, make_transform
from spatial_manip.calibration.samples import write_samples
from spatial_manip.scene import Scene, Viewpoint
from spatial_manip.sim import mjcf

# The nominal arm configuration (elbow up, tool in front of the base) IK solutions stay near.
Q_NOMINAL = np.array([-math.pi, -1.9, 1.9, -1.57, -1.57, 0.0])
FLIP_Z = np.diag([1.0, -1.0, -1.0])        # optical frame <-> MuJoCo camera (looks along -z, +y up)
PLATE_THICKNESS_M = 0.004


def _quat_wxyz(R) -> list:
    q = Rotation.from_matrix(np.asarray(R, float)).as_quat()
    return [float(q[3]), float(q[0]), float(q[1]), float(q[2])]


def plate_to_board(board: BoardConfig) -> np.ndarray:
    """T_plate_board: OpenCV's board frame on the plate's textured +z face. MuJoCo maps the image
    onto that face with its top row at +y; the board's origin is the image's top-left corner and
    its z points into the plate (checked by rendering and detecting)."""
    w, h = board.size_m
    return make_transform(np.diag([1.0, -1.0, -1.0]), [-w / 2, h / 2, PLATE_THICKNESS_M / 2])


@dataclass(frozen=True)
class CellConfig:
    """Where things are. Eye-to-hand: the fixed camera looks from `camera_position` at
    `camera_target`; the plate sits `plate_offset_m` beyond the flange. Eye-in-hand: the camera
    rides on the flange at `T_tool0_camera`; the board lies on the table centred at `table_board_center`."""

    mode: str = "eye_to_hand"
    width: int = 640
    height: int = 480
    fovy_deg: float = 43.3                            # the L515's colour camera at 640x480
    camera_position: tuple = (1.25, 0.20, 0.80)
    camera_target: tuple = (0.45, 0.0, 0.30)
    plate_offset_m: float = 0.175                     # just past the 2F-85's fingertips (0.156 m)
    plate_yaw_deg: float = 90.0                       # the board's x across the fingers
    T_tool0_camera: tuple = ((0.0, -1.0, 0.0, 0.0), (1.0, 0.0, 0.0, -0.09), (0.0, 0.0, 1.0, 0.04), (0, 0, 0, 1))
    table_board_center: tuple = (0.50, 0.05, 0.0)
    pixel_noise: float = 2.0                          # grey levels (sigma) added to every pixel


def _look_from(position, target, roll: float = 0.0) -> np.ndarray:
    """An optical frame at `position` looking at `target`, image up towards world +z, rolled."""
    z = np.asarray(target, float) - np.asarray(position, float)
    z /= np.linalg.norm(z)
    x = np.cross(z, [0.0, 0.0, 1.0])
    x = x / np.linalg.norm(x) if np.linalg.norm(x) > 1e-6 else np.array([0.0, -1.0, 0.0])
    R = np.column_stack([x, np.cross(z, x), z]) @ Rotation.from_rotvec([0, 0, roll]).as_matrix()
    return make_transform(R, position)


def truth_T_tool0_board(cell: CellConfig, board: BoardConfig) -> np.ndarray:
    T_tool0_plate = make_transform(Rotation.from_euler("z", cell.plate_yaw_deg, degrees=True).as_matrix(),
                                   [0.0, 0.0, cell.plate_offset_m + PLATE_THICKNESS_M / 2])
    return T_tool0_plate @ plate_to_board(board)


def truth_T_base_board(cell: CellConfig, board: BoardConfig) -> np.ndarray:
    c = np.asarray(cell.table_board_center, float) + [0.0, 0.0, PLATE_THICKNESS_M / 2]
    return make_transform(np.eye(3), c) @ plate_to_board(board)


@dataclass
class SimCapture:
    """What a calibration session records, plus the truth to score it."""

    mode: str
    intrinsics: CameraIntrinsics
    images: list[np.ndarray]
    image_stamps: list[float]
    joint_stamps: np.ndarray          # (M,)
    joint_positions: np.ndarray       # (M, 6)
    T_mount_camera_true: np.ndarray   # T_base_camera or T_tool0_camera, from the MuJoCo model
    T_other_true: np.ndarray          # T_tool0_board or T_base_board
    q_samples: list[np.ndarray] = field(default_factory=list)


class CalibrationCell(Closeable):
    """The MuJoCo model of the cell with the board; `render(q)` poses the arm and takes a picture."""

    def __init__(self, board: BoardConfig, cell: CellConfig | None = None, *, px_per_square: int = 160):
        os.environ.setdefault("MUJOCO_GL", "egl")   # headless; a value the user set is kept
        import mujoco

        self._mj = mujoco
        self.board, self.cell = board, cell or CellConfig()
        if self.cell.mode not in ("eye_to_hand", "eye_in_hand"):
            raise ValueError(f"cell mode must be eye_to_hand or eye_in_hand, got {self.cell.mode!r}")
        self.intrinsics = CameraIntrinsics.from_fovy(self.cell.width, self.cell.height, self.cell.fovy_deg)
        with tempfile.TemporaryDirectory() as tmp:   # MuJoCo reads the texture at compile time
            png = Path(tmp) / "charuco.png"
            _write_png(png, board.image(px_per_square))
            spec = self._build_spec(str(png))
            self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self._renderer = None
        self._qadr = [self.model.jnt_qposadr[self.model.joint(n).id] for n in self._arm_joints]
        self.pose_arm(Q_NOMINAL)      # MuJoCo fills the frames (and the truth) only after mj_forward

    # --- model -----------------------------------------------------------------------------
    def _build_spec(self, texture_file: str):
        c = self.cell
        fwd = np.asarray(c.camera_target, float) - np.asarray(c.camera_position, float)
        scene = Scene(Viewpoint(c.camera_position, fwd), Viewpoint([0, 0, 0], [1, 0, 0]))
        spec, _ = mjcf.build_spec(scene, width=c.width, height=c.height, fovy_deg=c.fovy_deg,
                                  book_density=350.0, timestep_s=0.002)
        self._arm_joints = mjcf.ARM_JOINTS
        self._camera = mjcf.CAMERA
        self._add_material(spec, texture_file)
        wrist = spec.body("wrist_3_link")
        T_w3_tool0 = self._site_in_body(spec, "attachment_site")
        if c.mode == "eye_to_hand":
            self._add_plate(wrist, T_w3_tool0 @ truth_T_tool0_board(c, self.board) @ invert(plate_to_board(self.board)))
        else:
            self._add_plate(spec.worldbody, truth_T_base_board(c, self.board) @ invert(plate_to_board(self.board)))
            cam = wrist.add_camera()
            cam.name = self._camera = "flange_camera"
            T = T_w3_tool0 @ np.asarray(c.T_tool0_camera, float)
            cam.pos, cam.quat, cam.fovy = T[:3, 3].tolist(), _quat_wxyz(T[:3, :3] @ FLIP_Z), c.fovy_deg
        return spec

    def _add_material(self, spec, texture_file: str) -> None:
        mj = self._mj
        tex = spec.add_texture()
        tex.name, tex.type, tex.file = "charuco", mj.mjtTexture.mjTEXTURE_2D, texture_file
        mat = spec.add_material()
        mat.name = "charuco"
        mat.textures[mj.mjtTextureRole.mjTEXROLE_RGB] = "charuco"
        mat.texrepeat, mat.texuniform = [1, 1], False     # one copy of the image over the face
        mat.specular, mat.shininess = 0.0, 0.0             # a matte print: no glare on the markers

    def _add_plate(self, parent, T_parent_plate: np.ndarray) -> None:
        w, h = self.board.size_m
        g = parent.add_geom()
        g.name = "charuco_plate"
        g.type = self._mj.mjtGeom.mjGEOM_BOX
        g.size = [w / 2, h / 2, PLATE_THICKNESS_M / 2]
        g.pos, g.quat = T_parent_plate[:3, 3].tolist(), _quat_wxyz(T_parent_plate[:3, :3])
        g.material = "charuco"
        g.contype = g.conaffinity = 0     # a picture, not an obstacle

    @staticmethod
    def _site_in_body(spec, name: str) -> np.ndarray:
        s = spec.site(name)
        q = np.asarray(s.quat, float)
        return make_transform(Rotation.from_quat([q[1], q[2], q[3], q[0]]).as_matrix(), s.pos)

    # --- state and truth -------------------------------------------------------------------
    def pose_arm(self, q) -> None:
        self.data.qpos[self._qadr] = np.asarray(q, float).reshape(6)
        self._mj.mj_forward(self.model, self.data)

    def T_base_tool0(self) -> np.ndarray:
        s = self.model.site("attachment_site").id
        return make_transform(self.data.site_xmat[s].reshape(3, 3), self.data.site_xpos[s])

    def T_base_camera(self) -> np.ndarray:
        cid = self.model.camera(self._camera).id
        return make_transform(self.data.cam_xmat[cid].reshape(3, 3) @ FLIP_Z, self.data.cam_xpos[cid])

    def truth(self) -> tuple[np.ndarray, np.ndarray]:
        """(T_mount_camera, T_other) as the MuJoCo model has them (arm pose independent)."""
        if self.cell.mode == "eye_to_hand":
            return self.T_base_camera(), truth_T_tool0_board(self.cell, self.board)
        return invert(self.T_base_tool0()) @ self.T_base_camera(), truth_T_base_board(self.cell, self.board)

    def render(self, q, rng: np.random.Generator | None = None) -> np.ndarray:
        self.pose_arm(q)
        if self._renderer is None:
            self._renderer = self._mj.Renderer(self.model, self.cell.height, self.cell.width)
        self._renderer.update_scene(self.data, camera=self._camera)
        rgb = self._renderer.render().astype(np.float32)
        if rng is not None and self.cell.pixel_noise > 0:     # float32 draws: 4x faster than normal()
            rgb += self.cell.pixel_noise * rng.standard_normal(rgb.shape, dtype=np.float32)
        return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


# --- poses ---------------------------------------------------------------------------------------
def _tilted(R: np.ndarray, rng: np.random.Generator, max_tilt_deg: float, max_roll_deg: float) -> np.ndarray:
    """R tilted about a random axis across its z by up to max_tilt, and rolled about z: hand-eye
    needs rotations about at least two different axes between the samples."""
    axis = np.array([*rng.normal(size=2), 0.0])
    axis /= np.linalg.norm(axis)
    tilt = Rotation.from_rotvec(axis * math.radians(rng.uniform(-max_tilt_deg, max_tilt_deg))).as_matrix()
    roll = Rotation.from_rotvec([0, 0, math.radians(rng.uniform(-max_roll_deg, max_roll_deg))]).as_matrix()
    return R @ tilt @ roll


def _board_in_view(T_cam_board: np.ndarray, board: BoardConfig, intr: CameraIntrinsics, margin_px: float = 15) -> bool:
    w, h = board.size_m
    corners = np.array([[0, 0, 0], [w, 0, 0], [0, h, 0], [w, h, 0]], float)
    uv, inside = project(apply(T_cam_board, corners), intr)
    ok = inside & (uv[:, 0] > margin_px) & (uv[:, 0] < intr.width - margin_px) \
        & (uv[:, 1] > margin_px) & (uv[:, 1] < intr.height - margin_px)
    facing = T_cam_board[:3, 2] @ (T_cam_board[:3, 3] / np.linalg.norm(T_cam_board[:3, 3])) > math.cos(math.radians(55))
    return bool(np.all(ok) and facing)


def sample_poses(cell: "CalibrationCell", n: int, rng: np.random.Generator, *, max_tilt_deg: float = 30.0,
                 max_roll_deg: float = 45.0, attempts: int = 400) -> list[np.ndarray]:
    """`n` arm configurations (near Q_NOMINAL, within the joint limits) from which the camera sees
    the whole board at a varied angle. Raises UnreachableError when too few are found."""
    kin = URKinematics(**DH_PRESETS["ur5e"])
    T_cam_true, T_other = cell.truth()
    c, b, out = cell.cell, cell.board, []
    for _ in range(attempts):
        if len(out) == n:
            break
        T_base_tool0 = (_eye_to_hand_flange(c, b, T_cam_true, T_other, rng, max_tilt_deg, max_roll_deg)
                        if c.mode == "eye_to_hand" else
                        _eye_in_hand_flange(c, b, T_cam_true, T_other, rng, max_tilt_deg, max_roll_deg))
        sols = kin.ik_all(T_base_tool0, Q_NOMINAL)
        if not sols:
            continue
        q = min(sols, key=lambda s: float(np.max(np.abs(s - Q_NOMINAL))))
        if float(np.max(np.abs(q - Q_NOMINAL))) > 2.0:
            continue    # a far branch: the arm would fold through itself
        T_cam_board = (invert(T_cam_true) @ T_base_tool0 @ T_other if c.mode == "eye_to_hand"
                       else invert(T_base_tool0 @ T_cam_true) @ T_other)
        if _board_in_view(T_cam_board, b, cell.intrinsics):
            out.append(q)
    if len(out) < n:
        raise UnreachableError(f"found only {len(out)} of {n} arm poses that show the whole board; "
                               "move the camera or the board, or ask for fewer poses")
    return out


def _eye_to_hand_flange(c, b, T_base_cam, T_tool0_board, rng, max_tilt, max_roll) -> np.ndarray:
    centre = np.asarray(c.camera_target, float) + rng.uniform([-0.1, -0.15, -0.08], [0.1, 0.15, 0.12])
    T_face = _look_from(c.camera_position, centre)       # board facing the camera squarely ...
    R = _tilted(T_face[:3, :3], rng, max_tilt, max_roll)  # ... then tilted and rolled
    T_base_board = make_transform(R, centre - R @ b.center)
    return T_base_board @ invert(T_tool0_board)


def _eye_in_hand_flange(c, b, T_tool0_cam, T_base_board, rng, max_tilt, max_roll) -> np.ndarray:
    centre = apply(T_base_board, b.center)
    axis = Rotation.from_rotvec([*rng.normal(0, 1, 2) * math.radians(max_tilt) / 2, 0]).apply([0, 0, 1.0])
    eye = centre + axis * rng.uniform(0.35, 0.55)
    T_base_cam = _look_from(eye, centre + rng.uniform(-0.03, 0.03, 3), math.radians(rng.uniform(-max_roll, max_roll)))
    return T_base_cam @ invert(T_tool0_cam)


def capture(cell: CalibrationCell, qs: list[np.ndarray], rng: np.random.Generator, *, dwell_s: float = 1.0,
            move_s: float = 1.0, joint_rate_hz: float = 125.0) -> SimCapture:
    """Render one image per arm pose, stamped mid-dwell, and a joint stream (with 1 ms stamp
    jitter) in which the arm rests at each pose for `dwell_s` and moves linearly in between."""
    images, stamps, knots_t, knots_q = [], [], [], []
    period = dwell_s + move_s
    for k, q in enumerate(qs):
        t0 = move_s + k * period
        knots_t += [t0, t0 + dwell_s]
        knots_q += [q, q]
        images.append(cell.render(q, rng))
        stamps.append(t0 + dwell_s / 2)
    t = np.arange(0.0, knots_t[-1] + move_s, 1.0 / joint_rate_hz) + rng.uniform(-1e-3, 1e-3)
    knots_t = [0.0] + knots_t
    knots_q = np.array([Q_NOMINAL] + knots_q)
    joints = np.column_stack([np.interp(t, knots_t, knots_q[:, j]) for j in range(6)])
    T_true, T_other = cell.truth()
    return SimCapture(cell.cell.mode, cell.intrinsics, images, stamps, t, joints, T_true, T_other, list(qs))


def write_capture(cap: SimCapture, folder: str | Path) -> Path:
    """A samples folder (samples.json + PNGs, as the live capture writes) and truth.json."""

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k, img in enumerate(cap.images):
        name = f"img_{k:03d}.png"
        _write_png(folder / name, img[..., ::-1])      # RGB -> OpenCV's BGR
        files.append((name, float(cap.image_stamps[k])))
    robot = [{"stamp": float(s), "names": list(JOINT_NAMES), "joints": [float(v) for v in q]}
             for s, q in zip(cap.joint_stamps, cap.joint_positions)]
    path = write_samples(folder, mode=cap.mode, intrinsics=cap.intrinsics, images=files, robot=robot)
    (folder / "truth.json").write_text(json.dumps({"mode": cap.mode, "T_mount_camera": cap.T_mount_camera_true.tolist(),
                                                   "T_other": cap.T_other_true.tolist()}, indent=1))
    return path


def _write_png(path: Path, image: np.ndarray) -> None:
    if not cv2.imwrite(str(path), image):
        raise OSError(f"could not write {path}")
