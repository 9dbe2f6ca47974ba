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
            out |= {f"{node.module}.{a.name}" for a in node.names}  # `from spatial_manip import sim`
    return out


def test_the_task_generator_and_checker_never_import_the_planner():
    """The benchmark grades the planner; it must not compute its answers with the planner's code."""
    offenders = [f"{p.relative_to(ROOT.parent)}: {m}" for p in sorted((ROOT / "sim").rglob("*.py"))
                 for m in _imported_modules(p) if m.startswith("spatial_manip.reasoning")]
    assert not offenders, offenders


def _imports_of(package: str, prefixes: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    """`package`'s files that import a module starting with one of `prefixes` (files in `allowed` excepted)."""
    return [f"{p.relative_to(ROOT.parent)}: {m}" for p in sorted((ROOT / package).rglob("*.py"))
            if str(p.relative_to(ROOT)) not in allowed
            for m in _imported_modules(p) if m.startswith(prefixes)]


def test_control_never_imports_the_emulators_benches_or_nodes():
    """The emulators and arm-bench live in devtools/ (they import control/ and sim/, not the reverse),
    and the MuJoCo arm backend lives in sim/ (sim/arm.py, named by its module path in control's
    backend table): sim/ imports control/, never the reverse."""
    assert not _imports_of("control", ("spatial_manip.devtools", "spatial_manip.bench", "spatial_manip.bringup",
                                       "spatial_manip.nodes", "spatial_manip.sim"))


def test_bags_and_camera_never_import_nodes_or_bringup():
    """record, replay and camera-bench start nodes, so they live in bringup/; the core packages
    the nodes adapt must not import the nodes back."""
    for package in ("bags", "camera"):
        offenders = _imports_of(package, ("spatial_manip.nodes", "spatial_manip.bringup"))
        assert not offenders, offenders


def test_nodes_never_import_bringup_or_devtools():
    """bringup/ (launcher, goal client, commands that run nodes) sits above the nodes."""
    offenders = _imports_of("nodes", ("spatial_manip.bringup", "spatial_manip.devtools"))
    assert not offenders, offenders


def test_only_the_command_line_imports_devtools():
    offenders = [f"{p.relative_to(ROOT.parent)}: {m}" for p in sorted(ROOT.rglob("*.py"))
                 if "devtools" not in p.relative_to(ROOT).parts and str(p.relative_to(ROOT)) != "cli.py"
                 for m in _imported_modules(p) if m.startswith("spatial_manip.devtools")]
    assert not offenders, offenders


def test_the_motion_planner_never_imports_the_simulator():
    """motion/ plans for the real robot; its benchmark, which needs the simulator's scenes, is a
    dev tool (devtools/motion_bench.py)."""
    assert not _imports_of("motion", ("spatial_manip.sim", "spatial_manip.devtools"))
