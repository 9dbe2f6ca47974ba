"""The scene's lexicon (issue 38): every noun phrase that names something in this scene, with
the program fragment it stands for. Built from the scene (labels, their last words, colours that
perception reported, `taxonomy` groups and synonyms), so the parser reads "the white mug", "a
piece of fruit", "the red thing" or "the green book" without a rule per word.

Each entry is one production: PHRASE -> FRAGMENT over the graspable set TABLE, e.g.
    "mug"         -> filterLabel(mug, TABLE)
    "white mug"   -> filterColour(white, filterLabel(mug, TABLE))
    "fruit"       -> filterLabel(fruit, TABLE)           (taxonomy: apple, banana)
    "red thing"   -> filterColour(red, TABLE)
    "dark blue mug" -> filterColour$Dark(blue, filterLabel(mug, TABLE))      (`shaded`)
    "red and white mug" -> filterColour$Any(red, filterColour$Any(white, filterLabel(mug, TABLE)))
    "objects"     -> TABLE                                (anything graspable)
with the ids it names in this scene and whether the phrase is plural. A phrase naming several
objects is a set the parser filters further (or refuses as AMBIGUOUS where one object is due).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from spatial_manip.perception.attributes import ALIASES, COLOUR_NAMES, COLOUR_RGB, LIGHTING_NEIGHBOURS, rgb_to_lab
from spatial_manip.plurals import plural, plurals, singulars
from spatial_manip.program_text import Node, Sym, node
from spatial_manip.reasoning.taxonomy import GROUPS, MATERIAL_FORMS, PACKAGING_HEADS, SYNONYMS, WHOLE_LABEL_ONLY
from spatial_manip.scene import Scene, SceneObject

GENERIC_HEADS = ("object", "thing", "item")
COLOUR_WORDS = set(COLOUR_NAMES) | set(ALIASES)
_FURNITURE = ("table", "shelf")


@dataclass(frozen=True)
class Entry:
    phrase: str
    fragment: Node | Sym
    ids: tuple[str, ...]
    plural: bool


def each_a_bunch(members: list[SceneObject]) -> bool:
    """Whether every object is named in the plural ("roses", "scissors", "grapes"): then "the
    flowers" or "the scissors" names one of them, as "the flower" would, not the set."""
    return bool(members) and all(singulars(w) != {w} for w in (spoken_label(o).split()[-1] for o in members))


def graspable(scene: Scene) -> list[SceneObject]:
    return [o for o in scene.objects if not o.held and o.category not in _FURNITURE]


def spoken_label(o: SceneObject) -> str:
    """`o`'s label as words are said: lower case, underscores as spaces ("ceramic_jar": "ceramic jar")."""
    return o.label.lower().replace("_", " ").strip()


def label_words(o: SceneObject) -> set[str]:
    """The words naming `o` itself: its label, the label's last word ("ceramic jar", "jar"), what a
    packaging label holds ("juice" of "juice carton": "the orange juice") and the packaging or form
    "of" its content ("the ball of yarn"); a material's forms with it ("the spool of ribbon", "the
    ribbon spool"; the bare form word is `form_names`)."""
    label = spoken_label(o)
    words = label.split()
    names = {label, words[-1]} | packaging_content(o)
    if len(words) > 1 and words[-1] in PACKAGING_HEADS:     # "the ball of yarn" is the yarn ball
        names.add(f"{words[-1]} of {' '.join(words[:-1])}")
    for form in form_names(o):
        names |= {f"{form} of {label}", f"{label} {form}"}
    return names | packaging_of(o)


def kin_words(o: SceneObject) -> set[str]:
    """The words by which `o` is a group's member or shares a synonym: its label_words and category,
    without a last word that counts only as the whole label (`WHOLE_LABEL_ONLY`: "wing nuts" are
    no snack)."""
    label = spoken_label(o)
    last = label.split()[-1]
    return (label_words(o) | {o.category.lower()}) - ({last} if last in WHOLE_LABEL_ONLY and last != label else set())


def packaging_of(o: SceneObject) -> set[str]:
    """The names of a label that says its packaging "of" its content ("box of chocolates"): the
    packaging ("the purple box") and the content, also in the singular ("the chocolate" may be
    the box of chocolates as much as a chocolate bar)."""
    head, of, content = spoken_label(o).partition(" of ")
    if not of or head.split()[-1] not in PACKAGING_HEADS:
        return set()
    return {head.split()[-1], content} | singulars(content)


def form_names(o: SceneObject) -> set[str]:
    """The forms the material a label names comes in ("spool" of "ribbon", `MATERIAL_FORMS`)."""
    return set(MATERIAL_FORMS.get(spoken_label(o).split()[-1], ()))


