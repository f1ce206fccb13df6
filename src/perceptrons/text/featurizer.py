"""Raw texts to sparse term features: the learner core's featurizer, without scikit-learn.

:class:`TextFeaturizer` here is :class:`perceptrons.TextFeaturizer` without
scikit-learn's face (:mod:`perceptrons._estimator`): the same parameters, output and
files. ``str`` documents need no scikit-learn: hashing (the compiled tokenizer,
:mod:`perceptrons._kernels.tokens`, for ASCII documents, :class:`_HashingVectorizer`
for the others; bit for bit scikit-learn's ``HashingVectorizer``) and the names of
hashed columns, ``name:value`` documents (``tokenizer="pairs"``), a learned vocabulary
(``vocabulary="fit"``: :mod:`perceptrons.text._vocabulary`, bit for bit scikit-learn's
``CountVectorizer``) and the weighting (:class:`perceptrons.text.weighting.TfidfWeighting`,
bit for bit scikit-learn's ``TfidfTransformer``). scikit-learn's analyzer is imported
for a document that is not a plain ``str`` (bytes, a ``str`` subclass), and only then.

Over 600 lines: one class, :class:`TextFeaturizer`, whose parameters, checks and three
paths (a vocabulary, hashing, ``name:value`` pairs) read one another; its parameter
documentation is a third of the lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _input, _limits
from perceptrons import _params as rules
from perceptrons._base import Trainable
from perceptrons._memory import array_bytes, check_allocation
from perceptrons._validation import canonical_csr
from perceptrons.text._codec import _TextCodec
from perceptrons.text._pairs import _PairsVectorizer, hashed_columns
from perceptrons.text._vocabulary import (
    _VocabularyVectorizer,
    analyzer,
    is_plain_ascii,
    mixed_analyzer,
)
from perceptrons.text.weighting import TfidfWeighting

# MAX_NGRAM and MAX_N_FEATURES are documented where perceptrons.features exports them.
__all__ = ["TextFeaturizer"]

#: The most columns ``TextFeaturizer(vocabulary="hashing")`` takes (``n_features``): what
#: scikit-learn's :class:`~sklearn.feature_extraction.text.HashingVectorizer` accepts,
#: ``2**31 - 2`` (its column indices are 32-bit).
MAX_N_FEATURES = _limits.MAX_N_FEATURES

#: The longest n-grams ``TextFeaturizer`` makes (``ngram_range[1]``): every n-gram length
#: multiplies the terms of each document, and longer word sequences are hardly ever
#: useful features.
MAX_NGRAM = 10


def _whitespace_tokens(text: str) -> list[str]:
    """The tokens of pre-tokenized text: whatever whitespace separates."""
    return text.split()


def _ngram_range(value: Any) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) == 2
        and all(isinstance(n, Integral) and not isinstance(n, bool) for n in value)
        and 1 <= value[0] <= value[1] <= MAX_NGRAM
    )


def _min_df(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, Integral):
        return int(value) >= 1
    return isinstance(value, Real) and 0.0 < float(value) <= 1.0


class TextFeaturizer(Trainable):
    """The text featurizer's learner core: :class:`perceptrons.TextFeaturizer` without
    scikit-learn (the same parameters, output and files)."""

    _rules: ClassVar[dict[str, rules.Rule]] = {
        "vocabulary": rules.one_of("hashing", "fit"),
        "n_features": rules.Rule(
            f"an int in [1, {MAX_N_FEATURES}] (2**31 - 2)",
            lambda v: (
                isinstance(v, Integral)
                and not isinstance(v, bool)
                and 1 <= int(v) <= MAX_N_FEATURES
            ),
        ),
        "ngram_range": rules.Rule(
            f"a pair of ints (min_n, max_n) with 1 <= min_n <= max_n <= {MAX_NGRAM}", _ngram_range
        ),
        "weighting": rules.one_of("tf", "binary", "tfidf"),
        "sublinear_tf": rules.boolean(allow_none=True),
        "lowercase": rules.boolean(),
        "tokenizer": rules.one_of("regex", "whitespace", "pairs"),
        "min_df": rules.Rule("an int >= 1 or a float in (0, 1]", _min_df),
        "hashed_names": rules.boolean(),
    }

    def __init__(
        self,
        vocabulary: str = "hashing",
        n_features: int = 2**20,
        ngram_range: tuple[int, int] = (1, 1),
        weighting: str = "tfidf",
        sublinear_tf: bool | None = None,
        lowercase: bool = True,
        tokenizer: str = "regex",
        min_df: int | float = 1,
        hashed_names: bool = False,
    ) -> None:
        self.vocabulary = vocabulary
        self.n_features = n_features
        self.ngram_range = ngram_range
        self.weighting = weighting
        self.sublinear_tf = sublinear_tf
        self.lowercase = lowercase
        self.tokenizer = tokenizer
        self.min_df = min_df
        self.hashed_names = hashed_names

    # ------------------------------------------------------------ construction
    def _validate_params(self) -> None:
        rules.validate(self, self._rules)
        if self.tokenizer == "pairs" and tuple(self.ngram_range) != (1, 1):
            raise ValueError(
                f"TextFeaturizer: parameter 'ngram_range' must be (1, 1) with "
                f"tokenizer='pairs' (name:value tokens make no n-grams), got "
                f"{self.ngram_range!r}."
            )
        if self.vocabulary == "hashing" and self.min_df != 1:
            raise ValueError(
                f"TextFeaturizer: parameter 'min_df' must be 1 with vocabulary='hashing' "
                f"(hashed features have no document frequencies to prune by), got "
                f"{self.min_df!r}; use vocabulary='fit'."
            )

    def _make_vectorizer(self, terms: list[str] | None = None) -> Any:
        """The vectorizer for these parameters (``terms``: a fixed vocabulary), our own:
        for ``name:value`` documents, a vocabulary
        (:class:`~perceptrons.text._vocabulary._VocabularyVectorizer`) or hashing
        (:class:`_HashingVectorizer`). Each takes scikit-learn's analyzer (imported
        then) only for a document that is not a plain ``str``."""
        if self.tokenizer == "pairs":
            return _PairsVectorizer(
                lowercase=self.lowercase,
                binary=self.weighting == "binary",
                n_features=self.n_features if self.vocabulary == "hashing" else None,
                min_df=self.min_df,
                vocabulary=terms,
            )
        if self.vocabulary == "fit":
            min_n, max_n = self.ngram_range
            return _VocabularyVectorizer(
                regex=self.tokenizer == "regex",
                lowercase=bool(self.lowercase),
                ngram_range=(int(min_n), int(max_n)),
                binary=self.weighting == "binary",
                min_df=self.min_df,
                sklearn_vectorizer=self._sklearn_vectorizer,
                terms=terms,
            )
        return _HashingVectorizer(self)

    def _sklearn_vectorizer(self, terms: list[str] | None) -> Any:
        """scikit-learn's vectorizer for these parameters, whose analyzer takes the
        documents that are not a plain ``str`` (see :meth:`_make_vectorizer`)."""
        from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer

        common = {
            "lowercase": self.lowercase,
            "ngram_range": tuple(self.ngram_range),
            "binary": self.weighting == "binary",
            "dtype": np.float64,
        }
        if self.tokenizer == "whitespace":
            common.update(tokenizer=_whitespace_tokens, token_pattern=None)
        if self.vocabulary == "hashing":
            return HashingVectorizer(
                n_features=self.n_features, alternate_sign=False, norm=None, **common
            )
        if terms is not None:
            return CountVectorizer(vocabulary=terms, **common)
        return CountVectorizer(min_df=self.min_df, **common)

    @property
    def _sublinear(self) -> bool:
        """``sublinear_tf``, its default (None) resolved: with tf-idf only."""
        if self.sublinear_tf is None:
            return self.weighting == "tfidf"
        return bool(self.sublinear_tf)

    def _make_weighting(self) -> TfidfWeighting | None:
        """The step after counting: idf and row norms, or the sublinear tf, or none."""
        if self.weighting == "tfidf":
            return TfidfWeighting(use_idf=True, sublinear_tf=self._sublinear, normalize=True)
        if self.weighting == "tf" and self._sublinear:
            return TfidfWeighting(use_idf=False, sublinear_tf=True, normalize=False)
        return None

    # --------------------------------------------------------------- fitting
    def fit(self, texts: Iterable[str], y: ArrayLike | None = None) -> TextFeaturizer:
        """Learn the vocabulary (``vocabulary="fit"``) and the idf (``"tfidf"``).

        Parameters
        ----------
        texts : iterable of str
            Training documents, tokenized once.
        y : None
            Ignored (the vocabulary and idf do not depend on labels).

        Returns
        -------
        self : object
            The fitted transformer.
        """
        self.fit_transform(texts, y)
        return self

    def fit_transform(self, texts: Iterable[str], y: ArrayLike | None = None) -> sp.csr_matrix:
        """Fit on ``texts`` and return their features (one pass of tokenization).

        Parameters
        ----------
        texts : iterable of str
            Training documents.
        y : None
            Ignored.

        Returns
        -------
        X : sparse matrix of shape (n_texts, n_features)
            CSR, float64, int32 indices.
        """
        self._validate_params()
        documents = _checked_texts(texts)
        vectorizer = self._make_vectorizer()
        # Held when read twice (the names kept) or counted by the compiled tokenizer.
        held = list(documents) if self._compiled or self._keeps_names else None
        if held is not None and self._compiled:
            counts = _hashed_counts(self, vectorizer, held)
        else:
            counts = vectorizer.fit_transform(documents if held is None else held)
            # CountVectorizer renumbers a fitted vocabulary in sorted order, leaving each
            # row's columns unsorted, while its transform sorts them: sorted here too, a
            # row norm (tf-idf) sums in the same order and fit_transform equals
            # fit().transform() to the bit.
            counts.sort_indices()
        X = self._fit_weighting(counts, vectorizer)
        self._hashed_names = None
        if held is not None and self._keeps_names:
            self._hashed_names = self.name_columns(held)
        return X

    def _fit_weighting(self, counts: sp.csr_matrix, vectorizer: Any) -> sp.csr_matrix:
        """Fit the step after counting (the idf) on ``counts``, what ``vectorizer`` gave
        for the training texts (rows with sorted columns), and return the features: the
        rest of :meth:`fit_transform`, for callers that count the texts themselves
        (:func:`perceptrons.io.prepare.read_featurized`). Names are the caller's."""
        weighting = self._make_weighting()
        if weighting is not None and weighting.use_idf:
            _check_idf_room(counts.shape[1])
        X = counts if weighting is None else weighting.fit_transform(counts)
        self._vectorizer, self._weighting = vectorizer, weighting
        self.n_features_out_ = int(counts.shape[1])
        return canonical_csr(X)

    def _counting(self) -> TextFeaturizer:
        """A featurizer of this one's term counts (weighting ``"tf"``, no sublinear tf),
        the same terms, columns and names otherwise: what is counted before the idf of a
        tf-idf featurizer is known (:meth:`_fit_frequencies`)."""
        self._validate_params()
        counter = TextFeaturizer(**{**self.get_params(), "weighting": "tf"})
        counter.sublinear_tf = False
        return counter

    def _check_idf_memory(self) -> None:
        """Refuse, before any counting, the idf of a hashing tf-idf featurizer that memory
        cannot hold (a stream would otherwise learn it after a pass over the file)."""
        if self._hashing and self.weighting == "tfidf":
            _check_idf_room(self.n_features)

    def _fit_frequencies(
        self, counted: np.ndarray, n_documents: int, counter: TextFeaturizer
    ) -> None:
        """Fit from the document frequencies of the training texts, counted elsewhere
        (a file streamed a chunk at a time): ``counted[j]`` of the ``n_documents`` texts
        hold column ``j``, as :meth:`_counting`'s ``counter`` (fitted on the texts)
        counted them. Then this featurizer weighs ``counter``'s counts
        (:meth:`_weigh`) as its :meth:`fit_transform` weighs the texts, bit for bit,
        and keeps ``counter``'s names."""
        weighting = self._make_weighting()
        if weighting is not None and weighting.use_idf:
            weighting.fit_frequencies(counted, n_documents)
        self._vectorizer, self._weighting = self._make_vectorizer(), weighting
        self.n_features_out_ = int(counter.n_features_out_)
        self._hashed_names = counter._hashed_names

    def partial_fit(self, texts: Iterable[str], y: ArrayLike | None = None) -> TextFeaturizer:
        """Learn from more texts without a pass over all of them: hashing only.

        A hashing featurizer with ``"tf"`` or ``"binary"`` weighting has nothing to learn
        but the names of its hashed columns (for :meth:`feature_names`, with
        ``hashed_names=True``); this adds the terms of ``texts`` to them, for training
        on a stream of chunks.

        Parameters
        ----------
        texts : iterable of str
            More training documents.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The featurizer.
        """
        if not (self._hashing and self.weighting in ("tf", "binary")):
            raise ValueError(
                "partial_fit needs vocabulary='hashing' and weighting 'tf' or 'binary': a "
                "vocabulary or idf weights must be learned from all the texts at once"
            )
        texts = list(_checked_texts(texts))
        if not hasattr(self, "n_features_out_"):
            return self.fit(texts)
        if self._hashed_names is not None:
            self._merge_hashed_names(self.name_columns(texts))
        return self

    def _merge_hashed_names(self, by_column: dict[int, str]) -> None:
        """Add the names of one batch of texts (as :meth:`_names_of_hashed_columns`
        gives them) to those known."""
        hashed_names = self._hashed_names
        if hashed_names is None:  # the names are not kept
            return
        # Merged aside, then added at once: a call stopped half-way adds none.
        merged = {}
        for column, names in by_column.items():
            known = hashed_names.get(column)
            if known is None:
                merged[column] = names
            elif names != known:
                terms = set(known.split("|")) | set(names.split("|"))
                merged[column] = "|".join(sorted(terms))
        hashed_names.update(merged)

    def _hashed_names_normalized(self) -> bool:
        """Whether every column's names are the sorted set of their ``|`` pieces.

        Then adding a batch whose names hold no ``|`` (:meth:`_merge_hashed_names`)
        makes each column the sorted union of its pieces and the batch's names in it,
        a union that only the names not yet among the pieces change: what
        :meth:`_add_new_hashed_names` relies on.
        """
        if self._hashed_names is None:  # no names kept: none to merge
            return True
        return all(
            names == "|".join(sorted(set(names.split("|"))))
            for names in self._hashed_names.values()
        )

    def _add_new_hashed_names(self, columns: np.ndarray, names: list[str]) -> None:
        """:meth:`_merge_hashed_names` of a batch given only its names not yet known.

        Exact when the known names are normalized (see :meth:`_hashed_names_normalized`;
        the union keeps them so) and no name holds ``|``: the caller
        (:mod:`perceptrons.io._chunks`) checks both; ``names[k]`` hashes to
        ``columns[k]``.
        """
        hashed_names = self._hashed_names
        if hashed_names is None:  # the names are not kept
            return
        several: dict[int, set[str]] = {}  # columns given more than one name
        for column, name in zip(columns.tolist(), names, strict=True):
            known = hashed_names.get(column)
            if column in several:
                several[column].add(name)
            elif known is None:
                hashed_names[column] = name
                several[column] = {name}
            else:
                several[column] = {name, *known.split("|")}
        for column, terms in several.items():
            if len(terms) > 1:
                hashed_names[column] = "|".join(sorted(terms))

    @property
    def _hashing(self) -> bool:
        return self.vocabulary == "hashing"

    @property
    def _keeps_names(self) -> bool:
        """Whether fitting records the names of the hashed columns."""
        return self._hashing and bool(self.hashed_names)

    @property
    def _compiled(self) -> bool:
        """Whether the counts come from the compiled tokenizer
        (:mod:`perceptrons._kernels.tokens`), exact for ASCII documents."""
        return self._hashing and self.tokenizer in ("regex", "whitespace")

    def name_columns(
        self, texts: Iterable[str], columns: Iterable[int] | None = None
    ) -> dict[int, str]:
        """Which terms of ``texts`` each hashed column stands for: names recovered on demand.

        What fitting with ``hashed_names=True`` records, from any texts (the training
        texts give the same names): the terms come from the featurizer's own analyzer
        (its tokenizer, lowercasing and n-grams), and their columns from the hash it
        counts them by (MurmurHash3, seed 0, absolute value modulo ``n_features``);
        terms that collide share a column and are joined by ``|``, sorted.

        Parameters
        ----------
        texts : iterable of str
            Documents, tokenized once.
        columns : iterable of int, optional
            Only these columns (all by default).

        Returns
        -------
        dict
            ``{column: names}`` for each column (of ``columns``) some term reaches.
        """
        _input.check_is_fitted(self, "n_features_out_")
        if not self._hashing:
            raise ValueError("name_columns needs vocabulary='hashing' (a vocabulary is named)")
        texts = _checked_texts(texts)
        wanted = None if columns is None else {int(column) for column in columns}
        analyze = self._vectorizer.build_analyzer()
        terms: set[str] = set()
        for text in texts:
            terms.update(analyze(text))
        by_column: dict[int, list[str]] = {}
        ordered = sorted(terms)
        columns_of = hashed_columns(ordered, self.n_features).tolist()
        for term, column in zip(ordered, columns_of, strict=True):
            if wanted is None or column in wanted:
                by_column.setdefault(column, []).append(term)
        return {column: "|".join(names) for column, names in by_column.items()}

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """Features of ``texts``; terms never seen in training are dropped.

        Parameters
        ----------
        texts : iterable of str
            Documents.

        Returns
        -------
        X : sparse matrix of shape (n_texts, n_features)
            CSR, float64, int32 indices.
        """
        _input.check_is_fitted(self, "n_features_out_")
        texts = _checked_texts(texts)
        if self._compiled:
            return self._weigh(_hashed_counts(self, self._vectorizer, list(texts)))
        return self._weigh(self._vectorizer.transform(texts))

    def _weigh(self, X) -> sp.csr_matrix:
        """The vectorizer's counts to the output: the weighting step, canonical CSR."""
        if self._weighting is not None:
            X = self._weighting.transform(X)
        return canonical_csr(X)

    def feature_names(self) -> list[str] | None:
        """The term (word or space-joined n-gram) of each column, in column order.

        Returns
        -------
        names : list of str or None
            With ``vocabulary="hashing"``, the training terms that hash to each column,
            joined by ``|`` when several collide, and ``""`` for a column no training
            term reaches; ``None`` when the names were not kept (``hashed_names=False``:
            see :meth:`name_columns`).
        """
        _input.check_is_fitted(self, "n_features_out_")
        if self._hashing:
            if self._hashed_names is None:
                return None
            names = [""] * self.n_features_out_
            for column, name in self._hashed_names.items():
                names[column] = name
            return names
        return self._vectorizer.get_feature_names_out().tolist()

    # ----------------------------------------------------------- persistence
    def _codec(self) -> _TextCodec:
        """The fitted state as a model file stores it (see :mod:`perceptrons._engine`)."""
        return _TextCodec(self)


