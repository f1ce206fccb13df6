"""Compiled epochs of ROMMA and aggressive ROMMA (Li & Long 2002), binary and multiclass.

The relaxed online maximum margin algorithm keeps the shortest weight vector that
satisfies two constraints: the relaxation of all past ones, ``w·w_t >= ||w_t||²``, and
the current example's, ``y w·x >= 1``. Where it updates (ROMMA: on a mistake,
``y w_t·x <= 0``; aggressive ROMMA: whenever ``y w_t·x < 1``), with ``z = w_t·x``,
``A = ||x||² ||w_t||²`` and the denominator ``D = A - z²``:

* both constraints bind: ``w <- c w_t + d x`` with ``c = (A - y z) / D`` and
  ``d = ||w_t||² (y - z) / D``;
* the example's constraint alone is enough (``c <= 0``, i.e. ``A <= y z``: its shortest
  solution ``y x / ||x||²`` already satisfies the other one): ``w <- y x / ||x||²``.
  This is the first update from ``w = 0``, and aggressive ROMMA's update on an example
  it already classifies right while ``||w_t||`` is still small;
* ``x`` parallel to ``w_t`` (``D <= PARALLEL * A``, which allows for rounding): with
  ``y z < 1`` and ``c > 0`` the two constraints cannot both hold (this happens only on
  data that no hyperplane through the origin separates). The documented rule here keeps
  the example's constraint: ``w <- y x / ||x||²``, the update of the case before.

An example with ``||x||² = 0`` (no features, no intercept) has nothing to move and
does not update. The intercept is the weight of a constant feature of value
``bias_feature``, part of ``w`` (it is scaled with it and counts in ``||w||²``).

Multiclass (the Kesler construction): one joint weight vector over all classes; an
example of gold class ``g`` with ``o`` the best other class (ties to the lowest) is the
binary example ``Φ(x, g) - Φ(x, o)`` of label +1, whose score is the gap
``s_g - s_o`` and whose squared norm is ``2 ||x||²``. ``c`` scales every class's row.
ROMMA updates when the gap is ``<= 0`` (a tie is a mistake, as a zero score is in the
binary case, so the first example, at ``w = 0``, always updates), aggressive ROMMA when
it is ``< 1``.

``weights``, ``aux``
    The layout of :mod:`perceptrons._kernels.perceptron`, holding ``v`` with the true
    weights ``w = scale * v``, the intercept row included: the factor ``c`` is the O(1)
    ``scale *= c`` and ``d x`` adds ``d / scale * x`` to ``v``, so an update costs
    O(nnz(x)). Averaging uses the bookkeeping of :mod:`perceptrons._kernels.logistic`:
    with ``P`` the sum of the scales of the examples seen since the last rescale, a
    change ``δ`` of ``v`` on example ``t`` adds ``P_{t-1} δ`` to ``aux``, and the sum of
    the weights after every example is ``P v - aux``, their mean
    ``(P v - aux) / count``. A rescale (when ``scale`` leaves ``[1 / MAX_SCALE,
    MAX_SCALE]``) folds the running sum into ``aux`` (``aux <- aux - P v``), then ``v <-
    scale v``, ``scale = 1``, ``P = 0``; the update ``w <- y x / ||x||²`` folds the same
    way and zeroes ``v``. Both cost O(n_features): a rescale once per factor
    ``MAX_SCALE`` of drift, the other only in the rare cases above.
``scales``
    Float64 array ``[scale, P, ||w||²]``, read and written back. ``||w||²`` is kept
    without an O(n_features) pass: after an update where both constraints bind,
    ``w·w_t = ||w_t||²`` and ``y w·x = 1``, so ``||w||² = c ||w_t||² + d y``; after
    ``w <- y x / ||x||²``, ``||w||² = 1 / ||x||²``. That identity holds for the exact
    ``c`` and ``d``; their rounding errors grow with ``c`` (large when ``x`` is nearly
    parallel to ``w_t``, on inseparable data), and an ``||w||²`` carried through such
    steps drifts until it decides updates differently. So when ``c > EXACT_ABOVE``,
    ``||w||²`` is recomputed from ``v`` (O(n_features)); ROMMA on separable data and
    aggressive ROMMA (whose ``c`` is below 1) rarely or never take that path.
``mistake_log``
    As in :mod:`perceptrons._kernels.perceptron` (the class moved away from for
    multiclass, -1 for binary); ``(0, 2)`` logs nothing.
``rule``
    Float64 array ``(aggressive, bias_feature)`` (:func:`romma_rule`).
``sample_weight``
    Must be empty: ROMMA has no weighted form (the estimators refuse weights first).

The kernels return ``(n_updates, n_mistakes, count)`` with ``count`` advanced by
``len(order)``, or ``(NON_FINITE_SCORE, n_mistakes, count)`` at the first non-finite score
(``NON_FINITE_STEP`` at the first non-finite step; see :mod:`perceptrons._kernels._rows`).
``n_mistakes`` counts the wrong predictions made
before the update, as in :mod:`perceptrons._kernels.perceptron` (binary ``y z <= 0``,
multiclass the argmax, ties to the lowest class, not the gold one); ROMMA updates on them
(but for an example with nothing to move) and, multiclass, on a tie of the gold class
with a class of higher index (margin 0, which the prediction breaks in the gold class's
favour); aggressive ROMMA also on margins below 1.
Nothing is allocated per example (one score buffer per multiclass call).
"""

