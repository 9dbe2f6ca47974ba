"""The one way a YAML section becomes a backend's config dataclass.

`read_yaml` reads a file (a syntax error is one line: file, line, column, problem);
`build(cls, section, where)` refuses a key the dataclass does not have and a value of the wrong
type, and names `where` (the file and the section) in every refusal, including those the
dataclass's own checks raise. All refusals are ConfigError.
"""
from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any, Mapping

import yaml

from spatial_manip.errors import ConfigError, InvalidGoalError
from spatial_manip.registry import backend_names, config_class


def read_yaml(path: str | Path) -> dict:
    """The mapping at the top of a YAML file ({} for an empty file)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such file")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise ConfigError(f"{p}: not valid YAML: {at}{getattr(e, 'problem', None) or e}") from e
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of sections, got {type(data).__name__}")
    return data


def section(data: Mapping, key: str, where: str, *, required: bool = True) -> dict:
    """`data[key]` as a mapping; absent gives {} unless `required`."""
    value = data.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        got = "nothing" if value is None else f"{value!r}"
        raise ConfigError(f"{where}: section {key!r} must be a mapping, got {got}")
    return dict(value)


def build(cls, values: Mapping[str, Any] | None, where: str, *, ignore: tuple[str, ...] = ()):
    """`cls(**values)`, refusing unknown keys and values of the wrong type by name; `ignore`
    lists keys the section shares with another reader (not this dataclass's)."""
    values = {k: v for k, v in dict(values or {}).items() if k not in ignore}
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (value {values[unknown[0]]!r}); "
                          f"known: {', '.join(sorted(fields))}")
    hints = typing.get_type_hints(cls)
    for key, value in values.items():
        expected = _expected(hints.get(key))
        if expected is not None and not _is(value, expected):
            raise ConfigError(f"{where}: {key}: {value!r} is not {_describe(expected)}")
        if isinstance(value, list):
            values[key] = tuple(value)     # frozen dataclasses hold tuples
    try:
        return cls(**values)
    except (InvalidGoalError, ValueError, TypeError) as e:
        raise ConfigError(f"{where}: {getattr(e, 'message', e)}") from e


def backend_section(role: str, name, values: Mapping | None, where: str) -> dict:
    """Backend `name` of `role` checked by name, and its YAML section through its config
    dataclass; the section back as a dict (the keyword configuration `registry.make` takes)."""
    if name not in backend_names(role):
        raise ConfigError(f"{where}.backend: {name!r} is not one of {', '.join(backend_names(role))}")
    cls = config_class(role, name)
    values = dict(values or {})
    if cls is not None:
        build(cls, values, f"{where}.{name}")
    return values


_SCALARS = (bool, int, float, str)


def _expected(hint) -> tuple | None:
    """The YAML kinds a field's annotation accepts: a tuple of types, None = not checked."""
    if hint is None:
        return None
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if hint in _SCALARS:
        kinds = (hint,)
    elif typing.get_origin(hint) in (tuple, list) or hint in (tuple, list):
        kinds = (list, tuple)
    elif args and all(a in _SCALARS for a in args):      # float | None, str | int
        kinds = tuple(args)
    else:
        return None
    return kinds + ((type(None),) if type(None) in typing.get_args(hint) else ())


def _is(value, kinds: tuple) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int) and float in kinds:
        return True                       # 1 for 1.0
    return isinstance(value, kinds)


def _describe(kinds: tuple) -> str:
    names = {bool: "true/false", int: "an integer", float: "a number", str: "a string",
             list: "a list", tuple: "a list", type(None): "null"}
    return " or ".join(dict.fromkeys(names[k] for k in kinds))
