"""Compiled epochs of the linear perceptrons, binary and multiclass.

Every kernel runs one pass over the examples in ``order`` and updates, in place,
arrays the caller allocated. ``rows`` is the input, dense or CSR (see
:mod:`perceptrons._kernels._rows`, whose per-example pieces the kernels are made of).
The three optional arrays (``aux``, ``slack`` and ``mistake_log``) are switched off by
passing them empty, which skips all their work.

``weights``
    Binary: shape ``(n_features + 1,)``. Multiclass: shape ``(n_features + 1, n_classes)``,
    C-contiguous, so that a sparse feature ``j`` reads one contiguous row ``weights[j]``
    holding its weight for every class. The last row is the intercept: it is the weight
    of an implicit constant feature whose value is ``bias_feature`` (1.0 when the model
    fits an intercept, 0.0 when it does not, which leaves that row at zero). Treating the
    bias as a feature is exactly the update ``b += y`` of the textbook algorithms.
``aux``
    The auxiliary vector of the averaging trick (Daumé 2006), same shape as
    ``weights``, or an empty array for a model that is not averaged. It accumulates every
    update multiplied by ``count``, the number of examples seen before the one being
    updated on, so that after ``count`` examples ``count * weights - aux`` is the sum of
    the weight vectors after each of them and ``weights - aux / count`` their exact mean.
``slack``
    The Δ trick (Freund & Schapire 1999): training as if example ``i`` had one more
    feature of its own, of value ``delta`` (``X`` becomes ``[X | delta * I]``), without
    building those ``n_samples`` columns. Only a mistake on example ``i`` updates its own
    feature, and only example ``i`` reads it, so its weight is one number per example
    (binary, shape ``(n_samples,)``) or per example and class (multiclass,
    ``(n_samples, n_classes)``): ``slack[i]`` is that weight, ``delta`` times the signed
    number of updates on ``i``. It adds ``delta * slack[i]`` to the score after the real
    features, and a mistake adds ``±delta`` to it: the arithmetic, and its order, of the
    explicitly augmented matrix, so the two train identically. Empty when ``delta`` is 0.
    Prediction never sees it.
``mistake_log``
    Int64, shape ``(len(order), 2)``, or ``(0, 2)`` to log nothing. The ``m``-th mistake
    of the call (from 0) writes the position in ``order`` of the example (from 0) to
    ``mistake_log[m, 0]`` and the predicted class code to ``mistake_log[m, 1]`` (-1 for
    binary models); the caller reads the first ``n_updates`` rows (every update is
    logged, whether the prediction was wrong or only its margin too small).
``rule``
    The update rule and its constants, the float64 array :func:`update_rule` builds:
    ``(kind, margin, C, bias_feature, delta)``. ``kind`` 0 is the perceptron: binary,
    update when ``y * score <= margin``; multiclass with margin 0, when the argmax (ties
    to the lowest class) is wrong, and with a positive margin, when the gold score beats
    the best other class's by no more than ``margin``; the step is 1. Kinds 1, 2, 3 are
    the passive-aggressive updates PA, PA-I and PA-II (Crammer et al. 2006): with the
    hinge loss ``l = max(0, 1 - y * score)`` (multiclass: ``1 - (gold score - best other
    score)``) and ``q = ||x||²`` (including the bias feature and the Δ feature; multiclass
    ``2 ||x||²``, two rows move), the step is ``l / q``, ``min(C, l / q)`` or
    ``l / (q + 1 / (2 C))``. Every rule updates the weights, the average, and the Δ
    feature the same way, by ``step * y * x``.

``sample_weight``
    Float64, shape ``(n_samples,)``, or ``(0,)`` for the unweighted kernels (every
    weight 1, the arithmetic of the textbook algorithms). Example ``i`` with weight
    ``s_i`` takes the step ``s_i`` times as large (``w += s_i * step * y x``, scikit-learn's
    SGD convention: the computed step of every rule is multiplied by ``s_i``), including
    the Δ feature, and counts ``s_i`` times in the average: ``count`` advances by ``s_i``,
    so ``count`` is the total weight seen and ``weights - aux / count`` the weighted mean
    ``Σ_t s_t w_t / Σ_t s_t`` of the weights after each example (an update at
    ``count_before`` enters ``aux`` as ``count_before * change``; in
    ``count_total * w - aux`` it then weighs ``count_total - count_before``, the weight of
    the examples it lives through, itself included). An example of weight 0 is skipped
    entirely: no update, no mistake, no count, exactly as if it were absent.

The kernels return ``(n_updates, n_mistakes, count)`` with ``count`` advanced by
``len(order)`` (by the examples' total weight when weighted), or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score, ``NON_FINITE_STEP`` at the first
non-finite step (see :mod:`perceptrons._kernels._rows`).
``n_updates`` counts the examples the rule updated on (those ``mistake_log`` lists);
``n_mistakes`` the examples whose prediction, made before the update from the scores the
rule computed, was wrong: binary ``y * score <= 0`` (a zero score is a mistake, the
perceptron's and its mistake bound's convention), multiclass the highest-scoring class,
ties to the lowest index, not the gold one (:func:`mispredicted`). Those scores include
the Δ feature: the mistakes of the augmented problem being trained. For the perceptron
with margin 0 both counts are the same; a margin rule also updates on correct
predictions of too small a margin, so it counts at least as many updates as mistakes
(except on an example with nothing to move, ``x = 0`` without an intercept).
They hold no Python objects and allocate only one score buffer per call (multiclass);
nothing is allocated per example.
"""

import numpy as np

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit

