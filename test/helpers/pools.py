"""Scene pools for tests that generate tasks: tasks.make_pool builds and renders a MuJoCo world for
every scene it keeps and for most it rejects, nearly all of a generator's time, so tests that
generate from the same pools build them once in a test run (a pool depends on its kind, seed,
size and shelf stance alone, not on the suite that asks for it)."""
import contextlib
import copy

import pytest

from spatial_manip.sim import tasks


_BUILT: dict = {}       # (kind, seed, size, stance) -> the pool, for every test of the run that asks


@contextlib.contextmanager
def pools_built_once(sizes: dict[str, int] | None = None):
    """Within the block, tasks.make_pool builds each (kind, seed, size, stance) pool once per test
    run and hands every call its own copy (a test may change a scene); `sizes` (kind -> scenes)
    overrides the size a Generator asks of a kind, as if the generator had been given that pool."""
    built = _BUILT
    make_pool = tasks.make_pool

    def once(kind: str, seed: int, n: int, *rest):
        key = (kind, seed, (sizes or {}).get(kind, n), *rest)
        if key not in built:
            built[key] = make_pool(*key)
        return copy.deepcopy(built[key])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tasks, "make_pool", once)
        yield
