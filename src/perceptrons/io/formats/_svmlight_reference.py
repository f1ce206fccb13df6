"""svmlight: the rule of a line and scikit-learn's reader, the reference the compiled
reader (:mod:`perceptrons.io.formats._svmlight`) is tested against and falls back on,
and the checks of width and base that both readers apply.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any

import numpy as np

from perceptrons._decimal import decimal_index, decimal_number
from perceptrons.io.formats._common import (
    MAX_SVMLIGHT_WIDTH,
    DataFormatError,
    LabeledData,
    _check_rows,
    _show,
)

_INT32_MAX = int(np.iinfo(np.int32).max)
# svmlight lines that start with a label / with an index:value pair (no label).
_SVM_LABELED = re.compile(rb"^[ \t]*[^\s#:]+(?=[\s#]|$)", re.MULTILINE)
_SVM_UNLABELED = re.compile(rb"^[ \t]*[^\s#:]+:", re.MULTILINE)
# Bytes with which scikit-learn's float() / int() read a token that is not an ASCII
# decimal number (perceptrons._decimal): "1_000", digits of other scripts. A file with
# one is checked line by line.
_BEYOND_DECIMAL = re.compile(rb"[_\x80-\xff]")


def _svmlight_line_error(parts: list[bytes]) -> str | None:
    """Why a line is not svmlight (split, comment removed), or None.

    Mirrors ``sklearn.datasets._svmlight_format_fast`` (indices sorted and unique, at
    most a C ``int``), with numbers and indices in ASCII decimal only
    (:mod:`perceptrons._decimal`, where scikit-learn takes ``float()`` / ``int()``'s
    wider rules), and also rejects non-finite numbers.
    """
    if b":" in parts[0]:
        return f"no label before {_show(parts[0])}"
    try:
        label = decimal_number(parts[0])
    except ValueError:
        return f"label {_show(parts[0])} is not a number"
    if not math.isfinite(label):
        return f"label {_show(parts[0])} is not a finite number"
    features = parts[1:]
    if features and features[0].startswith(b"qid"):
        if b":" not in features[0]:
            return f"expected qid:N, found {_show(features[0])}"
        features = features[1:]
    previous = -1
    for token in features:
        index_s, colon, value_s = token.partition(b":")
        if not colon:
            return f"expected index:value, found {_show(token)}"
        try:
            index = decimal_index(index_s)
        except ValueError:
            return f"feature index {_show(index_s)} is not an integer"
        if index < 0:
            return f"feature index {index} is negative"
        if index > _INT32_MAX:
            return f"feature index {index} is too large"
        if index <= previous:
            return f"feature indices must increase ({index} after {previous})"
        try:
            value = decimal_number(value_s)
        except ValueError:
            return f"feature value {_show(value_s)} is not a number"
        if not math.isfinite(value):
            return f"feature value {_show(value_s)} is not a finite number"
        previous = index
    return None


def _svmlight_records(raw: bytes):
    """(line number, content without comment, tokens) of each non-blank line."""
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        content = line.split(b"#", 1)[0]
        parts = content.split()
        if parts:
            yield lineno, content, parts


def _add_dummy_labels(raw: bytes) -> bytes:
    """Prefix ``0`` to lines that start with ``index:value`` (unlabeled svmlight)."""
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        parts = line.split(b"#", 1)[0].split(None, 1)
        if parts and b":" in parts[0]:
            lines[i] = b"0 " + line
    return b"\n".join(lines)


def _power(n: int) -> str:
    """``2**26`` for a power of two, else the number."""
    return f"2**{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def _size(n_bytes: int) -> str:
    """A number of bytes for a message: ``16 GiB``, ``512 MiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes} bytes"


