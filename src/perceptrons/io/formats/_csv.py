"""The ``csv`` format: a header row, then rows of numbers and a label column."""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from perceptrons._decimal import decimal_number
from perceptrons.io.formats._common import (
    DataFormatError,
    LabeledData,
    _check_rows,
    _is_number,
    _show,
)

# What may surround a number in a cell: ASCII whitespace (C's isspace), not NBSP & co.
_SPACES = " \t\r\n\f\v"
_CSV_LABEL_NAMES = ("label", "class", "target", "y")


def _label_index(
    header: list[str],
    label_column: str | int | None,
    labels: bool | None,
    n_features: int | None,
    source: str,
    line: int,
) -> int | None:
    """Which column holds the labels (``None``: every column is a feature)."""
    if labels is False:
        return None
    width = len(header)
    lower = [h.lower() for h in header]
    if isinstance(label_column, str):
        if label_column in header:
            return header.index(label_column)
        if label_column.lower() in lower:
            return lower.index(label_column.lower())
        try:
            label_column = int(label_column)
        except ValueError:
            shown = ", ".join(header[:10]) + (", ..." if width > 10 else "")
            raise DataFormatError(
                source, f'no column named "{label_column}" (columns: {shown})', line
            ) from None
    if label_column is not None:
        if not -width <= label_column < width:
            raise DataFormatError(
                source,
                f"label column {label_column} is out of range (the header has {width} columns)",
                line,
            )
        return label_column % width
    for name in _CSV_LABEL_NAMES:
        if name in lower:
            return lower.index(name)
    if labels is None and n_features is not None and width == n_features:
        return None  # as many columns as the model has features: no label column
    return width - 1


class _CSVError(Exception):
    """``csv.Error`` with the line it happened on: ``args == (message, line)``."""


def _csv_rows(text: str):
    """(line number, cells) of each row; a plain split when nothing is quoted (faster)."""
    if '"' not in text:
        for lineno, line in enumerate(text.split("\n"), start=1):
            if line and not line.isspace():
                yield lineno, line.rstrip("\r").split(",")
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                yield reader.line_num, row
    except csv.Error as exc:
        raise _CSVError(str(exc), reader.line_num) from None


def _read_csv(
    text: str,
    source: str,
    *,
    skip: bool,
    labels: bool | None,
    label_column: str | int | None,
    n_features: int | None,
) -> LabeledData:
    """A CSV with a header row: the label column (strings) and numeric features."""
    header: list[str] | None = None
    header_line = 0
    label_at: int | None = None
    rows: list[list[str]] = []
    ys: list[str] = []
    linenos: list[int] = []
    bad: list[tuple[int, str]] = []
    try:
        for lineno, row in _csv_rows(text):
            if header is None:
                header = [cell.strip() for cell in row]
                header_line = lineno
                if all(_is_number(cell) for cell in header):
                    raise DataFormatError(
                        source,
                        "the first row must be a header of column names, found only numbers",
                        lineno,
                    )
                label_at = _label_index(
                    header, label_column, labels, n_features, source, header_line
                )
                if label_at is not None and len(header) < 2:
                    raise DataFormatError(source, "no feature columns besides the label", lineno)
                continue
            if len(row) != len(header):
                bad.append((lineno, f"expected {len(header)} columns, found {len(row)}"))
                continue
            if label_at is not None:
                label = row.pop(label_at).strip()
                if not label:
                    bad.append((lineno, f'the label column "{header[label_at]}" is empty'))
                    continue
                ys.append(label)
            rows.append(row)
            linenos.append(lineno)
    except _CSVError as exc:
        raise DataFormatError(source, f"unreadable CSV ({exc.args[0]})", exc.args[1]) from None
    if header is None:
        raise DataFormatError(source, "no data")
    names = [h or f"column {i + 1}" for i, h in enumerate(header) if i != label_at]
    if n_features is not None and len(names) != n_features:
        raise DataFormatError(
            source,
            f"{len(names)} feature columns, but {n_features} are expected",
            header_line,
        )
    try:
        X = np.array(rows, dtype=np.float64).reshape(len(rows), len(names))
        # NumPy reads cells as float() does: "1_000", digits of other scripts. Those
        # cells are not numbers of the format (ASCII decimal, as C's strtod).
        finite = bool(np.isfinite(X).all()) and all(
            cell.isascii() and "_" not in cell for row in rows for cell in row
        )
    except ValueError:
        finite = False
    if not finite:  # find the bad cells in Python
        keep = []
        for i, row in enumerate(rows):
            reason = None
            for name, cell in zip(names, row, strict=True):
                try:
                    value = decimal_number(cell.strip(_SPACES))
                except ValueError:
                    reason = (
                        f'column "{name}" is empty'
                        if not cell.strip()
                        else f'column "{name}" is not a number: {_show(cell.strip())}'
                    )
                    break
                if not math.isfinite(value):
                    reason = f'column "{name}" is not a finite number: {_show(cell.strip())}'
                    break
            if reason is None:
                keep.append(i)
            else:
                bad.append((linenos[i], reason))
        rows = [rows[i] for i in keep]
        ys = [ys[i] for i in keep] if ys else ys
        X = np.array(rows, dtype=np.float64).reshape(len(rows), len(names))
    bad.sort()
    if bad and not skip:
        raise DataFormatError(source, bad[0][1], bad[0][0])
    _check_rows(X.shape[0], bad, source)
    return LabeledData(
        X=np.ascontiguousarray(X),
        texts=None,
        y=np.asarray(ys) if label_at is not None else None,
        format="csv",
        source=source,
        skipped=bad,
        feature_names=names,
    )
