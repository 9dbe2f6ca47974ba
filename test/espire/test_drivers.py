"""The floor and the ceiling through the protocol: the oracle driver (clicks the goal the server
marks) and the random-click driver play ESPIRE's episode flow against a server over real ZeroMQ
(the server in a thread of this process) on feasible tasks, one pick and one place. The oracle
completes both; random clicks play every episode to END_TASK (whether one lands on an answer is
chance: `spatial-manip espire-server --bench` measures the rate)."""
import io
import threading
from contextlib import redirect_stderr, redirect_stdout

import pytest
from pools import pools_built_once

from spatial_manip.espire import feasible
from spatial_manip.espire.client import EspireProtocolClient, make_driver
from spatial_manip.espire.server import EspireServer

# MuJoCo worlds, task generation and the feasibility filter: minutes on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def served(free_port):
    quiet = io.StringIO()
    with redirect_stdout(quiet), redirect_stderr(quiet), pools_built_once():       # seed31_items' pools
        items = feasible.generate_feasible("pick", 1, 31, pool_size=3) + feasible.generate_feasible("place", 1, 31, pool_size=3)
    ports = {"server_port": free_port(), "client_port": free_port()}
    server = EspireServer(items, **ports, verbose=False, log=lambda *_: None)
    stop = threading.Event()
    t = threading.Thread(target=server.serve, kwargs={"should_stop": stop.is_set}, daemon=True)
    t.start()
    yield server, ports
    stop.set()
    t.join(10)
    server.close()


def _play(ports, driver: str, seed: int = 0) -> list:
    with EspireProtocolClient(timeout_s=120, **ports) as c:
        tasks = c.call("GET_TASK_LIST")["tasks"]
    logs = []
    for i, task in enumerate(tasks):
        with EspireProtocolClient(timeout_s=120, **ports) as c:      # a new session per episode, as ESPIRE's start()
            logs.append(make_driver(driver, c, seed=seed + i).run(task))
    return logs


def test_the_oracle_completes_every_served_task(served):
    server, ports = served
    logs = _play(ports, "oracle")
    assert [lg.action for lg in logs] == ["pick", "place"]
    assert all(lg.finish_goal and lg.moved for lg in logs), [(lg.task_id, lg.statuses) for lg in logs]
    assert all(lg.update_s for lg in logs)
    assert len(server.stats.episodes) == 2


def test_random_clicks_play_every_episode_to_its_end(served):
    server, ports = served
    before = len(server.stats.episodes)
    logs = _play(ports, "random", seed=7)
    assert len(server.stats.episodes) == before + 2          # every episode reached END_TASK
    for lg in logs:
        assert 1 <= lg.move_tries <= 5 and len(lg.statuses) == lg.move_tries
        assert set(lg.statuses) <= {"success", "refocus"}
        assert isinstance(lg.finish_goal, bool) and lg.finish_goal == lg.moved
