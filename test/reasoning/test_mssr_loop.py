"""MSSR's dual-agent loop (seeds/004 section 3) through the openai backend and a local
recorded-reply server: perception gathers facts, reasoning prunes to a minimal sufficient set and
requests what is missing, the decision sees the pruned set alone; the trace records each pruning."""
import json

from canned_chat_server import CannedChatServer, call, say

from spatial_manip.reasoning.examples import table_scene
from spatial_manip.reasoning.mssr_loop import AgentConfig, FactSet, parse_answer, parse_curation
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.trace import Trace

INSTR = "take the book closest to the jar"
PROGRAM = "pick(unique(filterDist$Closest(filterBook(TABLE), jar)))"


def curate(keep, sufficient, request=""):
    return say(json.dumps({"plan": "compare book-jar distances", "keep": keep, "sufficient": sufficient,
                           "request": request}))


def planner(srv, **agent):
    return make_planner("openai", base_url=srv.url, model="m", timeout_s=2.0, max_retries=0,
                        agent={"mode": "mssr", **agent})


def two_round_episode():
    return [
        # round 1, perception: a broad sweep (f1..f4), then DONE
        call("find_obj", {"description": "book"}), call("find_obj", {"description": "jar"}),
        call("get_object_3d_position", {"object_id": "frame"}),
        call("object_orientation", {"object_id": "b_med_up"}),
        say("DONE"),
        # round 1, reasoning: keep the two look-ups, drop the rest, ask for distances
        curate(["f1", "f2"], False, "the distance from each book to the jar"),
        # round 2, perception
        call("distance", {"object_a": "b_med_up", "object_b": "jar"}),
        call("distance", {"object_a": "b_large_tilt", "object_b": "jar"}),
        say("DONE"),
        # round 2, reasoning: sufficient
        curate(["f1", "f2", "f5", "f6"], True),
        # decision from the pruned set alone
        say(f"PROGRAM: {PROGRAM}"),
    ]


def test_two_rounds_prune_request_and_decide_from_the_pruned_set(tmp_path):
    trace = Trace(tmp_path, {"instruction": INSTR})
    scene = table_scene()
    with CannedChatServer(two_round_episode()) as srv:
        res = planner(srv).plan(scene, INSTR, trace=trace)
    assert res.ok, res.error
    assert res.targets == make_planner("program").plan(scene, INSTR).targets == ["b_med_up"]
    assert res.program == PROGRAM
    # the trace holds the set before and after each pruning
    ev = trace.data["events"]
    sets = [e for e in ev if e["kind"] == "minimal_set"]
    assert [(s["before"], s["after"]) for s in sets] == [(["f1", "f2", "f3", "f4"], ["f1", "f2"]),
                                                         (["f1", "f2", "f5", "f6"], ["f1", "f2", "f5", "f6"])]
    assert sets[0]["request"] == "the distance from each book to the jar"
    facts = [e for e in ev if e["kind"] == "facts"]
    assert [len(f["facts"]) for f in facts] == [4, 4]
    # perception round 2 got the request and only the pruned facts
    pa2 = srv.requests[6]["messages"][1]
    text = pa2["content"] if isinstance(pa2["content"], str) else pa2["content"][0]["text"]
    assert "the distance from each book to the jar" in text and "f1:" in text and "f3:" not in text
    # reasoning turns offer no tools; the decision sees a fresh context with the minimal set alone
    for i in (5, 9, 10):
        assert "tools" not in srv.requests[i]
    decision = srv.requests[10]["messages"]
    assert len(decision) == 2 and "f5:" in decision[1]["content"] and "f3:" not in decision[1]["content"]
    assert '"distance_m"' in decision[1]["content"]


def test_sufficient_but_empty_set_is_a_premature_stop_and_asks_again():
    replies = [say("DONE"), curate([], True),
               call("find_obj", {"description": "book"}), call("find_obj", {"description": "jar"}), say("DONE"),
               curate(["f1", "f2"], True), say(f"PROGRAM: {PROGRAM}")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok and res.targets == ["b_med_up"]
    sets = [e for e in res.trace if e["event"] == "minimal_set"]
    assert sets[0]["after"] == [] and len(sets) == 2


def test_decision_naming_a_pruned_away_object_gets_a_corrective_turn():
    replies = [call("find_obj", {"description": "jar"}), call("find_obj", {"description": "book"}), say("DONE"),
               curate(["f1"], True),
               say(f"PROGRAM: {PROGRAM}"),            # filterBook needs no id, jar is in f1: accepted
               ]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok
    replies = [call("find_obj", {"description": "jar"}), call("find_obj", {"description": "book"}), say("DONE"),
               curate(["f1"], True),
               say('TARGETS: ["b_med_up"]'),          # b_med_up was only in the pruned-away f2
               say(f"PROGRAM: {PROGRAM}")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok and res.program == PROGRAM
    assert "no fact mentions them" in srv.requests[-1]["messages"][-1]["content"]


def test_iterations_are_bounded():
    replies = []
    for _ in range(2):
        replies += [call("find_obj", {"description": "book"}) if not replies else call("find_obj", {"description": "jar"}),
                    say("DONE"), curate(["f1"], False, "more")]
    with CannedChatServer(replies) as srv:
        res = planner(srv, max_iterations=2).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "2 perception/reasoning rounds" in res.error["message"]


def test_unknown_fact_ids_are_ignored_and_recorded():
    replies = [call("find_obj", {"description": "jar"}), say("DONE"), curate(["f1", "f99"], True),
               say(f"PROGRAM: {PROGRAM}")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.ok
    s = next(e for e in res.trace if e["event"] == "minimal_set")
    assert s["after"] == ["f1"] and s["unknown"] == ["f99"]


def test_malformed_curation_gets_a_corrective_turn_then_fails():
    replies = [call("find_obj", {"description": "jar"}), say("DONE"), say("keep f1 please"), say("still no json")]
    with CannedChatServer(replies) as srv:
        res = planner(srv).plan(table_scene(), INSTR)
    assert res.error["code"] == "NOT_UNDERSTOOD" and "curation" in res.error["message"]


def test_parsers():
    assert parse_answer("PROGRAM: " + PROGRAM).program is not None
    assert parse_answer("The answer:\n```\n" + PROGRAM + "\n```").program is not None
    assert parse_answer('TARGETS: ["a", "b"]').targets == ["a", "b"]
    assert parse_answer("TARGETS: a, b").targets == ["a", "b"]
    assert parse_answer('{"targets": ["a"]}').targets == ["a"]
    cur = parse_curation('```json\n{"keep": ["f2"], "sufficient": true}\n```')
    assert cur["keep"] == ["f2"] and cur["sufficient"] is True
    assert FactSet().text() == "(no facts yet)"
    assert AgentConfig().mode == "mssr"
