"""Reading tagged sentences (CoNLL columns, CoNLL-U, ``word/TAG``) and writing tags back.

What :class:`perceptrons.SequenceTagger` and ``perceptrons tag`` read. Every reader
returns a :class:`TaggedCorpus`: the sentences as lists of tokens, each token a tuple of
its input column strings (``(word,)`` or ``(word, POS, ...)``), the tags when the file
has them, and where each sentence starts, so that a malformed line and a prediction can
be traced back to the file.

Formats
-------
``conll``
    The CoNLL-2000 layout (Tjong Kim Sang & Buchholz 2000): one token per line, columns
    separated by whitespace, a blank line between sentences; ``-DOCSTART-`` lines (the
    CoNLL-2003 document markers) are skipped. Every token of a file has the same number
    of columns; one of them (by default the last) is the tag.
``conllu``
    Universal Dependencies' CoNLL-U: ten tab-separated columns; ``#`` comment lines are
    left out, and so are multi-word token ranges (ID ``1-2``) and empty nodes (ID
    ``1.1``): the token is the FORM column, the tag the UPOS (or XPOS) column.
``tagged``
    One sentence per line, ``word/TAG`` items separated by whitespace; the tag is what
    follows the *last* separator, so a word may contain ``/`` (``1/2/CD``).

Every reader reads plain or gzip-compressed files (detected from the content) and
``"-"`` for standard input, and raises a :class:`~perceptrons.io.formats.DataFormatError`
(a ``ValueError``) whose message is one line, ``PATH:LINE: what is wrong``, for a
malformed line, undecodable UTF-8 or a file without sentences.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from perceptrons.io.formats import DataFormatError
from perceptrons.io.formats._common import read_input
from perceptrons.io.formats._names import SEQUENCE_FORMATS

# What lowers the memory a sequence file read whole takes.
_READ_WHOLE_REMEDY = "split the file into smaller ones or set a higher limit"

__all__ = [
    "SEQUENCE_FORMATS",
    "TaggedCorpus",
    "read_conll",
    "read_conllu",
    "read_sentences",
    "read_tagged",
    "sequence_format",
    "write_conll",
]

#: The formats :func:`read_sentences` understands (besides ``"auto"``).
SEQUENCE_FORMATS = SEQUENCE_FORMATS

_STDIN = "<stdin>"
_CONLLU_COLUMNS = 10
_CONLLU_TAGS = {"upos": 3, "xpos": 4}
_TOKEN_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[1-9][0-9]*")


@dataclass
class TaggedCorpus:
    """Sentences read from a file, with their tags and where they come from.

    Attributes
    ----------
    sentences : list of list of tuple of str
        Each sentence's tokens; a token is the tuple of its input columns (the tag
        column left out): ``(word,)`` or ``(word, POS, ...)``.
    tags : list of list of str or None
        Each token's tag, ``None`` when the file was read without a tag column.
    lines : list of int
        The 1-based line number where each sentence starts.
    path : str
        The path as given, or ``"<stdin>"``.
    format : str
        The format read, one of :data:`SEQUENCE_FORMATS`.
    columns : list of list of tuple of str
        Every column of each token as written, the tag column included: what
        :func:`write_conll` echoes before the predicted tag.
    """

    sentences: list[list[tuple[str, ...]]]
    tags: list[list[str]] | None
    lines: list[int]
    path: str
    format: str = "conll"
    columns: list[list[tuple[str, ...]]] = field(default_factory=list)

    @property
    def n_tokens(self) -> int:
        """The number of tokens of all the sentences."""
        return sum(len(sentence) for sentence in self.sentences)

    def __len__(self) -> int:
        return len(self.sentences)


def _read_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The whole file as text (gunzipped, UTF-8, a leading BOM dropped) and its name.

    Read a block at a time, the memory it will take checked as it grows
    (:func:`~perceptrons.io.formats._common.read_input`): a small gzip file that
    inflates past the memory limit is refused in one line.
    """
    name = "-" if str(path) == "-" else os.fspath(path)
    source = _STDIN if name == "-" else name
    raw = read_input(name, sys.stdin.buffer if name == "-" else None, _READ_WHOLE_REMEDY)
    if isinstance(raw, str):  # only a text-mode stream gives str; stdin's buffer is binary
        return raw.removeprefix("\ufeff"), source
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(
            source,
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start - start + 1}); "
            "convert the file to UTF-8",
            line,
        ) from None
    return text.removeprefix("\ufeff"), source


