"""Natural-language phrasings of the task families (ESPIRE Table 10's examples plus paraphrases).

Each family has several templates; the generator picks one with its seeded Generator and fills
the fields:

    {ref} {ref2}   a reference phrase ("the ceramic jar", "you", "the robot")
    {refs}         possessive of the reference ("the mirror's", "your")
    {k}            an ordinal word ("second")
    {d} {d2}       a distance with its unit ("80 centimeters", "1.5 meters")
    {h}            a size with its unit ("20 centimeters")
    {hour}         a clock hour (1..12)
    {deg}          a tilt in degrees
    {row} {col}    shelf indices
    {frame}        how the frame is named (", from your point of view" / ", from its own point of view")
    {pose}         how the book should be placed (" upright", " lying flat", "")

The words are the ones the planner's parser understands (issue 4); keep them plain.

A pick family whose filter can leave several books and has no superlative or rank to choose one
says "a book" (or "one of the books"), never "the book": the checker accepts any book of the
answer set, while the planner reads "the X" with several X as AMBIGUOUS and asks which (issue 24).
"the" stays where the words choose ("the leftmost book", "the book closest to you"). Each family
keeps its number of templates, so a seed draws the same templates as before.
"""
from __future__ import annotations

import numpy as np

ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}

# --- pick from the table --------------------------------------------------------------------------
PICK: dict[str, list[str]] = {
    "Attribute/Small": ["take a small book from the table", "pick up a small book", "grab one of the small books"],
    "Attribute/Medium": ["take a medium-sized book", "pick up a medium-sized book from the table",
                         "grab a medium book"],
    "Attribute/Large": ["take a large book", "pick up a large book from the table", "grab one of the big books"],
    "Attribute/Height": ["take a book around {h} high", "pick up a book that is about {h} tall",
                         "grab a book roughly {h} high"],
    "Distance/Closest": ["take a book among the books closest to {ref}", "pick up the book nearest to {ref}",
                         "grab the book closest to {ref}"],
    "Distance/Farthest": ["take a book among the books farthest from {ref}", "pick up the book farthest from {ref}",
                          "grab the book that is farthest away from {ref}"],
    "Distance/RankClosest": ["take a book among the books {k} closest to {ref}",
                             "pick up the {k} closest book to {ref}", "grab the book that is {k} nearest to {ref}"],
    "Distance/RankFarthest": ["take a book among the books {k} farthest from {ref}",
                              "pick up the {k} farthest book from {ref}"],
    "Distance/LessThan": ["take a book within {d} of {ref}", "pick up a book less than {d} away from {ref}",
                          "grab a book closer than {d} to {ref}"],
    "Distance/MoreThan": ["take a book more than {d} away from {ref}", "pick up a book farther than {d} from {ref}",
                          "grab a book at least {d} away from {ref}"],
    "Distance/EqualTo": ["take a book about {d} away from {ref}", "pick up a book roughly {d} from {ref}",
                         "grab a book around {d} away from {ref}"],
    "Distance/Range": ["take a book {d} to {d2} away from {ref}", "pick up a book between {d} and {d2} from {ref}"],
    "Relationship/Left": ["take a book on the left of the table", "pick up a book from the left side of the table",
                          "grab a book on the table's left half"],
    "Relationship/Right": ["take a book on the right of the table", "pick up a book from the right side of the table",
                           "grab a book on the table's right half"],
    "Relationship/Front": ["take a book at the front of the table", "pick up a book from the front of the table",
                           "grab a book from the front half of the table"],
    "Relationship/Behind": ["take a book at the back of the table", "pick up a book from the back of the table",
                            "grab a book on the far half of the table"],
    "Relationship/LeftMost": ["take the leftmost book{frame}", "pick up the book furthest to the left{frame}",
                              "grab the leftmost book{frame}"],
    "Relationship/RightMost": ["take the rightmost book{frame}", "pick up the book furthest to the right{frame}",
                               "grab the rightmost book{frame}"],
    "Relationship/RankLeftMost": ["take the {k} leftmost book{frame}", "pick up the {k} book from the left{frame}"],
    "Relationship/RankRightMost": ["take the {k} rightmost book{frame}", "pick up the {k} book from the right{frame}"],
    "Relationship/Between": ["take a book between {ref} and {ref2}", "pick up a book that lies between {ref} and {ref2}",
                             "grab a book in between {ref} and {ref2}"],
    "Orientation/Flat": ["take a flat-lying book from the table", "pick up a book lying flat", "grab a book that lies flat"],
    "Orientation/Vertical": ["take a book standing upright", "pick up an upright book", "grab a book that stands upright"],
    "Orientation/Tilted": ["take a book at a tilt", "pick up a tilted book", "grab a book that leans at an angle"],
    "Orientation/TiltDegree": ["take a book tilted about {deg} degrees", "pick up a book at a tilt of about {deg} degrees",
                               "grab a book leaning roughly {deg} degrees"],
    "Orientation/Left": ["take a book to the left of {ref}{frame}", "pick up a book on {refs} left{frame}"],
    "Orientation/Right": ["take a book to the right of {ref}{frame}", "pick up a book on {refs} right{frame}"],
    "Orientation/Front": ["take a book in front of {ref}{frame}", "pick up a book that is in front of {ref}{frame}"],
    "Orientation/Behind": ["take a book behind {ref}{frame}", "pick up a book that is behind {ref}{frame}"],
    "Orientation/ClockPosition": ["take a book at {refs} {hour} o'clock{frame}",
                                  "pick up a book at {hour} o'clock of {ref}{frame}"],
}

