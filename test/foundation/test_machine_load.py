"""The tests' load-stretched time limits (test/helpers/machine_load.py)."""
import os

import machine_load


def test_a_limit_stretches_with_the_load_per_core_beyond_one_and_no_further_than_most(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    for load, factor in ((0.5, 1.0), (2.0, 1.0), (6.0, 3.0), (30.0, 10.0), (500.0, machine_load.MOST)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert machine_load.scaled_by_load(15.0) == 15.0 * factor
