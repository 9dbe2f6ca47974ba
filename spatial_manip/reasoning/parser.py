"""English instruction -> spatial program (the deterministic `program` backend).

The parser reads a normalised instruction with a grammar (`reader.lark`, read by `reader.py`).
Normalisation first reads everyday English into plain words (contractions, chat spellings, the
polite frames around a request, chat fillers, and relative clauses such as "the book the radio is
facing": `SAME_AS`, `_EVERYDAY`), refuses questions, and corrects spelling with one corrector that prefers
the scene's words (`correct_spelling`: "yelow" is "yellow" when something is yellow; reported:
"read 'leftmots' as 'leftmost'"). It then turns number words, ordinals, units, degrees and clock
hours into tokens (`d0.2` = 0.2 m, `rank2`, `deg30`, `clock6`) and the names of scene objects
into reference tokens (`ref0`, `refviewer`, `refrobot`, possessives `possref0`...). Each
production of the grammar reads the words it explains and yields a clause (where productions
overlap, the grammar's declared priority, then the longest, wins); whatever is left must be
filler, otherwise the parser raises NotUnderstoodError naming the words it could not interpret
(it never guesses). Clauses are then checked for contradictions and composed into a program (see
`program.py`), the frame of every relation chosen as ESPIRE does
(`relations.default_frame`), unless the instruction names one; a reference whose front was only
assumed follows the `unnamed_frame` policy, and every choice is noted (`frame_notes`). A place with
no pose word keeps the held object's pose class (`pose=keep`); it never adds one. Shelf words
("top shelf", "right column", "top-left slot") become row/column numbers through
`relations.shelf_row` / `shelf_column`. A pick and a place in one sentence is `compound.py`'s.

Words that contradict each other ("the leftmost rightmost book", "left of the mug ... right of the
mug", "the largest smallest book") are AMBIGUOUS naming both. A pick that says "the X" promises one
object: the parser records the target's determiner (`Parsed.reference`), and once the program has
run, `check_target_reference` refuses "the X" with several X and no superlative or rank choosing
among them as AMBIGUOUS naming the candidates ("a X", "any X", "one of the Xs" may take any); a
superlative that ties does not choose. A place that promises one slot ("the spot ...", "next to
X", "between X and Y") and fits several is AMBIGUOUS too (`slot_reference`). "Next to / beside / by
X" is one relation word ("nextto"), read by `relations.next_to` for objects and slots alike.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache

from spatial_manip.errors import AmbiguousError, InvalidGoalError, NotUnderstoodError, TargetNotFoundError
from spatial_manip.geometry import relations as rel
from spatial_manip.program_text import Node, Sym, node
from spatial_manip.reasoning.lexicon import COLOUR_WORDS, packaging_content, packaging_of, scene_lexicon, spoken_label
from spatial_manip.reasoning.taxonomy import DRINK_VESSELS, DRINKS, GROUPS
from spatial_manip.reasoning.program import front_assumed, relative_size
from spatial_manip.reasoning.reader import ANY_BOOK, Clause, keywords, read_clauses, words_of
from spatial_manip.scene import Scene, SceneObject

# --- normalisation ---------------------------------------------------------------------------
_UNITS = {"m": 1.0, "meter": 1.0, "meters": 1.0, "metre": 1.0, "metres": 1.0,
          "cm": 0.01, "centimeter": 0.01, "centimeters": 0.01, "centimetre": 0.01, "centimetres": 0.01,
          "mm": 0.001, "millimeter": 0.001, "millimeters": 0.001, "millimetre": 0.001, "millimetres": 0.001,
          "inch": 0.0254, "inches": 0.0254, "foot": 0.3048, "feet": 0.3048, "ft": 0.3048}
_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
         "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_ORD = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
        "ninth": 9, "tenth": 10}
_UNIT_RE = "|".join(sorted(_UNITS, key=len, reverse=True))
_NUM = r"\d+(?:\.\d+)?"


def _number_words(t: str) -> str:
    t = re.sub(r"\b(one|two|three|four|five|six|seven|eight|nine|\d+) and a half\b",
               lambda m: str(_ONES.get(m.group(1), None) or float(m.group(1))) + ".5", t)
    t = re.sub(r"\bhalf an? (" + _UNIT_RE + r")\b", r"0.5 \1", t)
    t = re.sub(r"\ban? (meter|metre|foot|inch)\b", r"1 \1", t)

    def tens(m):
        return str(_TENS[m.group(1)] + (_ONES[m.group(2)] if m.group(2) else 0))
    t = re.sub(r"\b(" + "|".join(_TENS) + r")(?:[ -](one|two|three|four|five|six|seven|eight|nine))?\b", tens, t)
    t = re.sub(r"\b(\d+) hundred\b", lambda m: str(int(m.group(1)) * 100), t)
    t = re.sub(r"\bhundred\b", "100", t)
    # "one" is a number only where a number must stand ("one meter", "row one"), not in "one of"
    t = re.sub(r"\bone(?= (?:" + _UNIT_RE + r"|degrees?|deg|oclock)\b)|(?<=row |umn )one\b", "1", t)
    t = re.sub(r"\b(" + "|".join(k for k in _ONES if k != "one") + r")\b", lambda m: str(_ONES[m.group(1)]), t)
    t = re.sub(r"\b(" + "|".join(_ORD) + r")\b", lambda m: f"rank{_ORD[m.group(1)]}", t)
    t = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"rank\1", t)
    return t


# Everyday English -> the parser's plain words, before anything else (issue 22): contractions,
# chat spellings, and the polite frames around a request ("could you ... for me, thanks"), which
# carry no spatial meaning but contain "you"/"me" (otherwise read as the viewer).
_NOT_ARTICLE = r"(?!(?:the|a|an|that|which|is|are|it|its|they|their|them|way)\b)"   # "the way it faces" names nothing
_NAME = rf"((?:{_NOT_ARTICLE}[a-z']+ ){{0,2}}?{_NOT_ARTICLE}[a-z']+)"    # a name of one to three words after "the"
_COLOUR = r"(?:" + "|".join(sorted(COLOUR_WORDS)) + r")\b"
_COLOURS = _COLOUR + r"(?: and " + _COLOUR + ")?"       # one colour, or two ("red and white")
# followed by an object (not "by the left side", "by 5 cm")
_ABOUT_AN_OBJECT = r" (?=(?:the |a |an |you\b|me\b|it\b)(?!(?:the )?(?:left|right|front|back|far|near|top|bottom|upper|lower)\b))"
# Words and phrases that say the same as plain words, whatever surrounds them (contractions, chat
# spellings, thanks, shade names): one table, read in one pass before the rewrites below ("" = filler).
SAME_AS = {
    "that's": "that is", "there's": "there is", "it's": "it is", "you're": "you are", "i'd": "i would",
    "i'm": "i am", "what's": "what is", "where's": "where is", "here's": "here is", "whatever's": "whatever is",
    "whichever's": "whichever is",
    "u": "you", "pls": "please", "plz": "please", "plse": "please", "teh": "the", "col": "column", "cols": "column",
    "thanks": "", "thank you": "", "thx": "", "cheers": "", "ta": "", "for me": "", "will do": "", "would do": "",
    "navy": "dark blue", "navy blue": "dark blue", "leaning over": "leaning",
    "gap": "empty slot", "gaps": "empty slots",
}
_SAME_AS = re.compile(r"\b(?:" + "|".join(re.escape(k) for k in sorted(SAME_AS, key=len, reverse=True)) + r")\b")
# "you get a sec", "you're free": when a request is to be done, not what it asks
_WHEN_FREE = (r"you (?:(?:get|have|got) (?:a )?(?:sec|second|moment|minute|min|chance)|(?:have|get|got) (?:the )?time|"
              r"(?:are |re |'re )?(?:free|ready|done|able)|can)")
# "would you mind passing me ...": the verb a request's gerund names
_GERUNDS = {"passing": "pass", "handing": "hand", "bringing": "bring", "fetching": "fetch", "grabbing": "grab",
            "picking": "pick", "moving": "move", "placing": "place", "putting": "put", "setting": "set",
            "taking": "take", "giving": "give", "getting": "get"}
# Rewrites that depend on the words around them, in the order they apply
_EVERYDAY = [(re.compile(p), r) for p, r in [
    # chat fillers (issue 38): "ok so um, put it like 15 cm behind the bottle I guess"
    (r"\b(?:u+m+|u+h+m*|e+r+m*|h+m+)\b", " "), (r"\bi (?:guess|think|suppose|reckon|believe)\b", " "),
    (r"\b(?:ok|okay|alright)\s*$", " "),
    (r"\blike (?=(?:\d|an? |half |one |two |three |four |five |six |seven |eight |nine |ten |twenty |thirty |forty |fifty ))",
     "about "),
    # what an oriented object faces is in front of it: "the book the radio is facing"
    (rf"\b(?:that |which )?the {_NAME} (?:is |are )?(?:facing|faces|looking at|looks at|pointing at|points at)\b",
     r"in front of the \1"),
    # what something rests on is directly under it: "the book the mug is sitting on", "with the mug on it"
    (rf"\b(?:that |which )?the {_NAME} (?:(?:is|are) (?:(?:sitting|resting|standing|lying|placed|sat|kept) )?|"
     r"(?:sits|rests|stands|sitting|resting|standing) )on(?: top)?(?! (?:the|a|an|top|it|its|my|your|this|that)\b)(?= |$)",
     r"directly under the \1"),
    (rf"\bwith the {_NAME} (?:on top of|on) it\b", r"directly under the \1"),
    # "the last one on the right": the rightmost
    (r"\blast ((?:[a-z]+ ){0,3}?)(?:on|to|at) the (?:far |very )?(left|right)\b", r"\2most \1"),
    (r"\b(?:lying |laying |laid )?on (?:its|their) sides?\b", "lying flat"),
    # "the bowl on your right": of the candidates, the rightmost as the camera sees them (the task
    # generator's objects families mean it so; a sector of the viewer misses objects ahead of it).
    # "to your right" stays ESPIRE's sector relation (Table 10: "take a book to your left").
    (r"\bon (?:my|your) (left|right)(?: hand)?(?: side)?\b", r"\1most"),
    (r"\b(?:right|just|directly|immediately) (in front of|behind)\b", r"\1"),   # a place beside X is adjacent anyway
    # "row 2, spot 4": a numbered spot in a row is its column
    (r"\b(?:spot|slot|position) (?=(?:\d+|one|two|three|four|five|six|seven|eight|nine)\b)", "column "),
    (r"^((?:pass|hand|bring|give) .+) over\s*$", r"\1"),     # "pass the green bottle over"
    (r" (?:real|really|super) (?:quick|quickly|fast)\s*$", " "),    # "get the glue stick real quick"
    # "when you get a sec, pass me the gauze", "hey, when you're free ...": when, not what
    (r"^(?:(?:hey|hi|hello|ok|okay|so)\s+)*(?:when|whenever|if) " + _WHEN_FREE + r"\b[\s,]*", ""),
    # "something to cut the ribbon with": what it is for, not which ribbon
    # (not "to take a temperature with": what is taken is the purpose there)
    (r"\bsomething to (?!take\b)([a-z]+) (?:the |a |an |some |my |your )?[a-z]+ (with|from|on)\b", r"something to \1 \2"),
    # "a bunch of flowers", "a bouquet of roses": the flowers themselves
    (r"\b(?:an? |the )?(?:bunch|bouquet|posy) of (?=[a-z])", ""),
    # "something for the mosquitoes": what it is for, as the taxonomy's purpose groups name it
    (r"\bsomething for (?:the |my |your |these |those )([a-z]+)\b", r"something for \1"),
    # "the taller of the two": of several, the tallest by height (not "large", which goes by volume)
    (r"\bthe (tall|short)er\b", r"the \1est"),
    # shades and two colours: "lite blue" / "sky blue" is light blue, "deep red" dark red, "red n white" red and white
    (r"\b(?:lite|pale|sky|baby|pastel)(?= " + _COLOUR + ")", "light"), (r"\b(?:deep)(?= " + _COLOUR + ")", "dark"),
    (r"(?<=[a-z]) (?:n|&|'n'|an') (?=" + _COLOUR + ")", " and "),
    # "the mug with red on it": the mug with red among its colours, as "the red mug" reads it
    (r"\bthe ([a-z]+) with (?:some )?(" + _COLOURS + r")(?: (?:on|in) it)?", r"the \2 \1"),
    (r"^\s*(?:(?:hey|hi|hello|yo|ok|okay|so|now|alright|well|like|yeah|yes|yep|sure|right(?= +so\b))(?: robot)? +)+(?=\w)",
     " "),
    # "sorry to bother you, can you get ...", "excuse me, ...": an apology before the request
    (r"^\s*(?:sorry|excuse me|pardon(?: me)?)(?: (?:to|for) (?:bother|bothering|trouble|troubling|interrupt|interrupting) "
     r"you)? +", " "),
    # "... if you can reach it", "... if you don't mind": a condition after the request, not a place
    (r" if (?:you can|you could|you are able to|possible|you do not mind|you don't mind|"
     r"that is(?: ok| okay| alright| fine)?)"
     r"(?: (?:reach|get|manage|do) it)?\s*$", " "),
    # "any chance you could pass me ...?": a polite frame around the request
    (r"^\s*any chance (?:that )?(?:you|ya) (?:could|can|would|might) ", " "),
    # "I'm hungry, give me something to eat": the speaker's state before a request says why, not what
    (r"^\s*i am (?:so |really |very |a bit |kinda |getting )?(?:hungry|thirsty|starving|peckish|cold|tired|bored) ",
     " "),
    # "the slot to the right of the wine": the one beside it at its level, as "immediately right of"
    (r"\bthe ((?:free |empty )?(?:slot|spot|space)) (?:to|on) the (left|right) of\b", r"the \1 immediately \2 of"),
    # "can you like grab ...": a filler before the verb
    (r"\b(?:like|just|kinda|maybe) (?=(?:grab|take|get|pick|hand|pass|give|bring|fetch|put|place|set|move|stick)\b)", " "),
    (r"\b(?:can|could|may) i (?:have|get|grab)\b", "take"), (r"\b(?:hand|pass) (?:over|along)\b", "take"),
    (r"\b(?:whichever|whatever)\b", "any"),
    (r"\bof the (?:two|both|2)\b", "of the"),     # "the smaller of the two bottles": of the bottles       # "whichever book": any of them, not "the" one
    (r"\b(?:in|at) the (?:middle|centre|center)\b(?! (?:of|shelf|row|level|column|slot|spot))", " middle slot "),
    # "in the middle of the top shelf": the middle slot on it
    (r"\b(?:in|at) the (?:middle|centre|center) of (?=the [a-z]+ (?:shelf|row|level)\b)", " in the middle slot on "),
    # "the fruit that's yellow": a colour said after the noun, as "the yellow fruit" reads it
    (r"\bthe ([a-z]+) (?:that|which) (?:is|are) (" + _COLOURS + ")", r"the \2 \1"),
    # "would you mind passing me ...": the request's verb
    (r"\b(?:would|do) (?:you|ya) mind (" + "|".join(_GERUNDS) + r")\b", lambda m: _GERUNDS[m.group(1)]),
    (r"\b(?:could|can|would|will) (?:you|ya) (?:please |kindly )?(?:mind )?", " "),
    (r"\bi (?:would (?:like|love)|want|need|wanna) (?:you to )?(?=(?:put|place|set|move|take|grab|pick|get|fetch|bring|hand|"
     r"give|pass|stick|slide|pop|drop|lay)\b)", " "),
    (r"\b(?:i (?:would (?:like|love)|want|need|wanna)|(?:give|hand|pass|bring|fetch|get|grab) me)\b", "take"),
    # "next to / beside / by X" is a relation of its own (`relations.next_to`); "near X" the closest to it
    (r"\b(?:right|just|immediately|directly) (?:next to|beside)\b", "dnextto"),
    (r"\b(?:next to|beside|by)" + _ABOUT_AN_OBJECT, "nextto "), (r"\bnear" + _ABOUT_AN_OBJECT, "closest to "),
    (r"\b(?:on|to|at) the (?:far|very) (left|right)\b", r"\1most"),
    (r"\bstand (it|this|the book) up(?:right)?\b", r"place \1 upright"),
]]
# (not "when you get a sec, pass me ...": a request with its time; "has the dog been walked?" is one)
_QUESTION = re.compile(r"^\s*(?:what|where|which|how|why|who|whose|is|are|was|were|does|do|did|should|shall|"
                       r"(?:has|have|had)(?= (?:the|you|it|they|we|he|she|anyone|someone)\b)|"
                       r"when(?! " + _WHEN_FREE + r"\b))\b")


def _everyday(t: str) -> str:
    t = _SAME_AS.sub(lambda m: SAME_AS[m.group(0)] or " ", t)
    for rx, rep in _EVERYDAY:
        t = rx.sub(rep, t)
    return t


def normalise(text: str) -> str:
    t = " " + text.lower().strip() + " "
    t = t.replace("’", "'").replace("°", " degrees ")
    t = re.sub(r"[?!,;]", " ", t)
    t = " " + _everyday(re.sub(r"\s+", " ", t).strip()) + " "
    t = re.sub(r"o'\s?clock|o ?clock", " oclock", t)
    t = re.sub(r"(\w)-(\w)", r"\1 \2", t)                 # flat-lying, medium-sized, 30-degree
    t = re.sub(r"\b(left|right) most\b", r"\1most", t)
    t = re.sub(r"(\d),(\d{3})\b", r"\1\2", t)
    t = re.sub(r"[^\w.' ]", " ", t)                       # drop punctuation but keep 1.5 and 's
    t = re.sub(r"\.(?!\d)", " ", t)
    t = _number_words(t)
    # "1.5 to 2 meters": the unit of the second number applies to both
    t = re.sub(rf"\b({_NUM}) (to|and) ({_NUM}) ?({_UNIT_RE})\b",
               lambda m: f"{m.group(1)} {m.group(4)} {m.group(2)} {m.group(3)} {m.group(4)}", t)
    t = re.sub(rf"\b({_NUM}) ?({_UNIT_RE})\b", lambda m: f"d{float(m.group(1)) * _UNITS[m.group(2)]:g}", t)
    t = re.sub(rf"\b({_NUM}) ?(?:degrees?|deg)\b", r"deg\1", t)
    t = re.sub(r"\b(\d{1,2})\s+oclock\b", r"clock\1", t)
    # "the second flat book from the left" -> "the rank2 from the left flat book"
    # (any noun but a shelf's rows and columns: "the second mug from the left")
    t = re.sub(r"\brank(\d+) ((?:[a-z]+ ){0,3}?)(?!(?:rows?|columns?|shel(?:f|ves)|levels?)\b)([a-z]+) from the (left|right)\b",
               r"rank\1 from the \4 \2\3", t)
    return " " + re.sub(r"\s+", " ", t).strip() + " "


# --- quantities out of range: refused, never silently changed ------------------------------------
_SIGNED_DISTANCE = re.compile(r"(?<![\w.])[-\u2212\u2013]\s*(\d+(?:\.\d+)?)\s*(" + _UNIT_RE + r")\b")
_TILT_WORDS = re.compile(r"\b(?:tilt\w*|lean\w*|slant\w*|inclin\w*)\b")


def _check_signed_distances(text: str) -> None:
    """'-3 cm to the right' would otherwise read as 3 cm: a distance has no sign, a side does."""
    m = _SIGNED_DISTANCE.search(text.lower())
    if m:
        raise InvalidGoalError(f"a distance cannot be negative ({m.group(0).strip()!r}); give its size and say "
                               "the side instead, e.g. '3 cm to the left of the jar'")


def _check_quantities(t: str) -> None:
    """Distances above zero, clock hours 1-12, tilts 0-90 degrees (on the normalised text)."""
    for d in re.findall(r"\bd(\d+(?:\.\d+)?(?:e-?\d+)?)\b", t):
        if float(d) <= 0.0:
            raise InvalidGoalError("a distance of 0 says nowhere to go; give a distance above 0, e.g. '10 cm'")
    for h in re.findall(r"\bclock(\d+)\b", t):
        if not 1 <= int(h) <= 12:
            raise InvalidGoalError(f"clock hours run from 1 to 12, got {h} o'clock")
    if _TILT_WORDS.search(t):
        for a in re.findall(r"\bdeg(\d+(?:\.\d+)?)\b", t):
            if float(a) > 90.0:
                raise InvalidGoalError(f"a tilt runs from 0 to 90 degrees from upright, got {a} degrees")


# --- spelling --------------------------------------------------------------------------------
SPELL_MARGIN = 0.1     # how much closer (difflib ratio) one scene word must be than the next to be chosen
SPELL_MIN_LEN = 5      # a slip in a shorter word too often makes another word ("mug" / "mud")


def _one_edit(a: str, b: str) -> bool:
    """a and b differ by one substituted, dropped, added or transposed letter."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1:]


