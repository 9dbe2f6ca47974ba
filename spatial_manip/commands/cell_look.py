"""Where the one observation of `capture-workspace`, `check-workspace` and `enroll` comes from
(--sim, --observation, --bag, --ros) and the calibration that places it: the command-line plumbing they share."""
from __future__ import annotations

import argparse

from spatial_manip.geometry.calibration import load_calibration
from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import Scene
from spatial_manip.workspace import sources
from spatial_manip.sim.capture_cell import clear_shelf, demo_cell, fixtures_only, render_cell, shelf_cell


SIM_CELL_HELP = ("render MuJoCo's cell (a scene file, cleared of movable objects; default: the demo cell; "
                 "shelf:LAYOUT:SEED a generated shelf, LAYOUT panels, grid or combo) "
                 "and compare the result with the simulator's own boxes")


def add_source_arguments(p: argparse.ArgumentParser, *, required: bool = True, sim: dict | None = None) -> None:
    """--sim | --observation | --bag | --ros and what places the frame; `sim` overrides --sim's own
    add_argument keywords (a command that simulates something else than the cell)."""
    src = p.add_mutually_exclusive_group(required=required)
    src.add_argument("--sim", **(sim or {"nargs": "?", "const": "demo", "metavar": "SCENE", "help": SIM_CELL_HELP}))
    src.add_argument("--observation", metavar="NPZ", help="offline: an observation saved with --save-observation")
    src.add_argument("--bag", metavar="BAG", help="offline: the first colour/depth pair of a rosbag2")
    src.add_argument("--ros", action="store_true", help="live: one frame from the camera topics")
    p.add_argument("--calibration", metavar="YAML",
                   help="hand-eye calibration (spatial-manip calibrate --out); eye-to-hand places the camera, "
                        "else the camera pose comes from /camera/extrinsics (--ros, --bag) or the saved file")
    p.add_argument("--save-observation", metavar="NPZ", help="also keep the observation, to re-run offline")
    p.add_argument("--color-topic", default="/camera/color/image_raw")
    p.add_argument("--depth-topic", default="/camera/aligned_depth_to_color/image_raw")
    p.add_argument("--info-topic", default="/camera/color/camera_info")
    p.add_argument("--timeout", type=float, default=10.0, help="--ros: seconds to wait for a frame")
    p.add_argument("--seed", type=int, default=0, help="--sim: depth noise seed")
    p.add_argument("--no-noise", action="store_true", help="--sim: render depth without the L515 noise model")


def sim_scene(arg: str, *, moved: dict | None = None, occupied: bool = False) -> Scene:
    """The simulated cell `--sim` names; a shelf (generated, or a shelf scene file) is cleared
    of what stands in its slots unless `occupied`."""
    if arg != "demo" and moved:
        raise ValueError("--move shifts the demo cell's fixtures only; edit the scene file to move others")
    if arg == "demo":
        return demo_cell(moved=moved)
    if arg.startswith("shelf:"):
        try:
            _, layout, seed = arg.split(":")
            return shelf_cell(layout, int(seed), occupied=occupied)
        except ValueError as e:
            raise ValueError(f"--sim shelf:LAYOUT:SEED wants a layout (panels, grid, combo) and an integer seed, "
                             f"got {arg!r} ({e})") from e
    scene = Scene.load(arg)
    return clear_shelf(scene, keep_contents=occupied) if scene.extra.get("kind") == "shelf" else fixtures_only(scene)


def observation_from_args(args, truth: Scene | None = None) -> RGBDObservation:
    """The observation the arguments name; `truth` is the scene to render for --sim."""
    cal = load_calibration(args.calibration) if args.calibration else None
    if args.sim:
        obs = render_cell(truth, depth_noise=not args.no_noise, seed=args.seed)
    elif args.observation:
        obs = sources.load_observation(args.observation, cal)
    elif args.bag:
        obs = sources.observation_from_bag(args.bag, cal, color=args.color_topic, depth=args.depth_topic,
                                           info=args.info_topic)
    else:  # rclpy and the message packages only for a live camera (nodes.live_observation imports them)
        from spatial_manip.nodes.live_observation import live_observation

        obs = live_observation(cal, color=args.color_topic, depth=args.depth_topic, info=args.info_topic,
                               timeout_s=args.timeout)
    if args.save_observation:
        sources.save_observation(obs, args.save_observation)
        print(f"observation saved to {args.save_observation}")
    return obs