def _lines(text: str) -> list[str]:
    # Only "\n" ends a line: str.splitlines would also split on form feeds and the
    # like, which a word column may hold, and the line numbers would drift.
    return [line.removesuffix("\r") for line in text.split("\n")]


def _no_sentences(source: str) -> DataFormatError:
    return DataFormatError(source, "no sentences (the file is empty or holds only blank lines)")


def _check_tag_column(tag_column: int | None) -> None:
    if tag_column is not None and (isinstance(tag_column, bool) or not isinstance(tag_column, int)):
        raise ValueError(f"tag_column must be an int or None, got {tag_column!r}")


def read_conll(path: str | os.PathLike[str], tag_column: int | None = -1) -> TaggedCorpus:
    """Read a CoNLL-2000 style file: a token per line, a blank line between sentences.

    Parameters
    ----------
    path : str or path-like
        The file (plain or gzip-compressed), or ``"-"`` for standard input.
    tag_column : int or None, default=-1
        The tag column, counted from 0 (negative: from the end, -1 the last); the other
        columns, in order, are the token's input. ``None``: the file has no tags and
        every column is input.

    Returns
    -------
    TaggedCorpus

    Raises
    ------
    ValueError
        A :class:`~perceptrons.io.formats.DataFormatError` naming the path and line: a
        token with another number of columns than the file's first token, a tag column
        that does not exist, no input column left besides the tag, or no sentences.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.txt"
    >>> _ = path.write_text("He PRP B-NP\\nreckons VBZ B-VP\\n\\nIt PRP B-NP\\n")
    >>> corpus = read_conll(path)
    >>> corpus.sentences
    [[('He', 'PRP'), ('reckons', 'VBZ')], [('It', 'PRP')]]
    >>> corpus.tags, corpus.lines
    ([['B-NP', 'B-VP'], ['B-NP']], [1, 4])
    """
    _check_tag_column(tag_column)
    text, source = _read_text(path)
    sentences: list[list[tuple[str, ...]]] = []
    tags: list[list[str]] | None = None if tag_column is None else []
    lines: list[int] = []
    columns: list[list[tuple[str, ...]]] = []
    width = 0  # the number of columns of the file's first token
    width_line = 0
    tag_at = 0
    current: list[tuple[str, ...]] = []
    for number, line in enumerate(_lines(text), start=1):
        fields = tuple(line.split())
        if fields and fields[0] == "-DOCSTART-":
            fields = ()  # a document marker also ends the sentence before it
        if not fields:
            if current:
                columns.append(current)
                current = []
            continue
        if not width:
            width, width_line = len(fields), number
            if tag_column is not None:
                if not -width <= tag_column < width:
                    raise DataFormatError(
                        source,
                        f"no tag column {tag_column}: the line has {width} column(s)",
                        number,
                    )
                if width < 2:
                    raise DataFormatError(
                        source,
                        "one column: a tagged file needs the word and the tag "
                        "(read it without a tag column to tag it)",
                        number,
                    )
                tag_at = tag_column % width
        elif len(fields) != width:
            raise DataFormatError(
                source,
                f"{len(fields)} column(s), but the first token (line {width_line}) has "
                f"{width}: every token needs the same columns"
                + (" (a missing tag?)" if len(fields) < width and tag_column is not None else ""),
                number,
            )
        if not current:
            lines.append(number)
        current.append(fields)
    if current:
        columns.append(current)
    if not columns:
        raise _no_sentences(source)
    for rows in columns:
        if tags is None:
            sentences.append(list(rows))
        else:
            sentences.append([row[:tag_at] + row[tag_at + 1 :] for row in rows])
            tags.append([row[tag_at] for row in rows])
    return TaggedCorpus(sentences, tags, lines, source, "conll", columns)


