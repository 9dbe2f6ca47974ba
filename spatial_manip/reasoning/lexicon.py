"""The scene's lexicon (issue 38): every noun phrase that names something in this scene, with
the program fragment it stands for. Built from the scene (labels, their last words, colours that
perception reported, `taxonomy` groups and synonyms), so the parser reads "the white mug", "a
piece of fruit", "the red thing" or "the green book" without a rule per word.

Each entry is one production: PHRASE -> FRAGMENT over the graspable set TABLE, e.g.
    "mug"         -> filterLabel(mug, TABLE)
    "white mug"   -> filterColour(white, filterLabel(mug, TABLE))
    "fruit"       -> filterLabel(fruit, TABLE)           (taxonomy: apple, banana)
    "red thing"   -> filterColour(red, TABLE)
    "objects"     -> TABLE                                (anything graspable)
with the ids it names in this scene and whether the phrase is plural. A phrase naming several
objects is a set the parser filters further (or refuses as AMBIGUOUS where one object is due).
"""
from __future__ import annotations

from dataclasses import dataclass

from spatial_manip.perception.attributes import ALIASES, COLOUR_NAMES, LIGHTING_NEIGHBOURS
from spatial_manip.program_text import Node, Sym, node
from spatial_manip.reasoning.taxonomy import GROUPS, SYNONYMS
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


def plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def graspable(scene: Scene) -> list[SceneObject]:
    return [o for o in scene.objects if not o.held and o.category not in _FURNITURE]


def label_words(o: SceneObject) -> set[str]:
    """The words naming `o` itself: its label and the label's last word ("ceramic jar", "jar")."""
    label = o.label.lower().replace("_", " ").strip()
    return {label, label.split()[-1]}


def kind_matches(word: str, o: SceneObject) -> str | None:
    """How `word` names `o` ("label", "synonym", or "taxonomy:<group>"), or None."""
    word = word.lower().strip()
    own = label_words(o) | {o.category.lower()}
    if word in own:
        return "label"
    if any(word in syn and own & set(syn) for syn in SYNONYMS):
        return "synonym"
    if word in GROUPS and own & set(GROUPS[word]):
        return f"taxonomy:{word}"
    return None


def colours(o: SceneObject) -> list[str]:
    return [str(c).lower() for c in o.extra.get("colour_names", []) or []]


def colour_matches(word: str, o: SceneObject) -> bool:
    return ALIASES.get(word, word) in colours(o)


def coloured(word: str, objs) -> tuple[list[SceneObject], tuple[str, ...]]:
    """(the objects of `objs` a colour word names, the lighting neighbours it was read as). The
    objects of that colour; when none is, those whose main colour is the word's lighting neighbour
    (a white mug under a dim light reads gray, `attributes.LIGHTING_NEIGHBOURS`), else those with
    the neighbour among their names: a person's colour word is the object's colour in good light."""
    word = ALIASES.get(word, word)
    exact = [o for o in objs if colour_matches(word, o)]
    near = LIGHTING_NEIGHBOURS.get(word, ())
    if exact or not near:
        return exact, ()
    main = [o for o in objs if colours(o)[:1] and colours(o)[0] in near]
    return main or [o for o in objs if set(colours(o)) & set(near)], near


def scene_lexicon(scene: Scene) -> dict[str, Entry]:
    """Every phrase that names graspable objects of `scene` (books by colour only: "book" itself
    stays the parser's own noun)."""
    objs = graspable(scene)
    kinds: set[str] = set()
    for o in objs:
        words = label_words(o) if o.category != "book" else set()
        kinds |= words
        for syn in SYNONYMS:
            if words & set(syn):
                kinds |= set(syn)
        kinds |= {g for g, members in GROUPS.items() if (label_words(o) | {o.category}) & set(members)}
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
            add(plural(kind), frag, True, members)
        if kind in GROUPS:      # "a piece of fruit", "pieces of fruit"
            add(f"piece of {kind}", frag, False, members)
            add(f"pieces of {kind}", frag, True, members)
    for head in GENERIC_HEADS:
        add(head, table, False, objs)
        add(plural(head), table, True, objs)
    seen = {c for o in objs for c in colours(o)}
    for colour in seen | {c for c, near in LIGHTING_NEIGHBOURS.items() if seen & set(near)}:
        names = [colour] + [a for a, c in ALIASES.items() if c == colour]
        for word in names:
            in_colour = coloured(colour, objs)[0]
            for head in GENERIC_HEADS + ("one",):
                add(f"{word} {head}", node("filterColour", None, colour, table), False, in_colour)
                add(f"{word} {plural(head)}", node("filterColour", None, colour, table), True, in_colour)
            add(f"something {word}", node("filterColour", None, colour, table), False, in_colour)
            books = coloured(colour, [o for o in objs if o.category == "book"])[0]
            book_frag = node("filterColour", None, colour, node("filterBook", None, table))
            add(f"{word} book", book_frag, False, books)
            add(f"{word} books", book_frag, True, books)
            for kind in kinds:
                if " " in kind:
                    continue
                frag = node("filterColour", None, colour, node("filterLabel", None, kind, table))
                members = coloured(colour, [o for o in objs if kind_matches(kind, o)])[0]
                add(f"{word} {kind}", frag, False, members)
                add(f"{word} {plural(kind)}", frag, True, members)
    return lex
