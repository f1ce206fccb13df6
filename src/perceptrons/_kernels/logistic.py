"""Compiled epochs of logistic regression trained by SGD, binary and multinomial.

Every kernel runs one pass over the examples in ``order`` and updates, in place, arrays
the caller allocated; nothing is allocated per example. Per example ``t`` (Bottou 2010,
the MAP update ``w += λ (y - p) x - λ w / σ²``, both terms taken at the old ``w``):

1. ``p = σ(w·x + b)`` (binary) or ``p = softmax(W x + b)`` (multinomial), from the
   current weights, and the example's log-loss;
2. decay: ``w <- decay * w`` with ``decay = 1 - learning_rate * l2`` (the prior; the
   intercept is not decayed);
3. gradient step: ``w += learning_rate * (y - p) * x``, ``b += learning_rate * (y - p)``
   (multinomial: ``w_k += learning_rate * ([y = k] - p_k) * x`` for every class ``k``).

``weights``
    Binary: shape ``(n_features + 1,)``. Multinomial: ``(n_features + 1, n_classes)``,
    C-contiguous (a sparse feature reads one contiguous row). The last row is the
    intercept, the weight of an implicit constant feature of value ``bias_feature``
    (0.0 leaves it at zero). The feature rows hold ``v`` with the true weights
    ``w = scale * v`` (the intercept row is stored as it is): the decay of step 2 is
    the O(1) ``scale *= decay``, and step 3 adds ``learning_rate * (y - p) * x / scale``
    to ``v``, so an update costs O(nnz(x)) however many features there are. When
    ``scale`` falls below ``min_scale``, ``v`` is multiplied by it and ``scale`` reset to 1
    (O(n_features), once every ``log(min_scale) / log(decay)`` examples).
``aux``
    Averaging (an empty array switches it off): the auxiliary array of the perceptrons'
    trick, with the example counter replaced by ``P`` (``scales[1]``), the sum of the
    scales of the examples seen since the last rescale (``P = count`` when ``l2 = 0``,
    and then the bookkeeping is exactly the averaged perceptron's). Whenever an entry of
    ``v`` changes by ``δ`` on example ``t``, ``aux += P_{t-1} * δ``, ``P_{t-1}`` not yet
    counting example ``t``. Since ``v`` is constant between changes and ``w_τ = scale_τ v_τ``,
    the sum of the weights after every example is
    ``Σ_τ scale_τ v_τ = Σ_changes δ (P_N - P_{t-1}) = P_N v_N - aux``: the mean weights
    are ``(P * v - aux) / count``, exactly, at O(nnz(x)) per example whatever the decay.
    The intercept row, never scaled, uses ``count`` for ``P``: its mean is
    ``v - aux / count``. A rescale first folds the running sum into ``aux``
    (``aux <- aux - P * v``, i.e. ``aux = -sum so far``), then sets ``P = 0``, so the
    identity holds across rescales. Between rescales ``P * v`` and ``aux`` grow to about
    ``1 / min_scale`` times the sum they represent, which bounds the rounding error of
    the mean (about ``2e-16 / min_scale`` relative).
``scales``
    Float64 array ``[scale, P]``, read and written back.
``rule``
    Float64 array ``(learning_rate, decay, bias_feature, min_scale)`` (:func:`sgd_rule`).
``sample_weight``
    Float64, shape ``(n_samples,)``, or ``(0,)`` for the unweighted kernels. Example
    ``i`` of weight ``s_i`` takes a gradient step ``s_i`` times as large and its prior's
    decay ``s_i`` times (``decay ** s_i``, what ``s_i`` repetitions of the decay alone
    would do), counts ``s_i`` times in its log-loss and in the average (``count`` and
    ``P`` advance by ``s_i`` and ``s_i * scale``). An example of weight 0 is skipped
    entirely, exactly as if it were absent.

The kernels return ``(loss_sum, count)``: the summed log-loss of the examples of the
call (each computed before its update, weighted by ``s_i``) and ``count`` advanced by
``len(order)`` (by the examples' total weight when weighted); or
``(NON_FINITE_SCORE, count)`` at the first non-finite score, ``(NON_FINITE_STEP, count)``
at the first non-finite step (see :mod:`perceptrons._kernels._rows`).
"""

import numpy as np

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit

_jit = cached_njit(**_rows.TRAINING)

# Positions in the ``rule`` array (:func:`sgd_rule`).
LEARNING_RATE, DECAY, BIAS_FEATURE, MIN_SCALE = 0, 1, 2, 3


def sgd_rule(
    learning_rate: float, decay: float, *, bias_feature: float, min_scale: float
) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    return np.array([learning_rate, decay, bias_feature, min_scale], dtype=np.float64)


@_jit
def _logistic(z, y):
    """``(y - σ(z), -log P(y | z))`` for ``y`` in {0, 1}, never exponentiating ``|z|``."""
    e = np.exp(-abs(z))
    if z >= 0.0:
        p, q = 1.0 / (1.0 + e), e / (1.0 + e)  # q = 1 - p, without cancellation
    else:
        p, q = e / (1.0 + e), 1.0 / (1.0 + e)
    if y == 1.0:
        return q, np.log1p(e) + max(-z, 0.0)
    return -p, np.log1p(e) + max(z, 0.0)


