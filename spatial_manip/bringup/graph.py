"""A node graph, described once in `config/graphs/<variant>.yaml` and read both by
`launch/<variant>.launch.py` (launch_ros) and by the pip-only launcher.

    description: what this graph is for
    nodes:
      - name: planner_node          # ROS node name (also the log prefix)
        executable: planner_node    # console_script of package spatial_manip
        package: spatial_manip      # optional, default spatial_manip
        required: true              # the graph stops when it dies (default true)
        parameters: [params/planner.yaml]   # ROS params files, relative to config/, or absolute
        params: {config_file: params/grasp.yaml}   # inline parameters (`-p k:=v`); a value
                                    # starting with "params/" is resolved against config/
        remappings: {from: to}
        arguments: []               # extra command-line arguments before --ros-args

Any other key is refused by name, and `executable`/`package` must be plain names (an executable
is looked up as a console script of its package, never as a path).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from spatial_manip.paths import config_dir, resolve_config


GRAPH_KEYS = ("description", "nodes")
NODE_KEYS = ("name", "executable", "package", "required", "parameters", "params", "remappings", "arguments")
_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")       # a ROS package, node or console-script name


class GraphError(ValueError):
    """A graph file is missing or malformed; the message names the file and the key."""


@dataclass(frozen=True)
class NodeSpec:
    name: str
    executable: str
    package: str = "spatial_manip"
    required: bool = True
    parameters: tuple[Path, ...] = ()
    remappings: tuple[tuple[str, str], ...] = ()
    arguments: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    namespace: str = ""         # "" = the root namespace; set by the `namespace` launch argument

    def ros_args(self, extra_params: dict | None = None) -> list[str]:
        """The `--ros-args ...` tail shared by both launchers."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        if self.namespace:
            args += ["-r", f"__ns:={self.namespace}"]
        for p in self.parameters:
            args += ["--params-file", str(p)]
        for k, v in [*self.params, *(extra_params or {}).items()]:
            args += ["-p", f"{k}:={v}"]
        for a, b in self.remappings:
            args += ["-r", f"{a}:={b}"]
        return args

    def typed_params(self) -> dict:
        """The inline parameters as values of their types, read as `-p name:=value` reads them
        (YAML): what launch_ros's Node(parameters=[...]) needs to declare the same parameters."""
        return {k: _yaml_scalar(v) for k, v in self.params}

    def with_params(self, values: dict[str, str]) -> "NodeSpec":
        """A copy whose inline parameters include `values` (later values win)."""
        merged = dict(self.params)
        merged.update({k: str(v) for k, v in values.items()})
        return replace(self, params=tuple(merged.items()))


def _yaml_scalar(text: str):
    try:
        return yaml.safe_load(text) if text != "" else ""
    except yaml.YAMLError:
        return text


@dataclass(frozen=True)
class Graph:
    name: str
    description: str
    nodes: tuple[NodeSpec, ...] = field(default_factory=tuple)


def available_graphs() -> list[str]:
    return sorted(p.stem for p in (config_dir() / "graphs").glob("*.yaml"))


def load_graph(name_or_path: str) -> Graph:
    path = Path(name_or_path)
    if not path.suffix:
        path = config_dir() / "graphs" / f"{name_or_path}.yaml"
    if not path.is_file():
        raise GraphError(f"no graph {name_or_path!r} (looked for {path}); available: {available_graphs()}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise GraphError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise GraphError(f"{path}: a graph file is a mapping with 'nodes' (and 'description'), got {type(data).__name__}")
    _refuse_unknown_keys(data, GRAPH_KEYS, str(path))
    nodes = data.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        raise GraphError(f"{path}: 'nodes' must be a non-empty list")
    specs = tuple(_node_spec(n, i, path) for i, n in enumerate(nodes))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise GraphError(f"{path}: node names must be unique, got {names}")
    return Graph(path.stem, str(data.get("description", "")), specs)


def _node_spec(n: dict, i: int, path: Path) -> NodeSpec:
    where = f"{path}: nodes[{i}]"
    if not isinstance(n, dict) or "name" not in n or "executable" not in n:
        raise GraphError(f"{where} needs 'name' and 'executable'")
    _refuse_unknown_keys(n, NODE_KEYS, f"{where} ({n['name']})")
    for key in ("name", "executable", "package"):
        value = n.get(key, "spatial_manip")
        if not isinstance(value, str) or not _PLAIN_NAME.fullmatch(value):
            raise GraphError(f"{where}: '{key}' must be a plain name (letters, digits, _), got {value!r}; "
                             "an executable is a console script of its package, not a path")
    files = n.get("parameters", []) or []
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise GraphError(f"{where} ({n['name']}): 'parameters' must be a list of params-file paths, got {files!r}")
    params = tuple(resolve_config(p) for p in files)
    for p in params:
        _check_params_file(p, str(n["name"]), where)
    inline = n.get("params", {}) or {}
    if not isinstance(inline, dict):
        raise GraphError(f"{where} ({n['name']}): 'params' must be a mapping name: value")
    remaps = n.get("remappings", {}) or {}
    if not isinstance(remaps, dict):
        raise GraphError(f"{where} ({n['name']}): 'remappings' must be a mapping from: to")
    return NodeSpec(
        name=str(n["name"]), executable=str(n["executable"]), package=str(n.get("package", "spatial_manip")),
        required=bool(n.get("required", True)), parameters=params,
        remappings=tuple((str(a), str(b)) for a, b in remaps.items()),
        arguments=tuple(str(a) for a in n.get("arguments", []) or []),
        params=tuple((str(k), _inline_value(v)) for k, v in inline.items()),
    )


def _inline_value(v) -> str:
    v = str(v)
    return str(resolve_config(v)) if v.startswith("params/") else v


def _check_params_file(p: Path, node: str, where: str) -> None:
    """A ROS params file must map the node's name (or a wildcard) to `ros__parameters`, or
    rcl refuses it at start-up with a parse error; catch that here with a clear message."""
    if not p.is_file():
        raise GraphError(f"{where} ({node}): parameter file {p} does not exist")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise GraphError(f"{where} ({node}): parameter file {p} is not valid YAML: {' '.join(str(e).split())}") from e
    if not isinstance(data, dict):
        data = {}
    sections = [data.get(k) for k in (node, f"/{node}", "/**", "**") if isinstance(data.get(k), dict)]
    if not any("ros__parameters" in s for s in sections):
        raise GraphError(f"{where} ({node}): {p} is not a ROS params file for {node!r} (expected "
                         f"'{node}: {{ros__parameters: ...}}'); pass plain config files through "
                         f"'params: {{config_file: ...}}' instead")


def _refuse_unknown_keys(data: dict, known: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise GraphError(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(known)}")
