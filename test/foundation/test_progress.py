"""A progress bar written to a log file keeps a handful of lines, not one per redraw."""
import io
import time

from spatial_manip.progress import progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _redraws(stream, **kwargs) -> int:
    with progress(total=200, desc="steps", file=stream, **kwargs) as bar:
        for _ in range(200):
            bar.update(1)
            time.sleep(0.001)
    return stream.getvalue().count("\r") + stream.getvalue().count("\n")


def test_a_log_file_gets_the_first_and_last_state_only():
    assert _redraws(io.StringIO()) <= 4


def test_a_terminal_still_sees_the_bar_move():
    assert _redraws(_Terminal(), mininterval=0.0) > 50
