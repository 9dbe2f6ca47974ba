"""A node's parameters as ROS users expect them, from the table in spatial_manip.parameters:
each declared with a descriptor (description, range, read-only unless it may change at run
time), checked at start-up, and a run-time change validated and applied through an on-set
callback. Overrides the node does not have are refused by name when they were meant for it
(`-p`, its own section of a params file); a shared `/**` params file's parameters for other
nodes and `qos_overrides.*` are accepted."""
from __future__ import annotations

import sys
from typing import Any, Callable

import yaml
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import ParameterException

from spatial_manip.errors import ConfigError
from spatial_manip.parameters import INF, NODE_PARAMETERS, Param

ACCEPTED_PREFIXES = ("qos_overrides.",)      # rclpy reads these when a publisher allows overrides


def declare_parameters(node, params: dict[str, Any] | None = None,
                       on_change: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """Declare the node's parameters (the table's, or `params`: name -> default, described from
    the table where it has the name) and return their values. The dict stays current: a
    run-time change updates it, then calls `on_change(name, value)`. A wrong type, a value out
    of range or an unknown parameter meant for this node is a ConfigError."""
    table = {p.name: p for p in NODE_PARAMETERS.get(node.get_name(), ())}
    wanted = params if params is not None else {name: p.default for name, p in table.items()}
    for name, default in wanted.items():
        row = table.get(name) or Param(name, default, "")
        try:
            node.declare_parameter(name, default, descriptor(row))
        except ParameterException as e:          # rclpy's own range check of an override
            given = getattr(node, "_parameter_overrides", {}).get(name)
            problem = _problem(row, given.value) if given is not None else None
            raise ConfigError(f"parameter {name}{_given_in()}: {problem or ' '.join(str(e).split())}") from e
    values = {name: node.get_parameter(name).value for name in wanted}
    for name, value in values.items():
        row = table.get(name) or Param(name, wanted[name], "")
        problem = _problem(row, value)
        if problem:
            raise ConfigError(f"parameter {name}{_given_in()}: {problem}")
        values[name] = _as_declared(row, value)
    _refuse_unknown(node, wanted)
    node.add_on_set_parameters_callback(
        lambda changed: _on_set(changed, table, values, on_change))
    return values


def descriptor(row: Param) -> ParameterDescriptor:
    text = row.description
    if row.choices:
        text += " (one of: " + ", ".join(c or '""' for c in row.choices) + ")"
    d = ParameterDescriptor(description=text, read_only=not row.runtime,
                            # `-p observation_timeout_s:=2` arrives as an integer
                            dynamic_typing=isinstance(row.default, float))
    if row.range is not None and not isinstance(row.default, (bool, list)):
        lo, hi = row.range
        if isinstance(row.default, int):
            d.integer_range = [IntegerRange(from_value=int(lo), to_value=int(min(hi, 2**63 - 1)), step=0)]
        elif hi != INF:        # rcl_interfaces has no open range: an unbounded one is checked here only
            d.floating_point_range = [FloatingPointRange(from_value=float(lo), to_value=float(hi), step=0.0)]
    return d


def _problem(row: Param, value) -> str | None:
    if isinstance(row.default, float) and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"{value!r} is not a number"
    return row.problem(value)


def _as_declared(row: Param, value):
    return float(value) if isinstance(row.default, float) and isinstance(value, int) else value


def _on_set(changed, table: dict[str, Param], values: dict, on_change) -> SetParametersResult:
    mine = [p for p in changed if p.name in values]
    for p in mine:
        row = table.get(p.name)
        if row is None or not row.runtime:
            return SetParametersResult(successful=False, reason=(
                f"{p.name} is read once at start-up (read-only); restart the node with -p {p.name}:=..."))
        problem = _problem(row, p.value)
        if problem:
            return SetParametersResult(successful=False, reason=f"{p.name}: {problem}")
    for p in mine:
        values[p.name] = _as_declared(table[p.name], p.value)
        if on_change is not None:
            on_change(p.name, values[p.name])
    return SetParametersResult(successful=True)


def _refuse_unknown(node, known: dict) -> None:
    """An override nobody declared: refused when it was given for this node (a misspelt name,
    which ROS would silently ignore), accepted when it came from a wildcard section of a shared
    params file (another node's parameter) or is a QoS override."""
    # rclpy keeps the overrides privately: the only way to see a name nobody declared
    overrides = getattr(node, "_parameter_overrides", {})
    unknown = sorted(n for n in overrides if not node.has_parameter(n) and not n.startswith(ACCEPTED_PREFIXES))
    meant, shared = _names_given_for_this_node(), _wildcard_names()
    refused = [n for n in unknown if n in meant or n not in shared]
    if refused:
        raise ConfigError(f"unknown parameter {refused[0]}{_given_in()} (value {overrides[refused[0]].value!r}); "
                          f"known: {', '.join(sorted(known))}")
    if unknown:
        node.get_logger().warning(f"ignoring {len(unknown)} parameter(s) of a shared params file that this node "
                               f"does not have: {', '.join(unknown)}")


def _params_files() -> list[str]:
    argv = sys.argv
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--params-file"]


def _sections() -> list[tuple[str, dict]]:
    """(section key, flattened parameters) of every params file on the command line."""
    out = []
    for f in _params_files():
        try:
            data = yaml.safe_load(open(f)) or {}
        except (OSError, yaml.YAMLError):
            continue                    # rcl has already refused a file it cannot read
        if isinstance(data, dict):
            for key, section in data.items():
                params = section.get("ros__parameters") if isinstance(section, dict) else None
                if isinstance(params, dict):
                    out.append((str(key), _flatten(params)))
    return out


def _wildcard_names() -> set[str]:
    return {n for key, params in _sections() if "*" in key for n in params}


def _names_given_for_this_node() -> set[str]:
    """Names set by `-p` or in a params file's section named for a node (not a wildcard)."""
    argv = sys.argv
    names = {argv[i + 1].split(":=", 1)[0] for i, a in enumerate(argv[:-1]) if a in ("-p", "--param")}
    return names | {n for key, params in _sections() if "*" not in key for n in params}


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _given_in() -> str:
    """' (params file F)' when the command line names one: where a wrong parameter came from."""
    files = _params_files()
    return f" (params file {', '.join(files)}, or -p)" if files else ""
