"""The bench's model-free random driver and its report, without a server: the random clicker sends
what ESPIRE's stock client sends, and the report counts success both ways ESPIRE's analyze does."""
import numpy as np

from spatial_manip.bench.espire_bench import report
from spatial_manip.espire.client import EpisodeLog, RandomClickDriver


def test_random_clicks_send_no_rotation_delta_as_espires_stock_client():
    driver = RandomClickDriver(client=None, rng=np.random.default_rng(0))
    assert driver.move_extra({"action": "place"}) == {}
    assert driver.move_extra({"action": "pick"}) == {}


def test_the_report_counts_localized_and_goal_only_when_both_happened():
    logs = {"random": [EpisodeLog("a", "place", localized=True, moved=True, finish_goal=True),
                       EpisodeLog("b", "place", localized=False, moved=True, finish_goal=True),
                       EpisodeLog("c", "place", localized=True)]}
    row = next(line for line in report(logs, 1.0, "t").splitlines() if line.strip().startswith("random"))
    # place: localized, finish_goal, localized & goal
    assert row.split()[-6:] == ["2/3", "(67%)", "2/3", "(67%)", "1/3", "(33%)"]
