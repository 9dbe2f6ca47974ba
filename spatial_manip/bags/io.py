"""rosbag2 reading and writing with the `rosbags` library (sqlite3 and MCAP), ROS-free.

Writing takes CDR bytes as they come off the wire (rclpy raw subscriptions, or
`rclpy.serialization.serialize_message`), so no message is decoded to be recorded; the typestore
only supplies each connection's message definition and type hash, which `ros2 bag play` and
Foxglove read. Every library error is re-raised as a BagError naming the bag (and the topic).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import ReaderError, StoragePlugin, Writer

from spatial_manip.device import Closeable
from spatial_manip.bags.typestore import project_typestore
from spatial_manip.errors import SpatialManipError

STORAGES = ("sqlite3", "mcap")


class BagError(SpatialManipError):
    """A bag cannot be read or written: corrupt, truncated, unknown type or missing topic."""


class BagTopicError(BagError):
    """A topic the caller needs is not in the bag."""


def _read_errors() -> tuple:
    errs = [AnyReaderError, ReaderError, sqlite3.Error, OSError, ValueError, KeyError, EOFError]
    try:
        import apsw  # the sqlite3 storage raises raw apsw errors on truncated files

        errs.append(apsw.Error)
    except ImportError:
        pass
    try:
        from rosbags.rosbag2.storage_mcap import McapError  # type: ignore[attr-defined]

        errs.append(McapError)
    except ImportError:
        pass
    return tuple(errs)


@dataclass(frozen=True)
class TopicInfo:
    topic: str
    msgtype: str
    count: int
    latched: bool


@dataclass(frozen=True)
class BagMessage:
    topic: str
    msgtype: str
    t_ns: int          # receive time recorded in the bag
    raw: bytes         # CDR


class BagReader(Closeable):
    """Read a rosbag2 folder (with metadata.yaml), or a bare .db3 / .mcap file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._errors = _read_errors()
        if not self.path.exists():
            raise BagError(f"bag {self.path} does not exist")
        try:
            self._reader = AnyReader([self.path], default_typestore=project_typestore())
            self._reader.open()
        except FileNotFoundError as e:
            raise BagError(f"bag {self.path}: {e}; a rosbag2 folder needs its metadata.yaml "
                           "(or pass the .db3/.mcap file itself)") from e
        except self._errors as e:
            raise BagError(f"bag {self.path} is not a readable rosbag2 (corrupt, empty or not a bag): "
                           f"{type(e).__name__}: {e}") from e
        self.topics: dict[str, TopicInfo] = {}
        for c in self._reader.connections:
            latched = any(getattr(q.durability, "name", str(q.durability)).lower().startswith("transient")
                          for q in (getattr(c.ext, "offered_qos_profiles", None) or []) if not isinstance(q, str))
            prev = self.topics.get(c.topic)
            self.topics[c.topic] = TopicInfo(c.topic, c.msgtype, c.msgcount + (prev.count if prev else 0),
                                             latched or bool(prev and prev.latched))

    def close(self) -> None:
        self._reader.close()


    @property
    def start_ns(self) -> int:
        return self._reader.start_time

    @property
    def end_ns(self) -> int:
        return self._reader.end_time

    def require(self, topics: Iterable[str]) -> None:
        missing = [t for t in topics if t not in self.topics]
        if missing:
            raise BagTopicError(f"bag {self.path} has no topic {', '.join(missing)}; it has: "
                                f"{', '.join(sorted(self.topics)) or 'no topics'}")

    def messages(self, topics: Iterable[str] | None = None, start_ns: int | None = None) -> Iterator[BagMessage]:
        """Messages in time order. Truncation found mid-way raises BagError naming the last topic."""
        wanted = set(topics) if topics is not None else None
        if wanted is not None:
            self.require(wanted)
        conns = [c for c in self._reader.connections if wanted is None or c.topic in wanted]
        last = "(before the first message)"
        try:
            for c, t, raw in self._reader.messages(connections=conns, start=start_ns):
                last = c.topic
                yield BagMessage(c.topic, c.msgtype, t, bytes(raw))
        except self._errors as e:
            raise BagError(f"bag {self.path} is truncated or corrupt: reading failed after a message on "
                           f"{last}: {type(e).__name__}: {e}") from e

    def deserialize(self, msg: BagMessage):
        """A rosbags message object (attribute access like the ROS message)."""
        try:
            return self._reader.deserialize(msg.raw, msg.msgtype)
        except Exception as e:  # the library raises many kinds for undecodable bytes
            raise BagError(f"bag {self.path}: cannot decode a {msg.msgtype} on {msg.topic}: "
                           f"{type(e).__name__}: {e}") from e


