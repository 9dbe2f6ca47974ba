"""English plurals of the nouns that name objects, in one place: the parser's lexicon reads "the
tomatoes" and "the boxes" with them, and perception's naming by the instruction's words
(perception/labelling.name_from_words) finds "the two buses" with them, so the two cannot disagree
about which word is whose plural. Plain string rules, no dictionary: a noun may take more than one
plural form ("tomatoes" and "tomatos" are both read), and a plural may come from more than one
singular ("cookies": cookie or cooky); every form `plurals` gives reads back through `singulars`.
"""
from __future__ import annotations

_SIBILANT = ("s", "x", "z", "ch", "sh")


def plural(word: str) -> str:
    """The plural a phrase is written with: "box" boxes, "bus" buses, "berry" berries, "mug" mugs
    (a noun ending in "o" takes "s", "photos"; `plurals` also reads "tomatoes")."""
    if word.endswith(_SIBILANT):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def plurals(word: str) -> set[str]:
    """Every form read as a plural of `word`: `plural` and the forms people also write ("tomatoes"
    besides "tomatos", "buss" never: a sibilant takes "es" only)."""
    forms = {plural(word)}
    if word.endswith("o"):
        forms.add(word + "es")
    if word.endswith("y"):
        forms.add(word + "s")            # "toys", and "ladys" read rather than refused
    return forms


def singulars(word: str) -> set[str]:
    """What a plural may be the plural of ("glasses": glass, "boxes": box, "buses": bus or buse,
    "tomatoes": tomato or tomatoe, "chocolates": chocolate; "-ies" either way: "berries" berry,
    "cookies" cookie); a word that is no plural is itself ("glass", "hummus")."""
    if word.endswith("ies") and len(word) > 4:
        return {word[:-3] + "y", word[:-1]}
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return {word[:-2]}
    if word.endswith(("ses", "oes")) and len(word) > 4:
        return {word[:-2], word[:-1]}    # "buses" bus, "houses" house; "tomatoes" tomato, "shoes" shoe
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return {word[:-1]}
    return {word}

