"""The first-order rules: ALMA_2 and online gradient descent on the hinge loss, plain and
with an L1 penalty (FOBOS, truncated gradient).

Each rule is written as its paper's pseudocode, on the input augmented with the bias
feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept: the bias is one more
weight), with ``w`` the weights:

ALMA_2 (Gentile 2001, Figure 1 with ``p = 2``, the approximate large margin algorithm)
    ``w_1 = 0``, ``k = 1``. For each example: ``x̂ = x̃ / ||x̃||``; ``γ_k = B /
    sqrt(k)``; if ``y w_k·x̂ <= (1 - α) γ_k``: ``η_k = C / sqrt(k)``, ``w' = w_k + η_k
    y x̂``, ``w_{k+1} = w' / max(1, ||w'||)``, ``k <- k + 1``. The constants are
    ``alpha`` (``α``), ``B`` and ``step`` (the paper's ``C``). An example with ``x̃ =
    0`` cannot be normalized and is skipped (no update).
Online gradient descent (Zinkevich 2003, "Greedy projection" on an unconstrained set)
    ``w_1 = 0``. For the ``t``-th example (``t`` from 1): if the hinge loss ``max(0, 1 -
    y w·x̃)`` is positive, ``w <- w + η_t y x̃`` (minus its gradient) with ``η_t = eta /
    t**power_t``.
FOBOS with L1 (Duchi & Singer 2009, ``"fobos-l1"``)
    The forward-backward splitting update (section 3.1, ``r(w) = λ ||w||_1``): OGD's
    gradient step, ``w_{t+1/2} = w_t - η_t g_t``, then the proximal step of ``η_t
    λ ||w||_1``: every feature weight ``w_j <- sign(w_j) max(0, |w_j| - η_t λ)`` (the
    intercept is not penalized). The constant ``l1`` is ``λ``.
Truncated gradient (Langford, Li & Zhang 2009, ``"stg"``)
    The update of section 3 with ``θ = ∞`` (the simple form): OGD's gradient step every
    round; every ``K``-th round (``K`` the constant ``k``),
    ``T1(w_j, α, θ)`` on every feature weight with the gravity ``α = K η_t λ`` and ``θ
    = ∞``, which is ``sign(w_j) max(0, |w_j| - α)``; the other rounds nothing. ``K =
    1`` is FOBOS with L1. The rounds are counted from the last truncation, over epochs.

Multiclass (single constraint against the best other class): one weight vector per
class; with ``g`` the gold class and ``o`` the highest-scoring other class (ties to the
lowest), the margin is ``w_g·x - w_o·x`` (ALMA: with the normalized ``x̂``); an update
adds the step times the example to ``w_g`` and subtracts it from ``w_o``. ALMA projects
each of the two on the unit ball on its own and counts one update.

``sample_weight``: an example of weight ``s`` steps ``s`` times as far (ALMA: ``s η_k``
before the projection; OGD: ``s η_t``) and counts ``s`` times in the mean; it advances
``k`` and ``t`` by one whatever its weight; weight 0 skips it (no ``t`` either). The
averaged model is the (weighted) mean of the weights after every example. The L1
penalty is the round's too, ``s`` times: FOBOS shrinks by ``s η_t λ``; truncated
gradient's ``K`` counts rounds (examples of positive weight) and its gravity is ``η_t λ``
times the total weight of the ``K`` rounds since the last truncation (``K η_t λ``
unweighted; with ``K = 1`` FOBOS's ``s η_t λ``).

References
----------
C. Gentile, "A new approximate maximal margin classification algorithm", Journal of
Machine Learning Research 2:213-242, 2001.

M. Zinkevich, "Online convex programming and generalized infinitesimal gradient ascent",
ICML 2003.

J. Duchi and Y. Singer, "Efficient online and batch learning using forward backward
splitting", Journal of Machine Learning Research 10:2899-2934, 2009.

J. Langford, L. Li and T. Zhang, "Sparse online learning via truncated gradient", Journal
of Machine Learning Research 10:777-801, 2009.
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

__all__ = ["first_order_online"]

_DEFAULTS = {
    "alma": {"alpha": 0.9, "B": 1.0 / 0.9, "step": np.sqrt(2.0)},
    "ogd": {"eta": 1.0, "power_t": 0.5},
    "fobos-l1": {"eta": 1.0, "power_t": 0.5, "l1": 1e-3},
    "stg": {"eta": 1.0, "power_t": 0.5, "l1": 1e-3, "k": 1},
}


def _truncate(w: np.ndarray, alpha: float) -> np.ndarray:
    """``T1(w_j, α, θ = ∞) = sign(w_j) max(0, |w_j| - α)`` on every feature weight (every
    class's), the intercept (the last coordinate) untouched."""
    out = w.copy()
    out[:, :-1] = np.sign(w[:, :-1]) * np.maximum(np.abs(w[:, :-1]) - alpha, 0.0)
    return out


def _constraint(w: np.ndarray, x: np.ndarray, code: int) -> tuple[float, list]:
    """``(margin, moved)``: the example's margin and the ``(class, direction)`` pairs an
    update moves. Binary (one row of ``w``, code 1 is +1): ``y w·x`` and ``[(0, y)]``;
    multiclass: ``w_g·x - w_o·x`` and ``[(g, +1), (o, -1)]``."""
    if w.shape[0] == 1:
        label = 1.0 if code == 1 else -1.0
        return label * (w[0] @ x), [(0, label)]
    scores = w @ x
    rest = scores.copy()
    rest[code] = -np.inf
    other = int(np.argmax(rest))
    return scores[code] - scores[other], [(code, 1.0), (other, -1.0)]


def first_order_online(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "alma",
    constants: dict | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """A first-order rule (``"alma"``, ``"ogd"``, ``"fobos-l1"`` or ``"stg"``, see the
    module), binary
    (``n_classes == 2``, labels 0/1 mapped to -1/+1, one weight vector) or multiclass
    (one per class).

    Returns ``(W, b, W_mean, b_mean, updates)``: the final feature weights (shape ``(1,
    d)`` binary, ``(K, d)`` multiclass) and biases, their exact (weighted) mean after
    every example, and the number of updates.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    values = {**_DEFAULTS[rule], **(constants or {})}
    d = X.shape[1] + 1  # the bias feature is the last coordinate
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    w = np.zeros((columns, d))
    w_sum = np.zeros_like(w)
    total = 0.0
    k = 1  # ALMA's update counter
    t = 0  # OGD's examples
    rounds, gravity = 0, 0.0  # truncated gradient's rounds since its last truncation, their weight
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = np.append(_row(X, i), bias_value)
            if rule == "alma":
                norm = np.linalg.norm(x)
                if norm > 0.0:
                    x_hat = x / norm
                    margin, moved = _constraint(w, x_hat, y[i])
                    gamma = values["B"] / np.sqrt(k)
                    if margin <= (1.0 - values["alpha"]) * gamma:
                        eta = values["step"] / np.sqrt(k)
                        for c, direction in moved:
                            w_new = w[c] + s[i] * eta * direction * x_hat
                            w[c] = w_new / max(1.0, np.linalg.norm(w_new))
                        k += 1
                        updates += 1
            else:
                t += 1
                margin, moved = _constraint(w, x, y[i])
                if max(0.0, 1.0 - margin) > 0.0:
                    eta = values["eta"] / t ** values["power_t"]
                    for c, direction in moved:
                        w[c] = w[c] + s[i] * eta * direction * x
                    updates += 1
                eta = values["eta"] / t ** values["power_t"]
                if rule == "fobos-l1":
                    w = _truncate(w, eta * values["l1"] * s[i])
                elif rule == "stg":
                    rounds += 1
                    gravity += s[i]
                    if rounds == values["k"]:
                        w = _truncate(w, eta * values["l1"] * gravity)
                        rounds, gravity = 0, 0.0
            w_sum = w_sum + s[i] * w
            total += s[i]
    _require_examples(_n_examples(orders))
    mean = w_sum / total
    return w[:, :-1], w[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), updates
