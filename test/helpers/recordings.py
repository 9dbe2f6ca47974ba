"""Synthetic RealSense recordings (camera/synthetic.build_recording) written in a process of their own.

pyrealsense2's software device and recorder once crashed natively (a segfault in build_recording)
inside a long-lived pytest worker that had run hundreds of tests before (session 27, -n 2): the worker
died, and with it the run. Written in a short-lived child, the same recording comes back (file, the
frames fed, intrinsics) and a crash fails the one test or fixture that asked for it, with the signal
and the child's output."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

_CHILD = """
import pickle, sys
from spatial_manip.camera.synthetic import build_recording
path, config_file, out_file = sys.argv[1:4]
with open(config_file, "rb") as f:
    config = pickle.load(f)
rec = build_recording(path, config)
with open(out_file, "wb") as f:
    pickle.dump(rec, f)
"""


def run_in_child(script: str, *args: str, what: str, timeout_s: float = 120.0) -> None:
    """Run `script` (python -c, faulthandler on) with `args` in a short-lived child process; a
    native crash or an error there fails the calling test with the signal and the child's output."""
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script, *args],
                          capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit code {proc.returncode}"
        pytest.fail(f"{what} failed in its child process ({how}):\n{proc.stderr[-4000:]}", pytrace=False)


def build_recording_isolated(path: str, config=None, timeout_s: float = 120.0):
    """build_recording(path, config) run in a child process; returns its SyntheticRecording."""
    base = Path(path)
    config_file, out_file = base.with_suffix(".config.pkl"), base.with_suffix(".recording.pkl")
    config_file.write_bytes(pickle.dumps(config))
    run_in_child(_CHILD, str(base), str(config_file), str(out_file),
                 what=f"writing the synthetic RealSense recording {path}", timeout_s=timeout_s)
    rec = pickle.loads(out_file.read_bytes())
    config_file.unlink()
    out_file.unlink()
    return rec
