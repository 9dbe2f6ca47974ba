"""`spatial-manip ur-emulator`: a UR controller + Robotiq gripper on loopback for ur_rtde."""
from __future__ import annotations

import argparse
import signal
import sys
import threading

import numpy as np

from spatial_manip.control.config import load_arm_config
from spatial_manip.control.kinematics import URKinematics
from spatial_manip.devtools.emulated_arm import EmulatedArm
from spatial_manip.devtools.robotiq_emulator import RobotiqEmulator
from spatial_manip.devtools.ur_emulator import URControllerEmulator


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (ur_rtde's ports are fixed)")
    p.add_argument("--config", default=None, help="arm.yaml (kinematics model, TCP offset, home_q)")
    p.add_argument("--model", default=None, help="override kinematics.model (ur5 | ur5e)")
    p.add_argument("--q0", type=float, nargs=6, default=None, help="initial joints (default: primitives.home_q)")
    p.add_argument("--object-width-m", type=float, default=0.04, help="width of the object the gripper closes on (0: none)")
    p.add_argument("--no-gripper", action="store_true", help="do not serve the Robotiq socket on 63352")
    p.add_argument("--stream-hz", type=float, default=250.0, help="cap on the RTDE output rate")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--trace", action="store_true", help="log every command-register change (protocol debugging)")


def run(args) -> int:
    cfg = load_arm_config(args.config)
    if args.model:
        cfg["kinematics"]["model"] = args.model
    kin = URKinematics.from_config(cfg["kinematics"])
    q0 = np.array(args.q0 if args.q0 else cfg["primitives"]["home_q"], float)
    log = (lambda m: None) if args.quiet else (lambda m: print(f"[ur-emulator] {m}", flush=True))
    gripper = None
    if not args.no_gripper:
        gripper = RobotiqEmulator(max_width_m=float(cfg["arm"]["gripper"].get("max_width_m", 0.085)),
                                  object_width_m=args.object_width_m)
        gripper.start(args.host, int(cfg["arm"]["gripper"].get("port", 63352)))
    emu = URControllerEmulator(EmulatedArm(kin, q0), host=args.host, max_stream_hz=args.stream_hz, log=log)
    emu.trace = args.trace
    emu.start()
    print("[ur-emulator] ready", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    emu.shutdown()
    if gripper:
        gripper.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(run(argparse.Namespace(host="127.0.0.1", config=None, model=None, q0=None, object_width_m=0.04,
                                    no_gripper=False, stream_hz=250.0, quiet=False, trace=False)))
