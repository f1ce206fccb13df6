"""svmlight through the compiled reader (:mod:`perceptrons._kernels.parse`): the
buffers it fills, reused from chunk to chunk by :mod:`perceptrons.io._chunks`, and the
checked data of a block of lines.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from perceptrons._decimal import decimal_number
from perceptrons._memory import array_bytes, check_allocation
from perceptrons.io.formats._common import (
    MAX_SVMLIGHT_WIDTH,
    READ_WHOLE_REMEDY,
    DataFormatError,
    LabeledData,
    _check_rows,
)
from perceptrons.io.formats._svmlight_reference import (
    _INT32_MAX,
    _SVM_LABELED,
    _SVM_UNLABELED,
    _bad_line_reason,
    _read_svmlight_sklearn,
    _ReadersDisagree,
    _svmlight_checked,
    _svmlight_data,
)


class SvmlightBuffers:
    """Output arrays of the compiled svmlight reader, reused from chunk to chunk.

    :func:`parse_svmlight_block` fills them with one block of lines (a chunk of a
    streamed file, or a whole file); each array grows (doubling) only when a block
    does not fit, so a stream of chunks of similar size allocates nothing after the
    first few. The arrays of a parsed block are views into these buffers: they hold
    until the next block is parsed into the same buffers.

    Every allocation, at first and when growing, is checked against the memory limit
    (:func:`perceptrons._memory.check_allocation`).

    Parameters
    ----------
    rows : int, default=1024
        Rows the buffers hold at first.
    nnz : int, default=32768
        Stored values the buffers hold at first.
    source : str, default="svmlight data"
        What is read, for the message of a refused allocation.
    lower : str, optional
        What lowers the cost, for that message.
    """

    def __init__(
        self,
        rows: int = 1024,
        nnz: int = 1 << 15,
        *,
        source: str = "svmlight data",
        lower: str | None = None,
    ) -> None:
        from perceptrons._kernels import parse

        rows, nnz = max(int(rows), 1), max(int(nnz), 1)
        self.source, self.lower = source, lower
        self._check(rows, nnz)
        self.data = np.empty(nnz, dtype=np.float64)
        self.indices = np.empty(nnz, dtype=np.int32)
        self.indptr = np.zeros(rows + 1, dtype=np.int64)
        self.labels = np.empty(rows, dtype=np.float64)
        self.row_lines = np.empty(rows, dtype=np.int64)
        self.pending = np.empty((64, 3), dtype=np.int64)
        self.bad = np.empty(16, dtype=np.int64)
        self.state = np.zeros(parse.STATE_SIZE, dtype=np.int64)

    def _check(self, rows: int, nnz: int, pending: int = 64) -> None:
        """Refuse buffers of ``rows``, ``nnz`` values and ``pending`` tokens past the
        memory limit."""
        n_bytes = (
            array_bytes(rows, itemsize=8 * 3)  # indptr, labels, row_lines
            + array_bytes(nnz, itemsize=8 + 4)  # data, indices
            + array_bytes(pending, 3)
        )
        check_allocation(
            n_bytes,
            f"{self.source}: the parsed rows ({rows:,} rows, {nnz:,} values)",
            self.lower,
        )

    def out(self) -> tuple[np.ndarray, ...]:
        """The arrays in the kernel's order."""
        return (
            self.data,
            self.indices,
            self.indptr,
            self.labels,
            self.row_lines,
            self.pending,
            self.bad,
        )

    def grow(self, line_bytes: int) -> None:
        """Make room for one more line of ``line_bytes`` bytes (the kernel said FULL)."""
        from perceptrons._kernels import parse

        rows, nnz = int(self.state[parse.ROWS]), int(self.state[parse.NNZ])
        need = line_bytes // 2 + 2  # a line holds at most this many numbers

        def new_size(array: np.ndarray, used: int, wanted: int) -> int:
            return len(array) if len(array) - used >= wanted else max(2 * len(array), used + wanted)

        def bigger(array: np.ndarray, used: int, wanted: int) -> np.ndarray:
            if len(array) - used >= wanted:
                return array
            grown = np.empty((new_size(array, used, wanted), *array.shape[1:]), array.dtype)
            grown[:used] = array[:used]
            return grown

        self._check(
            new_size(self.labels, rows, 1),
            new_size(self.data, nnz, need),
            new_size(self.pending, int(self.state[parse.PENDING]), need),
        )

        self.data = bigger(self.data, nnz, need)
        self.indices = bigger(self.indices, nnz, need)
        self.pending = bigger(self.pending, int(self.state[parse.PENDING]), need)
        self.labels = bigger(self.labels, rows, 1)
        self.row_lines = bigger(self.row_lines, rows, 1)
        self.indptr = bigger(self.indptr, rows + 1, 2)
        self.bad = bigger(self.bad, int(self.state[parse.BAD]), 1)


