"""Parsers of the data files users hand to the CLI and to :func:`read_data`.

:func:`read_data` reads a user's file in one of :data:`FORMATS`, detected by
:func:`detect_format` unless given, into a :class:`LabeledData`.  A line of each:

- ``svmlight`` (LIBSVM): ``-1 3:1 7:0.5`` (or a label alone, ``-1``, a row without
  features as in LIBSVM's w8a);
- ``fasttext``: ``__label__pos a fine film``;
- ``tsv``: ``pos<TAB>a fine film``;
- ``sentiment``: ``books pos 12.txt a fine read`` (domain, label, id, tokens);
- ``csv``: a header ``f1,f2,label`` then rows ``0.5,1,pos``;
- ``idx``: MNIST's binary IDX images (``train-images-idx3-ubyte.gz``);
- ``vw`` (Vowpal Wabbit's text format, https://vowpalwabbit.org):
  ``1 2.0 'id|words great:2 fun |meta length:0.3`` (label, importance, tag, then
  namespaces of ``name[:value]`` features; features become ``namespace^name``);
- ``counts`` (the processed multi-domain sentiment corpus of Blitzer, Dredze and
  Pereira, "Biographies, Bollywood, Boom-boxes and Blenders: Domain Adaptation for
  Sentiment Classification", ACL 2007): ``great:2 not_good:1 was_very:1
  #label#:positive``;
- ``lines``: ``a fine film`` (unlabeled text).

``vw`` and ``counts`` are text formats of weighted features
(:data:`WEIGHTED_TEXT_FORMATS`): each row's document is its ``name:value`` tokens
joined by single spaces, featurized by ``TextFeaturizer(tokenizer="pairs")``; ``vw``
importance weights are returned as ``LabeledData.sample_weight``.

Every problem with the file is a :class:`DataFormatError` whose message is one line,
``'PATH:LINE: what is wrong'``; a missing or unreadable file is an :class:`OSError`
with a one-line message.  Nothing else escapes, whatever the bytes (the fuzz tests
feed random and mutated files), so a command-line tool can print ``str(exc)`` instead
of a traceback.  :func:`read_idx` reads one IDX array (the MNIST format).

The loaders of the public data sets (MNIST, a9a, ...) are in :mod:`perceptrons.datasets`;
fitting a file to a trained model is :mod:`perceptrons.io.prepare`.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "FORMATS",
    "MAX_SVMLIGHT_WIDTH",
    "TEXT_FORMATS",
    "WEIGHTED_TEXT_FORMATS",
    "DataFormatError",
    "LabeledData",
    "detect_format",
    "read_data",
    "read_idx",
]

#: The formats :func:`read_data` understands (besides ``"auto"``).
FORMATS = ("svmlight", "fasttext", "tsv", "sentiment", "csv", "idx", "vw", "counts", "lines")

#: The formats of :data:`FORMATS` that hold raw text (one document per line) rather than
#: numeric features: their documents need a featurizer, e.g.
#: :class:`perceptrons.TextFeaturizer`.
TEXT_FORMATS = ("fasttext", "tsv", "sentiment", "vw", "counts", "lines")

#: The text formats whose documents are ``name:value`` tokens (one canonical document per
#: row, the tokens separated by single spaces): featurize them with
#: ``TextFeaturizer(tokenizer="pairs")``, which adds each value instead of counting 1.
WEIGHTED_TEXT_FORMATS = ("vw", "counts")

#: The largest svmlight feature index :func:`read_data` accepts when ``n_features`` is not
#: given: an index makes a model that many columns wide (8 bytes of weights per column
#: and class), so a stray ``2147483647:1`` would ask for 16 GiB.  Hash such features, or
#: pass ``n_features`` explicitly to accept a wider file.
MAX_SVMLIGHT_WIDTH = 2**26

_GZIP_MAGIC = b"\x1f\x8b"
_STDIN = "<stdin>"
_LABEL_PREFIX = "__label__"
_CSV_LABEL_NAMES = ("label", "class", "target", "y")
_SENTIMENT_LABELS = frozenset({"pos", "neg"})
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
_UTF8_BOM = b"\xef\xbb\xbf"
_COUNTS_LABEL = "#label#:"
_IDX_MAX_DIMS = 32  # numpy arrays have at most 64 dimensions; IDX files use 1 to 4
_SAMPLE_LINES = 20  # non-empty lines looked at by content detection
_SAMPLE_BYTES = 1 << 16  # this much of the file is read for detection...
_LONG_LINE_BYTES = 1 << 20  # ...or up to this much, to see a whole first line
_DETECT_SHARE = 0.8  # share of sampled lines a format's pattern must match
_INT32_MAX = int(np.iinfo(np.int32).max)
_FASTTEXT_LABELED = re.compile(r"^[ \t]*__label__", re.MULTILINE)
# svmlight lines that start with a label / with an index:value pair (no label).
_SVM_LABELED = re.compile(rb"^[ \t]*[^\s#:]+(?=[\s#]|$)", re.MULTILINE)
_SVM_UNLABELED = re.compile(rb"^[ \t]*[^\s#:]+:", re.MULTILINE)
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


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
    """

    def __init__(self, source: str, reason: str, line: int | None = None) -> None:
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


