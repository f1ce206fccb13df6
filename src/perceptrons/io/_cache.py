"""The parsed cache of a streamed run: epochs after the first read the chunks' arrays
back from a binary file instead of parsing the text again (as Vowpal Wabbit's ``-c``).

:class:`ChunkCache` is a temporary file of this run alone: created fresh with a
private name (:func:`tempfile.mkstemp`, in a directory the caller chooses or the system
temporary directory), never reused by another run, and deleted when the run ends,
after an error or an interrupt too (:meth:`ChunkCache.close`; ``SIGTERM`` and ``SIGHUP``
unwind the run as Ctrl-C does, :func:`~perceptrons.io.stream.fit_stream`). During the first pass
every chunk the training loop receives -- the matrix (CSR or dense), the labels, the
importance weights -- is appended to it as raw bytes; what describes the arrays (their
types, shapes, offsets) stays in memory, so nothing read back from the file is
trusted for a size or a type: each array is read into an array of the size written,
and a short read (a file cut short) is an error in one line, never garbage.

Later passes read the chunks back one at a time, in the same order, as the same
arrays, bit for bit, so the model is that of a run that reads the text every epoch.
A full disk (or any other write error) while the first pass writes drops the cache
with a warning: the later passes then read the text, as without a cache.
"""

from __future__ import annotations

import os
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

#: What a chunk is to the training loop: features, labels, weights or None, bytes read.
Batch = tuple[Any, Any, Any, int]

# The flags scipy computes lazily and keeps on a matrix; copied so that a matrix read
# back is in the state the original was (a kernel sees the same arrays either way).
_SPARSE_FLAGS = ("_has_sorted_indices", "_has_canonical_format")


class CacheError(OSError):
    """The parsed cache cannot be created or read back."""


@dataclass
class _Entry:
    """How one chunk was written: its arrays' types and shapes, in file order."""

    kind: type  # the matrix's class (a scipy sparse class, or np.ndarray)
    shape: tuple[int, ...]
    flags: dict[str, bool]
    arrays: list[tuple[np.dtype, tuple[int, ...]]]  # X's arrays, y, then w if any
    weighted: bool
    bytes_read: int


