"""The feature-selection family: online learners that keep at most ``B`` features, each
round a base rule's update followed by ``Truncate(w, B)``.

Written eagerly, as the papers' pseudocode: every round the whole weight vector is
shrunk, projected and truncated (O(dimension) per round; the compiled kernels keep the
kept features in a heap and do O(nnz(x) log B), the same model). The input is augmented
with the bias feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept); the
intercept (the last coordinate) is never truncated, nor penalized.

``Truncate(W, B)`` (one key per feature)
    Among the features whose weight is nonzero in some class, keep the ``B`` with the
    best key and set every other feature's weights (all classes) to 0; ties go to the
    lower feature index.
PET (Wang, Zhao, Hoi & Jin 2014, Algorithm 1, ``"pet"``)
    On a mistake ``y w·x̃ <= 0``: ``w <- w + eta y x̃``, then ``Truncate(w, B)`` by
    ``|w_j|`` (largest kept).
OFS (the same paper, Algorithm 2, ``"fofs"``)
    On ``y w·x̃ < 1``: ``w̃ = (1 - λ eta) w + eta y x̃``; ``ŵ = min(1, 1 / (√λ ||w̃||))
    w̃``; ``w = Truncate(ŵ, B)`` by ``|w_j|`` (``λ`` the constant ``l2``; the shrinking
    and the norm are the feature weights').
SOFS (Wu, Hoi, Mei & Yu 2017, ``"sofs"``)
    AROW's diagonal update (Crammer, Kulesza & Dredze 2009): on ``l = 1 - y w·x̃ > 0``,
    ``β = 1 / (x̃ᵀ Σ x̃ + r)``, ``w <- w + l β y Σ x̃``, ``Σ_j <- Σ_j / (1 + Σ_j x̃_j² / r)``,
    then ``Truncate(w, B)`` by the variance ``Σ_j`` (smallest kept).
AdaGrad with truncation (``"adafobos-ofs"``, ``"adarda-ofs"``)
    AdaGrad's diagonal FOBOS or RDA update (Duchi, Hazan & Singer 2011; as
    :mod:`perceptrons.reference.adagrad` without L1), then ``Truncate`` by ``H_j = delta
    + sqrt(G_j)`` (largest kept). RDA's weights are recomputed from the statistics every
    round, ``w = Truncate(-eta u / H, B)``, among the features with ``G_j > 0``.

Multiclass (the single constraint against the best other class ``o``, ties to the
lowest; PET's is the argmax): the update moves ``w_y`` by ``+`` and ``w_o`` by ``-`` the
step (AROW: each by its own ``Σ``); a feature's key is summed over the classes; OFS's
penalty is on the whole ``W`` (``(1 - λ eta) W``, the Frobenius norm).

``sample_weight``: an example of weight ``s`` steps ``s`` times as far (AROW: ``r / s``;
AdaGrad: the gradient times ``s``) and OFS's shrinking counts it ``s`` times,
``(1 - λ eta)^s``; weight 0 skips it. The averaged model is the (weighted) mean of the
weights after every example.

References
----------
J. Wang, P. Zhao, S. C. H. Hoi and R. Jin, "Online feature selection and its
applications", IEEE Transactions on Knowledge and Data Engineering 26(3), 2014.

Y. Wu, S. C. H. Hoi, T. Mei and N. Yu, "Large-scale online feature selection for
ultra-high dimensional sparse data", ACM Transactions on Knowledge Discovery from
Data 11(4), 2017.

K. Crammer, A. Kulesza and M. Dredze, "Adaptive regularization of weight vectors",
NIPS 2009.

J. Duchi, E. Hazan and Y. Singer, "Adaptive subgradient methods for online learning
and stochastic optimization", JMLR 12, 2011.
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

__all__ = ["online_feature_selection", "truncate"]

_DEFAULTS = {
    "pet": {"eta": 1.0, "B": 100},
    "fofs": {"eta": 0.2, "l2": 0.01, "B": 100},
    "sofs": {"r": 1.0, "a": 1.0, "B": 100},
    "adafobos-ofs": {"eta": 1.0, "delta": 10.0, "B": 100},
    "adarda-ofs": {"eta": 1.0, "delta": 10.0, "B": 100},
}


def truncate(
    W: np.ndarray, key: np.ndarray, candidates: np.ndarray, B: int, *, largest: bool = True
) -> np.ndarray:
    """``Truncate(W, B)``: ``W`` (classes by features, no intercept column) with every
    feature but the ``B`` candidates of best ``key`` set to 0 in every class (``largest``:
    the largest keys are the best; ties to the lower index). A copy."""
    W = W.copy()
    chosen = [j for j in range(W.shape[1]) if candidates[j]]
    if len(chosen) > B:
        sign = -1.0 if largest else 1.0
        ranked = sorted(chosen, key=lambda j: (sign * key[j], j))
        W[:, ranked[B:]] = 0.0
    return W


def _summed(values: np.ndarray) -> np.ndarray:
    """Per feature (column), the sum over the classes (rows) in their order."""
    total = np.zeros(values.shape[1])
    for row in values:
        total = total + row
    return total


def online_feature_selection(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "fofs",
    constants: dict | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """A feature-selection rule (see the module), binary (``n_classes == 2``, labels 0/1
    mapped to -1/+1, one weight vector) or multiclass (one per class).

    Returns ``(W, b, W_mean, b_mean, updates)``: the final feature weights (shape ``(1,
    d)`` binary, ``(K, d)`` multiclass) and biases, their exact (weighted) mean after
    every example, and the number of updates.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    c = {**_DEFAULTS[rule], **(constants or {})}
    B = int(c["B"])
    d = X.shape[1] + 1
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    w = np.zeros((columns, d))
    sigma = np.full((columns, d), float(c.get("a", 1.0)))
    G = np.zeros((columns, d))
    u = np.zeros((columns, d))
    w_sum = np.zeros_like(w)
    total = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue
            x = np.append(_row(X, i), bias_value)
            scores = w @ x
            # The step's sign per class: direction[k] x̃ moves w_k.
            direction = np.zeros(columns)
            if columns == 1:
                label = 1.0 if y[i] == 1 else -1.0
                margin = label * scores[0]
                wrong = margin <= 0.0
                direction[0] = label
            else:
                gold = y[i]
                rest = scores.copy()
                rest[gold] = -np.inf
                other = int(np.argmax(rest))
                margin = scores[gold] - scores[other]
                wrong = int(np.argmax(scores)) != gold
                direction[gold], direction[other] = 1.0, -1.0
            update = wrong if rule == "pet" else margin < 1.0
            if update:
                updates += 1
                moved = direction != 0.0
                if rule == "pet":
                    w = w + c["eta"] * s[i] * np.outer(direction, x)
                elif rule == "fofs":
                    lam, eta = c["l2"], c["eta"]
                    w[:, :-1] = (1.0 - lam * eta) ** s[i] * w[:, :-1]
                    w = w + eta * s[i] * np.outer(direction, x)
                    norm = np.linalg.norm(w[:, :-1])
                    if norm > 0.0:
                        w[:, :-1] = min(1.0, 1.0 / (np.sqrt(lam) * norm)) * w[:, :-1]
                elif rule == "sofs":
                    variance = sum(sigma[k] @ (x * x) for k in range(columns) if moved[k])
                    r = c["r"] / s[i]
                    alpha = (1.0 - margin) / (variance + r)
                    for k in range(columns):
                        if moved[k]:
                            w[k] = w[k] + alpha * direction[k] * sigma[k] * x
                            sigma[k] = sigma[k] / (1.0 + sigma[k] * x * x / r)
                else:
                    eta, delta = c["eta"], c["delta"]
                    for k in range(columns):
                        if moved[k]:
                            g = -s[i] * direction[k] * x
                            G[k] = G[k] + g * g
                            if rule == "adafobos-ofs":
                                w[k] = w[k] - eta * (g / (delta + np.sqrt(G[k])))
                            else:
                                u[k] = u[k] + g
            if rule == "adarda-ofs":
                w = -c["eta"] * u / (c["delta"] + np.sqrt(G))
            # Truncate(W, B): every round (a round without an update changes nothing).
            features = w[:, :-1]
            candidates = np.any(features != 0.0, axis=0)
            largest = True
            if rule in ("pet", "fofs"):
                key = _summed(np.abs(features))
            elif rule == "sofs":
                key, largest = _summed(sigma[:, :-1]), False
            else:
                key = _summed(c["delta"] + np.sqrt(G[:, :-1]))
                if rule == "adarda-ofs":
                    candidates = np.any(G[:, :-1] > 0.0, axis=0)
            w[:, :-1] = truncate(features, key, candidates, B, largest=largest)
            w_sum = w_sum + s[i] * w
            total += s[i]
    _require_examples(_n_examples(orders))
    mean = w_sum / total
    return w[:, :-1], w[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), updates
