"""The soak benchmark's summary tells a leak (grows to the end) from a cache (fills, then flat)."""
import numpy as np

from spatial_manip.bench.soak import NodeUsage, summary_rows, usage_table


def _samples(rss_of_goal, goals=200, threads_of_goal=lambda k: 31):
    return [{"goal": k, "usage": {"sim_node": NodeUsage(rss_of_goal(k), 18, threads_of_goal(k))}}
            for k in range(1, goals + 1)]


def test_a_cache_that_fills_in_the_first_goals_is_not_growth():
    row, = summary_rows(_samples(lambda k: 600 + 70 * min(k, 14)))
    assert row["rss_first_mb"] == 670 and row["rss_goal14_mb"] == 1580 and row["rss_peak_mb"] == 1580
    assert abs(row["rss_growth_mb_per_100"]) < 1e-6 and abs(row["fds_growth_per_100"]) < 1e-6


def test_a_leak_is_reported_per_hundred_goals():
    row, = summary_rows(_samples(lambda k: 600 + 2.5 * k))
    assert np.isclose(row["rss_growth_mb_per_100"], 250.0) and row["rss_last_mb"] == 1100


def test_threads_are_tracked_like_memory():
    row, = summary_rows(_samples(lambda k: 600, threads_of_goal=lambda k: 30 + k // 10))
    assert row["threads_first"] == 30 and row["threads_last"] == 50 and np.isclose(row["threads_growth_per_100"], 10, atol=0.5)


def test_the_periodic_report_names_every_node_with_rss_fds_and_threads():
    table = usage_table(40, 23, {"sim_node": NodeUsage(702.4, 21, 35), "planner_node": NodeUsage(388.0, 40, 18)})
    assert "after goal 40 (23 succeeded)" in table
    assert "sim_node" in table and "702 MB" in table and "21 fds" in table and "35 threads" in table
    assert "planner_node" in table and "388 MB" in table and "18 threads" in table


def test_bad_arguments_are_refused_before_anything_starts(tmp_path, capsys):
    from spatial_manip.bench.soak import main

    for argv, words in ((["--goals", "1"], "--goals must be at least 2"),
                        (["--suite", "everything"], "unknown --suite 'everything'"),
                        (["--segmenter", "clasical"], "unknown --segmenter 'clasical'")):
        assert main([*argv, "--out", str(tmp_path / "soak")]) == 2
        assert words in capsys.readouterr().err
    assert not (tmp_path / "soak").exists()          # nothing generated


def test_the_csv_keeps_each_goals_code_and_every_nodes_rss_fds_and_threads(tmp_path):
    import csv

    from spatial_manip.bench.soak import write_outputs

    samples = [{"goal": k, "elapsed_s": 20.0 * k, "success": k % 2 == 0, "error_code": "" if k % 2 == 0 else "UNREACHABLE",
                "usage": {"sim_node": NodeUsage(600.0 + k, 18, 29), "planner_node": NodeUsage(350.0, 19, 24)}}
               for k in range(1, 4)]
    write_outputs(samples, tmp_path)
    rows = list(csv.DictReader(open(tmp_path / "soak.csv")))
    assert [r["error_code"] for r in rows] == ["UNREACHABLE", "", "UNREACHABLE"]
    assert rows[2]["sim_node_rss_mb"] == "603.0" and rows[2]["planner_node_threads"] == "24"
    assert (tmp_path / "soak.png").stat().st_size > 0
