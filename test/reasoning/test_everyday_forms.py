"""The everyday forms of issue 38, one row per entry of the parser's normalisation table and per
new reading (what an object faces, what rests on what, "the last one on the right", "row N, spot
M", chat fillers, "on my left" about objects ahead, the one spelling corrector that prefers scene
words). Scenes and coordinates: `paraphrase_everyday` (the desk with a radio) and
`paraphrase_objects` (kitchen, study)."""
from __future__ import annotations

import pytest

from spatial_manip.bench import paraphrase_eval as pe
from spatial_manip.bench.paraphrase_everyday import everyday_set
from spatial_manip.reasoning.parser import correct_spelling, normalise
from spatial_manip.reasoning.planner import make_planner

PLANNER = make_planner("program")
SCENES = {**pe.SCENES, **everyday_set()[1]}


def plan(scene_key, text):
    return PLANNER.plan(SCENES[scene_key](), text)


@pytest.mark.parametrize("text,normalised", [
    ("ok so um, put it like 15 cm behind the mug I guess", "put it about d0.15 behind the mug"),
    ("umm just put it next to the banana I think", "put it nextto the banana"),
    ("so like, put it down ok", "put it down"),
    ("right, so, grab me the red book", "take the red book"),
    ("grab the book the radio is facing", "grab the book in front of the radio"),
    ("take the book that the alarm clock faces", "take the book in front of the alarm clock"),
    ("grab the book the mug is sitting on", "grab the book directly under the mug"),
    ("pick up the book the mug is on", "pick up the book directly under the mug"),
    ("grab the book with the mug on it", "grab the book directly under the mug"),
    ("grab the last one on the right", "grab the rightmost one"),
    ("top shelf, last spot on the left", "top shelf leftmost spot"),
    ("row 2, spot 4", "row 2 column 4"),
    ("take the book that's on its side", "take the book that is lying flat"),
    ("umm put it right in front of the bottle", "put it in front of the bottle"),
    ("grab the mug by the green bottle", "grab the mug nextto the green bottle"),
    ("the bowl on your right please", "the bowl rightmost please"),
    ("take a book to your left", "take a book to your left"),     # ESPIRE's sector relation, unchanged
])
def test_normalisation_table_entry(text, normalised):
    assert normalise(text).strip() == normalised


@pytest.mark.parametrize("text", [
    "put the red mug on the top shelf",             # "on" followed by a place: not what rests on what
    "move the mug on the left to the top shelf",
    "take the book standing on the right",
    "place the book in a slot to the mona lisa's right, relative to the way it faces",   # the generator's frame words
])
def test_relative_clauses_read_only_where_they_name_an_object(text):
    assert "directly under" not in normalise(text) and "in front of" not in normalise(text)


@pytest.mark.parametrize("scene,text,targets", [
    ("desk", "grab the book the radio is facing", ["bookA"]),
    ("desk", "pick up the book to the radio's left", ["bookB"]),       # the radio's own left: towards the camera
    ("desk", "grab the book the mug is sitting on", ["bookC"]),
    ("kitchen", "grab the last one on the right", ["banana"]),         # no book in the scene: any object
    ("table", "could you get the last book on the left", ["bA"]),      # books in the scene: "one" stays a book
    ("kitchen", "grab the bottle on my left", ["botG"]),
    ("kitchen", "take the mug on your right", ["mugW"]),
    ("kitchen", "pass me the cereal", ["box"]),                        # the contents of a packaging label
    ("study", "can you pick up the book that's standing up, the red one", ["r1"]),
    ("kitchen", "get the second mug from the left", ["mugW"]),          # a rank "from the left" over any noun
    ("kitchen", "pass the green bottle over", ["botG"]),
    ("desk", "take the book under the mug", ["bookC"]),       # under on a table: what it rests on, not bookB lower down
    ("kitchen", "hand me the taller one of the bottles", ["botG"]),   # by height: 25 cm against 18 cm
    ("kitchen", "take the shorter of the two bottles", ["botB"]),
])
def test_everyday_pick(scene, text, targets):
    res = plan(scene, text)
    assert res.ok and res.targets == targets, res.error


@pytest.mark.parametrize("scene,text,targets", [
    ("shelf", "row 2, spot 3", ["r2c3"]),
    ("shelf", "put it in the last free slot on the right", ["r1c3"]),
])
def test_everyday_place_in_a_slot(scene, text, targets):
    res = plan(scene, text)
    assert res.ok and res.targets == targets, res.error


@pytest.mark.parametrize("scene,text,code,word", [
    ("shelf", "put it in row 2, spot 4", "TARGET_NOT_FOUND", "Index2D(2, 4"),
    ("desk", "grab the book the lamp is facing", "TARGET_NOT_FOUND", "lamp"),
    ("desk", "take the book to the radio's right", "TARGET_NOT_FOUND", "Right"),
    ("kitchen", "ok so um grab the mug I guess", "AMBIGUOUS", "mug"),
])
def test_everyday_refusal(scene, text, code, word):
    res = plan(scene, text)
    assert not res.ok and res.error["code"] == code and word in res.error["message"], res.error


def test_a_chatty_pick_and_place_splits():
    res = PLANNER.plan(SCENES["pantry"](), "ok so put the can in row 2, spot 2")
    assert res.ok and res.targets == ["can", "r2c2"], res.error


def test_between_the_two_mugs_is_between_each_of_them():
    res = plan("kitchen_held", "place it in between the two mugs")
    assert res.ok and "Between" in res.program and "mugR" in res.program and "mugW" in res.program


def test_between_a_group_of_three_is_ambiguous_naming_them():
    res = plan("kitchen_held", "put it between the drinks")          # two bottles and a can
    assert not res.ok and res.error["code"] == "AMBIGUOUS" and "needs two of them and there are 3" in res.error["message"]


@pytest.mark.parametrize("scene,text,targets", [
    ("table", "grab the book on my right", ["bE"]),
    ("study", "grab the blue book on my left", ["b1"]),      # of the two blue books, both right of centre
    ("kitchen_held", "put the book down by the banana", None),   # the held book named: it, not a target
])
def test_the_viewers_side_is_the_extreme_of_the_candidates(scene, text, targets):
    res = plan(scene, text)
    assert res.ok, res.error
    assert targets is None or res.targets == targets


@pytest.mark.parametrize("word,scene_words,fixed", [
    ("yelow", {"yellow", "bowl"}, "yellow"),        # a scene word wins over the parser's "below"
    ("yelow", {"bowl"}, None),                       # no yellow thing: "yellow" and "below" tie, not guessed
    ("bleu", {"blue", "bottle"}, "blue"),            # four letters: corrected only into a scene word
    ("gren", {"green", "grey"}, "green"),            # clearly closest of two scene words
    ("leftmots", set(), "leftmost"),                 # a parser word, five letters or more
    ("mgu", {"mug"}, None),                          # three letters: too short to correct
])
def test_one_spelling_corrector_prefers_scene_words(word, scene_words, fixed):
    known = {"below", "yellow", "leftmost", "left"} - scene_words
    text, fixes = correct_spelling(f" take the {word} ", scene_words, known)
    assert fixes == ([(word, fixed)] if fixed else [])
    assert text.split()[-1] == (fixed or word)


def test_a_spelling_fix_is_reported():
    res = plan("kitchen", "grab the yelow bowl")
    assert res.ok and res.targets == ["bowl"] and "read 'yelow' as 'yellow'" in res.notes
