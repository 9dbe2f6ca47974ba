"""The documentation stays true: a short README, links that resolve, generated reference pages
that match the code, and every documented `spatial-manip` command accepted by the real parser
(the cheap ones are run)."""
from __future__ import annotations

import argparse
import importlib
import re
import shlex
import sys
from pathlib import Path

import pytest

from concurrent_runs import ConcurrentRuns, selected_params
from spatial_manip.cli import SUBCOMMANDS
from spatial_manip.devtools import docs_reference

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
HAND_WRITTEN = [p for p in PAGES if "reference" not in p.parts]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```(?:bash|sh)?\n(.*?)```", re.S)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+\s+(.*)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def documented_commands() -> list[tuple[Path, str]]:
    """Every `spatial-manip ...` line in a shell block of a hand-written page, continuations joined."""
    out = []
    for page in HAND_WRITTEN:
        for block in FENCE.findall(page.read_text()):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split("  #")[0].strip()
                for part in re.split(r"&&|;", line):
                    part = part.strip().rstrip("&").strip()
                    if part.startswith("spatial-manip "):
                        out.append((page, part))
    return out


def test_readme_fits_a_few_screens():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines < 150, f"README.md has {lines} lines; move detail into docs/guides/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_internal_links_resolve(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.relative_to(ROOT)} links to {target}: no such heading"


def test_generated_reference_is_current():
    stale = docs_reference.stale_pages()
    assert not stale, f"stale: {stale}; run python -m spatial_manip.devtools.docs_reference"


def test_every_parameter_has_a_description():
    from spatial_manip.parameters import NODE_PARAMETERS as table

    missing = [f"{node}.{p.name}" for node, params in table.items() for p in params if not p.description.strip()]
    assert not missing, f"parameters without a description: {missing}"


def _parse(command: str) -> argparse.Namespace:
    argv = shlex.split(command.replace("$PWD", "/tmp").replace("~", "/tmp"))[1:]
    name = argv[0]
    assert name in SUBCOMMANDS, f"`{command}`: no command {name!r}"
    parser = argparse.ArgumentParser(prog=f"spatial-manip {name}", exit_on_error=False)
    importlib.import_module(SUBCOMMANDS[name][0]).add_arguments(parser)
    return parser.parse_args(argv[1:])


@pytest.mark.parametrize("page,command", documented_commands(),
                         ids=[f"{p.name}:{c[:60]}" for p, c in documented_commands()])
def test_documented_command_is_accepted_by_the_parser(page, command, capsys):
    try:
        _parse(command)
    except SystemExit as e:  # argparse reports some errors by exiting
        pytest.fail(f"{page.relative_to(ROOT)}: `{command}` is refused by the parser: {capsys.readouterr().err.strip()} ({e})")
    except argparse.ArgumentError as e:
        pytest.fail(f"{page.relative_to(ROOT)}: `{command}` is refused by the parser: {e}")


# Documented commands cheap enough to run here, as a user would type them (in a scratch folder).
RUN_HERE = [
    "spatial-manip calibrate --print-board board.png --dpi 300",
    "spatial-manip calibrate --sim --mode eye_to_hand --out /tmp/cal.yaml",
    "spatial-manip tasks --suite pick --count 50 --seed 0 --out out/tasks",
    "spatial-manip tasks --suite pick --count 4 --seed 7 --out /tmp/gz --sdf",
]
# Every other documented command says why it is not run here: it needs a cell (a robot, a camera,
# a running graph, a VLM server, or the user's own files), or it is a benchmark of minutes.
NOT_RUN = {
    "needs a running graph, a robot or a camera": r" (launch|goal|record|replay) |--ros\b",
    "needs the user's own files (bags, samples, scenes, a library)": r" (evaluate|bag-repair|check-calibration) |--bag |--samples |"
                                                                       r"--scene scene\.json|--library config/",
    "needs an ESPIRE client or server, or a VLM server": r" espire-eval |espire-server --(suite smoke|tasks)|--backend openai",
    "a benchmark of minutes (make bench)": r" (bench|oracle) |--bench |--count 96| plan-bench\b",
}


def _why_not_run(command: str) -> str | None:
    return next((why for why, pattern in NOT_RUN.items() if re.search(pattern, command)), None)


def test_every_documented_command_is_run_or_says_why_not(capsys):
    commands = [c for _, c in documented_commands()]
    unclassified = [c for c in commands if c not in RUN_HERE and _why_not_run(c) is None]
    assert not unclassified, f"run these in test_documented_command_runs, or say in NOT_RUN why not: {unclassified}"
    ran = sum(c in RUN_HERE for c in commands)
    with capsys.disabled():
        print(f"\n[docs] {len(commands)} documented spatial-manip commands: all parsed, {ran} run here, "
              f"{len(commands) - ran} need a cell or are benchmarks")


@pytest.fixture(scope="module")
def command_runs(request, tmp_path_factory):
    """Each selected RUN_HERE command, started together, each in its own scratch folder: command -> folder."""
    runs, folders = ConcurrentRuns(), {}
    for command in selected_params(request, "test_documented_command_runs", "command"):
        folders[command] = tmp_path_factory.mktemp("user")
        runs.start(command, [sys.executable, "-m", "spatial_manip.cli", *shlex.split(command)[1:]],
                   cwd=folders[command], timeout=300)
    yield runs, folders
    runs.close()


@pytest.mark.parametrize("command", RUN_HERE)
def test_documented_command_runs(command, command_runs):
    assert any(c == command for _, c in documented_commands()), f"`{command}` is no longer documented"
    runs, folders = command_runs
    done, tmp_path = runs.result(command), folders[command]
    assert done.returncode == 0, f"`{command}` failed: {done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    out = [a for a in shlex.split(command) if a.startswith("/tmp/")]
    written = Path(out[0]) if out else tmp_path
    assert written.exists() and (written.is_file() or any(written.iterdir())), f"`{command}` wrote nothing"
