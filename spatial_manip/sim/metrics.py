"""Episode metrics (SpatialWorld): task success rate, step efficiency, the step budget, and
failure categories, aggregated overall and per family / difficulty.

- TSR: the fraction of episodes whose final state passes the success checker.
- SE (step efficiency): per episode g / max(steps, g) when it succeeded, 0 when it failed, so an
  agent that succeeds with the golden action count g scores 1 and a detour scores less
  (SpatialWorld's optimal-to-actual ratio). `se_success` averages over successes only.
- Step budget: 2g + 10 actions (SpatialWorld). An episode that needs more is cut off with the
  failure category `timeout`.
"""
from __future__ import annotations

import enum
import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping


class Failure(str, enum.Enum):
    """Why an episode failed. The checker returns the first five kinds; the runner the rest."""

    WRONG_OBJECT = "wrong_object"        # the gripper holds a book outside the answer set
    NOT_IN_REGION = "not_in_region"      # the placed book's centre is outside every target area
    WRONG_DIRECTION = "wrong_direction"  # metric placement on the wrong side of the reference
    DISTANCE = "distance"                # a distance outside its tolerance
    TILT = "tilt"                        # the book's pose/tilt is not the one asked for
    DROPPED = "dropped"                  # the book left the gripper or fell off its support
    NO_GRASP = "no_grasp"                # nothing in the gripper at the end of a pick
    NOT_LIFTED = "not_lifted"            # held but not lifted above its support
    NOT_RELEASED = "not_released"        # a place task ended with the book still in the gripper
    UNREACHABLE = "unreachable"          # no IK solution / outside the workspace
    PLANNER_ERROR = "planner_error"      # the planner or the oracle could not produce a plan
    TIMEOUT = "timeout"                  # step budget 2g+10 or wall-clock limit exceeded
    SIM_ERROR = "sim_error"              # the simulator raised (a bug to look at)


def step_budget(golden_steps: int) -> int:
    """SpatialWorld's dynamic step budget: 2g + 10."""
    if golden_steps < 0:
        raise ValueError(f"the golden action count must be >= 0, got {golden_steps}")
    return 2 * int(golden_steps) + 10


def step_efficiency(success: bool, steps: int, golden_steps: int) -> float:
    """g / max(steps, g) for a success, 0 for a failure."""
    if not success:
        return 0.0
    if golden_steps <= 0:
        return 1.0
    return float(golden_steps) / float(max(int(steps), int(golden_steps)))


@dataclass
class EpisodeResult:
    """One episode as written to results.json."""

    task_id: str
    instruction: str
    success: bool
    steps: int
    golden_steps: int
    failure_category: str | None = None
    message: str = ""
    time_s: float = 0.0
    suite: str = ""
    family: str = ""
    difficulty: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.failure_category is not None:
            self.failure_category = Failure(self.failure_category).value
        if self.success and self.failure_category is not None:
            raise ValueError(f"episode {self.task_id}: a success cannot have failure {self.failure_category!r}")
        if not self.success and self.failure_category is None:
            raise ValueError(f"episode {self.task_id}: a failure needs a failure category")

    @property
    def step_efficiency(self) -> float:
        return step_efficiency(self.success, self.steps, self.golden_steps)

    @property
    def over_budget(self) -> bool:
        return self.steps > step_budget(self.golden_steps)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["step_efficiency"] = self.step_efficiency
        d["step_budget"] = step_budget(self.golden_steps)
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "EpisodeResult":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class Summary:
    episodes: int
    successes: int
    tsr: float
    se: float
    se_success: float
    mean_steps: float
    failures: dict

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(results: Iterable[EpisodeResult]) -> Summary:
    rs = list(results)
    n = len(rs)
    wins = [r for r in rs if r.success]
    fails: dict[str, int] = defaultdict(int)
    for r in rs:
        if not r.success:
            fails[r.failure_category] += 1
    se_all = [r.step_efficiency for r in rs]
    return Summary(
        episodes=n,
        successes=len(wins),
        tsr=len(wins) / n if n else math.nan,
        se=sum(se_all) / n if n else math.nan,
        se_success=sum(r.step_efficiency for r in wins) / len(wins) if wins else math.nan,
        mean_steps=sum(r.steps for r in rs) / n if n else math.nan,
        failures=dict(sorted(fails.items())),
    )