import numpy as np

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import best_other, mispredicted

_jit = cached_njit(**_rows.TRAINING)

# Positions in the ``rule`` array.
AGGRESSIVE, BIAS_FEATURE = 0, 1
# ``scale`` is folded into ``v`` when it leaves [1 / MAX_SCALE, MAX_SCALE]: with averaging,
# ``P v`` and ``aux`` then stay within about MAX_SCALE times the sum they represent,
# which bounds the mean's rounding error (about 2e-16 * MAX_SCALE relative).
MAX_SCALE = 1e4
# Above this c, ||w||² is recomputed from v rather than updated (see above).
EXACT_ABOVE = 2.0
# x and w count as parallel when D = A - z² <= PARALLEL * A: rounding alone leaves a D of
# about 1e-16 * A for exactly parallel vectors.
PARALLEL = 1e-12


def romma_rule(*, aggressive: bool, bias_feature: float) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    return np.array([1.0 if aggressive else 0.0, float(bias_feature)])


@_jit
def _fold(weights, aux, scale_sum, factor):
    """``aux -= scale_sum * v`` (the running sum into ``aux``), then ``v *= factor``."""
    flat = weights.reshape(weights.size)
    if aux.shape[0] != 0:
        flat_aux = aux.reshape(aux.size)
        for j in range(flat.shape[0]):
            flat_aux[j] -= scale_sum * flat[j]
    for j in range(flat.shape[0]):
        flat[j] *= factor


@_jit
def _sq_sum(weights):
    """``||v||²`` over every row, the intercept's included."""
    flat = weights.reshape(weights.size)
    total = 0.0
    for j in range(flat.shape[0]):
        total += flat[j] * flat[j]
    return total


@_jit
def _coefficients(signed, z, y, w_sq, q, aggressive):
    """``(update, restart, c, d)`` for the example of signed score ``signed = y z``."""
    if q == 0.0:
        return False, False, 0.0, 0.0  # nothing to move
    if signed >= 1.0 or (signed > 0.0 and not aggressive):
        return False, False, 0.0, 0.0
    a = q * w_sq
    numerator = a - signed
    denominator = a - z * z
    if numerator <= 0.0 or denominator <= PARALLEL * a:
        return True, True, 0.0, y / q
    return True, False, numerator / denominator, w_sq * (y - z) / denominator


