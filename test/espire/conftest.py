"""Shared by the ESPIRE tests, which start servers on loopback."""
import socket

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def free_port():
    """A function giving a TCP port nobody on this machine listens on now."""
    return _free_port
