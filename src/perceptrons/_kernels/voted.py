"""Compiled loops of the voted (kernel) perceptron: exact online training inside a block,
and the scores of every intermediate model at prediction time.

Training (:func:`dual_block_binary`, :func:`dual_block_native`) walks one block of ``B``
examples in stream order. The caller has already computed, with one BLAS product, each
block example's score under the model as it stood when the block began (``base``,
shape ``(B, n_columns)``); the kernel adds the contributions of the updates made earlier
*inside* the block from ``block_gram`` (``K(X_block, X_block)``) and the intercept, so the
mistakes are exactly those of the textbook dual perceptron. Columns are independent binary
problems (one for binary, one per class for one-vs-rest); the native multiclass kernel
has one column per class and predicts their argmax.

``slack`` implements the Δ trick (an own feature of value Δ per training example, Freund &
Schapire 1999): its row for the example adds to the example's training scores only; the update adds
Δ² to it. A size-0 ``slack`` disables it.

``weights`` holds the block's sample weights (size 0: every weight 1): an example of
weight ``s`` updates by ``s`` times the step (its dual coefficient, the intercept and its
Δ feature), and one of weight 0 is skipped, as if absent.

The update log rows are ``(position in block, column, sign)`` (binary) or
``(position in block, gold, predicted)`` (native). Kernels return the number of updates,
or ``NON_FINITE_SCORE`` at the first non-finite score (see :mod:`perceptrons._kernels._rows`).

Prediction (:func:`sequence_scores_binary`, :func:`sequence_scores_native`) computes, per
row of ``gram`` (kernel values between the rows to predict and the support vectors),
the score of every intermediate model as prefix sums over the update sequence, and
reduces them by the prediction rule. Model ``k`` (``k = 0`` is the zero model) has
``votes[k]`` votes: the number of examples after which it was the current model (their
total weight, for a model trained with sample weights, whose updates then step by their
example's weight: ``signs`` holds ``±s``, the native ``steps`` holds ``s``).
"""

import numpy as np

from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels._rows import NON_FINITE_SCORE, finite_scores
from perceptrons._kernels.perceptron import argmax_lowest

_jit = cached_njit(nogil=True)

RULE_VOTE, RULE_AVERAGE, RULE_LAST, RULE_RANDOM = 0, 1, 2, 3


@_jit
def dual_block_binary(
    base, block_gram, examples, targets, weights, bias, bias_sq, slack, delta_sq, coef, log
):
    n_block, n_columns = base.shape
    weighted = weights.shape[0] != 0
    active = np.empty(n_block, dtype=np.int64)
    n_active = 0
    n_updates = 0
    for t in range(n_block):
        if weighted and weights[t] == 0.0:
            continue  # as if the example were absent
        updated = False
        for c in range(n_columns):
            score = base[t, c] + bias[c]
            for a in range(n_active):
                p = active[a]
                score += coef[p, c] * block_gram[p, t]
            if slack.size > 0:
                score += slack[examples[t], c]
            if not np.isfinite(score):
                return NON_FINITE_SCORE
            sign = targets[t, c]
            if sign * score <= 0.0:
                step = sign * weights[t] if weighted else sign
                coef[t, c] += step
                bias[c] += step * bias_sq
                if slack.size > 0:
                    slack[examples[t], c] += step * delta_sq
                log[n_updates, 0] = t
                log[n_updates, 1] = c
                log[n_updates, 2] = np.int64(sign)
                n_updates += 1
                updated = True
        if updated:
            active[n_active] = t
            n_active += 1
    return n_updates


@_jit
def dual_block_native(
    base, block_gram, examples, targets, weights, bias, bias_sq, slack, delta_sq, coef, log
):
    n_block, n_classes = base.shape
    weighted = weights.shape[0] != 0
    scores = np.empty(n_classes)
    active = np.empty(n_block, dtype=np.int64)
    n_active = 0
    n_updates = 0
    for t in range(n_block):
        if weighted and weights[t] == 0.0:
            continue  # as if the example were absent
        for c in range(n_classes):
            scores[c] = base[t, c] + bias[c]
        for a in range(n_active):
            p = active[a]
            value = block_gram[p, t]
            for c in range(n_classes):
                scores[c] += coef[p, c] * value
        if slack.size > 0:
            for c in range(n_classes):
                scores[c] += slack[examples[t], c]
        if not finite_scores(scores):
            return NON_FINITE_SCORE
        predicted = 0
        for c in range(1, n_classes):
            if scores[c] > scores[predicted]:
                predicted = c
        gold = targets[t]
        if predicted != gold:
            step = weights[t] if weighted else 1.0
            coef[t, gold] += step
            coef[t, predicted] -= step
            bias[gold] += step * bias_sq
            bias[predicted] -= step * bias_sq
            if slack.size > 0:
                slack[examples[t], gold] += step * delta_sq
                slack[examples[t], predicted] -= step * delta_sq
            log[n_updates, 0] = t
            log[n_updates, 1] = gold
            log[n_updates, 2] = predicted
            n_updates += 1
            active[n_active] = t
            n_active += 1
    return n_updates