class BagWriter(Closeable):
    """Write a rosbag2 (metadata.yaml version 9) that `ros2 bag play` reads."""

    def __init__(self, path: str | Path, storage: str = "sqlite3"):
        if storage not in STORAGES:
            raise ValueError(f"storage must be one of {STORAGES}, got {storage!r}")
        self.path = Path(path)
        if self.path.exists():
            raise BagError(f"bag {self.path} already exists; choose a new output folder")
        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        self._writer = Writer(self.path, version=9, storage_plugin=plugin)
        self._writer.open()
        self._conns: dict = {}
        self._latched: dict[str, bool] = {}
        self.counts: dict[str, int] = {}

    def add_topic(self, topic: str, msgtype: str, latched: bool = False, *, msgdef: str | None = None,
                  rihs01: str | None = None) -> None:
        """`msgdef`/`rihs01`: keep a source bag's definition (repair), else the typestore's.
        A topic added again as latched gets a second, transient-local connection and later
        messages go there (a recorder that found the latched publisher late)."""
        if topic in self._conns and (self._latched[topic] or not latched):
            return
        store = project_typestore()
        qos = [_latched_qos()] if latched else []
        try:
            msgdef = msgdef if msgdef else store.generate_msgdef(msgtype, ros_version=2)[0]
            rihs = rihs01 if rihs01 else store.hash_rihs01(msgtype)
        except Exception:  # a type this store does not know: raw bytes are still fine for ros2 bag
            msgdef, rihs = msgdef or "", rihs01 or "RIHS01_" + "0" * 64  # as rosbag2 writes for unknown types
        self._conns[topic] = self._writer.add_connection(topic, msgtype, msgdef=msgdef, rihs01=rihs,
                                                         offered_qos_profiles=qos)
        self._latched[topic] = latched
        self.counts.setdefault(topic, 0)

    def write(self, topic: str, t_ns: int, raw: bytes) -> None:
        if topic not in self._conns:
            raise BagError(f"bag {self.path}: topic {topic} was not added before writing")
        self._writer.write(self._conns[topic], int(t_ns), bytes(raw))
        self.counts[topic] += 1

    def flush(self) -> None:
        """Make everything written so far survive a crash (SIGKILL, power loss).

        rosbags keeps the whole sqlite3 recording in one open transaction and buffers an MCAP
        chunk (up to 1 MiB) in memory, so a killed recorder used to lose all of it; committing /
        closing the pending chunk here bounds the loss to what came since the last flush, and
        `spatial-manip bag-repair` rebuilds the index and metadata.yaml from what is on disk.
        Uses rosbags' storage internals (0.10/0.11): a version that renames them is an error."""
        storage = getattr(self._writer, "storage", None)
        try:
            if hasattr(storage, "conn"):                     # sqlite3: commit the open transaction
                storage.conn.commit()
            elif hasattr(storage, "close_chunk"):            # MCAP: write the pending chunk out
                if storage.chunk.bio.tell():
                    storage.close_chunk()
                storage.bio.flush()
            else:
                raise AttributeError(f"unknown rosbags storage {type(storage).__name__}")
        except AttributeError as e:
            raise BagError(f"bag {self.path}: cannot flush with this rosbags version ({e}); pin rosbags "
                           "0.11 or record with flush_period_s 0 (a crash then loses the recording)") from e

    def close(self) -> None:
        self._writer.close()


def _latched_qos():
    zero = QosTime(0, 0)
    return Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL,
               zero, zero, QosLiveliness.AUTOMATIC, zero, False)
