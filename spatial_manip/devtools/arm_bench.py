"""`spatial-manip arm-bench`: what the arm stack costs in time.

Against the controller emulator (started here in its own process unless --no-emulator), through
the real ur_rtde library and our backend:
  - baseline: one dashboard line round trip on the same loopback (transport + emulator),
  - one ur_rtde command round trip (setTcp: ready -> command -> done -> clear) and its ratio to
    the baseline, a state read, and a 1 mm moveL end to end (send, watch, arrival check),
  - cancel to stop: stop() during a 0.25 m/s moveL until the move returns and until the
    controller reports zero joint speed.
And, unless --no-sim, one pick-and-place cycle with the MuJoCo sim backend.
"""
from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
import time

import numpy as np

from spatial_manip.control.config import load_arm_config
from spatial_manip.control.factory import make_arm_from_config
from spatial_manip.motion.arm_plans import make_primitives
from spatial_manip.errors import CanceledError, SpatialManipError
from spatial_manip.sim import oracle
from spatial_manip.progress import progress


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=50, help="round trips per latency figure")
    p.add_argument("--cancel-trials", type=int, default=5)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--no-emulator", action="store_true", help="use a controller/emulator already running at --host")
    p.add_argument("--no-sim", action="store_true", help="skip the MuJoCo pick-and-place cycle")


def _stats(xs) -> str:
    a = np.asarray(xs) * 1e3
    return f"median {np.median(a):7.2f} ms   p95 {np.percentile(a, 95):7.2f} ms   (n={a.size})"


def _timed(fn, n: int, desc: str):
    out = []
    for _ in progress(range(n), desc=desc, leave=False):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _start_emulator() -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "spatial_manip.cli", "ur-emulator", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline().strip()
    if line != "[ur-emulator] ready":
        proc.kill()
        raise SystemExit(f"the emulator did not start ({line!r}); are ports 30004/30003/29999/63352 free?")
    return proc


def _ur_figures(args) -> None:
    cfg = load_arm_config()
    cfg["arm"]["backend"] = "ur_rtde"
    cfg["arm"]["ur_rtde"]["host"] = args.host
    arm = make_arm_from_config(cfg)
    arm.connect()
    try:
        dash = socket.create_connection((args.host, 29999), timeout=3).makefile("rwb", buffering=0)
        dash.readline()

        def dash_rt():
            dash.write(b"robotmode\n")
            dash.readline()

        base = _timed(dash_rt, args.rounds, "dashboard baseline")
        tcp = list(cfg["kinematics"]["tcp_offset"])
        cmd = _timed(lambda: arm._ctrl.setTcp(tcp), args.rounds, "ur_rtde command")
        read = _timed(arm.joint_positions, args.rounds, "state read")
        T = arm.tcp_pose()
        sign = [1.0]

        def nudge():
            T[2, 3] += 0.001 * sign[0]
            sign[0] = -sign[0]
            arm.move_l(T, 0.1, 1.2)

        move = _timed(nudge, max(5, args.rounds // 5), "1 mm moveL")
        ret, still = [], []
        T0 = arm.tcp_pose()
        for i in range(args.cancel_trials):
            arm.move_l(T0, 0.25, 1.2)
            T1 = T0.copy()
            T1[1, 3] -= 0.2
            done = {}

            def mover():
                try:
                    arm.move_l(T1, 0.25, 1.2)
                except CanceledError:
                    done["t"] = time.perf_counter()

            th = threading.Thread(target=mover)
            th.start()
            time.sleep(0.4)  # well into the cruise phase
            t0 = time.perf_counter()
            arm.stop()
            th.join()
            while np.max(np.abs(arm._recv.getActualQd())) > 1e-4:
                time.sleep(0.0005)
            still.append(time.perf_counter() - t0)
            ret.append(done.get("t", np.nan) - t0)
        rb = np.median(base)
        print("\nur_rtde backend against the emulator (loopback)")
        print(f"  dashboard line round trip (baseline)  {_stats(base)}")
        print(f"  ur_rtde command round trip (setTcp)   {_stats(cmd)}   ratio to baseline {np.median(cmd) / rb:5.1f}x")
        print(f"  state read (getActualQ)               {_stats(read)}")
        print(f"  1 mm moveL, sent + watched + checked  {_stats(move)}   ratio to baseline {np.median(move) / rb:5.1f}x")
        print(f"  cancel -> move_l returns              {_stats(ret)}")
        print(f"  cancel -> joint speed 0 (stopL 10)    {_stats(still)}")
    finally:
        arm.close()


def _sim_cycle() -> None:
    cfg = load_arm_config(overrides={"arm.backend": "sim"})
    arm = make_arm_from_config(cfg)
    t0 = time.perf_counter()
    arm.connect()
    t_build = time.perf_counter() - t0
    prim = make_primitives(cfg, arm, arm.gripper)
    world = arm.world
    books = sorted((o for o in world.scene.objects if o.category == "book"), key=lambda o: np.linalg.norm(o.center))
    failures = []
    for book in books:  # the nearest book whose pick and place both go through
        world.reset(seed=0)
        g = oracle.grasp_point(book)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = oracle.grasp_rotation(book, g), g
        P = T.copy()
        P[:3, 3] += [0.0, 0.10 if P[1, 3] < 0 else -0.10, 0.01]
        try:
            t0 = time.perf_counter()
            res = prim.pick(T)
            t_pick = time.perf_counter() - t0
            t0 = time.perf_counter()
            prim.place(P)
            t_place = time.perf_counter() - t0
        except SpatialManipError as e:
            failures.append(f"{book.id}: {e.code.value} {e.message[:90]}")
            continue
        print(f"\nsim backend (MuJoCo, physics faster than real time): build {t_build:.2f} s, pick {t_pick:.2f} s "
              f"(held {res.object_held}), place {t_place:.2f} s, cycle {t_pick + t_place:.2f} s; book {book.id}")
        break
    else:
        print("\nsim backend: no book completed a pick and place:\n  " + "\n  ".join(failures))
    arm.close()


def run(args) -> int:
    emu = None if args.no_emulator else _start_emulator()
    try:
        _ur_figures(args)
    finally:
        if emu is not None:
            emu.terminate()
            emu.wait(10)
    if not args.no_sim:
        _sim_cycle()
    return 0