def _checked_texts(texts: Iterable[Any]) -> Iterator[str]:
    """The documents of ``texts``, each checked as it is read (a generator of documents
    is read once, never held): a str that UTF-8 can encode, or bytes."""
    if isinstance(texts, str | bytes):
        raise ValueError(
            "TextFeaturizer expects an iterable of documents (e.g. a list of str), "
            "got a single string."
        )
    return _each_checked(texts)


def _each_checked(texts: Iterable[Any]) -> Iterator[Any]:
    for number, text in enumerate(texts):
        if isinstance(text, str):
            # Hashing and the analyzers encode terms as UTF-8, which has no lone
            # surrogates: refused here by the document's number, not deep in a hash.
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as error:
                    raise ValueError(
                        f"TextFeaturizer: document {number} is not Unicode text: it holds "
                        f"U+{ord(text[error.start]):04X} (a lone surrogate) at character "
                        f"{error.start}"
                    ) from None
        elif not isinstance(text, bytes):
            # A ValueError, as scikit-learn's vectorizers raise for np.nan.
            raise ValueError(f"TextFeaturizer: document {number} is {type(text).__name__}, not str")
        yield text


def _check_idf_room(n_columns: int) -> None:
    """Refuse an idf that memory cannot hold, in one line: scikit-learn's idf is dense,
    as wide as the hashing space (the document frequencies, the idf and a temporary of
    their arithmetic)."""
    check_allocation(
        array_bytes(n_columns, 3),
        f"the idf ({n_columns:,} features x 3 arrays)",
        "lower n_features (--n-features)",
    )


