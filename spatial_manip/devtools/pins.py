"""The pin lock: what pip resolves for the requirement files `make setup` installs (runtime, models,
bench, test), for each Python a lab may run (3.10 Humble, 3.11 the Kilted wheels, 3.12 Jazzy).

    python -m spatial_manip.devtools.pins            # resolve for each Python and rewrite requirements.lock
    python -m spatial_manip.devtools.pins --check    # resolve again; exit 1 naming what changed

Each resolution is a `pip install --dry-run` for that Python (1-3 min, reading the indexes), so the
test suite does not run it: test_packaging checks the committed lock against the requirement files
in milliseconds (same requirement lines, every requirement met by a locked pin), and this command
is the slow proof, to run after changing a requirement file and before a release.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENT_FILES = ("requirements.txt", "requirements-models.txt", "requirements-bench.txt", "requirements-test.txt")
PYTHONS = ("3.10", "3.11", "3.12")
LOCK = ROOT / "requirements.lock"
_DIGEST_PREFIX = "# requirement lines sha256: "
_HEADER = """\
# What pip resolves for requirements.txt with the models, bench and test extras (the set `make setup`
# installs; a set that resolves together resolves alone), for each Python a lab may run.
# Written by `python -m spatial_manip.devtools.pins` (minutes: one pip --dry-run per Python); its
# --check resolves again and names any difference. test_packaging checks this file against the
# requirement files. Do not edit by hand.
"""


def requirement_lines(root: Path = ROOT) -> list[tuple[str, str]]:
    """(file, line) for every requirement and option line of the files, comments and blanks
    dropped: what the resolution depends on (a comment edit does not call for a new one)."""
    lines = []
    for name in REQUIREMENT_FILES:
        for line in (root / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                lines.append((name, line))
    return lines


def requirements_digest(root: Path = ROOT) -> str:
    return hashlib.sha256("\n".join(f"{name}: {line}" for name, line in requirement_lines(root)).encode()).hexdigest()


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve(python: str, root: Path = ROOT) -> dict[str, str]:
    """{normalised project name: version} that pip would install for `python` (its indexes and
    configuration as set on this machine); raises RuntimeError with pip's output tail on failure."""
    files = [arg for name in REQUIREMENT_FILES for arg in ("-r", str(root / name))]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                            "--python-version", python, "--only-binary=:all:", *files, "--target", str(Path(tmp) / "t"),
                            "--disable-pip-version-check", "--no-cache-dir", "--report", str(report)],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"pip could not resolve the requirements for Python {python}:\n"
                               f"{(r.stdout + r.stderr)[-2000:]}")
        chosen = json.loads(report.read_text())["install"]
    return {normalised(item["metadata"]["name"]): item["metadata"]["version"] for item in chosen}


def format_lock(digest: str, pins: dict[str, dict[str, str]]) -> str:
    out = [_HEADER + _DIGEST_PREFIX + digest]
    for python, chosen in pins.items():
        out += ["", f"[python {python}]", *(f"{name}=={chosen[name]}" for name in sorted(chosen))]
    return "\n".join(out) + "\n"


def read_lock(path: Path = LOCK) -> tuple[str, dict[str, dict[str, str]]]:
    """(the requirement lines' digest it was resolved from, {python: {name: version}}); raises
    ValueError naming the line it cannot read."""
    digest, pins, section = "", {}, None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith(_DIGEST_PREFIX):
            digest = line.removeprefix(_DIGEST_PREFIX).strip()
        elif line.startswith("[python ") and line.endswith("]"):
            section = pins.setdefault(line[len("[python "):-1], {})
        elif line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            if section is None or not sep or not version:
                raise ValueError(f"{path.name}:{number}: expected 'name==version' under a '[python X.Y]' "
                                 f"line, got {line!r}; rewrite the file with python -m spatial_manip.devtools.pins")
            section[normalised(name)] = version
    if not digest:
        raise ValueError(f"{path.name} has no '{_DIGEST_PREFIX.strip()}' line; rewrite it with "
                         "python -m spatial_manip.devtools.pins")
    return digest, pins


def differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    names = sorted(set(old) | set(new))
    return [f"{n}: {old.get(n, '-')} -> {new.get(n, '-')}" for n in names if old.get(n) != new.get(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spatial_manip.devtools.pins", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="resolve again and compare with requirements.lock; "
                        "exit 1 naming the differences instead of rewriting it")
    parser.add_argument("--python", action="append", choices=PYTHONS, help="only these Pythons (repeatable)")
    args = parser.parse_args(argv)
    pythons = args.python or list(PYTHONS)
    locked_digest, locked = read_lock() if LOCK.exists() else ("", {})
    digest = requirements_digest()
    if not args.check and digest != locked_digest and set(pythons) != set(PYTHONS):
        parser.error(f"the requirement files changed since {LOCK.name} was written: every Python must be "
                     "resolved again (leave out --python)")
    pins = dict(locked)
    for python in pythons:
        print(f"resolving for Python {python} ...", flush=True)
        pins[python] = resolve(python)
        print(f"  {len(pins[python])} packages", flush=True)
    if args.check:
        changed = [f"Python {p}: {d}" for p in pythons for d in differences(locked.get(p, {}), pins[p])]
        if locked_digest != digest:
            changed.insert(0, "the requirement files changed since the lock was written")
        print("\n".join(changed) if changed else f"{LOCK.name} is what pip resolves now")
        return 1 if changed else 0
    LOCK.write_text(format_lock(digest, {p: pins[p] for p in PYTHONS if p in pins}))
    print(f"wrote {LOCK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
