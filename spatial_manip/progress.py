"""Progress bars for long commands that stay readable in a terminal and in a log file.

In a terminal a bar redraws about once a second. Written to a file (a CI log, `cmd > run.log
2>&1`) every redraw is kept, so a one-hour benchmark would leave thousands of lines of bar
fragments; there the bar redraws at most every `LOG_INTERVAL_S` seconds and on each step's end.
"""
from __future__ import annotations

import sys

LOG_INTERVAL_S = 30.0


def progress(iterable=None, **kwargs):
    """A tqdm bar (same arguments) that does not flood a log file."""
    from tqdm import tqdm      # late: tqdm is only needed by the commands that show progress

    stream = kwargs.get("file", sys.stderr)
    if not _is_terminal(stream):
        kwargs.setdefault("mininterval", LOG_INTERVAL_S)
        kwargs.setdefault("maxinterval", LOG_INTERVAL_S * 4)
    return tqdm(iterable, **kwargs)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):      # a closed or unusual stream: treat it as a file
        return False
