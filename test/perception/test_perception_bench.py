from spatial_manip.bench import perception_bench as bench


def test_bench_run_reports_every_backend_and_the_ratio(tabletop, touching_books):
    result = bench.run(backends=["classical"], frames=[tabletop, touching_books], repeats=1)
    names = [s["backend"] for s in result["backends"]]
    assert names == ["classical", "ground_truth"]
    for s in result["backends"]:
        assert s["recall"] == 1.0 and s["false_positives"] == 0
        assert s["centre_err_max_cm"] < 2.0
        assert s["calls"] == 2
    assert result["ratio_vs_baseline"]["ground_truth"] == 1.0
    text = bench.format_report(result)
    assert "classical" in text and "x baseline" in text