@_jit
def _softmax_residual(scores, gold, residual):
    """Write ``[k = gold] - softmax(scores)_k`` into ``residual``; return the log-loss."""
    top = scores[0]
    for k in range(1, scores.shape[0]):
        top = max(top, scores[k])
    total, others = 0.0, 0.0
    for k in range(scores.shape[0]):
        residual[k] = np.exp(scores[k] - top)
        total += residual[k]
        if k != gold:
            others += residual[k]
    for k in range(scores.shape[0]):
        residual[k] = -residual[k] / total
    residual[gold] = others / total  # 1 - p_gold, without cancellation
    return np.log(total) - (scores[gold] - top)


@_jit
def _rescale(weights, aux, scale, scale_sum, n_features):
    """Fold ``scale`` into the feature rows of ``v`` (and the running sum into ``aux``)."""
    if aux.shape[0] != 0:
        aux[:n_features] -= scale_sum * weights[:n_features]
    weights[:n_features] *= scale


@_jit
def _weight_of(sample_weight, i):
    """``s_i``, or 1.0 for the unweighted kernels (empty ``sample_weight``)."""
    return sample_weight[i] if sample_weight.shape[0] != 0 else 1.0


@_jit
def binary_epoch(rows, y, order, weights, aux, scales, count, rule, sample_weight):
    n_features = weights.shape[0] - 1
    learning_rate, decay = rule[LEARNING_RATE], rule[DECAY]
    bias_feature, min_scale = rule[BIAS_FEATURE], rule[MIN_SCALE]
    average = aux.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    scale, scale_sum = scales[0], scales[1]
    loss_sum = 0.0
    for position in range(order.shape[0]):
        i = order[position]
        s = _weight_of(sample_weight, i)
        if s == 0.0:
            continue  # as if the example were absent
        z = scale * _rows.dot(rows, i, weights, 0.0) + weights[n_features] * bias_feature
        if not np.isfinite(z):
            return _rows.NON_FINITE_SCORE, count
        residual, loss = _logistic(z, y[i])
        if weighted:
            loss_sum += s * loss
            scale *= decay if s == 1.0 else decay**s
        else:
            loss_sum += loss
            scale *= decay
        if scale < min_scale:
            _rescale(weights, aux, scale, scale_sum, n_features)
            scale, scale_sum = 1.0, 0.0
        step = learning_rate * residual
        if weighted:
            step *= s
        if not np.isfinite(step / scale):  # learning_rate * s overflowed (see _rows)
            return _rows.NON_FINITE_STEP, count
        _rows.add(rows, i, step / scale, weights, aux, scale_sum)
        weights[n_features] += step * bias_feature
        if average:
            aux[n_features] += count * (step * bias_feature)
        if weighted:
            scale_sum += s * scale
            count += s
        else:
            scale_sum += scale
            count += 1
    scales[0], scales[1] = scale, scale_sum
    return loss_sum, count


@_jit
def multinomial_epoch(rows, y, order, weights, aux, scales, count, rule, sample_weight):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    learning_rate, decay = rule[LEARNING_RATE], rule[DECAY]
    bias_feature, min_scale = rule[BIAS_FEATURE], rule[MIN_SCALE]
    average = aux.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    scale, scale_sum = scales[0], scales[1]
    scores, residual, steps = np.empty(n_classes), np.empty(n_classes), np.empty(n_classes)
    loss_sum = 0.0
    for position in range(order.shape[0]):
        i = order[position]
        s = _weight_of(sample_weight, i)
        if s == 0.0:
            continue  # as if the example were absent
        scores[:] = 0.0
        _rows.add_scores(rows, i, weights, scores)
        for k in range(n_classes):
            scores[k] = scale * scores[k] + weights[n_features, k] * bias_feature
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, count
        loss = _softmax_residual(scores, y[i], residual)
        if weighted:
            loss_sum += s * loss
            scale *= decay if s == 1.0 else decay**s
        else:
            loss_sum += loss
            scale *= decay
        if scale < min_scale:
            _rescale(weights, aux, scale, scale_sum, n_features)
            scale, scale_sum = 1.0, 0.0
        rate = learning_rate * s if weighted else learning_rate
        if not np.isfinite(rate / scale):  # every |residual| <= 1
            return _rows.NON_FINITE_STEP, count
        for k in range(n_classes):
            residual[k] *= rate  # now the step of class k
            steps[k] = residual[k] / scale  # and its step in the scaled feature rows
        _rows.add_columns(rows, i, steps, weights, aux, scale_sum)
        for k in range(n_classes):
            weights[n_features, k] += residual[k] * bias_feature
            if average:
                aux[n_features, k] += count * (residual[k] * bias_feature)
        if weighted:
            scale_sum += s * scale
            count += s
        else:
            scale_sum += scale
            count += 1
    scales[0], scales[1] = scale, scale_sum
    return loss_sum, count
