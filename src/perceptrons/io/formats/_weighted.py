"""The text formats of weighted features, ``vw`` and ``counts``: each row a canonical
document of ``name:value`` tokens.
"""

from __future__ import annotations

import math

import numpy as np

from perceptrons._decimal import decimal_number, is_decimal_number
from perceptrons.io.formats._common import (
    DataFormatError,
    LabeledData,
    _BadLine,
    _check_rows,
    _show,
)

_COUNTS_LABEL = "#label#:"


def _vw_head(head: str) -> tuple[list[str], str | None] | None:
    """The numbers and the tag of a vw label section (the text before the first ``|``),
    or ``None`` if it is not one: at most 3 numbers, then an optional tag, which starts
    with ``'`` or touches the ``|``."""
    tokens = head.split()
    tag = None
    if tokens and (tokens[-1].startswith("'") or not head[-1].isspace()):
        tag = tokens.pop()
    if len(tokens) > 3 or not all(is_decimal_number(token) for token in tokens):
        return None
    return tokens, tag


def _value_text(value: float) -> str:
    """A feature value in a canonical document: ``3`` for 3.0, else Python's ``repr``."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _finite(token: str, what: str) -> float:
    """The number ``token`` (ASCII decimal, :mod:`perceptrons._decimal`), finite, else a
    :class:`_BadLine` naming ``what``."""
    try:
        value = decimal_number(token)
    except ValueError:
        raise _BadLine(f"{what} {_show(token)} is not a number") from None
    if not math.isfinite(value):
        raise _BadLine(f"{what} {_show(token)} is not a finite number")
    return value


def _parse_vw(line: str) -> tuple[float | None, float | None, str]:
    """``[label] [importance] [base] [tag]|ns[:scale] name[:value] ... |ns2 ...`` →
    (label, importance, canonical document)."""
    head, bar, body = line.partition("|")
    if not bar:
        raise _BadLine("no | before the features (expected 'label [importance] [tag]|features')")
    parsed = _vw_head(head)
    if parsed is None:
        tokens = head.split()
        cost = next((t for t in tokens if ":" in t), None)
        if cost is not None:
            raise _BadLine(
                f"label {_show(cost)} is not a number (cost-sensitive labels are not read)"
            )
        raise _BadLine(
            f"expected 'label [importance] [tag]' before the first |, found {_show(head.strip())}"
        )
    numbers = parsed[0]
    label = _finite(numbers[0], "label") if numbers else None
    importance = _finite(numbers[1], "importance") if len(numbers) > 1 else None
    if importance is not None and importance < 0:
        raise _BadLine(f"importance {_show(numbers[1])} is negative")
    tokens_out: list[str] = []
    for segment in body.split("|"):
        tokens = segment.split()
        prefix, scale = "", 1.0
        if segment[:1] and not segment[0].isspace():  # |name[:scale] opens a namespace
            name, colon, value = tokens.pop(0).partition(":")
            if not name:
                raise _BadLine(f"empty namespace name in {_show('|' + segment.split()[0])}")
            prefix = name + "^"
            if colon:
                scale = _finite(value, f"namespace {_show(name)} scale")
        for token in tokens:
            name, colon, value = token.partition(":")
            if not name:
                raise _BadLine(f"empty feature name in {_show(token)}")
            number = _finite(value, f"value of feature {_show(name)}") if colon else 1.0
            tokens_out.append(f"{prefix}{name}:{_value_text(number * scale)}")
    return label, importance, " ".join(tokens_out)


def _parse_counts(line: str) -> tuple[str | None, None, str]:
    """``feature:count ... #label#:LABEL`` → (label, None, canonical document)."""
    tokens = line.split()
    label = None
    if tokens[-1].startswith(_COUNTS_LABEL):
        label = tokens.pop()[len(_COUNTS_LABEL) :]
        if not label:
            raise _BadLine(f'empty label "{_COUNTS_LABEL}"')
    tokens_out = []
    for token in tokens:
        name, colon, value = token.rpartition(":")
        if token.startswith(_COUNTS_LABEL):
            raise _BadLine(f'"{_COUNTS_LABEL}..." must be the last token of the line')
        if not colon or not name:
            raise _BadLine(f"expected feature:count, found {_show(token)}")
        count = _finite(value, f"count of {_show(name)}")
        if count < 0:
            # A count is never negative (the sublinear tf-idf of the text defaults takes
            # its log); a vw file, whose values may be, is the format for signed values.
            raise _BadLine(f"count of {_show(name)} is negative: {_show(value)}")
        tokens_out.append(f"{name}:{_value_text(count)}")
    return label, None, " ".join(tokens_out)


def numeric_labels(labels: list | np.ndarray) -> np.ndarray:
    """Numbers as ``int64`` when all are integers (as svmlight's), else ``float64``.

    Parameters
    ----------
    labels : list or ndarray of float
        The labels of a ``vw`` file (or chunk), as read.

    Returns
    -------
    ndarray of shape (n_labels,)
        ``int64`` when every label is an integer below ``2**53`` in size, else ``float64``.
    """
    y = np.asarray(labels, dtype=np.float64)
    if np.all(y == np.round(y)) and np.abs(y).max() < 2**53:
        return y.astype(np.int64)
    return y


def _read_weighted(
    text: str, fmt: str, source: str, *, skip: bool, labels: bool | None
) -> LabeledData:
    """``vw`` or ``counts``: canonical ``name:value`` documents, labels, importances."""
    parse = _parse_vw if fmt == "vw" else _parse_counts
    what = "label before the |" if fmt == "vw" else f"{_COUNTS_LABEL} label at the end of the line"
    rows: list[tuple[int, object, float | None, str]] = []
    bad: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        try:
            label, importance, doc = parse(line)
        except _BadLine as exc:
            bad.append((lineno, str(exc)))
            continue
        rows.append((lineno, label, importance, doc))
    required = bool(labels) or (labels is None and any(row[1] is not None for row in rows))
    if required:
        bad.extend((row[0], f"no {what}") for row in rows if row[1] is None)
        rows = [row for row in rows if row[1] is not None]
        bad.sort()
    if bad and not skip:
        raise DataFormatError(source, bad[0][1], bad[0][0])
    _check_rows(len(rows), bad, source)
    y = None
    if required:
        found = [row[1] for row in rows]
        y = numeric_labels(found) if fmt == "vw" else np.asarray(found)
    weights = None
    if any(row[2] is not None for row in rows):
        weights = np.array([1.0 if row[2] is None else row[2] for row in rows])
    return LabeledData(
        X=None,
        texts=[row[3] for row in rows],
        y=y,
        format=fmt,
        source=source,
        skipped=bad,
        sample_weight=weights,
    )
