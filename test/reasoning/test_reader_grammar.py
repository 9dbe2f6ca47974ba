"""The reader's grammar (reasoning/reader.lark): every production, phrase -> clause, and how
overlapping productions are settled (priority, then longest, then leftmost).

Phrases are written as the reader sees them: normalised and reference-marked (ref0 a scene
object, possref0 its possessive, refviewer/possviewer the viewer, d0.1 = 10 cm, rank2, deg30,
clock3). A row's expected clauses are (kind, rel, args); its leftover the words no production read."""
import pytest

from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning import reader
from spatial_manip.reasoning.compound import split_instruction
from spatial_manip.reasoning.parser import parse_instruction

# production -> [(phrase, [(kind, rel, args), ...], leftover)]
ROWS = {
    "frame_viewer": [("from possviewer point of view", [("frame", "viewer", ())], []),
                     ("as refviewer see it", [("frame", "viewer", ())], []),
                     ("from where i am standing", [("frame", "viewer", ())], []),
                     ("from here", [("frame", "viewer", ())], [])],
    "frame_own": [("from its own point of view", [("frame", "own", ())], []),
                  ("relative to the way it faces", [("frame", "own", ())], [])],
    "frame_of": [("from possref0 perspective", [("frame", "of", ("possref0",))], [])],
    "held": [("the book refviewer are holding", [("noun", "book", ()), ("noise", "", ())], ["the"]),
             ("in the gripper", [("noise", "", ())], [])],
    "verb_pick": [("pick up", [("verb", "pick", ())], []), ("reach for", [("verb", "pick", ())], [])],
    "verb_place": [("put down", [("verb", "place", ())], []), ("belongs", [("verb", "place", ())], []),
                   ("slot it", [("verb", "place", ())], [])],
    "metric_side": [("about d0.1 to the right of ref0", [("metric", "dir", ("right", 0.1, "ref0"))], []),
                    ("d0.05 left side from the ref0", [("metric", "dir", ("left", 0.05, "ref0"))], [])],
    "metric_front": [("d0.2 in front of ref0", [("metric", "dir", ("front", 0.2, "ref0"))], [])],
    "metric_back": [("d0.15 away behind ref0", [("metric", "dir", ("back", 0.15, "ref0"))], [])],
    "metric_above": [("d0.1 on top of ref0", [("metric", "dir", ("above", 0.1, "ref0"))], [])],
    # "20 cm to the fan's left": the owner's own side, as side_of_owner reads it without a distance
    "metric_side_owner": [("d0.2 to possref0 left", [("metric", "dir", ("left", 0.2, "possref0"))], []),
                          ("about d0.1 on possviewer right side", [("metric", "dir", ("right", 0.1, "possviewer"))],
                           [])],
    "dist_range": [("d0.8 to d0.9 away from refviewer", [("dist", "Range", (0.8, 0.9, "refviewer"))], []),
                   # the cascade read this only when "away" followed (its pattern wanted a second space)
                   ("between d0.8 and d0.9", [("dist", "Range", (0.8, 0.9, None))], [])],
    "dist_less": [("within d1.5 of refviewer", [("dist", "LessThan", (1.5, "refviewer"))], []),
                  ("no more than d0.3", [("dist", "LessThan", (0.3, None))], [])],
    "dist_more": [("more than d1 away from refviewer", [("dist", "MoreThan", (1.0, "refviewer"))], [])],
    "dist_equal": [("about d1.1 away from refviewer", [("dist", "EqualTo", (1.1, "refviewer"))], []),
                   ("d0.5 away", [("dist", "EqualTo", (0.5, None))], [])],
    "attr_height": [("around d0.2 high", [("attr", "Height", (0.2,))], []),
                    ("with a height of about d0.25", [("attr", "Height", (0.25,))], [])],
    "attr_width": [("d0.45 wide", [("attr", "Width", (0.45,))], []),
                   ("that is a width of d0.3", [("attr", "Width", (0.3,))], [])],
    "named_2d": [("the top left slot", [("attr", "Named2D", ("top", "left"))], [])],
    "named_row": [("the bottom shelf", [("attr", "NamedRow", ("bottom",))], []),
                  ("the middle row's", [("attr", "NamedRow", ("middle",))], [])],
    "named_row_ahead": [("the top empty slot", [("attr", "NamedRow", ("top",)), ("attr", "Empty", ()),
                                                ("noun", "slot", ())], [])],
    "named_column": [("the right column", [("attr", "NamedColumn", ("right",))], [])],
    "named_column_slot": [("the middle slot", [("attr", "NamedColumn", ("middle",))], [])],
    "index_row": [("row 2", [("attr", "Index1D", (2,))], []), ("rank3 shelf", [("attr", "Index1D", (3,))], [])],
    "index_2d": [("row 2 column 3", [("attr", "Index2D", (2, 3))], []),
                 ("rank1 row and rank2 column", [("attr", "Index2D", (1, 2))], [])],
    "index_2d_column_first": [("column 4 and row 2", [("attr", "Index2D", (2, 4))], [])],
    "index_column": [("column 3", [("attr", "Column", (3,))], []), ("rank2 column", [("attr", "Column", (2,))], [])],
    "emptiest": [("least occupied", [("super", "Emptiest", ())], [])],
    "non_empty": [("partly occupied", [("attr", "NonEmpty", ())], []), ("not empty", [("attr", "NonEmpty", ())], [])],
    "empty": [("vacant", [("attr", "Empty", ())], [])],
    "size_extreme": [("largest", [("super", "Size", (None, "largest"))], []),
                     ("rank2 smallest", [("super", "Size", (2, "smallest"))], [])],
    "small": [("tiny", [("attr", "Small", ())], [])],
    "medium": [("medium sized", [("attr", "Medium", ())], [])],
    "large": [("bigger", [("attr", "Large", ())], [])],
    "tilt_degree": [("at a tilt of about deg45", [("pose", "TiltDegree", (45.0,))], []),
                    ("tilted by deg30", [("pose", "TiltDegree", (30.0,))], []),
                    ("at a deg20 angle", [("pose", "TiltDegree", (20.0,))], [])],
    "flat": [("that is lying flat", [("pose", "Flat", ())], []), ("horizontal", [("pose", "Flat", ())], [])],
    "vertical": [("standing upright", [("pose", "Vertical", ())], []), ("on its end", [("pose", "Vertical", ())], [])],
    "tilted": [("which is at an angle", [("pose", "Tilted", ())], []), ("leaning", [("pose", "Tilted", ())], [])],
    "direct": [("immediately to the left of ref0", [("dir", "Direct", ("left", "ref0"))], [])],
    "direct_on_side": [("dnextto ref0 on its right", [("dir", "Direct", ("right", "ref0"))], []),
                       ("dnextto ref0 on possviewer left", [("dir", "Direct", ("left", "ref0"))], [])],
    "direct_vertical": [("directly above ref0", [("dir", "DirectV", ("above", "ref0"))], [])],
    "part": [("on the table's left side", [("part", "left", (None,))], []),
             ("at the back of the desk", [("part", "back", (None,))], []),
             ("on the left", [("part", "left", (None,))], []),
             ("upper half", [("part", "upper", (None,))], [])],
    "side_of": [("to the left of ref0", [("dir", "Side", ("left", "ref0"))], []),
                ("on the right hand side of the ref0", [("dir", "Side", ("right", "ref0"))], [])],
    "side_of_owner": [("to possref0 left", [("dir", "Side", ("left", "possref0"))], []),
                      ("on possviewer right hand side", [("dir", "Side", ("right", "possviewer"))], [])],
    "front": [("in front of ref0", [("dir", "Side", ("front", "ref0"))], []),
              ("in front of possviewer", [("dir", "Side", ("front", "possviewer"))], [])],
    "behind": [("at the rear of ref0", [("dir", "Side", ("back", "ref0"))], [])],
    "above": [("on ref0", [("dir", "Vert", ("above", "ref0"))], [])],
    "below": [("lower than ref0", [("dir", "Vert", ("below", "ref0"))], [])],
    "under": [("underneath the ref0", [("dir", "Vert", ("under", "ref0"))], [])],
    "clock_of_owner": [("at possref0 clock3", [("dir", "Clock", (3, "possref0"))], [])],
    "clock": [("at the clock3 direction relative to ref0", [("dir", "Clock", (3, "ref0"))], []),
              ("at the clock3 position of ref0", [("dir", "Clock", (3, "ref0"))], [])],
    "clock_of_viewer": [("at clock6", [("dir", "Clock", (6, "refviewer"))], [])],
    "between": [("in between ref0 and the ref1", [("between", "Between", ("ref0", "ref1"))], [])],
    "into": [("inside of ref0", [("into", "In", ("ref0",))], [])],
    "leftmost": [("rank2 leftmost", [("super", "LeftMost", (2,))], []),
                 ("furthest to the left", [("super", "LeftMost", (None,))], []),
                 ("rank2 book from the left", [("super", "LeftMost", (2,))], []),
                 ("rank2 empty slot", [("super", "LeftMost", (2,)), ("attr", "Empty", ()), ("noun", "slot", ())], [])],
    "rightmost": [("most right", [("super", "RightMost", (None,))], []),
                  ("rank3 from the right", [("super", "RightMost", (3,))], [])],
    "next_to_book": [("nextto the book", [("next", "NextTo", (reader.ANY_BOOK,))], [])],
    "next_to": [("dnextto ref0", [("next", "NextTo", ("ref0",))], [])],
    "closest_to_book": [("closest to a book", [("super", "Closest", (None, reader.ANY_BOOK))], [])],
    "closest": [("rank2 closest to refviewer", [("super", "Closest", (2, "refviewer"))], []),
                ("nearest", [("super", "Closest", (None, None))], [])],
    "farthest": [("most distant one away from ref0", [("super", "Farthest", (None, "ref0"))], [])],
    "where": [("on the table", [("where", "table", ())], []), ("from counter", [("where", "counter", ())], []),
              ("on the bench", [("where", "bench", ())], [])],
    "noun_book": [("objects", [("noun", "book", ())], [])],
    "noun_slot": [("spots", [("noun", "slot", ())], [])],
}

