"""The expected random-click place success (bench/espire_chance.py): a LOCALIZE hits the answers'
share of the view within three tries; one MOVE ends in success,
a release elsewhere, or nothing set down (the next trial, on the wrist view)."""
import pytest

from spatial_manip.bench.espire_chance import TrialShares, expected_success, localized_chance


def test_a_view_where_nothing_is_ever_set_down_gives_the_wrist_views_chances():
    world = TrialShares(success=0.0, released=0.0, nothing=1.0)
    ego = TrialShares(success=0.1, released=0.3, nothing=0.6)
    # four more trials on the wrist view: 0.1 * (1 + 0.6 + 0.36 + 0.216)
    assert expected_success(world, ego, trials=5) == pytest.approx(0.2176)


def test_the_first_set_down_ends_the_episode():
    world = TrialShares(success=0.2, released=0.8, nothing=0.0)
    ego = TrialShares(success=1.0, released=0.0, nothing=0.0)
    assert expected_success(world, ego) == pytest.approx(0.2)


def test_the_rate_is_the_share_of_set_downs_that_succeed_when_trials_are_plenty():
    world = ego = TrialShares(success=0.05, released=0.15, nothing=0.8)
    assert expected_success(world, ego, trials=200) == pytest.approx(0.25, abs=1e-6)


def test_a_random_localization_gets_espires_three_tries_at_the_answers_share():
    assert localized_chance(0.0) == 0.0
    assert localized_chance(0.5) == pytest.approx(0.875)          # 1 - 0.5 ** 3
    assert localized_chance(0.2, trials=1) == pytest.approx(0.2)
