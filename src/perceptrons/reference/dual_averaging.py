"""The dual-averaging family: regularized dual averaging (RDA) on the hinge loss.

Xiao (2010), Algorithm 1, on the input augmented with the bias feature (``x̃ = [x,
1]``, or ``[x, 0]`` without an intercept), every round recomputing the whole vector (the
compiled kernels recompute only the weights each example reads, and all of them at the
end of an epoch, which is the same model). With ``w_1 = 0``, round ``t``:

1. the subgradient ``g_t`` of the hinge loss ``l = max(0, 1 - y w_t·x̃)`` at ``w_t``:
   ``-y x̃`` where ``l > 0``, else 0 (a sample weight ``s`` multiplies it);
2. the average ``ḡ_t = ((t - 1) / t) ḡ_{t-1} + g_t / t``, kept here as the sum ``u_t =
   t ḡ_t`` (with sample weights, ``t`` is the sum of the weights so far);
3. ``w_{t+1} = argmin_w {<ḡ_t, w> + Ψ(w) + (β_t / t) h(w)}``, in closed form:

``"rda"``
    ``Ψ(w) = (σ/2) ||w||²``, ``β_t = 0``: ``w_{t+1} = -ḡ_t / σ = -u_t / (σ t)``.
``"rda-l1"``
    ``Ψ(w) = λ ||w||₁ + (σ/2) ||w||²``, ``β_t = 0``: ``w_{t+1,j} = -(1/σ) sign(ḡ_j)
    [|ḡ_j| - λ]_+ = -sign(u_j) [|u_j| - λ t]_+ / (σ t)``.
``"erda-l1"`` (the enhanced L1-RDA of section 6)
    ``Ψ(w) = λ ||w||₁``, ``h(w) = ½ ||w||²``, ``β_t = γ sqrt(t)``, the threshold
    ``λ_t = λ + γ ρ / sqrt(t)``: ``w_{t+1,j} = -(sqrt(t) / γ) sign(ḡ_j) [|ḡ_j| -
    λ_t]_+ = -sign(u_j) [|u_j| - λ t - γ ρ sqrt(t)]_+ / (γ sqrt(t))``.

The intercept (the last coordinate) is not penalized (no ``λ``, no ``ρ``) and is divided
as the others.

Multiclass (the single constraint against the best other class): one weight vector and
one sum ``u`` per class; ``o`` is the highest-scoring class other than the gold ``y``
(ties to the lowest), the loss ``max(0, 1 - (w_y·x̃ - w_o·x̃))``, its gradient ``-x̃`` on
``w_y`` and ``+x̃`` on ``w_o``.

``sample_weight``: the gradient of an example of weight ``s`` is multiplied by ``s``, and
it counts ``s`` rounds in ``t``; weight 0 skips it.

References
----------
L. Xiao, "Dual averaging methods for regularized stochastic learning and online
optimization", JMLR 11, 2010.
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
    _row,
    _sample_weights,
)

__all__ = ["regularized_dual_averaging"]

# The defaults of the rule table (perceptrons.linear._update_rules).
_DEFAULTS = {
    "rda": {"sigma": 0.003},
    "rda-l1": {"sigma": 0.003, "l1": 0.0001},
    "erda-l1": {"gamma": 1.0, "rho": 0.0, "l1": 0.0001},
}


def _weights(u: np.ndarray, t: float, rule: str, c: dict) -> np.ndarray:
    """``w_{t+1}`` from ``u_t`` and ``t`` (rows: classes; the last column the
    intercept's, unpenalized)."""
    if t == 0.0:
        return np.zeros_like(u)  # w_1 = 0
    if rule == "erda-l1":
        scale = c["gamma"] * np.sqrt(t)
        threshold = c["l1"] * t + c["gamma"] * c["rho"] * np.sqrt(t)
    else:
        scale = c["sigma"] * t
        threshold = c.get("l1", 0.0) * t
    thresholds = np.full(u.shape[1], threshold)
    thresholds[-1] = 0.0
    shrunk = np.sign(u) * np.maximum(np.abs(u) - thresholds, 0.0)
    return -shrunk / scale + 0.0  # (+0.0: no negative zeros)


def regularized_dual_averaging(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "rda",
    constants: dict | None = None,
    fit_intercept: bool = True,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """A dual-averaging rule (see the module), binary (``n_classes == 2``, labels 0/1
    mapped to -1/+1, one weight vector) or multiclass (one per class).

    Returns ``(W, b, updates)``: the final feature weights (shape ``(1, d)`` binary,
    ``(K, d)`` multiclass), the biases, and the number of updates (examples of positive
    loss). There is no averaged model: every weight moves every round.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    c = {**_DEFAULTS[rule], **(constants or {})}
    d = X.shape[1] + 1  # the bias feature is the last coordinate
    bias_value = 1.0 if fit_intercept else 0.0
    columns = 1 if n_classes == 2 else n_classes
    u = np.zeros((columns, d))
    t = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = np.append(_row(X, i), bias_value)
            w = _weights(u, t, rule, c)
            scores = np.array([_dot(w[k], x) for k in range(columns)])
            # The gradient's coefficients per class: g_k = coefficient[k] x̃.
            coefficient = _hinge_coefficients(scores, y[i], s[i])
            if np.any(coefficient != 0.0):
                updates += 1
            u = u + coefficient[:, None] * x
            t += s[i]
    w = _weights(u, t, rule, c)
    return w[:, :-1], w[:, -1].copy(), updates
