"""Check a workspace file against a fresh look at the cell: is the table where the file says,
is every fixture still where the file says (named, with how far it moved), and what is there
that the file does not know. A shelf file is checked board by board and slot by slot instead
(shelf_check.py): a board not where the file says, a slot holding what the file does not list.

    report = check_workspace(Scene.load(path), obs, tolerance_m=0.02)
    print(report.text()); report.ok

The fresh look is captured exactly like the file was (capture.py), so both sides carry the
same measurement bias; fixtures are paired one to one by the Hungarian method on their centre
distance, never farther apart than `match_radius_m`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import Scene, SceneObject
from spatial_manip.workspace.capture import Capture, CaptureConfig, capture_workspace
from spatial_manip.workspace.findings import Finding
from spatial_manip.workspace.shelf import ShelfCapture
from spatial_manip.workspace.shelf_check import is_shelf, shelf_findings

CHECKED_CATEGORIES = ("support", "shelf")   # fixtures with poses; the table is checked by its height
PROBLEMS = ("moved", "missing", "table_moved", "board_moved", "occupied")


@dataclass
class CheckReport:
    findings: list[Finding] = field(default_factory=list)
    capture: Capture | ShelfCapture | None = None

    @property
    def ok(self) -> bool:
        return not self.problems()

    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status in PROBLEMS]

    def text(self) -> str:
        lines = [f"{_tag(f.status)}  {f.message}" for f in self.findings]
        verdict = "the workspace file matches the cell" if self.ok else \
            f"{len(self.problems())} problem(s): fix the cell or re-capture the workspace"
        unseen = sum(f.status == "not_seen" for f in self.findings)
        if unseen:
            verdict += f" ({unseen} slot(s) not seen, so not checked)"
        return "\n".join(lines + [verdict])


def _tag(status: str) -> str:
    return "PROBLEM" if status in PROBLEMS else "unseen " if status == "not_seen" else "ok     "


def check_workspace(workspace: Scene, obs: RGBDObservation, *, tolerance_m: float = 0.02,
                    match_radius_m: float = 0.3, config: CaptureConfig | None = None) -> CheckReport:
    if tolerance_m <= 0 or match_radius_m <= tolerance_m:
        raise ValueError(f"need 0 < tolerance_m < match_radius_m, got {tolerance_m} and {match_radius_m}")
    if is_shelf(workspace):       # a shelf is checked by its boards and slots, seen from its front
        findings, shelf = shelf_findings(workspace, obs, tolerance_m)
        return CheckReport(findings, shelf)
    capture = capture_workspace(obs, config)
    report = CheckReport(capture=capture)
    report.findings.append(_table_finding(workspace, capture.scene, tolerance_m))
    expected = [o for o in workspace.objects if o.category in CHECKED_CATEGORIES]
    seen = [o for o in capture.scene.objects if o.category in CHECKED_CATEGORIES]
    report.findings += fixture_findings(expected, seen, tolerance_m, match_radius_m)
    return report


def _table_finding(workspace: Scene, captured: Scene, tolerance_m: float) -> Finding:
    tables = [o for o in workspace.objects if o.category == "table"]
    if not tables:
        return Finding("table", "table_ok", "the file has no table: its height is not checked")
    want, got = _top(tables[0]), _top(captured.get("table"))
    dz = got - want
    status = "table_moved" if abs(dz) > tolerance_m else "table_ok"
    return Finding(tables[0].id, status, f"table {tables[0].id!r}: top seen at z = {got:+.3f} m, the file says "
                   f"{want:+.3f} m ({100 * dz:+.1f} cm)", abs(dz))


def _top(o: SceneObject) -> float:
    return float(o.center[2] + o.rotation[2, 2] * o.size[2] / 2)


def fixture_findings(expected: list[SceneObject], seen: list[SceneObject], tolerance_m: float,
                     match_radius_m: float) -> list[Finding]:
    """One finding per expected fixture (ok, moved, missing) and per unexplained segment."""
    pairs = _pairs(expected, seen, match_radius_m)
    out = []
    for i, e in enumerate(expected):
        if i not in pairs:
            out.append(Finding(e.id, "missing", f"{e.id!r} ({e.label}) is not where the file says, at "
                               f"{_xyz(e.center)}: nothing like it within {100 * match_radius_m:.0f} cm "
                               "(moved far, removed, or hidden from the camera)"))
            continue
        s = seen[pairs[i]]
        d = float(np.linalg.norm(s.center - e.center))
        if d > tolerance_m:
            shift = s.center - e.center
            out.append(Finding(e.id, "moved", f"{e.id!r} ({e.label}) moved {100 * d:.1f} cm: seen at {_xyz(s.center)}, "
                               f"the file says {_xyz(e.center)} (shift x {100 * shift[0]:+.1f}, y {100 * shift[1]:+.1f}, "
                               f"z {100 * shift[2]:+.1f} cm; tolerance {100 * tolerance_m:.0f} cm)", d))
        else:
            out.append(Finding(e.id, "ok", f"{e.id!r} ({e.label}) is in place ({100 * d:.1f} cm off)", d))
    used = set(pairs.values())
    out += [Finding(s.id, "unexpected", f"something the file does not list at {_xyz(s.center)}, "
                    f"{_cm(s.size)} (an object on the table, or a new fixture: re-capture to add it)")
            for j, s in enumerate(seen) if j not in used]
    return out


def _pairs(expected: list[SceneObject], seen: list[SceneObject], radius_m: float) -> dict[int, int]:
    """expected index -> seen index, one to one, nearest centres first, within `radius_m`."""
    if not expected or not seen:
        return {}
    cost = np.linalg.norm(np.array([e.center for e in expected])[:, None] - np.array([s.center for s in seen])[None],
                          axis=2)
    # a fixture of another size is a worse partner at the same distance
    size = np.array([[np.abs(np.sort(e.size) - np.sort(s.size)).sum() for s in seen] for e in expected])
    rows, cols = linear_sum_assignment(np.where(cost <= radius_m, cost + 0.5 * size, 1e6))
    return {int(r): int(c) for r, c in zip(rows, cols) if cost[r, c] <= radius_m}


def _xyz(p) -> str:
    return "(" + ", ".join(f"{v:+.3f}" for v in p) + ") m"


def _cm(size) -> str:
    return " x ".join(f"{100 * v:.0f}" for v in size) + " cm"
