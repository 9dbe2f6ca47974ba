"""`spatial-manip`: the one command line for people.

Each subcommand lives in its own module with `add_arguments(parser)` and `run(args) -> int`;
the table below names them, so `--help` lists everything without importing heavy modules.
To add a subcommand, add one line here.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

import yaml

from spatial_manip.errors import SpatialManipError

# What a person's input (arguments, files, folders) raises below a subcommand: one line naming
# it and exit status 2, not a traceback. SPATIAL_MANIP_TRACEBACK=1 shows where it came from.
INPUT_ERRORS = (SpatialManipError, ValueError, OSError, RecursionError, yaml.YAMLError)

# name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "grasp-bench": ("spatial_manip.bench.grasp_bench_cli", "top-1 grasp success and latency per grasp backend in MuJoCo"),
    "plan": ("spatial_manip.commands.plan", "plan one instruction on a scene file (targets, place pose, program)"),
    "plan-bench": ("spatial_manip.bench.plan_bench", "time the planner per instruction over scenes (median/p95)"),
    "launch": ("spatial_manip.bringup.cli", "start a node graph (sim, real, replay) without `ros2 launch`"),
    "tasks": ("spatial_manip.commands.tasks", "generate a task suite: tasks.jsonl + scene files (ESPIRE families, TIGeR metric)"),
    "oracle": ("spatial_manip.bench.oracle_bench", "solve generated tasks with the ground-truth oracle in the simulator"),
    "goal": ("spatial_manip.bringup.goal_cli", "send one ExecuteInstruction goal and print feedback and result"),
    "demo": ("spatial_manip.bench.demo", "the simulated pick-and-place: sim graph, one instruction, a trace page"),
    "bench": ("spatial_manip.bench.runner", "run generated tasks through the ROS graph: results.json, report.md, plots, trace index"),
    "latency-bench": ("spatial_manip.bench.latency", "how long a person waits: per-stage times, goal accepted -> first arm motion, arm stopped -> result (median/p95, ratio to a baseline revision)"),
    "soak": ("spatial_manip.bench.soak", "many reset-and-goal cycles through one sim graph: each node's memory and file descriptors per goal (soak.csv, soak.png)"),
    "ur-emulator": ("spatial_manip.devtools.emulator_cli", "serve a UR controller + Robotiq socket on loopback for ur_rtde (no robot needed)"),
    "arm-bench": ("spatial_manip.devtools.arm_bench", "ur_rtde round-trip latency and cancel-to-stop time against the emulator"),
    "cancel-soak": ("spatial_manip.devtools.cancel_soak", "cancel goals at every stage transition on a sim graph, many times: the worst joint motion after CANCELED"),
    "drop-soak": ("spatial_manip.devtools.drop_soak", "lose the UR controller mid-motion again and again through arm_node (emulator, real ur_rtde): every goal answered, home after each"),
    "camera-bench": ("spatial_manip.bringup.camera_bench", "camera_node publish rate and drops on RealSense playback vs the SDK alone"),
    "record": ("spatial_manip.bringup.record_cli", "record camera, joint, scene and instruction topics into a rosbag2 (sqlite3 or MCAP)"),
    "replay": ("spatial_manip.bringup.replay_cli", "publish a rosbag2 (ours, ros2 bag record, or a RealSense .db3) with its original timing"),
    "bag-repair": ("spatial_manip.commands.bag_repair", "recover every complete message of a bag whose recorder was killed (SIGKILL, power loss) into a readable bag"),
    "evaluate": ("spatial_manip.bench.evaluate_bags", "re-run the planner offline on every instruction recorded in bags and compare"),
    "sim-bench": ("spatial_manip.bench.sim_bench", "time one MuJoCo environment update (motion, settle, RGB-D + segmentation render) against ESPIRE's 11.65 s"),
    "geometry-bench": ("spatial_manip.bench.geometry_bench", "time back-projection and box_2d_to_box_3d (median, p95, vs a Python loop)"),
    "motion-bench": ("spatial_manip.devtools.motion_bench", "motion planner time (median/p95), success and path length on the benchmark's scenes"),
    "calibrate": ("spatial_manip.commands.calibrate", "hand-eye calibration with a ChArUco board (offline samples, --sim in MuJoCo, --ros live): writes config/calibration/*.yaml"),
    "check-calibration": ("spatial_manip.commands.check_calibration", "check a calibration file against fresh board images: reprojection (px), board error (mm, deg) per sample"),
    "espire-server": ("spatial_manip.commands.espire_server", "serve ESPIRE's evaluation protocol (ZeroMQ + MessagePack) over the MuJoCo world, so ESPIRE's client and drivers run unchanged"),
    "espire-eval": ("spatial_manip.bench.espire_eval", "our perception + planner as an ESPIRE driver: play an ESPIRE-protocol server's tasks, print localization and execution success per family"),
    "capture-workspace": ("spatial_manip.commands.capture_workspace", "one look at the cell (live, bag, saved or --sim) -> the workspace file: table plane and extent, fixture boxes"),
    "check-workspace": ("spatial_manip.commands.check_workspace", "compare a fresh look with a workspace file: the table height and every fixture that moved, by name"),
    "enroll": ("spatial_manip.commands.enroll", "measure one object alone in the cell (size, colour signature, shape) into the object library the planner reads; --sim all enrolls every simulated asset"),
}


class Parser(argparse.ArgumentParser):
    """argparse's parser with its errors in one line (the usage is one `--help` away)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    parser = Parser(
        prog="spatial-manip",
        description="Spatial-instruction pick and place: a VLM chooses, geometry computes. "
        "Run `spatial-manip COMMAND --help` for the options of one command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = next((a for a in (argv or []) if not a.startswith("-")), None)
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == wanted:  # import only the module that will run
            mod = importlib.import_module(module)
            mod.add_arguments(p)
            p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(args._run(args) or 0)
    except INPUT_ERRORS as e:
        if os.environ.get("SPATIAL_MANIP_TRACEBACK") == "1":
            raise
        print(f"spatial-manip {args.command}: error: {one_line(e)}", file=sys.stderr)
        return 2


def one_line(e: BaseException) -> str:
    """An exception as one line: YAML and argparse messages span several."""
    if isinstance(e, RecursionError):
        text = "the input is nested too deeply (thousands of levels of brackets); give a file the tools wrote"
    elif isinstance(e, OSError) and e.strerror:
        text = f"{e.strerror}: {e.filename}" if e.filename else e.strerror
    elif isinstance(e, SpatialManipError):
        text = e.message
    else:
        text = str(e) or type(e).__name__
    return " ".join(text.split())


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1 (a count of tasks, episodes, poses)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value}")
    return value


def output_dir(text: str) -> str:
    """argparse type: a folder that is, or can be made, writable (checked before the work starts)."""
    path = Path(text)
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, not a folder: give a folder to write into")
    if existing is not None and (not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK)):
        raise argparse.ArgumentTypeError(f"cannot write into {text}: {existing} is not a writable folder")
    return text


if __name__ == "__main__":
    sys.exit(main())