def parse_svmlight_block(
    buffers: SvmlightBuffers,
    buf: np.ndarray,
    end: int,
    *,
    final: bool,
    max_lines: int,
    label_required: bool,
    stop_at_bad: bool,
) -> int:
    """Parse lines of ``buf[buffers.state[POS]:end]`` into ``buffers``, growing them.

    Stops after ``max_lines`` lines (counted from the buffers' last reset), at the end
    of the complete lines, or after the first bad line with ``stop_at_bad``. Returns
    the kernel's status (``DONE`` or ``STOPPED``). Pending tokens are left for
    :func:`svmlight_block_data`, which reads them from the same ``buf``.
    """
    from perceptrons._kernels import parse

    state = buffers.state
    _check_block(buffers, buf, end)
    while True:
        status = parse.parse_svmlight(
            buf=buf,
            end=end,
            final=final,
            max_lines=max_lines - int(state[parse.LINE]),
            label_required=label_required,
            stop_at_bad=stop_at_bad,
            max_digits=sys.get_int_max_str_digits(),
            out=buffers.out(),
            state=state,
        )
        if status != parse.FULL:
            return status
        start = int(state[parse.POS])
        newline = buf[start:end].tobytes().find(b"\n")  # rare: only when growing
        buffers.grow((end - start) if newline < 0 else newline)


def _check_block(buffers: SvmlightBuffers, buf: np.ndarray, end: int) -> None:
    """The kernel's bounds, checked before it runs: it reads ``buf[pos:end]`` and
    writes from the counts in ``state``."""
    from perceptrons._kernels import parse

    state = buffers.state
    if not (isinstance(buf, np.ndarray) and buf.dtype == np.uint8 and buf.ndim == 1):
        raise TypeError("buf must be a 1-D uint8 array")
    if not 0 <= state[parse.POS] <= end <= len(buf):
        raise ValueError(f"bytes {state[parse.POS]}:{end} are not inside a buffer of {len(buf)}")
    rows, nnz = int(state[parse.ROWS]), int(state[parse.NNZ])
    counts_fit = (
        0 <= rows < len(buffers.indptr)
        and rows <= min(len(buffers.labels), len(buffers.row_lines))
        and 0 <= nnz <= min(len(buffers.data), len(buffers.indices))
        and buffers.pending.ndim == 2
        and buffers.pending.shape[1] == 3
        and 0 <= state[parse.PENDING] <= len(buffers.pending)
        and 0 <= state[parse.BAD] <= len(buffers.bad)
        and buffers.indptr[rows] == nnz
    )
    if not counts_fit:
        raise ValueError("the buffers' counts do not fit their arrays")


def svmlight_block_data(
    buffers: SvmlightBuffers,
    buf: np.ndarray,
    end: int,
    first_pos: int,
    source: str,
    *,
    first_line: int = 1,
    skip: bool,
    labels: bool | None,
    n_features: int | None,
    zero_based: bool | str,
    copy: bool,
) -> LabeledData:
    """The rows :func:`parse_svmlight_block` left in ``buffers``, checked, as data.

    Converts the pending tokens (:func:`perceptrons._decimal.decimal_number`), words
    the bad lines' reasons (``PATH:LINE`` with lines counted from ``first_line``, the
    line of ``first_pos``), applies the width and base rules of :func:`read_data` and
    returns a
    :class:`LabeledData` whose arrays are views into ``buffers`` (``copy=False``) or
    their own.

    Should the compiled reader ever refuse a line that the reference rule accepts,
    the block is read again by the reference reader (scikit-learn's).

    Raises
    ------
    DataFormatError
        A bad line (``skip`` false), or no valid row.
    """
    from perceptrons._kernels import parse

    options: dict[str, Any] = {
        "skip": skip,
        "labels": labels,
        "n_features": n_features,
        "zero_based": zero_based,
    }
    try:
        return _block_data(buffers, buf, end, first_pos, source, first_line, copy, **options)
    except _ReadersDisagree:
        pass
    raw = buf[first_pos : int(buffers.state[parse.POS])].tobytes()
    offset = first_line - 1
    try:
        data = _read_svmlight_sklearn(raw, source, **options)
    except DataFormatError as error:
        line = None if error.line is None else error.line + offset
        raise DataFormatError(source, error.reason, line) from None
    data.skipped = [(line + offset, reason) for line, reason in data.skipped]
    return data


