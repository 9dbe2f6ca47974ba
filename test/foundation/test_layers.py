"""Boundaries between packages that the design depends on (issue 23)."""
import ast
import pathlib

import pytest

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


def test_only_the_command_line_imports_devtools(imports):
    """Read from the tree's one parse (the `imports` fixture below), where relative imports are resolved too."""
    offenders = [f"{i.file}:{i.line} {i.module}" for i in imports
                 if i.file.split("/")[0] != "devtools" and i.file != "cli.py" and i.module.startswith("spatial_manip.devtools")]
    assert not offenders, offenders


def test_the_motion_planner_never_imports_the_simulator():
    """motion/ plans for the real robot; its benchmark, which needs the simulator's scenes, is a
    dev tool (devtools/motion_bench.py)."""
    assert not _imports_of("motion", ("spatial_manip.sim", "spatial_manip.devtools"))


# The whole tree against the declared layer order (issue 41); the analysis lives in
# spatial_manip/devtools/import_graph.py (`python -m spatial_manip.devtools.import_graph -v`).
from spatial_manip.devtools import import_graph as graph  # noqa: E402  (the tests above need only ast)

# Imports that still go against the layer order, each with why it is not fixed yet. The test fails
# when one is fixed too, so the list only shrinks (empty since issue 41's moves).
KNOWN_BREACHES: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def imports():
    """Every import of the tree, parsed once for the module's tests (a parse of the whole tree is
    most of each test's time: 18-36 s apiece at load 11); a tuple, so no test can change it for
    the next."""
    return tuple(graph.all_imports())


def test_every_component_has_a_layer(imports):
    assert not graph.unlayered(imports)


def test_every_import_follows_the_layer_order(imports):
    breaches = {(i.file, graph.component(i.module).split(".")[0]) for i in graph.layer_breaches(imports)}
    assert breaches - set(KNOWN_BREACHES) == set(), "new imports against the layer order (see LAYERS)"
    assert set(KNOWN_BREACHES) - breaches == set(), "fixed: take these out of KNOWN_BREACHES"


def test_no_import_cycles_between_components_in_function_imports_too(imports):
    """A late import is still a dependency: a cycle through one is a cycle (issue 41 ended the last
    two, geometry <-> observation <-> scene and sim <-> workspace)."""
    assert graph.cycles(graph.edges(imports)) == []
    assert graph.cycles(graph.edges(imports, module_level_only=False)) == []


def test_the_analysis_sees_in_function_imports_and_their_comments(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import json\n\ndef f():\n    # why: optional\n    import torch\n    import yaml\n"
                   "    x = 1\n    from spatial_manip import scene\n")
    found = {(i.module, i.in_function, i.commented) for i in graph.imports_of(src, root=tmp_path)}
    assert found == {("json", False, False), ("torch", True, True), ("yaml", True, True),   # one comment per group
                     ("spatial_manip.scene", True, False)}


# Files whose in-function imports of the project's own modules have not been moved to the top or
# explained yet: all were being edited by other engineers when the rest moved (issue 41).
LATE_IMPORTS_LEFT: set[str] = set()


def test_own_modules_are_imported_at_the_top_or_say_why_not(imports):
    """An in-function import of spatial_manip.* carries a comment saying why it waits (an optional
    backend, ROS only on one path, a layer above that may not be imported at module level)."""
    late = {i.file for i in graph.in_function(imports)["own"] if not i.commented}
    assert late - LATE_IMPORTS_LEFT == set(), "move these imports to the top, or say in a comment why they wait"
    assert LATE_IMPORTS_LEFT - late == set(), "done: take these out of LATE_IMPORTS_LEFT"


# CLIs, benches and evaluations still inside core packages (issue 41), each with why it stayed. The
# list only shrinks: a file that moves to bench/, commands/ or devtools/ leaves it.
TOOLS_LEFT_IN_CORE = {
    "bringup/camera_bench.py": "bringup/ starts nodes; its commands sit in the top layer already",
    "bringup/cli.py": "the same", "bringup/goal_cli.py": "the same", "bringup/record_cli.py": "the same",
    "bringup/replay_cli.py": "the same",
}


def _tools_in_core() -> set[str]:
    files = (str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py"))
    return {f for f in files if graph.is_tool(f) and f.split("/")[0].removesuffix(".py") not in graph.TOOL_PACKAGES}


def test_clis_benches_and_evaluations_live_above_the_core():
    left = _tools_in_core()
    assert left - set(TOOLS_LEFT_IN_CORE) == set(), "a new tool inside a core package: put it in bench/, commands/ or devtools/"
    assert set(TOOLS_LEFT_IN_CORE) - left == set(), "moved: take these out of TOOLS_LEFT_IN_CORE"


def test_no_product_module_imports_the_tools(imports):
    """bench/, commands/, devtools/ and cli.py import the core; nothing of the product imports them."""
    offenders = [f"{i.file}:{i.line} {i.module}" for i in imports
                 if graph.component(i.module) in graph.TOOL_PACKAGES and not graph.is_tool(i.file)
                 and graph.file_component(i.file) != "bringup"]
    assert not offenders, offenders
