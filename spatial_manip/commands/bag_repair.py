"""`spatial-manip bag-repair BAG`: recover every complete message of a recording whose recorder
was killed (no metadata.yaml, no MCAP footer, a hot sqlite journal) into a new, readable bag."""
from __future__ import annotations

import sys

from spatial_manip.bags.io import BagError
from spatial_manip.bags.repair import repair


def add_arguments(p) -> None:
    p.add_argument("bag", help="the damaged bag folder (or its .db3/.mcap file); it is not modified")
    p.add_argument("--out", default=None, help="new bag folder (default: BAG_repaired next to it)")
    p.add_argument("--storage", choices=["sqlite3", "mcap"], default=None,
                   help="storage of the repaired bag (default: the same as the damaged one)")


def run(args) -> int:
    try:
        report = repair(args.bag, args.out, args.storage)
    except BagError as e:
        print(f"spatial-manip bag-repair: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    for topic, n in sorted(report.counts.items()):
        print(f"{n:8d}  {topic}")
    for note in report.notes:
        print(f"note: {note}")
    print(f"recovered {report.total} messages from {report.source} into {report.output} ({report.storage})")
    return 0