def _block_data(
    buffers: SvmlightBuffers,
    buf: np.ndarray,
    end: int,
    first_pos: int,
    source: str,
    first_line: int,
    copy: bool,
    *,
    skip: bool,
    labels: bool | None,
    n_features: int | None,
    zero_based: bool | str,
) -> LabeledData:
    """:func:`svmlight_block_data` from the compiled reader's results alone; raises
    :class:`_ReadersDisagree` for a bad line the reference rule accepts."""
    import scipy.sparse as sp

    from perceptrons._kernels import parse

    state = buffers.state
    rows, nnz = int(state[parse.ROWS]), int(state[parse.NNZ])
    label_required = labels is not False
    data, indices = buffers.data[:nnz], buffers.indices[:nnz]
    indptr, y = buffers.indptr[: rows + 1], buffers.labels[:rows]
    row_lines = buffers.row_lines[:rows]
    bad_lines = buffers.bad[: int(state[parse.BAD])].tolist()
    bad_rows: list[int] = []
    n_pending = int(state[parse.PENDING])
    if n_pending:
        for start, stop, slot in buffers.pending[:n_pending].tolist():
            try:
                value = decimal_number(buf[start:stop].tobytes())
            except ValueError:
                value = math.nan
            if slot < 0:
                row = -slot - 1
                y[row] = value
            else:
                row = int(np.searchsorted(indptr, slot, side="right")) - 1
                data[slot] = value
            if not math.isfinite(value):
                bad_rows.append(row)
        if bad_rows:
            bad_rows = sorted(set(bad_rows))
            bad_lines = sorted(bad_lines + row_lines[bad_rows].tolist())
    skipped: list[tuple[int, str]] = []
    offset = first_line - 1
    if bad_lines:
        chosen = bad_lines if skip else bad_lines[:1]
        text = buf[first_pos:end].tobytes().split(b"\n", chosen[-1])
        reasons = [(line, _bad_line_reason(text[line - 1], label_required)) for line in chosen]
        if not skip:
            line, reason = reasons[0]
            raise DataFormatError(source, reason, line + offset)
        skipped = [(line + offset, reason) for line, reason in reasons]
    _check_rows(rows - len(bad_rows), skipped, source)
    if bad_rows:  # rare: a pending token was not a finite number
        keep = np.ones(rows, dtype=bool)
        keep[bad_rows] = False
        counts = np.diff(indptr)
        values = np.repeat(keep, counts)
        data, indices = data[values], indices[values]
        indptr = np.concatenate([[0], np.cumsum(counts[keep])])
        y, row_lines = y[keep], row_lines[keep]
        rows, nnz = len(y), len(data)
        copy = False  # fresh arrays already
    lines = row_lines + offset
    if nnz:
        low, high = int(indices.min()), int(indices.max())
    else:
        low = high = 0
    if zero_based == "auto":  # scikit-learn's rule: one-based unless some index is 0
        base_zero = not (nnz and low > 0)
    else:
        base_zero = bool(zero_based)
    shift = 0 if base_zero else 1
    refused = (
        (n_features is None and high > MAX_SVMLIGHT_WIDTH)
        or (zero_based is False and nnz and low == 0)
        or (n_features is not None and nnz and high - shift >= n_features)
    )
    if refused:  # rows to refuse: the general path, on copies
        X = sp.csr_matrix((data.copy(), indices.copy(), indptr.copy()), shape=(rows, high + 1))
        return _svmlight_checked(
            X,
            y.copy(),
            lines.copy(),
            skipped,
            source,
            skip=skip,
            labels=labels,
            n_features=n_features,
            zero_based=zero_based,
        )
    if copy:
        data, indices, y = data.copy(), indices.copy(), y.copy()
    if shift:
        indices -= shift  # in place: the buffers' own indices, or the copy
    small = nnz < _INT32_MAX
    indptr = indptr.astype(np.int32 if small else np.int64)
    if not small:
        indices = indices.astype(np.int64)
    width = n_features if n_features is not None else max(high + 1 - shift if nnz else 0, 1)
    if copy:
        X = sp.csr_matrix((data, indices, indptr), shape=(rows, width), copy=False)
    else:
        # Views into the buffers, set as they are: scipy's constructor would copy a view
        # of a much larger array (its _prune_array), undoing the reuse.
        X = sp.csr_matrix((rows, width), dtype=np.float64)
        X.data, X.indices, X.indptr = data, indices, indptr
    X.has_sorted_indices = True  # indices strictly increase along each row
    return _svmlight_data(X, y, labels, source, skipped, base_zero)


def _read_svmlight(
    raw: bytes,
    source: str,
    *,
    skip: bool,
    labels: bool | None,
    n_features: int | None,
    zero_based: bool | str,
) -> LabeledData:
    """svmlight through the compiled reader (:mod:`perceptrons._kernels.parse`)."""
    if labels is None and not _SVM_LABELED.search(raw) and _SVM_UNLABELED.search(raw):
        labels = False  # no line has a label: an unlabeled file
    buf = np.frombuffer(raw, dtype=np.uint8)
    n_lines = raw.count(b"\n") + 1
    # Every value has its ':', so the buffers are sized once, without waste.
    buffers = SvmlightBuffers(
        rows=n_lines, nnz=raw.count(b":"), source=source, lower=READ_WHOLE_REMEDY
    )
    parse_svmlight_block(
        buffers,
        buf,
        len(buf),
        final=True,
        max_lines=n_lines,
        label_required=labels is not False,
        stop_at_bad=not skip,
    )
    return svmlight_block_data(
        buffers,
        buf,
        len(buf),
        0,
        source,
        skip=skip,
        labels=labels,
        n_features=n_features,
        zero_based=zero_based,
        copy=False,
    )
