"""The generator's words: no template says its container twice."""
import numpy as np

from spatial_manip.sim import phrasings


def test_a_shelf_rank_names_the_shelf_once():
    """ESPIRE place-50's "a third leftmost slot on the shelf on the shelf": the template and the
    shelf's frame words both said it; only the frame words do now."""
    rng = np.random.default_rng(0)
    for family in ("Relationship/LeftMost", "Relationship/RankLeftMost", "Relationship/RankRightMost"):
        for _ in range(20):
            text = phrasings.render(rng, "place", family, frame_kind="shelf", k="third", pose="")
            assert text.count("on the shelf") <= 1, text