def packaging_content(o: SceneObject) -> set[str]:
    """What a packaging label holds ("cereal" of "cereal box", "ceramic" of "ceramic jar"): a name
    of the object where no other noun follows it (the parser's `_mark_references`). Not when what it
    holds is a declared group: "the toy" is one of the toys, not the toy box that holds them."""
    words = spoken_label(o).split()
    content = " ".join(words[:-1])
    return {content} if len(words) > 1 and words[-1] in PACKAGING_HEADS and content not in GROUPS else set()


def kind_matches(word: str, o: SceneObject) -> str | None:
    """How `word` names `o` ("label", "synonym", "form", or "taxonomy:<group>"), or None."""
    word = word.lower().strip()
    own = label_words(o) | {o.category.lower()}
    if word in own:
        return "label"
    if word in form_names(o):
        return "form"
    kin = kin_words(o)
    if any(word in syn and kin & set(syn) for syn in SYNONYMS):
        return "synonym"
    if word in GROUPS and kin & set(GROUPS[word]):
        return f"taxonomy:{word}"
    return None


def colours(o: SceneObject) -> list[str]:
    return [str(c).lower() for c in o.extra.get("colour_names", []) or []]


def colour_matches(word: str, o: SceneObject) -> bool:
    return ALIASES.get(word, word) in colours(o)


def coloured(word: str, objs) -> tuple[list[SceneObject], tuple[str, ...]]:
    """(the objects of `objs` a colour word names, the lighting neighbours it was read as). Those
    whose main colour (perception's first name) is the word, else those with it among their names
    ("the white mug" of an all-white mug and a red-and-white one is the white one, as the task
    generator means it); when none is, those whose main colour is the word's lighting neighbour
    (a white mug under a dim light reads gray, `attributes.LIGHTING_NEIGHBOURS`), else those with
    the neighbour among their names: a person's colour word is the object's colour in good light."""
    word = ALIASES.get(word, word)
    main = [o for o in objs if colours(o)[:1] == [word]]
    exact = main or [o for o in objs if colour_matches(word, o)]
    near = LIGHTING_NEIGHBOURS.get(word, ())
    if exact or not near:
        return exact, ()
    main = [o for o in objs if colours(o)[:1] and colours(o)[0] in near]
    return nearest_in_colour(word, main or [o for o in objs if set(colours(o)) & set(near)]), near


# Of several objects a colour word reads as its lighting neighbours, one whose measured colour lies
# this much nearer the word's own (CIELAB distance) than any other's is the one the word names.
NEIGHBOUR_SPLIT = 15.0


def nearest_in_colour(word: str, objs: list[SceneObject]) -> list[SceneObject]:
    """Of `objs`, each read as a lighting neighbour of colour `word` (`coloured`), the one whose
    measured colour (`extra["rgb"]`) is NEIGHBOUR_SPLIT nearer the word's colour than every
    other's; all of them when none is, or when a colour is unmeasured ("the" then stays
    AMBIGUOUS). "The gray bowl" of a white bowl and a black one read both: the pixels support
    neither name over the other unless one lies clearly nearer gray."""
    rgb = [o.extra.get("rgb") for o in objs]
    if len(objs) < 2 or any(c is None or len(c) != 3 for c in rgb):
        return objs
    target = rgb_to_lab(np.asarray(COLOUR_RGB[word], float))
    gaps = [float(np.linalg.norm(rgb_to_lab(np.asarray(c, float)) - target)) for c in rgb]
    best, second = sorted(gaps)[:2]
    return [objs[gaps.index(best)]] if second - best >= NEIGHBOUR_SPLIT else objs


SHADES = ("dark", "light")
DARK_MAX_L, LIGHT_MIN_L = 55.0, 45.0   # one object alone is dark at CIELAB L* <= 55, light at >= 45
SHADE_SPLIT_L = 15.0                   # two shades of one colour are told apart when their L* differ this much


def lightness(o: SceneObject) -> float | None:
    """CIELAB L* (0-100) of the object's mean colour (`extra["rgb"]`, from its pixels), None unmeasured."""
    rgb = o.extra.get("rgb")
    if rgb is None or len(rgb) != 3:
        return None
    return _lightness(tuple(float(c) for c in rgb))


@functools.lru_cache(maxsize=1024)
def _lightness(rgb: tuple) -> float:
    return float(rgb_to_lab(np.asarray(rgb, float))[0])


def shaded(shade: str, objs: list[SceneObject]) -> list[SceneObject]:
    """The objects of `objs` (of one colour) a shade word names ("dark", "light"), by lightness:
    of several whose L* spans SHADE_SPLIT_L or more, those on the shade's side of the middle (the
    navy mug of a navy and a sky-blue one, however the cell is lit); otherwise each by itself
    (DARK_MAX_L, LIGHT_MIN_L). One whose colour was not measured may be either: kept, so "the"
    stays AMBIGUOUS rather than guessed."""
    L = {o.id: lightness(o) for o in objs}
    known = [v for v in L.values() if v is not None]
    if len(known) >= 2 and max(known) - min(known) >= SHADE_SPLIT_L:
        mid = (max(known) + min(known)) / 2
        keep = (lambda v: v < mid) if shade == "dark" else (lambda v: v >= mid)
    else:
        keep = (lambda v: v <= DARK_MAX_L) if shade == "dark" else (lambda v: v >= LIGHT_MIN_L)
    return [o for o in objs if L[o.id] is None or keep(L[o.id])]


