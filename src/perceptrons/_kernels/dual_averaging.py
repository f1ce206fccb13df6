"""Compiled epochs of the dual-averaging family, binary and multiclass: regularized dual
averaging (RDA, Xiao 2010) on the hinge loss, with the squared L2 regularizer
(``"rda"``), the mixed L1 and squared L2 one (``"rda-l1"``) and the enhanced L1-RDA
(``"erda-l1"``).

On the hinge loss ``l = max(0, 1 - y w·x̃)`` (``x̃ = [x, bias_feature]``) the gradient
of an example with ``l > 0`` is ``g = -s y x̃`` (``s`` its sample weight), and 0
otherwise. The rules keep ``u``, the sum of the gradients so far, and ``t``, the rounds
so far (a round of weight ``s`` counts ``s``); the weights of the next round are a
function of ``u`` and ``t`` alone, ``w_j = -sign(u_j) max(0, |u_j| - threshold) /
scale`` (Xiao 2010, the closed forms of section 3.1 and of the enhanced L1-RDA):

``"rda"``
    ``Ψ(w) = (σ/2) ||w||²``, ``β_t = 0``: ``scale = σ t``, ``threshold = 0``.
``"rda-l1"``
    ``Ψ(w) = λ ||w||₁ + (σ/2) ||w||²``: ``scale = σ t``, ``threshold = λ t``.
``"erda-l1"``
    ``Ψ(w) = λ ||w||₁``, ``h(w) = ½ ||w||²``, ``β_t = γ sqrt(t)`` and the enhanced
    threshold ``λ_t^RDA = λ + γ ρ / sqrt(t)``: ``scale = γ sqrt(t)``, ``threshold = λ
    t + γ ρ sqrt(t)``.

The intercept (the last row) is not penalized (its threshold is 0, for ``ρ`` too) and
is divided by the same ``scale``. Before the first round (``t = 0``) every weight is 0.

Lazily: every weight depends on ``t``, so every round moves every weight. A weight is
only read when its feature is scored, so the weights of the features of ``x`` (and the
intercept's) are recomputed from ``u`` and ``t`` just before the example is scored
(O(nnz(x)) per round), ``u`` then changes on the same features, and every weight is
recomputed at the end of the epoch, so that the stored weights are the model.

Multiclass (the single constraint against the best other class, as the multiclass
hinge loss of Crammer & Singer 2001 restricted to one constraint): ``l = max(0, 1 -
(w_gold·x̃ - w_other·x̃))`` with ``other`` the highest-scoring class but the gold one
(ties to the lowest); its gradient is ``-s x̃`` on the gold class's weights and ``+s
x̃`` on the other's. Each class's column has its own ``u``; the threshold and scale are
shared.

``weights``, ``mistake_log``, ``count``
    As in :mod:`perceptrons._kernels.perceptron`. A binary model's arrays are worked on
    as one-column 2-D views.
``aux``
    Unused: the averaged model is refused for these rules (the rule table's
    ``averaging``), as every weight moves every round.
``stats``
    ``stats[0]`` is ``u``, the shape of ``weights``.
``scalars``
    ``scalars[0]``: ``t``; ``scalars[1:5]``: the ``sigma``, ``gamma``, ``rho`` and
    ``l1`` the stored weights were computed with (0 for a constant the rule lacks, and
    all 0 before the first epoch). A call with other constants needs no recomputation
    first: every weight an example reads is recomputed with the call's constants, and
    every weight at the end of the epoch.
``rule``
    Float64 array ``(kind, bias_feature, sigma, gamma, rho, l1)``
    (:func:`dual_averaging_rule`; 0 for a constant the rule lacks).
``sample_weight``
    As in :mod:`perceptrons._kernels.perceptron` (or empty). A weight ``s`` multiplies
    the round's gradient and counts the round ``s`` times in ``t``; weight 1 is the
    unweighted rule; weight 0 skips the example (no update, no count, no round).

The kernels return ``(n_updates, n_mistakes, count)``, or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score, ``NON_FINITE_STEP`` at the first
non-finite sum of gradients (see :mod:`perceptrons._kernels._rows`). ``n_mistakes``
counts the wrong predictions made before the update, as in
:mod:`perceptrons._kernels.perceptron`; the rules also update on correct predictions of
margin below 1.
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels._rows import shrink
from perceptrons._kernels.perceptron import mispredicted

_jit = cached_njit(**_rows.TRAINING)
_piece = register_jitable

# ``scale = sigma t`` (RDA, RDA-L1) or ``gamma sqrt(t)`` (enhanced L1-RDA).
LINEAR, ROOT = 0, 1
KINDS = {"rda": LINEAR, "rda-l1": LINEAR, "erda-l1": ROOT}
# Positions in the ``rule`` array.
KIND, BIAS_FEATURE, SIGMA, GAMMA, RHO, L1 = 0, 1, 2, 3, 4, 5
#: The constants each rule's kernels read, by name (the others are 0 in ``rule``).
CONSTANTS = {"rda": ("sigma",), "rda-l1": ("sigma", "l1"), "erda-l1": ("gamma", "rho", "l1")}
_POSITIONS = {"sigma": SIGMA, "gamma": GAMMA, "rho": RHO, "l1": L1}


def dual_averaging_rule(name: str, bias_feature: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    rule = np.zeros(6)
    rule[KIND], rule[BIAS_FEATURE] = KINDS[name], bias_feature
    for key in CONSTANTS[name]:
        rule[_POSITIONS[key]] = constants[key]
    return rule


@_piece
def _round(rule, t):
    """``(scale, threshold)`` of the weights after ``t`` rounds (``scale = 0`` at ``t =
    0``, when every weight is 0)."""
    if t <= 0.0:
        return 0.0, 0.0
    if int(rule[KIND]) == LINEAR:
        return rule[SIGMA] * t, rule[L1] * t
    root = np.sqrt(t)
    return rule[GAMMA] * root, rule[L1] * t + rule[GAMMA] * rule[RHO] * root


@_piece
def _weight(u, scale, threshold):
    """``-sign(u) max(0, |u| - threshold) / scale``; +0.0 where the threshold (or ``t
    = 0``) zeroes it (a negative zero would make the row look used in a model file)."""
    if scale == 0.0:
        return 0.0
    shrunk = shrink(u, threshold)
    if shrunk == 0.0:
        return 0.0
    return -shrunk / scale


@_piece
def _model(weights, stats, scalars, rule, t):
    """Every weight recomputed from ``u`` and ``t`` with ``rule``'s constants (the
    intercept unpenalized), and the constants recorded in ``scalars[1:5]``."""
    scale, threshold = _round(rule, t)
    n_features = weights.shape[0] - 1
    for j in range(n_features):
        for k in range(weights.shape[1]):
            weights[j, k] = _weight(stats[0, j, k], scale, threshold)
    for k in range(weights.shape[1]):
        weights[n_features, k] = _weight(stats[0, n_features, k], scale, 0.0)
    scalars[1], scalars[2], scalars[3], scalars[4] = rule[SIGMA], rule[GAMMA], rule[RHO], rule[L1]


@_piece
def _add(j, k, g, stats):
    """``u[j, k] += g``; returns ``new u * 0``: 0 unless it became inf or NaN."""
    u = stats[0, j, k] + g
    stats[0, j, k] = u
    return u * 0.0


@_piece
def _epoch(rows, y, order, weights, stats, scalars, mistake_log, count, rule, sample_weight):
    """The epoch of both kinds of model: 2-D ``weights`` (a binary model's as one
    column, ``y`` then ±1) and 3-D ``stats``."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    binary = n_classes == 1
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    t = scalars[0]
    scores = np.empty(n_classes)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        # The model of this round on the features it reads, then its scores.
        scale, threshold = _round(rule, t)
        scores[:] = 0.0
        if isinstance(rows, tuple):
            data, indices, indptr = rows
            for p in range(indptr[i], indptr[i + 1]):
                value, j = data[p], indices[p]
                for k in range(n_classes):
                    w = _weight(stats[0, j, k], scale, threshold)
                    weights[j, k] = w
                    scores[k] += value * w
        else:
            for j in range(n_features):
                value = rows[i, j]
                if value != 0.0:
                    for k in range(n_classes):
                        w = _weight(stats[0, j, k], scale, threshold)
                        weights[j, k] = w
                        scores[k] += value * w
        for k in range(n_classes):
            w = _weight(stats[0, n_features, k], scale, 0.0)
            weights[n_features, k] = w
            scores[k] += w * bias_feature
        if not _rows.finite_scores(scores):
            scalars[0] = t
            return _rows.NON_FINITE_SCORE, mistakes, count
        t += weight
        if binary:
            gold, other = 0, -1
            margin = y[i] * scores[0]
            wrong = margin <= 0.0
        else:
            gold = int(y[i])
            other = 1 if gold == 0 else 0
            for k in range(other + 1, n_classes):
                if k != gold and scores[k] > scores[other]:
                    other = k
            margin = scores[gold] - scores[other]
            wrong = mispredicted(scores, gold, other)
        if wrong:
            mistakes += 1
        if margin < 1.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = other
            updates += 1
            # The gradient on column k is coefficient * x̃.
            for side in range(1 if binary else 2):
                k = gold if side == 0 else other
                coefficient = -weight * (y[i] if binary else 1.0) if side == 0 else weight
                changed = 0.0
                if isinstance(rows, tuple):
                    data, indices, indptr = rows
                    for p in range(indptr[i], indptr[i + 1]):
                        changed += _add(indices[p], k, coefficient * data[p], stats)
                else:
                    for j in range(n_features):
                        if rows[i, j] != 0.0:
                            changed += _add(j, k, coefficient * rows[i, j], stats)
                if bias_feature != 0.0:
                    changed += _add(n_features, k, coefficient * bias_feature, stats)
                if changed != 0.0:  # inf or NaN: a gradient beyond the floats
                    scalars[0] = t
                    return _rows.NON_FINITE_STEP, mistakes, count
        count += weight
    scalars[0] = t
    # The stored weights are the model: every weight brought up to round t.
    _model(weights, stats, scalars, rule, t)
    return updates, mistakes, count


@_jit
def binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    rows_of_weights = weights.shape[0]
    columns = weights.reshape((rows_of_weights, 1))
    stat_columns = stats.reshape((stats.shape[0], rows_of_weights, 1))
    return _epoch(
        rows, y, order, columns, stat_columns, scalars, mistake_log, count, rule, sample_weight
    )


@_jit
def multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    return _epoch(rows, y, order, weights, stats, scalars, mistake_log, count, rule, sample_weight)