class ChunkCache:
    """A run's temporary file of parsed chunks (see the module's notes).

    Parameters
    ----------
    directory : path-like, optional
        Where the file is created; the system temporary directory if None.

    Raises
    ------
    CacheError
        The file cannot be created there (a one-line message naming the directory).
    """

    def __init__(self, directory: str | os.PathLike | None = None) -> None:
        where = tempfile.gettempdir() if directory is None else os.fspath(directory)
        try:
            fd, self.path = tempfile.mkstemp(prefix="perceptrons-", suffix=".cache", dir=where)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise CacheError(
                f"cannot create the parsed cache in {where}: {reason} "
                "(choose another directory, or turn the cache off)"
            ) from None
        self._file: Any = os.fdopen(fd, "w+b")
        # The reader thread writes and reads the file; close() (the training thread,
        # after an error) waits for the array in hand and stops the thread's next one.
        self._lock = threading.Lock()
        self._entries: list[_Entry] = []
        self.complete = False  # a whole pass is in the file
        self.usable = True  # False once a write failed or a chunk cannot be stored

    def recording(self, batches: Iterator[Batch]) -> Iterator[Batch]:
        """``batches``, each written to the file before it is handed on; the cache is
        complete once they are exhausted (a pass stopped midway leaves it unused)."""
        for batch in batches:
            if self.usable:
                self._write(batch)
            yield batch
        with self._lock:
            if not self.usable or self._file is None:
                return
            try:  # on disk now: a write that fails (disk full) fails here, not later
                self._file.flush()
            except OSError as exc:
                self._give_up(exc)
                return
            self.complete = True

    def chunks(self) -> Iterator[Batch]:
        """The chunks of the complete pass, read back one at a time, as written."""
        if not self.complete:
            raise RuntimeError("the parsed cache holds no complete pass")
        with self._lock:
            if self._file is None:
                raise CacheError(f"the parsed cache {self.path} was closed while read")
            self._file.seek(0)
        for entry in self._entries:
            arrays = [self._read(dtype, shape) for dtype, shape in entry.arrays]
            w = arrays.pop() if entry.weighted else None
            y = arrays.pop()
            yield _matrix(entry, arrays), y, w, entry.bytes_read

    def close(self) -> None:
        """Close and delete the file (safe to call more than once)."""
        with self._lock:
            self.usable = self.complete = False
            self._entries = []
            if self._file is None:
                return
            try:
                self._file.close()
            except OSError:  # what a full disk left unwritten: the file goes anyway
                pass
            self._file = None
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> ChunkCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _write(self, batch: Batch) -> None:
        X, y, w, bytes_read = batch
        if sp.issparse(X) and X.format == "csr":
            parts = [X.data, X.indices, X.indptr]
            flags = {name: X.__dict__[name] for name in _SPARSE_FLAGS if name in X.__dict__}
        elif isinstance(X, np.ndarray):
            parts, flags = [X], {}
        else:  # another kind of matrix: not stored, the text is read again
            self._give_up(None)
            return
        parts = [*parts, y] + ([] if w is None else [w])
        if any(not isinstance(a, np.ndarray) or a.dtype.hasobject for a in parts):
            self._give_up(None)  # object arrays are not bytes: the text is read again
            return
        parts = [np.ascontiguousarray(a) for a in parts]
        with self._lock:
            if self._file is None:  # closed: the run is over
                return
            try:
                for array in parts:
                    self._file.write(array.data.cast("B"))
            except OSError as exc:
                self._give_up(exc)
                return
        self._entries.append(
            _Entry(
                kind=type(X),
                shape=tuple(X.shape),
                flags=flags,
                arrays=[(a.dtype, a.shape) for a in parts],
                weighted=w is not None,
                bytes_read=bytes_read,
            )
        )

    def _give_up(self, error: OSError | None) -> None:
        """Stop caching this run: later passes read the text."""
        self.usable = False
        self._entries = []
        if error is not None:
            reason = error.strerror or str(error)
            warnings.warn(
                f"the parsed cache {self.path} could not be written ({reason}): "
                "later epochs read the text again",
                RuntimeWarning,
                stacklevel=2,
            )
        if self._file is not None:
            try:  # free the disk now
                self._file.truncate(0)
            except OSError:
                pass

    def _read(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        array = np.empty(shape, dtype=dtype)
        wanted = array.nbytes
        with self._lock:
            if self._file is None:
                raise CacheError(f"the parsed cache {self.path} was closed while read")
            got = self._file.readinto(array.data.cast("B")) if wanted else 0
        if got != wanted:
            raise CacheError(
                f"the parsed cache {self.path} was cut short ({got:,} of {wanted:,} bytes "
                "of a chunk read back): was the disk full, or the file changed?"
            )
        return array


def _matrix(entry: _Entry, arrays: list[np.ndarray]) -> Any:
    """The chunk's matrix from its arrays, of the class and state written."""
    if entry.kind is np.ndarray:
        return arrays[0]
    data, indices, indptr = arrays
    # Set as the reader sets them: the constructor would check (and might copy) them.
    X = entry.kind(entry.shape, dtype=data.dtype)
    X.data, X.indices, X.indptr = data, indices, indptr
    X.__dict__.update(entry.flags)
    return X


def open_cache(cache: bool | str | os.PathLike | None, epochs: int) -> ChunkCache | None:
    """The cache :func:`~perceptrons.io.stream.fit_stream` asks for: ``True`` (or
    ``None``, the default: on when there is more than one epoch) in the system
    temporary directory, a path in that directory, ``False`` none."""
    if cache is False or epochs <= 1:
        return None
    if cache is None or cache is True:
        return ChunkCache()
    return ChunkCache(cache)
