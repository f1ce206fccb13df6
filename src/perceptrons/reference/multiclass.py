"""The multiclass perceptron and averaged perceptron (Kuhlmann's slides, cited below).

One weight vector and bias per class; ``p = argmax_k (W[k] @ x + b[k])``, ties going to
the lowest class index; on a mistake ``p != y``: ``W[p] -= x; b[p] -= 1; W[y] += x;
b[y] += 1``. With ``S = W_1 + ... + W_N`` the running sum of the weights after every
example (as in :mod:`perceptrons.reference.averaged`):

========================================  ==================  =================
function                                  returns             exact mean
========================================  ==================  =================
``multiclass_averaged_perceptron``        ``S / (N + 1)``     ``result (N+1)/N``
``multiclass_averaged_perceptron_naive``  ``S / N``           result
========================================  ==================  =================

The naive average is that of the course notes on the voted and averaged perceptron.

References
----------
Course notes on the voted and averaged perceptron (they name no author or course).

M. Kuhlmann, "The perceptron learning algorithm", lecture slides, Department of Computer
and Information Science, Linköping University.

T. H. Nguyen, "Averaged perceptron note", CIS 472/572: Machine Learning, University of
Oregon.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perceptrons.reference._common import (
    Matrix,
    _as_matrix,
    _as_orders,
    _class_codes,
    _n_examples,
    _require_examples,
    _row,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = [
    "multiclass_averaged_perceptron",
    "multiclass_averaged_perceptron_naive",
    "multiclass_perceptron",
]


def multiclass_perceptron(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Multiclass perceptron: one weight vector and bias per class (Kuhlmann's slides).

    Kuhlmann's slides, "The perceptron learning algorithm": ``w_k <- 0; b_k <- 0``; for
    each example ``p <- argmax_k x w_k + b_k``; ``if p != y: w_p <- w_p - x;
    b_p <- b_p - 1; w_y <- w_y + x; b_y <- b_y + 1``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`~perceptrons.reference.epoch_orders`.

    Returns
    -------
    W : ndarray of shape (n_classes, n_features)
        The last weight vectors.
    b : ndarray of shape (n_classes,)
        The last biases.
    mistakes : list of int
        Number of mistakes (= updates) in each epoch.

    Notes
    -----
    Ties in the argmax go to the lowest class index, so at the start (all scores 0)
    class 0 is predicted. Every update adds ``x`` to one row and subtracts it from
    another, so the rows of ``W`` (and the entries of ``b``) always sum to zero. With
    ``n_classes=2`` this is a valid run, but not the same as
    :func:`~perceptrons.reference.averaged.perceptron`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b, mistakes = multiclass_perceptron(X, y, 3, epoch_orders(4, 1))
    >>> W.tolist(), b.tolist(), mistakes  # example 1: tie, class 0 predicted, correct
    ([[0.0, -1.0], [1.0, 1.0], [-1.0, 0.0]], [-1.0, 0.0, 1.0], [2])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    mistakes = []
    for order in _as_orders(orders):
        n_mistakes = 0
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
                n_mistakes += 1
        mistakes.append(n_mistakes)
    return W, b, mistakes


def multiclass_averaged_perceptron(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass averaged perceptron with a counter, as in Kuhlmann's slides.

    Kuhlmann's slides, "The averaged perceptron learning algorithm": ``w_k, b_k`` and
    auxiliary ``w̃_k, b̃_k`` start at 0, ``count <- 1``; on a mistake ``p != y``:
    ``w_p <- w_p - x; b_p <- b_p - 1; w̃_p <- w̃_p - count x; b̃_p <- b̃_p - count`` and
    ``w_y <- w_y + x; b_y <- b_y + 1; w̃_y <- w̃_y + count x; b̃_y <- b̃_y + count``;
    ``count <- count + 1`` after every example; finally
    ``w_k <- w_k - w̃_k / count; b_k <- b_k - b̃_k / count``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders)``.

    Returns
    -------
    W : ndarray of shape (n_classes, n_features)
        ``W - W_aux / count`` with ``count = N + 1`` at the end, i.e.
        ``(W_1 + ... + W_N) / (N + 1)``, the mean over ``W_0 = 0, W_1, ..., W_N``.
        Exact mean after every example: ``W * (N + 1) / N``.
    b : ndarray of shape (n_classes,)
        ``(b_1 + ... + b_N) / (N + 1)``; exact mean ``b * (N + 1) / N``.

    Notes
    -----
    The same ``N + 1`` as in Nguyen's averaged-perceptron note
    (:func:`~perceptrons.reference.averaged.averaged_perceptron_wb`): an update at the ``t``-th
    example happens with
    ``count = t``. All classes share the factor, so the argmax predictions equal those
    of the exact mean. Kuhlmann's slides print the weights and the auxiliary weights
    with the same symbol (the auxiliary ones in red); here they are ``W`` and
    ``W_aux``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b = multiclass_averaged_perceptron(X, y, 3, epoch_orders(4, 1))
    >>> (W * 5).round(12).tolist(), (b * 5).round(12).tolist()  # count = 5: S = 5 W
    ([[0.0, -3.0], [2.0, 3.0], [-2.0, 0.0]], [-3.0, 1.0, 2.0])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_aux = np.zeros((n_classes, X.shape[1]))
    b_aux = np.zeros(n_classes)
    count = 1
    for order in _as_orders(orders):
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W_aux[p] = W_aux[p] - count * x
                b_aux[p] = b_aux[p] - count
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
                W_aux[y[i]] = W_aux[y[i]] + count * x
                b_aux[y[i]] = b_aux[y[i]] + count
            count = count + 1
    return W - W_aux / count, b - b_aux / count


def multiclass_averaged_perceptron_naive(
    X: Matrix, y: np.ndarray, n_classes: int, orders: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Multiclass averaged perceptron, naive: a running sum after every example.

    The multiclass perceptron of Kuhlmann's slides combined with the naive averaging of
    the course notes on the voted and averaged perceptron (``w_s <- w_s + w^(i)`` after
    the ``i``-th example, updated or not), applied to every class's weights and bias.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Integer class codes in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders) >= 1``.

    Returns
    -------
    W_avg : ndarray of shape (n_classes, n_features)
        The exact mean ``(W_1 + ... + W_N) / N``.
    b_avg : ndarray of shape (n_classes,)
        The exact mean ``(b_1 + ... + b_N) / N``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    >>> y = np.array([0, 1, 2, 2])
    >>> W, b = multiclass_averaged_perceptron_naive(X, y, 3, epoch_orders(4, 1))
    >>> W.tolist(), b.tolist()
    ([[0.0, -0.75], [0.5, 0.75], [-0.5, 0.0]], [-0.75, 0.25, 0.5])
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    _require_examples(n_total)
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_sum = np.zeros((n_classes, X.shape[1]))
    b_sum = np.zeros(n_classes)
    for order in orders:
        for i in order:
            x = _row(X, i)
            p = int(np.argmax(W @ x + b))  # ties: lowest class index
            if p != y[i]:
                W[p] = W[p] - x
                b[p] = b[p] - 1
                W[y[i]] = W[y[i]] + x
                b[y[i]] = b[y[i]] + 1
            # after EVERY example, updated or not
            W_sum = W_sum + W
            b_sum = b_sum + b
    return W_sum / n_total, b_sum / n_total