def _csr_int32(X):
    """CSR with sorted int32 indices (``load_svmlight_file`` gives int64 indices,
    which several scikit-learn estimators, e.g. ``SGDClassifier``, reject)."""
    import scipy.sparse as sp

    if X.nnz < np.iinfo(np.int32).max:
        X = sp.csr_matrix(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
    X.sort_indices()
    return X


class _ReadersDisagree(Exception):
    """The compiled svmlight reader refused a line that the reference rule accepts."""


def _bad_line_reason(line: bytes, label_required: bool) -> str:
    """The reference reason for a line the compiled reader refused."""
    parts = line.split(b"#", 1)[0].split()
    if not label_required and parts and b":" in parts[0]:
        parts = [b"0", *parts]
    reason = _svmlight_line_error(parts) if parts else None
    if reason is None:
        raise _ReadersDisagree
    return reason


def _read_svmlight_sklearn(
    raw: bytes,
    source: str,
    *,
    skip: bool,
    labels: bool | None,
    n_features: int | None,
    zero_based: bool | str,
) -> LabeledData:
    """svmlight through scikit-learn's reader; Python only to locate bad lines.

    The reference the compiled reader (:func:`_read_svmlight`) is tested against, and
    its fallback should the two ever disagree on a line.
    """
    from sklearn.datasets import load_svmlight_file

    def load(data: bytes):
        # zero_based=True keeps the raw indices; the base is decided below.
        return load_svmlight_file(io.BytesIO(data), dtype=np.float64, zero_based=True)

    if labels is None and not _SVM_LABELED.search(raw) and _SVM_UNLABELED.search(raw):
        labels = False  # no line has a label: an unlabeled file
    if labels is False:
        raw = _add_dummy_labels(raw)
    skipped: list[tuple[int, str]] = []
    linenos: np.ndarray | None = None  # line number of each row, computed when needed
    failure: ValueError | OverflowError | None = None
    try:
        X, y = load(raw)
        valid = bool(np.isfinite(X.data).all() and np.isfinite(y).all())
        valid = valid and _BEYOND_DECIMAL.search(raw) is None
    except (ValueError, OverflowError) as exc:
        valid, failure = False, exc
    if not valid:
        good, good_lines = [], []
        for lineno, content, parts in _svmlight_records(raw):
            reason = _svmlight_line_error(parts)
            if reason is None:
                good.append(content)
                good_lines.append(lineno)
            elif not skip:
                raise DataFormatError(source, reason, lineno)
            else:
                skipped.append((lineno, reason))
        if not skipped and failure is not None:  # the scan missed what sklearn saw
            raise DataFormatError(source, f"not a valid svmlight file ({failure})")
        _check_rows(len(good), skipped, source)
        X, y = load(b"\n".join(good))
        linenos = np.asarray(good_lines)
    X = X.tocsr()
    if linenos is None:
        linenos = np.asarray([lineno for lineno, _, _ in _svmlight_records(raw)])
    return _svmlight_checked(
        X,
        y,
        linenos,
        skipped,
        source,
        skip=skip,
        labels=labels,
        n_features=n_features,
        zero_based=zero_based,
    )


def _svmlight_checked(
    X,
    y: np.ndarray,
    linenos: np.ndarray,
    skipped: list[tuple[int, str]],
    source: str,
    *,
    skip: bool,
    labels: bool | None,
    n_features: int | None,
    zero_based: bool | str,
) -> LabeledData:
    """Parsed svmlight rows (raw indices) → checked width and base, as LabeledData.

    ``linenos`` gives each row's line number; rows refused here (too wide, index 0 in
    a one-based file, beyond ``n_features``) raise or are added to ``skipped``.
    """
    import scipy.sparse as sp

    _check_rows(X.shape[0], skipped, source)

    def reject(bad_rows: np.ndarray, why) -> None:
        """Raise for the first bad row, or drop the rows and record them as skipped."""
        nonlocal X, y, linenos
        if not skip:
            row = bad_rows[0]
            raise DataFormatError(source, why(row), int(linenos[row]))
        skipped.extend((int(linenos[row]), why(row)) for row in bad_rows)
        skipped.sort()
        keep = np.ones(X.shape[0], dtype=bool)
        keep[bad_rows] = False
        X, y, linenos = X[keep], y[keep], linenos[keep]
        _check_rows(X.shape[0], skipped, source)

    row_of = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    if n_features is None and X.nnz and X.indices.max() > MAX_SVMLIGHT_WIDTH:
        # Refused before anything is sized by it (the index alone, whatever the base,
        # so that a file streamed in chunks is refused the same way).
        huge = X.indices > MAX_SVMLIGHT_WIDTH
        base = 1 if zero_based is False else 0  # "auto" is decided below: say 0-based

        def too_wide(row: int) -> str:
            big = int(X.indices[X.indptr[row] : X.indptr[row + 1]].max())
            width = big + 1 - base
            return (
                f"feature index {big} would make a {width}-column model "
                f"({_size(8 * width)} of weights); at most {_power(MAX_SVMLIGHT_WIDTH)} "
                "columns are accepted; hash the features or pass n_features"
            )

        reject(np.unique(row_of[huge]), too_wide)
        row_of = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    if zero_based is False and X.nnz and X.indices.min() == 0:
        rows = np.unique(row_of[X.indices == 0])
        reject(rows, lambda row: "feature index 0 in a file read as one-based")
        row_of = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    if zero_based == "auto":  # scikit-learn's rule: one-based unless some index is 0
        zero_based = not (X.nnz and X.indices.min() > 0)
    shift = 0 if zero_based else 1
    if n_features is not None and X.nnz and X.indices.max() - shift >= n_features:
        too_big = X.indices - shift >= n_features
        rows = np.unique(row_of[too_big])

        def why(row: int) -> str:
            big = X.indices[X.indptr[row] : X.indptr[row + 1]].max() - shift
            return (
                f"feature index {big + shift} is beyond the {n_features} features expected"
                f" ({'0' if zero_based else '1'}-based indices)"
            )

        reject(rows, why)
    width = n_features
    if width is None:  # at least one column, as a streamed file's (stream.scan)
        width = max(int(X.indices.max()) + 1 - shift if X.nnz else 0, 1)
    X = _csr_int32(sp.csr_matrix((X.data, X.indices - shift, X.indptr), shape=(X.shape[0], width)))
    return _svmlight_data(X, y, labels, source, skipped, bool(zero_based))


def _svmlight_data(
    X: Any, y: np.ndarray, labels: bool | None, source: str, skipped: list, zero_based: bool
) -> LabeledData:
    """The data both svmlight readers return: integral labels as int64, none when
    ``labels`` is False."""
    target: np.ndarray | None = y
    if labels is False:
        target = None
    elif np.all(y == np.round(y)) and np.abs(y).max() < 2**53:
        target = y.astype(np.int64)
    return LabeledData(
        X=X,
        texts=None,
        y=target,
        format="svmlight",
        source=source,
        skipped=skipped,
        zero_based=zero_based,
    )
