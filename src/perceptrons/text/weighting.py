"""The step after counting terms: sublinear tf, idf and row norms, without scikit-learn.

:class:`TfidfWeighting` computes what scikit-learn's
``TfidfTransformer(norm=..., use_idf=..., sublinear_tf=..., smooth_idf=True)`` computes,
in the same operations and order (the tests hold the two equal to the bit): fitted, the
smoothed idf ``ln((1 + n) / (1 + df_j)) + 1``; applied, ``1 + ln(tf)`` for a sublinear
tf (``-(1 + ln(-tf))`` for a negative value, a vw file's, where scikit-learn's gives
NaN), times the idf of the column, each row divided by its Euclidean norm. It is the
weighting of :class:`perceptrons.TextFeaturizer`, whose file holds the idf, and needs
only NumPy, SciPy's sparse matrices and one compiled kernel
(:func:`perceptrons._kernels.weighting.normalize_rows_l2`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from perceptrons._kernels.weighting import normalize_rows_l2
from perceptrons._validation import check_sparse_structure

__all__ = ["TfidfWeighting"]


class TfidfWeighting:
    """Sublinear tf, idf and l2 row norms of term counts (see the module).

    Parameters
    ----------
    use_idf : bool
        Weigh each column by its idf, learned by ``fit``.
    sublinear_tf : bool
        Replace each count ``tf`` by ``1 + ln(tf)``, a negative value (a vw feature's)
        by ``-(1 + ln(-tf))``.
    normalize : bool
        Divide each row by its Euclidean norm.
    """

    def __init__(self, *, use_idf: bool, sublinear_tf: bool, normalize: bool) -> None:
        self.use_idf, self.sublinear_tf, self.normalize = use_idf, sublinear_tf, normalize
        #: The idf of each column once fitted (with ``use_idf``), else None.
        self.idf_: np.ndarray | None = None

    def fit(self, counts: sp.csr_matrix) -> TfidfWeighting:
        """Learn the idf from the document frequencies of ``counts`` (CSR, one row per
        document: a column's stored entries in a row count the document)."""
        if counts.shape[0] == 0:  # scikit-learn's words
            raise ValueError(
                f"Found array with 0 sample(s) (shape={counts.shape}) while a minimum of 1 "
                "is required: the weighting is learned from documents."
            )
        if self.use_idf:
            counted = np.bincount(counts.indices, minlength=counts.shape[1])
            self.fit_frequencies(counted, counts.shape[0])
        return self

    def fit_frequencies(self, counted: np.ndarray, n_documents: int) -> TfidfWeighting:
        """Learn the idf from document frequencies counted elsewhere: ``counted[j]`` of
        the ``n_documents`` documents hold column ``j`` (int64). What :meth:`fit` does
        with the frequencies it counts, so a file's chunks counted one at a time and
        summed give the idf of the whole file, bit for bit
        (:func:`perceptrons.io.stream.fit_stream`)."""
        if n_documents < 1:
            raise ValueError("TfidfWeighting: the idf is learned from at least one document.")
        frequencies = counted.astype(np.float64) + 1.0  # smoothed: one more document
        idf = np.full_like(frequencies, fill_value=n_documents + 1, dtype=np.float64)
        idf /= frequencies
        np.log(idf, out=idf)
        idf += 1.0
        self.idf_ = idf
        return self

    def transform(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """The weighted features of ``counts`` (a new CSR matrix; ``counts`` is kept)."""
        X = sp.csr_matrix(counts, dtype=np.float64, copy=True)
        # Its index arrays are read by the compiled row norms: checked first (Numba does
        # no bounds checks), as is its width against the idf's.
        check_sparse_structure(X)
        if self.idf_ is not None and X.shape[1] != self.idf_.shape[0]:
            raise ValueError(
                f"TfidfWeighting: counts of {X.shape[1]} columns for an idf of "
                f"{self.idf_.shape[0]}."
            )
        if self.sublinear_tf:
            # scikit-learn takes the log of a negative value too, giving NaN; a vw
            # feature's value may be negative, and gets the mirror image of its size's
            # (bit for bit scikit-learn's where none is negative).
            negative = X.data < 0.0
            np.abs(X.data, out=X.data)
            np.log(X.data, X.data)
            X.data += 1.0
            np.negative(X.data, out=X.data, where=negative)
        if self.idf_ is not None:
            X.data *= self.idf_[X.indices]
        if self.normalize:
            normalize_rows_l2(X.data, X.indptr)
        return X

    def fit_transform(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        """:meth:`fit`, then :meth:`transform`."""
        return self.fit(counts).transform(counts)
