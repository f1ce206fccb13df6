"""Compiled epochs of the second-order family, binary and multiclass, diagonal and full:
the second-order perceptron (Cesa-Bianchi, Conconi & Gentile 2005) and the improved
ellipsoid method (Yang, Jin & Ye 2009). Both are mistake-driven: binary, an update when
``y * score <= 0``; multiclass, when the highest-scoring class (ties to the lowest
index) is not the gold one, against that class (the best other class).

Second-order perceptron (``"sop"``)
    The paper's primal form: ``v`` is the sum of ``y x̃`` over the examples it updated
    on and ``A = a I + Σ x̃ x̃ᵀ`` their correlation matrix (``x̃ = [x, bias_feature]``);
    it predicts with ``w = (A + x̃ x̃ᵀ)⁻¹ v``, the current example included, and on a
    mistake adds ``y x̃`` to ``v`` and ``x̃ x̃ᵀ`` to ``A``. The weights kept (and
    published: ``coef_``) are ``w = A⁻¹ v``, the prediction weights of the examples
    updated on only (what the model predicts with afterwards).

    Full form: ``stats[0, 0]`` is ``A⁻¹``, shared by the classes. Including ``x̃``
    scales the score by ``1 / (1 + x̃ᵀ A⁻¹ x̃) > 0`` (Sherman-Morrison), the same factor
    for every class, so the sign and the argmax are those of ``x̃ᵀ w``: the kernels
    score with ``w``. A mistake is the recursive least-squares step: with ``z = A⁻¹ x̃``
    and ``q = x̃ᵀ z``, ``w_k += z (t_k - x̃ᵀ w_k) / (1 + q)`` for every class ``k``
    (``t_k = y`` binary; multiclass ``+1`` gold, ``-1`` the other class, ``0`` the
    rest: their ``v_k`` is unchanged but ``A`` grew), and ``A⁻¹ -= z zᵀ / (1 + q)``.
    O(nnz(x) d) per example, O(K d + d²) per update.

    Diagonal form (for sparse high-dimensional data, as SOL's): ``A`` is kept diagonal,
    ``A_j = a + Σ x_j²`` over the examples updated on, ``stats[0]`` of shape
    ``(n_features + 1,)``, shared by the classes. The score of class ``k`` is ``Σ_j v_jk
    x_j / (A_j + x_j²)``; here the current example's ``x_j²`` changes each feature's
    scale, so it is computed as the paper says, ``v_jk = w_jk A_j`` (``v`` is not
    stored). A mistake sets ``w_jk <- (w_jk A_j + t_k x_j) / (A_j + x_j²)`` for the
    features of ``x`` and every class (those are the only weights that change), then
    ``A_j += x_j²``. O(nnz(x) K) per example and per update.

    ``sample_weight``: an example of weight ``s`` counts ``s`` times in the
    correlation and in ``v`` (``A += s x̃ x̃ᵀ``, ``v += s y x̃``, and ``s x̃ x̃ᵀ`` is the
    current example's term in the prediction): ``w`` is then the weighted ridge
    regression of the labels on the examples updated on, which ``w = A⁻¹ v`` is for
    weight 1.

Improved ellipsoid method (``"iellip"``)
    The ellipsoid ``{u : (u - w)ᵀ P⁻¹ (u - w) <= 1}`` of the hypotheses consistent with
    the mistakes so far; on a mistake with ``v = x̃ᵀ P x̃ > 0`` and margin ``m = y w·x̃``:
    ``w <- w + (1 - m) y P x̃ / v`` (onto the hyperplane of margin 1) and ``P <- (P -
    (c_t / v) P x̃ x̃ᵀ P) / (1 - c_t)``; ``c_{t+1} = b c_t`` after every example
    (``c_1 = c``), so the ellipsoid stops shrinking. Both steps are invariant to the
    scale of ``P``: the kernels keep ``D = P / Π(1 / (1 - c_t))`` (the factor every
    update applies to the whole matrix, which no step sees), and ``P_1 = a I`` leaves
    the weights unchanged for every ``a``.

    Full form: ``stats[0, k]`` is ``D`` (one per class), updated by ``D -= (c_t / u) (D
    x̃)(D x̃)ᵀ`` with ``u = x̃ᵀ D x̃``. Diagonal form: ``stats[0]`` of the shape of
    ``weights``, the diagonal of the inverse kept (as the diagonal AROW keeps it): the
    paper's update adds ``c_t / ((1 - c_t) u) x̃ x̃ᵀ`` to ``D⁻¹``, so ``1 / D_j`` gains
    that times ``x_j²``. ``scalars[0]`` is ``c_t``.

    Multiclass (single constraint, as the confidence family's): the example is
    ``Φ(x, gold) - Φ(x, other)``, whose ellipsoid is block-diagonal; ``u = u_gold +
    u_other``, ``m = s_gold - s_other``; the gold class moves by ``+(1 - m) D_gold x̃ /
    u``, the other by ``-(1 - m) D_other x̃ / u``, and the two blocks shrink: ``D_k -=
    (c_t / u) (D_k x̃)(D_k x̃)ᵀ`` (full), ``1 / D_kj += c_t / (u - c_t u_k) x_j²``
    (diagonal; ``u_k = x̃ᵀ D_k x̃``; the off-diagonal blocks are dropped).

    ``sample_weight``: a weight ``s`` multiplies the step (the passive-aggressive rules'
    convention, scikit-learn's) and counts ``s`` examples in the decay (``c <- c b^s``);
    the cut of the ellipsoid is the unweighted one.

``weights``, ``aux``, ``mistake_log``, ``count``
    As in :mod:`perceptrons._kernels.perceptron`: every change ``c`` to ``weights`` is
    written as ``count * c`` to ``aux`` (averaging); the intercept is the weight of a
    constant feature of value ``bias_feature`` with a statistic of its own (the last
    row). An example of weight 0 is skipped entirely (no decay either).
``rule``
    Float64 array ``(kind, bias_feature, C, constants...)`` (:func:`second_order_rule`; the
    constants by name, ``CONSTANTS``).

The kernels return ``(n_updates, n_mistakes, count)``, or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score or variance, ``NON_FINITE_STEP`` at
the first non-finite step (see :mod:`perceptrons._kernels._rows`).
Both rules are mistake-driven: they update on every
wrong prediction (as the perceptron's kernels count them, with the scores the rule
predicts with) and on nothing else, so the two counts are the same (an example with
nothing to move, ``x̃ = 0``, counts as both, as for the perceptron).
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels import _diagonal, _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import argmax_lowest

_jit = cached_njit(**_rows.TRAINING)
_piece = register_jitable

SOP, IELLIP = 0, 1
KINDS = {"sop": SOP, "iellip": IELLIP}
# Positions in the ``rule`` array; the constants each rule reads follow, by name
# (CONSTANTS). The initial ``a`` and IELLIP's ``c`` are the training state's.
KIND, BIAS_FEATURE, C_VALUE, FIRST_CONSTANT = 0, 1, 2, 3
IELLIP_B = FIRST_CONSTANT
#: The constants each rule's kernels read, from FIRST_CONSTANT on.
CONSTANTS = {"sop": (), "iellip": ("b",)}


def second_order_rule(name: str, bias_feature: float, C: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    values = [float(constants[key]) for key in CONSTANTS[name]]
    return np.array([float(KINDS[name]), float(bias_feature), float(C), *values])


@_piece
def _decayed(c, b, weight):
    """``c b^weight`` (``c b`` exactly for weight 1)."""
    return c * b if weight == 1.0 else c * b**weight


# ------------------------------------------------------------ second-order perceptron
@_piece
def _sop_factor(value, a_j, weight):
    """``a_j x_j / (a_j + s x_j²)``: how ``w_j`` enters the score of the paper's
    prediction (``v_j x_j / (A_j + s x_j²)`` with ``v_j = w_j A_j``)."""
    return a_j * value / (a_j + weight * value * value)


@_piece
def _sop_score(rows, i, weights, corr, bias_feature, weight):
    """The diagonal SOP's binary score, the current example included (bias first)."""
    last = weights.shape[0] - 1
    score = weights[last] * _sop_factor(bias_feature, corr[last], weight)
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            score += weights[j] * _sop_factor(data[p], corr[j], weight)
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                score += weights[j] * _sop_factor(value, corr[j], weight)
    return score


