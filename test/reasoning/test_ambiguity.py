"""'the X' with several X, and words that contradict each other, are AMBIGUOUS before anything moves (issue 24).

A definite singular reference ("the book lying flat") promises one object: when several fit and no
word chooses between them, the planner asks which, naming the candidates. "a"/"any"/"one of the"/
a plural may take any of them; a superlative or rank ("the second leftmost ...") is a choice; a
named unique object ("the jar") is unaffected. Contradictory words are refused naming both.
"""
import json
import re

import pytest

from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.planner import make_planner

PLANNER = make_planner("program")


def two_flat():
    """ESPIRE's example table: two books lie flat (b_small_flat, b_med_flat), two stand upright."""
    return ex.table_scene()


def one_flat():
    scene = ex.table_scene()
    scene.objects = [o for o in scene.objects if o.id != "b_med_flat"]
    return scene


def plan(scene, text, kind="auto"):
    return PLANNER.plan(scene, text, task_kind=kind)


# --- "the" with several candidates ---------------------------------------------------------------
@pytest.mark.parametrize("text", ["pick the book lying flat", "take the flat book",
                                  "Could you pick up the book that's lying flat, please?"])
def test_the_with_two_flat_books_is_ambiguous_naming_both(text):
    r = plan(two_flat(), text)
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    msg = r.error["message"]
    assert "b_small_flat" in msg and "b_med_flat" in msg and "2 objects" in msg, msg
    assert re.search(r'say "an? .*book.*" to take any', msg), msg     # how to say "any"
    assert r.targets == []                                            # nothing to pick, nothing to move


def test_ambiguity_message_quotes_the_words_and_suggests_a_choice():
    msg = plan(two_flat(), "pick the book lying flat").error["message"]
    assert msg.startswith('"the book lying flat" matches 2 objects (')
    assert '"the leftmost book lying flat"' in msg and '"a book lying flat"' in msg


def test_ambiguity_message_quotes_the_users_noun_whatever_the_category():
    """objects-65-00010: two cartons both read brown; the refusal named "the book"."""
    scene = two_flat()
    for o in scene.objects:
        if o.id in ("b_small_flat", "b_med_flat"):
            o.label = o.category = "carton"
    msg = plan(scene, "pick up the carton lying flat").error["message"]
    assert msg.startswith('"the carton lying flat" matches 2 objects ('), msg
    assert '"a carton lying flat"' in msg and "book" not in msg, msg


@pytest.mark.parametrize("text", ["pick a book lying flat", "pick any book lying flat", "take one of the flat books",
                                  "take the flat books", "grab whichever flat book", "take a flat-lying book"])
def test_indefinite_or_plural_takes_any(text):
    r = plan(two_flat(), text)
    assert r.ok, r.error
    assert set(r.targets) == {"b_small_flat", "b_med_flat"}


def test_the_with_one_flat_book_plans():
    r = plan(one_flat(), "pick the book lying flat")
    assert r.ok, r.error
    assert r.targets == ["b_small_flat"]


@pytest.mark.parametrize("text,target", [
    ("take the second leftmost book lying flat", "b_med_flat"),      # a rank chooses
    ("take the leftmost book lying flat", "b_small_flat"),           # a superlative chooses
    ("take the flat book closest to you", None),
    ("take the flat book on the left of the table", "b_small_flat"),  # the words leave one
])
def test_a_choice_or_a_unique_answer_is_not_ambiguous(text, target):
    r = plan(two_flat(), text)
    assert r.ok, r.error
    if target:
        assert r.targets == [target]


def test_a_named_unique_object_is_unaffected():
    r = plan(two_flat(), "pick up the jar")
    assert r.ok and r.targets == ["jar"], r.error


def test_the_trace_records_the_reference_and_its_candidates():
    r = plan(two_flat(), "pick the book lying flat")
    ref = next(e for e in r.trace if e.get("event") == "reference")
    assert ref["determiner"] == "the" and not ref["choice"] and set(ref["candidates"]) == {"b_small_flat", "b_med_flat"}
    assert r.trace[-1]["event"] == "error" and r.trace[-1]["code"] == "AMBIGUOUS"


def test_pick_and_place_with_an_ambiguous_object_is_refused():
    scene = ex.table_scene()
    r = plan(scene, "pick the book lying flat and place it 10 cm to the right of the jar")
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    assert "b_small_flat" in r.error["message"] and "b_med_flat" in r.error["message"]


