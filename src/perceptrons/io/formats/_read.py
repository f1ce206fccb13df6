""":func:`read_data`: a data file in any of the formats, its format detected unless given."""

from __future__ import annotations

import os
from typing import IO

from perceptrons.io.formats._common import (
    _STDIN,
    FORMATS,
    TEXT_FORMATS,
    WEIGHTED_TEXT_FORMATS,
    DataFormatError,
    LabeledData,
    _decode,
    _format_from_name,
    _head_end,
    _looks_like_idx,
    _sample_lines,
    read_input,
)
from perceptrons.io.formats._csv import _read_csv
from perceptrons.io.formats._detect import _format_from_content
from perceptrons.io.formats._idx import _read_idx_data
from perceptrons.io.formats._svmlight import _read_svmlight
from perceptrons.io.formats._text import _read_text
from perceptrons.io.formats._weighted import _read_weighted

_UTF8_BOM = b"\xef\xbb\xbf"


def read_data(
    path: str | os.PathLike[str],
    format: str = "auto",
    *,
    skip_bad_lines: bool = False,
    labels: bool | None = None,
    label_column: str | int | None = None,
    n_features: int | None = None,
    stdin: IO[str] | IO[bytes] | None = None,
    encoding: str = "utf-8",
    zero_based: bool | str = "auto",
) -> LabeledData:
    """Read a data file in one of :data:`FORMATS`, reporting problems by ``file:line``.

    The formats:

    ``svmlight``
        ``label [qid:N] index:value ...`` with ``#`` comments, read by a compiled
        reader (:mod:`perceptrons._kernels.parse`) that accepts and refuses what
        scikit-learn's ``load_svmlight_file`` does (and non-finite numbers), with the
        same values to the bit; Python words the message of a bad line.  ``X`` is CSR.
    ``fasttext``
        ``__label__X [__label__Y ...] text``; only the first label of a line is kept,
        the other leading labels are dropped; the text is re-joined by single spaces.
    ``tsv``
        ``label<TAB>text`` split at the first tab (no header row).
    ``sentiment``
        ``domain label id tokens...``: the 2nd field is the label, the text the tokens
        after the id joined by single spaces.
    ``csv``
        A header row, then rows; the label column is ``label_column`` (a name, else an
        index, also as a string such as ``"0"``), else a column named label, class,
        target or y (case-insensitive), else the last column.  Other columns must be
        finite numbers.  Quoting follows the :mod:`csv` module.
    ``idx``
        MNIST IDX images (``uint8``, gzipped or not) → pixels / 255; labels from the
        sibling file named with ``labels-idx1`` for ``images-idx3`` (``.gz`` or not).
    ``vw``
        Vowpal Wabbit's ``[label] [importance] [base] [tag]|namespace[:scale]
        name[:value] ... |namespace2 ...``: the label a number (``-1``/``1``, or
        ``1``..``K``), ``y`` ``int64`` when all labels are integers, else ``float64``;
        the importance a non-negative number, returned in ``sample_weight`` (``None``
        if no line has one, else 1.0 where a line has none); the base ignored; a tag
        starts with ``'`` or touches the ``|``.  ``|name`` opens a namespace whose
        features are named ``name^feature`` and whose scale multiplies their values;
        ``| `` (a space after the bar) is the default namespace (no prefix).  A feature
        is ``name`` (value 1) or ``name:value``, a finite number; names hold no ``:``
        nor ``|``.  The document is the ``name:value`` tokens joined by spaces, e.g.
        ``1 |a x y:2 | z`` → ``'a^x:1 a^y:2 z:1'``.  Cost-sensitive labels are refused.
    ``counts``
        ``feature:count ... #label#:LABEL`` (Blitzer et al. 2007's processed reviews):
        split at each token's last ``:``, counts finite numbers, not negative, the label
        any string after ``#label#:``.  The document is the ``feature:count`` tokens.
    ``lines``
        One unlabeled document per line.

    Blank lines are ignored everywhere.  A leading UTF-8 byte order mark is dropped
    in every format.  Text is decoded strictly (``encoding``, UTF-8 by default): a bad
    byte is an error naming its line, there is no silent latin-1 fallback.  Gzipped
    input (any format) is decompressed a block at a time, the memory the whole input
    will take checked as it grows (:mod:`perceptrons._memory`): input past the limit
    is refused in one :class:`~perceptrons._memory.MemoryBudgetError` line, however
    small the gzip file.  The numbers of ``svmlight``, ``vw`` and ``counts`` (labels,
    values, importances, scales) are ASCII decimal, as C's ``strtod`` reads them (a
    sign, digits with one ``.``, an exponent; ``inf`` and ``nan`` are refused as not
    finite): ``1_000`` or the digit ``١``, which Python's ``float()`` takes, make a
    bad line; svmlight indices are ASCII digits.

    Parameters
    ----------
    path : str or os.PathLike
        The file, or ``"-"`` for standard input (any format but ``idx``).
    format : str, default="auto"
        One of :data:`FORMATS`, or ``"auto"`` (see :func:`detect_format`).
    skip_bad_lines : bool, default=False
        Drop malformed lines, listing them in ``LabeledData.skipped``, instead of
        raising for the first one.  Rows then no longer match input lines one to one.
    labels : bool or None, default=None
        ``True``: labels are required (training, evaluation): a file or format
        without them is an error, as is a ``fasttext`` line without ``__label__``.
        ``False``: the file has none: text formats are read as ``lines`` (the whole
        line is the document) but ``vw`` and ``counts``, whose labels, when there,
        are ignored; ``csv`` columns are all features, ``svmlight`` lines may lack
        the leading label (any label is ignored), ``idx`` labels are not read.
        ``None``: take what the format gives (``fasttext``, ``svmlight``, ``vw`` and
        ``counts`` files in which no line has a label, and ``csv`` files as wide as
        ``n_features``, are then unlabeled; once a line has a label, every line
        must).
    label_column : str or int, optional
        ``csv`` only: the label column's name or index.
    n_features : int, optional
        Number of features the caller expects (a model's): the svmlight matrix gets
        exactly this width and a larger index is a bad line; ``csv`` and ``idx`` must
        have this many feature columns / pixels.  Ignored for text formats.  Without
        it, an svmlight feature index above :data:`MAX_SVMLIGHT_WIDTH` is a bad line
        (a model that wide would not fit in memory).
    stdin : file-like, optional
        Read instead of :data:`sys.stdin` when ``path`` is ``"-"`` (text or binary).
    encoding : str, default="utf-8"
        Encoding of text formats.
    zero_based : bool or "auto", default="auto"
        ``svmlight`` only: whether feature indices start at 0.  ``"auto"`` follows
        scikit-learn: 0-based if some index is 0, else 1-based.  The decision is
        returned in ``LabeledData.zero_based``; pass it back for data to predict on.

    Returns
    -------
    LabeledData

    Raises
    ------
    DataFormatError
        Malformed content, or options that do not fit the file; a one-line message
        ``'PATH:LINE: ...'`` or ``'PATH: ...'``.
    OSError
        The file cannot be opened (``FileNotFoundError``: ``'PATH: no such file'``).

    Examples
    --------
    >>> import io
    >>> text = "__label__pos a fine film\\n\\n__label__neg dull\\n"
    >>> data = read_data("-", stdin=io.StringIO(text))
    >>> data.format, data.texts, data.y.tolist()
    ('fasttext', ['a fine film', 'dull'], ['pos', 'neg'])
    >>> data = read_data("-", stdin=io.StringIO("1 1:0.5 3:2\\n-1 2:1\\n"))
    >>> data.X.toarray(), data.y.tolist(), data.zero_based
    (array([[0.5, 0. , 2. ],
           [0. , 1. , 0. ]]), [1, -1], False)
    >>> data = read_data("-", stdin=io.StringIO("1 2.5 |words great:2 fun | x\\n-1 |words dull\\n"))
    >>> data.format, data.texts, data.y.tolist(), data.sample_weight.tolist()
    ('vw', ['words^great:2 words^fun:1 x:1', 'words^dull:1'], [1, -1], [2.5, 1.0])
    """
    name = os.fspath(path)
    source = _STDIN if name == "-" else name
    if format != "auto" and format not in FORMATS:
        raise DataFormatError(
            source, f"unknown format {format!r} (expected auto or one of {', '.join(FORMATS)})"
        )
    if labels not in (True, False, None):
        raise TypeError(f"labels must be True, False or None, got {labels!r}")
    if zero_based not in (True, False, "auto"):
        raise TypeError(f"zero_based must be True, False or 'auto', got {zero_based!r}")
    if labels is False and label_column is not None:
        raise DataFormatError(source, "a label column was given for a file without labels")
    fmt = format
    if fmt == "auto" and name != "-":
        fmt = _format_from_name(name) or "auto"
    if fmt == "idx":
        if name == "-":
            raise DataFormatError(source, "idx data cannot be read from standard input")
        return _read_idx_data(name, labels=labels, n_features=n_features)

    raw = read_input(name, stdin)
    if isinstance(raw, bytes) and raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM) :]  # svmlight too; text is decoded without it anyway
    elif isinstance(raw, str) and raw.startswith("\ufeff"):
        raw = raw[1:]
    if fmt == "auto":
        if _looks_like_idx(raw[:4]):
            if name == "-":
                raise DataFormatError(source, "idx data cannot be read from standard input")
            return _read_idx_data(name, labels=labels, n_features=n_features)
        head = raw[: _head_end(raw)]
        fmt = _format_from_content(_sample_lines(head, len(raw) == len(head)))
        if fmt == "lines" and labels:
            if not raw.strip():
                raise DataFormatError(source, "no data")
            raise DataFormatError(
                source,
                f"cannot tell the format of this file; pass --format (one of {', '.join(FORMATS)})",
            )
    if labels is False and fmt in TEXT_FORMATS and fmt not in WEIGHTED_TEXT_FORMATS:
        fmt = "lines"
    if labels and fmt == "lines":
        raise DataFormatError(source, "format 'lines' has no labels")

    if fmt == "svmlight":
        try:
            data = raw.encode(encoding) if isinstance(raw, str) else raw
        except UnicodeError as exc:
            raise DataFormatError(source, f"cannot be encoded as {encoding} ({exc})") from None
        except LookupError:
            raise DataFormatError(source, f"unknown encoding {encoding!r}") from None
        return _read_svmlight(
            data,
            source,
            skip=skip_bad_lines,
            labels=labels,
            n_features=n_features,
            zero_based=zero_based,
        )
    text = _decode(raw, source, encoding)
    if fmt == "csv":
        return _read_csv(
            text,
            source,
            skip=skip_bad_lines,
            labels=labels,
            label_column=label_column,
            n_features=n_features,
        )
    if fmt in WEIGHTED_TEXT_FORMATS:
        return _read_weighted(text, fmt, source, skip=skip_bad_lines, labels=labels)
    texts, y, skipped = _read_text(text, fmt, source, skip=skip_bad_lines, labels=labels)
    return LabeledData(X=None, texts=texts, y=y, format=fmt, source=source, skipped=skipped)