@_piece
def _sop_coordinate(j, value, signed, weight, weights, aux, corr, count):
    """One coordinate of the diagonal SOP's binary update."""
    a_j = corr[j]
    grown = a_j + weight * value * value
    change = (weights[j] * a_j + weight * signed * value) / grown - weights[j]
    weights[j] += change
    if aux.shape[0] != 0:
        aux[j] += count * change
    corr[j] = grown


@_jit
def sop_binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    corr = stats[0]
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        score = _sop_score(rows, i, weights, corr, bias_feature, weight)
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = -1
            mistakes += 1
            if isinstance(rows, tuple):
                data, indices, indptr = rows
                for p in range(indptr[i], indptr[i + 1]):
                    _sop_coordinate(indices[p], data[p], y[i], weight, weights, aux, corr, count)
            else:
                for j in range(rows.shape[1]):
                    value = rows[i, j]
                    if value != 0.0:
                        _sop_coordinate(j, value, y[i], weight, weights, aux, corr, count)
            _sop_coordinate(n_features, bias_feature, y[i], weight, weights, aux, corr, count)
        count += weight
    return mistakes, mistakes, count


@_piece
def _sop_add_scores(rows, i, weights, corr, weight, scores):
    """``scores[k] += Σ_j w_jk a_j x_j / (a_j + s x_j²)`` for every class."""
    n_classes = scores.shape[0]
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            factor = _sop_factor(data[p], corr[j], weight)
            for k in range(n_classes):
                scores[k] += weights[j, k] * factor
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                factor = _sop_factor(value, corr[j], weight)
                for k in range(n_classes):
                    scores[k] += weights[j, k] * factor