def read_conllu(path: str | os.PathLike[str], tag: str = "upos") -> TaggedCorpus:
    """Read a CoNLL-U file (Universal Dependencies): the FORM of each word and its tag.

    Parameters
    ----------
    path : str or path-like
        The file (plain or gzip-compressed), or ``"-"`` for standard input.
    tag : {"upos", "xpos"}, default="upos"
        The tag column: the universal part of speech, or the language-specific one.

    Returns
    -------
    TaggedCorpus
        Tokens are ``(FORM,)``; comment lines, multi-word token ranges (``1-2``) and
        empty nodes (``1.1``) are left out.

    Raises
    ------
    ValueError
        A :class:`~perceptrons.io.formats.DataFormatError` naming the path and line: a
        line without ten tab-separated columns, an ID that is not a word's, a range's or
        an empty node's, a word ID out of sequence, or no sentences.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ud.conllu"
    >>> rows = ["# text = Don't go", "1-2\\tDon't\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_",
    ...         "1\\tDo\\tdo\\tAUX\\tVBP\\t_\\t3\\taux\\t_\\t_",
    ...         "2\\tn't\\tnot\\tPART\\tRB\\t_\\t3\\tadvmod\\t_\\t_",
    ...         "3\\tgo\\tgo\\tVERB\\tVB\\t_\\t0\\troot\\t_\\t_", ""]
    >>> _ = path.write_text("\\n".join(rows))
    >>> corpus = read_conllu(path)
    >>> corpus.sentences, corpus.tags
    ([[('Do',), ("n't",), ('go',)]], [['AUX', 'PART', 'VERB']])
    >>> read_conllu(path, tag="xpos").tags
    [['VBP', 'RB', 'VB']]
    """
    if tag not in _CONLLU_TAGS:
        raise ValueError(f"tag must be 'upos' or 'xpos', got {tag!r}")
    tag_at = _CONLLU_TAGS[tag]
    text, source = _read_text(path)
    sentences: list[list[tuple[str, ...]]] = []
    tags: list[list[str]] = []
    lines: list[int] = []
    columns: list[list[tuple[str, ...]]] = []
    current: list[tuple[str, ...]] = []
    start = 0
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            if current:
                columns.append(current)
                lines.append(start)
                current = []
            continue
        if line.startswith("#"):
            continue
        fields = tuple(line.split("\t"))
        if len(fields) != _CONLLU_COLUMNS:
            raise DataFormatError(
                source,
                f"{len(fields)} tab-separated column(s), a CoNLL-U line has {_CONLLU_COLUMNS}",
                number,
            )
        word_id = fields[0]
        if _RANGE_ID.fullmatch(word_id) or _EMPTY_NODE_ID.fullmatch(word_id):
            continue
        if not _TOKEN_ID.fullmatch(word_id):
            raise DataFormatError(
                source,
                f"bad ID {word_id!r}: a word's ID is 1, 2, ..., a multi-word token's a "
                "range like 1-2, an empty node's a decimal like 1.1",
                number,
            )
        if int(word_id) != len(current) + 1:
            raise DataFormatError(
                source, f"word ID {word_id} where {len(current) + 1} was expected", number
            )
        if not current:
            start = number
        current.append(fields)
    if current:
        columns.append(current)
        lines.append(start)
    if not columns:
        raise _no_sentences(source)
    for rows in columns:
        sentences.append([(row[1],) for row in rows])
        tags.append([row[tag_at] for row in rows])
    return TaggedCorpus(sentences, tags, lines, source, "conllu", columns)


def read_tagged(path: str | os.PathLike[str], separator: str = "/") -> TaggedCorpus:
    """Read ``word/TAG`` sentences, one sentence per line.

    Parameters
    ----------
    path : str or path-like
        The file (plain or gzip-compressed), or ``"-"`` for standard input.
    separator : str, default="/"
        What separates a word from its tag: the tag follows its *last* occurrence.

    Returns
    -------
    TaggedCorpus
        Tokens are ``(word,)``; blank lines are skipped.

    Raises
    ------
    ValueError
        A :class:`~perceptrons.io.formats.DataFormatError` naming the path and line: an
        item without the separator, or with an empty word or tag; no sentences.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tagged.txt"
    >>> _ = path.write_text("The/DT 1/2/CD cup/NN\\n\\nIt/PRP\\n")
    >>> corpus = read_tagged(path)
    >>> corpus.sentences, corpus.tags, corpus.lines
    ([[('The',), ('1/2',), ('cup',)], [('It',)]], [['DT', 'CD', 'NN'], ['PRP']], [1, 3])
    """
    if not isinstance(separator, str) or not separator or separator.isspace():
        raise ValueError(f"separator must be a non-blank string, got {separator!r}")
    text, source = _read_text(path)
    sentences: list[list[tuple[str, ...]]] = []
    tags: list[list[str]] = []
    lines: list[int] = []
    columns: list[list[tuple[str, ...]]] = []
    for number, line in enumerate(_lines(text), start=1):
        items = line.split()
        if not items:
            continue
        rows: list[tuple[str, ...]] = []
        for item in items:
            word, sep, tag = item.rpartition(separator)
            if not sep or not word or not tag:
                what = (
                    "no"
                    if not sep
                    else "an empty word before the"
                    if not word
                    else "no tag after the"
                )
                raise DataFormatError(
                    source, f"{item!r}: {what} {separator!r} separator (word{separator}TAG)", number
                )
            rows.append((word, tag))
        columns.append(rows)
        sentences.append([(word,) for word, _ in rows])
        tags.append([tag for _, tag in rows])
        lines.append(number)
    if not columns:
        raise _no_sentences(source)
    return TaggedCorpus(sentences, tags, lines, source, "tagged", columns)


