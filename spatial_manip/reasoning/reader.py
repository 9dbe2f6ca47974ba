"""The reader: a normalised instruction -> clauses, by the grammar in `reader.lark` (issue 38).

lark loads the grammar and expands it into plain rules; `read_clauses` finds every production that
matches from every word (`_Chart`, over lark's rules, building lark's trees), then keeps, where
productions overlap, the one with the highest priority declared in the grammar, then the longest,
then the leftmost. Each kept production becomes one `Clause` (`ClauseMaker`, a lark Transformer);
the words no production took are returned for the parser to judge (filler, or not understood).
`keywords()` is every word the grammar reads, `first_words(alias)` the words one production starts with.

The grammar, not this module, says what the words mean: to read a new word, edit `reader.lark`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer, Tree
from lark.lexer import PatternStr
from lark.parse_tree_builder import ParseTreeBuilder

GRAMMAR = Path(__file__).with_name("reader.lark")
ANY_BOOK = "anybook"                          # "the book" as a reference: the one book not in the hand
# the normaliser's and the reference marker's tokens, by the terminal the grammar declares for them
_VALUE_TOKENS = [("REF", re.compile(r"(?:ref|unk_)\w+")), ("POSS", re.compile(r"poss\w+")),
                 ("D", re.compile(r"d\d+(?:\.\d+)?")), ("RANK", re.compile(r"rank\d+")),
                 ("DEG", re.compile(r"deg\d+(?:\.\d+)?")), ("CLOCK", re.compile(r"clock\d+")),
                 ("INT", re.compile(r"\d+"))]
_LOOKAHEAD = ("ahead", "ahead2")              # words a production needs after it but does not read


@dataclass
class Clause:
    kind: str          # attr | pose | part | super | dist | next | dir | between | into | metric | frame | verb | noun
    rel: str
    args: tuple = ()
    pos: int = 0


def _tokens(t: str, keywords: dict) -> list[Token]:
    """One token per word: the grammar's keyword, else the value token it is, else WORD. `line`
    holds the word's index, `start_pos` its offset in the text."""
    out = []
    for i, m in enumerate(re.finditer(r"\S+", t)):
        w = m.group(0)
        kind = keywords.get(w) or next((k for k, rx in _VALUE_TOKENS if rx.fullmatch(w)), "WORD")
        out.append(Token(kind, w, start_pos=m.start(), line=i))
    return out


@dataclass(frozen=True)
class _Grammar:
    rules: dict            # rule name -> its BNF expansions (lark.grammar.Rule), alternatives in order
    callbacks: dict        # Rule -> lark's tree builder for it (inlining, aliases, [x] placeholders)
    priority: dict         # production name -> its declared priority
    keywords: dict         # keyword -> its terminal
    starts: dict           # rule name -> {terminal: its expansions that can start with that word}


@lru_cache(maxsize=1)
def _grammar() -> _Grammar:
    # lark reads the grammar, expands it into plain rules and builds each rule's trees; `_Chart` matches
    lark = Lark(GRAMMAR.read_text(), parser="earley", keep_all_tokens=True, maybe_placeholders=True)
    rules: dict[str, list] = {}
    for r in lark.rules:
        rules.setdefault(r.origin.name, []).append(r)
    productions = {s.name for r in rules["_item"] for s in r.expansion} - {"_word"}
    return _Grammar(rules, ParseTreeBuilder(lark.rules, Tree, False, False, True).create_callback(None),
                    {p: rules[p][0].options.priority for p in productions},
                    {t.pattern.value: t.name for t in lark.terminals if isinstance(t.pattern, PatternStr)},
                    _starts(rules))


def _starts(rules: dict) -> dict:
    """For each rule, its expansions indexed by the terminals that can begin them (an expansion
    that can match no words, or begins with any word, is under every terminal, as None)."""
    first = {name: set() for name in rules}
    nullable: set[str] = set()

    def first_of(expansion) -> tuple[set, bool]:
        out = set()
        for sym in expansion:
            if sym.is_term:
                return out | {sym.name}, False
            out |= first[sym.name]
            if sym.name not in nullable:
                return out, False
        return out, True

    changed = True
    while changed:
        changed = False
        for name, rs in rules.items():
            for r in rs:
                f, null = first_of(r.expansion)
                if not f <= first[name] or (null and name not in nullable):
                    first[name] |= f
                    nullable.update([name] if null else [])
                    changed = True
    starts = {}
    for name, rs in rules.items():
        index: dict = {}
        for r in rs:
            f, null = first_of(r.expansion)
            for term in (None,) if null or "WORD" in f else f:
                index.setdefault(term, []).append(r)
        starts[name] = index
    return starts


def keywords() -> frozenset[str]:
    """Every word the grammar reads."""
    return frozenset(_grammar().keywords)


def productions() -> frozenset[str]:
    """The name of every production (a rule's alias, else the rule's name): one per kind of clause."""
    g = _grammar()
    return frozenset(r.alias or r.origin.name for name in g.priority for r in g.rules[name])