@_piece
def _sop_row(j, value, gold, other, weight, weights, aux, corr, count):
    """One feature of the diagonal SOP's multiclass update: every class's weight of
    feature ``j`` (``v_jk`` changes for gold and other only, ``A_j`` for all)."""
    a_j = corr[j]
    grown = a_j + weight * value * value
    step = weight * value
    averaged = aux.shape[0] != 0
    for k in range(weights.shape[1]):
        target = weights[j, k] * a_j
        if k == gold:
            target += step
        elif k == other:
            target -= step
        change = target / grown - weights[j, k]
        weights[j, k] += change
        if averaged:
            aux[j, k] += count * change
    corr[j] = grown


@_jit
def sop_multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    corr = stats[0]
    scores = np.empty(n_classes)
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        bias_factor = _sop_factor(bias_feature, corr[n_features], weight)
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_factor
        _sop_add_scores(rows, i, weights, corr, weight, scores)
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = argmax_lowest(scores)
        if other != gold:
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = other
            mistakes += 1
            if isinstance(rows, tuple):
                data, indices, indptr = rows
                for p in range(indptr[i], indptr[i + 1]):
                    _sop_row(indices[p], data[p], gold, other, weight, weights, aux, corr, count)
            else:
                for j in range(rows.shape[1]):
                    value = rows[i, j]
                    if value != 0.0:
                        _sop_row(j, value, gold, other, weight, weights, aux, corr, count)
            _sop_row(n_features, bias_feature, gold, other, weight, weights, aux, corr, count)
        count += weight
    return mistakes, mistakes, count


@_piece
def _matrix_x(rows, i, matrix, bias_feature, out):
    """``out = M x̃`` for the symmetric ``M`` (its rows are read: contiguous)."""
    last = matrix.shape[0] - 1
    for m in range(matrix.shape[0]):
        out[m] = matrix[last, m] * bias_feature
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            for m in range(matrix.shape[0]):
                out[m] += matrix[j, m] * value
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                for m in range(matrix.shape[0]):
                    out[m] += matrix[j, m] * value


@_piece
def _rank_one_down(matrix, vector, factor):
    """``M -= factor * vector vectorᵀ``."""
    for j in range(vector.shape[0]):
        scaled = factor * vector[j]
        for m in range(vector.shape[0]):
            matrix[j, m] -= scaled * vector[m]


