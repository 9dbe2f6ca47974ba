"""Shades and two-coloured objects (issue 38): "dark blue" / "light blue" tell two blue mugs apart
by the lightness of each one's measured colour (`lexicon.shaded`, CIELAB L* of extra["rgb"]);
"navy" is dark blue; "red and white" names the object that has both colours."""
from __future__ import annotations

import pytest

from spatial_manip.bench.paraphrase_everyday3 import EVERYDAY3_SCENES
from spatial_manip.reasoning import lexicon
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.reasoning.program import execute
from spatial_manip.scene import SceneObject

PLANNER = make_planner("program")


def _mug(id_, rgb=None):
    return SceneObject(id_, "mug", "reference", [0.6, 0.0, 0.8], [0.09, 0.09, 0.1],
                       extra={"colour_names": ["blue"], **({"rgb": list(rgb)} if rgb else {})})


def test_two_shades_of_one_colour_are_told_apart_by_lightness():
    navy, sky = _mug("navy", (25, 35, 110)), _mug("sky", (140, 180, 235))
    assert lexicon.shaded("dark", [navy, sky]) == [navy]
    assert lexicon.shaded("light", [navy, sky]) == [sky]


def test_the_split_follows_the_pair_not_fixed_thresholds():
    """Under a dim light both read darker; the lighter one is still the light one."""
    dim_navy, dim_sky = _mug("navy", (10, 14, 50)), _mug("sky", (70, 90, 120))
    assert lexicon.shaded("light", [dim_navy, dim_sky]) == [dim_sky]


def test_one_object_alone_is_judged_by_itself_and_an_unmeasured_one_may_be_either():
    assert lexicon.shaded("light", [_mug("navy", (25, 35, 110))]) == []
    unmeasured, navy = _mug("plain"), _mug("navy", (25, 35, 110))
    assert lexicon.shaded("dark", [unmeasured, navy]) == [unmeasured, navy]


@pytest.mark.parametrize("text,target", [
    ("grab the dark blue mug", "mugD"), ("take the navy mug", "mugD"), ("pass me the lite blue mug", "mugL"),
    ("pick up the light green thing", "apple"), ("grab the red and white mug", "mugRW"),
    ("can you grab the red n white mug", "mugRW"), ("grab the white and red mug", "mugRW"),
])
def test_shade_and_colour_pair_words_pick_the_one_object(text, target):
    res = PLANNER.plan(EVERYDAY3_SCENES["counter"](), text)
    assert res.ok and res.targets == [target], (res.program, res.error)


def test_a_shade_nothing_has_is_refused_and_no_shade_stays_ambiguous():
    assert PLANNER.plan(EVERYDAY3_SCENES["counter"](), "the blue mug please").error["code"] == "AMBIGUOUS"
    res = PLANNER.plan(EVERYDAY3_SCENES["desk3"](), "take the dark blue pen")
    assert not res.ok and res.error["code"] in ("TARGET_NOT_FOUND", "NOT_UNDERSTOOD"), res.error


def test_the_shade_read_is_traced():
    res = execute("pick(unique(filterColour$Dark(blue, filterBook(TABLE))))", EVERYDAY3_SCENES["desk3"]())
    assert res.targets == ["bookN"]
    shade = next(s for s in res.trace if s.get("shade") == "dark")
    assert shade["ids"] == ["bookN"] and shade["lightness"]["bookN"] < shade["lightness"]["bookLB"]


def test_a_colour_word_names_the_main_colour_before_a_second_one():
    """objects-13-00057 / objects-69-00057 (b3ec4d1): 'the white mug' of a white mug and one whose
    second colour is white was AMBIGUOUS; the generator (main colour) and the reader now agree."""
    white = SceneObject("w", "mug", "reference", [0.6, 0.2, 0.8], [0.09, 0.09, 0.1], extra={"colour_names": ["white"]})
    two = SceneObject("rw", "mug", "reference", [0.6, -0.2, 0.8], [0.09, 0.09, 0.1],
                      extra={"colour_names": ["red", "white"]})
    assert lexicon.coloured("white", [white, two])[0] == [white]
    assert lexicon.coloured("white", [two])[0] == [two]          # a second colour still names it alone
    assert lexicon.coloured("red", [white, two])[0] == [two]


def test_a_colour_read_as_its_lighting_neighbours_names_the_one_clearly_nearest_it_or_stays_ambiguous():
    """'the gray bowl' (objects 65) of a white bowl and a black one: gray reads as either lighting
    neighbour, and both bowls were named alike. The one whose measured colour lies clearly nearer
    gray is it; when neither does, both stay and 'the' is refused as AMBIGUOUS."""
    def bowl(id_, names, rgb):
        return SceneObject(id_, "bowl", "bowl", [0.6, 0.2, 0.05], [0.1, 0.1, 0.05],
                           extra={"colour_names": names, "rgb": rgb})
    white, black = bowl("w", ["white"], [205.0, 205.0, 208.0]), bowl("b", ["black"], [18.0, 18.0, 20.0])
    assert lexicon.coloured("gray", [white, black]) == ([white], ("white", "black"))
    dark_gray = bowl("b", ["black"], [45.0, 45.0, 47.0])
    assert lexicon.coloured("gray", [white, dark_gray])[0] == [white, dark_gray]
    unmeasured = SceneObject("u", "bowl", "bowl", [0.6, -0.2, 0.05], [0.1, 0.1, 0.05], extra={"colour_names": ["black"]})
    assert lexicon.coloured("gray", [white, unmeasured])[0] == [white, unmeasured]


def test_brown_reads_as_yellow_under_a_brighter_light():
    """objects-80-00006 (realistic): 'the brown carton by the bowl' of the orange juice carton
    (brown in the generator's light, 129/103/47) and the yellow milk carton: under the realistic
    profile's light most of the juice carton's pixels read above brown's lightness and it was named
    yellow (130/109/25), as the milk carton (145/121/13): nothing brown, TARGET_NOT_FOUND. Brown is
    a dark yellow or orange, so a yellow one is its lighting neighbour; neither lies clearly nearer
    brown here, so the rest of the description must choose. An object read brown is still the only
    brown one."""
    def carton(id_, names, rgb):
        return SceneObject(id_, "carton", "carton", [0.4, 0.3, 0.03], [0.14, 0.05, 0.05],
                           extra={"colour_names": names, "rgb": rgb})
    juice, milk = carton("oj", ["yellow"], [130.0, 109.0, 25.0]), carton("milk", ["yellow"], [145.0, 121.0, 13.0])
    assert lexicon.coloured("brown", [juice, milk]) == ([juice, milk], ("orange", "yellow"))
    brown = carton("oj", ["brown"], [129.0, 103.0, 47.0])
    assert lexicon.coloured("brown", [brown, milk]) == ([brown], ())
    assert lexicon.coloured("yellow", [brown])[0] == [brown]      # a yellow under a dim light reads brown