# --- place on the shelf (the robot holds the book) ------------------------------------------------
PLACE: dict[str, list[str]] = {
    "Attribute/Empty": ["place the book{pose} in an empty slot", "put the book{pose} into an empty slot of the shelf"],
    "Attribute/NonEmpty": ["place the book{pose} in a partly occupied slot",
                           "put the book{pose} into a slot that is partly occupied"],
    "Attribute/Emptiest": ["place the book{pose} in the emptiest slot", "put the book{pose} into the emptiest slot"],
    "Attribute/Width": ["place the book{pose} in a slot around {h} wide", "put the book{pose} into a slot about {h} wide"],
    "Attribute/Index1D": ["place the book{pose} at row {row} of the shelf", "put the book{pose} on row {row} of the shelf"],
    "Attribute/Index2D": ["place the book{pose} at row {row}, column {col} of the shelf",
                          "put the book{pose} in the slot at row {row}, column {col}"],
    "Distance/Closest": ["place the book{pose} in the slot closest to {ref}",
                         "put the book{pose} into the slot nearest to {ref}"],
    "Distance/Farthest": ["place the book{pose} in the slot farthest from {ref}",
                          "put the book{pose} into the slot farthest from {ref}"],
    "Distance/LessThan": ["place the book{pose} in a slot within {d} of {ref}",
                          "put the book{pose} into a slot less than {d} away from {ref}"],
    "Distance/MoreThan": ["place the book{pose} in a slot more than {d} away from {ref}",
                          "put the book{pose} into a slot farther than {d} from {ref}"],
    "Relationship/Left": ["place the book{pose} in a slot on the left of the shelf",
                          "put the book{pose} into a slot on the shelf's left side"],
    "Relationship/Right": ["place the book{pose} in a slot on the right of the shelf",
                           "put the book{pose} into a slot on the shelf's right side"],
    "Relationship/Upper": ["place the book{pose} in a slot in the upper part of the shelf",
                           "put the book{pose} into a slot on the top half of the shelf"],
    "Relationship/Lower": ["place the book{pose} in a slot in the lower part of the shelf",
                           "put the book{pose} into a slot on the bottom half of the shelf"],
    "Relationship/LeftMost": ["place the book{pose} in a leftmost slot{frame}",
                              "put the book{pose} into the leftmost slot{frame}"],
    "Relationship/RightMost": ["place the book{pose} in a rightmost slot{frame}",
                               "put the book{pose} into the rightmost slot{frame}"],
    "Relationship/RankLeftMost": ["place the book{pose} in a {k} leftmost slot{frame}",
                                  "put the book{pose} into the {k} slot from the left{frame}"],
    "Relationship/RankRightMost": ["place the book{pose} in a {k} rightmost slot{frame}",
                                   "put the book{pose} into the {k} slot from the right{frame}"],
    "Orientation/Vertical": ["place the book upright on the shelf", "put the book on the shelf standing upright",
                             "stand the book upright on the shelf"],
    "Orientation/Flat": ["place the book lying flat on the shelf", "put the book flat on the shelf",
                         "lay the book flat on the shelf"],
    "Orientation/Left": ["place the book{pose} in a slot to {refs} left{frame}",
                         "put the book{pose} into a slot on {refs} left{frame}"],
    "Orientation/Right": ["place the book{pose} in a slot to {refs} right{frame}",
                          "put the book{pose} into a slot on {refs} right{frame}"],
    "Orientation/Above": ["place the book{pose} in a slot above {ref}", "put the book{pose} into a slot higher than {ref}"],
    "Orientation/Below": ["place the book{pose} in a slot below {ref}", "put the book{pose} into a slot lower than {ref}"],
    "Orientation/DirectAbove": ["place the book{pose} in a slot directly above {ref}",
                                "put the book{pose} into a slot right above {ref}"],
    "Orientation/DirectBelow": ["place the book{pose} in a slot directly below {ref}",
                                "put the book{pose} into a slot right below {ref}"],
    "Orientation/DirectLeft": ["place the book{pose} in the slot immediately to the left of {ref}{frame}",
                               "put the book{pose} into the slot right next to {ref} on the left{frame}"],
    "Orientation/DirectRight": ["place the book{pose} in the slot immediately to the right of {ref}{frame}",
                                "put the book{pose} into the slot right next to {ref} on the right{frame}"],
    "Orientation/ClockPosition": ["place the book{pose} in a slot at {refs} {hour} o'clock{frame}",
                                  "put the book{pose} into a slot at {hour} o'clock of {ref}{frame}"],
}

