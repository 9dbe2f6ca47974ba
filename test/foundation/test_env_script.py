"""scripts/env.sh is sourced into a user's own shell: it sources colcon's setup.bash (which reads unset
variables) and leaves the shell's options as it found them."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkout(tmp_path):
    """A checkout with env.sh, a venv whose activate does nothing, and an install/setup.bash that reads an
    unset variable as colcon's do."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "env.sh", tmp_path / "scripts" / "env.sh")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "activate").write_text("")
    (tmp_path / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (tmp_path / "install").mkdir()
    (tmp_path / "install" / "setup.bash").write_text('export SM_TEST_SOURCED="${COLCON_UNSET_BY_TEST}yes"\n')
    return tmp_path


@pytest.mark.parametrize("nounset", ["+u", "-u"])
def test_sourcing_env_keeps_the_callers_nounset_setting(checkout, nounset):
    script = (f"set {nounset}; before=$-; . scripts/env.sh; "
              'echo "$before|$-|$SM_TEST_SOURCED|$ROS_LOCALHOST_ONLY"')
    out = subprocess.run(["bash", "-c", script], cwd=checkout, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(checkout)})
    assert out.returncode == 0, out.stderr
    before, after, sourced, localhost_only = out.stdout.strip().split("|")
    assert after == before, f"env.sh changed the shell's options from {before!r} to {after!r}"
    assert sourced == "yes" and localhost_only == "1"
