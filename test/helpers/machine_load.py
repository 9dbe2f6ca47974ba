"""Time limits that stretch with the machine's load, for waits whose length is not what a test
checks: a whole-suite run beside two benchmarks (load 30 on 2 cores, session 32) took 23 s over
an answer a quiet machine gives in 2, and failed tests whose behaviour was right."""
import os

MOST = 10.0     # a wait that is 10x its quiet length on this machine is a hang, not load


def load_per_core() -> float:
    """The 1-minute load average per core: 1 means every core busy."""
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def scaled_by_load(seconds: float) -> float:
    """`seconds` (enough on a quiet machine) times the load per core beyond 1, at most MOST times."""
    return seconds * min(MOST, max(1.0, load_per_core()))