@_jit
def binary_epoch(rows, y, order, weights, aux, scales, mistake_log, count, rule, sample_weight):
    if sample_weight.shape[0] != 0:
        raise ValueError("ROMMA takes no sample weights")
    n_features = weights.shape[0] - 1
    aggressive, bias_feature = rule[AGGRESSIVE] != 0.0, rule[BIAS_FEATURE]
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    scale, scale_sum, w_sq = scales[0], scales[1], scales[2]
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        z = scale * _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if not np.isfinite(z):
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * z <= 0.0:  # (scale > 0: the sign of the weights' score)
            mistakes += 1
        q = _rows.sq_norm(rows, i, bias_feature * bias_feature)
        if not np.isfinite(q):
            return _rows.NON_FINITE_SCORE, mistakes, count
        update, restart, c, d = _coefficients(y[i] * z, z, y[i], w_sq, q, aggressive)
        if update:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = -1
            updates += 1
            if restart:
                _fold(weights, aux, scale_sum, 0.0)
                scale, scale_sum, w_sq = 1.0, 0.0, 1.0 / q
            else:
                scale *= c
                w_sq = c * w_sq + d * y[i]
                if not 1.0 / MAX_SCALE <= scale <= MAX_SCALE:
                    _fold(weights, aux, scale_sum, scale)
                    scale, scale_sum = 1.0, 0.0
            step = d / scale
            if not (np.isfinite(step) and np.isfinite(w_sq)):  # 1 / q overflowed
                return _rows.NON_FINITE_STEP, mistakes, count
            _rows.add(rows, i, step, weights, aux, scale_sum)
            weights[n_features] += step * bias_feature
            if averaged:
                aux[n_features] += scale_sum * (step * bias_feature)
            if c > EXACT_ABOVE:
                w_sq = scale * scale * _sq_sum(weights)
        scale_sum += scale
        count += 1
    scales[0], scales[1], scales[2] = scale, scale_sum, w_sq
    return updates, mistakes, count


@_jit
def multiclass_epoch(rows, y, order, weights, aux, scales, mistake_log, count, rule, sample_weight):
    if sample_weight.shape[0] != 0:
        raise ValueError("ROMMA takes no sample weights")
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    aggressive, bias_feature = rule[AGGRESSIVE] != 0.0, rule[BIAS_FEATURE]
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    scale, scale_sum, w_sq = scales[0], scales[1], scales[2]
    scores = np.empty(n_classes)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = best_other(scores, gold)
        if mispredicted(scores, gold, other):  # (scale > 0 scales every class alike)
            mistakes += 1
        z = scale * (scores[gold] - scores[other])
        if not np.isfinite(z):
            return _rows.NON_FINITE_SCORE, mistakes, count
        # The joint example Φ(x, gold) - Φ(x, other) has label +1 and norm² 2 ||x||².
        q = 2.0 * _rows.sq_norm(rows, i, bias_feature * bias_feature)
        if not np.isfinite(q):
            return _rows.NON_FINITE_SCORE, mistakes, count
        update, restart, c, d = _coefficients(z, z, 1.0, w_sq, q, aggressive)
        if update:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = other
            updates += 1
            if restart:
                _fold(weights, aux, scale_sum, 0.0)
                scale, scale_sum, w_sq = 1.0, 0.0, 1.0 / q
            else:
                scale *= c
                w_sq = c * w_sq + d
                if not 1.0 / MAX_SCALE <= scale <= MAX_SCALE:
                    _fold(weights, aux, scale_sum, scale)
                    scale, scale_sum = 1.0, 0.0
            step = d / scale
            if not (np.isfinite(step) and np.isfinite(w_sq)):
                return _rows.NON_FINITE_STEP, mistakes, count
            _rows.move(rows, i, step, gold, other, weights, aux, scale_sum)
            weights[n_features, gold] += step * bias_feature
            weights[n_features, other] -= step * bias_feature
            if averaged:
                aux[n_features, gold] += scale_sum * (step * bias_feature)
                aux[n_features, other] -= scale_sum * (step * bias_feature)
            if c > EXACT_ABOVE:
                w_sq = scale * scale * _sq_sum(weights)
        scale_sum += scale
        count += 1
    scales[0], scales[1], scales[2] = scale, scale_sum, w_sq
    return updates, mistakes, count
