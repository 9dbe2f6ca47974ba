"""Boundaries between packages that the design depends on (issue 23)."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "spatial_manip"


def _imported_modules(path: pathlib.Path) -> set[str]:
    """Every module a file imports, at module level or inside functions."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_the_task_generator_and_checker_never_import_the_planner():
    """The benchmark grades the planner; it must not compute its answers with the planner's code."""
    offenders = [f"{p.relative_to(ROOT.parent)}: {m}" for p in sorted((ROOT / "sim").rglob("*.py"))
                 for m in _imported_modules(p) if m.startswith("spatial_manip.reasoning")]
    assert not offenders, offenders
