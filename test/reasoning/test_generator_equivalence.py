"""Two implementations of every task family, checked against each other on the smoke suite
(spatial_manip/devtools/generator_equivalence.py says how; it runs the whole `all` suite, minutes
of pure Python, as `python -m spatial_manip.devtools.generator_equivalence`).

1. Every variant a family poses on the pool scenes: the program written into it as its label,
   executed by the planner, selects exactly the generator's answer (or the generator's set-down
   position).
2. Every generated task: the planner reads the instruction back into the task's answer, and a
   task meaning the viewer's frame of a reference with a front says so in its words.
"""
import pytest

from pools import pools_built_once
from spatial_manip.devtools.generator_equivalence import task_disagreements, variant_disagreements


@pytest.fixture(scope="module", autouse=True)
def one_pool_build():
    """Both checks generate the smoke suite's seed-1 pools (18 MuJoCo scenes: most of each
    check's time); the second gets copies of the first's."""
    with pools_built_once():
        yield


def test_smoke_variants_agree_with_the_executor():
    checked, wrong = variant_disagreements("smoke", 12, seed=1)
    assert checked >= 150
    assert not wrong, wrong[:5]


def test_smoke_suite_equivalence():
    checked, wrong = task_disagreements("smoke", 12, seed=1)
    assert checked == 12
    assert not wrong, wrong[:5]