def _hashed_counts(featurizer: TextFeaturizer, vectorizer: Any, texts: list[Any]) -> sp.csr_matrix:
    """What ``vectorizer.transform(texts)`` gives, the ASCII documents counted by the
    compiled tokenizer (:func:`perceptrons._kernels.tokens.hash_documents`) and the
    others (non-ASCII, not a ``str``) by ``vectorizer`` itself, their rows put in place.
    """
    from perceptrons._kernels import tokens

    compiled = [is_plain_ascii(text) for text in texts]
    n_docs = len(texts)
    others = [i for i, fast in enumerate(compiled) if not fast]
    # The ASCII documents one newline apart (the others left empty: rows to fill).
    kept = (
        texts
        if not others
        else [t if fast else "" for t, fast in zip(texts, compiled, strict=True)]
    )
    buf = np.frombuffer("\n".join(kept).encode("ascii"), dtype=np.uint8)
    lengths = np.fromiter(map(len, kept), dtype=np.int64, count=n_docs)
    starts = np.zeros(n_docs, dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    ends = starts + lengths
    min_n, max_n = (int(n) for n in featurizer.ngram_range)
    joined_size, tokens_size, terms_size = tokens.scratch_sizes(
        int(lengths.max(initial=0)), min_n, max_n
    )
    joined = np.empty(joined_size, dtype=np.uint8)
    token_starts = np.empty(tokens_size, dtype=np.int64)
    token_ends = np.empty(tokens_size, dtype=np.int64)
    columns = np.empty(terms_size, dtype=np.int64)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    room = buf.shape[0] // 4 + 64
    indices = np.empty(room, dtype=np.int32)
    data = np.empty(room, dtype=np.float64)
    state = np.zeros(tokens.STATE_SIZE, dtype=np.int64)
    while True:
        code = tokens.hash_documents(
            buf, starts, ends, featurizer.tokenizer == "regex", bool(featurizer.lowercase),
            min_n, max_n, int(featurizer.n_features), featurizer.weighting == "binary",
            joined, token_starts, token_ends, columns, indptr, indices, data, state,
        )  # fmt: skip
        if code == tokens.OK:
            break
        if code != tokens.NO_ROOM:  # the documents are ASCII, the scratch sized for them
            raise RuntimeError(f"hash_documents failed with code {code}")
        room = 2 * room + int(terms_size)  # the next document's row fits
        check_allocation(array_bytes(room, itemsize=12), f"the hashed features ({room:,} values)")
        nnz = int(state[tokens.NNZ])
        indices = np.concatenate([indices[:nnz], np.empty(room - nnz, dtype=np.int32)])
        data = np.concatenate([data[:nnz], np.empty(room - nnz, dtype=np.float64)])
    nnz = int(state[tokens.NNZ])
    shape = (n_docs, int(featurizer.n_features))
    counts = sp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=shape)
    if others:
        counts = _rows_merged(counts, vectorizer.transform([texts[i] for i in others]), others)
    return counts


