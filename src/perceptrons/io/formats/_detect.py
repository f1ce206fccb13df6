"""Format detection: :func:`detect_format`, by the file name, else by the content of
the first lines.
"""

from __future__ import annotations

import csv
import math
import os
import re

from perceptrons.io.formats._common import (
    _format_from_name,
    _is_number,
    _looks_like_idx,
    _read_head,
    _sample_lines,
)
from perceptrons.io.formats._text import _LABEL_PREFIX
from perceptrons.io.formats._weighted import _COUNTS_LABEL, _vw_head

_SENTIMENT_LABELS = frozenset({"pos", "neg"})
_SAMPLE_LINES = 20  # non-empty lines looked at by content detection
_DETECT_SHARE = 0.8  # share of sampled lines a format's pattern must match
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def _svmlight_shape(line: str) -> int:
    """-1 if ``line`` is not svmlight-like, else its number of ``index:value`` pairs."""
    tokens = line.split("#", 1)[0].split()
    if tokens and ":" not in tokens[0]:
        if not _NUMBER.match(tokens[0]):
            return -1
        tokens = tokens[1:]
    if tokens and tokens[0].startswith("qid:"):
        tokens = tokens[1:]
    for token in tokens:
        index, _, value = token.partition(":")
        if not index.isdigit() or not _NUMBER.match(value):
            return -1
    return len(tokens)


def _is_sentiment(line: str) -> bool:
    fields = line.split(None, 3)
    return (
        len(fields) == 4
        and fields[1] in _SENTIMENT_LABELS
        and (fields[2].endswith(".txt") or any(c.isdigit() for c in fields[2]))
    )


def _is_csv(lines: list[str]) -> bool:
    """A header of >= 2 columns (not all numbers) then rows of numbers (but the label)."""
    try:
        rows = [[cell.strip() for cell in row] for row in csv.reader(lines)]
    except csv.Error:  # a NUL byte, a bare carriage return...: not a CSV file we read
        return False
    if not rows:
        return False
    header, data = rows[0], rows[1:]
    width = len(header)
    if width < 2 or not data or all(_is_number(cell) for cell in header):
        return False
    numeric = sum(
        len(row) == width and sum(_is_number(cell) for cell in row) >= width - 1 for row in data
    )
    return numeric >= math.ceil(_DETECT_SHARE * len(data))


def _is_counts(line: str) -> bool:
    """``feature:count ... #label#:LABEL`` (Blitzer et al.'s processed reviews)."""
    last = line.rsplit(None, 1)[-1]
    return last.startswith(_COUNTS_LABEL) and len(last) > len(_COUNTS_LABEL)


def _is_vw(line: str) -> bool:
    """``[label] [importance] [tag]|namespace features ...``: a label section of numbers
    (and a tag) before the first ``|``, which starts the line or follows a space, a
    ``'tag`` or a labelled tag."""
    head, bar, _ = line.partition("|")
    if not bar:
        return False
    parsed = _vw_head(head)
    if parsed is None:
        return False
    numbers, tag = parsed
    return tag is None or tag.startswith("'") or bool(numbers)


def _has_pair(lines: list[str]) -> bool:
    """Some line is svmlight with an ``index:value`` pair."""
    return any(_svmlight_shape(line) > 0 for line in lines)


def _format_from_content(lines: list[str]) -> str:
    """Detect a text-based format from (the first) lines of a file; ``"lines"`` if none."""
    sample = [line.strip() for line in lines if line.strip()][:_SAMPLE_LINES]
    if not sample:
        return "lines"
    need = math.ceil(_DETECT_SHARE * len(sample))
    if sum(line.startswith(_LABEL_PREFIX) for line in sample) >= need:
        return "fasttext"
    if sum(_is_counts(line) for line in sample) >= need:
        return "counts"
    if sum(_is_vw(line) for line in sample) >= need:
        return "vw"
    records = [line for line in sample if not line.startswith("#")]
    if records:
        pairs = [_svmlight_shape(line) for line in records]
        if sum(p >= 0 for p in pairs) >= math.ceil(_DETECT_SHARE * len(records)) and (
            sum(p > 0 for p in pairs) >= math.ceil(len(records) / 2)
            # Label-only rows (LIBSVM's w8a): some line of the head must hold a pair,
            # else a file of bare numbers is taken for unlabeled text.
            or _has_pair(lines)
        ):
            return "svmlight"
    if sum(_is_sentiment(line) for line in sample) >= need:
        return "sentiment"
    if sum("\t" in line for line in sample) >= need:
        return "tsv"
    if _is_csv(sample):
        return "csv"
    return "lines"