def test_the_agent_refuses_before_any_motion_in_a_dry_run_and_a_real_run():
    """The ambiguity is decided in the reasoning stage, before grasping or moving (dry run or not)."""
    from spatial_manip.agent import Agent, AgentConfig
    from spatial_manip.errors import ErrorCode, SpatialManipError
    from spatial_manip.pipeline import Perceived, validate_goal

    class Ports:
        requests = []

        def run_motion(self, request, cancel):
            self.requests.append(request)

    class Trace:
        events = []

        def event(self, name, **kw):
            self.events.append((name, kw))

    for dry_run in (True, False):
        ports, trace = Ports(), Trace()
        agent = Agent(ports, AgentConfig(planner="program"))
        goal = validate_goal("pick the book lying flat", "pick", dry_run)
        with pytest.raises(SpatialManipError, match=r"b_small_flat, b_med_flat|b_med_flat, b_small_flat") as e:
            agent.reason(Perceived(observation=None, scene=two_flat()), goal, None, trace)
        assert e.value.code is ErrorCode.AMBIGUOUS
        assert ports.requests == []
        step = next(kw for name, kw in trace.events if name == "program_step")
        assert step["error"]["code"] == "AMBIGUOUS" and any(e.get("event") == "reference" for e in step["steps"])


def test_plan_cli_reports_ambiguous(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "scene.json"
    path.write_text(json.dumps(two_flat().to_dict()))
    p = subprocess.run([sys.executable, "-m", "spatial_manip.cli", "plan", "--scene", str(path), "--instruction",
                        "pick the book lying flat", "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)
    assert out["error"]["code"] == "AMBIGUOUS" and "b_med_flat" in out["error"]["message"]


# --- contradictory words -------------------------------------------------------------------------
@pytest.mark.parametrize("text,words", [
    ("the leftmost rightmost book", ("leftmost", "rightmost")),
    ("pick the leftmost rightmost book", ("leftmost", "rightmost")),
    ("take the largest smallest book", ("largest", "smallest")),
    ("take the tallest shortest book", ("tallest", "shortest")),
    ("take the leftmost second leftmost book", ("leftmost", "second leftmost")),
    ("take the book left of the jar and right of the jar", ("left of the jar", "right of the jar")),
    ("take the book in front of the jar behind the jar", ("in front of the jar", "behind the jar")),
    ("take the book above the jar below the jar", ("above the jar", "below the jar")),
])
def test_contradictory_words_are_ambiguous_naming_the_contradiction(text, words):
    r = plan(two_flat(), text)
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    msg = r.error["message"]
    assert "contradicts itself" in msg and all(w in msg for w in words), msg


def test_different_references_do_not_contradict():
    r = plan(two_flat(), "take a book left of the jar and right of the picture frame")
    assert r.error is None or "contradicts" not in r.error["message"], r.error


def test_an_ambiguous_reference_says_how_its_candidates_differ():
    """objects-74-00013 'put it to the right of the bowl' with two bowls seen (a white one, and a
    yellow one perception made of a bottle's top): the refusal named them ['bowl', 'bowl']; it says
    what tells them apart, their colours, so the user can answer in words."""
    import numpy as np
    from spatial_manip.scene import Scene, SceneObject, Viewpoint

    def bowl(oid, y, colour):
        return SceneObject(oid, "bowl", "bowl", [0.5, y, 0.02], [0.09, 0.08, 0.03], np.eye(3),
                           extra={"colour_names": [colour]})
    held = SceneObject("carton_held", "carton", "carton", [0.3, -0.15, 0.56], [0.05, 0.14, 0.05], np.eye(3),
                       held=True)
    scene = Scene(Viewpoint([-0.8, 0.0, 0.9], [1.0, 0.0, -0.6]), Viewpoint([0, 0, 0], [1, 0, 0]),
                  [bowl("white_bowl", -0.16, "white"), bowl("yellow_bowl", 0.23, "yellow"), held])
    r = plan(scene, "put it to the right of the bowl")
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    assert "the white bowl (white_bowl) or the yellow bowl (yellow_bowl)" in r.error["message"]
    assert plan(scene, "put it to the right of the yellow bowl").program.startswith("place(metric$Right(0.05, yellow_bowl")
