"""A UR controller emulator on loopback, enough for the unmodified ur_rtde library.

Serves RTDE (30004), the script port (30003, the uploaded URScript is accepted and "run"),
the dashboard (29999) and a Robotiq 2F URCap socket (63352). The emulated arm
(`EmulatedArm`) executes the command protocol of ur_rtde's control script: a command id in
`input_int_register_0` with its arguments in `input_double_register_*`, readiness (1) and
completion (2) in `output_int_register_0`, async progress in `output_int_register_2`.

Paths (ur_rtde's moveJ(path) / movePath): the library stops the script, uploads it again with
the path written into `exec_move_path()` as URScript lines (`signal_async_progress(i)` then
`movej([q],a=..,v=..,r=..)` per waypoint), waits for the program to run, and sends command 45.
The emulator reads those lines from the upload and runs them on command 45 (blending where
r > 0), reporting the running waypoint in the async progress register as the script does.
Only movej paths are emulated: a path with movel/movep lines stops the program, named in the log.

As on the controller, a program that ends (stopScript, the dashboard's `stop`, a new program
replacing it) brakes the motion it commanded, and a frozen emulator (SIGSTOP) goes on from where
it was when it resumes, without replaying the time it missed.

Test hooks on the dashboard port (not UR commands):
  `emulator protective_stop`  halt now, raise safety bit 2, stop the script
  `emulator emergency_stop`   the same with the emergency-stop bits
  `emulator drop [seconds]`   close every RTDE connection and refuse new ones for a while
  `emulator hold_scripts [S]` a script uploaded in the next S seconds (1) starts only when they end
                              (a controller slow to start its program)
  `emulator state`            one line of JSON (q, tcp pose, moving, safety, scripts held)
Run in its OWN process: ur_rtde holds the GIL in its constructors (TOOLCHAIN.md).
"""
from __future__ import annotations

import dataclasses
import json
import re
import socket
import socketserver
import struct
import threading
import time

import numpy as np

from spatial_manip.control.ur_version import recv_exact, send_message
from spatial_manip.devtools.emulated_arm import EmulatedArm
from spatial_manip.devtools.robotiq_emulator import RobotiqEmulator
from spatial_manip.transforms import matrix_to_rotvec_pose, rotvec_pose_to_matrix

_SIZES = {"BOOL": "?", "UINT8": "B", "UINT32": "I", "UINT64": "Q", "INT32": "i", "DOUBLE": "d",
          "VECTOR3D": "3d", "VECTOR6D": "6d", "VECTOR6INT32": "6i", "VECTOR6UINT32": "6I"}
_V6 = ("target_q target_qd target_qdd target_current target_moment actual_q actual_qd actual_current "
       "joint_control_output actual_TCP_pose actual_TCP_speed actual_TCP_force target_TCP_pose "
       "target_TCP_speed joint_temperatures actual_joint_voltage ft_raw_wrench payload_inertia "
       "external_force_torque").split()
_TYPES = {**{n: "VECTOR6D" for n in _V6},
          **{n: "DOUBLE" for n in ("timestamp actual_execution_time speed_scaling target_speed_fraction actual_momentum "
                                  "actual_main_voltage actual_robot_voltage actual_robot_current standard_analog_input0 "
                                  "standard_analog_input1 standard_analog_output0 standard_analog_output1 io_current "
                                  "tool_analog_input0 tool_analog_input1 tool_output_current tool_temperature "
                                  "tcp_force_scalar payload speed_slider_fraction standard_analog_output_0 "
                                  "standard_analog_output_1 joint_position_deviation_ratio collision_detection_ratio "
                                  "speed_scaling_combined").split()},
          **{n: "UINT32" for n in ("robot_status_bits safety_status_bits runtime_state analog_io_types tool_mode "
                                  "tool_analog_input_types output_bit_registers0_to_31 output_bit_registers32_to_63 "
                                  "input_bit_registers0_to_31 input_bit_registers32_to_63 speed_slider_mask "
                                  "script_control_line euromap67_input_bits euromap67_output_bits").split()},
          **{n: "UINT64" for n in ("actual_digital_input_bits", "actual_digital_output_bits")},
          **{n: "INT32" for n in ("robot_mode", "safety_mode", "safety_status", "tool_output_voltage")},
          **{n: "VECTOR3D" for n in ("actual_tool_accelerometer", "elbow_position", "elbow_velocity", "payload_cog")},
          "joint_mode": "VECTOR6INT32",
          **{n: "UINT8" for n in ("standard_digital_output_mask standard_digital_output configurable_digital_output_mask "
                                 "configurable_digital_output tool_digital_output_mask tool_digital_output "
                                 "standard_analog_output_mask standard_analog_output_type").split()}}