def _gunzip(raw: bytes, source: str) -> bytes:
    if raw[:2] != _GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(source, f"corrupt gzip data ({exc})") from None


def _read_raw(name: str, stdin) -> bytes | str:
    """The whole input, gunzipped: bytes, or str for a text-mode stream without buffer."""
    if name == "-":
        stream = sys.stdin if stdin is None else stdin
        buffer = getattr(stream, "buffer", None)
        data = buffer.read() if buffer is not None else stream.read()
        return data if isinstance(data, str) else _gunzip(data, _STDIN)
    try:
        with open(name, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise _open_error(name, exc) from None
    return _gunzip(raw, name)


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


# ----------------------------------------------------------------- format detection


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


def _vw_head(head: str) -> tuple[list[str], str | None] | None:
    """The numbers and the tag of a vw label section (the text before the first ``|``),
    or ``None`` if it is not one: at most 3 numbers, then an optional tag, which starts
    with ``'`` or touches the ``|``."""
    tokens = head.split()
    tag = None
    if tokens and (tokens[-1].startswith("'") or not head[-1].isspace()):
        tag = tokens.pop()
    if len(tokens) > 3 or not all(_is_number(token) for token in tokens):
        return None
    return tokens, tag


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


# ----------------------------------------------------------------- text formats


def _parse_tsv(line: str) -> tuple[str, str]:
    label, tab, text = line.partition("\t")
    if not tab:
        raise _BadLine("no tab between the label and the text")
    label = label.strip()
    if not label:
        raise _BadLine("empty label before the tab")
    return label, text.strip()


def _parse_sentiment(line: str) -> tuple[str, str]:
    fields = line.split()
    if len(fields) < 3:
        raise _BadLine(f"expected 'domain label id tokens...', found {len(fields)} field(s)")
    return fields[1], " ".join(fields[3:])


def _parse_lines(line: str) -> tuple[None, str]:
    return None, line.strip()


def _fasttext_parser(required: bool):
    def parse(line: str) -> tuple[str | None, str]:
        tokens = line.split()
        k = 0
        while k < len(tokens) and tokens[k].startswith(_LABEL_PREFIX):
            k += 1
        if k == 0:
            if required:
                raise _BadLine(f"no {_LABEL_PREFIX} label at the start of the line")
            return None, " ".join(tokens)
        label = tokens[0][len(_LABEL_PREFIX) :]
        if not label:
            raise _BadLine(f"empty label {_show(tokens[0])}")
        return label, " ".join(tokens[k:])

    return parse


def _read_text(
    text: str, fmt: str, source: str, *, skip: bool, labels: bool | None
) -> tuple[list[str], np.ndarray | None, list[tuple[int, str]]]:
    """Parse a text format line by line: documents, labels, skipped lines."""
    if fmt == "fasttext":
        required = bool(labels) or (labels is None and _FASTTEXT_LABELED.search(text) is not None)
        parse = _fasttext_parser(required)
    else:
        parse = {"tsv": _parse_tsv, "sentiment": _parse_sentiment, "lines": _parse_lines}[fmt]
    texts: list[str] = []
    ys: list = []
    skipped: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        try:
            label, doc = parse(line)
        except _BadLine as exc:
            if not skip:
                raise DataFormatError(source, str(exc), lineno) from None
            skipped.append((lineno, str(exc)))
            continue
        ys.append(label)
        texts.append(doc)
    _check_rows(len(texts), skipped, source)
    y = None if fmt == "lines" or ys[0] is None else np.asarray(ys)
    return texts, y, skipped


# ----------------------------------------------------------------- vw and counts


def _value_text(value: float) -> str:
    """A feature value in a canonical document: ``3`` for 3.0, else Python's ``repr``."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _finite(token: str, what: str) -> float:
    """``float(token)``, finite, else a :class:`_BadLine` naming ``what``."""
    try:
        value = float(token)
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
        tokens_out.append(f"{name}:{_value_text(count)}")
    return label, None, " ".join(tokens_out)


def numeric_labels(labels: list) -> np.ndarray:
    """Numbers as ``int64`` when all are integers (as svmlight's), else ``float64``.

    Parameters
    ----------
    labels : list of float
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


def _check_rows(n_rows: int, skipped: list, source: str) -> None:
    if n_rows == 0:
        if skipped:
            raise DataFormatError(source, f"no valid lines ({len(skipped)} skipped)")
        raise DataFormatError(source, "no data")


# ----------------------------------------------------------------- svmlight


def _svmlight_line_error(parts: list[bytes]) -> str | None:
    """Why scikit-learn's svmlight reader rejects a line (split, comment removed), or None.

    Mirrors ``sklearn.datasets._svmlight_format_fast`` (``float()`` / ``int()`` on the
    tokens, indices sorted and unique, at most a C ``int``), and also rejects non-finite
    numbers.
    """
    if b":" in parts[0]:
        return f"no label before {_show(parts[0])}"
    try:
        label = float(parts[0])
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
            index = int(index_s)
        except ValueError:
            return f"feature index {_show(index_s)} is not an integer"
        if index < 0:
            return f"feature index {index} is negative"
        if index > _INT32_MAX:
            return f"feature index {index} is too large"
        if index <= previous:
            return f"feature indices must increase ({index} after {previous})"
        try:
            value = float(value_s)
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


class SvmlightBuffers:
    """Output arrays of the compiled svmlight reader, reused from chunk to chunk.

    :func:`parse_svmlight_block` fills them with one block of lines (a chunk of a
    streamed file, or a whole file); each array grows (doubling) only when a block
    does not fit, so a stream of chunks of similar size allocates nothing after the
    first few. The arrays of a parsed block are views into these buffers: they hold
    until the next block is parsed into the same buffers.

    Parameters
    ----------
    rows : int, default=1024
        Rows the buffers hold at first.
    nnz : int, default=32768
        Stored values the buffers hold at first.
    """

    def __init__(self, rows: int = 1024, nnz: int = 1 << 15) -> None:
        from perceptrons._kernels import parse

        rows, nnz = max(int(rows), 1), max(int(nnz), 1)
        self.data = np.empty(nnz, dtype=np.float64)
        self.indices = np.empty(nnz, dtype=np.int32)
        self.indptr = np.zeros(rows + 1, dtype=np.int64)
        self.labels = np.empty(rows, dtype=np.float64)
        self.row_lines = np.empty(rows, dtype=np.int64)
        self.pending = np.empty((64, 3), dtype=np.int64)
        self.bad = np.empty(16, dtype=np.int64)
        self.state = np.zeros(parse.STATE_SIZE, dtype=np.int64)

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

        def bigger(array: np.ndarray, used: int, wanted: int) -> np.ndarray:
            if len(array) - used >= wanted:
                return array
            grown = np.empty((max(2 * len(array), used + wanted), *array.shape[1:]), array.dtype)
            grown[:used] = array[:used]
            return grown

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


def _bad_line_reason(line: bytes, label_required: bool) -> str:
    """The reference reason for a line the compiled reader refused."""
    parts = line.split(b"#", 1)[0].split()
    if not label_required and parts and b":" in parts[0]:
        parts = [b"0", *parts]
    reason = _svmlight_line_error(parts) if parts else None
    if reason is None:
        raise _ReadersDisagree
    return reason


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

    Converts the pending tokens with ``float()``, words the bad lines' reasons
    (``PATH:LINE`` with lines counted from ``first_line``, the line of ``first_pos``),
    applies the width and base rules of :func:`read_data` and returns a
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
                value = float(buf[start:stop].tobytes())
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
    buffers = SvmlightBuffers(rows=n_lines, nnz=raw.count(b":"))
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


# ----------------------------------------------------------------- csv


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
        finite = bool(np.isfinite(X).all())
    except ValueError:
        finite = False
    if not finite:  # find the bad cells in Python
        keep = []
        for i, row in enumerate(rows):
            reason = None
            for name, cell in zip(names, row, strict=True):
                try:
                    value = float(cell)
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


# ----------------------------------------------------------------- idx

# IDX type codes -> big-endian numpy dtypes.
_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _read_bytes(path: Path) -> bytes:
    """Read a file, transparently gunzipping it when it starts with the gzip magic."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"{str(path)!r}: corrupt gzip stream ({exc})") from exc
    return raw


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an IDX file (the MNIST format), plain or gzip-compressed.

    The header is validated: two zero bytes, a known type code, the number of
    dimensions, then one big-endian 32-bit size per dimension; the payload must
    hold exactly ``prod(sizes) * itemsize`` bytes.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.  Compression is detected from the content (gzip magic
        number), not from the file name.

    Returns
    -------
    numpy.ndarray
        Array of shape ``sizes`` in native byte order (``uint8`` for MNIST).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the magic number, type code or dimensions are invalid, or the payload
        size does not match the header.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{str(path)!r}: no such file")
    raw = _read_bytes(path)
    name = str(path)
    if len(raw) < 4:
        raise ValueError(f"{name!r}: too short for an IDX header ({len(raw)} bytes)")
    if raw[0] != 0 or raw[1] != 0:
        raise ValueError(
            f"{name!r}: bad IDX magic number 0x{raw[:4].hex()} (must start with two zero bytes)"
        )
    type_code, ndim = raw[2], raw[3]
    if type_code not in _IDX_DTYPES:
        raise ValueError(f"{name!r}: unknown IDX data type code 0x{type_code:02x}")
    if ndim == 0:
        raise ValueError(f"{name!r}: IDX header declares 0 dimensions")
    if ndim > _IDX_MAX_DIMS:
        raise ValueError(
            f"{name!r}: IDX header declares {ndim} dimensions (at most {_IDX_MAX_DIMS} are read)"
        )
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise ValueError(
            f"{name!r}: truncated IDX header ({len(raw)} bytes, need {header_len} "
            f"for {ndim} dimensions)"
        )
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = _IDX_DTYPES[type_code]
    expected = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
    actual = len(raw) - header_len
    if actual != expected:
        raise ValueError(
            f"{name!r}: IDX size mismatch: header declares shape {shape} of {dtype} "
            f"({expected} payload bytes) but the file holds {actual} payload bytes"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header_len).reshape(shape)
    return data.astype(dtype.newbyteorder("="), copy=True)


def _idx_labels_path(path: Path) -> Path | None:
    """The labels file beside an images file (``images-idx3`` → ``labels-idx1``)."""
    if "images-idx3" not in path.name:
        return None
    stem = path.name.replace("images-idx3", "labels-idx1")
    alternative = stem[:-3] if stem.endswith(".gz") else stem + ".gz"
    for candidate in (path.with_name(stem), path.with_name(alternative)):
        if candidate.is_file():
            return candidate
    return None


def _read_idx_checked(path: Path, source: str) -> np.ndarray:
    try:
        return read_idx(path)
    except ValueError as exc:
        reason = str(exc)
        prefix = f"{str(path)!r}: "
        raise DataFormatError(source, reason.removeprefix(prefix)) from None


def _read_idx_data(name: str, *, labels: bool | None, n_features: int | None) -> LabeledData:
    """IDX images → pixels scaled to [0, 1]; labels from the sibling labels file."""
    path = Path(name)
    if not path.is_file():
        raise _open_error(name, FileNotFoundError() if not path.exists() else IsADirectoryError())
    images = _read_idx_checked(path, name)
    if images.dtype != np.uint8 or images.ndim < 2:
        raise DataFormatError(
            name,
            f"expected uint8 images of shape (n, rows, cols), found {images.dtype} of shape "
            f"{images.shape}",
        )
    n = images.shape[0]
    _check_rows(n, [], name)
    X = images.reshape(n, -1).astype(np.float64)
    X /= 255.0
    if n_features is not None and X.shape[1] != n_features:
        raise DataFormatError(
            name, f"images have {X.shape[1]} pixels, but {n_features} features are expected"
        )
    y = None
    if labels is not False:
        labels_path = _idx_labels_path(path)
        if labels_path is None:
            if labels:
                expected = path.name.replace("images-idx3", "labels-idx1")
                where = (
                    f"{path.with_name(expected)} does not exist"
                    if expected != path.name
                    else 'the file name does not contain "images-idx3"'
                )
                raise DataFormatError(name, f"labels are required but {where}")
        else:
            y = _read_idx_checked(labels_path, str(labels_path))
            if y.ndim != 1 or y.shape[0] != n:
                raise DataFormatError(
                    name, f"holds {n} images but {labels_path} holds labels of shape {y.shape}"
                )
            y = y.astype(np.int64)
    return LabeledData(X=X, texts=None, y=y, format="idx", source=name)


# ----------------------------------------------------------------- read_data


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
        split at each token's last ``:``, counts finite numbers, the label any string
        after ``#label#:``.  The document is the ``feature:count`` tokens.
    ``lines``
        One unlabeled document per line.

    Blank lines are ignored everywhere.  A leading UTF-8 byte order mark is dropped
    in every format.  Text is decoded strictly (``encoding``, UTF-8 by default): a bad
    byte is an error naming its line, there is no silent latin-1 fallback.  Gzipped
    input (any format) is decompressed.

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

    raw = _read_raw(name, stdin)
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