def _one_edit_matches(word: str, words) -> list[str]:
    return sorted(v for v in words if abs(len(v) - len(word)) <= 1 and _one_edit(word, v))


def _clearly_closest(word: str, cands: list[str]) -> str | None:
    """The candidate clearly closer to `word` than the others by difflib's ratio ("gren": "green"
    0.89, "grey" 0.75), or None when two are about as close."""
    ranked = sorted(((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in cands), reverse=True)
    if len(ranked) == 1 or ranked[0][0] - ranked[1][0] >= SPELL_MARGIN:
        return ranked[0][1]
    return None


def _singular_of_all(cands: list[str]) -> str | None:
    """The one word of which every candidate is a form ("tomatoe": "tomato" or "tomatoes", one
    edit each, are one word): its singular. None when they are different words."""
    stem = min(cands, key=len)
    return stem if len(cands) > 1 and all(c in _plural(stem) for c in cands) else None


def correct_spelling(t: str, scene_words: set[str], known: set[str]) -> tuple[str, list[tuple[str, str]]]:
    """The one spelling corrector (issue 38). A word neither the scene nor the parser knows is read
    as the scene word (its objects' names and colours) one edit away, so "yelow" is "yellow"
    when something is yellow, not "below" (of several, the one clearly closest); else, in a word of SPELL_MIN_LEN letters or more, as the
    one known word one edit away ("leftmots" -> "leftmost"); else as the scene word closest by
    difflib ("alarm clok"). Several candidates at one tier: left as written (never guess). Returns
    the text and the fixes (the result reports them). Tokens made by normalise (rank2, d0.1) stay."""
    out, fixes = [], []
    for w in t.split():
        base = w.removesuffix("'s")
        if len(base) < 4 or not base.isalpha() or base in scene_words or base in known:
            out.append(w)
            continue
        fix = None
        # a slip in a short word keeps its first letter: "fish" one edit from the scene's "dish" is fish
        in_scene = [c for c in _one_edit_matches(base, scene_words) if len(base) > SPELL_MIN_LEN or c[0] == base[0]]
        if in_scene:
            fix = _singular_of_all(in_scene) or _clearly_closest(base, in_scene)
        else:
            in_known = _one_edit_matches(base, known) if len(base) >= SPELL_MIN_LEN else []
            if len(in_known) == 1:
                fix = in_known[0]
            elif not in_known:
                fix = next(iter(difflib.get_close_matches(base, sorted(scene_words), n=1, cutoff=0.8)), None)
        if fix is not None:
            fixes.append((base, fix))
            w = fix + w[len(base):]
        out.append(w)
    return " " + " ".join(out) + " ", fixes


# --- references ------------------------------------------------------------------------------
_CONTAINERS = ("table", "shelf")
# "a slot above the globe" is any higher slot; "(the slot) above the globe" is the one in its column
_ANY_SLOT_VERTICAL = re.compile(r" (?:(?:a|an|any|some) (?:[a-z]+ )?(?:slot|spot|place)|(?:slots|spots|places)) "
                                r"(?:that is |which is |that are |which are )?(?:above|over|below|under|beneath|underneath|higher|lower) ")


@dataclass
class _Refs:
    """Reference tokens found in the text: token -> scene id (or viewer/robot). A phrase naming a
    set of objects (`lexicon`: "mug" with two mugs, "fruit", "the red thing") is a group token
    (refnpsN singular, refnppN plural) -> (program fragment, ids)."""

    ids: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    groups: dict[str, tuple] = field(default_factory=dict)


def _plural(w: str) -> list[str]:
    return [w, w + "s", w + "es", w[:-1] + "ies" if w.endswith("y") else w]


def scene_phrases(scene: Scene, lex: dict) -> dict[str, set[str]]:
    """Every phrase naming objects of the scene -> their ids: labels, their endings and plurals,
    the object ids, the contents of a packaging label ("cereal" for "cereal box"), a label's head
    "of" what comes before it ("box of gloves" for "glove box"), a drink vessel "of" a drink ("my glass of water"
    for "glass", unless another label says it: "bottle of water" is the water bottle), and the scene lexicon's
    phrases (colours, categories, taxonomy groups)."""
    phrases: dict[str, set[str]] = {}
    served: dict[str, set[str]] = {}
    for o in scene.objects:
        if o.category in _CONTAINERS or (o.category == "book" and o.label.lower() in ("book", "books")):
            continue
        words = spoken_label(o).split()
        cands = {" ".join(words[i:]) for i in range(len(words))} | {o.id.lower().replace("_", " ")}
        cands |= packaging_content(o) | packaging_of(o)      # "the cereal" is the cereal box, "the box" the box of chocolates
        if len(words) > 1:                          # "the box of gloves" is the glove box
            cands |= {f"{words[-1]} of {' '.join(words[:-2] + [p])}" for p in _plural(words[-2])}
        if words[-1] in DRINK_VESSELS:
            for d in DRINKS:
                served.setdefault(f"{' '.join(words)} of {d}", set()).add(o.id)
        for c in cands:
            if c in ("book",):
                continue
            head, last = c.rsplit(" ", 1) if " " in c else ("", c)
            for p in _plural(last):
                phrases.setdefault((head + " " + p).strip(), set()).add(o.id)
    for p, ids in served.items():
        phrases.setdefault(p, ids)
    for p, e in lex.items():        # "the bottle" is the fabric softener too: a declared group (not a synonym,
        if p in GROUPS:             # "the carton" is the carton, not the cereal box) adds to a label's phrase
            phrases.setdefault(p, set()).update(e.ids)
        else:
            phrases.setdefault(p, set(e.ids))
    return phrases


def _mark_references(t: str, refs: _Refs, phrases: dict[str, set[str]], lex: dict,
                     modifiers: frozenset[str] = frozenset(), known: frozenset[str] = frozenset()) -> str:
    """Replace the names of scene objects (`scene_phrases`) by reference tokens, longest names first.
    A packaging content (`modifiers`) followed by a word the reader does not know (not in `known`)
    modifies that word: "the ceramic vase" names a vase, not the ceramic jar (and is refused as
    not in the scene when there is none)."""
    t = re.sub(r" (?:the robot|robot)'s ", " possrobot ", t)
    t = _owners(t, phrases)
    t = re.sub(r" (?:your|my) ", " possviewer ", t)
    t = re.sub(r" (?:the )?(?:robot) ", " refrobot ", t)
    t = re.sub(r" (?:you|me|yourself|the viewer|the camera) ", " refviewer ", t)
    for p in sorted(phrases, key=lambda s: (-len(s.split()), -len(s))):
        if f" {p}" not in t:
            continue            # most of a scene's phrases are not in the text: no pattern built for them
        # a possessive: "the mirror's", or a plural name's apostrophe alone ("the succulents' right")
        pat = re.compile(rf" (?:the |a |an )?{re.escape(p)}('s|(?<=s)')? ")
        pos = 0
        while m := pat.search(t, pos):
            if p in modifiers and _names_another_thing(t[m.end():], known):
                pos = m.end() - 1
                continue
            pos = m.start()
            ids = sorted(phrases[p])
            if len(ids) > 1:
                # a set of objects: filtered further as the target, or AMBIGUOUS as a reference (_ref)
                tok = next((k for k in refs.groups if refs.labels[k] == p),
                           f"ref{'npp' if p in lex and lex[p].plural else 'nps'}{len(refs.groups)}")
                refs.groups[tok] = (lex[p].fragment if p in lex else None, ids)
                refs.ids[tok], refs.labels[tok] = ids[0], p
            else:
                tok = next((k for k, v in refs.ids.items() if v == ids[0] and k not in refs.groups),
                           f"ref{len(refs.ids)}")
                refs.ids[tok], refs.labels[tok] = ids[0], p
            art = re.match(r" (the |a |an )", m.group(0))
            lead = f" {art.group(1).strip()} " if art and tok in refs.groups else " "
            t = t[:m.start()] + lead + (f"poss{tok} " if m.group(1) else f"{tok} ") + t[m.end():]
    refs.ids["refviewer"], refs.ids["refrobot"] = "viewer", "robot"
    return re.sub(r"\s+", " ", t)


def _owners(t: str, phrases) -> str:
    """"the dog's bowl": an owner that names nothing in the scene, before an object that does, says
    whose the object is, not where: the dog bowl when there is one, else the bowl (AMBIGUOUS when
    there are several). An owner in the scene ("the mug's left") is a reference as before."""
    def whose(m):
        owner, thing = m.group(1), m.group(2)
        if f"{owner} {thing}" in phrases:
            return f" {owner} {thing} "
        return f" {thing} " if owner not in phrases and thing in phrases else m.group(0)
    return re.sub(r" ([a-z]+)'s ([a-z]+) ", whose, t)


# "hand me my phone": a speaker's possessive before an object says whose it is, not where
_OWNED = re.compile(r" possviewer (?=(?:ref|refnp[sp])\d+ )")


def _names_another_thing(rest: str, known: frozenset[str]) -> bool:
    nxt = rest.split(" ", 1)[0]
    return bool(nxt) and nxt.isalpha() and nxt not in known


def _between_a_pair(t: str, refs: _Refs) -> str:
    """"between the two mugs": a group of exactly two objects after "between" is its two members
    ("between ref_a and ref_b"); between a group of more is AMBIGUOUS naming them."""
    def pair(m):
        ids = refs.groups.get(m.group(1), (None, ()))[1]
        if len(ids) != 2:
            return m.group(0)
        toks = []
        for oid in ids:
            tok = f"ref{len(refs.ids)}"
            refs.ids[tok], refs.labels[tok] = oid, refs.labels[m.group(1)]
            toks.append(tok)
        return f" between {toks[0]} and {toks[1]} "
    t = re.sub(r" between (?:the )?(?:(?:2|both) )?(refnp[sp]\d+) ", pair, t)
    many = re.search(r" between (?:the )?(refnp[sp]\d+) ", t)
    if many:
        ids = refs.groups[many.group(1)][1]
        raise AmbiguousError(f"'between the {refs.labels[many.group(1)]}' needs two of them and there are {len(ids)} "
                             f"({', '.join(ids)}); name the two, e.g. 'between the leftmost and the rightmost'")
    return t


_SIZE_OF_REFERENCE = {"small": "Small", "smaller": "Small", "smallest": "Small", "little": "Small", "big": "Large",
                      "bigger": "Large", "biggest": "Large", "large": "Large", "larger": "Large", "largest": "Large",
                      "tall": "Tall", "taller": "Tall", "tallest": "Tall", "short": "Short", "shorter": "Short",
                      "shortest": "Short"}
_REFERENCE_BY_SIZE = re.compile(r" (of|from|to|behind|nextto|dnextto|between|and|under|above|below|over|beneath|"
                                r"underneath|than|in|into|inside|on|onto) the (" + "|".join(_SIZE_OF_REFERENCE) + r") "
                                r"(refnps\d+|one) ")


def _references_by_size(t: str, refs: _Refs, scene: Scene) -> str:
    """"behind the tall bottle", "next to the smaller mug": a group named by a size word where a
    reference stands is the one member that size word picks (`program.relative_size`, clearly
    the tallest / smallest ...); when none is clearly so it stays a group (AMBIGUOUS as a reference).
    "the box in front of the big one": "one" stands for the group named last before it (the boxes);
    with no group before it, it is left as written (and refused)."""
    def one(m):
        group = m.group(3) if m.group(3) != "one" else _last_group_before(t, m.start())
        if group is None:
            return m.group(0)
        ids = refs.groups[group][1]
        chosen = relative_size([scene.get(i) for i in ids], _SIZE_OF_REFERENCE[m.group(2)])
        if len(chosen) != 1:
            return m.group(0)
        tok = f"ref{len(refs.ids)}"
        refs.ids[tok], refs.labels[tok] = chosen[0].id, f"{m.group(2)} {refs.labels[group]}"
        return f" {m.group(1)} {tok} "
    return _REFERENCE_BY_SIZE.sub(one, t)


def _last_group_before(t: str, end: int) -> str | None:
    groups = re.findall(r"\b(refnp[sp]\d+)\b", t[:end])
    return groups[-1] if groups else None


def _label(scene: Scene, oid: str) -> str:
    return next((o.label for o in scene.objects if o.id == oid), oid)


def _named_by_perception(scene: Scene, ids) -> list[str]:
    """Of a reference's candidates, those perception named itself, or that it found surely one of
    several entries the words then chose between (`_sure_readings`). "The bottle" says one bottle
    is there: when perception named one and the words a second that fits a bottle only weakly (a
    detection it left unnamed, `extra["named_by_words"]`, labelling.name_from_words), the words'
    reading would make their own reference ambiguous, so they meant the one perception named. The
    wall of a black bowl, split from it, fit a bottle weakly and was read as a second bottle, which
    refused "the bowl closest to the bottle" (objects-106-00012). A detection that fits a bottle
    and a jar surely and about equally may be a second real bottle as much as the jar: choosing
    the named one would be a guess, so it stays a candidate and the reference is AMBIGUOUS."""
    return [i for i in ids if not _named_by_words(scene, i) or len(_sure_readings(scene, i)) > 1]


def _named_by_words(scene: Scene, i: str) -> bool:
    return any(o.id == i and o.extra.get("named_by_words") for o in scene.objects)


def _sure_readings(scene: Scene, i: str) -> list[str]:
    """The entries perception found detection `i` fits surely and about equally, between which the
    words chose (its candidates marked `tie`; as a piece of an entry, not: a piece may be of the
    object perception named)."""
    o = next((o for o in scene.objects if o.id == i), None)
    return [c["label"] for c in (o.extra.get("candidates") or ()) if c.get("tie") and not c.get("piece")] if o else []


def _words_doubt(scene: Scene, ids) -> str:
    """Why a reference the words named stays ambiguous, for the message ('' when none did)."""
    why = [f"{i} fits a {' or a '.join(_sure_readings(scene, i))} about equally, so it may be a second one"
           for i in ids if _named_by_words(scene, i) and len(_sure_readings(scene, i)) > 1]
    return f" ({'; '.join(why)})" if why else ""


def _told_apart(scene: Scene, ids) -> str:
    """The candidates of an ambiguous reference as a person could tell them apart: "the white bowl
    (white_bowl) or the yellow bowl (yellow_bowl)" when their colour names differ, else by label
    (objects-74-00013's message listed ['bowl', 'bowl'])."""
    objs = [next((o for o in scene.objects if o.id == i), None) for i in ids]
    colours = [tuple(getattr(o, "extra", {}).get("colour_names") or ()) if o is not None else () for o in objs]
    differ = all(colours) and len(set(colours)) == len(colours)
    words = [f"the {' and '.join(c) + ' ' if differ else ''}{_label(scene, i)} ({i})" for i, c in zip(ids, colours)]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


# --- clauses: reader.lark's productions (reader.read_clauses) -------------------------------
def _side(word: str) -> str:
    return {"left": "Left", "right": "Right", "front": "Front", "back": "Behind", "rear": "Behind",
            "far": "Behind", "near": "Front", "upper": "Upper", "top": "Upper", "lower": "Lower",
            "bottom": "Lower"}[word]


_FILLER = set("""the a an and on in at of to that which is are it its them they this these those please
    could would you will from with for one among there some any then onto into up down off out me
    somewhere spot location position place area now just carefully gently currently be as by so
    lies sits sitting located situated positioned standing_""".split())
_NOUNS = {"book", "books", "slot", "slots", "one", "ones"}


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    """The words the reader knows: the grammar's keywords, filler, and words that name no object
    ("clock" stays known although "3 o'clock" is a token, "camera"/"viewer" although the grammar
    reads "camera's"). A function, so that importing the parser does not load the grammar."""
    return (keywords() | _FILLER
            | {"book", "slot", "table", "shelf", "leftmost", "rightmost", "shelves", "rows", "columns", "clock",
               "camera", "viewer"})


@lru_cache(maxsize=1)
def _vocab() -> frozenset[str]:
    """Every word the parser reads, with the number and unit words normalise turns into tokens."""
    return _known() | set(_UNITS) | set(_ONES) | set(_TENS) | set(_ORD) | {"half", "hundred", "degrees", "oclock"}


# --- composition -----------------------------------------------------------------------------
@dataclass
class Parsed:
    program: Node
    clauses: list[Clause]
    leftover: list[str]
    # How the instruction refers to what it picks (see `target_reference`): {"determiner": "the" |
    # "a" | None, "plural": bool, "choice": bool, "phrase": the words of the original instruction}
    reference: dict = field(default_factory=dict)


def _unknown_simple(t: str) -> str:
    """A word after 'the/a/an' that names nothing we know (and is not an adjective of 'book' or
    'slot') is an object the scene does not hold: mark it so the error says so. A colour word is no
    object where it says the colour of a word the reader knows: "the yellow mug" with a yellow bowl and no
    yellow mug is nothing yellow of that kind (parse), not "'yellow' is not in the scene"; "the
    orange" alone is the fruit."""
    out, words = [], t.split()

    def unknown(w):
        return w.removesuffix("'s") not in _known() and not re.match(r"(ref|poss|rank|clock|deg|d\d|unk_|\d)", w)
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in COLOUR_WORDS and nxt and nxt not in _FILLER and not unknown(nxt):
            out.append(w)
        elif prev in ("the", "a", "an") and unknown(w) and nxt not in _NOUNS:
            out.append("unk_" + w)
        elif out and out[-1].startswith("unk_") and unknown(w) and w not in _FILLER:
            out[-1] += "_" + w           # "the ceramic jar" -> one unknown name
        else:
            out.append(w)
    return " " + " ".join(out) + " "


FRAME_POLICIES = ("intrinsic", "viewer", "ask")


class InstructionParser:
    """Deterministic English -> spatial program over one scene.

    `unnamed_frame`: whose left/right/front a relation uses when the instruction names no frame
    and the reference's front was assumed rather than observed (program.assume_visible_fronts):
    "intrinsic" (ESPIRE's reading: the reference's own), "viewer" (the camera's) or "ask" (refuse
    as AMBIGUOUS, asking which side is meant). Every frame chosen is recorded in `frame_notes`."""

    def __init__(self, scene: Scene, unnamed_frame: str = "intrinsic"):
        if unnamed_frame not in FRAME_POLICIES:
            raise InvalidGoalError(f"unnamed_frame must be one of {FRAME_POLICIES}, got {unnamed_frame!r}")
        self.scene = scene
        self.unnamed_frame = unnamed_frame
        self.frame_notes: list[dict] = []
        self.spelling_notes: list[str] = []
        self._group: tuple | None = None
        self._any_slot_vertical = False

    def _vocabulary(self, scene_words: set[str]) -> set[str]:
        """Every word the parser reads that is not a scene word (the corrector prefers those)."""
        names = {w for o in self.scene.objects for w in re.findall(r"[a-z]+", o.label.lower())}
        return (_vocab() | names | COLOUR_WORDS) - scene_words

    def parse(self, text: str, task_kind: str = "auto") -> Parsed:
        if not text or not text.strip():
            raise InvalidGoalError("the instruction is empty; say what to pick or where to place")
        if _QUESTION.match(text.lower()):
            raise NotUnderstoodError(f"{text.strip()!r} reads as a question; this planner acts on instructions "
                                     "such as 'take the leftmost book' or 'put it in the top-left slot'")
        refs = _Refs()
        _check_signed_distances(text)
        lex = scene_lexicon(self.scene)
        phrases = scene_phrases(self.scene, lex)
        scene_words = {w for p in phrases for w in p.split()}
        t, fixes = correct_spelling(normalise(text), scene_words, self._vocabulary(scene_words))
        if any(c in _ORD or c in _ONES or c in _TENS for _, c in fixes):
            t = normalise(t)        # "thrid" read as "third" is a rank, as normalise reads the word itself
        _check_quantities(t)
        self.spelling_notes = [f"read {w!r} as {c!r}" for w, c in fixes]
        modifiers = frozenset(c for o in self.scene.objects for c in packaging_content(o))
        known = frozenset(self._vocabulary(scene_words) | scene_words)
        t = _mark_references(t, refs, phrases, lex, modifiers, known)
        t = _OWNED.sub(" ", t)
        t = _between_a_pair(_references_by_size(t, refs, self.scene), refs)
        t = _unknown_simple(t)
        clauses, rest = read_clauses(t)
        leftover = [w for w in rest if w not in _FILLER]
        named = [w for w in leftover if w in refs.ids and w not in ("refviewer", "refrobot")]
        leftover = [w for w in leftover if w not in named]
        unknown_refs = sorted({_without_possessive(w[4:].replace("_", " ")) for w in leftover + [str(a) for c in clauses for a in c.args]
                               if isinstance(w, str) and w.startswith("unk_")})
        unread = [w for w in leftover if not w.startswith(("unk_", "ref"))]
        if unknown_refs and unread and not any(c.kind == "verb" for c in clauses):
            # "play me a song": an action the reader does not know, not an object the scene lacks
            raise NotUnderstoodError(f"could not interpret {' '.join(repr(w) for w in unread)} in {text.strip()!r}; "
                                     "say what to take or where to put it, e.g. 'take the leftmost book'")
        if unknown_refs:
            raise TargetNotFoundError(
                f"{', '.join(repr(u) for u in unknown_refs)} is not in the scene; it holds: {self._contents()}")
        colours = sorted({w for w in leftover if w in COLOUR_WORDS})
        if colours and not any(o.extra.get("colour_names") for o in self.scene.objects):
            raise NotUnderstoodError(f"{' or '.join(colours)} names a colour, and this scene's objects carry none "
                                     "(perception's colour_names); name the object another way")
        if colours:
            raise TargetNotFoundError(
                f"nothing {' or '.join(colours)} of that kind is in the scene; it holds: {self._contents()}")
        if leftover:
            raise NotUnderstoodError(
                f"could not interpret {' '.join(repr(w) for w in leftover)} in {text.strip()!r}; "
                "rephrase with the words of ESPIRE's spatial vocabulary (left/right of, in front of, behind, "
                "closest to, leftmost, row N column M, N cm to the right of X, ...)")
        if not clauses and not named:
            raise NotUnderstoodError(f"found no action, object or place in {text.strip()!r}; say e.g. "
                                     "'take the leftmost book' or 'put it in an empty slot'")
        self._refs = refs
        self._any_slot_vertical = bool(_ANY_SLOT_VERTICAL.search(t))
        action = self._action(clauses, task_kind)
        if action == "place":
            named = [w for w in named if not self._names_the_held(refs, w)]   # "put the bottle down by X"
        if len(named) > 1 or (named and action != "pick"):
            raise NotUnderstoodError(f"could not tell what {[refs.labels[w] for w in named]} does in {text.strip()!r}")
        self._group = refs.groups[named[0]] if named and named[0] in refs.groups else None
        self._named = refs.ids[named[0]] if named and self._group is None else None
        prog = self._compose(action, clauses)
        reference = (target_reference(text, t, clauses) if self._named is None and prog.op == "pick" else
                     slot_reference(t, clauses) if "filterSlot" in str(prog) else {})
        return Parsed(prog, clauses, leftover, reference)

    # ------------------------------------------------------------------------------------------
    def _contents(self) -> str:
        objs = [f"{o.label} ({o.id})" for o in self.scene.objects if not o.held]
        return ", ".join(objs) + (f"; and {len(self.scene.regions)} shelf slots" if self.scene.regions else "")

    def _action(self, clauses, task_kind) -> str:
        verbs = {c.rel for c in clauses if c.kind == "verb"}
        if len(verbs) > 1:
            raise AmbiguousError(f"the instruction asks both to pick and to place ({sorted(verbs)}); give one action")
        if verbs:
            return verbs.pop()
        if task_kind in ("pick", "place"):
            return task_kind
        return "place" if self.scene.held_object() is not None else "pick"

    def _ref(self, tok) -> Sym:
        if tok is None:
            return Sym("viewer")
        tok = tok[4:] if tok.startswith("poss") else tok
        if tok in ("viewer", "robot"):
            return Sym(tok)
        if tok == ANY_BOOK:
            books = [o.id for o in self.scene.objects if o.category == "book" and not o.held]
            if len(books) != 1:
                error = AmbiguousError if books else TargetNotFoundError
                raise error(f'"the book" as the place\'s reference could be any of {books}; say which book, e.g. '
                            '"next to the leftmost book"' if books else "there is no book in the scene to place it by")
            return Sym(books[0])
        if tok.startswith("unk_"):
            raise TargetNotFoundError(f"{tok[4:]!r} is not in the scene; it holds: {self._contents()}")
        if tok in self._refs.groups and len(self._refs.groups[tok][1]) > 1:
            ids = self._refs.groups[tok][1]
            seen = _named_by_perception(self.scene, ids)
            if len(seen) == 1:
                return Sym(seen[0])
            raise AmbiguousError(f"{self._refs.labels[tok]!r} as a reference could be any of {list(ids)}"
                                 f"{_words_doubt(self.scene, ids)}; name it "
                                 f"more precisely, by colour, size or position ({_told_apart(self.scene, ids)})")
        return Sym(self._refs.ids[tok])

    def _ref_label(self, tok) -> str:
        """How a reference token reads in a message: 'the mug', 'you', 'the robot'."""
        tok = "refviewer" if tok is None else (tok[4:] if tok.startswith("poss") else tok)
        if tok in ("refviewer", "viewer"):
            return "you"
        if tok in ("refrobot", "robot"):
            return "the robot"
        if tok.startswith("unk_"):
            return "the " + tok[4:].replace("_", " ")
        if tok == ANY_BOOK:
            return "the book"
        return "the " + self._refs.labels.get(tok, tok)

    def _owner(self, ref: Sym, frame: Clause | None, word: str = "") -> Sym:
        """Whose frame a directional relation uses: named in the instruction, else ESPIRE's default
        (the reference's own when it has a front, the viewer's otherwise); for a reference whose
        front was assumed, the `unnamed_frame` policy decides. Each choice is noted with its reason."""
        if frame is not None:
            owner = (Sym("viewer") if frame.rel == "viewer" else
                     self._ref(frame.args[0]) if frame.rel == "of" else ref)   # else "from its own point of view"
            return self._note(ref, owner, word, "named in the instruction")
        if ref.name in ("viewer", "robot"):
            return ref
        obj = self.scene.get(ref.name)
        fr = rel.default_frame(obj, self.scene.viewer)
        if fr.frame is not rel.Frame.INTRINSIC:
            return self._note(ref, Sym("viewer"), word, "it has no front, so the camera's frame")
        if not front_assumed(obj):
            return self._note(ref, ref, word, "its front was observed (ESPIRE: a reference with a front uses its own)")
        return self._assumed_front_owner(ref, obj, word)

    def _assumed_front_owner(self, ref: Sym, obj: SceneObject, word: str) -> Sym:
        label = obj.label
        if word in ("front", "back"):
            # the assumed front faces the camera, so its front is the camera's near side: both readings agree
            return self._note(ref, ref, word, f"the {label}'s front was assumed to face the camera, where its "
                              f"{word} and the camera's agree")
        if self.unnamed_frame == "ask":
            raise AmbiguousError(
                f"'{word} of the {label}' names no frame and the {label}'s front was not observed (assumed to "
                f"face the camera): do you mean its own {word} (say 'from its own point of view') or the camera's "
                f"{word} (say 'from my point of view')?")
        if self.unnamed_frame == "viewer":
            return self._note(ref, Sym("viewer"), word, f"the {label}'s front was assumed, not observed; "
                              "policy unnamed_frame=viewer reads it in the camera's frame")
        mirrored = {"left": "right", "right": "left"}.get(word)
        hint = f", so its {word} is the camera's {mirrored}" if mirrored else ", so its clock is the camera's mirrored"
        return self._note(ref, ref, word, f"the {label}'s front was assumed to face the camera (not observed){hint}; "
                          "ESPIRE's reading (policy unnamed_frame=intrinsic); say 'from my point of view' for the camera's")

    def _note(self, ref: Sym, owner: Sym, word: str, why: str) -> Sym:
        frame = "viewer" if owner.name == "viewer" else ("intrinsic" if owner == ref else f"{owner.name}'s")
        label = _label(self.scene, ref.name)
        note = {"reference": ref.name, "word": word, "frame": frame, "why": why,
                "text": f"'{word} of the {label}' read in the " +
                        ("camera's frame" if frame == "viewer" else f"{label}'s own frame" if frame == "intrinsic"
                         else f"{owner.name}'s frame") + f": {why}"}
        if note not in self.frame_notes:
            self.frame_notes.append(note)
        return owner

    def _beside_on_table(self, clauses: list[Clause], nouns: set, where: Clause | None) -> bool:
        """A place that names no slot or shelf, beside references that all stand on the table
        (in no slot), goes on the table beside them, not into the shelf's slots that lie that way
        (issue 38: "put it behind the mug" chose slots of the shelf behind the table)."""
        if "slot" in nouns or (where is not None and where.rel == "shelf") or not self.scene.by_category("table"):
            return False
        toks = [c.args[1] for c in clauses if c.kind == "dir" and len(c.args) > 1]
        toks += [t for c in clauses if c.kind == "between" for t in c.args[:2]]
        toks += [c.args[1] for c in clauses if c.kind == "super" and c.rel == "Closest" and c.args[1:] and c.args[1]]
        toks += [c.args[0] for c in clauses if c.kind in ("next", "into")]
        refs = [self._ref(t).name for t in toks]
        if not refs or any(r in ("viewer", "robot") for r in refs):
            return False
        return not any(rel.point_in_box(self.scene.get(r).center, slot) for r in refs for slot in self.scene.regions)

    def _names_the_held(self, refs: _Refs, tok: str) -> bool:
        """Whether a reference token names the held object (alone, or in a group with it)."""
        held = self.scene.held_object()
        ids = refs.groups[tok][1] if tok in refs.groups else (refs.ids.get(tok),)
        return held is not None and held.id in ids

    def _all_books(self, ids) -> bool:
        """Whether every object of `ids` is a book (None: whether the scene has a book to pick)."""
        if ids is None:
            return any(o.category == "book" and not o.held for o in self.scene.objects)
        return all(o.category == "book" for o in self.scene.objects if o.id in ids)

    def _compose(self, action: str, clauses: list[Clause]) -> Node:
        frame = next((c for c in clauses if c.kind == "frame"), None)
        where = next((c for c in clauses if c.kind == "where"), None)
        _check_contradictions(clauses, self._ref_label)
        nouns = {c.rel for c in clauses if c.kind == "noun"}
        poses = [c for c in clauses if c.kind == "pose"]
        metric = [c for c in clauses if c.kind == "metric"]
        if len(metric) > 1:
            raise AmbiguousError(f"the instruction gives {len(metric)} placements (e.g. 'N cm right of X' and 'M cm "
                                 "behind Y'); one object goes to one place: give one")
        if action == "pick" and self._group is not None:
            if "book" in nouns and not self._all_books(self._group[1]):
                raise NotUnderstoodError(f"the instruction names both a book and {self._group[1]}; pick which?")
            nouns = nouns | {"group"}
        if action == "pick" and self._named is None and not nouns and not any(
                c.kind not in ("verb", "noise", "frame", "where") for c in clauses):
            raise NotUnderstoodError("nothing says what to pick ('it' refers to nothing in the hand); "
                                     "name the object, e.g. 'take the leftmost book'")
        into = next((c for c in clauses if c.kind == "into"), None)
        if into is not None and action == "pick":
            raise NotUnderstoodError(f"'in {self._ref_label(into.args[0])}' says where to put something; to take what "
                                     "is in it, name that object (e.g. 'take the apple')")
        use_slots = (action == "place" and bool(self.scene.regions) and not metric and into is None
                     and not self._beside_on_table(clauses, nouns, where))
        if action == "place" and not use_slots:
            return self._metric_program(clauses, frame, poses)
        if action == "pick" and self._named is not None:
            if "book" in nouns and not self._all_books([self._named]):   # "the book ..., the red one" is one book
                raise NotUnderstoodError(f"the instruction names both a book and {self._named!r}; pick which?")
            base = Sym(self._named)           # "pick up the jar": that object itself
        elif action == "pick" and self._group is not None:
            base = self._group[0] if self._group[0] is not None else Sym("TABLE")   # "the white mug", "fruit"
        elif action == "pick" and "book" not in nouns and not self._all_books(None):
            base = Sym("TABLE")     # "the last one on the right" with no book in the scene: any object
        elif action == "pick":
            base = node("filterBook", None, "TABLE")
            if "slot" in nouns:
                raise InvalidGoalError("a slot cannot be picked up; pick a book or place into a slot")
        else:
            base = node("filterSlot", None, "SHELF")
        s = base
        container = Sym("SHELF" if use_slots else "TABLE")
        order = {"attr": 0, "pose": 1, "part": 2, "between": 3, "dir": 4, "dist": 5, "next": 5, "super": 6}
        for c in sorted((c for c in clauses if c.kind in order), key=lambda c: (order[c.kind], c.pos)):
            if c.kind == "pose" and action == "place":
                continue        # a pose in a placement says how to place, not which slot
            s = self._apply(c, s, container, frame, where)
        kw = {}
        if action == "place":
            kw = _place_pose_kwargs(poses)
        return node(action, None, Node("unique", None, (s,)), **kw)

    def _apply(self, c: Clause, s: Node, container: Sym, frame, where) -> Node:
        a = c.args
        if c.kind == "attr" and c.rel in ("NamedRow", "NamedColumn", "Named2D"):
            return self._named_slots(c, s)
        if c.kind == "attr":
            if c.rel in ("Height", "Width"):
                return node("filterAttr", c.rel, a[0], s)
            if c.rel in ("Index1D", "Column"):
                return node("filterAttr", c.rel, a[0], s)
            if c.rel == "Index2D":
                return node("filterAttr", c.rel, a[0], a[1], s)
            return node("filterAttr", c.rel, s)
        if c.kind == "pose":
            if c.rel == "TiltDegree":
                return node("filterOri", "TiltDegree", a[0], s)
            return node("filterOri", c.rel, s)
        if c.kind == "part":
            return node("filterRel", _side(c.rel), s, container)
        if c.kind == "between":
            return node("filterRel", "Between", s, self._ref(a[0]), self._ref(a[1]))
        if c.kind == "next":
            ref = self._ref(a[0])        # "the book next to you" is the one closest to you
            return node("filterDist", "Closest" if ref.name in ("viewer", "robot") else "NextTo", s, ref)
        if c.kind == "dist":
            if c.rel == "Range":
                return node("filterDist", "Range", a[0], a[1], s, self._ref(a[2]))
            return node("filterDist", c.rel, a[0], s, self._ref(a[1]))
        if c.kind == "super":
            if c.rel == "Emptiest":
                return node("filterAttr", "Emptiest", s)
            if c.rel == "Size":
                k = a[0] if a[0] and a[0] > 1 else None
                return node("filterAttr", a[1].capitalize(), *((k,) if k else ()), s)
            k = a[0] if a and a[0] else None
            if c.rel in ("Closest", "Farthest"):
                ref = self._ref(a[1])
                return (node("filterDist", "Rank" + c.rel, k, s, ref) if k and k > 1
                        else node("filterDist", c.rel, s, ref))
            owner = self._super_owner(frame, where)
            return (node("filterRel", "Rank" + c.rel, k, s, owner) if k and k > 1
                    else node("filterRel", c.rel, s, owner))
        if c.kind == "dir":
            return self._dir(c, s, frame)
        raise InvalidGoalError(f"internal: unhandled clause {c}")

    def _named_slots(self, c: Clause, s: Node) -> Node:
        """"top shelf", "the right column", "bottom-left slot": the row / column index the word names
        on this shelf (relations.shelf_row / shelf_column), so the program shows the number."""
        regions = self.scene.regions
        if not regions:
            raise TargetNotFoundError(f"'{' '.join(c.args)}' names a shelf row or column, but the scene has no "
                                      f"shelf slots; it holds: {self._contents()}")
        row_w, col_w = (c.args if c.rel == "Named2D" else
                        (c.args[0], None) if c.rel == "NamedRow" else (None, c.args[0]))
        axes = rel.frame_axes(rel.Frame.RELATIVE, viewer=self.scene.viewer)
        try:
            if row_w:
                s = node("filterAttr", "Index1D", rel.shelf_row(regions, row_w), s)
            if col_w:
                s = node("filterAttr", "Column", rel.shelf_column(regions, col_w, axes), s)
        except ValueError as e:
            raise AmbiguousError(str(e)) from None
        return s

    def _super_owner(self, frame, where) -> Sym:
        if frame is not None:
            if frame.rel == "viewer":
                return Sym("viewer")
            if frame.rel == "of":
                return self._ref(frame.args[0])
        if where is not None:   # "the leftmost book on the table": the table's own frame
            return Sym("SHELF" if where.rel == "shelf" else "TABLE")
        return Sym("viewer")

    def _dir(self, c: Clause, s: Node, frame) -> Node:
        kind, a = c.rel, c.args
        if kind == "Clock":
            ref = self._ref(a[1])
            return node("filterOri", "ClockPosition", a[0], s, ref, self._owner(ref, frame, f"{a[0]} o'clock"))
        word, ref = a[0], self._ref(a[1])
        if kind == "Vert" and "filterSlot" in str(s) and not self._any_slot_vertical:
            kind = "DirectV"    # "(the slot) above the globe" is the one in its column ("a slot above": any higher)
        if kind == "Vert" and word == "under" and "filterSlot" not in str(s):
            kind = "DirectV"    # "the book under the mug" on a table: the one it rests on, not any lower object
        if kind == "Vert" and word == "under":
            word = "below"
        if kind == "Vert":
            return node("filterOri", "Above" if word == "above" else "Below", s, ref)
        if kind == "DirectV":
            up = word in ("above", "over")
            # above/below go by gravity whatever the reference faces: unless a frame is named,
            # "the same column" is judged across the camera's line of sight, as the task generator does
            owner = (self._owner(ref, frame, word) if frame is not None else
                     self._note(ref, Sym("viewer"), word, "above and below go by gravity; the column as the camera sees it"))
            return node("filterOri", "DirectAbove" if up else "DirectBelow", s, ref, owner)
        if kind == "Direct":
            return node("filterOri", "Direct" + word.capitalize(), s, ref, self._owner(ref, frame, word))
        r = {"left": "Left", "right": "Right", "front": "Front", "back": "Behind"}[word]
        return node("filterOri", r, s, ref, self._owner(ref, frame, word))

    # metric placements on a table (TIGeR)
    def _metric_program(self, clauses, frame, poses) -> Node:
        kw = _place_pose_kwargs(poses)
        into = next((c for c in clauses if c.kind == "into"), None)
        if into is not None:          # "put it in the bowl": inside an open container
            return node("place", None, node("metric", "In", self._ref(into.args[0])), **kw)
        m = next((c for c in clauses if c.kind == "metric"), None)
        if m is not None:
            word, dist, ref = m.args[0], m.args[1], self._ref(m.args[2])
            if word == "above":
                return node("place", None, node("metric", "Above", dist, ref), **kw)
            r = {"left": "Left", "right": "Right", "front": "Front", "back": "Behind"}[word]
            return node("place", None, node("metric", r, dist, ref, self._owner(ref, frame, word)), **kw)
        b = next((c for c in clauses if c.kind == "between"), None)
        if b is not None:
            return node("place", None, node("metric", "Between", self._ref(b.args[0]), self._ref(b.args[1])), **kw)
        d = next((c for c in clauses if c.kind == "dir"), None)
        if d is not None:
            if d.rel == "Clock":
                ref = self._ref(d.args[1])
                return node("place", None, node("metric", "Clock", d.args[0], rel.ADJACENT_GAP_M, ref,
                                                self._owner(ref, frame, f"{d.args[0]} o'clock")), **kw)
            word, ref = d.args[0], self._ref(d.args[1])
            if word in ("above", "over") or d.rel == "Vert" and word == "above":
                return node("place", None, node("metric", "Above", 0.0, ref), **kw)
            if word in ("below", "under", "beneath", "underneath"):
                raise InvalidGoalError(f"cannot place a book below {ref.name} on a table; place it beside or on top")
            r = {"left": "Left", "right": "Right", "front": "Front", "back": "Behind"}[word]
            return node("place", None, node("metric", r, rel.ADJACENT_GAP_M, ref, self._owner(ref, frame, word)), **kw)
        e = next((c for c in clauses if c.kind == "dist" and c.rel == "EqualTo"), None)
        if e is not None:
            return node("place", None, node("metric", "Near", e.args[0], self._ref(e.args[1])), **kw)
        near = next((c.args[0] for c in clauses if c.kind == "next"), None) or next(
            (c.args[1] for c in clauses if c.kind == "super" and c.rel == "Closest" and c.args[1]), None)
        if near is not None:      # "next to the mug", "near the mug": beside it, on its freest side
            return node("place", None, node("metric", "Near", rel.ADJACENT_GAP_M, self._ref(near)), **kw)
        if not self.scene.regions:
            raise InvalidGoalError("the instruction does not say where to place the book, and the scene has no "
                                   "shelf slots; say e.g. '10 cm to the right of the jar'")
        raise InvalidGoalError("internal: no placement found")


def _place_pose_kwargs(poses: list[Clause]) -> dict:
    if not poses:
        return {"pose": "keep"}     # no pose word: keep the held object's pose class (issue 20), never add one
    p = poses[0]
    if p.rel == "Flat":
        return {"pose": "flat"}
    if p.rel == "Tilted":
        return {"pose": "tilted"}
    if p.rel == "TiltDegree":
        return {"pose": "tilted", "tilt_deg": float(p.args[0])}
    return {"pose": "upright"}


_OPPOSITE = [("LeftMost", "Right"), ("RightMost", "Left"), ("LeftMost", "RightMost"), ("Closest", "Farthest"), ("Left", "Right"),
             ("Front", "Behind"), ("Upper", "Lower"), ("Small", "Large"), ("Small", "Medium"), ("Medium", "Large"),
             ("Empty", "NonEmpty"), ("Flat", "Vertical"), ("Flat", "Tilted"), ("Vertical", "Tilted"),
             ("Empty", "Emptiest"), ("Largest", "Smallest"), ("Tallest", "Shortest")]
# Directions to one reference that exclude each other ("left of the mug" and "right of the mug").
_OPPOSITE_DIR = [({"left"}, {"right"}), ({"front"}, {"back"}),
                 ({"above", "over"}, {"below", "under", "beneath", "underneath"})]
_DIR_WORDS = {"left": "left of", "right": "right of", "front": "in front of", "back": "behind"}
_SIZE_TAG = {"largest": "Largest", "biggest": "Largest", "smallest": "Smallest", "tallest": "Tallest",
             "shortest": "Shortest"}


def _contradiction(a: str, b: str) -> AmbiguousError:
    return AmbiguousError(f"the instruction contradicts itself: {a!r} and {b!r} cannot both hold for one target; "
                          "say which you mean")


def _check_contradictions(clauses: list[Clause], label=lambda tok: str(tok)) -> None:
    """Words that cannot hold together ("the leftmost book on the right", "the leftmost rightmost
    book", "left of the mug ... right of the mug") are refused as AMBIGUOUS naming both, never
    planned (or reported as a target that is not in the scene). `label` names a reference token."""
    tags = set()
    for c in clauses:
        if c.kind == "super" and c.rel == "Size":
            tags.add(_SIZE_TAG.get(str(c.args[1]).lower(), "Size"))
        elif c.kind in ("attr", "super"):
            tags.add(c.rel)
        elif c.kind == "pose":
            tags.add("Tilted" if c.rel == "TiltDegree" else c.rel)
        elif c.kind == "part":
            tags.add(_side(c.rel))
    for a, b in _OPPOSITE:
        if a in tags and b in tags:
            raise _contradiction(_WORD.get(a, a), _WORD.get(b, b))
    # one superlative asked with two ranks: "the leftmost second leftmost book"
    ranks: dict[str, set] = {}
    for c in clauses:
        if c.kind == "super" and c.rel in ("LeftMost", "RightMost", "Closest", "Farthest", "Size"):
            key = c.rel if c.rel != "Size" else _SIZE_TAG.get(str(c.args[1]).lower(), "Size")
            ranks.setdefault(key, set()).add(int(c.args[0] or 1))
    for key, ks in ranks.items():
        if len(ks) > 1:
            a, b = sorted(ks)[:2]
            word = _WORD.get(key, key.lower())
            raise _contradiction(f"{_ordinal(a)}{word}", f"{_ordinal(b)}{word}")
    # two directions from the same reference that exclude each other, or two clock hours of it
    seen: dict[tuple, str] = {}
    for c in clauses:
        if c.kind != "dir":
            continue
        if c.rel == "Clock":
            ref = _ref_key(c.args[1])
            prev = seen.get(("clock", ref))
            said = f"{c.args[0]} o'clock of {label(c.args[1])}"
            if prev is not None and prev != said:
                raise _contradiction(prev, said)
            seen[("clock", ref)] = said
            continue
        word, ref = str(c.args[0]), _ref_key(c.args[1])
        for i, (one, other) in enumerate(_OPPOSITE_DIR):
            for side, opp in ((one, other), (other, one)):
                if word in side:
                    said = f"{_DIR_WORDS.get(word, word)} {label(c.args[1])}"
                    if (i, ref, frozenset(opp)) in seen:
                        raise _contradiction(seen[(i, ref, frozenset(opp))], said)
                    seen[(i, ref, frozenset(side))] = said
    less = [c.args[0] for c in clauses if c.kind == "dist" and c.rel == "LessThan"]
    more = [c.args[0] for c in clauses if c.kind == "dist" and c.rel == "MoreThan"]
    if less and more and max(more) >= min(less):
        raise AmbiguousError(f"nothing can be both closer than {min(less)} m and farther than {max(more)} m")
    rows = {c.args[0] for c in clauses if c.kind == "attr" and c.rel in ("Index1D", "Index2D")}
    named = {rel.LEVEL_WORDS.get(c.args[0]) for c in clauses if c.kind == "attr" and c.rel in ("NamedRow", "Named2D")}
    if len(rows) > 1 or len(named) > 1:
        raise AmbiguousError(f"the instruction names several rows {sorted(rows)}; name one")


def _ref_key(tok) -> str:
    tok = "refviewer" if tok is None else str(tok)
    return tok[4:] if tok.startswith("poss") else tok


def _ordinal(k: int) -> str:
    return "" if k == 1 else {v: k_ for k_, v in _ORD.items()}.get(k, f"{k}th") + " "


_WORD = {"LeftMost": "leftmost", "RightMost": "rightmost", "Right": "on the right", "Left": "on the left",
         "Closest": "closest", "Farthest": "farthest", "Front": "at the front", "Behind": "at the back",
         "Upper": "upper part", "Lower": "lower part", "Flat": "lying flat", "Vertical": "upright",
         "Tilted": "tilted", "Largest": "largest", "Smallest": "smallest", "Tallest": "tallest",
         "Shortest": "shortest", "Small": "small", "Medium": "medium-sized", "Large": "large", "Empty": "empty",
         "NonEmpty": "partly occupied", "Emptiest": "emptiest"}


# --- "the X" with several candidates ----------------------------------------------------------
# A definite singular reference ("the book lying flat") promises one object. When the words leave
# several and nothing in them chooses between them (no superlative or rank: "the leftmost ...",
# "the second ... from the left", "the book closest to you"), the planner asks which instead of
# taking one: AMBIGUOUS naming the candidates. "a"/"an"/"any"/"one of the"/a plural may take any.
_INDEFINITE = {"a", "an", "any", "some", "one", "another", "either", "each", "every"}
_HEAD_SINGULAR = {"book", "one", "object", "item", "thing"}
_HEAD_PLURAL = {"books", "ones", "objects", "items", "things"}
_PARTITIVE = {"one", "any", "either", "some", "each", "among", "of"}   # "one of the", "any of the", "among the"
_NP_BARRIER = {"from", "on", "in", "at", "of", "to", "with", "and", "then", "up", "down", "off", "into", "onto",
               "between", "behind", "near", "nextto", "dnextto", "is", "are", "it", "them"}


@lru_cache(maxsize=1)
def _np_barrier() -> frozenset[str]:
    """Words that end a noun phrase: prepositions, "and", pronouns and the verbs of the grammar."""
    return frozenset(_NP_BARRIER) | words_of("verb")
_CHOICE = ("super",)        # clause kinds that choose among candidates (superlatives and ranks)
_THE_PHRASE = re.compile(r"\b(?:the|teh)\s+(?:[\w'-]+\s+){0,4}?(?:books?|ones?|objects?|items?|things?)\b", re.I)
_POLITE_TAIL = re.compile(r"(?:[\s,;.!?]+(?:please|pls|plz|thanks|thank you|thx|cheers|for me|now))+[\s,;.!?]*$", re.I)


def _determiner(t: str, singular=_HEAD_SINGULAR, plurals=_HEAD_PLURAL, groups=True) -> tuple[str | None, bool]:
    """(determiner, plural) of the target noun phrase in the normalised, reference-marked text:
    the first head noun ("book", "one", "books"...) and the article before it, over its
    premodifiers ("the small flat book", "the rank2 leftmost book"). "one of the books", a bare
    "one" ("grab one that is lying down") and "any" are indefinite; a plural head is plural. With
    no head noun, the first article of the text. `singular`, `plurals`: the head nouns (a slot's
    for a place); `groups`: whether a group of scene objects (refnps, refnpp) is a head."""
    words = t.split()
    for i, w in enumerate(words):
        if w not in singular and w not in plurals and not (groups and w.startswith(("refnps", "refnpp"))):
            continue
        plural = w in plurals or w.startswith("refnpp")
        j = i - 1
        while j >= 0 and words[j] not in _np_barrier() and words[j] not in ("the", "this", "that") \
                and words[j] not in _INDEFINITE:
            j -= 1
        if j < 0 or words[j] in _np_barrier():
            return ("one" if w == "one" else None), plural
        det = "the" if words[j] in ("this", "that") else words[j]
        if det == "the" and j > 0 and words[j - 1] in _PARTITIVE:
            return "one", plural                    # "one of the flat books", "among the books"
        return det, plural
    return next((w for w in words if w == "the" or w in _INDEFINITE), None), False


def target_reference(text: str, t: str, clauses: list[Clause]) -> dict:
    """How the instruction refers to its target (for `check_target_reference`): the determiner,
    whether the head noun is plural, whether a superlative or rank chooses among the candidates,
    and the noun phrase in the user's own words (for the message)."""
    det, plural = _determiner(t)
    m = _THE_PHRASE.search(text)
    phrase = text[m.start():] if m else text.strip()
    phrase = _POLITE_TAIL.sub("", phrase).strip().rstrip(".,;!?").strip()
    return {"determiner": det, "plural": plural,
            "choice": any(c.kind in _CHOICE for c in clauses), "phrase": phrase}


_SLOT_HEADS, _SLOT_HEADS_PLURAL = {"slot", "spot", "place", "space", "gap"}, {"slots", "spots", "places", "spaces", "gaps"}


def slot_reference(t: str, clauses: list[Clause]) -> dict:
    """How a place into shelf slots refers to its slot: "the (empty) spot ...", and a slot named by
    its relation to one thing ("next to the jar", "between the jar and the mug", "to the left of the
    tea box"), promise one slot; "a slot", "slots", "on the top shelf" may take any. A superlative
    chooses ("the emptiest slot")."""
    det, plural = _determiner(t, _SLOT_HEADS, _SLOT_HEADS_PLURAL, groups=False)
    if not any(w in _SLOT_HEADS | _SLOT_HEADS_PLURAL for w in t.split()):
        det = "the" if any(c.kind in ("next", "between") or (c.kind, c.rel) == ("dir", "Side") for c in clauses) else None
    return {"determiner": det, "plural": plural, "choice": any(c.kind in _CHOICE for c in clauses), "slot": True}


def check_target_reference(parsed: Parsed, targets: list[str], scene: Scene) -> None:
    """Raise AmbiguousError when a pick says "the X" (one object), several objects are X, and no
    word chooses between them, or a place promises one slot (`slot_reference`) that several fit.
    Two boxes of one solid (`rel.one_object`) are one object. Called on the executed answer set
    (ids of `scene`), before anything moves."""
    ref = parsed.reference
    if not ref or ref.get("determiner") != "the" or ref.get("plural") or len(targets) <= 1:
        return
    if rel.one_object([scene.get(t) for t in targets]):
        return
    if ref.get("choice") and ref.get("slot"):
        return          # "the emptiest slot": slots tied for it are equally the emptiest
    if ref.get("slot"):
        raise AmbiguousError(f"the words name one place and {len(targets)} slots fit them ({', '.join(targets)}); "
                             "say which, e.g. 'the left one' or 'row 1, column 2'")
    if parsed.program.op != "pick":
        return
    # the user's words from their "the" on ("pick up the brown carton": "the brown carton", where
    # the message once said "the book"); a generic phrase when they wrote no "the"
    the = re.search(r"\b(?:the|teh)\s+(.+)$", ref["phrase"], flags=re.I)
    rest = the.group(1) if the else "object"
    phrase = f"the {rest}"
    article = "an" if rest[:1].lower() in "aeiou" else "a"
    raise AmbiguousError(
        f'"{phrase}" matches {len(targets)} objects ({", ".join(targets)}); say which, e.g. "the leftmost '
        f'{rest}", or say "{article} {rest}" to take any')


def parse_instruction(scene: Scene, text: str, task_kind: str = "auto") -> Node:
    """The program for an instruction on a scene (raises a SpatialManipError subclass when it cannot)."""
    return InstructionParser(scene).parse(text, task_kind).program


def _without_possessive(name: str) -> str:
    """"teddy bear's" -> "teddy bear": the object the person named, for a not-found message."""
    return re.sub(r"'s?$", "", name)
