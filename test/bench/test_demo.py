"""`spatial-manip demo`, the README's main job, end to end: the sim graph in separate processes
over real DDS, the demo's own instruction from a real action client, success, and a trace page
that shows the book where it was set down. CI runs this so the next regression is caught."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spatial_manip.bench.demo import DEFAULT_SCENE_SEED

# the demo's own limit (the subprocess' 600 s) binds, not pytest's 300 s: the scene search, the
# graph's start and a classical look took 4-9 minutes a run at load 20-30 (62 s at load 1-12)
pytestmark = [pytest.mark.slow, pytest.mark.ros, pytest.mark.timeout(660)]


def test_the_demo_succeeds_and_its_trace_shows_the_set_down(tmp_path):
    run = subprocess.run([sys.executable, "-m", "spatial_manip.cli", "demo"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    demo = "\n".join(line for line in run.stdout.splitlines() if line.startswith("[demo]"))
    assert run.returncode == 0, demo + "\n" + run.stderr[-3000:]
    assert "result: success=True" in demo
    # the default instruction still fits the scene it starts at, which the agent and cancel tests share
    assert f"[demo] scene seed {DEFAULT_SCENE_SEED}:" in demo, demo
    # the header says which perception ran: by default what a lab has (issue 37), no simulator help
    assert "segmenter classical; catalogue library (what a lab has" in demo, demo
    # the planner's own check (a distance, or the frame's depth filling the set-down box), then the
    # simulator's truth after the goal: the book rests within the check's 4 cm of the planned place
    assert re.search(r"placed within \d+\.\d cm of the computed pose|seen at the computed pose", demo), demo
    rests = re.search(r"rests (\d+\.\d) cm from the planned place", demo)
    assert rests and float(rests.group(1)) < 4.0, demo
    page = Path(re.search(r"trace page: (\S+)", demo).group(1))
    page = page if page.is_absolute() else tmp_path / page
    html = page.read_text()
    for image in ("overlay_decision", "overlay_grasp", "overlay_after"):
        assert image in html, f"the trace page lacks {image}"
