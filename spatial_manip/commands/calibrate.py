"""`spatial-manip calibrate`: hand-eye calibration with a ChArUco board.

    spatial-manip calibrate --samples DIR --out config/calibration/cell.yaml      # offline
    spatial-manip calibrate --sim --mode eye_to_hand --out /tmp/cal.yaml        # MuJoCo, with its truth
    spatial-manip calibrate --bag BAG --out config/calibration/cell.yaml          # a recording
    spatial-manip calibrate --ros --capture-dir DIR --out config/calibration/cell.yaml   # live, interactive
    spatial-manip calibrate --print-board board.png                            # the board to print

Exit status: 0 written (or only reported without --out), 1 refused (residuals outside the
bounds; the message names the samples), 2 unusable input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
import tempfile

import cv2
import numpy as np
import yaml
from scipy.spatial.transform import Rotation

from spatial_manip.calibration.samples import DEFAULT_MAX_SKEW_S, SampleError, load_samples
from spatial_manip.calibration.auto import eye_in_hand_pose_set
from spatial_manip.calibration.bag import samples_from_bag
from spatial_manip.calibration.board import BoardError, load_board_file
from spatial_manip.commands.calibrate_live import (automatic_session, current_joints, interactive_session,
                                            open_capture)
from spatial_manip.calibration.procedure import calibrate_folder, write_calibration
from spatial_manip.calibration.result import Bounds, CalibrationRejected, pose_error
from spatial_manip.sim.calibration_cell import (CalibrationCell, CellConfig, Q_NOMINAL, capture, sample_poses,
                                           write_capture)
from spatial_manip.calibration.solve import HandEyeError, METHODS
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import SpatialManipError   # a bag that cannot be read (BagError)
from spatial_manip.transforms import apply, make_transform, rotvec_pose_to_matrix
from spatial_manip.paths import config_dir


def add_arguments(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--samples", metavar="DIR", help="offline: a samples folder (samples.json + images)")
    src.add_argument("--sim", action="store_true", help="render the board in MuJoCo and calibrate the simulated camera")
    src.add_argument("--bag", metavar="BAG", help="offline: a rosbag2 with the board images, camera_info and "
                     "/joint_states (one image per still period of the arm)")
    src.add_argument("--ros", action="store_true", help="live: capture from ROS topics, interactively (freedrive + Enter)")
    src.add_argument("--print-board", metavar="PNG", help="write the board image to print (at --dpi) and exit")
    p.add_argument("--out", metavar="FILE", help="calibration YAML to write (only if within the bounds)")
    p.add_argument("--mode", choices=("eye_to_hand", "eye_in_hand"),
                   help="camera fixed + board in the gripper, or camera on the flange + board on the table "
                        "(default: the samples folder's, else eye_to_hand)")
    p.add_argument("--board", metavar="YAML", help="board and bounds (default config/calibration/charuco.yaml)")
    p.add_argument("--max-skew-ms", type=float, help="max image/robot stamp difference (default from the board file, 20)")
    p.add_argument("--methods", help="comma-separated subset of tsai,park,horaud,andreff,daniilidis,rw_shah,rw_li")
    p.add_argument("--poses", type=int, default=15, help="--sim: number of arm poses (default 15)")
    p.add_argument("--seed", type=int, default=0, help="--sim: random seed of the poses and the pixel noise")
    p.add_argument("--save-samples", metavar="DIR", help="--sim: also write the rendered samples folder")
    p.add_argument("--auto", action="store_true",
                   help="eye_in_hand: plan the poses (inside the safety envelope of config/params/arm.yaml) from a "
                        "rough board position and a nominal camera mount; --ros then drives the arm through them "
                        "with the ArmMotion action")
    p.add_argument("--board-center", nargs=3, type=float, metavar=("X", "Y", "Z"),
                   help="--ros --auto: where the board lies in the base frame, metres (a few cm off is fine)")
    p.add_argument("--camera-mount", nargs=6, type=float, metavar=("X", "Y", "Z", "RX", "RY", "RZ"),
                   help="--ros --auto: nominal T_tool0_camera as a UR pose (metres, rotation vector), from the bracket")
    p.add_argument("--arm-action", default="/spatial_manip/arm_motion", help="--ros --auto: the ArmMotion action")
    p.add_argument("--settle-s", type=float, default=0.5, help="--ros --auto: wait after each motion before the image")
    p.add_argument("--capture-dir", metavar="DIR", help="--ros, --bag: where to keep the images and samples.json")
    p.add_argument("--image-topic", default="/camera/color/image_raw")
    p.add_argument("--camera-info-topic", default="/camera/color/camera_info")
    p.add_argument("--joint-states-topic", default="/joint_states")
    p.add_argument("--robot-model", default="ur5e", choices=("ur5", "ur5e"),
                   help="--ros, --bag: DH preset for joints -> flange: your arm's, as arm.model in "
                        "config/params/arm.yaml or ur_type at launch (default ur5e)")
    p.add_argument("--dpi", type=float, default=300.0, help="--print-board: printer resolution")


def board_and_bounds(args):
    """The board, its acceptance bounds, the max image/robot skew (s) and the rest of the board file."""
    path = Path(args.board) if args.board else config_dir() / "calibration" / "charuco.yaml"
    board, rest = load_board_file(path)
    bounds = Bounds.from_dict(rest.get("bounds"), f"{path}: bounds")
    skew_ms = args.max_skew_ms if args.max_skew_ms is not None else (rest.get("pairing") or {}).get(
        "max_skew_ms", 1000 * DEFAULT_MAX_SKEW_S)
    return board, bounds, float(skew_ms) / 1000.0, rest


def _methods(args):
    if not args.methods:
        return METHODS
    chosen = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    unknown = [m for m in chosen if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    return chosen


def run(args) -> int:
    try:
        board, bounds, skew_s, rest = board_and_bounds(args)
        if args.print_board:
            return _print_board(board, args)
        if args.sim:
            return _run_sim(args, board, bounds)
        if args.ros:
            return _run_ros(args, board, bounds, skew_s, rest)
        if args.bag:
            return _run_bag(args, board, bounds, skew_s)
        return _run_offline(args, board, bounds, skew_s)
    except CalibrationRejected as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (BoardError, SampleError, HandEyeError, SpatialManipError, ValueError, OSError) as e:
        # SpatialManipError also covers an unreachable plan (UnreachableError) and unreadable bags
        print(f"error: {e}", file=sys.stderr)
        return 2


def _finish(report, bounds, out: str | None, command: str) -> int:
    """Print the report; write FILE when asked and the bounds hold; 1 when refused."""
    print("\n".join(report.summary_lines()))
    key = "T_base_camera" if report.mode == "eye_to_hand" else "T_tool0_camera"
    T = report.T_mount_camera
    print(f"{key}: translation {np.round(T[:3, 3], 4).tolist()} m")
    if out:
        path = write_calibration(report, out, bounds, command=command)
        print(f"wrote {path}")
    else:
        problems = report.problems(bounds)
        print("within the bounds (give --out FILE to write it)" if not problems else "would be refused: " + "; ".join(problems))
        return 1 if problems else 0
    return 0


def _run_offline(args, board, bounds, skew_s, command: str | None = None) -> int:
    methods = _methods(args)          # a typo in --methods is reported before any work
    samples = load_samples(args.samples, max_skew_s=skew_s, mode=args.mode)
    print(f"{len(samples.image_paths)} images paired with robot poses (max skew {1000 * skew_s:.0f} ms), "
          f"{len(samples.unpaired)} not paired")
    report = calibrate_folder(samples, board, methods=methods)
    return _finish(report, bounds, args.out, command or f"spatial-manip calibrate --samples {args.samples}")


def _run_bag(args, board, bounds, skew_s) -> int:

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.capture_dir) if args.capture_dir else Path(tmp)
        _, n = samples_from_bag(args.bag, folder, mode=args.mode or "eye_to_hand", image_topic=args.image_topic,
                                info_topic=args.camera_info_topic, joint_topic=args.joint_states_topic,
                                robot_model=args.robot_model)
        print(f"{args.bag}: {n} images taken while the arm was still")
        args.samples = str(folder)
        return _run_offline(args, board, bounds, skew_s, f"spatial-manip calibrate --bag {args.bag}")


def _run_sim(args, board, bounds) -> int:
    mode = args.mode or "eye_to_hand"
    if args.auto and mode != "eye_in_hand":
        raise ValueError("--auto plans poses for eye_in_hand (camera on the flange); add --mode eye_in_hand")
    rng = np.random.default_rng(args.seed)
    with CalibrationCell(board, CellConfig(mode=mode)) as cell:
        qs = _auto_poses(cell, board, args.poses, rng) if args.auto else sample_poses(cell, args.poses, rng)
        cap = capture(cell, qs, rng)

    with tempfile.TemporaryDirectory() as tmp:
        # the simulated session goes through the same folder, pairing and solve as a real one
        folder = Path(args.save_samples) if args.save_samples else Path(tmp)
        write_capture(cap, folder)
        report = calibrate_folder(load_samples(folder, mode=mode), board, methods=_methods(args))
    status = _finish(report, bounds, args.out, f"spatial-manip calibrate --sim --mode {mode} --seed {args.seed}")
    print("against the simulator's ground truth:")
    for name, r in report.solution.methods.items():
        mm, deg = pose_error(r.X, cap.T_mount_camera_true)
        print(f"  {name:<11} {mm:6.2f} mm {deg:6.3f} deg" + ("   <- written" if r is report.solution.best else ""))
    mm, deg = pose_error(report.T_mount_camera, cap.T_mount_camera_true)
    print(f"calibration error: {mm:.2f} mm, {deg:.3f} deg ({report.solution.best.method})")
    return status


def _auto_poses(cell, board, n: int, rng) -> list:
    """The automatic mode's plan in the simulated cell. It knows only what a user would: the
    board's centre to a few cm and the camera mount to a few mm and degrees (the truth, disturbed)."""

    arm = yaml.safe_load((config_dir() / "params" / "arm.yaml").read_text())
    envelope = SafetyEnvelope.from_config(arm)
    X, Y = cell.truth()
    centre = apply(Y, board.center) + rng.uniform(-0.03, 0.03, 3) * [1, 1, 0]
    nominal = X @ make_transform(Rotation.from_rotvec(rng.normal(0, np.radians(2), 3)).as_matrix(), rng.normal(0, 0.005, 3))
    return eye_in_hand_pose_set(centre, nominal, envelope.kin, n=n, q_ref=Q_NOMINAL, envelope=envelope)


