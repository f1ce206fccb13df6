"""The second-order family: the second-order perceptron and the improved ellipsoid method.

Each rule is written as its paper's pseudocode, on the input augmented with the bias
feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept: the bias is a weight with
a statistic of its own). Both are mistake-driven: binary, a mistake is ``y w·x̃ <= 0``
(a score of zero is a mistake, as everywhere in :mod:`perceptrons.reference`);
multiclass, the highest-scoring class (ties to the lowest index) not being the gold one.

Second-order perceptron (Cesa-Bianchi, Conconi & Gentile 2005, Figure 1, primal form)
    ``v_0 = 0``, ``X_0`` empty. At trial ``t``: ``S_t = [X_{k-1} x̃_t]``, ``w_t = (a I +
    S_t S_tᵀ)⁻¹ v_{k-1}`` (the current example included), predict ``SGN(w_t·x̃_t)``; on
    a mistake ``v_k = v_{k-1} + y_t x̃_t`` and ``X_k = S_t``. The model after a trial
    (what ``coef_`` is, and what the average averages) is ``(a I + X_k X_kᵀ)⁻¹ v_k``,
    the prediction weights of the examples updated on. Multiclass (one correlation,
    shared, and one ``v`` per class): the scores of every class with the shared matrix;
    a mistake adds ``x̃`` to the gold class's ``v`` and subtracts it from the predicted
    class's. ``covariance="diagonal"`` keeps only the diagonal of ``X Xᵀ`` (per-feature
    sums of squares, as SOL's second-order perceptron does).

Improved ellipsoid method (Yang, Jin & Ye 2009; the constants as LIBOL's IELLIP)
    ``w_1 = 0``, ``P_1 = a I``, ``c_1 = c``. On a mistake with ``v_t = x̃ᵀ P_t x̃ > 0``:
    ``α_t = (1 - y_t w_t·x̃) / √v_t``, ``g_t = y_t x̃ / √v_t``, ``w_{t+1} = w_t + α_t P_t
    g_t``, ``P_{t+1} = (P_t - c_t P_t g_t g_tᵀ P_t) / (1 - c_t)``; after every trial
    ``c_{t+1} = b c_t``. Multiclass (single constraint): the example is ``Φ(x, gold) -
    Φ(x, other)`` against the predicted class, on the block-diagonal ``P`` of the joint
    space; the update keeps the diagonal blocks of the paper's update (the two classes'
    shrink, every block is divided by ``1 - c_t``; the off-diagonal blocks are dropped).
    ``covariance="diagonal"``: each ``P`` is diagonal, and after the paper's update only
    the diagonal of its inverse is kept (as the confidence family's diagonal forms do).

``sample_weight``: weight 0 skips the example (no decay of ``c`` either). The second-
order perceptron counts an example of weight ``s`` ``s`` times in the correlation and in
``v`` (``S_t S_tᵀ`` gains ``s x̃ x̃ᵀ``, ``v`` gains ``s y x̃``): a weighted ridge
regression of the labels. The ellipsoid method takes ``s`` times the step (``w_{t+1} =
w_t + s α_t P_t g_t``, the passive-aggressive rules' convention) and decays ``c`` by
``b^s``; the ellipsoid's cut is the unweighted one. The averaged model is the (weighted)
mean of the models after every example.

References
----------
N. Cesa-Bianchi, A. Conconi and C. Gentile, "A second-order perceptron algorithm",
SIAM Journal on Computing 34(3):640-668, 2005.

L. Yang, R. Jin and J. Ye, "Online learning by ellipsoid method", ICML 2009.
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

__all__ = ["improved_ellipsoid", "second_order_perceptron"]


def _predicted(scores: np.ndarray) -> int:
    return int(np.argmax(scores))  # ties to the lowest index


def _correlation(a: float, M: np.ndarray, covariance: str) -> np.ndarray:
    """``a I + M``, or its diagonal part."""
    if covariance == "full":
        return a * np.eye(M.shape[0]) + M
    return np.diag(a + np.diag(M))


def second_order_perceptron(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    covariance: str = "full",
    a: float = 1.0,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The second-order perceptron (see the module), binary (``n_classes == 2``, labels
    0/1 mapped to -1/+1) or multiclass.

    Returns ``(W, b, W_mean, b_mean, mistakes)``: the final model ``(a I + X Xᵀ)⁻¹ v``
    split into the feature weights (shape ``(1, d)`` binary, ``(K, d)`` multiclass) and
    the biases, its exact (weighted) mean after every example, and the mistakes.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    d = X.shape[1] + 1  # the bias feature is the last coordinate
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    v = np.zeros((columns, d))
    M = np.zeros((d, d))  # X_k X_kᵀ, the examples updated on (each s times)
    model_sum = np.zeros((columns, d))
    total = 0.0
    mistakes = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = np.append(_row(X, i), bias_value)
            S = _correlation(a, M + s[i] * np.outer(x, x), covariance)  # a I + S_t S_tᵀ
            w_t = np.linalg.solve(S, v.T).T
            if columns == 1:
                label = 1.0 if y[i] == 1 else -1.0
                if label * (w_t[0] @ x) <= 0.0:
                    v[0] = v[0] + s[i] * label * x
                    M = M + s[i] * np.outer(x, x)
                    mistakes += 1
            else:
                gold, predicted = y[i], _predicted(w_t @ x)
                if predicted != gold:
                    v[gold] = v[gold] + s[i] * x
                    v[predicted] = v[predicted] - s[i] * x
                    M = M + s[i] * np.outer(x, x)
                    mistakes += 1
            model = np.linalg.solve(_correlation(a, M, covariance), v.T).T
            model_sum = model_sum + s[i] * model
            total += s[i]
    _require_examples(_n_examples(orders))
    model = np.linalg.solve(_correlation(a, M, covariance), v.T).T
    mean = model_sum / total
    return model[:, :-1], model[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), mistakes


def _cut(P: np.ndarray, Pg: np.ndarray, c: float, covariance: str) -> np.ndarray:
    """``(P - c (P g)(P g)ᵀ) / (1 - c)``, the paper's update of one block, or the
    diagonal of its inverse (the block ``P`` is then diagonal)."""
    updated = (P - c * np.outer(Pg, Pg)) / (1.0 - c)
    if covariance == "full":
        return updated
    return np.diag(1.0 / np.diag(np.linalg.inv(updated)))


def improved_ellipsoid(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    covariance: str = "full",
    a: float = 1.0,
    b: float = 0.3,
    c: float = 0.1,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The improved ellipsoid method (see the module), binary (``n_classes == 2``,
    labels 0/1 mapped to -1/+1) or multiclass (one centre and one ellipsoid block per
    class).

    Returns ``(W, b, W_mean, b_mean, mistakes)`` as :func:`second_order_perceptron`.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    d = X.shape[1] + 1
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    w = np.zeros((columns, d))
    P = np.array([a * np.eye(d) for _ in range(columns)])
    c_t = c
    w_sum = np.zeros_like(w)
    total = 0.0
    mistakes = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue
            x = np.append(_row(X, i), bias_value)
            if columns == 1:
                label = 1.0 if y[i] == 1 else -1.0
                margin = label * (w[0] @ x)
                if margin <= 0.0:
                    mistakes += 1
                    v_t = x @ P[0] @ x
                    if v_t > 0.0:
                        alpha = (1.0 - margin) / np.sqrt(v_t)
                        g = label * x / np.sqrt(v_t)
                        Pg = P[0] @ g
                        w[0] = w[0] + s[i] * alpha * Pg
                        P[0] = _cut(P[0], Pg, c_t, covariance)
            else:
                scores = w @ x
                gold, other = y[i], _predicted(scores)
                if other != gold:
                    mistakes += 1
                    margin = scores[gold] - scores[other]
                    v_t = x @ P[gold] @ x + x @ P[other] @ x
                    if v_t > 0.0:
                        alpha = (1.0 - margin) / np.sqrt(v_t)
                        # g = (x̃ in the gold block, -x̃ in the other's) / √v_t
                        Pg_gold = P[gold] @ x / np.sqrt(v_t)
                        Pg_other = -(P[other] @ x) / np.sqrt(v_t)
                        w[gold] = w[gold] + s[i] * alpha * Pg_gold
                        w[other] = w[other] + s[i] * alpha * Pg_other
                        for k in range(columns):
                            if k == gold:
                                P[k] = _cut(P[k], Pg_gold, c_t, covariance)
                            elif k == other:
                                P[k] = _cut(P[k], Pg_other, c_t, covariance)
                            else:
                                P[k] = P[k] / (1.0 - c_t)
            c_t = c_t * b ** s[i]
            w_sum = w_sum + s[i] * w
            total += s[i]
    _require_examples(_n_examples(orders))
    mean = w_sum / total
    return w[:, :-1], w[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), mistakes
