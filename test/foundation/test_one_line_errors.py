"""Bad input to a command gets one line saying what is wrong and a non-zero exit, never a
traceback (issue 35 item 7: each of these was a traceback, or a silent success)."""
import json
import struct
import subprocess
import sys
import zlib

import pytest

from concurrent_runs import ConcurrentRuns, selected_params

CLI = [sys.executable, "-m", "spatial_manip.cli"]
SIM_NODE = [sys.executable, "-m", "spatial_manip.nodes.sim_node", "--ros-args"]


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height pixels, with almost no data behind it."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\0" * 100)) + chunk(b"IEND", b""))


def _samples(folder, file_entry, image: bytes | None = None):
    folder.mkdir()
    (folder / "samples.json").write_text(json.dumps({
        "mode": "eye_to_hand", "robot_model": "ur5e",
        "camera_info": {"width": 640, "height": 480, "k": [600.0, 0, 319.5, 0, 600.0, 239.5, 0, 0, 1],
                        "d": [0.0] * 5, "distortion_model": "plumb_bob"},
        "images": [{"file": file_entry, "stamp": 1.0}],
        "robot": [{"stamp": 1.0, "joints": [0, -1.2, 1.2, -1.5, -1.5, 0]}]}))
    if image is not None:
        (folder / str(file_entry)).write_bytes(image)
    return str(folder)


def _scene(tmp_path):
    from spatial_manip.sim.layouts import sample_scene

    path = tmp_path / "scene.json"
    sample_scene("tabletop", 0).save(path)
    return str(path)


def _nested(tmp_path):
    path = tmp_path / "nested.json"
    path.write_text('{"objects": ' + "[" * 100_000 + "]" * 100_000 + "}")     # 200 KB
    return str(path)


def _broken_yaml(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("program: [1, 2\n  b: {c\n")
    return str(path)


def _empty_bag(tmp_path):
    from spatial_manip.bags.repair import MCAP_MAGIC

    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "bag_0.mcap").write_bytes(MCAP_MAGIC + b"\0" * 10)     # the recorder died at once
    return str(bag)


# name -> (argv from tmp_path, exit status, words the error line holds)
CASES = {
    "plan --config broken YAML": (lambda t: CLI + ["plan", "--scene", _scene(t), "--instruction", "pick the book",
                                                   "--config", _broken_yaml(t)], 2, "while parsing a flow"),
    # plan reports a refused plan as its result, exit 1 (its JSON output's contract)
    "plan, deeply nested scene": (lambda t: CLI + ["plan", "--scene", _nested(t), "--instruction", "pick the book"],
                                  1, "nested too deeply"),
    "bench --episodes -1": (lambda t: CLI + ["bench", "--episodes", "-1", "--out", str(t / "b")], 2,
                            "argument --episodes: expected a whole number of at least 1, got -1"),
    "tasks --out /etc/passwd": (lambda t: CLI + ["tasks", "--out", "/etc/passwd"], 2, "is a file, not a folder"),
    "tasks --count 0": (lambda t: CLI + ["tasks", "--count", "0", "--out", str(t / "tasks")], 2,
                        "argument --count: expected a whole number of at least 1, got 0"),
    "calibrate, integer file entry": (lambda t: CLI + ["calibrate", "--samples", _samples(t / "s", 5)], 2,
                                      "images[0] needs a file name"),
    "calibrate, PNG of 100000x100000": (lambda t: CLI + ["calibrate", "--samples", _samples(
        t / "s", "big.png", _png_header(100_000, 100_000))], 2, "claims 100000x100000 pixels"),
    "bag-repair recovering nothing": (lambda t: CLI + ["bag-repair", _empty_bag(t)], 2,
                                      "no complete message could be recovered"),
    # a node refusing its configuration exits 1, as every node does (nodes/runner.spin_node)
    "sim_node scene_file=/etc/passwd": (lambda t: SIM_NODE + ["-p", "scene_file:=/etc/passwd"], 1,
                                        "parameter scene_file: scene file /etc/passwd is not valid JSON"),
    "sim_node camera_rate_hz=0": (lambda t: SIM_NODE + ["-p", "camera_rate_hz:=0.0"], 1,
                                  "parameter camera_rate_hz"),
}


SLOW = {"sim_node scene_file=/etc/passwd", "sim_node camera_rate_hz=0"}     # a node's imports: 5-10 s each


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """Every selected case's command, started together (each in its own folder)."""
    runs = ConcurrentRuns()
    for name in selected_params(request, "test_bad_input_is_one_line_and_an_exit_status", "name"):
        folder = tmp_path_factory.mktemp("case")
        runs.start(name, CASES[name][0](folder), timeout=120, cwd=folder)
    yield runs
    runs.close()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in CASES])
def test_bad_input_is_one_line_and_an_exit_status(name, runs):
    _, status, words = CASES[name]
    p = runs.result(name)
    assert "Traceback" not in p.stdout + p.stderr, p.stderr[-3000:]
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == status and len(lines) == 1 and words in lines[0], (p.returncode, p.stderr[-3000:])


def test_bag_repair_leaves_no_folder_that_blocks_the_rerun(tmp_path):
    bag = _empty_bag(tmp_path)
    for _ in range(2):          # the second run says the same, not "already exists"
        p = subprocess.run(CLI + ["bag-repair", bag], capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and "no complete message" in p.stderr, p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bag"]