def _print_board(board, args) -> int:
    px = int(round(board.square_m / 0.0254 * args.dpi))
    img = board.image(px, margin_px=px // 2)
    if not cv2.imwrite(args.print_board, img):
        raise OSError(f"could not write {args.print_board}")
    w, h = board.size_m
    print(f"wrote {args.print_board}: {board.squares_x}x{board.squares_y} squares of {1000 * board.square_m:.0f} mm "
          f"({1000 * w:.0f} x {1000 * h:.0f} mm) at {args.dpi:.0f} dpi; print at 100 % and measure a square")
    return 0


def _run_ros(args, board, bounds, skew_s, rest) -> int:
    if not args.capture_dir:
        raise ValueError("--ros needs --capture-dir DIR to keep the images and poses (re-solve later with --samples DIR)")
    if args.auto:
        report = _run_ros_auto(args, board, skew_s)
    else:
        report = interactive_session(args, board, skew_s, rest.get("guidance") or {}, capture=open_capture(args, skew_s))
    if report is None:
        return 2
    return _finish(report, bounds, args.out, f"spatial-manip calibrate --ros --capture-dir {args.capture_dir}")


def _run_ros_auto(args, board, skew_s):
    """Plan from the current joints, inside the arm's safety envelope, then drive and capture."""

    if (args.mode or "eye_to_hand") != "eye_in_hand" or args.board_center is None or args.camera_mount is None:
        raise ValueError("--ros --auto is for --mode eye_in_hand and needs --board-center X Y Z and "
                         "--camera-mount X Y Z RX RY RZ (nominal T_tool0_camera)")
    envelope = SafetyEnvelope.from_config(yaml.safe_load((config_dir() / "params" / "arm.yaml").read_text()))
    capture = open_capture(args, skew_s)
    try:
        plan = eye_in_hand_pose_set(args.board_center, rotvec_pose_to_matrix(args.camera_mount), envelope.kin,
                                    n=args.poses, q_ref=current_joints(capture), envelope=envelope)
    except Exception:
        capture.close()
        raise
    print(f"{len(plan)} poses planned inside the safety envelope; the arm will move now")
    return automatic_session(args, board, skew_s, plan, envelope.kin, capture=capture)
