"""The perceptron with margin, the passive-aggressive updates and ROMMA.

Cohen's lecture "The Perceptron" names "many variants" of the perceptron (ROMMA,
Passive-Aggressive, MIRA, ...) without writing them out; these oracles follow the
perceptron with margin, Crammer, Dekel, Keshet, Shalev-Shwartz & Singer (2006), "Online
passive-aggressive algorithms" (whose multiclass PA-I is 1-best MIRA, Crammer & Singer
2003), and Li & Long (2002), "The relaxed online maximum margin algorithm". The
perceptron with margin 0 is the vanilla perceptron of Johansson's lecture (binary) and of
Kuhlmann's slides (multiclass).

References
----------
M. Kuhlmann, "The perceptron learning algorithm", lecture slides, Department of Computer
and Information Science, Linköping University.

R. Johansson, "Machine Learning for NLP, bonus lecture: the averaged perceptron",
lecture notes, 11 September 2015.

W. Cohen, "The Perceptron", lecture slides, 10-601, Carnegie Mellon University.

K. Crammer, O. Dekel, J. Keshet, S. Shalev-Shwartz and Y. Singer, "Online
passive-aggressive algorithms", Journal of Machine Learning Research 7:551-585, 2006.

K. Crammer and Y. Singer, "Ultraconservative online algorithms for multiclass
problems", Journal of Machine Learning Research 3:951-991, 2003.

Y. Li and P. M. Long, "The relaxed online maximum margin algorithm", Machine Learning
46(1-3):361-387, 2002.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perceptrons.reference._common import (
    Matrix,
    _as_matrix,
    _as_orders,
    _binary_labels,
    _class_codes,
    _n_examples,
    _require_examples,
    _row,
    _sample_weights,
)

__all__ = ["linear_update_rule", "multiclass_linear_update_rule", "multiclass_romma", "romma"]

# ROMMA's rule for x parallel to w: the two constraints count as parallel when
# ||x||² ||w||² - (w·x)² <= PARALLEL * ||x||² ||w||² (rounding leaves ~1e-16 of it).
PARALLEL = 1e-12


def _pa_step(loss: float, sq_norm: float, variant: str, C: float) -> float:
    """Crammer et al. (2006): the step of PA, PA-I and PA-II for a positive loss."""
    if variant == "pa":
        return loss / sq_norm
    if variant == "pa-i":
        return min(C, loss / sq_norm)
    return loss / (sq_norm + 1.0 / (2.0 * C))


def linear_update_rule(
    X: Matrix,
    y: np.ndarray,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "margin",
    margin: float = 0.0,
    C: float = 1.0,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, float, np.ndarray, float, int]:
    """The binary perceptron with margin, and the passive-aggressive updates.

    Cohen's lecture names "many variants" of the perceptron; these are the classic two.
    ``rule="margin"``: the perceptron with margin τ, update ``w += y x``, ``b += y``
    whenever ``y (w·x + b) <= τ`` (τ = 0 is the vanilla perceptron of Johansson's
    lecture, 2015).
    ``rule`` in ``"pa"``, ``"pa-i"``, ``"pa-ii"`` (Crammer, Dekel, Keshet, Shalev-Shwartz &
    Singer 2006): with the hinge loss ``l = max(0, 1 - y (w·x + b))`` and
    ``q = ||x||² + 1`` (the bias is the weight of a constant feature 1), step
    ``tau = l / q``, ``min(C, l / q)`` or ``l / (q + 1 / (2 C))``, then ``w += tau y x``,
    ``b += tau y``.

    ``sample_weight`` (scikit-learn's SGD convention): example ``i`` of weight ``s_i``
    steps ``s_i`` times as far (``tau`` above, or 1 for the margin rule, times ``s_i``) and
    counts ``s_i`` times in the mean, which becomes ``Σ s_t w_t / Σ s_t``; an example of
    weight 0 is skipped, as if absent. None: every weight 1 (the unweighted algorithm).

    Returns
    -------
    w, b : the final weights and bias
    w_mean, b_mean : the exact (weighted) mean of the weights after every example (the
        averaged model)
    updates : int, the number of examples that changed the weights
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    s = _sample_weights(sample_weight, X.shape[0])
    w = np.zeros(X.shape[1])
    b = 0.0
    w_sum = np.zeros(X.shape[1])
    b_sum = 0.0
    total = 0.0  # Σ s_t over the examples seen
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = _row(X, i)
            signed = y[i] * (w @ x + b)
            if rule == "margin":
                step = 1.0 if signed <= margin else 0.0
            else:
                loss = 1.0 - signed
                step = _pa_step(loss, x @ x + 1.0, rule, C) if loss > 0.0 else 0.0
            if step != 0.0:
                step = s[i] * step
                w = w + step * y[i] * x
                b = b + step * y[i]
                updates += 1
            # after EVERY example, counted s_i times
            w_sum = w_sum + s[i] * w
            b_sum = b_sum + s[i] * b
            total += s[i]
    _require_examples(_n_examples(orders))
    if sample_weight is None:
        total = float(_n_examples(orders))
    return w, float(b), w_sum / total, float(b_sum / total), updates


def multiclass_linear_update_rule(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    rule: str = "margin",
    margin: float = 0.0,
    C: float = 1.0,
    sample_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Multiclass perceptron with margin and multiclass passive-aggressive updates.

    With margin 0 the rule is that of Kuhlmann's slides: update when the argmax (ties to
    the lowest class) is not the gold class ``g``, moving ``+x`` to ``g`` and ``-x`` to
    the predicted class. Otherwise let ``p`` be the best class other than ``g`` (ties to
    the lowest): ``rule="margin"`` updates the same way (with ``p``) when
    ``s_g - s_p <= margin``; the passive-aggressive rules use the loss
    ``l = max(0, 1 - (s_g - s_p))`` and ``q = 2 (||x||² + 1)`` (two rows move, Crammer
    et al. 2006, multiclass single-prototype), step ``tau`` as in
    :func:`~perceptrons.reference.margin.linear_update_rule`, and move ``+tau x`` to ``g``, ``-tau
    x`` to ``p``. Returns
    the final ``W`` (K, d) and ``b``, their exact mean over every example, and the number
    of updates. ``sample_weight`` as in :func:`~perceptrons.reference.margin.linear_update_rule`:
    the step times
    ``s_i``, the mean weighted by ``s_i``.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    s = _sample_weights(sample_weight, X.shape[0])
    W = np.zeros((n_classes, X.shape[1]))
    b = np.zeros(n_classes)
    W_sum = np.zeros_like(W)
    b_sum = np.zeros_like(b)
    total = 0.0
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            if s[i] == 0.0:
                continue  # weight 0: as if the example were absent
            x = _row(X, i)
            scores = W @ x + b
            gold = y[i]
            if rule == "margin" and margin == 0.0:
                other = int(np.argmax(scores))
                step = 1.0 if other != gold else 0.0
            else:
                rest = scores.copy()
                rest[gold] = -np.inf
                other = int(np.argmax(rest))
                gap = scores[gold] - scores[other]
                if rule == "margin":
                    step = 1.0 if gap <= margin else 0.0
                else:
                    loss = 1.0 - gap
                    step = _pa_step(loss, 2.0 * (x @ x + 1.0), rule, C) if loss > 0.0 else 0.0
            if step != 0.0:
                step = s[i] * step
                W[gold] = W[gold] + step * x
                W[other] = W[other] - step * x
                b[gold] += step
                b[other] -= step
                updates += 1
            W_sum = W_sum + s[i] * W
            b_sum = b_sum + s[i] * b
            total += s[i]
    _require_examples(_n_examples(orders))
    if sample_weight is None:
        total = float(_n_examples(orders))
    return W, b, W_sum / total, b_sum / total, updates


def _romma_update(w: np.ndarray, phi: np.ndarray, y: float) -> np.ndarray:
    """Li & Long (2002): the shortest ``u`` with ``u·w >= ||w||²`` and ``y u·phi >= 1``.

    Both constraints binding: ``u = c w + d phi`` with ``c = (A - y z) / D`` and
    ``d = ||w||² (y - z) / D``, where ``z = w·phi``, ``A = ||phi||² ||w||²`` and
    ``D = A - z²``. When ``c <= 0`` the example's constraint alone is enough and
    ``u = y phi / ||phi||²`` (the first update, from ``w = 0``, is this one). When
    ``phi`` is parallel to ``w`` (``D = 0`` up to rounding) with ``c > 0`` the two
    constraints cannot both hold (inseparable data); the documented rule keeps the
    example's: ``u = y phi / ||phi||²``.
    """
    z = w @ phi
    q = phi @ phi
    w_sq = w @ w
    a = q * w_sq
    c_numerator = a - y * z
    denominator = a - z * z
    if c_numerator <= 0.0 or denominator <= PARALLEL * a:
        return y * phi / q
    c = c_numerator / denominator
    d = w_sq * (y - z) / denominator
    return c * w + d * phi


def romma(
    X: Matrix, y: np.ndarray, orders: Sequence[np.ndarray], *, aggressive: bool = False
) -> tuple[np.ndarray, float, np.ndarray, float, int]:
    """The binary ROMMA and aggressive ROMMA (Li & Long 2002), bias as a constant feature.

    ``w`` (with the bias as its last entry, the weight of a constant feature 1) starts at
    0. On each example, with ``z = w·x``: ROMMA updates on a mistake, ``y z <= 0``;
    aggressive ROMMA whenever ``y z < 1``. The update is :func:`_romma_update`. Returns
    the final weights and bias, their exact mean over every example (the averaged model,
    summed naively after every example), and the number of updates.
    """
    X = _as_matrix(X)
    y = _binary_labels(y)
    w = np.zeros(X.shape[1] + 1)
    w_sum = np.zeros_like(w)
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            x = np.append(_row(X, i), 1.0)
            signed = y[i] * (w @ x)
            if signed <= 0.0 or (aggressive and signed < 1.0):
                w = _romma_update(w, x, float(y[i]))
                updates += 1
            w_sum = w_sum + w
    _require_examples(_n_examples(orders))
    n = _n_examples(orders)
    w_mean = w_sum / n
    return w[:-1], float(w[-1]), w_mean[:-1], float(w_mean[-1]), updates


def multiclass_romma(
    X: Matrix,
    y: np.ndarray,
    n_classes: int,
    orders: Sequence[np.ndarray],
    *,
    aggressive: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Multiclass ROMMA by the Kesler construction: binary ROMMA on one joint vector.

    ``W`` (one row per class, the bias last) is one joint weight vector; an example of
    gold class ``g``, with ``o`` the best other class (ties to the lowest), is the joint
    example ``Φ = Φ(x, g) - Φ(x, o)`` (``x`` in row ``g``, ``-x`` in row ``o``, zero
    elsewhere) of label +1, whose score ``W·Φ`` is ``s_g - s_o``. ROMMA updates when
    ``W·Φ <= 0`` (aggressive: ``< 1``), by :func:`_romma_update` on the flattened
    vectors. Returns ``W`` and ``b``, their exact mean over every example, and the
    number of updates.
    """
    X = _as_matrix(X)
    y = _class_codes(y, n_classes)
    W = np.zeros((n_classes, X.shape[1] + 1))
    W_sum = np.zeros_like(W)
    updates = 0
    for order in _as_orders(orders):
        for i in order:
            x = np.append(_row(X, i), 1.0)
            scores = W @ x
            gold = y[i]
            rest = scores.copy()
            rest[gold] = -np.inf
            other = int(np.argmax(rest))
            phi = np.zeros_like(W)
            phi[gold] = x
            phi[other] = -x
            signed = np.sum(W * phi)
            if signed <= 0.0 or (aggressive and signed < 1.0):
                W = _romma_update(W.ravel(), phi.ravel(), 1.0).reshape(W.shape)
                updates += 1
            W_sum = W_sum + W
    _require_examples(_n_examples(orders))
    n = _n_examples(orders)
    W_mean = W_sum / n
    return W[:, :-1], W[:, -1].copy(), W_mean[:, :-1], W_mean[:, -1].copy(), updates
