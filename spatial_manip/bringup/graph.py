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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from spatial_manip.paths import config_dir, resolve_config


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

    def ros_args(self, extra_params: dict | None = None) -> list[str]:
        """The `--ros-args ...` tail shared by both launchers."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        for p in self.parameters:
            args += ["--params-file", str(p)]
        for k, v in [*self.params, *(extra_params or {}).items()]:
            args += ["-p", f"{k}:={v}"]
        for a, b in self.remappings:
            args += ["-r", f"{a}:={b}"]
        return args


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
    params = tuple(resolve_config(p) for p in n.get("parameters", []) or [])
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
    except yaml.YAMLError as e:
        raise GraphError(f"{where} ({node}): parameter file {p} is not valid YAML: {e}") from e
    sections = [data.get(k) for k in (node, f"/{node}", "/**", "**") if isinstance(data.get(k), dict)]
    if not any("ros__parameters" in s for s in sections):
        raise GraphError(f"{where} ({node}): {p} is not a ROS params file for {node!r} (expected "
                         f"'{node}: {{ros__parameters: ...}}'); pass plain config files through "
                         f"'params: {{config_file: ...}}' instead")
