"""Compiled epochs of FTRL-Proximal with per-coordinate learning rates and L1/L2
(McMahan et al. 2013, "Ad click prediction: a view from the trenches", Algorithm 1),
binary and multiclass, on the hinge loss.

Every weight ``w_j`` is a function of two statistics of its own, ``z_j`` and ``n_j``
(both from 0)::

    w_j = 0                                                          if |z_j| <= l1
    w_j = -(z_j - sign(z_j) l1) / ((beta + sqrt(n_j)) / alpha + l2)  otherwise

A round on the gradient ``g`` (``g_j`` for every weight of ``x``'s features):
``sigma_j = (sqrt(n_j + g_j²) - sqrt(n_j)) / alpha``, ``z_j += g_j - sigma_j w_j``,
``n_j += g_j²``. On the hinge loss ``l = max(0, 1 - y w·x̃)`` (``x̃ = [x,
bias_feature]``) the gradient of an example with ``l > 0`` is ``g = -s y x̃`` (``s`` its
sample weight), 0 otherwise; multiclass (the single constraint against the best other
class, ties to the lowest), ``-s x̃`` on the gold class's weights and ``+s x̃`` on the
other's. The intercept (the last row) has its own ``z`` and ``n`` but is not penalized
(``l1 = l2 = 0`` there).

Unlike the FOBOS form of an L1 penalty, nothing moves a weight whose feature is absent:
``z_j`` and ``n_j`` change only where ``g_j != 0``. So the stored weights are kept equal
to the function of their statistics at all times, by recomputing the weights of ``x``'s
features after each update: a round reads and writes only ``x``'s rows (O(nnz(x))), no
pass over every weight is needed at the end of an epoch, and every change is tracked in
``aux``, so the averaged model is exact even with ``l1 > 0``.

``weights``, ``aux``, ``mistake_log``, ``count``, ``sample_weight``
    As in :mod:`perceptrons._kernels.adagrad` (a binary model's arrays are worked on as
    one-column 2-D views). A sample weight ``s`` multiplies the gradient; weight 0 skips
    the example (no update, no count).
``stats``
    ``stats[0]`` is ``z``, ``stats[1]`` is ``n``, each the shape of ``weights``.
``scalars``
    The ``alpha``, ``beta``, ``l1`` and ``l2`` the stored weights were computed with (0
    before the first epoch): a call with other constants (a later call's
    ``update_params``) recomputes every weight first, so that the weights are always the
    function of the statistics.
``rule``
    Float64 array ``(bias_feature, alpha, beta, l1, l2)`` (:func:`ftrl_rule`).

The defaults (``alpha`` 0.1, ``beta`` 0.1, ``l1`` 0.3, ``l2`` 0) and what they were
measured on are with the rule's table entry (:mod:`perceptrons.linear._update_rules`).

The kernels return ``(n_updates, n_mistakes, count)``, or ``NON_FINITE_SCORE`` /
``NON_FINITE_STEP`` as the first value (see :mod:`perceptrons._kernels._rows`);
``n_mistakes`` counts the wrong predictions made before the update, as in
:mod:`perceptrons._kernels.adagrad`.
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels._rows import shrink
from perceptrons._kernels.perceptron import mispredicted

_jit = cached_njit(**_rows.TRAINING)
_piece = register_jitable

#: The constants the kernels read, in the order of the ``rule`` array and ``scalars``.
CONSTANTS = {"ftrl": ("alpha", "beta", "l1", "l2")}
# Positions in the ``rule`` array.
BIAS_FEATURE, ALPHA, BETA, L1, L2 = 0, 1, 2, 3, 4


def ftrl_rule(name: str, bias_feature: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    values = [float(constants[constant]) for constant in CONSTANTS[name]]
    return np.array([float(bias_feature), *values])


def made_with(scalars: np.ndarray, constants: dict) -> bool:
    """Whether a state's weights (its ``scalars``) were computed with ``constants``, or
    with none yet (a new state: every weight 0, whatever the constants)."""
    if scalars.shape[0] != len(CONSTANTS["ftrl"]) or scalars[0] == 0.0:
        return True
    return all(scalars[k] == constants[name] for k, name in enumerate(CONSTANTS["ftrl"]))


@_piece
def _weight(z, root, alpha, beta, l1, l2):
    """The paper's ``w = -(z - sign(z) l1) / ((beta + sqrt(n)) / alpha + l2)`` of ``root
    = sqrt(n)`` (an update has it already), 0 when ``|z| <= l1``; ``0.0 -`` makes a zero
    quotient +0.0 (a negative zero would make the row look used in a model file)."""
    shrunk = shrink(z, l1)
    if shrunk == 0.0:
        return 0.0
    return 0.0 - shrunk / ((beta + root) / alpha + l2)


@_piece
def _coordinate(j, k, g, weights, aux, stats, alpha, beta, l1, l2, count):
    """Weight ``(j, k)`` after its gradient ``g`` (nonzero): ``z`` and ``n`` updated, the
    weight recomputed from them. Returns the change plus ``0 * z``: finite unless the
    step or ``z`` overflowed (see :mod:`._rows`)."""
    n = stats[1, j, k]
    grown = n + g * g
    root = np.sqrt(grown)
    sigma = (root - np.sqrt(n)) / alpha
    z = stats[0, j, k] + g - sigma * weights[j, k]
    stats[0, j, k] = z
    stats[1, j, k] = grown
    change = _weight(z, root, alpha, beta, l1, l2) - weights[j, k]
    weights[j, k] += change
    if aux.shape[0] != 0:
        aux[j, k] += count * change
    return change + 0.0 * z


@_piece
def _column(rows, i, k, coefficient, weights, aux, stats, rule, count):
    """:func:`_coordinate` on column ``k`` for every nonzero ``x_j`` of example ``i`` (the
    gradient ``coefficient * x_j``), then the intercept's (unpenalized). Returns ``Σ
    change * 0``: 0 unless a step was inf or NaN."""
    alpha, beta, l1, l2 = rule[ALPHA], rule[BETA], rule[L1], rule[L2]
    changed = 0.0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            if data[p] != 0.0:
                j, g = indices[p], coefficient * data[p]
                step = _coordinate(j, k, g, weights, aux, stats, alpha, beta, l1, l2, count)
                changed += 0.0 * step
    else:
        for j in range(rows.shape[1]):
            if rows[i, j] != 0.0:
                g = coefficient * rows[i, j]
                step = _coordinate(j, k, g, weights, aux, stats, alpha, beta, l1, l2, count)
                changed += 0.0 * step
    bias_feature = rule[BIAS_FEATURE]
    if bias_feature != 0.0:
        j, g = weights.shape[0] - 1, coefficient * bias_feature
        changed += 0.0 * _coordinate(j, k, g, weights, aux, stats, alpha, beta, 0.0, 0.0, count)
    return changed


@_piece
def _remake(weights, aux, stats, scalars, rule, count):
    """Every weight recomputed from ``z`` and ``n`` with ``rule``'s constants (the
    intercept unpenalized), the changes tracked in ``aux``, the constants recorded in
    ``scalars``."""
    averaged = aux.shape[0] != 0
    alpha, beta = rule[ALPHA], rule[BETA]
    intercept = weights.shape[0] - 1
    for j in range(weights.shape[0]):
        l1 = rule[L1] if j < intercept else 0.0
        l2 = rule[L2] if j < intercept else 0.0
        for k in range(weights.shape[1]):
            new = _weight(stats[0, j, k], np.sqrt(stats[1, j, k]), alpha, beta, l1, l2)
            if new != weights[j, k]:
                if averaged:
                    aux[j, k] += count * (new - weights[j, k])
                weights[j, k] = new
    for position in range(scalars.shape[0]):
        scalars[position] = rule[ALPHA + position]


@_piece
def _epoch(rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight):
    """The epoch of both kinds of model: 2-D ``weights`` (a binary model's as one
    column, ``y`` then ±1) and 3-D ``stats``."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    binary = n_classes == 1
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    same = True
    for position in range(scalars.shape[0]):
        same = same and scalars[position] == rule[ALPHA + position]
    if not same:
        # New constants (or the first epoch, when every weight is 0 and stays 0): every
        # weight is their function of its statistics.
        if scalars[0] == 0.0:
            for position in range(scalars.shape[0]):
                scalars[position] = rule[ALPHA + position]
        else:
            _remake(weights, aux, stats, scalars, rule, count)
    scores = np.empty(n_classes)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        scores[:] = 0.0
        if isinstance(rows, tuple):
            data, indices, indptr = rows
            for p in range(indptr[i], indptr[i + 1]):
                value, j = data[p], indices[p]
                for k in range(n_classes):
                    scores[k] += value * weights[j, k]
        else:
            for j in range(n_features):
                value = rows[i, j]
                if value != 0.0:
                    for k in range(n_classes):
                        scores[k] += value * weights[j, k]
        for k in range(n_classes):
            scores[k] += weights[n_features, k] * rule[BIAS_FEATURE]
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
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
                if _column(rows, i, k, coefficient, weights, aux, stats, rule, count) != 0.0:
                    return _rows.NON_FINITE_STEP, mistakes, count
        count += weight
    return updates, mistakes, count


@_jit
def binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    rows_of_weights = weights.shape[0]
    columns = weights.reshape((rows_of_weights, 1))
    aux_columns = aux.reshape((aux.shape[0], 1))
    stat_columns = stats.reshape((stats.shape[0], rows_of_weights, 1))
    return _epoch(
        rows,
        y,
        order,
        columns,
        aux_columns,
        stat_columns,
        scalars,
        mistake_log,
        count,
        rule,
        sample_weight,
    )


@_jit
def multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    return _epoch(
        rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
    )
