"""Logistic regression with an optional Gaussian prior: trained online by SGD, and by batch
("non-stochastic") gradient ascent, as in Cohen's lecture cited below.

References
----------
W. Cohen, "The Perceptron", lecture slides, 10-601, Carnegie Mellon University.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from perceptrons.reference._common import (
    Matrix,
    _as_matrix,
    _as_orders,
    _class_codes,
    _n_examples,
    _require_examples,
    _row,
    _sample_weights,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = ["logistic_regression_batch", "logistic_regression_sgd"]


def _sigmoid(z: float) -> float:
    """``1 / (1 + exp(-z))`` without overflowing ``exp`` for large ``|z|``."""
    if z >= 0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


def _softmax(z: np.ndarray) -> np.ndarray:
    """``exp(z_k) / sum_j exp(z_j)``, shifted by ``max(z)`` so that ``exp`` cannot overflow."""
    e = np.exp(z - z.max())
    return e / e.sum()


def logistic_regression_sgd(
    X: Matrix,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    learning_rate: float,
    l2: float,
    n_classes: int | None = None,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | float, np.ndarray, np.ndarray | float, list[float]]:
    """Logistic regression trained online by SGD, with an optional Gaussian prior.

    Cohen's lecture, "Stochastic gradients (SGD) for logistic regression": for each
    example ``p = (1 + exp(-x·w))^-1; w <- w + λ (y - p) x``, and its "Regularization"
    slides: the prior ``w^j ~ N(0, σ²)`` adds ``- λ w^j / σ²`` to the update of every
    weight (the MAP estimate). With ``l2 = 1/σ²`` one example does, both terms at the
    old ``w``::

        p = σ(w·x + b)
        w = (1 - λ l2) w + λ (y - p) x      # = w + λ (y - p) x - λ w / σ²
        b = b + λ (y - p)                   # the intercept has no prior

    Multinomial (``n_classes`` given): ``p = softmax(W x + b)`` and, for every class
    ``k``, ``W[k] = (1 - λ l2) W[k] + λ ([y = k] - p_k) x; b[k] += λ ([y = k] - p_k)``:
    the same gradient of the log conditional likelihood, one row per class.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Binary (``n_classes=None``): labels in ``{0, 1}``, as in the lecture.
        Multinomial: integer class codes in ``0 .. n_classes - 1``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, ``N = sum(len(o) for o in orders) >= 1``.
    learning_rate : float
        ``λ``, constant.
    l2 : float
        ``1 / σ²``, the strength of the prior (0: none).
    n_classes : int or None, default=None
        ``None`` for the binary model, else the number of classes ``K``.
    sample_weight : ndarray of shape (n_samples,), default=None
        Example ``i`` of weight ``s_i``: ``w = (1 - λ l2) ** s_i * w + λ s_i (y - p) x``
        (the gradient step ``s_i`` times as large, the prior's decay applied ``s_i``
        times), its log-loss and its weights in the mean counted ``s_i`` times (the mean
        becomes ``Σ s_t w_t / Σ s_t``); weight 0 skips the example. None: every weight 1.

    Returns
    -------
    w : ndarray of shape (n_features,) or (n_classes, n_features)
        The last weights ``w_N``.
    b : float or ndarray of shape (n_classes,)
        The last intercept(s).
    w_mean : ndarray, same shape as ``w``
        The exact mean ``(w_1 + ... + w_N) / N`` of the weights after every example,
        from a naive running sum.
    b_mean : float or ndarray of shape (n_classes,)
        The exact mean of the intercepts.
    losses : list of float
        Per epoch, the mean log-loss ``-log p(y | x)`` of its examples, each computed
        with the weights before that example's update.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> w, b, w_mean, b_mean, losses = logistic_regression_sgd(
    ...     X, np.array([1, 0]), epoch_orders(2, 1), learning_rate=1.0, l2=0.0)
    >>> w.tolist(), b  # p = σ(0) on x_1: +0.5 x_1; then p = σ(b) = σ(0.5) on x_2
    ([0.5, -0.6224593312018546], -0.1224593312018546)
    >>> w_mean.tolist(), round(losses[0], 6)  # ([0.5, 0] + [0.5, -0.62]) / 2
    ([0.5, -0.3112296656009273], 0.833612)
    """
    X = _as_matrix(X)
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    _require_examples(n_total)
    decay = 1.0 - learning_rate * l2
    s = _sample_weights(sample_weight, X.shape[0])
    total = 0.0  # Σ s_t over the examples seen
    # Multinomial: arrays per class; binary: one weight vector, a scalar b and p.
    w: np.ndarray
    b: np.ndarray | float
    p: np.ndarray | float
    if n_classes is not None:  # multinomial
        y = _class_codes(y, n_classes)
        w, b = np.zeros((n_classes, X.shape[1])), np.zeros(n_classes)
    else:
        y = np.asarray(y, dtype=np.float64).ravel()
        if not np.all((y == 0.0) | (y == 1.0)):
            raise ValueError("binary labels must be 0 or 1")
        w, b = np.zeros(X.shape[1]), 0.0
    w_sum, b_sum = np.zeros_like(w), np.zeros_like(b)
    losses = []
    for order in orders:
        epoch_loss = 0.0
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = _row(X, i)
            rate = learning_rate * s[i]
            shrink = decay ** s[i]
            if n_classes is not None:
                z = w @ x + b
                p = _softmax(z)
                target = np.zeros(n_classes)
                target[y[i]] = 1.0
                epoch_loss += s[i] * (np.logaddexp.reduce(z) - z[y[i]])  # -log p[y]
                w = shrink * w + rate * np.outer(target - p, x)
                b = b + rate * (target - p)
            else:
                z = w @ x + b
                p = _sigmoid(z)
                epoch_loss += s[i] * (np.logaddexp(0.0, z) - y[i] * z)  # -log p(y | x)
                w = shrink * w + rate * (y[i] - p) * x
                b = b + rate * (y[i] - p)
            # after EVERY example, counted s_i times
            w_sum = w_sum + s[i] * w
            b_sum = b_sum + s[i] * b
            total += s[i]
        losses.append(float(epoch_loss / max(len(order), 1)))
    if sample_weight is None:
        total = float(n_total)
    if n_classes is None:
        return w, float(b), w_sum / total, float(b_sum / total), losses
    return w, b, w_sum / total, b_sum / total, losses


def _log_likelihood(
    X: np.ndarray | sp.csr_matrix,
    y: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | float,
    s: np.ndarray,
    n_classes: int | None,
) -> float:
    """``Σ_i s_i log P(y_i | x_i, w, b)``, one example at a time."""
    total = 0.0
    for i in range(X.shape[0]):
        z = w @ _row(X, i) + b
        if n_classes is not None:
            total += s[i] * (z[y[i]] - np.logaddexp.reduce(z))
        else:
            total += s[i] * (y[i] * z - np.logaddexp(0.0, z))
    return float(total)


def logistic_regression_batch(
    X: Matrix,
    y: np.ndarray,
    steps: Sequence[float],
    prior_variance: float | None = None,
    n_classes: int | None = None,
    sample_weight: np.ndarray | None = None,
    fit_intercept: bool = True,
) -> tuple[np.ndarray, np.ndarray | float, list[float]]:
    """Logistic regression by batch gradient ascent, with an optional Gaussian prior.

    Cohen's lecture, "Logistic regression via gradient ascent" and "Non-stochastic
    gradient descent": start with ``w = 0``; then, for each step ``ε`` of ``steps``,
    "for all j set" (every weight from the *old* ``w``, then all at once)::

        p_i = (1 + exp(-(w·x_i + b)))^-1                       for every example i
        w_j = w_j + ε Σ_i x_ij (y_i - p_i) - ε w_j / σ²         for every feature j
        b   = b + ε Σ_i (y_i - p_i)                            (no prior on b)

    (the regularization slides' MAP update; without ``prior_variance`` the last term
    is absent). Multinomial (``n_classes`` given): ``p_i = softmax(W x_i + b)`` and
    every class ``k`` gets ``W[k, j] += ε Σ_i x_ij ([y_i = k] - p_ik) - ε W[k, j] / σ²``
    and ``b[k] += ε Σ_i ([y_i = k] - p_ik)``. The steps are given: the lecture's stopping
    rule ("if no improvement ... stop") is left to the caller, who can read it off the
    returned objectives.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or sparse matrix
        Training examples.
    y : ndarray of shape (n_samples,)
        Binary (``n_classes=None``): labels in ``{0, 1}``, as in the lecture.
        Multinomial: integer class codes in ``0 .. n_classes - 1``.
    steps : sequence of float
        ``ε`` of each iteration (e.g. ``[ε] * T`` for a fixed step).
    prior_variance : float or None, default=None
        ``σ²`` of the prior ``w_j ~ N(0, σ²)``; None: no prior.
    n_classes : int or None, default=None
        ``None`` for the binary model, else the number of classes ``K``.
    sample_weight : ndarray of shape (n_samples,), default=None
        Example ``i`` of weight ``s_i`` counts ``s_i`` times in every sum over the
        examples (``Σ_i s_i x_ij (y_i - p_i)``, the likelihood): an integer weight is the
        example repeated. None: every weight 1.
    fit_intercept : bool, default=True
        Learn ``b``; otherwise it stays 0.

    Returns
    -------
    w : ndarray of shape (n_features,) or (n_classes, n_features)
        The weights after the last step.
    b : float or ndarray of shape (n_classes,)
        The intercept(s).
    objectives : list of float
        ``LL(w) = Σ_i s_i log P(y_i | x_i, w, b) - Σ_j w_j² / (2 σ²)`` (the MAP objective,
        the prior's term without a prior dropped) before the first step and after each.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> w, b, objectives = logistic_regression_batch(X, np.array([1, 0]), steps=[1.0])
    >>> w.tolist(), b  # p = σ(0) = 0.5 for both: Σ_i x_i (y_i - p_i) = [0.5, -0.5]
    ([0.5, -0.5], 0.0)
    >>> [round(v, 6) for v in objectives]  # 2 log 0.5, then 2 log σ(0.5)
    [-1.386294, -0.948154]
    """
    X = _as_matrix(X)
    s = _sample_weights(sample_weight, X.shape[0])
    decay = 0.0 if prior_variance is None else 1.0 / prior_variance  # 1 / σ²
    w: np.ndarray
    b: np.ndarray | float
    if n_classes is not None:  # multinomial
        y = _class_codes(y, n_classes)
        w, b = np.zeros((n_classes, X.shape[1])), np.zeros(n_classes)
    else:
        y = np.asarray(y, dtype=np.float64).ravel()
        if not np.all((y == 0.0) | (y == 1.0)):
            raise ValueError("binary labels must be 0 or 1")
        w, b = np.zeros(X.shape[1]), 0.0

    def objective() -> float:
        return _log_likelihood(X, y, w, b, s, n_classes) - decay * float(np.sum(w * w)) / 2

    objectives = [objective()]
    for step in steps:
        # Σ_i x_ij (y_i - p_i) for every j, all p_i from the same (old) weights.
        grad_w, grad_b = np.zeros_like(w), np.zeros_like(b)
        for i in range(X.shape[0]):
            x = _row(X, i)
            if n_classes is not None:
                probs = _softmax(w @ x + b)
                target = np.zeros(n_classes)
                target[y[i]] = 1.0
                grad_w = grad_w + s[i] * np.outer(target - probs, x)
                grad_b = grad_b + s[i] * (target - probs)
            else:
                p_i = _sigmoid(float(w @ x + b))
                grad_w = grad_w + s[i] * (y[i] - p_i) * x
                grad_b = grad_b + s[i] * (y[i] - p_i)
        w = w + step * grad_w - step * w * decay
        if fit_intercept:
            b = b + step * grad_b
        objectives.append(objective())
    if n_classes is None:
        return w, float(b), objectives
    return w, b, objectives
