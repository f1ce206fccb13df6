"""The ``name:value`` documents of ``TextFeaturizer(tokenizer="pairs")``: their tokenizer
and the vectorizer that makes their sparse matrix (see :mod:`perceptrons.features`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from perceptrons._decimal import decimal_number


def _pairs(text: str, lowercase: bool) -> list[tuple[str, float]]:
    """The ``(name, value)`` of each whitespace token ``name:value`` (split at the last
    colon; a bare ``name`` is worth 1)."""
    if lowercase:
        text = text.lower()
    pairs = []
    for token in text.split():
        name, colon, value = token.rpartition(":")
        if not colon:
            pairs.append((token, 1.0))
            continue
        try:
            number = decimal_number(value)
        except ValueError:
            number = math.nan
        if not name or not math.isfinite(number):
            raise ValueError(
                f"TextFeaturizer(tokenizer='pairs'): token {token!r} is not name:value "
                "with a finite number as the value"
            )
        pairs.append((name, number))
    return pairs


def _sum_repeats(X: sp.csr_array) -> sp.csr_array:
    """``X.sum_duplicates()`` for a matrix whose rows are sorted but those with a
    repeated column: only those go through scipy (which sorts and sums each row on its
    own), the others are already as it leaves them."""
    indices, indptr = X.indices, X.indptr
    step = np.diff(indices) <= 0  # step[k]: position k + 1 not after position k
    starts = indptr[1:-1]
    step[starts[(starts > 0) & (starts < len(indices))] - 1] = False  # rows' first values
    rows = np.unique(np.searchsorted(indptr, np.flatnonzero(step) + 1, side="right") - 1)
    if len(rows) == 0:
        X.has_canonical_format = True
        return X
    if len(rows) > max(8, X.shape[0] // 100):  # many: the whole matrix at once
        X.sum_duplicates()
        return X
    summed = X[rows]
    summed.sum_duplicates()
    pieces, previous = [], 0
    for k, row in enumerate(rows.tolist()):
        pieces += [X[previous:row], summed[k : k + 1]]
        previous = row + 1
    pieces.append(X[previous:])
    X = sp.vstack(pieces, format="csr")
    X.has_canonical_format = True
    return X


def hashed_columns(names: list[str], n_features: int) -> np.ndarray:
    """The column of each name (int32) as ``FeatureHasher(alternate_sign=False)`` hashes
    it: the compiled MurmurHash3 (:func:`perceptrons._kernels.hashing.hash_names`) of
    its UTF-8 bytes, seed 0, absolute value modulo ``n_features``. The names are
    encodable (:func:`perceptrons.text.featurizer._checked_texts` refuses lone
    surrogates)."""
    from perceptrons._kernels.hashing import hash_names

    encoded = [name.encode("utf-8") for name in names]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    ends = np.cumsum(lengths)
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    columns = np.empty(len(encoded), dtype=np.int32)
    hash_names(buf, ends - lengths, ends, int(n_features), columns)
    return columns


class _PairsVectorizer:
    """``name:value`` documents to a sparse matrix: the part of scikit-learn's vectorizer
    interface :class:`~perceptrons.TextFeaturizer` uses, for ``tokenizer="pairs"``.

    Hashing (``n_features`` given) puts ``name`` in column ``|murmurhash3(name)| %
    n_features``, as :class:`~sklearn.feature_extraction.text.HashingVectorizer` does
    (through the same :class:`~sklearn.feature_extraction.FeatureHasher`); otherwise
    the columns are the sorted names of the training documents found in at least
    ``min_df`` of them, or the given ``vocabulary``.  Values of a name repeated in a
    document add up; ``binary`` sets every nonzero to 1.
    """

    def __init__(
        self,
        *,
        lowercase: bool,
        binary: bool,
        n_features: int | None = None,
        min_df: int | float = 1,
        vocabulary: list[str] | None = None,
    ) -> None:
        self.lowercase, self.binary, self.n_features, self.min_df = (
            lowercase,
            binary,
            n_features,
            min_df,
        )
        self._columns = None if vocabulary is None else {t: i for i, t in enumerate(vocabulary)}

    def build_analyzer(self):
        lowercase = self.lowercase
        return lambda text: [name for name, _ in _pairs(text, lowercase)]

    def fit_transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        docs = [_pairs(text, self.lowercase) for text in texts]
        if self.n_features is None:
            df: Counter[str] = Counter()
            for doc in docs:
                df.update({name for name, _ in doc})
            least = self.min_df if isinstance(self.min_df, Integral) else self.min_df * len(docs)
            if not df:
                raise ValueError("empty vocabulary: the documents hold no name:value token")
            terms = sorted(name for name, count in df.items() if count >= least)
            if not terms:
                raise ValueError("After pruning, no terms remain. Try a lower min_df.")
            self._columns = {term: i for i, term in enumerate(terms)}
        return self._matrix(docs)

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        return self._matrix([_pairs(text, self.lowercase) for text in texts])

    def get_feature_names_out(self) -> np.ndarray:
        assert self._columns is not None  # a vocabulary, learned or given
        return np.asarray(list(self._columns), dtype=object)

    def _matrix(self, docs: list[list[tuple[str, float]]]) -> sp.csr_matrix:
        if self.n_features is not None:
            return self._hashed(docs)
        else:
            columns = self._columns
            assert columns is not None
            indices, values, indptr = [], [], [0]
            for doc in docs:
                for name, value in doc:
                    column = columns.get(name)
                    if column is not None:
                        indices.append(column)
                        values.append(value)
                indptr.append(len(indices))
            X = sp.csr_matrix(
                (
                    np.asarray(values, dtype=np.float64),
                    np.asarray(indices, dtype=np.int64),
                    np.asarray(indptr, dtype=np.int64),
                ),
                shape=(len(docs), len(columns)),
            )
        return self._finish(X)

    def _hashed(self, docs: list[list[tuple[str, float]]]) -> sp.csr_matrix:
        """:meth:`_matrix` for hashing: scikit-learn's ``FeatureHasher`` (``"pair"``
        input, no alternate sign) step by step, the names hashed by the compiled
        MurmurHash3 (:func:`perceptrons._kernels.hashing.hash_names`): a zero value is
        skipped, each name's UTF-8 bytes give its column, :meth:`hashed_matrix` sums."""
        assert self.n_features is not None  # hashing
        kept = [[(name, value) for name, value in doc if value != 0] for doc in docs]
        indptr = np.zeros(len(kept) + 1, dtype=np.int64)
        np.cumsum([len(doc) for doc in kept], out=indptr[1:])
        values = np.array([value for doc in kept for _, value in doc], dtype=np.float64)
        columns = hashed_columns([name for doc in kept for name, _ in doc], self.n_features)
        return self.hashed_matrix(columns, indptr, values)

    def hashed_matrix(
        self,
        indices: np.ndarray,
        indptr: np.ndarray,
        values: np.ndarray,
        *,
        canonical: bool = False,
    ) -> sp.csr_matrix:
        """What :meth:`transform` gives (hashing), from the arrays FeatureHasher's
        kernel makes: each row's columns and nonzero values in token order.

        The same steps as ``FeatureHasher.transform`` then :meth:`_finish`, so the sums
        of repeated columns are those of the same scipy calls on the same arrays, bit
        for bit. ``indices`` and ``values`` are the caller's (summed in place).
        ``canonical``: every row without a repeated column has its columns ascending
        already and every value is nonzero (what the compiled reader gives), so scipy
        has to sort and sum only the rows with a repeat -- row by row, as it does for
        the whole matrix, so the sums are the same.
        """
        assert self.n_features is not None
        if indptr[-1] > np.iinfo(np.int32).max:
            indices = indices.astype(np.int64, copy=False)
            indptr = indptr.astype(np.int64, copy=False)
        else:
            indptr = indptr.astype(np.int32, copy=False)
        X = sp.csr_array(
            (values, indices, indptr), dtype=np.float64, shape=(len(indptr) - 1, self.n_features)
        )
        if canonical:
            X = _sum_repeats(X)
        else:
            X.sum_duplicates()  # FeatureHasher's
        return self._finish(sp.csr_matrix(X))

    def _finish(self, X: sp.csr_matrix) -> sp.csr_matrix:
        X.sum_duplicates()
        X.eliminate_zeros()
        if self.binary:
            X.data[:] = 1.0
        return X