@_jit
def _sign(score):
    # A zero score predicts the negative class, as in training (y * score <= 0).
    return 1.0 if score > 0.0 else -1.0


@_jit
def sequence_scores_binary(gram, support, signs, votes, bias_sq, rule, draws, out):
    """One binary sequence: ``out[i]`` is row ``i``'s decision value under ``rule``.

    vote: sum of votes times the sign of each model, over the total vote count.
    average: survival-weighted mean score (the averaged perceptron's score).
    last: the score of the final model. random: the score of model ``k`` drawn with
    probability proportional to its votes, ``draws[i]`` being a uniform number in [0, 1).
    """
    n_rows, n_updates = gram.shape[0], support.shape[0]
    total = 0.0
    for k in range(n_updates + 1):
        total += votes[k]
    for i in range(n_rows):
        score = 0.0
        target = draws[i] * total if rule == RULE_RANDOM else -1.0
        seen = votes[0]
        chosen = 0.0 if rule == RULE_RANDOM and target < seen else np.nan
        voted = votes[0] * _sign(score)
        averaged = 0.0
        for j in range(n_updates):
            score += signs[j] * (gram[i, support[j]] + bias_sq)
            weight = votes[j + 1]
            voted += weight * _sign(score)
            averaged += weight * score
            if rule == RULE_RANDOM and np.isnan(chosen):
                seen += weight
                if target < seen:
                    chosen = score
        if rule == RULE_VOTE:
            out[i] = voted / total if total > 0 else -1.0
        elif rule == RULE_AVERAGE:
            out[i] = averaged / total if total > 0 else 0.0
        elif rule == RULE_LAST:
            out[i] = score
        else:
            out[i] = score if np.isnan(chosen) else chosen


@_jit
def sequence_scores_native(gram, support, gold, predicted, steps, votes, bias_sq, rule, draws, out):
    """The native multiclass sequence: ``out[i, c]`` is class ``c``'s decision value.

    vote: the share of votes of the models whose argmax is ``c``. average: the
    survival-weighted mean score of class ``c``. last / random: the scores of the final
    model / of one model drawn with probability proportional to its votes.
    """
    n_rows, n_updates = gram.shape[0], support.shape[0]
    n_classes = out.shape[1]
    weighted = steps.shape[0] != 0
    scores = np.zeros(n_classes)
    # The average is sum_j delta_j * (votes of every model from j on): one pass.
    remaining = np.empty(n_updates + 1)
    acc = 0.0
    for k in range(n_updates, -1, -1):
        acc += votes[k]
        remaining[k] = acc
    total = acc
    for i in range(n_rows):
        scores[:] = 0.0
        for c in range(n_classes):
            out[i, c] = 0.0
        best = 0
        target = draws[i] * total
        seen = votes[0]
        picked = rule == RULE_RANDOM and target < seen
        if rule == RULE_VOTE:
            out[i, best] += votes[0]
        for j in range(n_updates):
            value = gram[i, support[j]] + bias_sq
            if weighted:
                value *= steps[j]
            g, p = gold[j], predicted[j]
            scores[g] += value
            scores[p] -= value
            if rule == RULE_AVERAGE:
                out[i, g] += value * remaining[j + 1]
                out[i, p] -= value * remaining[j + 1]
            elif rule == RULE_VOTE:
                # Only two classes moved, one up and one down (which is which depends
                # on the sign of the kernel value). If the leader went down, any class
                # may lead now; otherwise only the class that went up can overtake it.
                up, down = (g, p) if value >= 0.0 else (p, g)
                if best == down:
                    best = argmax_lowest(scores)
                elif scores[up] > scores[best] or (scores[up] == scores[best] and up < best):
                    best = up
                out[i, best] += votes[j + 1]
            elif rule == RULE_RANDOM and not picked:
                seen += votes[j + 1]
                if target < seen:
                    picked = True
                    for c in range(n_classes):
                        out[i, c] = scores[c]
        if rule == RULE_VOTE or rule == RULE_AVERAGE:
            for c in range(n_classes):
                out[i, c] = out[i, c] / total if total > 0 else 0.0
        elif rule == RULE_LAST or not picked:
            for c in range(n_classes):
                out[i, c] = scores[c]