def _rows_merged(counts: sp.csr_matrix, rows: sp.csr_matrix, where: list[int]) -> sp.csr_matrix:
    """``counts`` with its (empty) rows ``where`` replaced by the rows of ``rows``, in order."""
    rows = sp.csr_matrix(rows)
    lengths = np.diff(counts.indptr)
    lengths[where] = np.diff(rows.indptr)
    indptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    replaced = np.zeros(counts.shape[0], dtype=bool)
    replaced[where] = True
    from_rows = np.repeat(replaced, lengths)
    indices = np.empty(indptr[-1], dtype=np.int32)
    data = np.empty(indptr[-1], dtype=np.float64)
    indices[from_rows], data[from_rows] = rows.indices, rows.data
    indices[~from_rows], data[~from_rows] = counts.indices, counts.data
    return sp.csr_matrix((data, indices, indptr), shape=counts.shape)


class _HashingVectorizer:
    """scikit-learn's ``HashingVectorizer(alternate_sign=False, norm=None)`` for a
    featurizer's parameters, without scikit-learn for a plain ``str``: the terms of
    :func:`~perceptrons.text._vocabulary.mixed_analyzer` (scikit-learn's analyzer only
    for the other documents), the columns of
    :func:`~perceptrons.text._pairs.hashed_columns`, then ``FeatureHasher``'s steps:
    a 1 for each term, the repeats summed (``sum_duplicates``, which sorts each row's
    columns), 1.0 for each nonzero with ``binary``. The compiled tokenizer
    (:func:`_hashed_counts`) counts the ASCII documents; this, the others."""

    def __init__(self, featurizer: TextFeaturizer) -> None:
        self.n_features = int(featurizer.n_features)
        self.binary = featurizer.weighting == "binary"
        min_n, max_n = featurizer.ngram_range
        self._analyze = mixed_analyzer(
            analyzer(
                featurizer.tokenizer == "regex",
                bool(featurizer.lowercase),
                (int(min_n), int(max_n)),
            ),
            lambda: featurizer._sklearn_vectorizer(None).build_analyzer(),
        )

    def build_analyzer(self) -> Any:
        """A document's terms, in scikit-learn's order."""
        return self._analyze

    def transform(self, texts: Iterable[Any]) -> sp.csr_matrix:
        """The term counts of ``texts`` (float64, each row's columns sorted)."""
        rows = [self._analyze(text) for text in texts]
        if not rows:
            raise ValueError("Cannot vectorize empty sequence.")  # FeatureHasher's
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(terms) for terms in rows], out=indptr[1:])
        columns = hashed_columns([term for terms in rows for term in terms], self.n_features)
        ones = np.ones(columns.shape[0], dtype=np.float64)
        X = sp.csr_matrix((ones, columns, indptr), shape=(len(rows), self.n_features))
        X.sum_duplicates()
        if self.binary:
            X.data.fill(1.0)
        return X