# Overlapping productions: the higher priority, then the longer, then the one further left.
OVERLAPS = [
    # a clock hour outranks the verb "position" (the cascade read it as a place verb)
    ("take a book at the clock3 position", [("verb", "pick", ()), ("noun", "book", ()),
                                            ("dir", "Clock", (3, "refviewer"))], ["a"]),
    # and "hand" is a verb again outside "hand side"
    ("hand me the book", [("verb", "pick", ()), ("noun", "book", ())], ["me", "the"]),
    # "left of X" outranks the bare part "the left"
    ("pick the book to the left of ref0", [("verb", "pick", ()), ("noun", "book", ()),
                                           ("dir", "Side", ("left", "ref0"))], ["the"]),
    # a named row outranks the bare part "on the top"
    ("put it on the top shelf", [("verb", "place", ()), ("attr", "NamedRow", ("top",))], ["it", "on"]),
    # the longest of one priority: "most empty" is the emptiest, not "empty"
    ("the most empty slot", [("super", "Emptiest", ()), ("noun", "slot", ())], ["the"]),
    # a metric placement outranks a distance and a direction
    ("d0.1 from ref0 and d0.1 to the left of ref1", [("dist", "EqualTo", (0.1, "ref0")),
                                                     ("metric", "dir", ("left", 0.1, "ref1"))], ["and"]),
    # "slot" is a place verb only before "it"/"this": "slot it into the top row", "the free slot"
    ("slot it into the free slot", [("verb", "place", ()), ("attr", "Empty", ()), ("noun", "slot", ())],
     ["into", "the"]),
    # a word no production reads is left over
    ("take the teal book", [("verb", "pick", ()), ("noun", "book", ())], ["the", "teal"]),
]


