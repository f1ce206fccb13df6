"""Test-wide settings: every test is deterministic and timing-independent.

Hypothesis draws its examples from a fixed seed (``derandomize``), so a run on CI tests
exactly what a run here tested, and neither a deadline nor the "too slow" health check
can fail a test because the machine is loaded. Loaded before the test modules are
imported, so their own ``settings(...)`` objects inherit it.
"""

import random
import socket
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "perceptrons",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("perceptrons")


@pytest.fixture(autouse=True)
def _seeded_global_generators() -> None:
    """An estimator left at ``random_state=None`` draws from NumPy's global generator:
    seed it before every test, so that such a test sees the same shuffles on every run
    and in any order (an unseeded accuracy threshold once failed 1 run in 40)."""
    np.random.seed(0)  # noqa: NPY002 (the legacy global generator is what None uses)
    random.seed(0)


@pytest.fixture
def not_dask_service() -> Iterator[Callable[[str], str]]:
    """Start TCP services on 127.0.0.1 that are not Dask schedulers: ``start("http")``
    gives the address of one that sends an HTTP answer to every connection at once,
    ``start("silent")`` of one that accepts and never answers. Stopped after the test."""
    replies = {"http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "silent": None}
    stop = threading.Event()
    servers: list[socket.socket] = []
    connections: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def start(kind: str) -> str:
        reply = replies[kind]
        server = socket.create_server(("127.0.0.1", 0))
        server.settimeout(0.05)  # accept() wakes up to see stop
        servers.append(server)

        def serve() -> None:
            while not stop.is_set():
                try:
                    connection, _ = server.accept()
                except TimeoutError:
                    continue
                connections.append(connection)
                if reply is not None:
                    connection.sendall(reply)

        threads.append(threading.Thread(target=serve, daemon=True))
        threads[-1].start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield start
    stop.set()
    for thread in threads:
        thread.join(10)
    for open_socket in [*connections, *servers]:
        open_socket.close()
