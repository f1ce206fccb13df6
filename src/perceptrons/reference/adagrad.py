"""The adagrad family: per-feature steps from each feature's gradient history, on the
hinge loss.

Each rule is written as its paper's pseudocode, on the input augmented with the bias
feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept), every round updating the
whole vector (the compiled kernels apply the rounds' L1 steps lazily, which is the same
model). The hinge loss ``l = max(0, 1 - y w·x̃)`` has the subgradient ``g = -y x̃``
where ``l > 0``, and 0 elsewhere; a sample weight ``s`` multiplies it.

AdaGrad, composite mirror descent ("ada-fobos")
    Duchi, Hazan & Singer (2011), section 1.2 and the diagonal updates of section 5.1:
    ``G <- G + g²`` (elementwise), ``H = δ + sqrt(G)``, then ``w <- sign(w - η g / H)
    [|w - η g / H| - λ η / H]_+`` (a round of weight ``s``: ``λ s``). The L1 penalty
    ``λ`` is on the feature weights, not on the intercept.
AdaGrad, regularized dual averaging ("ada-rda")
    ``u <- u + g``, ``G <- G + g²``, ``t <- t + s``, then ``w = -sign(u) η [|u| - λ
    t]_+ / H`` (the paper's ``w_{t+1,i} = sign(-ḡ_i) η t / H_ii [|ḡ_i| - λ]_+`` with
    ``ḡ = u / t``); the intercept again unpenalized.
NAG (Ross, Mineiro & Langford 2013, Algorithm 2, "nag")
    Per coordinate a scale ``s_i`` (the largest ``|x̃_i|`` so far) and ``G_i``; ``N``
    and ``t``. Each round: where ``|x̃_i| > s_i``: ``w_i <- w_i s_i / |x̃_i|``, ``s_i <-
    |x̃_i|``; predict ``w·x̃``; ``t <- t + s``, ``N <- N + s Σ_i x̃_i² / s_i²``; ``G_i
    <- G_i + g_i²`` and ``w_i <- w_i - η sqrt(t / N) g_i / (s_i sqrt(G_i))`` where
    ``g_i ≠ 0``.

Multiclass (the single constraint against the best other class): one weight vector and
one set of statistics per class (NAG's scales, ``N`` and ``t`` describe the input and
are shared); ``o`` is the highest-scoring class other than the gold ``y`` (ties to the
lowest), the loss ``max(0, 1 - (w_y·x̃ - w_o·x̃))``, its gradient ``-x̃`` on ``w_y`` and
``+x̃`` on ``w_o``. The L1 step and NAG's rescaling apply to every class.

``sample_weight``: the gradient of an example of weight ``s`` is multiplied by ``s``, and
it counts ``s`` rounds in ``t`` (and in NAG's ``N``, and for the L1 penalty); weight 0
skips it. The averaged model is the (weighted) mean of the weights after every example.

References
----------
J. Duchi, E. Hazan and Y. Singer, "Adaptive subgradient methods for online learning
and stochastic optimization", JMLR 12, 2011.

S. Ross, P. Mineiro and J. Langford, "Normalized online learning", UAI 2013.
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

__all__ = ["adaptive_gradient"]

_DEFAULTS = {
    "ada-fobos": {"eta": 1.0, "delta": 10.0, "l1": 0.0},
    "ada-rda": {"eta": 1.0, "delta": 10.0, "l1": 0.0},
    "nag": {"eta": 0.5},
}


def _shrink(v: np.ndarray, amount: np.ndarray | float) -> np.ndarray:
    """``sign(v) [|v| - amount]_+``, elementwise."""
    return np.sign(v) * np.maximum(np.abs(v) - amount, 0.0)


def adaptive_gradient(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "ada-fobos",
    constants: dict | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """An adagrad-family rule (see the module), binary (``n_classes == 2``, labels 0/1
    mapped to -1/+1, one weight vector) or multiclass (one per class).

    Returns ``(W, b, W_mean, b_mean, updates)``: the final feature weights (shape ``(1,
    d)`` binary, ``(K, d)`` multiclass) and biases, their exact (weighted) mean after
    every example, and the number of updates (examples of positive loss).
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    c = {**_DEFAULTS[rule], **(constants or {})}
    eta = c["eta"]
    d = X.shape[1] + 1  # the bias feature is the last coordinate
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    w = np.zeros((columns, d))
    G = np.zeros((columns, d))
    u = np.zeros((columns, d))
    scale = np.zeros(d)
    N = 0.0
    t = 0.0
    penalized = np.ones(d)
    penalized[-1] = 0.0  # the intercept is not penalized
    w_sum = np.zeros_like(w)
    total = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = np.append(_row(X, i), bias_value)
            if rule == "nag":
                grown = np.abs(x) > scale
                for k in range(columns):
                    w[k, grown] = w[k, grown] * (scale[grown] / np.abs(x[grown]))
                scale[grown] = np.abs(x[grown])
            scores = np.array([_dot(w[k], x) for k in range(columns)])
            # The gradient's coefficients per class: g_k = coefficient[k] x̃.
            coefficient = _hinge_coefficients(scores, y[i], s[i])
            t += s[i]
            if rule == "nag":
                seen = x != 0.0
                N += s[i] * _dot(x[seen] / scale[seen], x[seen] / scale[seen])
            if np.any(coefficient != 0.0) and (rule != "nag" or N > 0.0):
                updates += 1
            for k in range(columns):
                g = coefficient[k] * x
                if rule == "ada-fobos":
                    G[k] = G[k] + g * g
                    H = c["delta"] + np.sqrt(G[k])
                    w[k] = _shrink(w[k] - eta * (g / H), c["l1"] * s[i] * eta * penalized / H)
                elif rule == "ada-rda":
                    u[k] = u[k] + g
                    G[k] = G[k] + g * g
                    H = c["delta"] + np.sqrt(G[k])
                    w[k] = -eta * _shrink(u[k], c["l1"] * t * penalized) / H
                elif N > 0.0:
                    nonzero = g != 0.0
                    G[k, nonzero] = G[k, nonzero] + g[nonzero] ** 2
                    normalized = g[nonzero] / (scale[nonzero] * np.sqrt(G[k, nonzero]))
                    w[k, nonzero] = w[k, nonzero] - eta * np.sqrt(t / N) * normalized
            w_sum = w_sum + s[i] * w
            total += s[i]
    _require_examples(_n_examples(orders))
    mean = w_sum / total
    return w[:, :-1], w[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), updates
