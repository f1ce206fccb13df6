"""The chunk readers behind :mod:`perceptrons.io.stream`: a file read a block at a time.

:class:`Chunk` and the readers that yield it: blocks of lines parsed by
:func:`~perceptrons.io.formats.read_data` (``_line_chunks``), svmlight through the
compiled reader into CSR buffers reused from chunk to chunk (``_svmlight_chunks``), and
``vw`` and ``counts`` files through the compiled hashing reader (``_PairsReader``,
``_pairs_batches``), which also reads a whole such file in memory (``read_pairs``, behind
:func:`perceptrons.io.prepare.read_featurized`); the reader thread that parses ahead of
training (``_prefetched``), and the parser threads whose results training takes in
file order (``_ordered``: two for ``vw`` and ``counts`` streams, where the cores
allow). :mod:`perceptrons.io.stream` documents how they are used and holds the public
entry points (:func:`~perceptrons.io.stream.iter_chunks`,
:func:`~perceptrons.io.stream.scan`, :func:`~perceptrons.io.stream.fit_stream`) and the
training loop.

Over 600 lines: the chunk readers share the :class:`Chunk` type, the block reader that
bounds memory and the reader thread; each reader alone is small.
"""

from __future__ import annotations

import copy
import functools
import gzip
import io
import itertools
import os
import queue
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import scipy.sparse as sp

from perceptrons._memory import array_bytes, check_allocation, format_bytes
from perceptrons.io.formats import (
    DataFormatError,
    LabeledData,
    SvmlightBuffers,
    numeric_labels,
    parse_svmlight_block,
    read_data,
    svmlight_block_data,
)
from perceptrons.io.formats._common import (
    READ_WHOLE_REMEDY,
    check_in_memory,
    open_binary,
    out_of_memory_in_one_line,
)

if TYPE_CHECKING:
    from perceptrons.text.featurizer import TextFeaturizer

_READ_BYTES = 1 << 20  # bytes read from the file (decompressed) at a time
_FIRST_ROWS = 1 << 12  # rows the svmlight buffers hold at first, grown as rows arrive
_CHUNK_REMEDY = "lower --chunk-size (chunk_size)"
_PIECE_BYTES = 1 << 16  # a line is read in pieces of at most this many bytes...
_GROUP_PIECES = 256  # ...this many pieces at a time, the memory checked between
_UTF8_BOM = b"\xef\xbb\xbf"
_NEWLINE = ord("\n")
_QUEUE_DEPTH = 2  # chunks parsed ahead of training by the reader thread
_MAX_FALLBACKS = 32  # lines of a block read alone by the reference reader (read_parts)
# Blocks of a vw or counts file parsed at once by the parser threads: the one trained
# on, the queued ones, those being parsed (each parser's ring holds as many).
_PAIRS_WINDOW = _QUEUE_DEPTH + 2
_Task = TypeVar("_Task")
_Result = TypeVar("_Result")


@dataclass
class Chunk:
    """One parsed piece of a file.

    Attributes
    ----------
    data : LabeledData
        The chunk, as :func:`perceptrons.io.formats.read_data` gives it.
    first_line : int
        Line number (1-based) of the chunk's first line in the file.
    bytes_read : int
        Bytes of the file (compressed bytes for gzip) consumed once this chunk was read.
    """

    data: LabeledData
    first_line: int
    bytes_read: int


def _line_chunks(name: str, fmt: str, chunk_size: int, **options) -> Iterator[Chunk]:
    """Chunks of ``chunk_size`` lines, each through :func:`read_data`."""
    for raw, first_line, bytes_read in _line_blocks(name, chunk_size):
        parsed = _parse(raw, fmt, name, first_line, **options)
        if parsed is not None:
            yield Chunk(data=parsed, first_line=first_line, bytes_read=bytes_read)


def _line_blocks(name: str, chunk_size: int) -> Iterator[tuple[bytes, int, int]]:
    """``(bytes, first line, bytes read)`` of each block of ``chunk_size`` lines."""
    stream, counter = open_binary(name)
    first_line = 1
    with stream, counter:
        while True:
            block, n_lines = _read_lines(stream, name, chunk_size, first_line)
            if not block:
                return
            yield block, first_line, counter.tell()
            first_line += n_lines


def _byte_line_blocks(
    name: str, chunk_size: int, *, whole: bool = False
) -> Iterator[tuple[bytes, int, int, int]]:
    """:func:`_line_blocks`' blocks, read ``_READ_BYTES`` at a time (the lines counted
    and the block cut by C-level byte searches, not a ``readline`` per line): the
    compiled readers' source. ``bytes read`` counts the bytes read ahead too; each block
    comes with its number of lines (counted once, here, for the readers' buffers).

    ``whole``: the file is being read whole (in memory): the memory is checked for all
    the file read so far, as :func:`~perceptrons.io.formats.read_data` checks it."""
    stream, counter = open_binary(name)
    first_line = 1
    rest = b""  # bytes read past the last block
    eof = False
    read_before = 0  # the bytes of the blocks before (whole)
    with stream, counter:
        while True:
            what, lower = f"{name}: the chunk from line {first_line:,}", _CHUNK_REMEDY
            if whole:
                what, lower = f"{name}: reading it whole", READ_WHOLE_REMEDY
            with out_of_memory_in_one_line(what, lower):
                block, rest, eof, newlines = _next_lines(
                    stream,
                    name,
                    chunk_size,
                    first_line,
                    rest,
                    eof,
                    (read_before, first_line - 1) if whole else None,
                )
            if not block:
                return
            n_lines = newlines + (not block.endswith(b"\n"))
            yield block, first_line, counter.tell(), n_lines
            first_line += n_lines
            read_before += len(block)


