"""The dual (kernel) perceptron and voted perceptron, on a precomputed Gram matrix.

The textbook dual form of :func:`~perceptrons.reference.averaged.perceptron` (none of the lecture
notes cited below writes it out): every update adds ``y_t x_t``, so the weights are
``sum_i alpha_i x_i`` and every dot product becomes a kernel evaluation. The voted variant
keeps the bookkeeping of Cohen's lecture (see :mod:`perceptrons.reference.voted`) as the
sequence of update examples and signs.

References
----------
T. H. Nguyen, "Averaged perceptron note", CIS 472/572: Machine Learning, University of
Oregon.

R. Johansson, "Machine Learning for NLP, bonus lecture: the averaged perceptron",
lecture notes, 11 September 2015.

W. Cohen, "The Perceptron", lecture slides, 10-601, Carnegie Mellon University.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from perceptrons.reference._common import (
    _as_orders,
    _binary_labels,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = ["dual_kernel_perceptron", "dual_vote_scores", "dual_voted_perceptron"]


def _as_kernel(K: np.ndarray | sp.spmatrix | sp.sparray) -> np.ndarray:
    """A kernel matrix as a dense 2-D float64 ndarray."""
    # scipy.sparse is untyped, so issparse cannot narrow K for the type checker.
    K = np.asarray(cast(Any, K).toarray() if sp.issparse(K) else K, dtype=np.float64)
    if K.ndim != 2:
        raise ValueError(f"a kernel matrix must be 2-D, got shape {K.shape}")
    return K


def _as_gram(K_train: np.ndarray, n_samples: int) -> np.ndarray:
    K = _as_kernel(K_train)
    if K.shape != (n_samples, n_samples):
        raise ValueError(f"K_train must have shape {(n_samples, n_samples)}, got {K.shape}")
    return K


def dual_kernel_perceptron(
    K_train: np.ndarray, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, float, list[int]]:
    """Dual (kernel) binary perceptron on a precomputed Gram matrix.

    The textbook dual form of :func:`~perceptrons.reference.averaged.perceptron` (the ``w = w + y
    x`` on a mistake of
    Johansson's lecture, 2015, and the bias of Nguyen's averaged-perceptron note): since
    every update adds ``y_t x_t``, the weights are ``w = sum_i alpha_i x_i`` with
    ``alpha_i`` the signed number of updates on example ``i``, and
    ``w.x_t = sum_i alpha_i K[i, t]`` with ``K[i, t] = x_i.x_t`` or any other kernel
    ``phi(x_i).phi(x_t)``.

    Parameters
    ----------
    K_train : ndarray of shape (n_samples, n_samples)
        The Gram matrix ``K[i, t] = k(x_i, x_t)``.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`~perceptrons.reference.epoch_orders`.

    Returns
    -------
    alpha : ndarray of shape (n_samples,)
        ``alpha[i]``: the signed count of updates on example ``i`` (``+1`` for each
        update with ``y_i = +1``, ``-1`` for each with ``y_i = -1``), as floats.
    b : float
        The bias, ``alpha.sum()``.
    mistakes : list of int
        Number of mistakes (= updates) in each epoch.

    Notes
    -----
    The score of example ``t`` is ``sum_i alpha[i] K[i, t] + b``; a mistake is
    ``y_t * score <= 0``, after which ``alpha[t] += y_t; b += y_t``. With the linear
    kernel ``K = X X^T`` this is :func:`~perceptrons.reference.averaged.perceptron` exactly (same
    mistakes,
    ``w = alpha @ X``, same ``b``). The bias is a separate learned constant, as the
    weight of a constant feature equal to 1 would be, on top of whatever constant the
    kernel itself contains (e.g. the ``+ 1`` of ``(x.x' + 1)^2``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> alpha, b, mistakes = dual_kernel_perceptron(X @ X.T, y, epoch_orders(4, 1))
    >>> alpha.tolist(), b, mistakes, (alpha @ X).tolist()  # perceptron's w, b
    ([1.0, -1.0, 0.0, -1.0], -1.0, [3], [2.0, 1.0])
    """
    y = _binary_labels(y)
    K = _as_gram(K_train, len(y))
    alpha = np.zeros(len(y))
    b = 0.0
    mistakes = []
    for order in _as_orders(orders):
        n_mistakes = 0
        for t in order:
            score = alpha @ K[:, t] + b
            if y[t] * score <= 0:
                alpha[t] = alpha[t] + y[t]
                b = b + y[t]
                n_mistakes += 1
        mistakes.append(n_mistakes)
    return alpha, float(b), mistakes


def dual_voted_perceptron(
    K_train: np.ndarray, y: np.ndarray, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kernel voted perceptron: the update sequence and the votes of every model.

    The run of :func:`~perceptrons.reference.kernel.dual_kernel_perceptron` with the voted
    bookkeeping of Cohen's
    lecture. A kernel voted perceptron cannot store ``v_k``; it stores the ``j``-th
    update's example ``i_j`` and sign ``y_j``, so that
    ``v_k = sum_{j <= k} y_j phi(x_{i_j})``.

    Parameters
    ----------
    K_train : ndarray of shape (n_samples, n_samples)
        The Gram matrix ``K[i, t] = k(x_i, x_t)``.
    y : ndarray of shape (n_samples,)
        Labels in ``{+1, -1}``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    update_examples : ndarray of int of shape (K,)
        ``i_1, ..., i_K``: the example index of each update, in order.
    update_signs : ndarray of shape (K,)
        ``y_1, ..., y_K``: the label (``+1.0`` / ``-1.0``) of each update.
    votes : ndarray of int of shape (K + 1,)
        ``m_0, ..., m_K`` as in :func:`~perceptrons.reference.voted.voted_perceptron`;
        ``votes.sum() == N``.
    b_seq : ndarray of shape (K + 1,)
        The biases ``b_k = sum_{j <= k} y_j`` of ``v_0, ..., v_K`` (``b_0 = 0``).

    Notes
    -----
    Mistake rule ``y_t (sum_i alpha_i K[i, t] + b) <= 0`` with the current ``alpha``.
    Score new rows with :func:`~perceptrons.reference.kernel.dual_vote_scores`. With ``K = X X^T``,
    ``votes`` and ``b_seq`` equal :func:`~perceptrons.reference.voted.voted_perceptron`'s ``votes``
    and ``c``, and
    ``V[k] = sum_{j <= k} update_signs[j - 1] X[update_examples[j - 1]]``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> ex, signs, votes, b_seq = dual_voted_perceptron(X @ X.T, y, epoch_orders(4, 1))
    >>> ex.tolist(), signs.tolist(), votes.tolist(), b_seq.tolist()
    ([0, 1, 3], [1.0, -1.0, -1.0], [0, 1, 2, 1], [0.0, 1.0, 0.0, -1.0])
    """
    y = _binary_labels(y)
    K = _as_gram(K_train, len(y))
    alpha = np.zeros(len(y))  # the current model v_k in dual form
    b = 0.0
    update_examples = []
    update_signs = []
    votes = [0]  # m_0
    b_seq = [0.0]
    for order in _as_orders(orders):
        for t in order:
            score = alpha @ K[:, t] + b
            if y[t] * score <= 0:
                alpha[t] = alpha[t] + y[t]
                b = b + y[t]
                update_examples.append(t)
                update_signs.append(y[t])
                votes.append(1)  # m_{k+1} <- 1
                b_seq.append(b)
            else:
                votes[-1] = votes[-1] + 1
    return (
        np.array(update_examples, dtype=np.intp),
        np.array(update_signs, dtype=np.float64),
        np.array(votes, dtype=np.int64),
        np.array(b_seq),
    )


def dual_vote_scores(
    K_test_train: np.ndarray,
    update_examples: np.ndarray,
    update_signs: np.ndarray,
    votes: np.ndarray,
) -> np.ndarray:
    """Scores of every intermediate model ``v_0, ..., v_K`` of a kernel voted perceptron.

    For a row ``x``, ``score_0 = 0`` and ``score_k = score_{k-1} + y_k (K(x_{i_k}, x) +
    1)``: one kernel evaluation per update, the prefix sums giving all ``K + 1`` scores
    in ``O(K)``. The ``+ 1`` is the bias as a constant feature: ``sum_{j <= k} y_j`` is
    ``b_seq[k]`` of :func:`~perceptrons.reference.kernel.dual_voted_perceptron`.

    Parameters
    ----------
    K_test_train : ndarray of shape (n_rows, n_samples)
        ``K_test_train[r, i] = k(x_r, x_i)`` between the rows to score and the training
        examples.
    update_examples : ndarray of int of shape (K,)
        From :func:`~perceptrons.reference.kernel.dual_voted_perceptron`.
    update_signs : ndarray of shape (K,)
        From :func:`~perceptrons.reference.kernel.dual_voted_perceptron`.
    votes : ndarray of shape (K + 1,)
        From :func:`~perceptrons.reference.kernel.dual_voted_perceptron`; only its length is used
        (checked against
        ``K + 1``).

    Returns
    -------
    scores : ndarray of shape (n_rows, K + 1)
        ``scores[r, k]`` is the score of model ``v_k`` on row ``r``.

    Notes
    -----
    With the linear kernel ``K_test_train = X_test X^T``, ``scores[r, k]`` equals
    ``V[k] @ X_test[r] + c[k]`` for ``V, c`` of
    :func:`~perceptrons.reference.voted.voted_perceptron` on the same
    run. The binary rules of :func:`~perceptrons.reference.voted.vote_predict` apply to the scores
    unchanged, e.g.
    ``"vote"``: ``sum_k votes[k] * (1 if scores[r, k] > 0 else -1) > 0``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [-1.0, -2.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> ex, signs, votes, _ = dual_voted_perceptron(X @ X.T, y, epoch_orders(4, 1))
    >>> x = np.array([[1.0, 1.0]])
    >>> dual_vote_scores(x @ X.T, ex, signs, votes).tolist()  # v_k.x + c_k
    [[0.0, 2.0, 0.0, 2.0]]
    """
    K = _as_kernel(K_test_train)
    update_examples = np.asarray(update_examples, dtype=np.intp).ravel()
    update_signs = np.asarray(update_signs, dtype=np.float64).ravel()
    if len(update_signs) != len(update_examples) or len(votes) != len(update_examples) + 1:
        raise ValueError("need K update examples, K update signs and K + 1 votes")
    scores = np.zeros((K.shape[0], len(update_examples) + 1))
    for r in range(K.shape[0]):
        score = 0.0  # v_0 = 0, b_0 = 0
        for j in range(len(update_examples)):
            score = score + update_signs[j] * (K[r, update_examples[j]] + 1.0)
            scores[r, j + 1] = score
    return scores
