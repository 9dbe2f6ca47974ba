"""The trace of one goal: every stage, tool call, set of facts, image and timing, written as
JSON (plus PNG images beside it). It is how a user debugs a failed grasp at 2 a.m."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np


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
    def __init__(self, directory: str | Path | None, goal: dict):
        self.t0 = time.monotonic()
        self.dir = Path(directory) if directory else None
        self.data: dict = {"goal": _jsonable(goal), "started_at": time.time(), "events": [],
                           "stage_times_s": {}, "images": [], "outcome": None}
        self._stage: tuple[str, float] | None = None

    def event(self, kind: str, **fields) -> None:
        self.data["events"].append({"t_s": round(time.monotonic() - self.t0, 4), "kind": kind,
                                    **_jsonable(fields)})

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
        if self.dir is None:
            return None
        from PIL import Image

        self.dir.mkdir(parents=True, exist_ok=True)
        fname = f"{len(self.data['images']):02d}_{name}.png"
        Image.fromarray(np.ascontiguousarray(rgb)).save(self.dir / fname)
        self.data["images"].append({"file": fname, "name": name, "caption": caption})
        return fname

    def finish(self, outcome: dict) -> str:
        self._close_stage()
        self.data["outcome"] = _jsonable(outcome)
        self.data["total_s"] = round(time.monotonic() - self.t0, 4)
        if self.dir is None:
            return ""
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / "trace.json"
        path.write_text(json.dumps(self.data, indent=1))
        return str(path)