def words_of(rule: str) -> frozenset[str]:
    """The keywords one rule of the grammar reads (with the rules it uses)."""
    g, seen, out, todo = _grammar(), set(), set(), [rule]
    names = {name: value for value, name in g.keywords.items()}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for r in g.rules.get(name, ()):
            for sym in r.expansion:
                if sym.is_term:
                    out.update([names[sym.name]] if sym.name in names else [])
                else:
                    todo.append(sym.name)
    return frozenset(out)


def first_words(alias: str) -> frozenset[str]:
    """The words a production's alternatives start with ("verb_place": put, place, set ...): where
    another module must recognise the same words on raw text (`compound` splits "take X and put it ...")."""
    g = _grammar()
    names = {name: value for value, name in g.keywords.items()}
    return frozenset(names[r.expansion[0].name] for rs in g.rules.values() for r in rs
                     if r.alias == alias and r.expansion and r.expansion[0].name in names)


class _Chart:
    """Every way each rule of the grammar matches the words from each position: (end, tree),
    memoised. The grammar is a finite language of short phrases, so this top-down chart is all the
    parser a production needs (lark's Earley over a whole sentence with any word between
    productions took 0.5-1 s an instruction)."""

    def __init__(self, g: _Grammar, tokens: list[Token]):
        self.g, self.tokens, self.memo = g, tokens, {}

    def match(self, name: str, i: int) -> list[tuple[int, object]]:
        key = (name, i)
        if key not in self.memo:
            self.memo[key] = self._match_rule(name, i)
        return self.memo[key]

    def _match_rule(self, name: str, i: int) -> list[tuple[int, object]]:
        out, ends = [], set()
        index = self.g.starts[name]
        rules = index.get(self.tokens[i].type, []) if i < len(self.tokens) else []
        if None in index:           # rules that can start with any word, or with none: in grammar order
            rules = sorted(rules + index[None], key=self.g.rules[name].index)
        for rule in rules:
            for j, kids in self._sequence(rule.expansion, i):
                if j not in ends:           # of several derivations of one span, the first alternative
                    ends.add(j)
                    out.append((j, self.g.callbacks[rule](kids)))
        return out

    def _sequence(self, symbols, i: int):
        partial = [(i, [])]
        for sym in symbols:
            partial = [(j, kids + [child]) for k, kids in partial for j, child in self._symbol(sym, k)]
            if not partial:
                break
        return partial

    def _symbol(self, sym, i: int):
        if not sym.is_term:
            return self.match(sym.name, i)
        if i < len(self.tokens) and (sym.name == self.tokens[i].type
                                     or sym.name == "WORD" and self.tokens[i].value.isalpha()):
            return [(i + 1, self.tokens[i])]
        return []


def _read_words(tree: Tree) -> list[int]:
    """The indices of the words a production reads (its lookahead excluded)."""
    out = []
    for c in tree.children:
        if isinstance(c, Token):
            out.append(c.line)
        elif isinstance(c, Tree) and c.data not in _LOOKAHEAD:
            out.extend(_read_words(c))
    return out


def read_clauses(t: str) -> tuple[list[Clause], list[str]]:
    """The clauses of a normalised, reference-marked instruction, in word order, and the words
    no production read. Where productions overlap: the higher priority, then the longer, then
    the one further left."""
    g = _grammar()
    tokens = _tokens(t, g.keywords)
    chart = _Chart(g, tokens)
    cands = []
    for name, prio in g.priority.items():
        for i in range(len(tokens)):
            for _, tree in chart.match(name, i):
                read = _read_words(tree)
                if read:
                    cands.append((-prio, -len(read), min(read), len(cands), read, tree))
    taken: set[int] = set()
    clauses = []
    for *_, read, tree in sorted(cands):
        if taken.isdisjoint(read):
            taken.update(read)
            c = ClauseMaker().transform(tree)
            c.pos = tokens[min(read)].start_pos
            clauses.append(c)
    clauses.sort(key=lambda c: c.pos)
    return clauses, [tok.value for i, tok in enumerate(tokens) if i not in taken]


class ClauseMaker(Transformer):
    """Each production's clause: value rules give values; a production's values, in the order
    its words say them, become the clause's args."""

    # --- values ---
    def ref(self, c):
        return str(c[-1])

    def ref_book(self, c):      # "left of the book": the one book not in the hand (the parser resolves it)
        return ANY_BOOK

    def poss(self, c):
        return str(c[0])

    def metres(self, c):
        return float(c[0][1:])

    def rank(self, c):
        return int(c[0][4:])

    def number(self, c):
        return int(c[0])

    def deg(self, c):
        return float(c[0][3:])

    def hour(self, c):
        return int(c[0][5:])

    def dist_to(self, c):
        return _values(c)[0]

    def ahead(self, c):
        return _LOOKAHEAD

    ahead2 = ahead

    def __default__(self, data, children, meta):
        if data in _MAKERS:
            kind, rel, args = _MAKERS[data](_values(children))
            return Clause(kind, rel, tuple(args))
        words = [str(c) for c in children if isinstance(c, Token)]      # a word rule: lr, side, cont ...
        return words[0]


