"""The confidence-weighted family: a Gaussian over the weights, a mean and a covariance.

Each rule is written as its paper's pseudocode, on the input augmented with the bias
feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept: the bias is a weight with
a variance of its own), with ``μ`` the mean and ``Σ`` the covariance:

AROW (Crammer, Kulesza & Dredze 2009, Figure 1)
    ``m = μ·x̃``, ``v = x̃ᵀ Σ x̃``; if ``y m < 1``: ``β = 1 / (v + r)``, ``α = max(0, 1 -
    y m) β``, ``μ <- μ + α y Σ x̃``, ``Σ <- Σ - β Σ x̃ x̃ᵀ Σ``; ``Σ_0 = a I``.

The covariance update of each rule is ``Σ⁻¹ <- Σ⁻¹ + c x̃ x̃ᵀ`` for the ``c`` of the rule
(AROW: ``c = 1 / r``; by Sherman-Morrison this is ``Σ - β Σ x̃ x̃ᵀ Σ``), which gives
the two forms:

``covariance="full"``
    The paper's update, on the whole matrix.
``covariance="diagonal"``
    The diagonal approximation of Dredze, Crammer & Pereira (2008) and Crammer et al.
    (2009) for high-dimensional data: only the diagonal of ``Σ⁻¹`` is kept, and the
    update adds ``c x̃_j²`` to each ``1 / Σ_jj``.

Multiclass (Crammer, Dredze & Kulesza 2009, "Multi-class confidence weighted
algorithms", single constraint): one mean ``μ_k`` and covariance ``Σ_k`` per class; the
example is ``Φ(x, g) - Φ(x, o)``, ``g`` the gold class and ``o`` the highest-scoring
other class (ties to the lowest), so ``m = μ_g·x̃ - μ_o·x̃`` and ``v = x̃ᵀ Σ_g x̃ + x̃ᵀ
Σ_o x̃`` (the joint covariance is block-diagonal); the update moves ``μ_g`` by ``+α Σ_g
x̃`` and ``μ_o`` by ``-α Σ_o x̃``, and adds ``c x̃ x̃ᵀ`` to the precision of both
classes (the diagonal blocks of the joint update; its off-diagonal blocks are dropped,
which keeps the covariance block-diagonal).

``sample_weight``: an example of weight ``s`` counts its loss ``s`` times in the rule's
objective (AROW: ``r`` becomes ``r / s`` for it); weight 0 skips it. The averaged model
is the (weighted) mean of the means after every example.

References
----------
K. Crammer, A. Kulesza and M. Dredze, "Adaptive regularization of weight vectors",
NIPS 22, 2009.

M. Dredze, K. Crammer and F. Pereira, "Confidence-weighted linear classification", ICML
2008.

K. Crammer, M. Dredze and A. Kulesza, "Multi-class confidence weighted algorithms",
EMNLP 2009.
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
    _sample_weights,
)

__all__ = ["confidence_weighted"]


def _arow(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """AROW's ``(α, c)``: step ``α`` and precision increment ``c`` (0, 0: no update)."""
    if margin >= 1.0:
        return 0.0, 0.0
    r = constants["r"] / weight
    beta = 1.0 / (variance + r)
    return max(0.0, 1.0 - margin) * beta, 1.0 / r


_RULES = {"arow": _arow}
_DEFAULTS = {"arow": {"r": 1.0, "a": 1.0}}


def _add_precision(sigma: np.ndarray, x: np.ndarray, c: float, covariance: str) -> np.ndarray:
    """``Σ`` after ``Σ⁻¹ <- Σ⁻¹ + c x xᵀ``: Sherman-Morrison on the full matrix, or the
    diagonal of the precision."""
    if covariance == "full":
        sx = sigma @ x
        return sigma - (c / (1.0 + c * (x @ sx))) * np.outer(sx, sx)
    return np.diag(1.0 / (1.0 / np.diag(sigma) + c * x * x))


def confidence_weighted(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "arow",
    covariance: str = "full",
    constants: dict | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """A confidence-weighted rule (see the module), binary (``n_classes == 2``, labels
    0/1 mapped to -1/+1, one mean) or multiclass (one mean per class).

    Returns ``(W, b, W_mean, b_mean, updates)``: the final means of the feature weights
    (shape ``(1, d)`` binary, ``(K, d)`` multiclass) and of the biases, their exact
    (weighted) mean after every example, and the number of updates.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    values = {**_DEFAULTS[rule], **(constants or {})}
    step_of = _RULES[rule]
    d = X.shape[1] + 1  # the bias feature is the last coordinate
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    mu = np.zeros((columns, d))
    sigma = np.array([values["a"] * np.eye(d) for _ in range(columns)])
    mu_sum = np.zeros_like(mu)
    total = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = np.append(_row(X, i), bias_value)
            if columns == 1:
                label = 1.0 if y[i] == 1 else -1.0
                margin = label * (mu[0] @ x)
                variance = x @ sigma[0] @ x
                alpha, c = step_of(margin, variance, s[i], values)
                if alpha != 0.0 or c != 0.0:
                    mu[0] = mu[0] + alpha * label * (sigma[0] @ x)
                    sigma[0] = _add_precision(sigma[0], x, c, covariance)
                    updates += 1
            else:
                scores = mu @ x
                gold = y[i]
                rest = scores.copy()
                rest[gold] = -np.inf
                other = int(np.argmax(rest))
                margin = scores[gold] - scores[other]
                variance = x @ sigma[gold] @ x + x @ sigma[other] @ x
                alpha, c = step_of(margin, variance, s[i], values)
                if alpha != 0.0 or c != 0.0:
                    mu[gold] = mu[gold] + alpha * (sigma[gold] @ x)
                    mu[other] = mu[other] - alpha * (sigma[other] @ x)
                    sigma[gold] = _add_precision(sigma[gold], x, c, covariance)
                    sigma[other] = _add_precision(sigma[other], x, c, covariance)
                    updates += 1
            mu_sum = mu_sum + s[i] * mu
            total += s[i]
    _require_examples(_n_examples(orders))
    mean = mu_sum / total
    return mu[:, :-1], mu[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), updates
