"""The context management every device and open file shares (issue 41): `with` releases what the
object holds, and a Device connects on entry. The role Protocols (Arm, RGBDSource) stay for
typing; a backend inherits from one of these so the __enter__/__exit__ pair is written once."""
from __future__ import annotations

import abc


class Closeable(abc.ABC):
    """Open from construction (a bag, a rendering cell, a socket pair); `with` closes it."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release what the object holds; safe to call twice."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Device(Closeable):
    """A device opened by connect() (camera, arm); `with device:` connects and always closes."""

    @abc.abstractmethod
    def connect(self) -> None:
        """Open the link (retrying a fixed number of times at the hardware boundary)."""

    def __enter__(self):
        self.connect()
        return self
