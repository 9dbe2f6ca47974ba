"""The latency bench's arithmetic: stage durations from feedback marks, and the summary."""
import numpy as np

from spatial_manip.bench.latency import MOTION_RAD, MotionTimes, stage_durations, summarize


def test_stage_durations_sum_repeated_stages_and_end_at_the_result():
    marks = [(0.0, "perceiving"), (2.0, "reasoning"), (2.1, "grasping"), (3.0, "moving"),
             (9.0, "perceiving"), (10.0, "verifying")]
    d = stage_durations(marks, t_end=11.5)
    assert d["perceiving"] == 3.0          # 2.0 before reasoning, 1.0 on the second look
    assert round(d["reasoning"], 6) == 0.1
    assert d["moving"] == 6.0 and d["verifying"] == 1.5
    assert abs(sum(d.values()) - 11.5) < 1e-9


def test_summary_skips_missing_measures_and_skipped_goals():
    records = [{"id": "a", "stages": {"moving": 4.0}, "goal_total_s": 8.0, "accepted_to_first_motion_s": 1.0,
                "arm_stopped_to_result_s": 0.5},
               {"id": "b", "stages": {"moving": 6.0}, "goal_total_s": 10.0},   # never moved
               {"id": "c", "skipped": True}]
    s = summarize(records)
    assert s["accepted_to_first_motion_s"] == (1.0, 1.0, 1)
    assert s["moving"][0] == 5.0 and s["moving"][2] == 2
    assert s["goal_total_s"][2] == 2
    assert "perceiving" not in s


def test_a_baseline_under_another_sensing_profile_is_refused_before_anything_runs(tmp_path, capsys):
    import argparse

    from spatial_manip.bench import latency

    p = argparse.ArgumentParser()
    latency.add_arguments(p)
    args = p.parse_args(["--out", str(tmp_path), "--baseline", "HEAD~1", "--sensing", "ideal"])
    assert latency.run(args) == 2
    assert "--baseline runs the old revision's graph with sim_node's default sensing" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_goals_look_is_read_from_its_trace_and_counted(tmp_path):
    import json

    from spatial_manip.bench.latency import look_of, looks_reused

    (tmp_path / "trace.json").write_text(json.dumps({"events": [
        {"t_s": 0.0, "kind": "stage", "stage": "perceiving"},
        {"t_s": 0.4, "kind": "look", "reused": True, "age_s": 1.2, "reason": "fresh", "home_s": 0.3, "look_s": 0.1},
        {"t_s": 9.0, "kind": "look", "reused": False, "age_s": 0.8, "reason": "the arm moved"}]}))
    look = look_of(str(tmp_path / "trace.json"))
    assert look == {"reused": True, "age_s": 1.2, "reason": "fresh", "home_s": 0.3, "look_s": 0.1}   # the first
    assert look_of(str(tmp_path / "missing.json")) is None and look_of("") is None
    records = [{"look": look}, {"look": {"reused": False}}, {"id": "old revision"}]
    assert looks_reused(records) == "1 of 2 goals reasoned on a look taken before them"
    assert looks_reused([{}]) == "no trace said whether its look was reused"


def test_a_negative_think_time_is_refused_before_anything_runs(tmp_path, capsys):
    import argparse

    from spatial_manip.bench import latency

    p = argparse.ArgumentParser()
    latency.add_arguments(p)
    assert latency.run(p.parse_args(["--out", str(tmp_path), "--think-s", "-1"])) == 2
    assert "--think-s must be within 0..60 s, got -1" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_slow_motion_counts_from_when_it_has_moved_the_threshold_in_all():
    """Each reading moves 0.3 of MOTION_RAD: comparing neighbours never saw it move."""
    times = MotionTimes()
    q = np.zeros(6)
    for k in range(12):
        times.note(q + k * 0.3 * MOTION_RAD * np.eye(6)[0], now=float(k))
    for k in range(12, 15):
        times.note(q + 11 * 0.3 * MOTION_RAD * np.eye(6)[0], now=float(k))    # standing still
    assert (times.first, times.last) == (4.0, 8.0)     # 1.2 and 2.4 x MOTION_RAD from the start
    times.reset()
    assert times.first is None and times.last is None


def test_where_the_looks_taken_went_is_the_median_of_each_part():
    from spatial_manip.bench.latency import where_looks_went

    taken = [{"look": {"reused": False, "observe_s": obs, "perceive_s": {"mask_arm": 0.3, "segment": seg}}}
             for obs, seg in ((0.0, 3.0), (1.0, 4.0), (0.5, 2.0))]
    records = taken + [{"look": {"reused": True, "age_s": 1.0}}, {"id": "old revision"}]
    assert where_looks_went(records) == ("where 3 looks taken went (median s): observe 0.50, mask_arm 0.30, "
                                         "segment 3.00")
    assert where_looks_went([{"look": {"reused": True}}, {}]) == ""


