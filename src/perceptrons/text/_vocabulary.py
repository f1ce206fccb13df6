"""A learned vocabulary without scikit-learn: ``TextFeaturizer(vocabulary="fit")`` with
the ``"regex"`` and ``"whitespace"`` tokenizers, and scikit-learn's word analyzer.

:class:`_VocabularyVectorizer` does for ``str`` documents what scikit-learn's
``CountVectorizer(min_df=..., dtype=np.float64)`` does, bit for bit: the terms of
scikit-learn's analyzer (:func:`analyzer`: ``str.lower()``, the token pattern
``(?u)\\b\\w\\w+\\b`` or ``str.split()``, the word n-grams of every length joined by
one space; Python's own rules for any Unicode, as scikit-learn's are Python's; on ASCII
the compiled tokenizer's, :mod:`perceptrons._kernels.tokens`), counted per document;
the vocabulary the terms in ``min_df`` documents or more (an int: documents; a float:
that share of the training documents; ``max_df`` stays 1.0, CountVectorizer's default,
as ``_limit_features`` applies it), numbered in sorted term order; the counts as CSR
with each row's columns sorted, terms outside the vocabulary dropped; CountVectorizer's
errors, in its words and order. The terms are Python strings either way (a vocabulary
is a dictionary of them), so the tokens come from :mod:`re` and :meth:`str.split` and
the counts from dictionaries.

A document that is not a plain ``str`` (bytes, which scikit-learn decodes; a ``str``
subclass, whose methods may differ) is analyzed by scikit-learn, imported when the first
such document comes (:func:`mixed_analyzer`): its terms are those of scikit-learn's own
analyzer for these parameters, counted with the others, so a fit or transform with such
documents gives what CountVectorizer gives, as one with none does.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from itertools import repeat
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp

# What the compiled tokenizer's "regex" tokenizer is on ASCII (scikit-learn's default).
_TOKEN = re.compile(r"(?u)\b\w\w+\b")

_PLAIN_STR = (str, np.str_)


def is_plain_str(text: Any) -> bool:
    """Whether ``text`` is analyzed here: a ``str`` (or NumPy's, whose ``lower`` and
    ``split`` are ``str``'s; a subclass may change what scikit-learn calls)."""
    return type(text) in _PLAIN_STR


def is_plain_ascii(text: Any) -> bool:
    """Whether ``text`` is a plain ``str`` (:func:`is_plain_str`) of ASCII: what the
    compiled tokenizer counts."""
    return type(text) in _PLAIN_STR and text.isascii()


def analyzer(
    regex: bool, lowercase: bool, ngram_range: tuple[int, int]
) -> Callable[[str], list[str]]:
    """scikit-learn's word analyzer for a plain ``str`` (:func:`is_plain_str`), any
    Unicode: ``str.lower()``, the token pattern ``(?u)\\b\\w\\w+\\b`` (``regex``) or
    ``str.split()``, then ``_word_ngrams``; the same terms in the same order."""
    tokenize = _TOKEN.findall if regex else str.split
    min_n, max_n = int(ngram_range[0]), int(ngram_range[1])

    def analyze(text: str) -> list[str]:
        tokens = tokenize(text.lower() if lowercase else text)
        return tokens if max_n == 1 else _word_ngrams(tokens, min_n, max_n)

    return analyze


def mixed_analyzer(
    ours: Callable[[str], list[str]], theirs: Callable[[], Callable[[Any], list[str]]]
) -> Callable[[Any], list[str]]:
    """A document's terms: ``ours`` for a plain ``str``, else scikit-learn's analyzer,
    ``theirs()`` called (and scikit-learn imported) when the first such document comes
    (bytes, which scikit-learn decodes; a ``str`` subclass)."""
    made: list[Callable[[Any], list[str]]] = []

    def analyze(text: Any) -> list[str]:
        if is_plain_str(text):
            return ours(text)
        if not made:
            made.append(theirs())
        return made[0](text)

    return analyze


class _VocabularyVectorizer:
    """CountVectorizer's fit and transform (see the module).

    ``terms``: a fixed vocabulary (a model file's), else learned by
    :meth:`fit_transform`. ``sklearn_vectorizer(terms)`` makes scikit-learn's
    ``CountVectorizer`` for these parameters, whose analyzer takes the other documents.
    """

    def __init__(
        self,
        *,
        regex: bool,
        lowercase: bool,
        ngram_range: tuple[int, int],
        binary: bool,
        min_df: int | float,
        sklearn_vectorizer: Callable[[list[str] | None], Any],
        terms: list[str] | None = None,
    ) -> None:
        self.regex, self.lowercase, self.binary, self.min_df = regex, lowercase, binary, min_df
        self.ngram_range = (int(ngram_range[0]), int(ngram_range[1]))
        self._sklearn_vectorizer = sklearn_vectorizer
        self._analyze: Callable[[Any], list[str]] | None = None
        self._terms: list[str] | None = None
        self._columns: dict[str, int] = {}
        if terms is not None:
            self._set_terms(list(terms))

    def _set_terms(self, terms: list[str]) -> None:
        self._terms = terms
        self._columns = {term: column for column, term in enumerate(terms)}

    # ----------------------------------------------------------------- terms
    def build_analyzer(self) -> Callable[[Any], list[str]]:
        """A document's terms, in CountVectorizer's order (see :func:`mixed_analyzer`)."""
        if self._analyze is None:
            self._analyze = mixed_analyzer(
                analyzer(self.regex, self.lowercase, self.ngram_range),
                lambda: self._sklearn_vectorizer(self._terms).build_analyzer(),
            )
        return self._analyze

    def _count(
        self, texts: list[Any], column_of: Callable[..., int], fixed: bool
    ) -> tuple[np.ndarray, list[int], list[int]]:
        """CountVectorizer's ``_count_vocab``: each document's distinct terms by their
        column (``column_of``; -1 for a term outside a fixed vocabulary), their counts,
        the row offsets."""
        indices: list[int] = []
        values: list[int] = []
        indptr = [0]
        analyze = self.build_analyzer()
        for text in texts:
            counts = Counter(analyze(text))
            if fixed:
                indices.extend(map(column_of, counts, repeat(-1)))
            else:
                indices.extend(map(column_of, counts))
            values.extend(counts.values())
            indptr.append(len(indices))
        return np.asarray(indices, dtype=np.int64), values, indptr

    def fit_transform(self, texts: Iterable[Any]) -> sp.csr_matrix:
        """Learn the vocabulary of ``texts`` and return their counts (sorted columns)."""
        texts = list(texts)
        # Each new term numbered as first met, as CountVectorizer's _count_vocab does.
        vocabulary: defaultdict[str, int] = defaultdict()
        vocabulary.default_factory = vocabulary.__len__
        columns, values, indptr = self._count(texts, vocabulary.__getitem__, fixed=False)
        if not vocabulary:
            raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
        n_docs = len(texts)
        # CountVectorizer's document-count bounds: max_df=1.0 (a float: a share of the
        # documents), min_df an int (documents) or a float (a share).
        max_doc_count = 1.0 * n_docs
        min_df = self.min_df
        min_doc_count = min_df if isinstance(min_df, Integral) else min_df * n_docs
        if max_doc_count < min_doc_count:
            raise ValueError("max_df corresponds to < documents than min_df")
        first_met = list(vocabulary)
        # A row holds each term once: the bincount of the columns is the document count.
        dfs = np.bincount(columns, minlength=len(first_met))
        kept = (dfs <= max_doc_count) & (dfs >= min_doc_count)
        if not kept.any():
            raise ValueError(
                "After pruning, no terms remain. Try a lower min_df or a higher max_df."
            )
        order = sorted(np.flatnonzero(kept).tolist(), key=first_met.__getitem__)
        renumber = np.full(len(first_met), -1, dtype=np.int64)
        renumber[order] = np.arange(len(order), dtype=np.int64)
        self._set_terms([first_met[i] for i in order])
        return self._csr(renumber[columns], values, indptr)

    def transform(self, texts: Iterable[Any]) -> sp.csr_matrix:
        """The counts of ``texts`` over the vocabulary (sorted columns; other terms
        dropped)."""
        if self._terms is None:
            raise ValueError("the vocabulary is not fitted")
        return self._csr(*self._count(list(texts), self._columns.get, fixed=True))

    def get_feature_names_out(self) -> np.ndarray:
        """The terms in column order (an object array of ``str``, as scikit-learn's)."""
        if self._terms is None:
            raise ValueError("the vocabulary is not fitted")
        return np.asarray(self._terms, dtype=object)

    def _csr(self, columns: np.ndarray, values: list[int], indptr: list[int]) -> sp.csr_matrix:
        """The counts of ``columns`` (-1: a term outside the vocabulary, dropped), each
        row's columns sorted, float64 (1.0 for every term with ``binary``)."""
        n_rows = len(indptr) - 1
        offsets = np.asarray(indptr, dtype=np.int64)
        data = np.asarray(values, dtype=np.float64)
        known = columns >= 0
        if not known.all():
            rows = np.repeat(np.arange(n_rows), np.diff(offsets))
            columns, data = columns[known], data[known]
            offsets = np.zeros(n_rows + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows[known], minlength=n_rows), out=offsets[1:])
        if self.binary:
            data.fill(1.0)
        assert self._terms is not None  # the vocabulary is known before the counts
        # int32 indices as CountVectorizer's (a vocabulary is far below 2**31 terms).
        X = sp.csr_matrix(
            (data, columns.astype(np.int32), offsets), shape=(n_rows, len(self._terms))
        )
        X.sort_indices()
        return X


def _word_ngrams(tokens: list[str], min_n: int, max_n: int) -> list[str]:
    """The word n-grams of every length from ``min_n`` to ``max_n`` (``max_n > 1``),
    joined by one space: CountVectorizer's order, as the compiled tokenizer forms them
    (none of a length beyond the document's tokens)."""
    terms = list(tokens) if min_n == 1 else []
    n_tokens = len(tokens)
    join = " ".join
    for n in range(max(min_n, 2), min(max_n, n_tokens) + 1):
        terms.extend(join(tokens[i : i + n]) for i in range(n_tokens - n + 1))
    return terms
