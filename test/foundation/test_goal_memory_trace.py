"""heap.GoalMemoryTrace: off unless the environment names a file; one record per goal."""
from spatial_manip.heap import ENV, GoalMemoryTrace


class Kept:
    """A gc-tracked type whose count grows between the two goals."""


def test_off_by_default_and_one_record_per_goal(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert GoalMemoryTrace.from_env() is None
    monkeypatch.setenv(ENV, str(tmp_path / "mem.txt"))
    trace = GoalMemoryTrace.from_env()
    kept = [Kept() for _ in range(500)]
    trace.after_goal()
    kept += [Kept() for _ in range(500)]
    trace.after_goal()
    text = (tmp_path / "mem.txt").read_text()
    assert text.count("=== goal") == 2 and "rss" in text
    assert "+500 Kept" in text.split("=== goal 2")[1]
    assert len(kept) == 1000
