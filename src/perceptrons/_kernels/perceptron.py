"""Compiled epochs of the linear perceptrons, binary and multiclass, dense and CSR.

Every kernel runs one pass over the examples in ``order`` and updates, in place,
arrays the caller allocated. The three optional arrays (``aux``, ``slack`` and
``mistake_log``) are switched off by passing them empty, which skips all their work.

``weights``
    Binary: shape ``(n_features + 1,)``. Multiclass: shape ``(n_features + 1, n_classes)``,
    C-contiguous, so that a sparse feature ``j`` reads one contiguous row ``weights[j]``
    holding its weight for every class. The last row is the intercept: it is the weight
    of an implicit constant feature whose value is ``bias_feature`` (1.0 when the model
    fits an intercept, 0.0 when it does not, which leaves that row at zero). Treating the
    bias as a feature is exactly the update ``b += y`` of the textbook algorithms.
``aux``
    The auxiliary vector of the averaging trick (seeds 000/001/002), same shape as
    ``weights``, or an empty array for a model that is not averaged. It accumulates every
    update multiplied by ``count``, the number of examples seen before the one being
    updated on, so that after ``count`` examples ``count * weights - aux`` is the sum of
    the weight vectors after each of them and ``weights - aux / count`` their exact mean.
``slack``
    The Δ trick (seed 004): training as if example ``i`` had one more feature of its
    own, of value ``delta`` (``X`` becomes ``[X | delta * I]``), without building those
    ``n_samples`` columns. Only a mistake on example ``i`` updates its own feature, and
    only example ``i`` reads it, so its weight is one number per example (binary, shape
    ``(n_samples,)``) or per example and class (multiclass, ``(n_samples, n_classes)``):
    ``slack[i]`` is that weight, ``delta`` times the signed number of updates on ``i``.
    It adds ``delta * slack[i]`` to the score after the real features, and a mistake
    adds ``±delta`` to it: the arithmetic, and its order, of the explicitly augmented
    matrix, so the two train identically. Empty when ``delta`` is 0. Prediction never
    sees it.
``mistake_log``
    Int64, shape ``(len(order), 2)``, or ``(0, 2)`` to log nothing. The ``m``-th mistake
    of the call (from 0) writes the position in ``order`` of the example (from 0) to
    ``mistake_log[m, 0]`` and the predicted class code to ``mistake_log[m, 1]`` (-1 for
    binary models); the caller reads the first ``n_mistakes`` rows.

``update``
    The update rule, a float64 array ``(kind, margin, C)``. ``kind`` 0 is the
    perceptron: binary, update when ``y * score <= margin``; multiclass with margin 0,
    when the argmax (ties to the lowest class) is wrong, and with a positive margin,
    when the gold score beats the best other class's by no more than ``margin``; the
    step is 1. Kinds 1, 2, 3 are the passive-aggressive updates PA, PA-I and PA-II
    (Crammer et al. 2006): with the hinge loss ``l = max(0, 1 - y * score)`` (multiclass:
    ``1 - (gold score - best other score)``) and ``q = ||x||²`` (including the bias
    feature and the Δ feature; multiclass ``2 ||x||²``, two rows move), the step is
    ``l / q``, ``min(C, l / q)`` or ``l / (q + 1 / (2 C))``. Every rule updates the
    weights, the average, and the Δ feature the same way, by ``step * y * x``.

The kernels return ``(n_updates, count)`` with ``count`` advanced by ``len(order)``.
They hold no Python objects and allocate only one score buffer per call (multiclass);
nothing is allocated per example.
"""

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)

PERCEPTRON, PA, PA_I, PA_II = 0, 1, 2, 3


def update_rule(kind: int = PERCEPTRON, margin: float = 0.0, C: float = 1.0) -> np.ndarray:
    """The ``update`` argument of the kernels (plain Python: called once per fit)."""
    return np.array([float(kind), float(margin), float(C)])


# The textbook perceptron: update on a mistake, step 1.
PLAIN_PERCEPTRON = update_rule()