@_piece
def _add_column(vector, step, weights, aux, k, count):
    """``weights[:, k] += step * vector``, tracked in ``aux`` (2-D arrays)."""
    averaged = aux.shape[0] != 0
    for j in range(vector.shape[0]):
        change = step * vector[j]
        weights[j, k] += change
        if averaged:
            aux[j, k] += count * change


@_jit
def sop_binary_epoch_full(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    """:func:`sop_binary_epoch` with the full correlation: ``stats[0, 0]`` is ``A⁻¹``."""
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    inverse = stats[0, 0]
    z = np.empty(n_features + 1)
    columns = weights.reshape((n_features + 1, 1))
    aux_columns = aux.reshape((aux.shape[0], 1))
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:
            _matrix_x(rows, i, inverse, bias_feature, z)
            q = _rows.dot(rows, i, z, z[n_features] * bias_feature)
            if not np.isfinite(q):
                return _rows.NON_FINITE_SCORE, mistakes, count
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = -1
            mistakes += 1
            if not np.isfinite(weight * q):  # the shrinking would be 0, not ~1 / q
                return _rows.NON_FINITE_STEP, mistakes, count
            shrink = weight / (1.0 + weight * q)
            _add_column(z, shrink * (y[i] - score), columns, aux_columns, 0, count)
            _rank_one_down(inverse, z, shrink)
        count += weight
    return mistakes, mistakes, count


@_jit
def sop_multiclass_epoch_full(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    """:func:`sop_multiclass_epoch` with the full correlation, shared by the classes."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    inverse = stats[0, 0]
    z = np.empty(n_features + 1)
    scores = np.empty(n_classes)
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = argmax_lowest(scores)
        if other != gold:
            _matrix_x(rows, i, inverse, bias_feature, z)
            q = _rows.dot(rows, i, z, z[n_features] * bias_feature)
            if not np.isfinite(q):
                return _rows.NON_FINITE_SCORE, mistakes, count
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = other
            mistakes += 1
            if not np.isfinite(weight * q):  # the shrinking would be 0, not ~1 / q
                return _rows.NON_FINITE_STEP, mistakes, count
            shrink = weight / (1.0 + weight * q)
            for k in range(n_classes):
                target = 1.0 if k == gold else (-1.0 if k == other else 0.0)
                _add_column(z, shrink * (target - scores[k]), weights, aux, k, count)
            _rank_one_down(inverse, z, shrink)
        count += weight
    return mistakes, mistakes, count


# ------------------------------------------------------------ improved ellipsoid
@_jit
def iellip_binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    b = rule[IELLIP_B]
    bias_sq = bias_feature * bias_feature
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    shape = stats[0]
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        margin = y[i] * score
        if margin <= 0.0:
            u = _diagonal.weighted_sq_norm(rows, i, shape, shape[n_features] * bias_sq)
            if not np.isfinite(u):
                return _rows.NON_FINITE_SCORE, mistakes, count
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = -1
            mistakes += 1
            if u > 0.0:
                c = scalars[0]
                step = weight * (1.0 - margin) / u * y[i]
                factor = c / ((1.0 - c) * u)
                if not (np.isfinite(step) and np.isfinite(factor)):
                    return _rows.NON_FINITE_STEP, mistakes, count
                _diagonal.step_and_precision(rows, i, step, factor, shape, weights, aux, count)
                bias_shape = shape[n_features]
                change = step * bias_shape * bias_feature
                weights[n_features] += change
                if aux.shape[0] != 0:
                    aux[n_features] += count * change
                shape[n_features] = bias_shape / (1.0 + factor * bias_shape * bias_sq)
        scalars[0] = _decayed(scalars[0], b, weight)
        count += weight
    return mistakes, mistakes, count


@_jit
def iellip_multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    b = rule[IELLIP_B]
    bias_sq = bias_feature * bias_feature
    averaged = aux.shape[0] != 0
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    shape = stats[0]
    scores = np.empty(n_classes)
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = argmax_lowest(scores)
        if other != gold:
            u_gold = _diagonal.weighted_sq_norm_column(
                rows, i, shape, gold, shape[n_features, gold] * bias_sq
            )
            u_other = _diagonal.weighted_sq_norm_column(
                rows, i, shape, other, shape[n_features, other] * bias_sq
            )
            u = u_gold + u_other
            if not np.isfinite(u):
                return _rows.NON_FINITE_SCORE, mistakes, count
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = other
            mistakes += 1
            if u > 0.0:
                c = scalars[0]
                step = weight * (1.0 - (scores[gold] - scores[other])) / u
                largest = c / (u - c * max(u_gold, u_other))  # the larger factor
                if not (np.isfinite(step) and np.isfinite(largest)):
                    return _rows.NON_FINITE_STEP, mistakes, count
                for k, signed, u_k in ((gold, step, u_gold), (other, -step, u_other)):
                    factor = c / (u - c * u_k)
                    _diagonal.scaled_add_column(rows, i, signed, shape, k, weights, aux, count)
                    _diagonal.add_precision_column(rows, i, factor, shape, k)
                    bias_shape = shape[n_features, k]
                    change = signed * bias_shape * bias_feature
                    weights[n_features, k] += change
                    if averaged:
                        aux[n_features, k] += count * change
                    shape[n_features, k] = bias_shape / (1.0 + factor * bias_shape * bias_sq)
        scalars[0] = _decayed(scalars[0], b, weight)
        count += weight
    return mistakes, mistakes, count


@_jit
def iellip_binary_epoch_full(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    """:func:`iellip_binary_epoch` with the full ellipsoid: ``stats[0, 0]`` is ``D``."""
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    b = rule[IELLIP_B]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    shape = stats[0, 0]
    dx = np.empty(n_features + 1)
    columns = weights.reshape((n_features + 1, 1))
    aux_columns = aux.reshape((aux.shape[0], 1))
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        margin = y[i] * score
        if margin <= 0.0:
            _matrix_x(rows, i, shape, bias_feature, dx)
            u = _rows.dot(rows, i, dx, dx[n_features] * bias_feature)
            if not np.isfinite(u):
                return _rows.NON_FINITE_SCORE, mistakes, count
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = -1
            mistakes += 1
            if u > 0.0:
                step = weight * (1.0 - margin) / u * y[i]
                if not (np.isfinite(step) and np.isfinite(scalars[0] / u)):
                    return _rows.NON_FINITE_STEP, mistakes, count
                _add_column(dx, step, columns, aux_columns, 0, count)
                _rank_one_down(shape, dx, scalars[0] / u)
        scalars[0] = _decayed(scalars[0], b, weight)
        count += weight
    return mistakes, mistakes, count


@_jit
def iellip_multiclass_epoch_full(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    """:func:`iellip_multiclass_epoch` with a full ellipsoid per class: ``stats[0, k]``."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    b = rule[IELLIP_B]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    dx_gold = np.empty(n_features + 1)
    dx_other = np.empty(n_features + 1)
    scores = np.empty(n_classes)
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = argmax_lowest(scores)
        if other != gold:
            _matrix_x(rows, i, stats[0, gold], bias_feature, dx_gold)
            _matrix_x(rows, i, stats[0, other], bias_feature, dx_other)
            u_gold = _rows.dot(rows, i, dx_gold, dx_gold[n_features] * bias_feature)
            u_other = _rows.dot(rows, i, dx_other, dx_other[n_features] * bias_feature)
            u = u_gold + u_other
            if not np.isfinite(u):
                return _rows.NON_FINITE_SCORE, mistakes, count
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = other
            mistakes += 1
            if u > 0.0:
                step = weight * (1.0 - (scores[gold] - scores[other])) / u
                if not (np.isfinite(step) and np.isfinite(scalars[0] / u)):
                    return _rows.NON_FINITE_STEP, mistakes, count
                _add_column(dx_gold, step, weights, aux, gold, count)
                _add_column(dx_other, -step, weights, aux, other, count)
                _rank_one_down(stats[0, gold], dx_gold, scalars[0] / u)
                _rank_one_down(stats[0, other], dx_other, scalars[0] / u)
        scalars[0] = _decayed(scalars[0], b, weight)
        count += weight
    return mistakes, mistakes, count
