"""bag-repair on storage files cut where a crash leaves them (no ROS graph, no DDS): an MCAP file
ending anywhere, a sqlite3 file whose writer died mid-transaction with ~20 MB of pages already
spilled into the file and a hot journal beside it."""
import subprocess
import sys
import textwrap

import pytest
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from spatial_manip.bags.io import BagError, BagReader, BagWriter
from spatial_manip.bags.repair import repair

S = 1_000_000_000


def texts(path):
    with BagReader(path) as r:
        return [r.deserialize(m).data for m in r.messages()]


def test_mcap_cut_anywhere_keeps_every_flushed_chunk(tmp_path):
    sizes = []   # file size after each flush: 10, 20, 30 messages on disk
    with BagWriter(tmp_path / "b", "mcap") as w:
        w.add_topic("/t", "std_msgs/msg/String")
        for i in range(30):
            w.write("/t", (i + 1) * S, serialize_message(String(data=f"m{i}")))
            if i % 10 == 9:
                w.flush()   # as the recorder does every flush period
                sizes.append((tmp_path / "b" / "b.mcap").stat().st_size)
    data = (tmp_path / "b" / "b.mcap").read_bytes()
    mid_second_chunk = (sizes[0] + sizes[1]) // 2
    for cut, expect in ((sizes[1], 20), (mid_second_chunk, 10), (sizes[0] + 1, 10), (len(data) - 8, 30),
                        (len(data), 30)):
        src = tmp_path / f"cut{cut}"
        src.mkdir()
        (src / "cut.mcap").write_bytes(data[:cut])
        report = repair(src, tmp_path / f"fixed{cut}")
        assert report.counts == {"/t": expect}
        assert texts(tmp_path / f"fixed{cut}") == [f"m{i}" for i in range(expect)]


WRITER = textwrap.dedent("""
    import os, sys
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    from spatial_manip.bags.io import BagWriter
    w = BagWriter(sys.argv[1], "sqlite3")
    w.add_topic("/t", "std_msgs/msg/String")
    for i in range(20):
        w.write("/t", (i + 1) * 10**9, serialize_message(String(data=f"m{i}")))
    w.flush()
    blob = "x" * 200_000
    for i in range(20, 120):   # ~20 MB in the open transaction: SQLite spills pages into the file
        w.write("/t", (i + 1) * 10**9, serialize_message(String(data=f"m{i} " + blob)))
    os._exit(9)                # no commit, no close: like SIGKILL
""")


def test_sqlite_killed_mid_transaction_rolls_back_to_the_last_flush(tmp_path):
    bag = tmp_path / "b"
    proc = subprocess.run([sys.executable, "-c", WRITER, str(bag)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    assert (bag / "b.db3-journal").exists()  # the hot journal of the unfinished transaction
    with pytest.raises(BagError, match="metadata.yaml"):  # not a bag ros2 bag play opens as left
        texts(bag)

    report = repair(bag, tmp_path / "fixed")
    assert texts(tmp_path / "fixed") == [f"m{i}" for i in range(20)]
    assert report.counts == {"/t": 20}
    assert (bag / "b.db3-journal").exists()  # the damaged original is left as it was
