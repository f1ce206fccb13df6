"""The pieces every reader of :mod:`perceptrons.io.formats` shares: the constants,
:class:`DataFormatError`, :class:`LabeledData`, the plumbing of a bad line's message,
and reading the bytes of a file or of standard input (gunzipped, a sample of its head
for detection, decoded).
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Protocol

import numpy as np

from perceptrons._memory import MemoryBudgetError, check_allocation, format_bytes, memory_limit

# The public constants, defined in _names (which imports nothing, for the command's
# parser) and documented where perceptrons.io.formats exports them.
from perceptrons.io.formats._names import FORMATS as FORMATS
from perceptrons.io.formats._names import MAX_SVMLIGHT_WIDTH as MAX_SVMLIGHT_WIDTH
from perceptrons.io.formats._names import TEXT_FORMATS as TEXT_FORMATS
from perceptrons.io.formats._names import WEIGHTED_TEXT_FORMATS as WEIGHTED_TEXT_FORMATS

if TYPE_CHECKING:
    import scipy.sparse as sp


_GZIP_MAGIC = b"\x1f\x8b"
_STDIN = "<stdin>"
_EXTENSIONS = {
    ".svm": "svmlight",
    ".svmlight": "svmlight",
    ".libsvm": "svmlight",
    ".csv": "csv",
    ".tsv": "tsv",
    ".ft": "fasttext",
    ".fasttext": "fasttext",
    ".vw": "vw",
}
_SAMPLE_BYTES = 1 << 16  # this much of the file is read for detection...
_LONG_LINE_BYTES = 1 << 20  # ...or up to this much, to see a whole first line
_READ_BLOCK = 1 << 20  # bytes read (decompressed) at a time, the memory checked between
_LINE_COST = 100  # bytes a line read whole takes besides its text (see in_memory_cost)
READ_WHOLE_REMEDY = "stream it (--stream, fit_stream) or set a higher limit"


class DataFormatError(ValueError):
    """A malformed input file, options that do not fit it, or a file that does not fit
    the model it is given to (see :mod:`perceptrons.io.prepare`).

    ``str(e)`` is always one line: ``'PATH:LINE: what is wrong'`` when the problem is
    on a line, else ``'PATH: what is wrong'`` (``PATH`` is ``<stdin>`` for standard
    input).

    Parameters
    ----------
    source : str
        The path as given, or ``"<stdin>"``.
    reason : str
        What is wrong; newlines are replaced by spaces.
    line : int, optional
        1-based line number of the offending line.

    Attributes
    ----------
    source : str
    reason : str
    line : int or None
    skipped : list of (int, str)
        ``(line number, reason)`` of the lines skipped (``skip_bad_lines=True``) before
        the error "no valid lines": all of them.
    """

    def __init__(self, source: str, reason: str, line: int | None = None) -> None:
        self.skipped: list[tuple[int, str]] = []
        self.source = source
        self.reason = " ".join(str(reason).splitlines())
        self.line = line
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {self.reason}")

    def __reduce__(self) -> tuple[type[DataFormatError], tuple[str, str, int | None]]:
        return (type(self), (self.source, self.reason, self.line))


@dataclass
class LabeledData:
    """What :func:`read_data` returns: features or texts, labels, and provenance.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), scipy.sparse.csr_matrix or None
        Numeric features (``float64``) for ``svmlight`` (CSR, int32 indices when they
        fit), ``csv`` and ``idx`` (dense, C order); ``None`` for text formats.
    texts : list of str or None
        One document per row for text formats (for ``vw`` and ``counts``, the row's
        ``name:value`` tokens joined by single spaces); ``None`` for numeric formats.
    y : ndarray of shape (n_samples,) or None
        Labels: strings for ``fasttext``, ``tsv``, ``sentiment``, ``counts`` and
        ``csv``; the file's numbers for ``svmlight`` and ``vw`` (``int64`` when all are
        integers, else ``float64``) and ``idx`` (``int64``); ``None`` when the file has
        no labels.
    format : str
        The format actually used (one of :data:`FORMATS`).
    source : str
        The path as given, or ``"<stdin>"``.
    skipped : list of (int, str)
        ``(line number, reason)`` of each line dropped by ``skip_bad_lines=True``.
    zero_based : bool or None
        ``svmlight`` only: whether the file's feature indices were taken as 0-based.
        Store it with a model and pass it back when reading data to predict on, so that
        both files are indexed the same way.
    feature_names : list of str or None
        ``csv`` only: the feature columns' header names, in the order of ``X``'s columns.
    sample_weight : ndarray of shape (n_samples,) or None
        ``vw`` only: the importance weight of each row (float64, 1.0 for a line that
        gives none); ``None`` when no line gives one, and for every other format.
    """

    X: np.ndarray | sp.csr_matrix | None
    texts: list[str] | None
    y: np.ndarray | None
    format: str
    source: str
    skipped: list[tuple[int, str]] = field(default_factory=list)
    zero_based: bool | None = None
    feature_names: list[str] | None = None
    sample_weight: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """Number of rows (documents or feature vectors)."""
        if self.texts is not None:
            return len(self.texts)
        return 0 if self.X is None else int(self.X.shape[0])


class _BadLine(Exception):
    """Raised by a line parser; the message is the reason, without the location."""


def _show(token: bytes | str, limit: int = 40) -> str:
    """A token quoted for a message, decoded and shortened."""
    if isinstance(token, bytes):
        token = token.decode("utf-8", "replace")
    if not token.isprintable():  # keep the message on one readable line
        token = "".join(c if c.isprintable() else repr(c)[1:-1] for c in token)
    if len(token) > limit:
        token = token[: limit - 3] + "..."
    return f'"{token}"'


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _check_rows(n_rows: int, skipped: list, source: str) -> None:
    if n_rows == 0:
        if skipped:
            error = DataFormatError(source, f"no valid lines ({len(skipped)} skipped)")
            error.skipped = list(skipped)
            raise error
        raise DataFormatError(source, "no data")


# ----------------------------------------------------------------- reading bytes


def _format_from_name(name: str) -> str | None:
    """The format implied by a file name, or ``None``."""
    lower = name.lower()
    if lower.endswith(".gz"):
        lower = lower[:-3]
    if lower.endswith("idx3-ubyte"):
        return "idx"
    return _EXTENSIONS.get(os.path.splitext(lower)[1])


def _open_error(name: str, exc: OSError) -> OSError:
    """A one-line ``OSError`` of the same type naming ``name``."""
    if isinstance(exc, FileNotFoundError):
        return FileNotFoundError(f"{name}: no such file")
    if isinstance(exc, IsADirectoryError):
        return IsADirectoryError(f"{name}: is a directory, not a data file")
    reason = exc.strerror or str(exc)
    return type(exc)(f"{name}: {reason[:1].lower()}{reason[1:]}")


class Readable(Protocol):
    """What the readers read from: a file, standard input, a gzip stream."""

    def read(self, size: int = ..., /) -> bytes | str: ...


class _Replayed(io.RawIOBase):
    """A binary stream whose first bytes, already read (to see the gzip magic of a
    stream that cannot seek: a pipe, standard input), are given again first."""

    def __init__(self, head: bytes, rest: Any) -> None:
        super().__init__()
        self._head, self._rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._head:
            return self._rest.readinto(buffer)
        n_bytes = min(len(buffer), len(self._head))
        buffer[:n_bytes] = self._head[:n_bytes]
        self._head = self._head[n_bytes:]
        return n_bytes


def _first_bytes(stream: IO[bytes], n_bytes: int) -> bytes:
    """Up to ``n_bytes`` from the start of ``stream`` (a pipe may give fewer at once)."""
    head = b""
    while len(head) < n_bytes and (more := stream.read(n_bytes - len(head))):
        head += more
    return head


def open_binary(name: str) -> tuple[io.BufferedIOBase, IO[bytes]]:
    """The file ``name`` as a binary stream, gunzipped when it starts with the gzip
    magic, and the stream whose ``tell()`` counts the bytes of the file consumed.

    Decompression happens as the stream is read, so a reader that reads in bounded
    blocks holds a bounded part of the data, however much the file inflates to. A
    file that cannot seek (a pipe) is read too, its first bytes given again.
    """
    try:
        file = open(name, "rb", buffering=0)
    except OSError as exc:
        raise _open_error(name, exc) from None
    try:
        head = _first_bytes(file, len(_GZIP_MAGIC))
        if file.seekable():
            file.seek(0)
            source: io.RawIOBase = file
        else:
            source = _Replayed(head, file)
    except OSError as exc:
        file.close()
        raise _open_error(name, exc) from None
    if head == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=source), file
    buffered = io.BufferedReader(source)
    return buffered, buffered


def read_block(stream: Readable, source: str, size: int = _READ_BLOCK) -> bytes | str:
    """``stream.read(size)``; corrupt gzip data is a one-line :class:`DataFormatError`."""
    try:
        return stream.read(size)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataFormatError(source, f"corrupt gzip data ({exc})") from None


def in_memory_cost(n_bytes: int, n_lines: int) -> int:
    """The memory a reader takes to hold ``n_bytes`` of ``n_lines`` lines whole: the
    bytes, their decoded text, and a Python object per line (a row's place in lists, a
    string's header)."""
    return 2 * n_bytes + _LINE_COST * n_lines


def check_in_memory(what: str, n_bytes: int, n_lines: int, lower: str) -> None:
    """Refuse, before reading further, input whose :func:`in_memory_cost` is past the
    memory limit (:func:`perceptrons._memory.check_allocation`): ``what`` is read (it
    names the file), ``n_bytes`` of data (decompressed) in ``n_lines`` lines so far."""
    check_allocation(
        in_memory_cost(n_bytes, n_lines),
        f"{what} ({format_bytes(n_bytes)} of data, {n_lines:,} lines, so far)",
        lower,
    )


@contextmanager
def out_of_memory_in_one_line(what: str, lower: str) -> Iterator[None]:
    """A :class:`MemoryError` raised inside, when memory runs out below the limit (a
    ``ulimit``, a container), becomes a one-line :class:`MemoryBudgetError` naming
    ``what`` was being read and ``lower``, as a refusal by the limit would."""
    try:
        yield
    except MemoryBudgetError:
        raise
    except MemoryError:
        raise MemoryBudgetError(f"{what}: out of memory; {lower}") from None


def read_checked(stream: Readable, source: str, lower: str = READ_WHOLE_REMEDY) -> bytes | str:
    """All of ``stream``, a block at a time, checked by :func:`check_in_memory` as it
    grows: a small gzip file that inflates past the memory limit is refused when the
    limit is reached, not after it is all in memory."""
    blocks: list = []
    n_bytes = n_lines = 0
    what = f"{source}: reading it whole"
    with out_of_memory_in_one_line(what, lower):
        while block := read_block(stream, source):
            n_bytes += len(block)
            n_lines += block.count("\n") if isinstance(block, str) else block.count(b"\n")
            check_in_memory(what, n_bytes, n_lines, lower)
            blocks.append(block)
        if not blocks:
            return b""
        return "".join(blocks) if isinstance(blocks[0], str) else b"".join(blocks)


def _read_plain(raw: io.FileIO, name: str, lower: str) -> bytes:
    """An uncompressed file whole, its size checked (:func:`check_in_memory`) before it
    is read and its lines after, before anything is made of them."""
    what = f"{name}: reading it whole"
    check_in_memory(what, os.fstat(raw.fileno()).st_size, 0, lower)
    with out_of_memory_in_one_line(what, lower):
        data = raw.readall()  # one allocation, of the size fstat gives
    limit = memory_limit()[0]
    if limit is not None and in_memory_cost(len(data), len(data)) > limit:
        # Only a file this large could have lines enough to pass the limit: counting
        # them costs a pass over the bytes, spared to the others.
        check_in_memory(what, len(data), data.count(b"\n"), lower)
    return data


def read_input(name: str, stdin: IO | None = None, lower: str = READ_WHOLE_REMEDY) -> bytes | str:
    """The whole input, gunzipped, read by :func:`read_checked`: the file ``name``, or
    standard input (``stdin``, else ``sys.stdin``) for ``"-"``; bytes, or str for a
    text-mode stream without a binary buffer."""
    if name != "-":
        stream, counter = open_binary(name)
        with stream, counter:
            raw = getattr(stream, "raw", None)
            if isinstance(raw, io.FileIO) and raw.seekable():
                # Not compressed and a regular file: its size is known, and it is read
                # at once (nothing was read through the buffer yet).
                return _read_plain(raw, name, lower)
            return read_checked(stream, name, lower)
    given = sys.stdin if stdin is None else stdin
    binary = getattr(given, "buffer", given)
    head = read_block(binary, _STDIN, 2)
    if head == _GZIP_MAGIC:
        gunzipped = gzip.GzipFile(fileobj=_Replayed(head, binary))
        return read_checked(gunzipped, _STDIN, lower)
    rest = read_checked(binary, _STDIN, lower)  # str from a text-mode stream, else bytes
    return head + rest if rest else head  # type: ignore[operator]


def _read_head(name: str) -> tuple[bytes, bool]:
    """The first bytes of a file (gunzipped) and whether they are the whole file."""

    def first(n_bytes: int) -> bytes:
        with open(name, "rb") as fh:
            head = fh.read(n_bytes)
            if head[:2] == _GZIP_MAGIC:
                fh.seek(0)
                try:
                    with gzip.open(fh) as gz:
                        head = gz.read(n_bytes)
                except (OSError, EOFError, zlib.error):
                    pass  # corrupt: read_data reports it; detection just sees bytes
        return head

    try:
        head = first(_SAMPLE_BYTES + 1)
        if len(head) > _SAMPLE_BYTES and b"\n" not in head:  # a long first line
            head = first(_LONG_LINE_BYTES + 1)
    except OSError as exc:
        raise _open_error(name, exc) from None
    end = _head_end(head)
    return head[:end], len(head) <= end


def _head_end(data: bytes | str) -> int:
    """Where the sample for detection ends: after :data:`_SAMPLE_BYTES`, or after the
    first line when it is longer (up to :data:`_LONG_LINE_BYTES`)."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    end = data.find(newline, 0, _LONG_LINE_BYTES)  # type: ignore[arg-type]
    return max(_SAMPLE_BYTES, end + 1) if end >= 0 else min(len(data), _LONG_LINE_BYTES)


def _sample_lines(head: bytes | str, complete: bool) -> list[str]:
    """Lines of the beginning of a file for detection (a cut-off last line is dropped)."""
    if isinstance(head, bytes):
        head = head.decode("utf-8", "replace")
    head = head.removeprefix("\ufeff")
    lines = head.split("\n")
    if not complete and len(lines) > 1:
        lines.pop()
    return lines


def _looks_like_idx(head: bytes | str) -> bool:
    """IDX magic of an unsigned-byte array of at least 2 dimensions (images)."""
    return (
        isinstance(head, bytes) and len(head) >= 4 and head[:3] == b"\x00\x00\x08" and head[3] >= 2
    )


def _decode(raw: bytes | str, source: str, encoding: str) -> str:
    """Decode the whole input; a bad byte is reported with its line and column."""
    if isinstance(raw, str):
        return raw
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(
            source,
            f"not valid {encoding} (byte 0x{raw[exc.start]:02x} at column "
            f"{exc.start - start + 1}); convert the file to UTF-8 or give its encoding",
            line,
        ) from None
    except LookupError:
        raise DataFormatError(source, f"unknown encoding {encoding!r}") from None
    return text[1:] if text.startswith("\ufeff") else text
