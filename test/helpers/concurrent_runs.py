"""Independent commands a test module runs, started together and awaited one by one.

pytest runs one test at a time, so a test that waits for a subprocess leaves the second core of a
2-core machine idle. A module whose parametrised tests each run one short-lived command (a CLI
refusing bad input, a node refusing its configuration, a documented command) starts them all in a
module fixture, two at a time, and each test then checks its own command's result: the same
commands and assertions, about half the wall time on an idle 2-core machine."""
from __future__ import annotations

import subprocess
from concurrent.futures import Future, ThreadPoolExecutor

WORKERS = 2      # the cores of the CI machine; more only queue behind each other and cost memory


class ConcurrentRuns:
    """`start(key, argv, ...)` queues a `subprocess.run(argv, capture_output=True, text=True, ...)`;
    `result(key)` waits for it and returns its CompletedProcess (re-raising its TimeoutExpired)."""

    def __init__(self, workers: int = WORKERS):
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="concurrent-run")
        self._runs: dict[str, Future] = {}

    def start(self, key: str, argv: list[str], **run_kwargs) -> None:
        if key in self._runs:
            raise ValueError(f"a run named {key!r} was already started; give each command its own key")
        self._runs[key] = self._pool.submit(subprocess.run, argv, capture_output=True, text=True, **run_kwargs)

    def result(self, key: str) -> subprocess.CompletedProcess:
        if key not in self._runs:
            raise KeyError(f"no run named {key!r} was started (started: {sorted(self._runs)})")
        return self._runs[key].result()

    def close(self) -> None:
        """Wait for the runs still going (each has its own timeout) and drop those not started."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def selected_params(request, test_name: str, argname: str) -> list:
    """The values of parameter `argname` of the test function `test_name` in `request`'s module
    that this session will run (`-k` / `-m` may deselect some: their commands are not started)."""
    return [item.callspec.params[argname] for item in request.session.items
            if item.module is request.module and getattr(item, "originalname", None) == test_name
            and argname in getattr(getattr(item, "callspec", None), "params", {})]