# --- TIGeR metric placements ------------------------------------------------------------------------
METRIC: dict[str, list[str]] = {
    "Metric/Left": ["place the book {d} to the left of {ref}", "put it {d} left of {ref}"],
    "Metric/Right": ["place the book {d} to the right of {ref}", "put it {d} right of {ref}"],
    "Metric/Front": ["place the book {d} in front of {ref}", "put it {d} in front of {ref}"],
    "Metric/Behind": ["place the book {d} behind {ref}", "put it {d} behind {ref}"],
}

# --- the objects suite (sim/object_families.py): everyday objects, ESPIRE-style and everyday words.
# Unlike the book tables above, these are not limited to what the planner's reader understands
# today (issue 38): they are what people say.
#   {cat} {cats}   a category and its plural ("mug", "mugs")   {colour} a colour name from the pixels
#   {size}         smaller | bigger | taller | shorter          {side}   left | right
#   {near}         "next to" | "closest to"                     {ref}    "the ceramic jar", "the bowl"
OBJECTS_PICK: dict[str, list[str]] = {
    "Objects/Category": ["pick up the {cat}", "take the {cat} from the table", "could you hand me the {cat}?",
                         "grab the {cat}"],
    "Objects/Colour": ["pick up the {colour} {cat}", "take the {colour} {cat}", "could you pass me the {colour} {cat}?",
                       "I need the {colour} {cat}, please"],
    "Objects/Size": ["pick up the {size} {cat}", "take the {size} of the two {cats}", "grab the {size} {cat}",
                     "hand me the {size} one of the {cats}"],
    "Objects/LeftMost": ["pick up the leftmost {cat}", "take the {cat} furthest to the left",
                         "grab the {cat} on the far left", "the {cat} on your left, please"],
    "Objects/RightMost": ["pick up the rightmost {cat}", "take the {cat} furthest to the right",
                          "grab the {cat} on the far right", "the {cat} on your right, please"],
    "Objects/Closest": ["pick up the {cat} {near} {ref}", "take the {cat} nearest to {ref}",
                        "grab the {cat} {near} {ref}", "could you get me the {cat} {near} {ref}?"],
    "Objects/ColourNear": ["pick up the {colour} {cat} next to {ref}", "grab the {colour} {cat} beside {ref}",
                           "could you hand me the {colour} {cat} by {ref}?"],
    "Objects/Left": ["pick up the {cat} to the left of {ref}", "take the {cat} on the left of {ref}",
                     "grab the {cat} left of {ref}"],
    "Objects/Right": ["pick up the {cat} to the right of {ref}", "take the {cat} on the right of {ref}",
                      "grab the {cat} right of {ref}"],
}
OBJECTS_PLACE: dict[str, list[str]] = {
    "Objects/NextTo": ["put it next to {ref}", "place the {held} next to {ref}", "set it down beside {ref}",
                       "put the {held} down by {ref}"],
    "Objects/Left": ["put it to the left of {ref}", "place the {held} on the left of {ref}",
                     "set it down left of {ref}"],
    "Objects/Right": ["put it to the right of {ref}", "place the {held} on the right of {ref}",
                      "set it down right of {ref}"],
    "Objects/Front": ["put it in front of {ref}", "place the {held} in front of {ref}",
                      "set it down just in front of {ref}"],
    "Objects/Behind": ["put it behind {ref}", "place the {held} behind {ref}", "set it down behind {ref}"],
}

