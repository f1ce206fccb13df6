"""The confidence-weighted family: a Gaussian over the weights, a mean and a covariance.

Each rule is written as its paper's pseudocode, on the input augmented with the bias
feature (``x̃ = [x, 1]``, or ``[x, 0]`` without an intercept: the bias is a weight with
a variance of its own), with ``μ`` the mean and ``Σ`` the covariance:

AROW (Crammer, Kulesza & Dredze 2009, Figure 1)
    ``m = μ·x̃``, ``v = x̃ᵀ Σ x̃``; if ``y m < 1``: ``β = 1 / (v + r)``, ``α = max(0, 1 -
    y m) β``, ``μ <- μ + α y Σ x̃``, ``Σ <- Σ - β Σ x̃ x̃ᵀ Σ``; ``Σ_0 = a I``.

NAROW (Orabona & Crammer 2010)
    AROW with ``r_t = v / (b v - 1)`` where ``v > 1 / b``, and ``r_t = +∞`` (no step)
    elsewhere.
NHERD (Crammer & Lee 2010)
    if ``y m < 1``: ``α = (1 - y m) / (v + 1 / C)``, ``μ <- μ + α y Σ x̃``, ``Σ <- Σ - Σ
    x̃ x̃ᵀ Σ (C² v + 2 C) / (1 + C v)²``.
CW, the variance form (Dredze, Crammer & Pereira 2008)
    ``φ = Φ⁻¹(η)``; with ``M = y m``, if ``M < φ v``: ``b = 1 + 2 φ M``, ``γ = (-b +
    √(b² - 8 φ (M - φ v))) / (4 φ v)``, ``α = max(0, γ)``, ``μ <- μ + α y Σ x̃``,
    ``Σ⁻¹ <- Σ⁻¹ + 2 α φ x̃ x̃ᵀ``.
Exact convex CW, the standard-deviation form (Crammer, Dredze & Pereira 2008)
    ``φ = Φ⁻¹(η)``, ``ψ = 1 + φ² / 2``, ``ζ = 1 + φ²``; ``α = max(0, (-M ψ + √(M² φ⁴ / 4
    + v φ² ζ)) / (v ζ))``, ``u = (-α v φ + √(α² v² φ² + 4 v))² / 4``, ``β = α φ / (√u +
    v α φ)``, ``μ <- μ + α y Σ x̃``, ``Σ <- Σ - β Σ x̃ x̃ᵀ Σ`` (``α > 0`` exactly where
    ``M < φ √v``).
SCW-I and SCW-II (Wang, Zhao & Hoi 2012, Algorithms 1 and 2)
    if ``φ √v - y m > 0``: the paper's ``α`` (SCW-I: at most ``C``), ``u = (-α v φ + √(α²
    v² φ² + 4 v))² / 4``, ``β = α φ / (√u + v α φ)``, ``μ <- μ + α y Σ x̃``, ``Σ <- Σ - β
    Σ x̃ x̃ᵀ Σ``.

The covariance update of each rule is ``Σ⁻¹ <- Σ⁻¹ + c x̃ x̃ᵀ`` for the ``c`` of the rule
(AROW: ``c = 1 / r``; NHERD: ``C² v + 2 C``; exact CW and SCW: ``α φ / √u``; by
Sherman-Morrison this is ``Σ - β Σ x̃ x̃ᵀ Σ`` with ``β = c / (1 + c v)``), which gives the
two forms:

``covariance="full"``
    The paper's update, on the whole matrix.
``covariance="diagonal"``
    The diagonal approximation of Dredze, Crammer & Pereira (2008) and Crammer et al.
    (2009) for high-dimensional data: only the diagonal of ``Σ⁻¹`` is kept, and the
    update adds ``c x̃_j²`` to each ``1 / Σ_jj``. NHERD's paper gives its own diagonal
    form, used here: ``Σ_jj <- Σ_jj / (1 + C x̃_j² Σ_jj)²``.

Multiclass (Crammer, Dredze & Kulesza 2009, "Multi-class confidence weighted
algorithms", single constraint): one mean ``μ_k`` and covariance ``Σ_k`` per class; the
example is ``Φ(x, g) - Φ(x, o)``, ``g`` the gold class and ``o`` the highest-scoring
other class (ties to the lowest), so ``m = μ_g·x̃ - μ_o·x̃`` and ``v = x̃ᵀ Σ_g x̃ + x̃ᵀ
Σ_o x̃`` (the joint covariance is block-diagonal); the update moves ``μ_g`` by ``+α Σ_g
x̃`` and ``μ_o`` by ``-α Σ_o x̃``, and adds ``c x̃ x̃ᵀ`` to the precision of both
classes (the diagonal blocks of the joint update; its off-diagonal blocks are dropped,
which keeps the covariance block-diagonal).

``sample_weight``: an example of weight ``s`` counts its loss ``s`` times in the rule's
objective (AROW, NAROW: ``r`` becomes ``r / s`` for it; SCW, NHERD: ``C`` becomes ``s
C``); weight 0 skips it. CW and exact CW have no loss to weight (the estimators refuse
weights for them). The averaged model is the (weighted) mean of the means after every example.

References
----------
K. Crammer, M. Dredze and F. Pereira, "Exact convex confidence-weighted learning", NIPS
21, 2008.

J. Wang, P. Zhao and S. C. H. Hoi, "Exact soft confidence-weighted learning", ICML 2012.

F. Orabona and K. Crammer, "New adaptive algorithms for online classification", NIPS 23,
2010.

K. Crammer and D. D. Lee, "Learning via Gaussian herding", NIPS 23, 2010.

K. Crammer, A. Kulesza and M. Dredze, "Adaptive regularization of weight vectors",
NIPS 22, 2009.

M. Dredze, K. Crammer and F. Pereira, "Confidence-weighted linear classification", ICML
2008.

K. Crammer, M. Dredze and A. Kulesza, "Multi-class confidence weighted algorithms",
EMNLP 2009.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

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


def _phi(constants: dict) -> float:
    """``φ = Φ⁻¹(η)``, the standard normal quantile of the confidence ``η``."""
    return NormalDist().inv_cdf(constants["eta"])


def _cw(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """CW, the variance form (Dredze et al. 2008, the closed form of ``γ``): update while
    ``M < φ V``; ``Σ⁻¹ += 2 α φ x xᵀ``. No weighted form (the weight is always 1)."""
    phi = _phi(constants)
    if variance <= 0.0 or phi * variance - margin <= 0.0:
        return 0.0, 0.0
    b = 1 + 2 * phi * margin
    gamma = (-b + np.sqrt(b * b - 8 * phi * (margin - phi * variance))) / (4 * phi * variance)
    alpha = max(0.0, gamma)
    return alpha, 2 * alpha * phi


def _scw_precision(alpha: float, variance: float, phi: float) -> float:
    """Exact CW's and SCW's covariance step as a precision increment: ``Σ <- Σ - β Σ x xᵀ
    Σ`` with ``β = α φ / (√u + v α φ)`` is ``Σ⁻¹ += (α φ / √u) x xᵀ``, ``√u = (-α v φ +
    √(α² v² φ² + 4 v)) / 2``."""
    avp = alpha * variance * phi
    sqrt_u = 0.5 * (-avp + np.sqrt(avp * avp + 4 * variance))
    return alpha * phi / sqrt_u


def _eccw(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """Exact convex CW (Crammer, Dredze & Pereira 2008), the closed-form update of the
    standard-deviation form: the smallest change (in KL divergence) of ``N(μ, Σ)`` after
    which ``Pr[y w·x ≥ 0] ≥ η``, that is ``M ≥ φ √(x̃ᵀ Σ x̃)``. No weighted form."""
    phi = _phi(constants)
    if variance <= 0.0:
        return 0.0, 0.0  # Σ x̃ = 0: nothing can move
    psi = 1 + phi**2 / 2
    zeta = 1 + phi**2
    alpha = max(
        0.0,
        (-margin * psi + np.sqrt(margin**2 * phi**4 / 4 + variance * phi**2 * zeta))
        / (variance * zeta),
    )
    if alpha == 0.0:
        return 0.0, 0.0
    # The paper's Σ⁻¹ <- Σ⁻¹ + α φ u^(-1/2) x̃ x̃ᵀ, with √u the new standard deviation
    # √(x̃ᵀ Σ' x̃); its Σ - β Σ x̃ x̃ᵀ Σ, β = α φ / (√u + v α φ), by Sherman-Morrison.
    return alpha, _scw_precision(alpha, variance, phi)


def _scw_i(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """SCW-I (Wang, Zhao & Hoi 2012, Algorithm 1): update while ``φ √v - m > 0``; ``C``
    becomes ``s C`` for an example of weight ``s``."""
    phi, C = _phi(constants), constants["C"] * weight
    if variance <= 0.0 or phi * np.sqrt(variance) - margin <= 0.0:
        return 0.0, 0.0
    phi2 = phi * phi
    psi, zeta = 1 + phi2 / 2, 1 + phi2
    root = np.sqrt(margin * margin * phi2 * phi2 / 4 + variance * phi2 * zeta)
    alpha = min(C, max(0.0, (-margin * psi + root) / (variance * zeta)))
    if alpha == 0.0:
        return 0.0, 0.0
    return alpha, _scw_precision(alpha, variance, phi)


def _scw_ii(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """SCW-II (Wang, Zhao & Hoi 2012, Algorithm 2): ``n = v + 1 / (2C)``, ``γ = φ √(φ² m²
    v² + 4 n v (n + v φ²))``, ``α = max(0, (-(2 m n + φ² m v) + γ) / (2 (n² + n v φ²)))``;
    ``C`` becomes ``s C`` for an example of weight ``s``."""
    phi, C = _phi(constants), constants["C"] * weight
    if variance <= 0.0 or phi * np.sqrt(variance) - margin <= 0.0:
        return 0.0, 0.0
    phi2 = phi * phi
    n = variance + 1 / (2 * C)
    gamma = phi * np.sqrt(
        phi2 * margin * margin * variance * variance + 4 * n * variance * (n + variance * phi2)
    )
    alpha = max(
        0.0,
        (-(2 * margin * n + phi2 * margin * variance) + gamma)
        / (2 * (n * n + n * variance * phi2)),
    )
    if alpha == 0.0:
        return 0.0, 0.0
    return alpha, _scw_precision(alpha, variance, phi)


def _narow(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """NAROW (Orabona & Crammer 2010): AROW with ``r_t = v / (b v - 1)`` where ``v > 1 /
    b``, else ``r_t = +∞`` (no step); ``r_t / s`` for an example of weight ``s``."""
    if margin >= 1.0:
        return 0.0, 0.0
    b = constants["b"]
    if not variance > 1 / b:
        return 0.0, 0.0
    r = variance / (b * variance - 1) / weight
    beta = 1.0 / (variance + r)
    return max(0.0, 1.0 - margin) * beta, 1.0 / r


def _nherd(margin: float, variance: float, weight: float, constants: dict) -> tuple[float, float]:
    """NHERD (Crammer & Lee 2010): ``α = max(0, 1 - m) / (v + 1 / C)``, ``Σ <- Σ - Σ x xᵀ
    Σ (C² v + 2 C) / (1 + C v)²``, that is ``Σ⁻¹ += (C² v + 2 C) x xᵀ``; ``C`` becomes
    ``s C`` for an example of weight ``s``."""
    if margin >= 1.0:
        return 0.0, 0.0
    C = constants["C"] * weight
    return max(0.0, 1.0 - margin) / (variance + 1 / C), C * C * variance + 2 * C


def _nherd_diagonal(sigma: np.ndarray, x: np.ndarray, weight: float, constants: dict) -> np.ndarray:
    """NHERD's own diagonal form (Crammer & Lee 2010, the "exact" diagonal): ``Σ_jj <-
    Σ_jj / (1 + C x_j² Σ_jj)²``."""
    C = constants["C"] * weight
    diagonal = np.diag(sigma)
    return np.diag(diagonal / (1 + C * x**2 * diagonal) ** 2)


_RULES = {
    "arow": _arow,
    "cw": _cw,
    "eccw": _eccw,
    "scw-i": _scw_i,
    "scw-ii": _scw_ii,
    "narow": _narow,
    "nherd": _nherd,
}
_DEFAULTS = {
    "arow": {"r": 1.0, "a": 1.0},
    "cw": {"eta": 0.7, "a": 1.0},
    "eccw": {"eta": 0.7, "a": 1.0},
    "scw-i": {"eta": 0.75, "a": 1.0},
    "scw-ii": {"eta": 0.9, "a": 1.0},
    "narow": {"b": 1.0, "a": 1.0},
    "nherd": {"a": 1.0},
}
# Rules whose diagonal form is their own paper's (not the diagonal of the precision).
_OWN_DIAGONAL = {"nherd": _nherd_diagonal}


def _add_precision(
    sigma: np.ndarray,
    x: np.ndarray,
    c: float,
    covariance: str,
    rule: str,
    weight: float,
    values: dict,
) -> np.ndarray:
    """``Σ`` after ``Σ⁻¹ <- Σ⁻¹ + c x xᵀ``: Sherman-Morrison on the full matrix, or the
    diagonal of the precision (or the rule's own diagonal form)."""
    if covariance == "diagonal" and rule in _OWN_DIAGONAL:
        return _OWN_DIAGONAL[rule](sigma, x, weight, values)
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
    C: float = 1.0,
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
    values = {**_DEFAULTS[rule], "C": C, **(constants or {})}
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
                    sigma[0] = _add_precision(sigma[0], x, c, covariance, rule, s[i], values)
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
                    for k in (gold, other):
                        sigma[k] = _add_precision(sigma[k], x, c, covariance, rule, s[i], values)
                    updates += 1
            mu_sum = mu_sum + s[i] * mu
            total += s[i]
    _require_examples(_n_examples(orders))
    mean = mu_sum / total
    return mu[:, :-1], mu[:, -1].copy(), mean[:, :-1], mean[:, -1].copy(), updates
