"""The trace of one goal: every stage, tool call, set of facts, image and timing, written as
JSON (plus PNG images beside it). It is how a user debugs a failed grasp at 2 a.m."""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image


log = logging.getLogger(__name__)
# the folders a trace could not be written into, each reported once (not once per goal)
_unwritable: set[str] = set()
# a goal's trace folder as planner_ports.new_trace_dir names it: only these are ever pruned
TRACE_DIR_NAME = re.compile(r"^\d{8}-\d{6}-\d{6}$")


def _jsonable(x: Any):
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if hasattr(x, "to_dict"):
        return _jsonable(x.to_dict())
    return x if isinstance(x, (str, int, float, bool, type(None))) else repr(x)


class Trace:
    """A goal's trace. Writing it never ends the goal: a folder that cannot be written (read-only,
    full, not a folder) is reported once by `logging`, `error` says why, and the goal goes on
    without its files."""

    def __init__(self, directory: str | Path | None, goal: dict):
        self.t0 = time.monotonic()
        self.dir = Path(directory) if directory else None
        self.error: str | None = None
        self.data: dict = {"goal": _jsonable(goal), "started_at": time.time(), "events": [],
                           "stage_times_s": {}, "images": [], "outcome": None}
        self._stage: tuple[str, float] | None = None
        self._lock = threading.Lock()      # images and events may come from a drawing thread as it is written

    def event(self, kind: str, **fields) -> None:
        entry = {"t_s": round(time.monotonic() - self.t0, 4), "kind": kind, **_jsonable(fields)}
        with self._lock:
            self.data["events"].append(entry)

    def stage(self, name: str, detail: str = "") -> None:
        """Mark the start of a stage; the previous stage's duration is accumulated."""
        self._close_stage()
        self._stage = (name, time.monotonic())
        self.event("stage", stage=name, detail=detail)

    def _close_stage(self) -> None:
        if self._stage:
            name, t = self._stage
            times = self.data["stage_times_s"]
            times[name] = round(times.get(name, 0.0) + time.monotonic() - t, 4)
            self._stage = None

    def image(self, name: str, rgb: np.ndarray, caption: str = "") -> str | None:
        """Save an RGB image (uint8 HxWx3) beside the trace; returns its file name."""
        folder = self.dir                 # read once (see write)
        if folder is None:
            return None
        fname = f"{len(self.data['images']):02d}_{name}.png"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # written under another name, then renamed: a process ended mid-write leaves no broken PNG
            part = folder / f"{fname}.part"
            Image.fromarray(np.ascontiguousarray(rgb)).save(part, format="PNG")
            os.replace(part, folder / fname)
        except OSError as e:
            self._unwritable(e, folder)
            return None
        with self._lock:
            self.data["images"].append({"file": fname, "name": name, "caption": caption})
        return fname

    def finish(self, outcome: dict, images_pending: bool = False) -> str:
        """Write trace.json with the outcome and the total time; its path ("" when not written).
        `images_pending`: images are still being drawn (`images_written` writes it again then)."""
        self._close_stage()
        self.data["outcome"] = _jsonable(outcome)
        self.data["total_s"] = round(time.monotonic() - self.t0, 4)
        self.data["images_pending"] = images_pending
        return self.write()

    def images_written(self) -> str:
        """Write trace.json again once the images drawn after `finish` are written."""
        self.data["images_pending"] = False
        return self.write()

    def write(self) -> str:
        # the folder read once: the result's write and the images' thread may both fail, and the
        # first to fail clears self.dir under the other (the fresh-clone make test of session 31)
        folder = self.dir
        if folder is None:
            return ""
        path = folder / "trace.json"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with self._lock:
                text = json.dumps(self.data, indent=1)
            # written aside and renamed over: a reader (the bench, the trace page) waiting for the
            # images never sees the file truncated between the result's write and the images' one
            with tempfile.NamedTemporaryFile("w", dir=folder, prefix=".trace-", suffix=".json", delete=False) as f:
                f.write(text)
            os.replace(f.name, path)
        except OSError as e:
            self._unwritable(e, folder)
            return ""
        return str(path)

    def _unwritable(self, e: OSError, folder: Path) -> None:
        """Stop writing this trace, and say so once per folder."""
        self.error = f"trace not written to {folder}: {e.strerror or e}"
        root = str(folder.parent)
        self.dir = None
        if root not in _unwritable:
            _unwritable.add(root)
            log.error("%s; goals go on without traces until trace_dir (%s) is writable", self.error, root)


def read_when_drawn(path: str | Path, timeout_s: float = 10.0) -> dict:
    """A trace.json once the images drawn after its goal's result are in it (at most `timeout_s`
    later: then as it stands)."""
    deadline = time.monotonic() + timeout_s
    while True:
        data = json.loads(Path(path).read_text())
        if not data.get("images_pending") or time.monotonic() > deadline:
            return data
        time.sleep(0.05)


def prune_traces(root: str | Path, keep_goals: int = 200, keep_mb: float = 0.0) -> list[Path]:
    """Delete the oldest goal folders under `root` beyond the newest `keep_goals` (0: no limit)
    and beyond `keep_mb` megabytes in all (0: no limit); the folders deleted. Only folders named
    as a goal's trace folder are touched, so a trace_dir pointed at a home folder loses nothing
    else."""
    root = Path(root)
    try:
        goals = sorted((p for p in root.iterdir() if p.is_dir() and TRACE_DIR_NAME.match(p.name)),
                       key=lambda p: p.name, reverse=True)      # the name is the start time
    except OSError:
        return []
    doomed = goals[keep_goals:] if keep_goals > 0 else []
    if keep_mb > 0:
        total = 0.0
        for g in goals[:len(goals) - len(doomed)]:
            total += _size_mb(g)
            if total > keep_mb and g is not goals[0]:      # the newest goal always stays
                doomed.append(g)
    for g in doomed:
        shutil.rmtree(g, ignore_errors=True)
    return doomed


def _size_mb(folder: Path) -> float:
    try:
        return sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 1e6
    except OSError:
        return 0.0