def _colour_terms(objs: list[SceneObject]):
    """(words, fragment wrapper, members of a set) for every colour term the scene's objects
    answer to: a colour or its alias ("grey"), a shade of one ("dark blue", `shaded`: by measured
    lightness, and an unmeasured object may be either, so "the navy glove box" names the one blue
    box, and of two unmeasured blue ones stays AMBIGUOUS), and the two colours of a two-coloured
    object ("red and white")."""
    seen = {c for o in objs for c in colours(o)}
    for colour in seen | {c for c, near in LIGHTING_NEIGHBOURS.items() if seen & set(near)}:
        def plain(frag, colour=colour):
            return node("filterColour", None, colour, frag)

        def members(xs, colour=colour):
            return coloured(colour, xs)[0]
        for word in [colour] + [a for a, c in ALIASES.items() if c == colour]:
            yield word, plain, members
            for shade in SHADES:     # an unmeasured object may be either shade (`shaded`)
                yield (f"{shade} {word}", lambda frag, c=colour, s=shade: node("filterColour", s.capitalize(), c, frag),
                       lambda xs, f=members, s=shade: shaded(s, f(xs)))
    pairs = {tuple(cs[:2]) for o in objs if len(cs := colours(o)) >= 2}
    for a, b in pairs | {(b, a) for a, b in pairs}:
        yield (f"{a} and {b}", lambda frag, a=a, b=b: node("filterColour", "Any", a, node("filterColour", "Any", b, frag)),
               lambda xs, a=a, b=b: [o for o in xs if {a, b} <= set(colours(o))])


def scene_lexicon(scene: Scene) -> dict[str, Entry]:
    """Every phrase that names graspable objects of `scene` (books by colour only: "book" itself
    stays the parser's own noun)."""
    objs = graspable(scene)
    kinds: set[str] = set()
    for o in objs:
        words = label_words(o) if o.category != "book" else set()
        kinds |= words | (form_names(o) if o.category != "book" else set())
        for syn in SYNONYMS:
            if words & kin_words(o) & set(syn):
                kinds |= set(syn)
        kinds |= {g for g, members in GROUPS.items() if kin_words(o) & set(members)}
    lex: dict[str, Entry] = {}

    def add(phrase: str, fragment, is_plural: bool, members: list[SceneObject]):
        if members:
            lex[phrase] = Entry(phrase, fragment, tuple(o.id for o in members), is_plural)

    table = Sym("TABLE")
    for kind in kinds:
        members = [o for o in objs if kind_matches(kind, o)]
        frag = node("filterLabel", None, kind, table)
        add(kind, frag, False, members)
        if " " not in kind or kind.split()[-1] not in ("with", "from"):
            for form in plurals(kind):      # "tomatoes" and "tomatos" alike (plurals.plurals)
                add(form, frag, not each_a_bunch(members), members)
        if kind in GROUPS:      # "a piece of fruit", "pieces of fruit"
            add(f"piece of {kind}", frag, False, members)
            add(f"pieces of {kind}", frag, True, members)
    for head in GENERIC_HEADS:
        add(head, table, False, objs)
        add(plural(head), table, True, objs)
    # each kind's members once (a colour term filters them; kind_matches is the costly part)
    # (a label or group of several words too: "the light brown teddy bear", "the orange spray bottle";
    # not "something to write with")
    by_kind = {kind: [o for o in objs if kind_matches(kind, o)] for kind in kinds if not kind.startswith("something ")}
    books = [o for o in objs if o.category == "book"]
    for term, wrap, in_colour in _colour_terms(objs):
        anything = in_colour(objs)
        if not anything:
            continue            # nothing this colour: nothing of any kind either
        for head in GENERIC_HEADS + ("one",):
            add(f"{term} {head}", wrap(table), False, anything)
            add(f"{term} {plural(head)}", wrap(table), True, anything)
        add(f"something {term}", wrap(table), False, anything)
        in_books = in_colour(books) if books else []
        if in_books:
            add(f"{term} book", wrap(node("filterBook", None, table)), False, in_books)
            add(f"{term} books", wrap(node("filterBook", None, table)), True, in_books)
        for kind, of_kind in by_kind.items():
            members = in_colour(of_kind) if of_kind else []
            if members:
                frag = wrap(node("filterLabel", None, kind, table))
                add(f"{term} {kind}", frag, False, members)
                for form in plurals(kind):
                    add(f"{term} {form}", frag, not each_a_bunch(members), members)
    return lex
