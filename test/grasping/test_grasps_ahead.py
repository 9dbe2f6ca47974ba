"""Grasps proposed ahead (issue 42) serve only the look and the joints they were made for: a new
look or any arm motion throws them away, and proposing ahead waits until the arm and the requests
are quiet (a new look's scene starts it at once). A fake clock; the results are plain strings (what they are does not matter)."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from spatial_manip.errors import ConfigError
from spatial_manip.grasping.ahead import (SUPERLATIVE_KIND_MAX, GraspsAhead, GraspsAheadConfig, extremes, graspable_ids,
                                          likely_order, load_grasps_ahead_config, unchanged_ids)
from spatial_manip.paths import params_file

HOME = np.zeros(6)
QUIET_S = 1.5


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def ahead():
    clock = Clock()
    cache = GraspsAhead(GraspsAheadConfig(quiet_s=QUIET_S, max_grasps=15), clock=clock)
    cache.note_joints(HOME)
    return clock, cache


def run_all(cache: GraspsAhead, clock: Clock) -> list[str]:
    """Work through the jobs as grasp_node's thread does, each answered 'grasps of <id>'."""
    done = []
    while (job := cache.next_job()) is not None:
        cache.put(job, f"grasps of {job.object_id}")
        done.append(job.object_id)
        clock.t += 0.5
    return done


