"""Shared by the ESPIRE tests, which start servers on loopback."""
import io
import socket
from contextlib import redirect_stderr, redirect_stdout

import pytest
from pools import pools_built_once


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def free_port():
    """A function giving a TCP port nobody on this machine listens on now."""
    return _free_port


@pytest.fixture(scope="session")
def seed31_items():
    """Seed 31's feasible tasks, one of each action: pick-31-00000, a tilted book of three;
    place-31-00001, the slot at row 3, column 2, of eight (task generation and the feasibility
    filter: minutes on a loaded machine, so once a session; its pools are test_drivers' too)."""
    from spatial_manip.espire import feasible

    quiet = io.StringIO()
    with redirect_stdout(quiet), redirect_stderr(quiet), pools_built_once():
        picks = feasible.generate_feasible("pick", 1, 31, pool_size=3)
        places = feasible.generate_feasible("place", 2, 31, pool_size=3)
    return {"pick": picks[0], "place": places[1]}