def _type_of(name: str) -> str:
    if name in _TYPES:
        return _TYPES[name]
    if "int_register" in name:
        return "INT32"
    if "double_register" in name:
        return "DOUBLE"
    if "bit_register_" in name:
        return "BOOL"
    return "NOT_FOUND"


_PATH_BODY = re.compile(r"def exec_move_path\(\):\n(.*?)\n    end\n", re.S)
_NUM = r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
_PATH_MOVE = re.compile(r"^\s*(movej|movel|movep)\((p?)\[([^\]]*)\]\s*,\s*a=" + _NUM + r",\s*v=" + _NUM + r",\s*r=" + _NUM + r"\)",
                        re.M)


def parse_move_path(script: str) -> tuple[list, list]:
    """The waypoints ur_rtde injected into `exec_move_path()`: ([(q6, v, a, r) of movej], [other
    move kinds found]); both empty when the script carries no path."""
    m = _PATH_BODY.search(script)
    if not m:
        return [], []
    joints, other = [], []
    for kind, pose, values, a, v, r in _PATH_MOVE.findall(m.group(1)):
        if kind != "movej" or pose:
            other.append(kind + ("(p[...])" if pose else ""))
            continue
        q = [float(x) for x in values.split(",")]
        if len(q) != 6:
            other.append(f"movej with {len(q)} values")
            continue
        joints.append((q, float(v), float(a), float(r)))
    return joints, other


def _pack(fmt_types, values) -> bytes:
    out = b""
    for t, v in zip(fmt_types, values):
        f = _SIZES[t]
        out += struct.pack(">" + f, *(v if len(f) > 1 else [v]))
    return out


DASHBOARD_PORT = 29999
MAX_LAG_S = 0.1             # the physics loop this late: the emulator was frozen, not merely slow
PROGRAM_STOP_DECEL = 10.0   # the arm's braking when its program ends (ur_rtde's default stopL/stopJ ramp)


def dashboard_line(line: str, host: str = "127.0.0.1") -> str:
    """One line to a dashboard server (the emulator's test hooks, `emulator drop 0.5`, or a real
    controller's commands) on a connection of its own; its one-line reply."""
    with socket.create_connection((host, DASHBOARD_PORT), timeout=3) as s:
        f = s.makefile("rwb", buffering=0)
        f.readline()  # the greeting
        f.write((line + "\n").encode())
        return f.readline().decode().strip()


