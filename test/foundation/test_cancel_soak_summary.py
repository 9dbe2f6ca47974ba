"""`spatial-manip cancel-soak`'s summary line: the figures and where the slowest answer came from
(session 40: the slowest, 14.5 s at "moving:picking", led to the set-down fit that ignored the cancel)."""
from spatial_manip.devtools.cancel_soak import CancelRecord, summary


def test_the_summary_names_the_transition_of_the_slowest_answer_and_counts_only_canceled_ones():
    records = [CancelRecord(0, "perceiving", 0.0, True, "canceled", "CANCELED", 0.4, False, 0.0),
               CancelRecord(1, "moving:picking", 0.02, True, "canceled", "CANCELED", 8.5, False, 0.0),
               CancelRecord(2, "moving:placing (arm moving)", 0.0, True, "canceled", "CANCELED", 0.2, True, 0.001),
               CancelRecord(3, "grasping", 0.0, False, "ended before", "NO_OBSERVATION", 0.0, False, None),
               CancelRecord(4, "verifying", 0.0, True, "succeeded", "", 30.0, False, 0.0)]
    line = summary(records)
    assert "3 cancels answered CANCELED (1 with the arm moving at the cancel) of 5 sent" in line
    assert "worst joint motion after CANCELED 0.0010 rad (moving:placing (arm moving) +0 ms)" in line
    assert "cancel -> answer median 0.40 s, max 8.50 s (moving:picking +20 ms)" in line