def _next_lines(
    stream,
    name: str,
    chunk_size: int,
    first_line: int,
    rest: bytes,
    eof: bool,
    whole: tuple[int, int] | None = None,
) -> tuple[bytes, bytes, bool, int]:
    """The next ``chunk_size`` lines (the bytes ``rest`` first, then the stream's), the
    bytes after them, whether the stream is done, and the newlines in the lines (counted
    as the pieces arrive, not again); the memory checked as pieces
    arrive, as :func:`_read_lines` does, or (``whole``: the bytes and lines of the
    file before the block) for the whole file read so far."""
    parts = [rest]
    n_bytes, n_lines = len(rest), rest.count(b"\n")
    piece_lines = n_lines  # the newlines of parts[-1]
    while n_lines < chunk_size and not eof:
        try:
            piece = stream.read(_READ_BYTES)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise DataFormatError(name, f"corrupt gzip data ({exc})") from None
        if not piece:
            eof = True
            break
        parts.append(piece)
        n_bytes += len(piece)
        piece_lines = piece.count(b"\n")
        n_lines += piece_lines
        last = piece.rfind(b"\n")
        line_bytes = len(piece) - last - 1 if last >= 0 else n_bytes  # (an upper bound)
        if whole is not None:
            what = f"{name}: reading it whole"
            check_in_memory(what, whole[0] + n_bytes, whole[1] + n_lines, READ_WHOLE_REMEDY)
        else:
            what, lower = _chunk_cost(name, first_line, n_lines, n_bytes, line_bytes)
            check_in_memory(what, n_bytes, n_lines, lower)
    data = b"".join(parts) if len(parts) > 1 else parts[0]
    if n_lines < chunk_size:  # the stream is done: the whole rest
        return data, b"", eof, n_lines
    # Cut after the chunk_size-th newline: it lies in the last piece.
    before = n_lines - piece_lines
    tail = np.frombuffer(parts[-1], dtype=np.uint8)
    cut = (
        len(data)
        - len(parts[-1])
        + int(np.flatnonzero(tail == _NEWLINE)[chunk_size - before - 1])
        + 1
    )
    return data[:cut], data[cut:], eof, chunk_size


def _chunk_cost(
    name: str, first_line: int, n_lines: int, n_bytes: int, line_bytes: int
) -> tuple[str, str]:
    """What a chunk too large for memory is, and what lowers its cost: a smaller chunk
    size, unless the line being read (``line_bytes`` of the chunk's ``n_bytes``, after
    ``n_lines`` whole lines) is most of it: then that line is too long."""
    if 2 * line_bytes <= n_bytes:
        return f"{name}: the chunk of lines from line {first_line:,}", _CHUNK_REMEDY
    return f"{name}:{first_line + n_lines}: this one line", "a line must fit in memory"


def _lines_in(buf: np.ndarray, start: int, end: int) -> tuple[int, int]:
    """The whole lines of ``buf[start:end]`` and the bytes after the last one, counted
    a block at a time (no temporary array the size of the data)."""
    n_lines, last = 0, -1
    for low in range(start, end, _READ_BYTES):
        newlines = buf[low : min(low + _READ_BYTES, end)] == _NEWLINE
        count = int(np.count_nonzero(newlines))
        if count:
            n_lines += count
            last = low + len(newlines) - 1 - int(np.argmax(newlines[::-1]))
    return n_lines, end - (last + 1 if last >= 0 else start)


def _read_lines(stream, name: str, chunk_size: int, first_line: int) -> tuple[bytes, int]:
    """The next ``chunk_size`` lines of ``stream`` and their number, read in pieces of
    at most ``_READ_BYTES``: the memory they will take is checked as they arrive
    (:func:`~perceptrons.io.formats._common.check_in_memory`), so a chunk size past
    what memory holds, or one line of gigabytes, is refused in one line."""
    with out_of_memory_in_one_line(f"{name}: the chunk from line {first_line:,}", _CHUNK_REMEDY):
        return _read_lines_checked(stream, name, chunk_size, first_line)


def _read_lines_checked(stream, name: str, chunk_size: int, first_line: int) -> tuple[bytes, int]:
    # Lines are read as pieces of at most _PIECE_BYTES (a longer line is several), in
    # groups of at most _GROUP_PIECES by C-level iteration (islice of readline), the
    # memory checked after each group: at most _GROUP_PIECES * _PIECE_BYTES between
    # checks, without a Python step per line.
    pieces = iter(functools.partial(stream.readline, _PIECE_BYTES), b"")
    blocks: list[bytes] = []
    n_bytes = n_lines = line_bytes = 0
    while n_lines < chunk_size:
        try:
            group = list(itertools.islice(pieces, min(chunk_size - n_lines, _GROUP_PIECES)))
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise DataFormatError(name, f"corrupt gzip data ({exc})") from None
        if not group:
            break
        block = b"".join(group)
        blocks.append(block)
        n_bytes += len(block)
        newlines = block.count(b"\n")
        n_lines += newlines
        line_bytes = len(block) - block.rfind(b"\n") - 1 if newlines else line_bytes + len(block)
        what, lower = _chunk_cost(name, first_line, n_lines, n_bytes, line_bytes)
        check_in_memory(what, n_bytes, n_lines, lower)
    if line_bytes:
        n_lines += 1  # the last line of the file, without its newline
    return b"".join(blocks), n_lines


@dataclass
class _PairsBatch:
    """One block of a ``vw`` or ``counts`` file, read by :class:`_PairsReader`: either
    the hashed counts (``X``, before the featurizer's weighting) with the names new to
    the reader, or (``data``) what the reference reader gave, texts to featurize."""

    bytes_read: int
    X: sp.csr_matrix | None = None
    y: np.ndarray | None = None
    sample_weight: np.ndarray | None = None
    new_columns: np.ndarray | None = None
    new_names: list[str] | None = None
    data: LabeledData | None = None
    # X weighed already (the featurizer's weighting applied by the parser thread).
    weighed: bool = False
    # The block's lines, for a compiled batch the consumer must read again by the
    # reference reader (a counts block before it stopped the compiled path).
    raw: bytes = b""
    first_line: int = 0
    # Or the block as consecutive pieces of each kind (:meth:`_PairsReader.read`).
    pieces: list[_PairsBatch] | None = None