def detect_format(path: str | os.PathLike[str], sample_lines: list[str] | None = None) -> str:
    """Guess the format of a data file.

    By file name first: ``.svm``/``.svmlight``/``.libsvm`` → ``svmlight``, ``.csv`` →
    ``csv``, ``.tsv`` → ``tsv``, ``.ft``/``.fasttext`` → ``fasttext``, ``.vw`` → ``vw``,
    ``*idx3-ubyte[.gz]`` → ``idx`` (a trailing ``.gz`` is ignored).  Other names
    (``.train``, ``.test``, ``.t``, ``.txt``, none) are detected by content: an IDX
    header → ``idx``, else on the first 20 non-empty lines (a leading UTF-8 BOM
    dropped), in this order, at least 80 % of them matching:

    1. ``fasttext``: the line starts with ``__label__``;
    2. ``counts``: the last token is ``#label#:LABEL``;
    3. ``vw``: the text before the first ``|`` is a label section, up to three numbers
       and a tag (so the line starts with ``|``, or holds a space then ``|``, or a tag touches
       the ``|``);
    4. ``svmlight``: ``[label] [qid:N] index:value ...`` or a label alone (``#``
       comment lines aside), with either half of the lines holding a pair or, for
       files whose rows are mostly label-only (LIBSVM's w8a), some pair in the first
       64 KiB.  A file of bare numbers, one per line and no pair, is ambiguous (labels
       without features, or unlabeled text) and is taken for ``lines``: pass the
       format to read it as svmlight;
    5. ``sentiment``: 4+ whitespace fields, the 2nd ``pos`` or ``neg``, the 3rd an id
       (ends with ``.txt`` or holds a digit);
    6. ``tsv``: the line holds a tab;
    7. ``csv``: a header of 2+ comma-separated names, then rows of numbers (one
       column, the label, may be text);
    8. otherwise ``lines`` (unlabeled text).

    Detection never fails on content: bytes that are no format (binary data, stray
    carriage returns) are ``lines``.

    Parameters
    ----------
    path : str or os.PathLike
        The file, or ``"-"`` for standard input (then ``sample_lines`` is required).
    sample_lines : list of str, optional
        The file's first lines, when already read; the file itself is then not opened.

    Returns
    -------
    str
        One of :data:`FORMATS`.  ``"lines"`` means "no labeled format recognised":
        :func:`read_data` turns it into an error when labels are required.

    Raises
    ------
    OSError
        If the file cannot be read (``FileNotFoundError``: ``'PATH: no such file'``).
    ValueError
        If ``path`` is ``"-"`` and ``sample_lines`` is not given.

    Examples
    --------
    >>> detect_format("train.svm")
    'svmlight'
    >>> detect_format("-", ["__label__pos a fine film", "__label__neg dull"])
    'fasttext'
    >>> detect_format("-", ["1 3:1 7:0.5", "-1 2:1"])
    'svmlight'
    """
    name = os.fspath(path)
    if name != "-":
        by_name = _format_from_name(name)
        if by_name is not None:
            return by_name
    if sample_lines is None:
        if name == "-":
            raise ValueError("detect_format('-') needs sample_lines: stdin cannot be read twice")
        head, complete = _read_head(name)
        if _looks_like_idx(head):
            return "idx"
        sample_lines = _sample_lines(head, complete)
    return _format_from_content(sample_lines)
