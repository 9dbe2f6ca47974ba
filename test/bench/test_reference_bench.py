from spatial_manip.bench import reference_bench


def test_reference_bench_scores_a_task_and_prints_totals(capsys):
    lines = []
    results = reference_bench.run("place", [4], 1, progress=lines.append)
    assert len(results) == 1 and len(lines) == 1
    r = results[0]
    assert r.task_id in lines[0] and r.instruction in lines[0]
    assert r.refs and all(v == "ok" or ":" in v or v == "missing" for v in r.refs.values())
    assert r.planned or r.error
    assert "tasks 1:" in reference_bench.summary(results)


def test_referenced_ids_are_the_program_objects_and_pick_answers():
    class T:
        program = "pick(unique(filterDist$Closest(filterCat(book), near_1)))"
        action, answer = "pick", ["book_2"]

    class O:
        def __init__(self, i, c):
            self.id, self.category = i, c

    class S:
        objects = [O("near_1", "reference"), O("book_2", "book"), O("book_3", "book"), O("shelf", "shelf")]

    assert reference_bench.referenced_ids(T, S) == ["near_1", "book_2"]


def test_reference_bench_renders_with_a_sensing_profile_and_runs_only_the_tasks_asked():
    """--sensing realistic: the frame carries the profile's depth noise and calibration error,
    drawn from the task's scene seed as sim_node's reset draws them."""
    from spatial_manip.sim.sensing import sensing_profile

    results = reference_bench.run("place", [4], 2, progress=lambda s: None, profile=sensing_profile("realistic"),
                                  only={"place-4-00001"})
    assert [r.task_id for r in results] == ["place-4-00001"]
    assert results[0].perceive_s > 0 and (results[0].planned or results[0].error)
    assert 0 < results[0].associate_s < results[0].perceive_s
    text = reference_bench.summary(results)
    assert "left unnamed" in text and "associator" in text and "ms median per frame" in text


def test_needed_outcomes_tell_unnamed_from_misnamed_and_not_found():
    r = reference_bench.TaskResult("t", "i", refs={"a": "ok", "b": "label:object", "c": "label:jar",
                                                   "d": "missing", "e": "far:20cm", "f": "unseen"})
    assert reference_bench.needed_outcomes([r]) == {"named": 1, "unnamed": 1, "misnamed": 1, "not_found": 2,
                                                    "unseen": 1}