def _values(children) -> list:
    return [c for c in children if not isinstance(c, Token) and c is not _LOOKAHEAD]


def _opt(v: list, i: int):
    return v[i] if len(v) > i else None


# production (rule or alias of reader.lark) -> (kind, rel, args) from its values
_MAKERS = {
    "frame_viewer": lambda v: ("frame", "viewer", ()),
    "frame_own": lambda v: ("frame", "own", ()),
    "frame_of": lambda v: ("frame", "of", v),
    "held": lambda v: ("noise", "", ()),
    "verb_pick": lambda v: ("verb", "pick", ()),
    "verb_place": lambda v: ("verb", "place", ()),
    "metric_side": lambda v: ("metric", "dir", (v[1], v[0], v[2])),
    "metric_front": lambda v: ("metric", "dir", ("front", *v)),
    "metric_back": lambda v: ("metric", "dir", ("back", *v)),
    "metric_above": lambda v: ("metric", "dir", ("above", *v)),
    "metric_side_owner": lambda v: ("metric", "dir", (v[2], v[0], v[1])),
    "dist_range": lambda v: ("dist", "Range", (v[0], v[1], _opt(v, 2))),
    "dist_less": lambda v: ("dist", "LessThan", (v[0], _opt(v, 1))),
    "dist_more": lambda v: ("dist", "MoreThan", (v[0], _opt(v, 1))),
    "dist_equal": lambda v: ("dist", "EqualTo", (v[0], _opt(v, 1))),
    "attr_height": lambda v: ("attr", "Height", v),
    "attr_width": lambda v: ("attr", "Width", v),
    "named_2d": lambda v: ("attr", "Named2D", v),
    "named_row": lambda v: ("attr", "NamedRow", v),
    "named_row_ahead": lambda v: ("attr", "NamedRow", v),
    "named_column": lambda v: ("attr", "NamedColumn", v),
    "named_column_slot": lambda v: ("attr", "NamedColumn", v),
    "index_row": lambda v: ("attr", "Index1D", v),
    "index_2d": lambda v: ("attr", "Index2D", v),
    "index_2d_column_first": lambda v: ("attr", "Index2D", (v[1], v[0])),
    "index_column": lambda v: ("attr", "Column", v),
    "emptiest": lambda v: ("super", "Emptiest", ()),
    "non_empty": lambda v: ("attr", "NonEmpty", ()),
    "empty": lambda v: ("attr", "Empty", ()),
    "size_extreme": lambda v: ("super", "Size", v),
    "small": lambda v: ("attr", "Small", ()),
    "medium": lambda v: ("attr", "Medium", ()),
    "large": lambda v: ("attr", "Large", ()),
    "tilt_degree": lambda v: ("pose", "TiltDegree", v),
    "flat": lambda v: ("pose", "Flat", ()),
    "vertical": lambda v: ("pose", "Vertical", ()),
    "tilted": lambda v: ("pose", "Tilted", ()),
    "direct": lambda v: ("dir", "Direct", v),
    "direct_on_side": lambda v: ("dir", "Direct", (v[-1], v[0])),
    "direct_vertical": lambda v: ("dir", "DirectV", v),
    "part": lambda v: ("part", v[0], (None,)),
    "side_of": lambda v: ("dir", "Side", v),
    "side_of_owner": lambda v: ("dir", "Side", (v[1], v[0])),
    "front": lambda v: ("dir", "Side", ("front", *v)),
    "behind": lambda v: ("dir", "Side", ("back", *v)),
    "above": lambda v: ("dir", "Vert", ("above", *v)),
    "below": lambda v: ("dir", "Vert", ("below", *v)),
    "under": lambda v: ("dir", "Vert", ("under", *v)),
    "clock_of_owner": lambda v: ("dir", "Clock", (v[1], v[0])),
    "clock": lambda v: ("dir", "Clock", v),
    "clock_of_viewer": lambda v: ("dir", "Clock", (v[0], "refviewer")),
    "between": lambda v: ("between", "Between", v),
    "into": lambda v: ("into", "In", v),
    "leftmost": lambda v: ("super", "LeftMost", v),
    "rightmost": lambda v: ("super", "RightMost", v),
    "next_to_book": lambda v: ("next", "NextTo", (ANY_BOOK,)),
    "next_to": lambda v: ("next", "NextTo", v),
    "closest_to_book": lambda v: ("super", "Closest", (v[0], ANY_BOOK)),
    "closest": lambda v: ("super", "Closest", (v[0], _opt(v, 1))),
    "farthest": lambda v: ("super", "Farthest", (v[0], _opt(v, 1))),
    "where": lambda v: ("where", v[0], ()),
    "noun_book": lambda v: ("noun", "book", ()),
    "noun_slot": lambda v: ("noun", "slot", ()),
}
