"""General reader rules added for the misses of the held-out sets of session 26 (issue 38:
everyday4, its after set, everyday5) and the session's clean-ups, one test each, on the sets'
hand-built scenes (paraphrase_everyday4, paraphrase_everyday5)."""
from __future__ import annotations

import pytest

from spatial_manip.bench.paraphrase_everyday4 import EVERYDAY4_SCENES
from spatial_manip.bench.paraphrase_everyday5 import EVERYDAY5_SCENES
from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.compound import split_instruction
from spatial_manip.reasoning.lexicon import scene_lexicon
from spatial_manip.reasoning.parser import SAME_AS, correct_spelling, normalise
from spatial_manip.reasoning.planner import make_planner

PLANNER = make_planner("program")


def plan(scene_key, text):
    return PLANNER.plan(EVERYDAY4_SCENES[scene_key](), text)


@pytest.mark.parametrize("scene,phrase,ids", [
    ("bench", "something to cut with", {"scissors"}),
    ("breakfast", "something to eat with", {"spoon"}),
    ("breakfast", "dish", {"plate", "bowl"}),          # a dish holds food: the cup is not one
])
def test_taxonomy_groups_name_their_members(scene, phrase, ids):
    assert set(scene_lexicon(EVERYDAY4_SCENES[scene]())[phrase].ids) == ids


@pytest.mark.parametrize("text,normalised", [
    ("so yeah, could you maybe grab the blue bowl for me", "grab the blue bowl"),
    ("yep grab the navy blue mug thx", "grab the dark blue mug"),
    ("that's the one, cheers", "that is the one"),
])
def test_chat_words_are_plain_words(text, normalised):
    assert normalise(text).strip() == normalised


def test_every_same_as_entry_reads_as_its_plain_words():
    for said, plain in SAME_AS.items():
        assert normalise(f"grab {said} mug") == normalise(f"grab {plain} mug"), said
    assert normalise("grab thx mug").split() == ["grab", "mug"]


@pytest.mark.parametrize("scene,text,ref", [
    ("bench_held", "put it in the big box", "boxL"),            # a size word picks the reference after "in"
    ("bench_held", "put it on the small box", "boxS"),
])
def test_a_size_word_picks_the_reference_after_in_and_on(scene, text, ref):
    res = plan(scene, text)
    assert res.ok and ref in res.program, (res.program, res.error)


def test_the_big_one_stands_for_the_group_named_before_it():
    res = plan("bench", "take the box in front of the big one")
    assert res.ok and res.targets == ["boxS"] and "boxL" in res.program, (res.program, res.error)


def test_one_with_no_size_word_telling_apart_is_refused_not_guessed():
    res = plan("bench", "grab the mug next to the small one")         # the two mugs are one size
    assert not res.ok


@pytest.mark.parametrize("text", ["take the ceramic vase", "take the book left of the ceramic vase"])
def test_a_packaging_content_before_another_noun_names_that_noun(text):
    """"ceramic" alone is the ceramic jar ("the cereal" is the cereal box); "the ceramic vase" names
    a vase, which the scene does not hold: refused saying so, not NOT_UNDERSTOOD 'vase'."""
    res = PLANNER.plan(ex.table_scene(), text)
    assert not res.ok and res.error["code"] == "TARGET_NOT_FOUND" and "ceramic vase" in res.error["message"]
    assert PLANNER.plan(ex.table_scene(), "take the ceramic").targets == ["jar"]


@pytest.mark.parametrize("text", ["take the can", "put it in front of the can", "can you take the can"])
def test_a_can_the_scene_does_not_hold_is_refused_as_not_there(text):
    """"can" is a container as well as a modal: a can the scene lacks is refused TARGET_NOT_FOUND
    'can' (objects-75-00010 read "in front of the can" as NOT_UNDERSTOOD 'front', the can dropped as
    a filler word); "can you" before a verb stays a politeness the normaliser removes."""
    res = PLANNER.plan(ex.table_scene(), text)
    assert not res.ok and res.error["code"] == "TARGET_NOT_FOUND" and "'can'" in res.error["message"], res.error


def test_slot_it_is_a_place_verb_and_splits_a_compound():
    assert split_instruction("grab the soup can and slot it into row 2 column 1") == \
        ("grab the soup can", "slot it into row 2 column 1")
    res = plan("pantry4_held", "slot it into row 2 column 1")
    assert res.ok and res.targets == ["r2c1"], res.error


@pytest.mark.parametrize("text,normalised", [
    ("pass the sky blue mug", "pass the light blue mug"),        # a shade word before a colour
    ("grab the deep red book", "grab the dark red book"),
    ("grab the mug with red on it", "grab the red mug"),         # a colour it carries, as "the red mug" reads it
    ("pick up whatever's beside the bowl", "pick up any is nextto the bowl"),
])
def test_shades_and_carried_colours_read_as_colour_words(text, normalised):
    assert normalise(text).strip() == normalised


@pytest.mark.parametrize("text,normalised", [
    ("grab the fruit that's yellow", "grab the yellow fruit"),            # a colour said after the noun
    ("grab the mug that is red and white", "grab the red and white mug"),
    ("grab the mug with red n white on it", "grab the red and white mug"),
    ("take the book that is lying flat", "take the book that is lying flat"),    # no colour: unchanged
    ("put it in the middle of the top shelf", "put it in the middle slot on the top shelf"),
])
def test_colours_after_the_noun_and_the_middle_of_a_shelf(text, normalised):
    assert normalise(text).strip() == normalised


@pytest.mark.parametrize("text,targets", [
    ("take the jar on the top shelf", ["jar"]),
    ("take the can on the bottom shelf", ["can"]),            # of the soup can (top) and the can (bottom)
    ("grab the thing in row 2 column 2", ["tea"]),
])
def test_objects_on_a_shelf_are_filtered_by_the_slot_they_stand_in(text, targets):
    res = plan("pantry4", text)
    assert res.ok and res.targets == targets, res.error


def test_a_packaging_content_is_a_kind_with_colours():
    """"the orange juice": the juice carton, orange ("juice" is what the carton holds)."""
    assert set(scene_lexicon(EVERYDAY4_SCENES["breakfast"]())["orange juice"].ids) == {"carton"}


def test_a_place_beside_a_shelf_object_that_fits_two_slots_is_ambiguous():
    """"to the left of the tea box" promises one place; the slots left of it on both shelves fit."""
    res = plan("pantry4_held", "stick it to the left of the tea box")
    assert not res.ok and res.error["code"] == "AMBIGUOUS" and "r1c1" in res.error["message"], res.error
    assert plan("pantry4_held", "put it in a slot to the left of the tea box").targets == ["r1c1", "r2c1"]


@pytest.mark.parametrize("text,targets", [
    ("hand me my phone", ["phone"]),                     # whose it is, not where
    ("take my blue mug", ["mugB"]),
    ("grab the mug on my left", ["mugB"]),               # "my left" is still the viewer's side
])
def test_a_speakers_possessive_before_an_object_says_whose_it_is(text, targets):
    res = PLANNER.plan(EVERYDAY5_SCENES["office"](), text)
    assert res.ok and res.targets == targets, res.error


def test_a_slip_one_edit_from_a_word_and_its_plural_is_that_word():
    fixed, fixes = correct_spelling(" grab the tomatoe ", {"tomato", "tomatos", "tomatoes"}, {"grab", "the"})
    assert fixed == " grab the tomato " and fixes == [("tomatoe", "tomato")]
    # two different words one edit away stay as written
    assert correct_spelling(" grab the bowk ", {"bowl", "bows", "bowls"}, {"grab", "the"})[1] == []