@_jit
def _step(signed_score, sq_norm, update):
    """The step multiplier of one example (0: no update) for the rule ``update``."""
    kind, margin, C = int(update[0]), update[1], update[2]
    if kind == PERCEPTRON:
        return 1.0 if signed_score <= margin else 0.0
    loss = 1.0 - signed_score
    if loss <= 0.0 or sq_norm == 0.0:  # no loss, or nothing to move
        return 0.0
    if kind == PA:
        return loss / sq_norm
    if kind == PA_I:
        return min(C, loss / sq_norm)
    return loss / (sq_norm + 1.0 / (2.0 * C))


@_jit
def _plain_perceptron(update):
    return int(update[0]) == PERCEPTRON and update[1] == 0.0


@_jit
def binary_epoch_dense(
    X, y, order, weights, aux, slack, mistake_log, count, bias_feature, delta, update
):
    n_features = X.shape[1]
    average, use_slack, log = aux.shape[0] != 0, slack.shape[0] != 0, mistake_log.shape[0] != 0
    needs_norm = int(update[0]) != PERCEPTRON
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        score = weights[n_features] * bias_feature
        for j in range(n_features):
            score += X[i, j] * weights[j]
        if use_slack:
            score += delta * slack[i]
        sq_norm = 0.0
        if needs_norm:
            sq_norm = bias_feature * bias_feature + (delta * delta if use_slack else 0.0)
            for j in range(n_features):
                sq_norm += X[i, j] * X[i, j]
        eta = _step(y[i] * score, sq_norm, update)
        if eta != 0.0:
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = -1
            mistakes += 1
            step = eta * y[i]
            scaled = count * step
            for j in range(n_features):
                value = X[i, j]
                if value != 0.0:
                    weights[j] += step * value
                    if average:
                        aux[j] += scaled * value
            weights[n_features] += step * bias_feature
            if average:
                aux[n_features] += count * step * bias_feature
            if use_slack:
                slack[i] += step * delta
        count += 1
    return mistakes, count


@_jit
def binary_epoch_csr(
    data,
    indices,
    indptr,
    y,
    order,
    weights,
    aux,
    slack,
    mistake_log,
    count,
    bias_feature,
    delta,
    update,
):
    n_features = weights.shape[0] - 1
    average, use_slack, log = aux.shape[0] != 0, slack.shape[0] != 0, mistake_log.shape[0] != 0
    needs_norm = int(update[0]) != PERCEPTRON
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        start, end = indptr[i], indptr[i + 1]
        score = weights[n_features] * bias_feature
        for p in range(start, end):
            score += data[p] * weights[indices[p]]
        if use_slack:
            score += delta * slack[i]
        sq_norm = 0.0
        if needs_norm:
            sq_norm = bias_feature * bias_feature + (delta * delta if use_slack else 0.0)
            for p in range(start, end):
                sq_norm += data[p] * data[p]
        eta = _step(y[i] * score, sq_norm, update)
        if eta != 0.0:
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = -1
            mistakes += 1
            step = eta * y[i]
            # One loop per case (not a branch per nonzero); (count * step) * value is the
            # same product either way, so hoisting it changes no bit.
            if average:
                scaled = count * step
                for p in range(start, end):
                    weights[indices[p]] += step * data[p]
                    aux[indices[p]] += scaled * data[p]
            else:
                for p in range(start, end):
                    weights[indices[p]] += step * data[p]
            weights[n_features] += step * bias_feature
            if average:
                aux[n_features] += count * step * bias_feature
            if use_slack:
                slack[i] += step * delta
        count += 1
    return mistakes, count


@_jit
def _argmax_lowest(scores):
    # Ties go to the lowest class index, as np.argmax and the reference do.
    best = 0
    for k in range(1, scores.shape[0]):
        if scores[k] > scores[best]:
            best = k
    return best


@_jit
def _best_other(scores, gold):
    """The highest-scoring class other than ``gold`` (ties to the lowest index)."""
    best = 1 if gold == 0 else 0
    for k in range(best + 1, scores.shape[0]):
        if k != gold and scores[k] > scores[best]:
            best = k
    return best


