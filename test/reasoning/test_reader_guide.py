"""The reader's guide (docs/guides/reader.md) traces two instructions through the stages; each
traced line must be what the code does now, so the guide cannot drift from the reader."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from spatial_manip.reasoning import examples, reader
from spatial_manip.reasoning.parser import InstructionParser, normalise
from spatial_manip.reasoning.planner import make_planner

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "reader.md"
QUOTED = re.compile(r'"([^"]*)"')


def traces() -> list[dict[str, list[str]]]:
    """Each ```text block of the guide that traces an instruction: stage -> its lines."""
    out = []
    for block in re.findall(r"```text\n(.*?)```", GUIDE.read_text(), re.S):
        stages: dict[str, list[str]] = {}
        key = None
        for line in block.splitlines():
            if not line.startswith(" "):            # "stage  what it gave"; a continuation is indented
                key, line = re.split(r"\s{2,}", line, maxsplit=1)
            stages.setdefault(key, []).append(line.strip())
        if "instruction" in stages:
            out.append(stages)
    return out


def _clause_text(c: reader.Clause) -> str:
    return f"{c.kind} {c.rel}" + (f" {tuple(c.args)!r}" if c.args else "")


@pytest.fixture(scope="module", params=range(2), ids=["pick", "place"])
def traced(request):
    ts = traces()
    assert len(ts) == 2, "the guide traces a pick and a place"
    t = ts[request.param]
    scene = getattr(examples, t["scene"][0])()
    text = t["instruction"][0]
    parser = InstructionParser(scene)
    return t, text, parser.parse(text), make_planner("program").plan(scene, text)


def test_the_normalised_text_and_the_notes(traced):
    t, text, _, result = traced
    assert QUOTED.search(t["normalise"][0]).group(1) == normalise(text)
    notes = [m for line in t.get("spelling", []) + t["result"] for m in re.findall(r"note: (.*)$", line)]
    assert notes and all(n in result.notes for n in notes)


def test_the_clauses_are_the_grammars_reading_of_the_marked_text(traced):
    t, _, parsed, _ = traced
    marked = next(QUOTED.search(line).group(1) for key in ("references", "spelling", "normalise")
                  for line in t.get(key, []) if QUOTED.search(line))
    clauses, rest = reader.read_clauses(marked)
    said = t["clauses"][0]
    assert " | ".join(_clause_text(c) for c in clauses) == said
    assert " | ".join(_clause_text(c) for c in parsed.clauses) == said
    assert rest == t["left over"][0].split("(")[0].split()


def test_the_program_and_its_answer(traced):
    t, _, parsed, result = traced
    assert str(parsed.program) == t["program"][0] == result.program
    assert t["result"][0].split(";")[0].split() == [result.action, *result.targets]
    if result.action == "pick":
        steps = next(e["steps"] for e in result.trace if e["event"] == "execute")[:-1]     # all but unique()
        assert len(t["execute"]) == len(steps)
        assert [line.split()[-len(s["ids"]):] for line, s in zip(t["execute"], steps)] == [s["ids"] for s in steps]
    else:
        said = re.search(r"position \(([^)]*)\)", t["execute"][0]).group(1)
        assert [float(v) for v in said.split(",")] == pytest.approx(result.place_pose.position, abs=1e-3)
