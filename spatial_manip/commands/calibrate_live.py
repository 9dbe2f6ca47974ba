"""Live calibration. Interactive: the user moves the arm in freedrive and presses Enter.
Automatic (eye-in-hand): the arm visits a planned pose set through the ArmMotion action. Either
way each pose is checked (board seen, image paired in time) and saved at once to the capture
folder, so a crash loses nothing and the same folder can be solved again offline with --samples."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from spatial_manip.calibration.board import BoardConfig, BoardError, detect
from spatial_manip.calibration.guidance import guidance
from spatial_manip.calibration.procedure import calibrate_folder
from spatial_manip.calibration.samples import (SampleError, flange_from_joints, load_samples, pair_by_stamp,
                                               write_samples)
from spatial_manip.control.kinematics import DH_PRESETS, JOINT_NAMES, URKinematics
from spatial_manip.nodes.calibration_capture import RosCalibrationCapture

PROMPT = "[Enter] take this pose   [s] solve   [q] quit > "


def open_capture(args, skew_s: float):
    return RosCalibrationCapture(image_topic=args.image_topic, info_topic=args.camera_info_topic,
                                 joint_topic=args.joint_states_topic, max_skew_s=skew_s)


def interactive_session(args, board: BoardConfig, skew_s: float, guide_cfg: dict, *,
                        ask: Callable[[str], str] = input, capture=None):
    """Run the capture loop; the CalibrationReport of the saved folder, or None when quit."""
    capture = capture or open_capture(args, skew_s)
    mode = args.mode or "eye_to_hand"
    model = getattr(args, "robot_model", None) or "ur5e"
    folder = Path(args.capture_dir)
    try:
        intr = capture.intrinsics()
        session = _Session(folder, mode, model, intr)
        while True:
            print(guidance(session.poses, **guide_cfg).message())
            try:
                answer = ask(PROMPT).strip().lower()
            except EOFError:              # stdin closed (a pipe ran out): same as quitting
                answer = "q"
            if answer == "q":
                return None
            if answer == "s":
                break
            try:
                session.add(capture.take(), board, skew_s)
            except (SampleError, BoardError) as e:
                print(f"pose not kept: {e}")
    finally:
        capture.close()
    return calibrate_folder(load_samples(folder, max_skew_s=skew_s, mode=mode), board)


def automatic_session(args, board: BoardConfig, skew_s: float, plan: list, kin_tcp: URKinematics, *,
                      capture):
    """Visit each planned joint configuration through the arm action and take a sample there."""
    model = getattr(args, "robot_model", None) or "ur5e"
    folder = Path(args.capture_dir)
    try:
        session = _Session(folder, "eye_in_hand", model, capture.intrinsics())
        for k, q in enumerate(plan):
            try:
                capture.move_to(kin_tcp.fk(q), action=getattr(args, "arm_action", "/spatial_manip/arm_motion"))
                time.sleep(args.settle_s)     # let the arm (and a hanging cable) stop swinging
                session.add(capture.take(), board, skew_s)
            except (SampleError, BoardError) as e:
                print(f"pose {k + 1}/{len(plan)} not kept: {e}")
    finally:
        capture.close()
    return calibrate_folder(load_samples(folder, max_skew_s=skew_s, mode="eye_in_hand"), board)


def current_joints(capture, timeout_s: float = 5.0) -> np.ndarray:
    """The arm's joints now, in UR order (the tour starts from them)."""
    deadline = time.monotonic() + timeout_s
    while (j := capture.latest_joints()) is None:
        if time.monotonic() > deadline:
            raise SampleError("no joint state yet: is the robot driver publishing /joint_states?")
        time.sleep(0.05)
    pos = dict(zip(j["names"], j["joints"]))
    try:
        return np.array([next(v for n, v in pos.items() if n.endswith(name)) for name in JOINT_NAMES])
    except StopIteration:
        raise SampleError(f"joint state lacks UR joints; got names {j['names']}") from None


class _Session:
    """The samples taken so far, written to the folder after every pose."""

    def __init__(self, folder: Path, mode: str, model: str, intr):
        self.folder, self.mode, self.model, self.intr = folder, mode, model, intr
        self.kin = URKinematics(**DH_PRESETS[model])
        self.images: list[tuple[str, float]] = []
        self.robot: dict[float, dict] = {}          # stamp -> joint entry (windows may overlap)
        self.poses: list = []

    def add(self, sample, board: BoardConfig, skew_s: float) -> None:
        view = detect(sample.rgb, board, self.intr)          # raises when the board is not usable
        stamps = [j["stamp"] for j in sample.joints]
        pairing = pair_by_stamp([sample.stamp], stamps, skew_s)
        if pairing.unpaired:
            raise SampleError(pairing.unpaired[0])
        entry = sample.joints[pairing.pairs[0][1]]
        name = f"img_{len(self.images):03d}.png"
        self.folder.mkdir(parents=True, exist_ok=True)
        if not cv2.imwrite(str(self.folder / name), sample.rgb[..., ::-1]):
            raise SampleError(f"could not write {self.folder / name}")
        self.images.append((name, sample.stamp))
        self.robot.update({j["stamp"]: j for j in sample.joints})
        self.poses.append(flange_from_joints(entry["names"], entry["joints"], self.kin))
        write_samples(self.folder, mode=self.mode, intrinsics=self.intr, images=self.images,
                      robot=[self.robot[s] for s in sorted(self.robot)], robot_model=self.model)
        print(f"kept {name}: {len(view.ids)} corners, reprojection {view.reprojection_px:.2f} px, "
              f"robot state {1000 * abs(pairing.pairs[0][2]):.1f} ms from the image")