_jit = cached_njit(**_rows.TRAINING)

PERCEPTRON, PA, PA_I, PA_II = 0, 1, 2, 3
# Positions in the ``rule`` array.
KIND, MARGIN, C_VALUE, BIAS_FEATURE, DELTA = 0, 1, 2, 3, 4


def update_rule(
    kind: int = PERCEPTRON,
    margin: float = 0.0,
    C: float = 1.0,
    *,
    bias_feature: float = 1.0,
    delta: float = 0.0,
) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    return np.array([float(kind), float(margin), float(C), float(bias_feature), float(delta)])


@_jit
def _step(signed_score, sq_norm, rule):
    """The step multiplier of one example (0: no update) for the rule ``rule``."""
    kind, margin, C = int(rule[KIND]), rule[MARGIN], rule[C_VALUE]
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
def _plain_perceptron(rule):
    return int(rule[KIND]) == PERCEPTRON and rule[MARGIN] == 0.0


@_jit
def binary_epoch(rows, y, order, weights, aux, slack, mistake_log, count, rule, sample_weight):
    n_features = weights.shape[0] - 1
    bias_feature, delta = rule[BIAS_FEATURE], rule[DELTA]
    use_slack, log = slack.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    needs_norm = int(rule[KIND]) != PERCEPTRON
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        if weighted and sample_weight[i] == 0.0:
            continue  # as if the example were absent
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if use_slack:
            score += delta * slack[i]
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:
            mistakes += 1
        sq_norm = 0.0
        if needs_norm:
            start = bias_feature * bias_feature + (delta * delta if use_slack else 0.0)
            sq_norm = _rows.sq_norm(rows, i, start)
            if not np.isfinite(sq_norm):
                return _rows.NON_FINITE_SCORE, mistakes, count
        eta = _step(y[i] * score, sq_norm, rule)
        if eta != 0.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = -1
            updates += 1
            if weighted:
                eta *= sample_weight[i]
            if not np.isfinite(eta):  # PA's loss / ||x||² overflowed (see _rows)
                return _rows.NON_FINITE_STEP, mistakes, count
            step = eta * y[i]
            _rows.add(rows, i, step, weights, aux, count)
            weights[n_features] += step * bias_feature
            if aux.shape[0] != 0:
                aux[n_features] += count * step * bias_feature
            if use_slack:
                slack[i] += step * delta
        if weighted:
            count += sample_weight[i]
        else:
            count += 1
    return updates, mistakes, count


@_jit
def argmax_lowest(scores):
    # Ties go to the lowest class index, as np.argmax and the reference do.
    best = 0
    for k in range(1, scores.shape[0]):
        if scores[k] > scores[best]:
            best = k
    return best


@_jit
def best_other(scores, gold):
    """The highest-scoring class other than ``gold`` (ties to the lowest index)."""
    best = 1 if gold == 0 else 0
    for k in range(best + 1, scores.shape[0]):
        if k != gold and scores[k] > scores[best]:
            best = k
    return best


@_jit
def mispredicted(scores, gold, other):
    """Whether the highest-scoring class (ties to the lowest index, as
    :func:`argmax_lowest`) is not ``gold``, given ``other = best_other(scores, gold)``:
    O(1), for the kernels that find the best other class anyway."""
    return scores[other] > scores[gold] or (scores[other] == scores[gold] and other < gold)


@_jit
def _multiclass_decision(scores, gold, sq_norm, rule):
    """(class to move away from, step, whether the prediction was wrong): the
    perceptron's argmax rule, or a margin rule."""
    if _plain_perceptron(rule):
        predicted = argmax_lowest(scores)
        wrong = predicted != gold
        return predicted, 1.0 if wrong else 0.0, wrong
    other = best_other(scores, gold)
    step = _step(scores[gold] - scores[other], 2.0 * sq_norm, rule)
    return other, step, mispredicted(scores, gold, other)


@_jit
def multiclass_epoch(rows, y, order, weights, aux, slack, mistake_log, count, rule, sample_weight):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature, delta = rule[BIAS_FEATURE], rule[DELTA]
    use_slack, log = slack.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    needs_norm = int(rule[KIND]) != PERCEPTRON
    scores = np.empty(n_classes)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        if weighted and sample_weight[i] == 0.0:
            continue  # as if the example were absent
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        if use_slack:
            for k in range(n_classes):
                scores[k] += delta * slack[i, k]
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        sq_norm = 0.0
        if needs_norm:
            start = bias_feature * bias_feature + (delta * delta if use_slack else 0.0)
            sq_norm = _rows.sq_norm(rows, i, start)
            if not np.isfinite(sq_norm):
                return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        predicted, eta, wrong = _multiclass_decision(scores, gold, sq_norm, rule)
        if wrong:
            mistakes += 1
        if eta != 0.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = predicted
            updates += 1
            if weighted:
                eta *= sample_weight[i]
            if not np.isfinite(eta):
                return _rows.NON_FINITE_STEP, mistakes, count
            _rows.move(rows, i, eta, gold, predicted, weights, aux, count)
            weights[n_features, predicted] -= eta * bias_feature
            weights[n_features, gold] += eta * bias_feature
            if aux.shape[0] != 0:
                scaled = count * eta
                aux[n_features, predicted] -= scaled * bias_feature
                aux[n_features, gold] += scaled * bias_feature
            if use_slack:
                slack[i, predicted] -= eta * delta
                slack[i, gold] += eta * delta
        if weighted:
            count += sample_weight[i]
        else:
            count += 1
    return updates, mistakes, count
