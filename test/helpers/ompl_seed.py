"""OMPL's one process-wide seed sequence, restarted for a test that needs its searches to draw what
they draw in a fresh process (the planner's own seed is set once per process: `_seed_once`)."""


def reseed_ompl(seed: int) -> None:
    """Restart OMPL's seed sequence at `seed`. OMPL logs that a seed set after draws is not
    deterministic: it restarts the sequence, which is all a test needs (the planners' searches
    build their samplers anew)."""
    from ompl import util as ou

    ou.setLogLevel(ou.LogLevel.LOG_NONE)
    ou.RNG.setSeed(seed)
    ou.setLogLevel(ou.LogLevel.LOG_WARN)
