"""The Dask cluster of parameter mixing: joining a scheduler, or starting a local one.

Shared by :class:`~perceptrons.parallel.ParameterMixing` and ``perceptrons train
--shards/--scheduler``, so that both behave alike:

- Joining a scheduler at an address is bounded by a timeout, and ends in one line when
  what answers is not a Dask scheduler. Dask bounds its TCP connect but not the
  handshake that follows: a service that accepts and never answers would hold the
  client forever, and one that answers something else (an HTTP server) has its reply
  read as the length of a Dask message (exabytes) and fails with a ``MemoryError``.
  Before Dask connects, :func:`connect_scheduler` reads the first 8 bytes a ``tcp://``
  scheduler sends unasked (the length of its handshake) within the timeout, and checks
  that they are a plausible length.
- A local cluster's worker processes ignore Ctrl-C and log nothing below CRITICAL: the
  errors of their tasks reach the client, which reports them (once, in one line), and
  Ctrl-C is the client's to handle (it closes the cluster), where the terminal sends it
  to every process of the foreground group, workers included, each of which printed
  its own traceback.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

#: Dask's port when an address gives none.
_DEFAULT_PORT = 8786
#: A Dask handshake is a few hundred bytes; a length beyond this is not one.
_MAX_HANDSHAKE_BYTES = 1 << 20


class SchedulerConnectionError(ConnectionError):
    """No Dask scheduler answered at an address, within the timeout (one line)."""


def connect_scheduler(
    distributed: Any, address: str, timeout: float, *, option: str = "connect_timeout"
) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``.

    Parameters
    ----------
    distributed : module
        The ``distributed`` package.
    address : str
        The scheduler's address, e.g. ``"tcp://127.0.0.1:8786"``.
    timeout : float
        Seconds the scheduler has to accept the connection and answer.
    option : str, default="connect_timeout"
        How the caller's user sets ``timeout``, named by the message of a timeout.

    Raises
    ------
    SchedulerConnectionError
        In one line: nothing listens there, what answers is not a Dask scheduler, or
        nothing answered within ``timeout`` seconds.
    """
    _check_scheduler_answers(address, timeout, option)
    try:
        return distributed.Client(address, timeout=timeout)
    except Exception as error:  # Dask's errors: OSError, ValueError, TimeoutError...
        reason = " ".join(str(error).split()) or type(error).__name__
        raise SchedulerConnectionError(f"{address}: {reason}") from None


def _check_scheduler_answers(address: str, timeout: float, option: str) -> None:
    """Within ``timeout``, that a ``tcp://`` scheduler at ``address`` accepts a connection
    and starts its handshake (other protocols are left to Dask)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme != "tcp":
            return
        host, port = parse_host_port(location, default_port=_DEFAULT_PORT)
    except (ValueError, TypeError) as error:
        raise SchedulerConnectionError(f"{address}: not a scheduler address ({error})") from None
    deadline = time.monotonic() + timeout
    header = b""
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            while len(header) < 8:
                connection.settimeout(max(deadline - time.monotonic(), 1e-3))
                received = connection.recv(8 - len(header))
                if not received:
                    raise SchedulerConnectionError(
                        f"{address}: closed the connection without the handshake of a "
                        "Dask scheduler (is it one?)"
                    )
                header += received
    except TimeoutError:
        raise SchedulerConnectionError(
            f"{address}: no answer of a Dask scheduler within {timeout:g} s (is it one? "
            f"{option} sets the wait)"
        ) from None
    except SchedulerConnectionError:
        raise
    except OSError as error:  # refused, unknown host, unreachable network...
        reason = error.strerror or " ".join(str(error).split()) or type(error).__name__
        raise SchedulerConnectionError(f"{address}: {reason}") from None
    (length,) = struct.unpack("Q", header)  # Dask's frame header: native byte order
    if not 0 < length <= _MAX_HANDSHAKE_BYTES:
        raise SchedulerConnectionError(
            f"{address}: answered {header!r}, not the handshake of a Dask scheduler "
            "(another service on that port?)"
        )


def start_local_cluster(distributed: Any, n_workers: int | None) -> Any:
    """A ``LocalCluster`` of ``n_workers`` single-threaded worker processes on 127.0.0.1,
    without a dashboard, whose workers ignore Ctrl-C and log only what is critical
    (see the module documentation). The scheduler's HTTP server (health and metrics,
    there even without the dashboard) takes a free port of 127.0.0.1: on Dask's 8787,
    taken by another cluster, it warned on stderr."""
    with _children_ignore_interrupts():
        return distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL,
        )


@contextlib.contextmanager
def quiet_dask_logs() -> Iterator[None]:
    """Dask's own logs (``distributed``) below CRITICAL silenced meanwhile, for a
    command that reports its errors itself. A LocalCluster's ``silence_logs`` restores
    the level when it closes, before its comms are all closed: their INFO lines
    ("Batched Comm Closed" and a traceback) could still reach stderr then."""
    logger = logging.getLogger("distributed")
    previous = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(previous)


@contextlib.contextmanager
def _children_ignore_interrupts() -> Iterator[None]:
    """SIGINT ignored meanwhile, so that the processes started then ignore it too (an
    ignored signal stays ignored across ``exec``, and Python then installs no
    KeyboardInterrupt handler). A Ctrl-C while the cluster starts is lost; the next one
    interrupts. Off the main thread, where handlers cannot be set: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)


class connect_cluster:
    """The client to use: the one given, one to an address, or a new LocalCluster's."""

    def __init__(self, distributed: Any, client: Any, n_workers: int, timeout: float):
        self.distributed, self.given, self.n_workers = distributed, client, n_workers
        self.timeout = timeout
        self.cluster: Any = None
        self.client: Any = None

    def __enter__(self) -> Any:
        distributed = self.distributed
        if isinstance(self.given, distributed.Client):
            return self.given
        if isinstance(self.given, str):
            self.client = connect_scheduler(distributed, self.given, self.timeout)
            return self.client
        if self.given is not None:
            raise ValueError(
                f"client must be a distributed.Client, a scheduler address or None, "
                f"got {self.given!r}."
            )
        self.cluster = start_local_cluster(distributed, self.n_workers)
        self.client = distributed.Client(self.cluster)
        return self.client

    def __exit__(self, *exc_info: object) -> Literal[False]:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        return False