def read(phrase):
    clauses, leftover = reader.read_clauses(f" {phrase} ")
    return [(c.kind, c.rel, tuple(c.args)) for c in clauses], leftover


@pytest.mark.parametrize("production,phrase,expected,leftover",
                         [(p, *row) for p, rows in ROWS.items() for row in rows])
def test_each_production_reads_its_phrase(production, phrase, expected, leftover):
    assert read(phrase) == (expected, leftover)


def test_every_production_of_the_grammar_has_a_row():
    assert set(ROWS) == reader.productions()


@pytest.mark.parametrize("phrase,expected,leftover", OVERLAPS)
def test_overlapping_productions(phrase, expected, leftover):
    assert read(phrase) == (expected, leftover)


def test_clause_positions_are_character_offsets_in_the_text():
    clauses, _ = reader.read_clauses(" take the rank2 leftmost book ")
    assert [(c.rel, c.pos) for c in clauses] == [("pick", 1), ("LeftMost", 10), ("book", 25)]


def test_keywords_are_the_grammars_words():
    words = reader.keywords()
    assert {"leftmost", "between", "viewer's", "emptiest"} <= words
    assert "ref0" not in words and "d0.1" not in words
    assert reader.words_of("verb") >= {"pick", "up", "put", "down", "belongs"}
    assert "left" not in reader.words_of("verb")


def test_compound_splits_at_the_grammars_place_verbs():
    """`compound` splits "take X and <place verb> it ..." at every place verb of the grammar (one list)."""
    assert {"put", "place", "slot", "stand", "stick"} <= reader.first_words("verb_place")
    assert "take" not in reader.first_words("verb_place") and "up" not in reader.first_words("verb_pick")
    for verb in reader.first_words("verb_place") - {"goes", "go", "belongs"}:
        assert split_instruction(f"take the mug and {verb} it on the top shelf") == \
            ("take the mug", f"{verb} it on the top shelf"), verb


def test_a_hand_side_is_a_side_and_hand_still_a_verb():
    """The cascade read "hand" in "the right-hand side of X" as the verb and refused the rest."""
    scene = ex.table_scene()
    frame = next(o.id for o in scene.objects if o.label == "picture frame")
    prog = str(parse_instruction(scene, "take the book on the right-hand side of the picture frame"))
    assert "filterOri$Right" in prog and frame in prog
    assert str(parse_instruction(scene, "hand me the leftmost book")).startswith("pick(")


def test_a_clock_position_is_no_place_verb():
    """The cascade read "position" as the place verb: a pick and a place, refused as AMBIGUOUS."""
    scene = ex.table_scene()
    jar = next(o.id for o in scene.objects if o.label == "ceramic jar")
    prog = str(parse_instruction(scene, "take the book at the 3 o'clock position of the jar"))
    assert prog.startswith("pick(") and "ClockPosition(3" in prog and jar in prog