def test_moving_to_first_motion_is_measured_or_derived_from_one_attempts_stages():
    """A revision that did not measure it gives its first motion less the stages before moving,
    only when the goal made one attempt (after a retry the stages no longer all precede it)."""
    from spatial_manip.bench.latency import moving_to_first_motion

    measured = {"stages": {"perceiving": 1.0, "moving": 3.0}, "accepted_to_first_motion_s": 2.5,
                "moving_to_first_motion_s": 0.4}
    old = {"stages": {"perceiving": 0.5, "reasoning": 0.1, "grasping": 1.2, "moving": 3.0},
           "accepted_to_first_motion_s": 2.3}
    retried = {"stages": {"perceiving": 0.5, "grasping": 2.0, "reflecting": 0.0, "moving": 3.0},
               "accepted_to_first_motion_s": 4.0}
    assert moving_to_first_motion(measured) == 0.4
    assert abs(moving_to_first_motion(old) - 0.5) < 1e-9
    assert moving_to_first_motion(retried) is None and moving_to_first_motion({"stages": {}}) is None
    assert summarize([measured, old, retried])["moving_to_first_motion_s"][2] == 2


def test_baseline_first_times_the_baseline_before_the_current_code(tmp_path, monkeypatch, capsys):
    """The side timed second meets the machine's later load: --baseline-first swaps the order."""
    import argparse

    from spatial_manip.bench import latency

    order = []
    monkeypatch.setattr(latency, "hold_domains", lambda n, first=None: [0, 1])
    monkeypatch.setattr(latency, "prepare_tasks", lambda suite, goals, seed, out: [{"id": "t"}])
    monkeypatch.setattr(latency, "run_goals", lambda *a, **k: order.append("current") or [{"id": "t", "skipped": True}])
    monkeypatch.setattr(latency, "run_baseline", lambda *a, **k: order.append("baseline") or ([{"id": "t", "skipped": True}], 0.0))
    p = argparse.ArgumentParser()
    latency.add_arguments(p)
    for flags, want in (([], ["current", "baseline"]), (["--baseline-first"], ["baseline", "current"])):
        order.clear()
        assert latency.run(p.parse_args(["--out", str(tmp_path), "--baseline", "HEAD~1", *flags])) == 0
        assert order == want
    assert "timed before the current code" in capsys.readouterr().out


def test_the_slowest_goals_say_where_their_wait_for_the_first_motion_went():
    """The p95 is the slowest goals': each says how long it waited for an idle look under way, the
    rest of perceiving, reasoning, grasping and the arm server's part, slowest first."""
    from spatial_manip.bench.latency import slowest_goals

    records = [
        {"id": "hit", "accepted_to_first_motion_s": 0.6, "stages": {"perceiving": 0.2, "reasoning": 0.05,
                                                                   "grasping": 0.05, "moving": 9.0}},
        {"id": "miss", "accepted_to_first_motion_s": 3.1, "look": {"reused": True, "waited_s": 1.5},
         "stages": {"perceiving": 1.7, "reasoning": 0.1, "grasping": 1.0, "moving": 9.0}},
        {"id": "never moved", "stages": {"perceiving": 1.0}},
        {"id": "quick", "accepted_to_first_motion_s": 0.4, "stages": {"perceiving": 0.1, "moving": 5.0}}]
    assert slowest_goals(records) == [
        "miss: first motion 3.10 s = waiting for a look under way 1.50, perceiving 0.20 (look reused), "
        "reasoning 0.10, grasping 1.00, moving -> first motion 0.30",
        "hit: first motion 0.60 s = perceiving 0.20, reasoning 0.05, grasping 0.05, moving -> first motion 0.30"]
    assert slowest_goals([]) == []


def test_the_summary_says_how_many_goals_the_first_motion_figures_rest_on():
    """A goal that failed before the arm moved has no first motion: the line says of how many goals
    the median and p95 are (skipped goals are not counted at all)."""
    from spatial_manip.bench.latency import goals_that_moved

    records = [{"id": "a", "accepted_to_first_motion_s": 0.7, "stages": {}}, {"id": "b", "stages": {"reasoning": 0.1}},
               {"id": "c", "accepted_to_first_motion_s": 1.2, "stages": {}}, {"id": "d", "skipped": True}]
    assert goals_that_moved(records).startswith("2 of 3 goals reached the arm's first motion")