@_jit
def _multiclass_decision(scores, gold, sq_norm, update):
    """(class to move away from, step): the perceptron's argmax rule, or a margin rule."""
    if _plain_perceptron(update):
        predicted = _argmax_lowest(scores)
        return predicted, 1.0 if predicted != gold else 0.0
    other = _best_other(scores, gold)
    return other, _step(scores[gold] - scores[other], 2.0 * sq_norm, update)


@_jit
def multiclass_epoch_dense(
    X, y, order, weights, aux, slack, mistake_log, count, bias_feature, delta, update
):
    n_features, n_classes = X.shape[1], weights.shape[1]
    average, use_slack, log = aux.shape[0] != 0, slack.shape[0] != 0, mistake_log.shape[0] != 0
    needs_norm = int(update[0]) != PERCEPTRON
    scores = np.empty(n_classes)
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        for j in range(n_features):
            value = X[i, j]
            if value != 0.0:
                for k in range(n_classes):
                    scores[k] += value * weights[j, k]
        if use_slack:
            for k in range(n_classes):
                scores[k] += delta * slack[i, k]
        sq_norm = 0.0
        if needs_norm:
            sq_norm = bias_feature * bias_feature + (delta * delta if use_slack else 0.0)
            for j in range(n_features):
                sq_norm += X[i, j] * X[i, j]
        gold = y[i]
        predicted, eta = _multiclass_decision(scores, gold, sq_norm, update)
        if eta != 0.0:
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = predicted
            mistakes += 1
            scaled = count * eta
            for j in range(n_features):
                value = X[i, j]
                if value != 0.0:
                    weights[j, predicted] -= eta * value
                    weights[j, gold] += eta * value
                    if average:
                        aux[j, predicted] -= scaled * value
                        aux[j, gold] += scaled * value
            weights[n_features, predicted] -= eta * bias_feature
            weights[n_features, gold] += eta * bias_feature
            if average:
                aux[n_features, predicted] -= scaled * bias_feature
                aux[n_features, gold] += scaled * bias_feature
            if use_slack:
                slack[i, predicted] -= eta * delta
                slack[i, gold] += eta * delta
        count += 1
    return mistakes, count


@_jit
def multiclass_epoch_csr(
    data,
    indices,
    indptr,
    y,
    order,
    weights,
    aux,
    slack,
    mistake_log,
    count,
    bias_feature,
    delta,
    update,
):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    average, use_slack, log = aux.shape[0] != 0, slack.shape[0] != 0, mistake_log.shape[0] != 0
    needs_norm = int(update[0]) != PERCEPTRON
    scores = np.empty(n_classes)
    mistakes = 0
    for position in range(order.shape[0]):
        i = order[position]
        start, end = indptr[i], indptr[i + 1]
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        for p in range(start, end):
            value, row = data[p], indices[p]
            for k in range(n_classes):
                scores[k] += value * weights[row, k]
        if use_slack:
            for k in range(n_classes):
                scores[k] += delta * slack[i, k]
        sq_norm = 0.0
        if needs_norm:
            sq_norm = bias_feature * bias_feature + (delta * delta if use_slack else 0.0)
            for p in range(start, end):
                sq_norm += data[p] * data[p]
        gold = y[i]
        predicted, eta = _multiclass_decision(scores, gold, sq_norm, update)
        if eta != 0.0:
            if log:
                mistake_log[mistakes, 0] = position
                mistake_log[mistakes, 1] = predicted
            mistakes += 1
            scaled = count * eta
            if average:  # one loop per case, not a branch per nonzero
                for p in range(start, end):
                    value, row = data[p], indices[p]
                    weights[row, predicted] -= eta * value
                    weights[row, gold] += eta * value
                    aux[row, predicted] -= scaled * value
                    aux[row, gold] += scaled * value
            else:
                for p in range(start, end):
                    value, row = data[p], indices[p]
                    weights[row, predicted] -= eta * value
                    weights[row, gold] += eta * value
            weights[n_features, predicted] -= eta * bias_feature
            weights[n_features, gold] += eta * bias_feature
            if average:
                aux[n_features, predicted] -= scaled * bias_feature
                aux[n_features, gold] += scaled * bias_feature
            if use_slack:
                slack[i, predicted] -= eta * delta
                slack[i, gold] += eta * delta
        count += 1
    return mistakes, count
