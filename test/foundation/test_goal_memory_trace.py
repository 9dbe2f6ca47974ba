"""heap.GoalMemoryTrace: off unless the environment names a file; one record per goal."""
from spatial_manip.heap import ENV, GoalMemoryTrace


def test_off_by_default_and_one_record_per_goal(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert GoalMemoryTrace.from_env() is None
    monkeypatch.setenv(ENV, str(tmp_path / "mem.txt"))
    trace = GoalMemoryTrace.from_env()
    kept = [bytearray(10) for _ in range(500)]      # a type whose count grows between the goals
    trace.after_goal()
    kept += [bytearray(10) for _ in range(500)]
    trace.after_goal()
    text = (tmp_path / "mem.txt").read_text()
    assert text.count("=== goal") == 2 and "rss" in text
    assert "bytearray" in text.split("=== goal 2")[1]
    assert len(kept) == 1000
