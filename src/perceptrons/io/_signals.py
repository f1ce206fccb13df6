"""SIGTERM and SIGHUP unwinding as Ctrl-C does, for the code that owns temporary files.

Ctrl-C raises :class:`KeyboardInterrupt`, whose unwinding runs every ``finally`` on the
way (a write's temporary file, a streamed run's parse cache go). SIGTERM and SIGHUP,
left to their default action, end the process at once and leave those files behind.
Inside :func:`cleanup_on_signals` they raise :class:`Terminated` instead, and the
process ends as the signal would have ended it once the block has unwound. Nothing is
installed on import: only for the blocks' time, in the main thread, and only where
the signal's handling is the default one (a program that set its own keeps it).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["Terminated", "cleanup_on_signals"]

# Signals whose default action ends the process (SIGINT raises KeyboardInterrupt,
# which unwinds anyway).
_CLEANUP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Terminated(BaseException):
    """A cleanup signal arrived inside :func:`cleanup_on_signals` (a BaseException,
    as KeyboardInterrupt: no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def cleanup_on_signals() -> Iterator[None]:
    """During the block, SIGTERM and SIGHUP (when their handling is the default one)
    raise :class:`Terminated`, so that ``except``/``finally`` clauses run; once the
    block has unwound, the process ends as the signal would have ended it.

    A block inside another leaves the end to the outer one (the one that set the
    handlers), so that the cleanup of every block on the way runs first."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be set from the main thread
        return
    previous = {}
    for signum in _CLEANUP_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    except Terminated as exc:
        if exc.signum in previous:  # this block set the handler: the process ends here
            _end_by(exc.signum)
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _end_by(signum: int) -> None:
    """End the process as the signal would have (its default action), after cleanup."""
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)