class _PairsReader:
    """``vw`` and ``counts`` blocks through the compiled hashing reader
    (:mod:`perceptrons._kernels.hashing`), for a hashing ``tokenizer="pairs"``
    featurizer: what ``read_data`` then the featurizer's ``transform`` give, bit for bit,
    with the names of the hashed columns kept as its ``partial_fit`` keeps them.

    The lines of a block the kernel cannot read exactly (a bad line, a number off its
    exact path, a byte outside ASCII...) are read by the reference reader, which also
    words their errors, the lines around them by the kernel (:meth:`read_parts`). The
    names table lives as long as the reader (one
    :func:`~perceptrons.io.stream.fit_stream` run, every epoch): each block reports only
    the names it has not seen, which :meth:`TextFeaturizer._add_new_hashed_names` merges
    exactly while the known names are normalized; when they are not (a featurizer fitted
    elsewhere, or a ``counts`` name with ``|`` read by the reference reader) every later
    block takes the reference path.
    """

    def __init__(self, featurizer: TextFeaturizer, fmt: str, *, names: bool = True) -> None:
        from perceptrons._kernels import hashing

        self._hashing = hashing
        self.fmt = fmt
        if not 1 <= featurizer.n_features <= 2**31 - 2:  # the kernel takes h % n_features
            raise ValueError(f"n_features must be in [1, 2**31 - 2], got {featurizer.n_features}")
        # The names of the hashed columns: kept unless the featurizer keeps none
        # (hashed_names=False) or the caller only transforms (``names=False``).
        self.names = names and bool(getattr(featurizer, "hashed_names", True))
        if hasattr(featurizer, "n_features_out_"):
            self.vectorizer = featurizer._vectorizer
            self.compiled = not self.names or featurizer._hashed_names_normalized()
        else:
            featurizer._validate_params()
            self.vectorizer = featurizer._make_vectorizer()
            self.compiled = True
        # The featurizer's weighting, applied by the thread that parses the block when
        # it learns nothing from the data (no idf); else the consumer's featurizer weighs.
        weighting = (
            featurizer._weighting
            if hasattr(featurizer, "n_features_out_")
            else featurizer._make_weighting()
        )
        self.weigh = weighting is None or not weighting.use_idf
        self.weighting = weighting
        self._new_table()
        self.source = "<data>"  # the file read, named when an allocation is refused
        # The lines the reference reader skipped (skip_bad_lines), when set to a list.
        self.skipped: list[tuple[int, str]] | None = None
        self.labels_only = False  # the compiled blocks' labels and weights, no matrix
        self.parts = False  # a block may be read as several batches (read_parts)
        # ring > 0 (a stream): a batch's arrays are views into `ring` sets of output
        # arrays used in turn, so a batch lives until `ring` more are parsed; 0: each
        # batch has its own copies (read_pairs keeps them all).
        self.ring = 0
        self._sets: list[tuple[tuple[int, int], tuple[np.ndarray, ...]]] = []
        self._turn = 0
        self._density = 0.125  # the most values a byte of a block held so far (a guess first)
        self._sizes: tuple[int, ...] = (-1, -1, -1)  # rows, values, bytes of a name
        self._own: tuple[np.ndarray, ...] = ()  # the arrays no batch refers to
        # Parser threads: this reader and its twins (each its own table and arrays),
        # and, with two, the names reported so far: a twin's table misses the blocks
        # the other parsed, so the names it reports are filtered here, in file order.
        self.threads = _parser_threads()
        self._parsers: list[_PairsReader] = []
        self.known: set[str] | None = set() if self.names and self.threads > 1 else None
        # Whether the compiled path still holds for the blocks taken in file order
        # (``compiled`` is the parsers', who may be blocks ahead).
        self.taken_compiled = self.compiled

    def _new_table(self) -> None:
        """An empty names table and the kernel's counts. 2**18 slots hold 131,072
        names (8 MB) before the first growth, which parses the block again; a reader
        that keeps no names gets the smallest table the kernel takes."""
        hashing = self._hashing
        capacity = 1 << 18 if self.names else 2
        self.slots = np.full((capacity, hashing.SLOT_WIDTH), hashing.EMPTY, dtype=np.int64)
        self.store = np.empty(1 << 21 if self.names else 1, dtype=np.uint8)
        self.meta = np.zeros(hashing.META_SIZE, dtype=np.int64)
        self.state = np.zeros(hashing.STATE_SIZE, dtype=np.int64)

    def parsers(self) -> list[_PairsReader]:
        """The readers of the parser threads: this one, then its twins."""
        if not self._parsers:
            self._parsers = [self]
            for _ in range(self.threads - 1):
                twin = copy.copy(self)
                twin._new_table()
                twin._sets, twin._turn, twin._parsers = [], 0, []
                twin._sizes, twin._own = (-1, -1, -1), ()
                self._parsers.append(twin)
        return self._parsers

    def take(self, batch: _PairsBatch, name: str, options) -> _PairsBatch | None:
        """A parser thread's batch, taken by the consumer in file order: what the
        serial reader would have given there. A reference batch that stops the
        compiled path stops it for the blocks after it, even those parsed already
        (read again here); the new names of a batch parsed beside another thread
        are those not reported before."""
        if batch.data is None and not self.taken_compiled:  # the compiled lines too
            return self._reference(batch.raw, name, batch.first_line, batch.bytes_read, options)
        known = self.known
        # A piece that stops the compiled path is the parser's last compiled one: it
        # read the rest of the block by the reference reader.
        for piece in batch.pieces or [batch]:
            if piece.data is not None:
                if self._stops_compiled(piece.raw):
                    self.taken_compiled = False
                    for parser in self.parsers():
                        parser.compiled = False
            elif known is not None and piece.new_names is not None:
                assert piece.new_columns is not None
                fresh = [k for k, term in enumerate(piece.new_names) if term not in known]
                if len(fresh) < len(piece.new_names):
                    piece.new_columns = piece.new_columns[fresh]
                    piece.new_names = [piece.new_names[k] for k in fresh]
                known.update(piece.new_names)
        return batch

    def _stops_compiled(self, raw: bytes) -> bool:
        """Whether a block read by the reference reader stops the compiled path: a
        ``counts`` name may hold ``|``, and the names stop being normalized."""
        return self.names and self.fmt == "counts" and b"|" in raw

    def read(
        self,
        raw: bytes,
        name: str,
        first_line: int,
        bytes_read: int,
        options,
        *,
        n_lines: int | None = None,
    ) -> _PairsBatch | None:
        """One block of whole lines (``n_lines`` of them, when known), one batch (of
        pieces where the kernel left lines to the reference reader: one non-ASCII line
        would cost its whole block); ``None`` when it holds no example."""
        pieces = self.read_parts(raw, name, first_line, bytes_read, options, n_lines=n_lines)
        if not pieces:
            return None
        batch = pieces[0] if len(pieces) == 1 else _PairsBatch(bytes_read, pieces=pieces)
        batch.raw, batch.first_line = raw, first_line  # read again whole by take()
        return batch

    def _reference(
        self, raw: bytes, name: str, first_line: int, bytes_read: int, options
    ) -> _PairsBatch | None:
        """Lines through the reference reader (``read_data``)."""
        data = _parse(raw, self.fmt, name, first_line, self.skipped, **options)
        if self._stops_compiled(raw):
            self.compiled = False
        if data is None:
            return None
        return _PairsBatch(bytes_read=bytes_read, data=data, raw=raw, first_line=first_line)

    def read_parts(
        self,
        raw: bytes,
        name: str,
        first_line: int,
        bytes_read: int,
        options,
        *,
        n_lines: int | None = None,
    ) -> list[_PairsBatch]:
        """A block as consecutive batches (those without an example left out): where
        the kernel gives up, only the lines up to the one it stopped at go to the
        reference reader, the lines before it and after it back to the kernel. A whole
        file read in memory keeps them apart; :meth:`read` makes them one batch."""
        hashing = self._hashing
        batches: list[_PairsBatch] = []
        newlines = None  # the block's newline offsets, found at the first fallback
        start = 0  # the unread rest is raw[start:], from line first_line
        # Each fallback costs a pass over the rest of the block (its copy, its lines
        # counted): past this many, the rest goes to the reference reader at once.
        fallbacks = 0
        while start < len(raw):
            rest = raw[start:] if start else raw
            if fallbacks == _MAX_FALLBACKS or not self.compiled:
                batch = self._reference(rest, name, first_line, bytes_read, options)
                return batches if batch is None else [*batches, batch]
            fallbacks += 1
            self.source = name
            batch = self._compiled(rest, bytes_read, None if start else n_lines)
            if batch is not None:
                return [*batches, batch]
            if newlines is None:
                newlines = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == _NEWLINE)
            # The kernel stopped at line `stop` of the rest, after `rows` rows.
            stop, rows = int(self.state[hashing.LINE]), int(self.state[hashing.ROWS])
            before = int(np.searchsorted(newlines, start))  # the lines before the rest
            line_start = int(newlines[before + stop - 2]) + 1 if stop >= 2 else start
            line_end = (
                int(newlines[before + stop - 1]) + 1
                if before + stop - 1 < len(newlines)
                else len(raw)
            )
            if rows > 0:  # the lines before the stop, which the kernel reads
                # Its own arrays: a block takes at most one set of a ring (the rest's).
                head = self._compiled(raw[start:line_start], bytes_read, keep=True)
                assert head is not None  # the same lines read again
                batches.append(head)
                reference_from, reference_line = line_start, first_line + stop - 1
            else:
                reference_from, reference_line = start, first_line
            batch = self._reference(
                raw[reference_from:line_end], name, reference_line, bytes_read, options
            )
            if batch is not None:
                batches.append(batch)
            start, first_line = line_end, first_line + stop
        return batches

    def _buffers(
        self, n_bytes: int, n_lines: int, *, bound: bool = False
    ) -> tuple[np.ndarray, ...]:
        """The kernel's output arrays for a block of ``n_bytes`` in ``n_lines`` lines
        (grown, never shrunk): the matrix's (the ring's current set) and the reader's
        own. Without a ring, or with ``bound`` (the kernel ran short), they hold the
        most values such a block can have; in a ring, the values of the densest block
        so far and a quarter more (most blocks hold far fewer than the bound: eight
        sets of it would be most of the reader's memory)."""
        most = n_bytes // 2 + 2
        values = most
        if self.ring and not bound:
            values = min(most, int(self._density * n_bytes * 1.25) + 64)
        rows = n_lines + 1
        what = (
            f"{self.source}: the hashing reader's arrays for a block of {n_bytes:,} "
            f"bytes in {n_lines:,} lines"
        )
        turn = self._turn % max(self.ring, 1)
        if turn == len(self._sets):
            self._sets.append(((-1, -1), ()))
        (old_rows, old_values), matrix = self._sets[turn]
        if rows > old_rows or values > old_values:
            rows, values = max(rows, old_rows), max(values, old_values)
            check_allocation(
                array_bytes(values, itemsize=8 + 4) + array_bytes(rows + 1, itemsize=8),
                what,
                _CHUNK_REMEDY,
            )
            matrix = (
                np.empty(values, dtype=np.float64),  # data
                np.empty(values, dtype=np.int32),  # indices
                np.zeros(rows + 1, dtype=np.int64),  # indptr
            )
            self._sets[turn] = ((rows, values), matrix)
        # The names a block adds are recorded only when they are kept.
        needed = (n_lines + 1, values if self.names else 1, n_bytes + 2)
        sizes = tuple(max(old, new) for old, new in zip(self._sizes, needed, strict=True))
        if sizes != self._sizes:
            rows, values, line_bytes = sizes
            check_allocation(
                array_bytes(values, itemsize=8) + array_bytes(rows, itemsize=8 * 4) + line_bytes,
                what,
                _CHUNK_REMEDY,
            )
            self._sizes = sizes
            self._own = (
                np.empty(rows, dtype=np.float64),  # labels
                np.empty((rows, 2), dtype=np.int64),  # label spans
                np.empty(rows, dtype=np.float64),  # weights
                np.empty(values, dtype=np.int64),  # records
                np.empty(line_bytes, dtype=np.uint8),  # scratch (one name)
            )
        return (*matrix, *self._own)

    def _at_bound(self, n_bytes: int) -> bool:
        """Whether the output arrays hold the most values a block of ``n_bytes`` can
        have (then only the names table can be short of room)."""
        most = n_bytes // 2 + 2
        records = self._sizes[1] >= most or not self.names
        return self._sets[self._turn % max(self.ring, 1)][0][1] >= most and records

    def _grow_table(self, n_bytes: int) -> None:
        """Four times the slots and the store, for a block of ``n_bytes`` that did not
        fit (the kernel's other arrays are sized to hold any such block)."""
        hashing = self._hashing
        entries, used = int(self.meta[hashing.ENTRIES]), int(self.meta[hashing.STORE_USED])
        # A block of n bytes adds at most n // 2 + 1 names of at most n + 1 bytes each:
        # past these sizes the kernel cannot be short of room.
        if len(self.slots) > 2 * (entries + n_bytes + 2) and len(self.store) > used + (
            n_bytes + 2
        ) * (n_bytes // 2 + 2):
            raise RuntimeError("the hashing reader asks for room it cannot need")
        check_allocation(
            array_bytes(5 * len(self.slots), hashing.SLOT_WIDTH) + 5 * len(self.store),
            f"{self.source}: the hashing reader's table of names ({entries:,} names so far)",
            _CHUNK_REMEDY,
        )
        slots = np.full((4 * len(self.slots), hashing.SLOT_WIDTH), hashing.EMPTY, dtype=np.int64)
        self.meta[hashing.ENTRIES] = hashing.rehash(self.slots, slots)
        self.slots = slots
        store = np.empty(4 * len(self.store), dtype=np.uint8)
        store[:used] = self.store[:used]
        self.store = store

    def _compiled(
        self, raw: bytes, bytes_read: int, n_lines: int | None = None, *, keep: bool = False
    ) -> _PairsBatch | None:
        """The block through the kernel (``n_lines``: its lines, counted if not given);
        ``None`` where the kernel gives up. ``keep``: the batch's arrays are copies,
        the ring's turn stays (a piece of a block, not its last)."""
        hashing = self._hashing
        buf = np.frombuffer(raw, dtype=np.uint8)
        vectorizer = self.vectorizer
        if n_lines is None:
            n_lines = raw.count(b"\n") + 1
        out = self._buffers(len(buf), n_lines)
        data, indices, indptr, labels, spans, weights, records, _ = out
        state = self.state
        while True:
            status = hashing.parse_pairs(
                buf=buf,
                vw=self.fmt == "vw",
                lowercase=bool(vectorizer.lowercase),
                n_features=int(vectorizer.n_features),
                names=self.names,
                out=out,
                table=(self.slots, self.store, self.meta),
                state=state,
            )
            if status == hashing.OK:
                break
            hashing.remove_names(self.slots, records, state[hashing.RECORDS])
            if status == hashing.FALLBACK:
                return None
            if self._at_bound(len(buf)):  # NO_ROOM: the names table is short
                self._grow_table(len(buf))
            else:  # the values estimated fell short: the arrays to the block's bound
                out = self._buffers(len(buf), n_lines, bound=True)
                data, indices, indptr, labels, spans, weights, records, _ = out
        rows, nnz = int(state[hashing.ROWS]), int(state[hashing.NNZ])
        ring = self.ring and not keep
        if ring:  # the next batch takes the ring's next set
            self._turn += 1
        if self.ring:
            self._density = max(self._density, nnz / len(buf))
        columns, names = None, None
        if self.names:
            added = records[: state[hashing.RECORDS]]
            columns = self.slots[added, hashing.COLUMN]
            offsets = self.slots[added, hashing.OFFSET].tolist()
            lengths = self.slots[added, hashing.LENGTH].tolist()
            store = self.store[: self.meta[hashing.STORE_USED]].tobytes()
            names = [
                store[o : o + n].decode("ascii") for o, n in zip(offsets, lengths, strict=True)
            ]
        X = None
        if not self.labels_only:
            # Views of the ring's arrays, which live as long as the batch needs them.
            own = (lambda array: array) if ring else np.copy
            X = vectorizer.hashed_matrix(
                own(indices[:nnz]),
                own(indptr[: rows + 1]),
                own(data[:nnz]),
                canonical=bool(state[hashing.SORTED]),
            )
            if self.weigh:  # what featurizer._weigh does, here in the parser's thread
                from perceptrons._validation import canonical_csr

                X = canonical_csr(X if self.weighting is None else self.weighting.transform(X))
        if self.fmt == "vw":
            y = numeric_labels(labels[:rows].copy())
        else:
            y = np.asarray([raw[a:b].decode("ascii") for a, b in spans[:rows].tolist()])
        w = weights[:rows].copy() if state[hashing.WEIGHTED] else None
        return _PairsBatch(
            bytes_read=bytes_read,
            X=X,
            y=y,
            sample_weight=w,
            new_columns=columns,
            new_names=names,
            weighed=X is not None and self.weigh,
        )


def _has_newline(buf: np.ndarray, start: int, end: int) -> bool:
    """Whether ``buf[start:end]`` holds a newline; its first few KiB looked at first,
    where short lines have one (a whole block compared costs a pass over 1 MiB)."""
    head = min(end, start + 4096)
    return bool((buf[start:head] == _NEWLINE).any() or (buf[head:end] == _NEWLINE).any())


def _svmlight_chunks(
    name: str,
    chunk_size: int,
    *,
    ring: int,
    labels: bool,
    n_features: int | None,
    zero_based: bool | str,
    skip_bad_lines: bool,
) -> Iterator[Chunk]:
    """svmlight chunks through the compiled reader, the file read in blocks of bytes.

    ``ring`` > 0: the chunks' arrays are views into ``ring`` sets of buffers used in
    turn, so chunk ``k`` is overwritten by chunk ``k + ring`` (the consumer must be done
    with it by then); 0: every chunk has its own arrays.
    """
    from perceptrons._kernels import parse

    # Sized for the chunk size up to _FIRST_ROWS rows, then grown as rows arrive (the
    # growth checked against the memory limit): a chunk size of 10**12 allocates only
    # what the chunk actually holds.
    first_rows = min(chunk_size, _FIRST_ROWS)
    sets = [
        SvmlightBuffers(rows=first_rows + 1, nnz=16 * first_rows, source=name, lower=_CHUNK_REMEDY)
        for _ in range(max(ring, 1))
    ]
    buf = np.empty(2 * _READ_BYTES, dtype=np.uint8)
    start = end = 0  # the unread bytes are buf[start:end]
    eof = False
    first_line, n_chunks = 1, 0
    stream, counter = open_binary(name)

    def read() -> int:
        nonlocal buf
        if len(buf) - end < _READ_BYTES:  # grown, never moved: offsets stay valid
            # The chunk's bytes stay in buf until it is parsed: a chunk of many lines,
            # or one very long line, grows it; the old and the new buf are both held.
            n_lines, line_bytes = _lines_in(buf, start, end)
            what, lower = _chunk_cost(name, first_line, n_lines, end - start, line_bytes)
            what = f"{what} ({format_bytes(end - start)} of data so far)"
            check_allocation(3 * len(buf), what, lower)
            with out_of_memory_in_one_line(what, lower):
                buf = np.concatenate([buf[:end], np.empty(len(buf), dtype=np.uint8)])
        try:
            return stream.readinto(buf[end : end + _READ_BYTES].data)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise DataFormatError(name, f"corrupt gzip data ({exc})") from None

    with stream, counter:
        while end < len(_UTF8_BOM) and not eof:
            n_read = read()
            eof = n_read == 0
            end += n_read
        if end >= len(_UTF8_BOM) and buf[: len(_UTF8_BOM)].tobytes() == _UTF8_BOM:
            # Dropped, as read_data does (only bytes read count: buf is not cleared).
            start = len(_UTF8_BOM)
        while True:
            if start:  # the unread bytes to the front, between chunks only
                buf[: end - start] = buf[start:end]
                end, start = end - start, 0
            buffers = sets[n_chunks % len(sets)]
            buffers.state[:] = 0
            buffers.state[parse.POS] = start
            buffers.indptr[0] = 0
            while True:
                status = parse_svmlight_block(
                    buffers,
                    buf,
                    end,
                    final=eof,
                    max_lines=chunk_size,
                    label_required=labels is not False,
                    stop_at_bad=not skip_bad_lines,
                )
                if status != parse.DONE or eof or buffers.state[parse.LINE] >= chunk_size:
                    break
                # More bytes, up to a newline: the kernel scans an unfinished line from
                # its start, so calling it for each block of a long line would take
                # time quadratic in the line's length.
                while True:
                    n_read = read()
                    eof = n_read == 0
                    end += n_read
                    if eof or _has_newline(buf, end - n_read, end):
                        break
            n_lines = int(buffers.state[parse.LINE])
            if n_lines == 0:
                return
            chunk = None
            if buffers.state[parse.ROWS] or buffers.state[parse.BAD]:
                try:
                    data = svmlight_block_data(
                        buffers,
                        buf,
                        end,
                        start,
                        name,
                        first_line=first_line,
                        skip=skip_bad_lines,
                        labels=labels,
                        n_features=n_features,
                        zero_based=zero_based,
                        copy=ring == 0,
                    )
                except DataFormatError as error:
                    if not (skip_bad_lines and error.reason.startswith("no valid lines")):
                        raise
                else:  # an all-bad chunk (skip_bad_lines) is no chunk, as in _parse
                    chunk = Chunk(data=data, first_line=first_line, bytes_read=counter.tell())
            start = int(buffers.state[parse.POS])
            first_line += n_lines
            if chunk is not None:
                n_chunks += 1
                yield chunk


@dataclass
class _PlainScan:
    """What :func:`_svmlight_plain_scan` found: the labels (sorted, as the chunks'
    labels would give them), the largest raw index (-1: none), whether index 0
    occurs, the rows and the bytes of the file read."""

    classes: np.ndarray
    max_index: int
    has_zero: bool
    n_examples: int
    n_bytes: int


_SCAN_LABELS = 1 << 16  # labels the plain scan collects between two np.unique
_SCAN_MAX_BUFFER = 1 << 23  # a line longer than about this: the exact scan reads it


def _svmlight_plain_scan(name: str) -> _PlainScan | None:
    """An svmlight file's labels and indices through the compiled scan
    (:func:`perceptrons._kernels.parse.scan_svmlight`), which neither checks the
    values nor stores the rows: ``None`` when it cannot read the file plainly (a line
    off its shape, a very long line, corrupt gzip, any error) and the exact scan must.

    Exact for a file without bad lines; with one, what it finds is used only by a
    pass that stops at that line with the exact reader's message (see
    :func:`perceptrons.io.stream.fit_stream`).
    """
    from perceptrons._kernels import parse

    labels = np.empty(_SCAN_LABELS, dtype=np.float64)
    state = np.zeros(parse.SCAN_STATE_SIZE, dtype=np.int64)
    state[parse.MAX_INDEX] = -1
    values: set[float] = set()
    n_examples = 0
    buf = np.empty(2 * _READ_BYTES, dtype=np.uint8)
    start = end = 0  # the unread bytes are buf[start:end]
    eof = False

    def read() -> int:
        nonlocal buf
        if len(buf) - end < _READ_BYTES:  # a long line: grown, up to a bound
            if 2 * len(buf) > _SCAN_MAX_BUFFER:
                raise MemoryError
            buf = np.concatenate([buf[:end], np.empty(len(buf), dtype=np.uint8)])
        return stream.readinto(buf[end : end + _READ_BYTES].data)

    try:
        stream, counter = open_binary(name)
        with stream, counter:
            while end < len(_UTF8_BOM) and not eof:
                n_read = read()
                eof = n_read == 0
                end += n_read
            if buf[: min(end, len(_UTF8_BOM))].tobytes() == _UTF8_BOM:
                start = len(_UTF8_BOM)  # dropped, as read_data does
            n_read = end
            while True:
                if eof or _has_newline(buf, end - n_read, end):  # complete lines
                    state[parse.POS] = start
                    while True:
                        status = parse.scan_svmlight(buf, end, eof, labels, state)
                        rows = int(state[parse.ROWS])
                        values.update(np.unique(labels[:rows]).tolist())
                        n_examples += rows
                        state[parse.ROWS] = 0
                        if status == parse.GIVE_UP:
                            return None
                        if status == parse.DONE:
                            break
                    start = int(state[parse.POS])
                if eof:
                    break
                if start:  # the unread bytes to the front
                    buf[: end - start] = buf[start:end]
                    end, start = end - start, 0
                n_read = read()
                eof = n_read == 0
                end += n_read
            n_bytes = counter.tell()
    except (DataFormatError, OSError, EOFError, zlib.error, gzip.BadGzipFile, MemoryError):
        return None
    classes = np.array(sorted(values), dtype=np.float64)
    # The labels of a chunk are int64 when all are integral (svmlight_block_data):
    # all chunks are so exactly when all the labels are (no -0: the kernel gives up).
    if len(classes) and np.all(classes == np.round(classes)) and np.abs(classes).max() < 2**53:
        classes = classes.astype(np.int64)
    return _PlainScan(
        classes, int(state[parse.MAX_INDEX]), bool(state[parse.ZERO_INDEX]), n_examples, n_bytes
    )


def _prefetched(chunks: Callable[[], Iterator[Any]], depth: int) -> Iterator[Any]:
    """``chunks()`` run by a reader thread, ``depth`` chunks ahead of the consumer.

    The compiled parser and the training kernels release the GIL, so parsing the next
    chunks overlaps training on this one. An exception of the reader (a bad line, an
    unreadable file) is raised here, in the consumer, when its turn comes; a consumer
    that stops early stops the reader.
    """
    handoff: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for chunk in chunks():
                if not put(("chunk", chunk)):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            put(("error", exc))
            return
        put(("end", None))

    reader = threading.Thread(target=work, name="perceptrons-stream-reader", daemon=True)
    reader.start()
    try:
        while True:
            kind, item = handoff.get()
            if kind == "chunk":
                yield item
            elif kind == "error":
                raise item
            else:
                return
    finally:
        stop.set()
        reader.join()


_PARSER_THREADS = 2  # threads parsing vw and counts blocks, when the cores allow


def _parser_threads() -> int:
    """Parser threads for a vw or counts stream: two when the process may run on two
    cores or more (the learner's thread waits on them: parsing costs about twice what
    training on a block does), else one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return _PARSER_THREADS if cores >= 2 else 1


def _ordered(
    tasks: Iterable[_Task],
    work: Callable[[int, _Task], _Result],
    *,
    workers: int,
    window: int,
) -> Iterator[_Result]:
    """``work(worker, task)`` for each task, run by ``workers`` threads, the results
    yielded in the tasks' order.

    The tasks are taken from ``tasks`` in order, one thread at a time; a thread
    starts task ``i`` only once the consumer has asked for result ``i - window + 1``
    (it is done with the results before the one it asks for): the tasks begun and not
    done with are at most ``window``, the one whose result the consumer holds
    included (so a worker's ring of ``window`` sets of buffers is never overwritten
    under it). An exception of a task (or of ``tasks``) is raised
    here when its turn comes, after the results before it; a consumer that stops
    early (an error, ``KeyboardInterrupt``, ``close``) stops the threads and waits
    for them, each ending its task in hand.
    """
    source = iter(tasks)
    turn = threading.Condition()  # guards the state below; notified on each change
    taking = threading.Lock()  # one thread takes a task at a time: they leave in order
    results: dict[int, tuple[bool, Any]] = {}  # index -> (failed, result or exception)
    taken = 0  # tasks taken from the source
    released = 0  # the result the consumer asks for (it is done with those before)
    end: int | None = None  # tasks in all, once the source is done
    stopping = False

    def run(worker: int) -> None:
        nonlocal taken, end
        while True:
            with taking:
                with turn:
                    while not stopping and end is None and taken >= released + window:
                        turn.wait()
                    if stopping or end is not None:
                        return
                index = taken
                try:
                    task = next(source)
                except StopIteration:
                    with turn:
                        end = index
                        turn.notify_all()
                    return
                except BaseException as exc:  # a read error: raised in its turn
                    with turn:
                        results[index], end = (True, exc), index + 1
                        turn.notify_all()
                    return
                with turn:
                    taken = index + 1
            try:
                outcome: tuple[bool, Any] = (False, work(worker, task))
            except BaseException as exc:  # handed to the consumer, raised there
                outcome = (True, exc)
            with turn:
                results[index] = outcome
                turn.notify_all()

    threads = [
        threading.Thread(target=run, args=(k,), name=f"perceptrons-parser-{k}", daemon=True)
        for k in range(workers)
    ]
    for thread in threads:
        thread.start()
    try:
        index = 0
        while True:
            with turn:
                released = index  # the results before index are done with
                turn.notify_all()
                while index not in results and (end is None or index < end):
                    turn.wait()
                if index not in results:
                    return
                failed, item = results.pop(index)
            if failed:
                raise item
            yield item
            index += 1
    finally:
        with turn:
            stopping = True
            turn.notify_all()
        for thread in threads:
            thread.join()
        close = getattr(source, "close", None)
        if close is not None:
            close()  # the file, once no thread reads it


def _parse(
    raw: bytes, fmt, name, first_line, skipped: list | None = None, **options
) -> LabeledData | None:
    """One chunk through the in-memory reader; line numbers shifted to the file's.
    ``skipped`` (a list) gets the lines skipped, those of a chunk of bad lines only
    (``None`` returned) included."""
    if not raw.strip():
        return None
    offset = first_line - 1
    try:
        parsed = read_data("-", fmt, stdin=io.BytesIO(raw), **options)
    except DataFormatError as error:
        if error.reason.startswith("no valid lines") and options["skip_bad_lines"]:
            if skipped is not None:
                skipped.extend((line + offset, reason) for line, reason in error.skipped)
            return None  # every line of this chunk was bad
        line = None if error.line is None else error.line + offset
        raise DataFormatError(name, error.reason, line) from None
    parsed.source = name
    parsed.skipped = [(line + offset, reason) for line, reason in parsed.skipped]
    if skipped is not None:
        skipped.extend(parsed.skipped)
    return parsed


def _pairs_label_chunks(
    name: str, fmt: str, chunk_size: int, skip_bad_lines: bool
) -> Iterator[Chunk]:
    """The labels of a ``vw`` or ``counts`` file a block at a time, through the compiled
    reader (the chunks' ``X`` and ``texts`` are left out), for
    :func:`~perceptrons.io.stream.scan`."""
    from perceptrons.text.featurizer import TextFeaturizer

    # One column and no names: the kernel only reads the lines (no hashing, no table).
    reader = _PairsReader(TextFeaturizer(tokenizer="pairs", n_features=1), fmt, names=False)
    reader.labels_only = True
    reference = {"labels": True, "n_features": None, "zero_based": "auto"}
    for raw, first_line, bytes_read, n_lines in _byte_line_blocks(name, chunk_size):
        options = {**reference, "skip_bad_lines": skip_bad_lines}
        batch = reader.read(raw, name, first_line, bytes_read, options, n_lines=n_lines)
        if batch is None:
            continue
        pieces = batch.pieces or [batch]
        y = _joined_labels([piece.y if piece.data is None else piece.data.y for piece in pieces])
        data = LabeledData(X=None, texts=[""] * len(y), y=y, format=fmt, source=name)
        yield Chunk(data=data, first_line=first_line, bytes_read=bytes_read)


def _pairs_read(
    name: str, reader: _PairsReader, size: int, skip_bad_lines: bool, *, whole: bool = False
):
    """The blocks of ``size`` lines of a ``vw`` or ``counts`` file, read by ``reader``
    in a thread ahead of the consumer (those without an example left out)."""
    # What iter_chunks gives read_data for a block the kernel leaves to it.
    reference = {
        "labels": True,
        "n_features": None,
        "zero_based": "auto",
        "skip_bad_lines": skip_bad_lines,
    }

    blocks = _byte_line_blocks(name, size, whole=whole)
    if reader.parts:

        def source() -> Iterator[_PairsBatch]:
            for raw, first_line, bytes_read, n_lines in blocks:
                yield from reader.read_parts(
                    raw, name, first_line, bytes_read, reference, n_lines=n_lines
                )

        return _prefetched(source, _QUEUE_DEPTH)
    parsers = reader.parsers()
    for parser in parsers:
        parser.ring = _PAIRS_WINDOW

    def parse(worker: int, block: tuple[bytes, int, int, int]) -> _PairsBatch | None:
        raw, first_line, bytes_read, n_lines = block
        return parsers[worker].read(raw, name, first_line, bytes_read, reference, n_lines=n_lines)

    def taken() -> Iterator[_PairsBatch]:
        for batch in _ordered(blocks, parse, workers=len(parsers), window=_PAIRS_WINDOW):
            if batch is not None:
                batch = reader.take(batch, name, reference)
            if batch is not None:
                yield batch

    return taken()


def _pairs_features(batch: _PairsBatch, featurizer, *, fit: bool):
    """(X, y, sample weights or None) of a block read by :class:`_PairsReader`: the
    featurizer's output for its documents, the featurizer learning their names
    (``fit``, as ``partial_fit``) or not (as ``transform``)."""
    if batch.pieces is not None:  # featurized in file order (the names), then one batch
        return _joined([_pairs_features(piece, featurizer, fit=fit) for piece in batch.pieces])
    if batch.data is not None:  # the reference path
        data = batch.data
        X = _features(data, featurizer) if fit else featurizer.transform(data.texts)
        return X, data.y, data.sample_weight
    if not hasattr(featurizer, "n_features_out_"):
        featurizer.fit([""])  # the state fit_transform would give, without names
    if batch.new_columns is not None:
        assert batch.new_names is not None
        featurizer._add_new_hashed_names(batch.new_columns, batch.new_names)
    X = batch.X if batch.weighed else featurizer._weigh(batch.X)
    return X, batch.y, batch.sample_weight


def _joined(parts: list[tuple[Any, np.ndarray, np.ndarray | None]]):
    """(X, y, sample weights or None) of consecutive pieces of a file, as the reference
    reader gives them read together: the weights ones where a piece has none."""
    from perceptrons._validation import canonical_csr

    y = _joined_labels([y for _, y, _ in parts])
    w = None
    if any(part[2] is not None for part in parts):
        w = np.concatenate([np.ones(len(y_p)) if w_p is None else w_p for _, y_p, w_p in parts])
    X = parts[0][0] if len(parts) == 1 else sp.vstack([part[0] for part in parts], format="csr")
    return canonical_csr(X), y, w


def _joined_labels(labels: list[Any]) -> np.ndarray:
    """The labels of consecutive pieces of a file (labels required), as read together."""
    assert all(y is not None for y in labels)
    if len(labels) == 1:
        return labels[0]
    if labels[0].dtype.kind in "iuf":  # vw: integers only when every label is one
        return numeric_labels(np.concatenate([y.astype(np.float64) for y in labels]))
    return np.concatenate(labels)


def _pairs_batches(name, options, featurizer, reader: _PairsReader):
    """(X, y, sample weights or None, bytes read) per block of a ``vw`` or ``counts``
    file, read by ``reader`` in a thread ahead of training; the featurizer learns the
    names here, in file order."""
    for batch in _pairs_read(name, reader, options["chunk_size"], options["skip_bad_lines"]):
        yield (*_pairs_features(batch, featurizer, fit=True), batch.bytes_read)


def read_pairs(
    name: str,
    fmt: str,
    featurizer: TextFeaturizer,
    *,
    fit: bool,
    skip_bad_lines: bool = False,
    chunk_size: int = 10_000,
) -> LabeledData:
    """A whole ``vw`` or ``counts`` file featurized by a hashing ``tokenizer="pairs"``
    featurizer (weighting ``"tf"`` or ``"binary"``), through the compiled hashing reader
    a block at a time: what :func:`read_data` (labels required) then the featurizer's
    ``fit_transform`` (``fit``) or ``transform`` of its texts give, bit for bit,
    without the texts.

    Lines the kernel cannot read exactly go through :func:`read_data` and the
    featurizer, which word the errors (``PATH:LINE``).

    Returns
    -------
    LabeledData
        ``X`` the featurizer's output and ``texts`` ``None``; labels, importance
        weights and skipped lines as :func:`read_data` gives them for the whole file.
    """
    if fit:
        featurizer.fit([""])  # fit_transform starts afresh: no names yet
    reader = _PairsReader(featurizer, fmt, names=fit)
    reader.parts = True  # a line the kernel leaves costs that line, not its block
    skipped: list[tuple[int, str]] = []
    reader.skipped = skipped
    parts: list[tuple[Any, np.ndarray, np.ndarray | None]] = []
    for batch in _pairs_read(name, reader, chunk_size, skip_bad_lines, whole=True):
        X, y, w = _pairs_features(batch, featurizer, fit=fit)
        assert y is not None  # labels required
        parts.append((X, y, w))
    if not parts:  # no example: the reference reader says why
        data = read_data(name, fmt, labels=True, skip_bad_lines=skip_bad_lines)
        assert data.texts is not None  # a text format
        X = featurizer.fit_transform(data.texts) if fit else featurizer.transform(data.texts)
        return LabeledData(
            X=X,
            texts=None,
            y=data.y,
            format=fmt,
            source=name,
            skipped=data.skipped,
            sample_weight=data.sample_weight,
        )
    X, y, sample_weight = _joined(parts)
    return LabeledData(
        X=X,
        texts=None,
        y=y,
        format=fmt,
        source=name,
        skipped=skipped,
        sample_weight=sample_weight,
    )


def _weights(data: LabeledData) -> np.ndarray:
    """A chunk's sample weights, ones when it has none."""
    if data.sample_weight is None:
        return np.ones(data.n_samples)
    return data.sample_weight


def _features(chunk: LabeledData, featurizer):
    if chunk.texts is None:
        return chunk.X
    if not hasattr(featurizer, "n_features_out_"):
        return featurizer.fit_transform(chunk.texts)
    featurizer.partial_fit(chunk.texts)
    return featurizer.transform(chunk.texts)


def _stack(parts):
    return sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.vstack(parts)
