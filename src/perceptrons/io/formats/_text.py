"""The text formats of one document per line: ``fasttext``, ``tsv``, ``sentiment`` and
``lines``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from perceptrons.io.formats._common import DataFormatError, _BadLine, _check_rows, _show

_LABEL_PREFIX = "__label__"
_FASTTEXT_LABELED = re.compile(r"^[ \t]*__label__", re.MULTILINE)


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


_PIECE = 1 << 20  # characters split into lines at a time


def _lines(text: str) -> Iterator[str]:
    """``text.split("\\n")``, a piece of about :data:`_PIECE` characters at a time: the
    lines of a large file are not all held at once beside its documents."""
    start = 0
    while True:
        end = text.find("\n", min(start + _PIECE, len(text)))
        if end < 0:
            yield from text[start:].split("\n")
            return
        yield from text[start:end].split("\n")
        start = end + 1


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
    for lineno, line in enumerate(_lines(text), start=1):
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
