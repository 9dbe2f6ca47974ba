"""The text form of spatial programs (ESPIRE Table 11's functional programs plus TIGeR's metric
placements): the tree, its canonical text and the parser that reads the text back.

This is a data format, like `scene.py`: the task generator writes a program into each task as a
label, and the planner (`reasoning.program`) executes programs. Neither side's evaluation lives
here, so the generator can label its tasks without calling the planner's code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from spatial_manip.errors import NotUnderstoodError


# --- the tree ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sym:
    """A symbol: a source (TABLE, SHELF), a reference (viewer, robot, an id) or a keyword value."""

    name: str

    def __str__(self) -> str:
        return self.name if _BARE.fullmatch(self.name) else '"' + self.name.replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Node:
    op: str
    rel: str | None = None
    args: tuple = ()
    kwargs: tuple = ()          # ((key, value), ...) in canonical order

    def kw(self, key: str, default=None):
        return dict(self.kwargs).get(key, default)

    def __str__(self) -> str:
        head = self.op + (f"${self.rel}" if self.rel else "")
        parts = [_fmt(a) for a in self.args] + [f"{k}={_fmt(v)}" for k, v in self.kwargs]
        return f"{head}({', '.join(parts)})"


_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_.:\-]*")


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


def node(op: str, rel_: str | None = None, *args, **kwargs) -> Node:
    """Build a node; strings become symbols, so `node('filterBook', None, 'TABLE')` works."""
    conv = tuple(Sym(a) if isinstance(a, str) else a for a in args)
    kw = tuple((k, Sym(v) if isinstance(v, str) else v) for k, v in sorted(kwargs.items()) if v is not None)
    return Node(op, rel_, conv, kw)


# --- text -> tree ------------------------------------------------------------------------------
_TOKEN = re.compile(r'\s*(?:(?P<num>-?\d+\.\d*(?:e-?\d+)?|-?\d+(?:e-?\d+)?)|(?P<str>"(?:[^"\\]|\\.)*")'
                    r'|(?P<name>[A-Za-z_][A-Za-z0-9_.:\-]*)|(?P<punct>[$(),=]))')


def parse_program(text: str) -> Node:
    """Parse the canonical text of a program back into its tree."""
    toks, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise NotUnderstoodError(f"program text: unexpected character at {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        toks.append((kind, m.group(kind)))
        pos = m.end()
    toks.append(("end", ""))
    i = 0

    def peek():
        return toks[i]

    def take(expected=None):
        nonlocal i
        t = toks[i]
        if expected is not None and t[1] != expected:
            raise NotUnderstoodError(f"program text: expected {expected!r}, got {t[1]!r} in {text!r}")
        i += 1
        return t

    def expr():
        kind, val = take()
        if kind == "num":
            return float(val) if any(c in val for c in ".e") else int(val)
        if kind == "str":
            return Sym(bytes(val[1:-1], "utf-8").decode("unicode_escape"))
        if kind != "name":
            raise NotUnderstoodError(f"program text: unexpected {val!r} in {text!r}")
        r = None
        if peek()[1] == "$":
            take("$")
            r = take()[1]
        if peek()[1] != "(":
            if r is not None:
                raise NotUnderstoodError(f"program text: {val}${r} needs arguments")
            return {"true": True, "false": False}.get(val, Sym(val))
        take("(")
        args, kwargs = [], []
        while peek()[1] != ")":
            if peek()[0] == "name" and toks[i + 1][1] == "=":
                key = take()[1]
                take("=")
                kwargs.append((key, expr()))
            else:
                args.append(expr())
            if peek()[1] == ",":
                take(",")
            elif peek()[1] != ")":
                raise NotUnderstoodError(f"program text: expected ',' or ')', got {peek()[1]!r} in {text!r}")
        take(")")
        return Node(val, r, tuple(args), tuple(sorted(kwargs)))

    tree = expr()
    if peek()[0] != "end":
        raise NotUnderstoodError(f"program text: trailing {peek()[1]!r} in {text!r}")
    if not isinstance(tree, Node):
        raise NotUnderstoodError(f"program text {text!r} is not a program")
    return tree
