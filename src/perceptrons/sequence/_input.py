"""Sentences of tokens (words, or tuples of the word and extra columns) read into the
flat columns :class:`~perceptrons.sequence_features.SequenceFeaturizer` works on, their
shape and types checked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np


def _where(X: Sequence[Any], flat: int) -> str:
    """``"sentence s, token i"`` of the ``flat``-th token of ``X``."""
    for s, sentence in enumerate(X):
        if flat < len(sentence):
            return f"sentence {s}, token {flat}"
        flat -= len(sentence)
    raise AssertionError("token number beyond the batch")


def _first(values: Sequence[Any], bad) -> int:
    return next(i for i, value in enumerate(values) if bad(value))


def _sentences(X: Any) -> Sequence[Any]:
    """``X`` as a list or tuple of sentences (an iterable read once)."""
    if isinstance(X, str | bytes) or not isinstance(X, Iterable):
        raise ValueError(
            "SequenceFeaturizer expects a list of sentences (each a list of tokens), got "
            f"{type(X).__name__}"
        )
    return X if isinstance(X, list | tuple) else list(X)


def _read(X: Any, needed: int | None) -> tuple[np.ndarray, list[Sequence[str]], int]:
    """The sentence offsets of ``X``, its first ``needed`` columns (all of them when
    None: as many as its narrowest token has), and the number of columns of its
    narrowest token. Checks the input's shape and types, with C-level passes only
    when it is well formed."""
    X = _sentences(X)
    if len(X) == 0:
        raise ValueError("SequenceFeaturizer: no sentences (X is empty)")
    if not all(issubclass(t, list | tuple) for t in set(map(type, X))):
        s = _first(X, lambda sentence: not isinstance(sentence, list | tuple))
        raise ValueError(f"sentence {s} is a {type(X[s]).__name__}, not a list of tokens")
    lengths = np.fromiter(map(len, X), dtype=np.int64, count=len(X))
    if not lengths.all():
        raise ValueError(f"sentence {int(np.argmin(lengths))} is empty")
    offsets = np.zeros(len(X) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = list(chain.from_iterable(X))
    token_types = set(map(type, tokens))
    if all(issubclass(t, str) for t in token_types):
        width = 1
        columns: list[Sequence[Any]] = [tokens]
    else:
        if not all(issubclass(t, str | tuple | list) for t in token_types):
            i = _first(tokens, lambda tok: not isinstance(tok, str | tuple | list))
            raise ValueError(
                f"{_where(X, i)}: a token must be a str or a tuple of str, got "
                f"{type(tokens[i]).__name__}"
            )
        mixed = any(issubclass(t, str) for t in token_types)  # words among tuples
        if mixed:
            per_token = [1 if isinstance(tok, str) else len(tok) for tok in tokens]
            widths = np.array(per_token, dtype=np.int64)
        else:
            widths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        width = int(widths.min())
        if width == 0:
            raise ValueError(f"{_where(X, int(np.argmin(widths)))}: an empty tuple is not a token")
        if needed is not None and width < needed:
            i = int(np.argmax(widths < needed))
            raise ValueError(
                f"{_where(X, i)}: {tokens[i]!r} has {widths[i]} column(s), the templates "
                f"need {needed} (the word and c1..c{needed - 1})"
            )
        take = width if needed is None else needed
        if mixed:  # then width, and take, are 1
            columns = [[tok if isinstance(tok, str) else tok[0] for tok in tokens]]
        else:
            columns = [list(map(itemgetter(k), tokens)) for k in range(take)]
        for k, column in enumerate(columns):
            if not all(issubclass(t, str) for t in set(map(type, column))):
                i = _first(column, lambda value: not isinstance(value, str))
                raise ValueError(
                    f"{_where(X, i)}: column {k} of {tokens[i]!r} is a "
                    f"{type(column[i]).__name__}, not a str"
                )
    if needed is not None and width < needed:
        raise ValueError(
            f"{_where(X, 0)}: {tokens[0]!r} is a word alone, the templates need {needed} "
            f"columns (the word and c1..c{needed - 1})"
        )
    return offsets, columns[: len(columns) if needed is None else needed], width
