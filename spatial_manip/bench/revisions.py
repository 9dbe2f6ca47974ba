"""Another git revision's code, run by this venv: the baseline a bench compares against in the
same invocation (the development machines are too noisy for figures from different runs)."""
from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def worktree(revision: str):
    """(tree, env): a temporary detached git worktree at `revision`, and an environment whose
    PYTHONPATH puts that tree first. Removed on exit."""
    with tempfile.TemporaryDirectory(prefix="baseline-") as tmp:
        tree = Path(tmp) / "tree"
        done = subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", str(tree), revision],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ValueError(f"cannot check out baseline revision {revision!r}: {done.stderr.strip()}")
        try:
            # the tree first; the rest of the path kept (the built interfaces: without them the tree's
            # spatial_manip_interfaces/ source folder imports as an empty namespace package)
            path = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH", "")) if p)
            yield tree, dict(os.environ, PYTHONPATH=path)
        finally:
            subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", str(tree)],
                           capture_output=True)