class URControllerEmulator:
    """The controller: state, command processing, and the servers around it."""

    CMD = {"moveJ": 1, "moveL": 3, "speedL": 10, "servoL": 24, "speedStop": 15, "servoStop": 16, "setTcp": 29, "stopL": 33, "stopJ": 34,
           "getForwardKinematicsDefault": 43, "getForwardKinematics": 44, "movePath": 45, "stopScript": 255}

    def __init__(self, arm: EmulatedArm, *, host: str = "127.0.0.1", version=(5, 11, 1, 108318),
                 max_stream_hz: float = 250.0, gripper: RobotiqEmulator | None = None, log=None):
        self.arm, self.host, self.version = arm, host, version
        self.max_stream_hz = max_stream_hz
        self.gripper = gripper
        self.log = log or (lambda msg: None)
        self.trace = False
        self.lock = threading.RLock()
        self.inputs: dict[str, float] = {}
        self.out_int = [0, 0, -1]
        self.out_double = [0.0] * 6
        self.script_running = False
        self.protective_stop = False
        self.emergency_stop = False
        self._async_count = self._async_op = 0
        self._async_running = False
        self._path: list = []              # the movej waypoints of the last uploaded script
        self._path_other: list = []        # path moves the emulator does not run (movel/movep)
        self._path_progress: int | None = None  # last waypoint index reported for a running path
        self._sync_path = False            # a blocking path: the script never writes "finished"
        self._executing = self._busy = False
        self._hold_scripts_until = 0.0     # monotonic time: uploads before it start only then
        self._held_scripts = 0             # held uploads not started yet (a test waits for them)
        self._rtde_socks: set[socket.socket] = set()
        self._servers: list[socketserver.TCPServer] = []
        self._stop = threading.Event()

    # ---- lifecycle -----------------------------------------------------------------------
    def start(self, ports=(30004, 30003, 29999)):
        self._ports = ports
        for port, fn in zip(ports, (self._serve_rtde, self._serve_script, self._serve_dashboard)):
            self._servers.append(self._listen(port, fn))
        threading.Thread(target=self._physics, daemon=True, name="emu-physics").start()
        self.log(f"UR emulator on {self.host}: RTDE {ports[0]}, script {ports[1]}, dashboard {ports[2]}")

    def _listen(self, port: int, fn) -> socketserver.TCPServer:
        class H(socketserver.BaseRequestHandler):
            def handle(self):
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    fn(self.request)
                except (ConnectionError, OSError):
                    pass

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        srv = socketserver.ThreadingTCPServer((self.host, port), H)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True, name=f"emu-{port}").start()
        return srv

    def shutdown(self):
        self._stop.set()
        for s in self._servers:
            s.shutdown()
            s.server_close()

    # ---- the control script, as a state machine ticked with the arm ------------------------
    # ur_rtde's script: "realtime" commands are processed every cycle and answered with ready
    # (1); regular ones run once, then answer done (2) until the client writes 0 again.
    REALTIME = {6, 9, 10, 11, 24, 25, 26, 27, 38, 58, 66, 67, 68, 69, 70, 71}
    _ENDS_PATH = {1, 3, 10, 15, 16, 24, 33, 34, 255}   # moves, stops, stopScript

    def _physics(self):
        period = self.arm.dt
        next_t = time.monotonic()
        while not self._stop.is_set():
            if time.monotonic() - next_t > MAX_LAG_S:
                # the process was frozen (SIGSTOP) or starved: a controller's clock does not
                # replay the time it missed, so the arm goes on from where it was, at its speed
                next_t = time.monotonic()
            finished = self.arm.tick()
            with self.lock:
                seg = self.arm.path_segment
                if self._path_progress is not None and seg > self._path_progress:
                    for i in range(self._path_progress + 1, seg + 1):
                        self._write_async(i)  # signal_async_progress(i) before movej i
                    self._path_progress = seg
                if finished:
                    self._path_progress = None
                if finished and self._async_running and not self._sync_path:
                    self._write_async(-1)
                self._step_script()
            next_t += period
            time.sleep(max(0.0, next_t - time.monotonic()))

    def _write_async(self, value: int):
        """The script's async register: change count in bits 16-23, operation id in 24-30,
        bit 15 = running with the progress in bits 0-14."""
        self._async_count = (self._async_count + 1) % 128
        if value == 0:
            self._async_op = (self._async_op + 1) % 128
        reg = self._async_count * 65536 + self._async_op * 16777216
        if value >= 0:
            reg += 32768 + min(value, 32767)
        self.out_int[2] = reg
        self._async_running = value >= 0

    def _step_script(self):
        if not self.script_running:
            self.out_int[0] = 0
            return
        cmd = int(self.inputs.get("input_int_register_0", 0))
        if cmd in self.REALTIME:
            self._execute(cmd)
            self.out_int[0] = 1
        elif cmd == 0:
            self._executing, self._busy = False, False
            self.out_int[0] = 1
        elif not self._executing:
            self._executing = True
            self._busy = self._execute(cmd)
            self.out_int[0] = 0 if self._busy else 2
        elif self._busy and not self.arm.moving:
            self._busy = False
            self.out_int[0] = 2

    def _execute(self, cmd: int) -> bool:
        """Run one command; True when it blocks until the arm stands still (sync moves, stops)."""
        reg = [float(self.inputs.get(f"input_double_register_{i}", 0.0)) for i in range(12)]
        asynchronous = int(self.inputs.get("input_int_register_1", 0)) == 1
        if cmd not in self.REALTIME or self.trace:
            self.log(f"command {cmd} {np.round(reg[:8], 4).tolist()} async={asynchronous}")
        if cmd in self._ENDS_PATH:
            self._path_progress, self._sync_path = None, False  # the path's move thread is gone
        if cmd in (self.CMD["moveJ"], self.CMD["moveL"]):
            if self._async_running:
                self._write_async(-1)  # a new move replaces the running one
            (self.arm.move_j if cmd == 1 else self.arm.move_l)(reg[:6], reg[6], reg[7])
            if asynchronous:
                self._write_async(0)
            return not asynchronous
        if cmd == self.CMD["speedL"]:
            self.arm.speed_l(reg[:6], reg[6], reg[7])
        elif cmd == self.CMD["servoL"]:
            self.arm.servo_l(reg[:6], reg[8] if reg[8] > 0 else 0.008)
        elif cmd in (self.CMD["stopL"], self.CMD["stopJ"]):
            if self._async_running:
                self._write_async(-1)
            self.arm.stop(reg[0] if reg[0] > 0 else 10.0)
            return not asynchronous
        elif cmd in (self.CMD["speedStop"], self.CMD["servoStop"]):
            self.arm.stop(reg[0] if reg[0] > 0 else 10.0)
        elif cmd == self.CMD["movePath"]:
            return self._move_path(asynchronous)
        elif cmd == self.CMD["getForwardKinematics"]:
            kin = dataclasses.replace(self.arm.kin, T_tool0_tcp=rotvec_pose_to_matrix(reg[6:12]))
            self.out_double[:] = list(matrix_to_rotvec_pose(kin.fk(reg[:6])))
        elif cmd == self.CMD["getForwardKinematicsDefault"]:
            self.out_double[:] = list(self.arm.state()[2])
        elif cmd == self.CMD["stopScript"]:
            self._program_stopped("stopScript")
        elif cmd == self.CMD["setTcp"]:
            self.arm.set_tcp(reg[:6])
        return False

    def _move_path(self, asynchronous: bool) -> bool:
        """Command 45: stop_async_move(), then exec_move_path() in the move thread (async) or
        inline (blocking, which answers once the arm stands still)."""
        if self._async_running:
            self._write_async(-1)
        if self._path_other:
            self.log(f"move path with {sorted(set(self._path_other))} is not emulated (only movej paths): "
                     "program stopped")
            self.script_running = False
            return False
        if asynchronous:
            self._write_async(0)  # signal_async_operation_started()
        if not self._path:
            if asynchronous:
                self._write_async(-1)
            return False
        self._write_async(0)      # signal_async_progress(0), before the first movej
        self._path_progress, self._sync_path = 0, not asynchronous
        motion = self.arm.move_path(self._path)
        self.log(f"move path of {len(self._path)} waypoints, blend radii {np.round(motion.blends, 4).tolist()} m")
        return not asynchronous

    def _program_stopped(self, why: str):
        """The program ends (stopScript, or a new program replaces it): the motion it commanded
        ends with it, as on the controller, where a stopped program brakes the arm."""
        self.script_running = False
        if self.arm.moving:
            self.arm.stop(PROGRAM_STOP_DECEL)
            self.log(f"program stopped ({why}): the arm brakes")
        if self._async_running:
            self._write_async(-1)

    # ---- safety injection ----------------------------------------------------------------
    def inject(self, what: str):
        with self.lock:
            if what == "protective_stop":
                self.protective_stop = True
            else:
                self.emergency_stop = True
            self.arm.halt(what)
            self.script_running = False  # the controller stops the program on a safety stop
            if self._async_running:
                self._write_async(-1)
        self.log(f"injected {what}")

    def drop_connections(self, refuse_s: float):
        """Cut every RTDE link; with refuse_s > 0 the RTDE port is closed (connects are refused)
        for that long, like a controller that went off the network."""
        if refuse_s > 0:
            srv = self._servers[0]
            srv.shutdown()
            srv.server_close()
        for s in list(self._rtde_socks):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if refuse_s > 0:
            def reopen():
                self._servers[0] = self._listen(self._ports[0], self._serve_rtde)
                self.log("RTDE port open again")
            threading.Timer(refuse_s, reopen).start()
        self.log(f"dropped RTDE connections, refusing for {refuse_s} s")

    # ---- RTDE ----------------------------------------------------------------------------
    def _outputs(self, names) -> list:
        q, qd, tcp = self.arm.state()
        with self.lock:
            safety_bits = 1 | (4 if self.protective_stop else 0) | (0xC0 if self.emergency_stop else 0)
            running = self.script_running
            vals = {"timestamp": self.arm.t, "actual_q": q, "target_q": q, "actual_qd": qd, "target_qd": qd,
                    "actual_TCP_pose": tcp, "target_TCP_pose": tcp, "runtime_state": 2 if running else 1,
                    "robot_status_bits": 1 | (2 if running else 0), "safety_status_bits": safety_bits,
                    "robot_mode": 7, "safety_mode": 3 if self.protective_stop else (7 if self.emergency_stop else 1),
                    "safety_status": 3 if self.protective_stop else (7 if self.emergency_stop else 1),
                    "speed_scaling": 1.0, "target_speed_fraction": 1.0, "actual_main_voltage": 48.0,
                    "actual_robot_voltage": 48.0, "joint_mode": [253] * 6, "actual_execution_time": 0.1,
                    "payload": 1.0}
            for i in range(3):
                vals[f"output_int_register_{i}"] = self.out_int[i]
            for i in range(6):
                vals[f"output_double_register_{i}"] = self.out_double[i]
        out = []
        for n in names:
            t = _type_of(n)
            v = vals.get(n, self.inputs.get(n, 0))
            f = _SIZES[t]
            if len(f) > 1:  # vectors: zeros when the value is unknown
                arr = np.asarray(v, float).reshape(-1)
                arr = arr if arr.size == int(f[0]) else np.zeros(int(f[0]))
                out.append([int(x) for x in arr] if f[1] in "iI" else [float(x) for x in arr])
            else:
                out.append(float(v) if t == "DOUBLE" else bool(v) if t == "BOOL" else int(v))
        return out

    def _serve_rtde(self, sock: socket.socket):
        self._rtde_socks.add(sock)
        recipes: dict[int, list[tuple[str, str]]] = {}
        out_names: list[str] = []
        out_types: list[str] = []
        freq = 125.0
        started = threading.Event()
        writer = None
        try:
            while True:
                size, kind = struct.unpack(">HB", recv_exact(sock, 3))
                body = recv_exact(sock, size - 3)
                k = chr(kind)
                if k == "V":
                    send_message(sock, b"V", b"\x01")
                elif k == "v":
                    send_message(sock, b"v", struct.pack(">IIII", *self.version))
                elif k == "O":
                    freq = struct.unpack(">d", body[:8])[0]
                    out_names = [n for n in body[8:].decode().split(",") if n]
                    out_types = [_type_of(n) for n in out_names]
                    for n, t in zip(out_names, out_types):
                        if t == "NOT_FOUND":
                            self.log(f"RTDE output {n!r} unknown to the emulator")
                    out_names = [n for n, t in zip(out_names, out_types) if t != "NOT_FOUND"]
                    send_message(sock, b"O", b"\x01" + ",".join(out_types).encode())
                elif k == "I":
                    names = [n for n in body.decode().split(",") if n]
                    rid = len(recipes) + 1
                    types = [_type_of(n) for n in names]
                    busy = any(t == "NOT_FOUND" for t in types)
                    recipes[rid] = list(zip(names, types))
                    send_message(sock, b"I", bytes([0 if busy else rid]) + ",".join(types).encode())
                elif k == "S":
                    send_message(sock, b"S", b"\x01")
                    if writer is None:
                        hz = min(freq if freq > 0 else 125.0, self.max_stream_hz)
                        writer = threading.Thread(target=self._stream, args=(sock, out_names, out_types, hz, started),
                                                  daemon=True)
                        started.set()
                        writer.start()
                elif k == "P":
                    started.clear()
                    send_message(sock, b"P", b"\x01")
                elif k == "U":
                    self._apply_inputs(recipes.get(body[0], []), body[1:])
        finally:
            started.clear()
            self._rtde_socks.discard(sock)

    def _apply_inputs(self, recipe, data: bytes):
        off, vals = 0, {}
        for name, t in recipe:
            f = ">" + _SIZES[t]
            n = struct.calcsize(f)
            v = struct.unpack(f, data[off:off + n])
            vals[name] = v[0] if len(v) == 1 else list(v)
            off += n
        with self.lock:
            old = self.inputs.get("input_int_register_0")
            self.inputs.update(vals)
            if self.trace and vals.get("input_int_register_0", old) != old:
                self.log(f"input_int_register_0 {old} -> {vals['input_int_register_0']}")

    def _stream(self, sock, names, types, hz, started: threading.Event):
        period, next_t = 1.0 / hz, time.monotonic()
        try:
            while started.is_set():
                send_message(sock, b"U", b"\x01" + _pack(types, self._outputs(names)))
                next_t += period
                time.sleep(max(0.0, next_t - time.monotonic()))
        except OSError:
            pass

    # ---- script port (30003): the uploaded program starts once the upload goes quiet -------
    def _serve_script(self, sock: socket.socket):
        sock.settimeout(0.2)
        buf = b""
        while True:
            try:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                # ur_rtde's script ends with its control loop marker and `end`
                if b"NODE_CONTROL_LOOP_ENDS" in buf[-200:] and buf.rstrip().endswith(b"end"):
                    self._start_program(buf)
                    buf = b""
            except socket.timeout:
                if buf:  # any other script: run it once the upload goes quiet
                    self._start_program(buf)
                    buf = b""
        if buf:
            self._start_program(buf)

    def _start_program(self, script: bytes):
        held_s = self._hold_scripts_until - time.monotonic()
        if held_s > 0:
            self.log(f"script of {len(script)} bytes held for {held_s:.1f} s")
            with self.lock:
                self._held_scripts += 1
            threading.Timer(held_s, self._start_held, args=(script,)).start()
            return
        path, other = parse_move_path(script.decode(errors="replace"))
        with self.lock:
            if self.protective_stop or self.emergency_stop:
                self.log(f"script of {len(script)} bytes refused: safety stop active")
                return
            self._program_stopped("a new program replaces it")
            self.script_running = True
            # the command register still holds what the last client wrote: ur_rtde clears it after
            # stopScript, but under load that RTDE packet came after the new upload, and the new
            # program ran the stale stopScript at once (ur_rtde's moveJ(path) then waited for it
            # for ever). A program takes a command only once it has seen the register cleared.
            self._executing = int(self.inputs.get("input_int_register_0", 0)) != 0
            self._busy = False
            self._path, self._path_other = path, other
            self._path_progress, self._sync_path = None, False
            # a new program starts with its globals: async_wr_count = async_op_id = 0, then
            # reset_async_progress()
            self._async_count = self._async_op = 0
            self._write_async(-1)
        self.log(f"script of {len(script)} bytes received: program running"
                 + (f" (move path of {len(path) + len(other)} waypoints)" if path or other else ""))

    def _start_held(self, script: bytes):
        try:
            self._start_program(script)
        finally:
            with self.lock:
                self._held_scripts -= 1

    # ---- dashboard (29999) ----------------------------------------------------------------
    def _serve_dashboard(self, sock: socket.socket):
        f = sock.makefile("rwb", buffering=0)
        f.write(b"Connected: Universal Robots Dashboard Server\n")
        for raw in f:
            line = raw.decode(errors="replace").strip()
            if self.trace:
                self.log(f"dashboard: {line}")
            reply = self._dashboard(line)
            f.write((reply + "\n").encode())
            if line == "quit":
                break

    def _dashboard(self, line: str) -> str:
        low = line.lower()
        if low.startswith("emulator"):
            parts = low.split()
            if len(parts) > 1 and parts[1] in ("protective_stop", "emergency_stop"):
                self.inject(parts[1])
                return f"{parts[1]} injected"
            if len(parts) > 1 and parts[1] in ("drop", "hold_scripts"):
                try:
                    seconds = float(parts[2]) if len(parts) > 2 else 1.0
                except ValueError:
                    return f"emulator {parts[1]}: seconds must be a number, got {parts[2]!r}"
                if parts[1] == "drop":
                    self.drop_connections(seconds)
                    return "connections dropped"
                self._hold_scripts_until = time.monotonic() + seconds
                return "scripts held"
            if len(parts) == 4 and parts[1] == "set_out_int":  # probe the client's register decoding
                with self.lock:
                    self.out_int[int(parts[2])] = int(parts[3])
                return "ok"
            if len(parts) > 1 and parts[1] == "state":
                q, _, tcp = self.arm.state()
                return json.dumps({"q": q.tolist(), "tcp": tcp.tolist(), "moving": self.arm.moving,
                                   "protective_stop": self.protective_stop, "script_running": self.script_running,
                                   "held_scripts": self._held_scripts})
            return "unknown emulator command"
        if low == "stop":   # the controller's "stop running program": the arm brakes with it
            with self.lock:
                self._program_stopped("dashboard stop")
            return "Stopped"
        if low == "unlock protective stop":
            with self.lock:
                self.protective_stop = False
            return "Protective stop releasing"
        if low == "restart safety":
            with self.lock:
                self.protective_stop = self.emergency_stop = False
            return "Restarting safety"
        if low == "safetystatus":
            return "Safetystatus: " + ("PROTECTIVE_STOP" if self.protective_stop else
                                       "ROBOT_EMERGENCY_STOP" if self.emergency_stop else "NORMAL")
        if low == "safetymode":
            return "Safetymode: " + ("PROTECTIVE_STOP" if self.protective_stop else "NORMAL")
        replies = {"polyscopeversion": "URSoftware %d.%d.%d.%d (Dec 08 2021)" % self.version,
                   "get serial number": "20235500001", "get robot model": "UR5", "robotmode": "Robotmode: RUNNING",
                   "is in remote control": "true", "power on": "Powering on", "power off": "Powering off",
                   "brake release": "Brake releasing", "close safety popup": "closing safety popup",
                   "close popup": "closing popup", "programstate": "PLAYING rtde_control" if self.script_running
                   else "STOPPED <unnamed>", "running": f"Program running: {str(self.script_running).lower()}",
                   "play": "Starting program", "pause": "Pausing program", "quit": "Disconnected"}
        return replies.get(low, f"could not understand: '{line}'")