def sequence_format(path: str | os.PathLike[str]) -> str:
    """The format a file's name implies: ``conllu`` for ``.conllu`` (also gzipped),
    else ``conll``.

    Examples
    --------
    >>> sequence_format("en_ewt-ud-train.conllu.gz"), sequence_format("train.txt")
    ('conllu', 'conll')
    """
    name = os.fspath(path).lower().removesuffix(".gz")
    return "conllu" if name.endswith(".conllu") else "conll"


def read_sentences(
    path: str | os.PathLike[str],
    format: str = "auto",
    *,
    tag_column: int | None = -1,
    tag: str = "upos",
    separator: str = "/",
) -> TaggedCorpus:
    """Read tagged sentences in any of :data:`SEQUENCE_FORMATS`.

    Parameters
    ----------
    path : str or path-like
        The file (plain or gzip-compressed), or ``"-"`` for standard input.
    format : {"auto", "conll", "conllu", "tagged"}, default="auto"
        ``auto``: :func:`sequence_format` (``.conllu`` files are CoNLL-U, the others
        CoNLL columns).
    tag_column : int or None, default=-1
        ``conll``: see :func:`read_conll`.
    tag : {"upos", "xpos"}, default="upos"
        ``conllu``: see :func:`read_conllu`.
    separator : str, default="/"
        ``tagged``: see :func:`read_tagged`.

    Returns
    -------
    TaggedCorpus

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tagged.txt"
    >>> _ = path.write_text("Hello/UH world/NN\\n")
    >>> read_sentences(path, "tagged").tags
    [['UH', 'NN']]
    """
    if format == "auto":
        format = sequence_format(path)
    if format == "conll":
        return read_conll(path, tag_column=tag_column)
    if format == "conllu":
        return read_conllu(path, tag=tag)
    if format == "tagged":
        return read_tagged(path, separator=separator)
    raise ValueError(
        f"format must be 'auto' or one of {', '.join(SEQUENCE_FORMATS)}, got {format!r}"
    )


def write_conll(
    out: IO[str], corpus: TaggedCorpus, predicted_tags: Sequence[Sequence[str]]
) -> None:
    """Write each token's columns as read, plus its predicted tag as a last column.

    The CoNLL layout (a token per line, a blank line after each sentence), which
    conlleval-style tools read: with a gold tag column, the last two columns are the
    gold and the predicted tag. Columns are separated by a space, by a tab for CoNLL-U
    (whose columns may hold spaces).

    Parameters
    ----------
    out : text stream
        Where to write.
    corpus : TaggedCorpus
        What was read (its ``columns`` are echoed).
    predicted_tags : sequence of sequence of str
        One tag per token of each sentence.

    Raises
    ------
    ValueError
        When ``predicted_tags`` does not have one tag per token.

    Examples
    --------
    >>> import io, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "test.txt"
    >>> _ = path.write_text("He PRP B-NP\\nreckons VBZ B-VP\\n")
    >>> out = io.StringIO()
    >>> write_conll(out, read_conll(path), [["B-NP", "I-NP"]])
    >>> print(out.getvalue(), end="")
    He PRP B-NP B-NP
    reckons VBZ B-VP I-NP
    <BLANKLINE>
    """
    rows = corpus.columns or [list(sentence) for sentence in corpus.sentences]
    if len(predicted_tags) != len(rows):
        raise ValueError(
            f"{len(predicted_tags)} predicted sentences for the {len(rows)} of {corpus.path}"
        )
    glue = "\t" if corpus.format == "conllu" else " "
    for number, (sentence, predicted) in enumerate(zip(rows, predicted_tags, strict=True)):
        if len(predicted) != len(sentence):
            raise ValueError(
                f"{corpus.path}:{corpus.lines[number]}: {len(predicted)} predicted tags for "
                f"a sentence of {len(sentence)} tokens"
            )
        out.write(
            "".join(
                glue.join((*token, str(tag))) + "\n"
                for token, tag in zip(sentence, predicted, strict=True)
            )
        )
        out.write("\n")
