import subprocess
import sys

import pytest

from spatial_manip.bringup.cli import parse_overrides
from spatial_manip.bringup.graph import GraphError, available_graphs, load_graph


def test_every_graph_loads_and_names_existing_parameter_files():
    names = available_graphs()
    assert {"sim", "real", "replay", "planner"} <= set(names)
    for name in names:
        g = load_graph(name)
        assert g.nodes and all(p.is_file() for n in g.nodes for p in n.parameters), name


def test_ros_args_carry_name_params_and_remaps(tmp_path):
    f = tmp_path / "g.yaml"
    (tmp_path / "p.yaml").write_text("a: {ros__parameters: {}}\n")
    f.write_text(f"nodes:\n  - name: a\n    executable: planner_node\n    parameters: [{tmp_path}/p.yaml]\n"
                 "    remappings: {/in: /out}\n")
    spec = load_graph(str(f)).nodes[0]
    args = spec.ros_args({"k": "1"})
    assert args[:3] == ["--ros-args", "-r", "__node:=a"]
    assert ["--params-file", f"{tmp_path}/p.yaml"] == args[3:5]
    assert "k:=1" in args and "/in:=/out" in args


@pytest.mark.parametrize("text,needle", [
    ("nodes: []\n", "non-empty"),
    ("nodes:\n  - name: a\n", "executable"),
    ("nodes:\n  - {name: a, executable: b, parameters: [nope.yaml]}\n", "does not exist"),
    ("nodes:\n  - {name: a, executable: b}\n  - {name: a, executable: c}\n", "unique"),
    (": : :\n", "YAML"),
    ("- a\n", "a mapping with 'nodes'"),
    # issue 35 item 7: an executable was run as any path (/bin/sh); unknown keys passed silently
    ("nodes:\n  - {name: a, executable: /bin/sh}\n", "'executable' must be a plain name"),
    ("nodes:\n  - {name: a, executable: ../../bin/sh}\n", "not a path"),
    ("nodes:\n  - {name: a, executable: b, package: /usr}\n", "'package' must be a plain name"),
    ("nodes:\n  - {name: a, executable: b, parms: {x: 1}}\n", "unknown key 'parms'"),
    ("nodes:\n  - {name: a, executable: b}\nnode: []\n", "unknown key 'node'"),
    ("nodes:\n  - {name: a, executable: b, parameters: /etc/passwd}\n", "list of params-file paths"),
    ("nodes:\n  - {name: a, executable: b, parameters: [/etc/passwd]}\n", "not a ROS params file"),
])
def test_malformed_graphs_are_named(tmp_path, text, needle):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(GraphError, match=needle):
        load_graph(str(f))


def test_unknown_graph_lists_the_known_ones():
    with pytest.raises(GraphError, match="available"):
        load_graph("nonexistent")


def test_overrides_parse_and_reject_garbage():
    assert parse_overrides(["a.b=1", "a.c=x"]) == {"a": {"b": "1", "c": "x"}}
    with pytest.raises(ValueError):
        parse_overrides(["nodot=1"])


def test_cli_help_lists_every_subcommand():
    out = subprocess.run([sys.executable, "-m", "spatial_manip.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    from spatial_manip.cli import SUBCOMMANDS

    for name in SUBCOMMANDS:
        assert name in out.stdout


def test_launch_modules_import_without_launch_installed():
    import importlib.util
    import pathlib

    for f in pathlib.Path(__file__).resolve().parents[2].joinpath("launch").glob("*.launch.py"):
        spec = importlib.util.spec_from_file_location(f.stem.replace(".", "_"), f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        assert callable(mod.generate_launch_description)


def test_a_plain_config_file_passed_as_ros_params_is_refused(tmp_path):
    (tmp_path / "plain.yaml").write_text("grasp:\n  backend: antipodal\n")
    f = tmp_path / "g.yaml"
    f.write_text(f"nodes:\n  - {{name: grasp_node, executable: grasp_node, parameters: [{tmp_path}/plain.yaml]}}\n")
    with pytest.raises(GraphError, match="not a ROS params file"):
        load_graph(str(f))


def test_inline_params_resolve_config_paths():
    spec = next(n for n in load_graph("sim").nodes if n.name == "grasp_node")
    args = spec.ros_args()
    value = args[args.index("-p") + 1]
    assert value.startswith("config_file:=/") and value.endswith("params/grasp.yaml")
