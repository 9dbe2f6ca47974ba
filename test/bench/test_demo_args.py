"""`spatial-manip demo`'s arguments, checked before anything starts (no ROS, no simulator)."""
import argparse

import pytest

from spatial_manip.bench import demo


def _args(*argv):
    p = argparse.ArgumentParser()
    demo.add_arguments(p)
    return p.parse_args(list(argv))


def test_the_noise_seed_defaults_to_the_scene_seed_and_is_a_reset_seed():
    assert _args().noise_seed is None
    assert _args("--noise-seed", "7").noise_seed == 7
    with pytest.raises(SystemExit, match="--noise-seed must be in 0..4294967295"):
        demo.run(_args("--noise-seed", "-1"))


def test_the_demo_takes_the_users_ros_domain_and_refuses_one_out_of_range(monkeypatch):
    monkeypatch.setenv("ROS_DOMAIN_ID", "42")
    assert demo.own_domain(None) == 42                # set by the user (to watch it from RViz): kept
    with pytest.raises(SystemExit, match=r"--domain must be a ROS domain id in 0\.\.232, got 300"):
        demo.own_domain(300)


def test_the_demo_perceives_as_a_lab_does_by_default_and_labels_ground_truth_a_diagnostic():
    """Issue 37: no ground truth by default. The classical segmenter on the enrolled library is the
    default; `--segmenter ground_truth` stays, paired with the episode's catalogue and labelled."""
    from spatial_manip.bench.worker import default_catalogue

    args = _args()
    assert args.segmenter == "classical" and default_catalogue(args.segmenter) == "library"
    assert "what a lab has" in demo.perception_label(args.segmenter, default_catalogue(args.segmenter))
    diagnostic = _args("--segmenter", "ground_truth").segmenter
    assert "DIAGNOSTIC" in demo.perception_label(diagnostic, default_catalogue(diagnostic))