def test_every_object_of_a_quiet_look_is_proposed_for_once_and_a_request_takes_its_result(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1", "mug_1", "book_1"])
    assert cache.next_job() is None                     # the arm's joints just came: it may still be moving
    clock.t += QUIET_S
    assert run_all(cache, clock) == ["book_1", "mug_1"] and cache.pending() == 0
    assert cache.take(look, "mug_1", 20) is None        # asked for more grasps than it was made for
    assert cache.take(object(), "mug_1", 15) is None    # another look (an equal one is still another)
    result, age = cache.take(look, "mug_1", 5)          # fewer: the caller keeps the best 5
    assert result == "grasps of mug_1" and age == pytest.approx(0.5)
    assert cache.take(look, "mug_1", 15) is None        # served once


def test_a_new_look_throws_the_last_ones_results_away(ahead):
    clock, cache = ahead
    first = object()
    cache.new_scene(first, ["book_1"])
    clock.t += QUIET_S
    run_all(cache, clock)
    second = object()
    cache.new_scene(second, ["book_1"])
    assert cache.take(first, "book_1", 15) is None and cache.take(second, "book_1", 15) is None


def test_an_arm_motion_throws_every_result_and_job_away_even_if_the_arm_came_back(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1", "mug_1"])
    clock.t += QUIET_S
    cache.put(cache.next_job(), "grasps of book_1")
    cache.note_joints(HOME + 1e-3)                      # within the still tolerance: no motion
    cache.note_joints(HOME + 0.01)
    cache.note_joints(HOME)
    assert cache.take(look, "book_1", 15) is None and cache.next_job() is None and cache.pending() == 0


def test_joints_that_stay_within_the_still_tolerance_keep_the_results(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1"])
    clock.t += QUIET_S
    cache.put(cache.next_job(), "grasps of book_1")
    cache.note_joints(HOME + 1e-3)
    assert cache.take(look, "book_1", 15)[0] == "grasps of book_1"


def test_a_result_serves_one_request_so_a_retry_proposes_anew(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1"])
    clock.t += QUIET_S
    cache.put(cache.next_job(), "no grasp holds")
    assert cache.take(look, "book_1", 15)[0] == "no grasp holds"
    assert cache.take(look, "book_1", 15) is None


def test_a_result_made_while_the_arm_moved_or_for_an_older_look_is_not_kept(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1", "mug_1"])
    clock.t += QUIET_S
    job = cache.next_job()
    cache.note_joints(HOME + 0.01)                      # moved while it was proposed
    cache.put(job, "grasps of book_1")
    assert cache.take(look, "book_1", 15) is None
    newer = object()
    cache.new_scene(newer, ["mug_1"])
    clock.t += QUIET_S
    late = cache.next_job()
    cache.new_scene(object(), ["mug_1"])
    cache.put(late, "grasps of mug_1")
    assert cache.take(newer, "mug_1", 15) is None and cache.pending() == 1


def test_a_request_ends_proposing_ahead_on_its_look_and_sets_how_many_grasps_the_next_asks_for(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1", "mug_1"])
    clock.t += QUIET_S
    cache.put(cache.next_job(), "grasps of book_1")
    cache.asked(4)                                      # a goal runs on this look: its motion follows
    clock.t += QUIET_S
    assert cache.next_job() is None and cache.pending() == 0
    assert cache.take(look, "book_1", 15)[0] == "grasps of book_1"     # what was made still serves
    cache.new_scene(object(), ["mug_1"])
    clock.t += QUIET_S
    assert cache.next_job().max_grasps == 4


def test_nothing_is_proposed_ahead_without_the_arms_joints_or_when_off():
    clock = Clock()
    blind = GraspsAhead(GraspsAheadConfig(quiet_s=0.0), clock=clock)
    blind.new_scene(object(), ["book_1"])
    assert blind.next_job() is None                     # the motion check needs the joints
    off = GraspsAhead(GraspsAheadConfig(enabled=False, quiet_s=0.0), clock=clock)
    off.note_joints(HOME)
    off.new_scene(object(), ["book_1"])
    assert off.next_job() is None


def test_a_result_not_to_keep_is_done_but_not_served(ahead):
    clock, cache = ahead
    look = object()
    cache.new_scene(look, ["book_1"])
    clock.t += QUIET_S
    cache.put(cache.next_job(), "no depth yet", keep=False)
    assert cache.pending() == 0 and cache.take(look, "book_1", 15) is None


def test_the_config_file_has_the_section_and_bad_values_are_refused_by_name(tmp_path):
    assert load_grasps_ahead_config(params_file("grasp.yaml")).enabled
    bad = tmp_path / "grasp.yaml"
    bad.write_text("grasp:\n  ahead:\n    quiet_s: -1\n")
    with pytest.raises(ConfigError, match="quiet_s"):
        load_grasps_ahead_config(bad)
    with pytest.raises(ConfigError, match="max_grasps must be an integer within 1..1000"):
        GraspsAheadConfig(max_grasps=0)


def test_a_request_for_the_object_under_way_waits_for_it_and_others_do_not():
    cache = GraspsAhead(GraspsAheadConfig(quiet_s=0.0, max_grasps=15))     # the real clock: a thread waits
    cache.note_joints(HOME)
    look = object()
    cache.new_scene(look, ["book_1", "mug_1"])
    job = cache.next_job()
    assert job.object_id == "book_1" and cache.next_job() is None     # one job at a time
    assert cache.take(look, "mug_1", 15, wait_s=5.0) is None           # not under way: no waiting
    got = []
    waiter = threading.Thread(target=lambda: got.append(cache.take(look, "book_1", 15, wait_s=30.0)))
    waiter.start()
    time.sleep(0.2)
    assert waiter.is_alive()
    cache.put(job, "grasps of book_1")
    waiter.join(10.0)
    assert got and got[0][0] == "grasps of book_1"


def test_the_graspable_objects_are_the_non_fixtures_and_none_while_one_is_held():
    def thing(id_, category, held=False):
        return SimpleNamespace(id=id_, category=category, held=held)
    table, shelf = thing("table", "table"), thing("shelf_1", "shelf")
    assert graspable_ids([table, thing("book_1", "book"), shelf, thing("mug_1", "object")]) == ["book_1", "mug_1"]
    assert graspable_ids([table, thing("book_1", "book", held=True), thing("mug_1", "object")]) == []


@pytest.mark.parametrize("goal", ["request", "new look", "arm motion"])
def test_a_job_under_way_is_told_to_yield_when_a_goal_shows_itself(goal):
    """A request, a new look or an arm motion while a job runs tells it to yield the CPU (grasp_node
    lowers its thread's priority); nothing is told while no job runs."""
    yields = []
    cache = GraspsAhead(GraspsAheadConfig(quiet_s=0.0, max_grasps=15), clock=Clock(), yield_job=lambda: yields.append(goal))
    show_up = {"request": lambda: cache.asked(15), "new look": lambda: cache.new_scene(object(), ["mug_1"]),
               "arm motion": lambda: cache.note_joints(HOME + 0.1)}[goal]
    cache.note_joints(HOME)
    cache.new_scene(object(), ["book_1"])
    show_up()
    assert yields == []                                  # no job under way
    cache.note_joints(HOME)
    cache.new_scene(look := object(), ["book_1"])
    job = cache.next_job()
    show_up()
    assert yields == [goal]                              # told while the job runs
    cache.put(job, "grasps")
    cache.new_scene(look, ["book_1"])
    assert yields == [goal]                              # and not after it ended


def _obj(id_, category, label=None, at=(0.5, 0.0, 0.1), held=False):
    return SimpleNamespace(id=id_, category=category, label=id_.split("_")[0] if label is None else label,
                           center=at, held=held)


def test_the_jobs_go_named_objects_first_then_landmarks_then_unnamed_ones_nearest_the_arm_first():
    objects = [_obj("alarm_clock", "reference", at=(0.37, 0.46, 0.08)), _obj("book_far", "book", at=(0.65, 0.02, 0.1)),
               _obj("table", "table", at=(0.5, 0, -0.3)), _obj("obj3", "object", label="object", at=(0.3, 0, 0.1)),
               _obj("book_near", "book", at=(0.39, 0.14, 0.07)), _obj("mug_1", "mug", at=(0.5, 0.1, 0.05)),
               _obj("mirror", "reference", at=(1.33, -0.16, 0.03)), _obj("nowhere", "book", at=(np.nan, 0, 0))]
    # the two books, each the first or last of its kind along an axis, before the mug alone of its kind
    assert likely_order(objects) == ["book_near", "book_far", "mug_1", "nowhere", "alarm_clock", "mirror", "obj3"]
    assert likely_order(objects + [_obj("cup_1", "cup", held=True)]) == []      # one is held: a place comes


def test_the_order_reads_a_scene_messages_poses():
    def msg(id_, category, x, y):
        return SimpleNamespace(id=id_, category=category, label=id_, held=False,
                               pose=SimpleNamespace(position=SimpleNamespace(x=x, y=y, z=0.1)))
    assert likely_order([msg("jar", "jar", 0.7, 0.0), msg("pagoda", "reference", 0.3, 0.0),
                         msg("can", "can", 0.2, -0.3)]) == ["can", "jar", "pagoda"]


def test_the_jobs_are_handed_out_in_the_order_given(ahead):
    clock, cache = ahead
    cache.new_scene(object(), ["book_2", "book_1", "clock_1"])
    clock.t += QUIET_S
    assert run_all(cache, clock) == ["book_2", "book_1", "clock_1"]


def test_a_request_for_the_object_under_way_resumes_its_job_and_one_for_another_yields_it():
    told = []
    cache = GraspsAhead(GraspsAheadConfig(quiet_s=0.0, max_grasps=15), clock=Clock(), yield_job=lambda: told.append("yield"),
                        resume_job=lambda: told.append("resume"))
    cache.note_joints(HOME)
    cache.new_scene(object(), ["book_1", "mug_1"])
    job = cache.next_job()
    cache.asked(15, "book_1")
    cache.asked(5, "book_1")
    assert told == ["resume", "resume"]                  # the request waits for it (made for as many or more)
    assert not cache.stale(job)
    cache.asked(20, "book_1")
    cache.asked(15, "mug_1")
    assert told == ["resume", "resume", "yield", "yield"]    # more grasps than it makes, another object
    assert cache.stale(job)                                  # and it stops: the goal's motion throws it away
    cache.put(job, "grasps of book_1")
    cache.asked(15, "book_1")
    assert told == ["resume", "resume", "yield", "yield"]    # no job under way: nothing is told


@pytest.mark.parametrize("change", ["new look", "arm motion", "request for another", "none"])
def test_a_job_is_stale_once_a_new_look_an_arm_motion_or_another_request_made_it_useless(ahead, change):
    clock, cache = ahead
    cache.new_scene(look := object(), ["book_1"])
    clock.t += QUIET_S
    job = cache.next_job()
    {"new look": lambda: cache.new_scene(object(), ["book_1"]), "arm motion": lambda: cache.note_joints(HOME + 0.1),
     "request for another": lambda: cache.asked(15, "mug_1"), "none": lambda: cache.asked(15, "book_1")}[change]()
    assert cache.stale(job) is (change != "none")
    cache.put(job, "grasps of book_1")
    # a stale job's result is not served (grasp_node's proposing stopped); one stale by a request
    # alone is kept if it ran to its end, as nothing it depends on changed
    assert (cache.take(look, "book_1", 15) is None) is (change in ("new look", "arm motion"))


def test_a_job_the_request_stopped_waiting_for_is_stale_so_it_stops():
    cache = GraspsAhead(GraspsAheadConfig(quiet_s=0.0, max_grasps=15))     # the real clock: take waits
    cache.note_joints(HOME)
    look = object()
    cache.new_scene(look, ["book_1", "mug_1"])
    job = cache.next_job()
    assert cache.take(look, "mug_1", 15, wait_s=0.2) is None and not cache.stale(job)    # another object's
    assert cache.take(look, "book_1", 15, wait_s=0.2) is None and cache.stale(job)       # its own: given up


def test_a_new_look_is_proposed_for_at_once_once_the_arm_and_the_requests_are_quiet(ahead):
    """The look is done when its scene comes: waiting quiet_s after it only left the first job later
    (0.8 s a look, latency-bench seed 72); an arm motion or a request still holds the jobs back."""
    clock, cache = ahead
    clock.t += QUIET_S
    cache.new_scene(object(), ["book_1", "mug_1"])
    job = cache.next_job()
    assert job is not None and job.object_id == "book_1"
    cache.put(job, "grasps of book_1")
    cache.note_joints(HOME + 0.01)                      # the arm moved: its quiet spell starts again
    cache.new_scene(object(), ["mug_1"])
    assert cache.next_job() is None
    clock.t += QUIET_S
    assert cache.next_job().object_id == "mug_1"


def test_the_same_look_published_again_keeps_the_results_of_the_boxes_it_left_as_they_were(ahead):
    """The planner names a reference from the words and publishes the look again: what was
    proposed for the objects it left alone still serves (a new look threw it all away); the renamed
    one's goes, and a job under way for it stops."""
    clock, cache = ahead
    clock.t += QUIET_S
    cache.new_scene(look := object(), ["book_1", "book_2", "statue"])
    cache.put(cache.next_job(), "grasps of book_1")
    job = cache.next_job()                              # book_2, under way as the look comes again
    renamed = object()
    # 'statue' became 'ermine': its box (a catalogue's) and name changed, the books' did not
    cache.same_look(renamed, ["book_1", "book_2"], ["book_1", "book_2", "ermine"])
    assert not cache.stale(job)
    cache.put(job, "grasps of book_2")
    assert cache.take(renamed, "book_1", 15)[0] == "grasps of book_1"
    assert cache.take(renamed, "book_2", 15)[0] == "grasps of book_2"
    assert run_all(cache, clock) == ["ermine"]          # only what was not proposed for is to do
    cache.same_look(object(), ["book_1", "book_2", "ermine"], ["book_1", "book_2", "ermine"])
    assert cache.take(look, "book_1", 15) is None       # served once, whichever message asks
    assert cache.take(renamed, "ermine", 15)[0] == "grasps of ermine"
    cache.new_scene(object(), ["statue"])
    statue = cache.next_job()
    cache.same_look(object(), ["book_1"], ["ermine"])   # its box changed: its job stops
    assert cache.stale(statue)


def test_a_look_published_again_after_an_arm_motion_is_proposed_for_again(ahead):
    """An arm motion threw every result away: the same boxes published again (a look with the
    same boxes to the bit: ground truth, ideal sensing) are all to do."""
    clock, cache = ahead
    clock.t += QUIET_S
    cache.new_scene(object(), ["book_1", "book_2"])
    run_all(cache, clock)
    cache.note_joints(HOME + 0.1)
    clock.t += QUIET_S
    cache.same_look(again := object(), ["book_1", "book_2"], ["book_1", "book_2"])
    assert cache.take(again, "book_1", 15) is None and run_all(cache, clock) == ["book_1", "book_2"]


def _message(viewer, *objects):
    return SimpleNamespace(viewer=viewer, objects=[SimpleNamespace(id=i, pose=p) for i, p in objects])


def test_a_look_published_again_is_told_from_a_new_one_by_its_unchanged_boxes():
    last = _message("camera", ("book_1", 1.0), ("book_2", 2.0), ("statue", 3.0))
    assert unchanged_ids(last, _message("camera", ("book_1", 1.0), ("book_2", 2.0), ("ermine", 3.1))) == \
        ["book_1", "book_2"]
    assert unchanged_ids(last, _message("camera", ("book_1", 1.0), ("book_2", 2.1), ("statue", 3.1))) == []  # a new look
    assert unchanged_ids(last, _message("moved", ("book_1", 1.0), ("book_2", 2.0), ("statue", 3.0))) == []
    assert unchanged_ids(None, last) == [] and unchanged_ids(_message("camera"), last) == []


def test_of_a_few_of_a_kind_the_objects_a_superlative_names_go_before_the_middle_ones():
    # three mugs across the table, seen from the far side: the ends are the leftmost and rightmost (as
    # seen and in the base frame) and more; the middle one, the nearest the base, goes last
    mugs = [_obj(f"mug_{k}", "mug", at=(x, y, 0.05)) for k, (x, y) in enumerate(((0.5, -0.4), (0.55, -0.2), (0.45, 0.4)))]
    assert extremes({o.id: (o.category, np.array(o.center)) for o in mugs}, viewer=(1.6, 0.0, 0.8)) == \
        {"mug_2": 4, "mug_0": 3, "mug_1": 2}
    assert likely_order(mugs, viewer=(1.6, 0.0, 0.8)) == ["mug_2", "mug_0", "mug_1"]
    assert likely_order(mugs)[2] == "mug_1"                # no viewer: the base frame's axes alone
    # a near tie (within SUPERLATIVE_GAP_M) singles out neither
    assert extremes({"a": ("book", np.array([0.5, 0.0, 0.0])), "b": ("book", np.array([0.5, 0.3, 0.0])),
                     "c": ("book", np.array([0.51, 0.1, 0.0]))})["b"] == 2


def test_among_many_of_a_kind_no_superlative_counts_and_the_nearest_goes_first():
    # five books in a row (latency-bench seed 77's 'the third leftmost book': the middle one, nearest
    # the base, went 5th by the superlatives' count and its grasps were proposed when asked for)
    books = [_obj(f"book_{k}", "book", at=(x, y, 0.05))
             for k, (x, y) in enumerate(((0.5, -0.4), (0.55, -0.2), (0.4, 0.05), (0.55, 0.2), (0.45, 0.4)))]
    assert SUPERLATIVE_KIND_MAX < len(books)
    assert extremes({o.id: (o.category, np.array(o.center)) for o in books}, viewer=(1.6, 0.0, 0.8)) == {}
    assert likely_order(books, viewer=(1.6, 0.0, 0.8)) == ["book_2", "book_1", "book_3", "book_4", "book_0"]


def test_the_categories_the_last_requests_asked_for_go_first_among_named_objects():
    objects = [_obj("mug_1", "mug", at=(0.4, 0.0, 0.05)), _obj("book_1", "book", at=(0.6, 0.1, 0.05)),
               _obj("clock", "reference", at=(0.3, 0.0, 0.05)), _obj("obj1", "object", label="object", at=(0.3, 0.1, 0.1))]
    assert likely_order(objects) == ["mug_1", "book_1", "clock", "obj1"]
    assert likely_order(objects, asked_categories=["book"]) == ["book_1", "mug_1", "clock", "obj1"]
    # a landmark or an unnamed object asked for stays behind the named ones (the group comes first)
    assert likely_order(objects, asked_categories=["reference", "object"]) == ["mug_1", "book_1", "clock", "obj1"]


def test_extremes_counts_each_axis_once_and_skips_objects_without_a_centre():
    placed = {"a": ("book", np.array([0.5, -0.3, 0.1])), "b": ("book", np.array([0.7, 0.0, 0.1])),
              "c": ("book", np.array([0.5, 0.3, 0.1])), "d": ("book", None), "m": ("mug", np.array([0.4, 0, 0]))}
    counts = extremes(placed)
    assert "d" not in counts and "m" not in counts         # alone of its kind: its noun names it
    assert counts["b"] == 2                                # farthest along x and from the base
    assert counts["a"] >= 1 and counts["c"] >= 1
    assert extremes(placed, viewer=(np.nan, 0, 0)) == counts    # an unusable viewer adds nothing
