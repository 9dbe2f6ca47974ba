"""The stack driver's MOVE follows the box ESPIRE's execution view marks, as ESPIRE's own drivers
do (their execution prompt: "the book ... marked by a bounding box", "the placement area is
marked by a bounding box"): it perceives the plain world view and clicks, inside the marked box,
where its own geometry says the action lands; the MOVE at that pixel meets the goal. Seed 31's
pick and place, and place-54-00003 of the ESPIRE bench (episodes/: the box of the bottom slot
also shows the floor of the slot above, which the driver chose at 2b2bdcd)."""
import uuid
from pathlib import Path

import pytest

from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.espire.client import drawn_box
from spatial_manip.espire.server import EspireServer
from spatial_manip.espire.stack_driver import StackPolicy, observation_from_reply, tcp_pose
from spatial_manip.scene import Scene
from spatial_manip.sim import tasks as sim_tasks
from spatial_manip.sim.library import load_default_library

# MuJoCo worlds, task generation and the feasibility filter: minutes on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

def _ask(server: EspireServer, sid: str, kind: str, **content) -> dict:
    return server.handle(proto.Request(str(uuid.uuid4()), kind, {**content, "sid": sid}, sid))


EPISODES = Path(__file__).parent / "episodes" / "tasks.jsonl"


@pytest.fixture(scope="module")
def served(seed31_items):
    recorded = {t.id: (t, Scene.load(p)) for t, p in sim_tasks.load(EPISODES)}
    return {**seed31_items, **recorded}


@pytest.mark.parametrize("action", ["pick", "place", "place-54-00003"])
def test_a_move_in_the_marked_box_meets_the_goal(served, free_port, action):
    task, scene = served[action]
    server = EspireServer([served[action]], server_port=free_port(), client_port=free_port(), verbose=False,
                          log=lambda *_: None)
    try:
        sid = str(uuid.uuid4())
        env = _ask(server, sid, "SET_TASK", task_id=task.id, rotation=[None, None, None])["start_state"]["env_state"]
        policy = StackPolicy(scenes={task.id: scene}, library=load_default_library())
        policy.begin(task.id, tcp_pose(env))
        obs = observation_from_reply(_ask(server, sid, "GET_OBSERVATION", view="world", highlight_goal=False))
        high_uid = str(uuid.uuid4())
        high = server.handle(proto.Request(high_uid, "GET_OBSERVATION",
                                           {"view": "world", "highlight_goal": True, "sid": sid}, sid))
        marked = drawn_box(obs.rgb, proto.decode_png(high["rgb"]))
        assert marked is not None
        choice = policy.choose_marked(obs, {"action": task.action, "instruction": task.instruction}, tcp_pose(env),
                                      marked)
        assert choice.pixel is not None, choice.error
        r, c = choice.pixel
        assert views.in_box(marked, r, c)
        ep = server.session.episode
        if task.action == "pick":   # on the marked book itself, not on the support or the table in its box
            assert views.goal_mask(ep.kept[high_uid].obs, ep.marked[0], [])[r, c]
        moved = _ask(server, sid, "MOVE", reference_uid=high_uid, point={"row": r, "col": c})
        assert moved["goal_met"], moved["status"]
    finally:
        server.close()
