"""The trace writer never ends a goal (issue 35 item 5: an unwritable trace_dir aborted every goal
with an empty code), and traces rotate by count and size (item 8)."""
import json
import logging
import threading
from pathlib import Path

import numpy as np

from spatial_manip import trace as trace_mod
from spatial_manip.pipeline import InstructionPipeline, validate_goal
from spatial_manip.trace import Trace, prune_traces
from test_pipeline import FakeAgent


def _blocked_root(tmp_path):
    """A trace root nobody can create folders in (root included, so the test runs as root too): a
    file stands where the folder should be."""
    root = tmp_path / "traces"
    root.write_text("not a folder")
    trace_mod._unwritable.discard(str(root))
    return root


def test_a_goal_whose_trace_cannot_be_written_still_ends_with_its_own_code(tmp_path, caplog):
    root = _blocked_root(tmp_path)
    pipeline = InstructionPipeline(FakeAgent(), trace_dir=str(root / "20261128-083000-000001"))
    with caplog.at_level(logging.ERROR, logger="spatial_manip.trace"):
        out = pipeline.run(validate_goal("pick the leftmost book", 1, False, 1), threading.Event())
        pipeline.trace_dir = str(root / "20261128-083001-000001")
        again = pipeline.run(validate_goal("pick the leftmost book", 1, False, 1), threading.Event())
    assert out.success and out.error_code == "" and out.trace_path == "", out
    assert again.success and again.trace_path == ""
    said = [r.getMessage() for r in caplog.records if r.name == "spatial_manip.trace"]
    assert len(said) == 1 and "trace not written to" in said[0] and str(root) in said[0], said


def test_a_failed_trace_says_why_and_stops_writing(tmp_path):
    t = Trace(_blocked_root(tmp_path) / "20261128-083000-000001", {"instruction": "x"})
    assert t.image("observation", np.zeros((4, 4, 3), np.uint8)) is None
    assert t.error is not None and "trace not written" in t.error
    assert t.finish({"success": True}) == ""


def _goal_dirs(root, n, kb=10):
    for i in range(n):
        d = root / f"20261128-0830{i:02d}-000000"
        d.mkdir(parents=True)
        (d / "trace.json").write_bytes(b"x" * kb * 1000)


def test_traces_rotate_by_count_keeping_the_newest_and_nothing_else(tmp_path):
    _goal_dirs(tmp_path, 12)
    (tmp_path / "notes").mkdir()                  # a user's folder beside the traces stays
    (tmp_path / "keep.txt").write_text("mine")
    gone = prune_traces(tmp_path, keep_goals=5)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(gone) == 7 and left[:5] == [f"20261128-0830{i:02d}-000000" for i in range(7, 12)]
    assert "notes" in left and "keep.txt" in left
    assert prune_traces(tmp_path, keep_goals=0) == []      # 0: no limit


def test_traces_rotate_by_size(tmp_path):
    _goal_dirs(tmp_path, 10, kb=100)              # 0.1 MB each
    gone = prune_traces(tmp_path, keep_goals=0, keep_mb=0.35)
    assert len(gone) == 7 and len(list(tmp_path.iterdir())) == 3
    assert prune_traces(tmp_path / "missing", keep_goals=1) == []


def test_a_reader_never_sees_the_trace_half_written(tmp_path):
    """The result writes trace.json, then the drawing thread writes it again with its images;
    a reader waiting for them (the bench's worker) read an empty file once (pick-63-00014:
    JSONDecodeError) while the second write had truncated it. Each write is renamed into place."""
    trace = Trace(tmp_path, {"instruction": "take the book"})
    for i in range(2000):
        trace.event("filler", i=i, text="x" * 50)
    path = Path(trace.finish({"success": True}, images_pending=True))
    stop = threading.Event()

    def rewrite():
        while not stop.is_set():
            trace.write()
    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        for _ in range(300):
            assert json.loads(path.read_text())["outcome"] == {"success": True}
    finally:
        stop.set()
        writer.join()
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]
