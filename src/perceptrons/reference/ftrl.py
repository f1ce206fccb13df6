"""FTRL-Proximal with per-coordinate learning rates and L1/L2 regularization, on the
hinge loss.

McMahan et al. (2013), Algorithm 1 ("Per-Coordinate FTRL-Proximal with L1 and L2
Regularization for Logistic Regression"), line by line, on the input augmented with
the bias feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept)::

    Input: parameters alpha, beta, lambda1, lambda2
    (for all i) initialize z_i = 0 and n_i = 0
    for t = 1 to T do
        Receive feature vector x_t and let I = {i | x_i != 0}
        For i in I compute
            w_{t,i} = 0                                              if |z_i| <= lambda1
            w_{t,i} = -((beta + sqrt(n_i)) / alpha + lambda2)^-1 (z_i - sgn(z_i) lambda1)
                                                                     otherwise
        Predict using the w_{t,i} computed above
        Observe label y_t
        for all i in I do
            g_i = (the loss's gradient with respect to w_i)
            sigma_i = (sqrt(n_i + g_i²) - sqrt(n_i)) / alpha
            z_i <- z_i + g_i - sigma_i w_{t,i}
            n_i <- n_i + g_i²

Here ``w`` is computed for every coordinate each round (not only ``I``: a coordinate
outside ``I`` has ``g_i = 0`` and keeps its ``z_i``, ``n_i`` and so its weight), and the
loss is the hinge loss ``max(0, 1 - y w·x̃)`` of every rule of this library, not the
paper's logistic loss: ``g = -y x̃`` where the loss is positive, 0 elsewhere; a sample
weight ``s`` multiplies it (weight 0 skips the example). The intercept, the last
coordinate, has its own ``z`` and ``n`` but no penalty (``lambda1 = lambda2 = 0``).

Multiclass (the single constraint against the best other class): one weight vector and
one ``z``, ``n`` per class; ``o`` is the highest-scoring class other than the gold ``y``
(ties to the lowest), the loss ``max(0, 1 - (w_y·x̃ - w_o·x̃))``, its gradient ``-x̃``
on ``w_y`` and ``+x̃`` on ``w_o``.

The averaged model is the (weighted) mean of the weights after every example (``w`` of
the ``z`` and ``n`` after its update).

References
----------
H. B. McMahan, G. Holt, D. Sculley, M. Young, D. Ebner, J. Grady, L. Nie, T. Phillips,
E. Davydov, D. Golovin, S. Chikkerur, D. Liu, M. Wattenberg, A. M. Hrafnkelsson, T.
Boulos and J. Kubica, "Ad click prediction: a view from the trenches", KDD 2013.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perceptrons.reference._common import (
    Matrix,
    _as_matrix,
    _as_orders,
    _class_codes,
    _dot,
    _hinge_coefficients,
    _n_examples,
    _require_examples,
    _row,
    _sample_weights,
)

__all__ = ["ftrl_proximal"]

_DEFAULTS = {"alpha": 0.1, "beta": 0.1, "l1": 0.3, "l2": 0.0}


def _weights(
    z: np.ndarray, n: np.ndarray, alpha: float, beta: float, l1: np.ndarray, l2: np.ndarray
) -> np.ndarray:
    """Algorithm 1's ``w_{t,i}`` for every coordinate (``l1``, ``l2`` per coordinate)."""
    w = np.zeros_like(z)
    active = np.abs(z) > l1
    w[active] = -(z[active] - np.sign(z[active]) * l1[active]) / (
        (beta + np.sqrt(n[active])) / alpha + l2[active]
    )
    return w


def ftrl_proximal(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    constants: dict | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """FTRL-Proximal (see the module), binary (``n_classes == 2``, labels 0/1 mapped to
    -1/+1, one weight vector) or multiclass (one per class).

    ``constants``: ``alpha``, ``beta``, ``l1`` and ``l2`` (those not given: the rule's
    defaults, 0.1, 0.1, 0.3 and 0). Returns ``(W, b, W_mean, b_mean, updates)``: the
    final feature weights (shape ``(1, d)`` binary, ``(K, d)`` multiclass) and biases,
    their exact (weighted) mean after every example, and the number of updates
    (examples of positive loss).
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    c = {**_DEFAULTS, **(constants or {})}
    alpha, beta = c["alpha"], c["beta"]
    d = X.shape[1] + 1  # the bias feature is the last coordinate
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    # lambda1 and lambda2 per coordinate: the intercept is not penalized.
    l1 = np.full(d, c["l1"])
    l2 = np.full(d, c["l2"])
    l1[-1] = l2[-1] = 0.0
    z = np.zeros((columns, d))
    n = np.zeros((columns, d))
    w_sum = np.zeros((columns, d))
    total = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = np.append(_row(X, i), bias_value)
            w = np.array([_weights(z[k], n[k], alpha, beta, l1, l2) for k in range(columns)])
            scores = np.array([_dot(w[k], x) for k in range(columns)])
            # The gradient's coefficients per class: g_k = coefficient[k] x̃.
            coefficient = _hinge_coefficients(scores, y[i], s[i])
            if np.any(coefficient != 0.0):
                updates += 1
            for k in range(columns):
                g = coefficient[k] * x
                sigma = (np.sqrt(n[k] + g * g) - np.sqrt(n[k])) / alpha
                z[k] = z[k] + g - sigma * w[k]
                n[k] = n[k] + g * g
            after = np.array([_weights(z[k], n[k], alpha, beta, l1, l2) for k in range(columns)])
            w_sum = w_sum + s[i] * after
            total += s[i]
    _require_examples(_n_examples(orders))
    w = np.array([_weights(z[k], n[k], alpha, beta, l1, l2) for k in range(columns)])
    mean = w_sum / total
    return w[:, :-1], w[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), updates
