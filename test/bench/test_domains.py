"""Two measurements on one machine never share a ROS domain (two benches once drew domain 34
together and answered each other's goals)."""
import subprocess
import sys

import pytest

from spatial_manip.bench.domains import hold_domains, release

HOLDER = ("import sys, time; from spatial_manip.bench.domains import hold_domains; "
          "print(*hold_domains(int(sys.argv[1]), first=int(sys.argv[2])), flush=True); time.sleep(60)")


def _holder(k: int, first: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(k), str(first)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().split() == [str(d) for d in range(first, first + k)]
    return proc


def test_a_domain_another_process_holds_is_not_taken_until_it_exits():
    other = _holder(2, 90)
    try:
        with pytest.raises(RuntimeError, match="90-91 are held by other measurements"):
            hold_domains(2, first=90)
        mine = hold_domains(2)
        assert not {90, 91} & set(mine)
        release(mine)
    finally:
        other.kill()
        other.wait()
    again = hold_domains(2, first=90)       # the kernel dropped the dead holder's locks
    assert again == [90, 91]
    release(again)


def test_domains_this_process_holds_are_not_handed_out_twice():
    first = hold_domains(1, first=95)
    try:
        second = hold_domains(1)
        assert second != first
        release(second)
    finally:
        release(first)
