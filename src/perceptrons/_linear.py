"""Linear models' scores, sparse coefficients and log-linear probabilities.

:func:`linear_scores` is how every linear model of the package predicts, bit for bit
the same for a dense ``coef_`` and for its ``scipy.sparse`` form.

Sparse models
-------------
:class:`SparseCoefMixin` gives every linear model ``sparsify()`` and ``densify()``, as
scikit-learn's ``SGDClassifier`` has them: ``coef_`` becomes a ``scipy.sparse``
``csr_matrix`` (and back) and :func:`linear_scores` predicts bit for bit as before. A
sparsified online model keeps its training state only in the rows that hold a nonzero
weight (:class:`~perceptrons._states.CompactState`), so that its memory follows its
nonzeros and ``densify()`` gives back the exact state; training continues only after
``densify()``. A model whose weights were pruned (``sparsify(threshold=t)`` with
``t > 0``) or that was loaded from a file saved with ``resumable=False`` has no
training state at all: it predicts, and training it further needs a fresh ``fit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from perceptrons import _checked, _input, _validation
from perceptrons._kernels import scoring as _scoring
from perceptrons._states import Frozen

__all__ = ["LogLinearProbabilities", "SparseCoefMixin", "dense_coef", "linear_scores"]


def linear_scores(X: Any, coef: Any, intercept: np.ndarray, estimator: Any = None) -> np.ndarray:
    """``X @ coef.T + intercept``, bit for bit the same for a dense ``coef`` and for its
    ``scipy.sparse`` form.

    A dense ``X`` is multiplied by the C-contiguous ``(n_features, n_classes)`` operand
    a dense model hands to BLAS (a sparse ``coef`` is expanded for the call: as many
    numbers as ``n_classes`` rows of ``X``), so the sums run in BLAS's same order. A
    sparse ``X`` goes through scipy's sparse products, which add the same nonzero terms
    in the same column order whether the zero weights are stored or not (a stored zero
    only adds ``+-0.0``).

    With ``estimator``, a non-finite score (features too large for the model) is one
    ValueError naming it (:func:`~perceptrons._validation.check_scores`), not NumPy's
    warnings and scores that predict nothing.
    """
    _validation.check_scores_memory(X.shape[0], coef.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        if not sp.issparse(coef):
            scores = X @ coef.T + intercept
        elif sp.issparse(X):
            scores = sparse_scores(sp.csr_matrix(X), coef) + intercept
        else:
            scores = X @ np.ascontiguousarray(coef.T.toarray()) + intercept
    if estimator is not None:
        _validation.check_scores(scores, estimator, intercept)
    return scores


def _csr_fits(matrix: sp.csr_matrix, width: int) -> bool:
    """Whether a CSR matrix's index arrays address only its ``width`` columns and its
    stored elements (what a compiled loop over them relies on)."""
    indptr, indices = matrix.indptr, matrix.indices
    if indptr.shape[0] != matrix.shape[0] + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
        return False
    stored = indptr[-1]
    if stored > min(indices.shape[0], matrix.data.shape[0]):
        return False
    return not stored or 0 <= indices[:stored].min() <= indices[:stored].max() < width


def sparse_scores(X: sp.csr_matrix, coef: Any) -> np.ndarray:
    """``X @ coef.T`` as a dense array, by the compiled product of the two sparse
    matrices (scipy's builds a sparse result first: several times slower). Every index
    is checked before the kernel, which does no bounds checks."""
    coef = sp.csr_matrix(coef)
    n_classes, n_features = coef.shape
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, the model {n_features}")
    # scipy's own conversions do not check indices either: check before transposing.
    for name, matrix in (("X", X), ("coef_", coef)):
        if not _csr_fits(matrix, n_features):
            raise ValueError(f"{name}: sparse index arrays that do not fit its shape")
    x_indices = X.indices
    stored = int(coef.indptr[-1])
    if n_features > 4 * stored + 1024:
        # Few weights among many features (a sparsified hashed model): the product runs
        # on the features holding a weight, renumbered in their order (one more, empty,
        # for every other feature of X), so that its memory follows the nonzeros; the
        # transposed model of all the features would take an index of n_features + 1.
        used = np.unique(coef.indices[:stored])
        coef = sp.csr_matrix(
            (coef.data[:stored], np.searchsorted(used, coef.indices[:stored]), coef.indptr),
            shape=(n_classes, used.shape[0] + 1),
        )
        x_indices = _renumbered(X.indices[: X.indptr[-1]], used)
    by_feature = sp.csr_matrix(coef.T)  # one row of (class, weight) pairs per feature
    by_feature.sum_duplicates()  # canonical: sorted classes, each once (a no-op check)
    scores = np.zeros((X.shape[0], n_classes))
    _scoring.sparse_rows_times_sparse_weights(
        X.indptr,
        x_indices,
        np.asarray(X.data, dtype=np.float64),
        by_feature.indptr,
        by_feature.indices,
        np.asarray(by_feature.data, dtype=np.float64),
        scores,
    )
    return scores


def _renumbered(indices: np.ndarray, used: np.ndarray) -> np.ndarray:
    """``indices`` as positions in the sorted ``used``; those not in it as
    ``used.shape[0]``. The order within each row is kept: so are the sums."""
    position = np.searchsorted(used, indices)
    found = np.zeros(indices.shape[0], dtype=bool)
    inside = position < used.shape[0]
    found[inside] = used[position[inside]] == indices[inside]
    return np.where(found, position, used.shape[0]).astype(indices.dtype)


def dense_coef(coef: Any) -> np.ndarray:
    """A sparse ``coef_`` as the dense array of :meth:`OnlineLinearClassifier._publish`:
    a transposed view of a C-contiguous (n_features, n_classes) array."""
    return np.ascontiguousarray(coef.T.toarray()).T


_Model = TypeVar("_Model", bound="SparseCoefMixin")


class SparseCoefMixin:
    """``sparsify()`` and ``densify()`` for a linear model that predicts with
    :func:`linear_scores` of ``coef_`` and ``intercept_``.

    A member says what happens to its training state through two hooks:
    :meth:`_shed_state` (called by ``sparsify``) and :meth:`_restore_state` (by
    ``densify``). A model that cannot continue training exactly says why in
    its ``_lifecycle``, :class:`~perceptrons._states.Frozen` (see
    :meth:`~perceptrons._base.Trainable._continuation_problem`).
    """

    coef_: Any
    intercept_: np.ndarray
    _lifecycle: Any
    #: Whether a sparsified model's file is loaded without expanding the arrays stored
    #: as their nonzeros (the loader's memory check counts their rows, not their dense
    #: size); a member that expands them on loading says False.
    _loads_sparsified_compact: ClassVar[bool] = True

    def sparsify(self: _Model, threshold: float = 0.0) -> _Model:
        """Store ``coef_`` as a ``scipy.sparse.csr_matrix`` of its nonzero weights.

        Predictions are unchanged bit for bit (with ``threshold=0``); the memory the
        model holds follows its nonzero weights. Training continues only after
        :meth:`densify` (``fit`` without ``warm_start`` starts afresh at any time).

        Parameters
        ----------
        threshold : float, default=0.0
            Also drop the weights with ``|w| <= threshold`` (the intercepts are kept).
            0 drops only the zeros: the model is exactly the same. A model that loses a
            nonzero weight so keeps no training state: :meth:`densify` then gives the
            pruned weights back as an array, and continuing to train needs a new ``fit``.

        Returns
        -------
        self : object
            The estimator, with a sparse ``coef_``.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from perceptrons import AveragedPerceptron
        >>> X, y = load_iris(return_X_y=True)
        >>> model = AveragedPerceptron(random_state=0).fit(X, y)
        >>> before = model.predict(X)
        >>> type(model.sparsify().coef_).__name__
        'csr_matrix'
        >>> bool((model.predict(X) == before).all())
        True
        >>> type(model.densify().coef_).__name__
        'ndarray'
        """
        _input.check_is_fitted(self, "coef_")
        limit = _checked.real_value(threshold, "threshold", 0.0)
        matrix = sp.csr_matrix(self.coef_, dtype=np.float64, copy=True)
        matrix.eliminate_zeros()
        pruned = False
        if limit > 0:
            small = np.abs(matrix.data) <= limit
            if small.any():
                matrix.data[small] = 0.0
                matrix.eliminate_zeros()
                pruned = True
        self._shed_state(limit if pruned else None)
        self.coef_ = matrix
        return self

    def densify(self: _Model) -> _Model:
        """Store ``coef_`` as a dense array again (the inverse of :meth:`sparsify`).

        A model sparsified exactly gets its training state back, bit for bit, and
        continues training as if it had never been sparsified.

        Returns
        -------
        self : object
            The estimator, with a dense ``coef_``.
        """
        _input.check_is_fitted(self, "coef_")
        if sp.issparse(self.coef_) and not self._restore_state():
            self.coef_ = dense_coef(self.coef_)
        return self

    def _model_array(self) -> np.ndarray | _checked.SparseArray:
        """``coef_`` and ``intercept_`` as the rows of a state's ``weights`` (one per
        feature, the intercept last; one column per class, none for binary models)."""
        n_columns, n_features = self.coef_.shape
        shape = (n_features + 1,) if n_columns == 1 else (n_features + 1, n_columns)
        if not sp.issparse(self.coef_):
            model = np.empty((n_features + 1, n_columns))
            model[:-1] = self.coef_.T
            model[-1] = self.intercept_
            return model.reshape(shape)
        coo = sp.coo_matrix(self.coef_)
        bias = np.flatnonzero((self.intercept_ != 0) | np.signbit(self.intercept_))
        index = np.concatenate(
            [
                coo.col.astype(np.int64) * n_columns + coo.row,
                n_features * n_columns + bias.astype(np.int64),
            ]
        )
        values = np.concatenate([coo.data, self.intercept_[bias]])
        order = np.argsort(index, kind="stable")
        return _checked.SparseArray(shape, index[order], values[order].astype(np.float64))

    def _published_from(self, model: _checked.SparseArray) -> tuple[sp.csr_matrix, np.ndarray]:
        """``(coef_, intercept_)`` of a model array given by its nonzeros (the inverse
        of :meth:`_model_array` for a sparse ``coef_``), never expanded: ``coef_`` a
        CSR matrix of shape (n_columns, n_features)."""
        n_columns = model.shape[1] if len(model.shape) == 2 else 1
        n_features = model.shape[0] - 1
        rows, columns = np.divmod(model.index, n_columns)
        is_feature = rows < n_features
        coef = sp.csr_matrix(
            (model.values[is_feature], (columns[is_feature], rows[is_feature])),
            shape=(n_columns, n_features),
        )
        coef.eliminate_zeros()
        intercept = np.zeros(n_columns)
        intercept[columns[~is_feature]] = model.values[~is_feature]
        return coef, intercept

    def _shed_state(self, pruned_at: float | None) -> None:
        """Give up the dense training state as ``coef_`` becomes sparse: keep what
        :meth:`_restore_state` needs unless the weights were pruned at ``pruned_at``
        (the model is then :class:`~perceptrons._states.Frozen`)."""
        if pruned_at is not None:
            self._lifecycle = Frozen(0, pruned_at)

    def _restore_state(self) -> bool:
        """Rebuild the dense training state and publish ``coef_`` from it, if kept;
        whether it was."""
        return False


class LogLinearProbabilities:
    """Probabilities of a model whose scores are log-odds (binary) or logits: logistic
    regression, and naive Bayes (whose scores are joint log-likelihoods, logits up to
    a per-sample constant). Computed without overflow or ``log(0)``."""

    if TYPE_CHECKING:  # the estimator's own; declared for the type checker only

        def decision_function(self, X: ArrayLike) -> np.ndarray: ...

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities: ``σ`` of the log-odds (binary) or the softmax of the
        logits, ``P(c | x)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples whose classes' probabilities are wanted.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Column ``k`` is the probability of ``classes_[k]``; rows sum to 1.
        """
        # Imported here: training and predicting labels need no SciPy special functions.
        from scipy.special import expit, softmax

        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([expit(-scores), expit(scores)])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Logarithms of :meth:`predict_proba`, ``log P(c | x)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Samples whose classes' log-probabilities are wanted.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Column ``k`` is the log-probability of ``classes_[k]``.
        """
        from scipy.special import log_expit, log_softmax

        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        return log_softmax(scores, axis=1)
