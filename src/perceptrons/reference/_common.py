"""Helpers shared by every oracle of :mod:`perceptrons.reference`.

Input conversion (``X`` to a dense ndarray or CSR, read one row at a time as a dense
float64 copy, so dense and sparse inputs go through the same arithmetic), label checks,
and the per-epoch visiting orders (:func:`~perceptrons.reference.epoch_orders`, public: callers
build the
``orders`` argument of every oracle with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import scipy.sparse as sp

__all__ = ["Matrix", "epoch_orders"]

# What the oracles accept as ``X``: dense, or any scipy.sparse matrix or array.
Matrix: TypeAlias = np.ndarray | sp.spmatrix | sp.sparray


def epoch_orders(
    n_samples: int,
    n_epochs: int,
    shuffle: bool = False,
    random_state: int | None = None,
) -> list[np.ndarray]:
    """Return the per-epoch visiting orders, drawn exactly as the estimators draw them.

    Parameters
    ----------
    n_samples : int
        Number of training examples.
    n_epochs : int
        Number of passes over the data.
    shuffle : bool, default=False
        If false every epoch visits ``0, 1, ..., n_samples - 1``.
    random_state : int or None, default=None
        Seed of ``np.random.RandomState``, used only when ``shuffle`` is true.

    Returns
    -------
    orders : list of ndarray of shape (n_samples,)
        ``[np.arange(n_samples)] * n_epochs`` without shuffling; with shuffling
        ``rs = np.random.RandomState(random_state)`` then
        ``[rs.permutation(n_samples) for _ in range(n_epochs)]``.

    Examples
    --------
    >>> [o.tolist() for o in epoch_orders(3, 2)]
    [[0, 1, 2], [0, 1, 2]]
    >>> a = epoch_orders(5, 3, shuffle=True, random_state=0)
    >>> b = epoch_orders(5, 3, shuffle=True, random_state=0)
    >>> all((p == q).all() for p, q in zip(a, b))
    True
    """
    if not shuffle:
        return [np.arange(n_samples)] * n_epochs
    rs = np.random.RandomState(random_state)
    return [rs.permutation(n_samples) for _ in range(n_epochs)]


def _as_matrix(X: Matrix) -> np.ndarray | sp.csr_matrix:
    """Sparse input to CSR (row indexing), dense input to a 2-D float64 ndarray."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}")
    return X


def _row(X: np.ndarray | sp.csr_matrix, i: int) -> np.ndarray:
    """Row ``i`` of ``X`` as a dense 1-D float64 array (a copy for sparse input)."""
    if sp.issparse(X):
        return np.asarray(X[i].todense(), dtype=np.float64).ravel()
    return np.asarray(X[i], dtype=np.float64).ravel()


def _as_orders(orders: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(order, dtype=np.intp).ravel() for order in orders]


def _n_examples(orders: Sequence[np.ndarray]) -> int:
    """``N``: the length of the whole example sequence of a run."""
    return sum(len(order) for order in orders)


def _binary_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64).ravel()
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("binary labels must be +1 or -1")
    return y


def _class_codes(y: np.ndarray, n_classes: int) -> np.ndarray:
    y = np.asarray(y).ravel()
    codes = y.astype(np.intp)
    if not np.array_equal(codes, y) or np.any(codes < 0) or np.any(codes >= n_classes):
        raise ValueError(f"class codes must be integers in 0..{n_classes - 1}")
    return codes


def _sample_weights(sample_weight: np.ndarray | None, n_samples: int) -> np.ndarray:
    """The examples' weights as float64 (all 1 when None); finite and non-negative."""
    if sample_weight is None:
        return np.ones(n_samples)
    s = np.asarray(sample_weight, dtype=np.float64).ravel()
    if s.shape != (n_samples,) or not np.all(np.isfinite(s) & (s >= 0)):
        raise ValueError(f"sample_weight must be {n_samples} finite weights >= 0")
    return s


def _require_examples(n: int) -> None:
    if n == 0:
        raise ValueError("the mean over an empty example sequence is undefined")


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a·b`` summed in order, as the kernels sum a score (where scores tie exactly in
    theory, as NAG's do, the same order of the sum breaks the ties alike)."""
    total = 0.0
    for a_j, b_j in zip(a, b, strict=True):
        total += a_j * b_j
    return total


def _hinge_coefficients(scores: np.ndarray, label: Any, weight: float) -> np.ndarray:
    """The hinge loss's gradient on each class's weights as ``coefficient[k] x̃``: binary
    (one score, ``label`` 1 or not), ``-s y`` while ``y w·x̃ < 1``; multiclass, the single
    constraint against the best other class (ties to the lowest), ``-s`` on the gold
    class and ``+s`` on the other while ``s_gold - s_other < 1``; 0 otherwise."""
    coefficient = np.zeros(scores.shape[0])
    if scores.shape[0] == 1:
        sign = 1.0 if label == 1 else -1.0
        if 1.0 - sign * scores[0] > 0.0:
            coefficient[0] = -sign * weight
    else:
        gold = int(label)
        rest = scores.copy()
        rest[gold] = -np.inf
        other = int(np.argmax(rest))
        if 1.0 - (scores[gold] - scores[other]) > 0.0:
            coefficient[gold], coefficient[other] = -weight, weight
    return coefficient