FRAME_WORDS = {
    # "viewer" words are used only for a reference WITH a front taken in the viewer's frame: they
    # must be explicit, since with no frame words a careful human (and relations.default_frame)
    # reads an oriented reference in its own frame (ESPIRE A.1).
    "viewer": [", from your point of view", " as you see it"],
    "own": [", from its own point of view", ", relative to the way it faces"],
    "container": [" on the table", " from the table"],
    # the shelf's frame words are the templates' only "on the shelf" (ESPIRE place-50 read "a third
    # leftmost slot on the shelf on the shelf" when a template said it too)
    "shelf": ["", " on the shelf"],
}
POSE_WORDS = {"upright": [" upright", " standing upright"], "flat": [" lying flat", " flat"], "": [""]}


def ordinal(k: int) -> str:
    return ORDINALS.get(int(k), f"{int(k)}th")


def length_words(m: float) -> str:
    """A length as a person says it: centimetres below a metre, metres with one decimal above."""
    if m < 1.0 - 1e-9:
        return f"{int(round(m * 100))} centimeters"
    v = round(m, 1)
    return f"{v:g} meters" if v != 1.0 else "1 meter"


def ref_phrase(label: str | None) -> str:
    """'you' for the viewer, 'the robot', else 'the <label>'."""
    if label in (None, "viewer"):
        return "you"
    if label == "robot":
        return "the robot"
    return f"the {label}"


def possessive(label: str | None) -> str:
    """"your", "the mirror's"; a plural label takes the apostrophe alone ("the succulents'")."""
    if label in (None, "viewer"):
        return "your"
    plural = label.endswith("s") and not label.endswith(("ss", "us", "is", "'s"))
    return f"{ref_phrase(label)}'" if plural else f"{ref_phrase(label)}'s"


def table_for(action: str, family: str) -> list[str]:
    table = {"pick": PICK, "place": PLACE, "metric": METRIC, "objects-pick": OBJECTS_PICK,
             "objects-place": OBJECTS_PLACE}[action]
    if family not in table:
        raise KeyError(f"no phrasings for {action} family {family!r}; add them to phrasings.py")
    return table[family]


def render(rng: np.random.Generator, action: str, family: str, **fields) -> str:
    """One instruction for a family, its template and optional words chosen by `rng`."""
    templates = table_for(action, family)
    t = templates[int(rng.integers(len(templates)))]
    if "frame_kind" in fields:
        kind = fields.pop("frame_kind")
        words = FRAME_WORDS.get(kind, [""])
        fields["frame"] = words[int(rng.integers(len(words)))]
    fields.setdefault("frame", "")
    pose = fields.pop("pose_kind", "")
    pw = POSE_WORDS.get(pose, [""])
    fields["pose"] = pw[int(rng.integers(len(pw)))]
    return t.format(**fields)