def aggregate(results: Iterable[EpisodeResult], by: str = "family") -> dict[str, Summary]:
    """Summaries per value of an EpisodeResult field (family, difficulty, suite)."""
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        groups[str(getattr(r, by))].append(r)
    return {k: summarize(v) for k, v in sorted(groups.items())}


def report_table(results: list[EpisodeResult], by: str = "family") -> str:
    """A plain-text table of TSR and SE per group, for the terminal."""
    rows = aggregate(results, by)
    width = max([len(by)] + [len(k) for k in rows])
    lines = [f"{by:<{width}}  {'n':>4}  {'TSR':>6}  {'SE':>5}  failures"]
    for k, s in rows.items():
        f = ", ".join(f"{c}={n}" for c, n in s.failures.items())
        lines.append(f"{k:<{width}}  {s.episodes:>4}  {100 * s.tsr:>5.1f}%  {s.se:>5.2f}  {f}")
    return "\n".join(lines)


# --- unintended contacts (issue #21) ------------------------------------------------------------
# The simulator's ContactMonitor (sim/contacts.py) counts contact EVENTS of the arm, the gripper
# and the held object with anything but the task's target and its support, per arm motion phase.
# sim_node's /sim/check_success exports them in its final state as contacts = {"by_phase":
# {phase: n}, "events": [...]}. Episodes without it were not measured: they are reported as such,
# never as 0.

def unintended_contacts(final_state: Mapping | None) -> dict | None:
    """{"total", "by_phase", "events"} from an exported final state's `contacts`; None when not
    measured."""
    c = final_state.get("contacts") if isinstance(final_state, Mapping) else None
    counts = _counts(c)
    if counts is None:
        return None
    return {**counts, "events": [dict(e) for e in c.get("events") or [] if isinstance(e, Mapping)]}


def episode_contacts(record: Mapping) -> dict | None:
    """An episode record's {"total", "by_phase"} (None: not measured): the record's own
    `unintended_contacts` when the worker wrote it, else read from its `final_state`."""
    if "unintended_contacts" in record:
        return _counts(record["unintended_contacts"])
    return _counts(unintended_contacts(record.get("final_state")))


def _counts(c) -> dict | None:
    """{"total", "by_phase"} of a contacts mapping with a `by_phase` table; None otherwise."""
    if not isinstance(c, Mapping) or not isinstance(c.get("by_phase"), Mapping):
        return None
    by_phase = {str(k): int(v) for k, v in c["by_phase"].items()}
    return {"total": sum(by_phase.values()), "by_phase": by_phase}


def contacts_summary(per_episode: Iterable[Mapping | None]) -> dict:
    """Unintended contacts over episodes ({"total", "by_phase"} each, None = not measured):
    mean per measured episode overall and per phase (an episode without a phase counts 0 in it),
    how many episodes had any, how many were not measured. `per_episode` is None when no episode
    was measured."""
    cs = list(per_episode)
    measured = [c for c in cs if c is not None]
    n = len(measured)
    phases: dict[str, int] = {}
    for c in measured:
        for p, k in c["by_phase"].items():
            phases[p] = phases.get(p, 0) + int(k)
    total = sum(phases.values())
    return {"measured": n, "not_measured": len(cs) - n, "total": total,
            "per_episode": round(total / n, 4) if n else None,
            "episodes_with_contacts": sum(1 for c in measured if c["total"] > 0),
            "by_phase": {p: {"total": k, "per_episode": round(k / n, 4)} for p, k in phases.items()}}


def format_contacts(s: Mapping) -> str:
    """One line: 'unintended contacts per episode 0.25 (approach 0.17, lift 0.08; 2 of 12 episodes
    had any[; 3 not measured])', or 'unintended contacts per episode: not measured'."""
    if not s.get("measured"):
        return "unintended contacts per episode: not measured"
    phases = ", ".join(f"{p} {b['per_episode']:.2f}" for p, b in s["by_phase"].items() if b["total"])
    tail = f"; {s['not_measured']} not measured" if s["not_measured"] else ""
    return (f"unintended contacts per episode {s['per_episode']:.2f} ({phases + '; ' if phases else ''}"
            f"{s['episodes_with_contacts']} of {s['measured']} episodes had any{tail})")
