"""Compiled loops of the voted (kernel) perceptron: exact online training inside a block,
and the scores of every intermediate model at prediction time.

Training (:func:`dual_block_binary`, :func:`dual_block_native`) walks one block of ``B``
examples in stream order. The caller has already computed, with one BLAS product, each
block example's score under the model as it stood when the block began (``base``,
shape ``(B, n_columns)``); the kernel adds the contributions of the updates made earlier
*inside* the block from ``block_gram`` (``K(X_block, X_block)``, row ``t`` holding
example ``t``'s kernel values, as ``base``'s rows are computed) and the intercept, so
the mistakes are exactly those of the textbook dual perceptron. Columns are independent binary
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
from perceptrons._kernels._rows import NON_FINITE_SCORE, TRAINING, finite_scores
from perceptrons._kernels.perceptron import argmax_lowest

_jit = cached_njit(**TRAINING)

RULE_VOTE, RULE_AVERAGE, RULE_LAST, RULE_RANDOM = 0, 1, 2, 3


@_jit
def dual_block_binary(
    base, block_gram, examples, targets, weights, bias, bias_sq, slack, delta_sq, coef, log
):
    n_block, n_columns = base.shape
    weighted = weights.shape[0] != 0
    active = np.empty(n_block, dtype=np.int64)
    scores = np.empty(n_columns)
    n_active = 0
    n_updates = 0
    for t in range(n_block):
        if weighted and weights[t] == 0.0:
            continue  # as if the example were absent
        # Each column's score adds the earlier updates in their order: one pass over
        # them for every column, reading example t's row of kernel values.
        for c in range(n_columns):
            scores[c] = base[t, c] + bias[c]
        for a in range(n_active):
            p = active[a]
            value = block_gram[t, p]
            for c in range(n_columns):
                scores[c] += coef[p, c] * value
        updated = False
        for c in range(n_columns):
            score = scores[c]
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
            value = block_gram[t, p]
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
def stage_totals(votes, stage_updates, stage_last):
    """The votes' running sums over the models of the longest stage, and each stage's
    total votes (its models before the last have the sequence's votes)."""
    n_stages = stage_updates.shape[0]
    n_models = stage_updates[n_stages - 1] + 1 if n_stages else 0
    cumulative = np.empty(n_models)
    acc = 0.0
    for k in range(n_models):
        acc += votes[k]
        cumulative[k] = acc
    totals = np.empty(n_stages)
    for s in range(n_stages):
        n = stage_updates[s]
        totals[s] = (cumulative[n - 1] if n > 0 else 0.0) + stage_last[s]
    return cumulative, totals


@_jit
def _random_models(cumulative, stage_updates, stage_totals, draw, chosen, by_model):
    """For one row: the model each stage draws (``chosen[s]``), and the stages in the
    order of their models (``by_model``), so that one pass finds every one.

    Stage ``s`` draws model ``k`` with probability proportional to its votes: the
    first ``k`` whose cumulative votes exceed ``draw * total``; the models before the
    stage's last one have the sequence's votes (``cumulative``), the last one the rest.
    """
    n_stages = stage_updates.shape[0]
    for s in range(n_stages):
        target = draw * stage_totals[s]
        n = stage_updates[s]
        # First k < n with cumulative[k] > target (binary search), else n.
        low, high = 0, n
        while low < high:
            middle = (low + high) // 2
            if cumulative[middle] > target:
                high = middle
            else:
                low = middle + 1
        chosen[s] = low
        # Insertion sort of the stages by their chosen model (a few dozen at most).
        position = s
        while position > 0 and chosen[by_model[position - 1]] > low:
            by_model[position] = by_model[position - 1]
            position -= 1
        by_model[position] = s


@_jit
def staged_scores_binary(
    gram, support, signs, votes, bias_sq, rule, stage_updates, stage_last, draws, out
):
    """One binary sequence, every stage in one pass: ``out[s, i]`` is row ``i``'s
    decision value under ``rule`` for the model of stage ``s``.

    The sequence's model ``k`` (``k = 0`` is the zero model) has ``votes[k]`` votes.
    Stage ``s`` is its first ``stage_updates[s]`` updates (nondecreasing in ``s``):
    its models are the sequence's first ones, with their votes, except its last model,
    which has ``stage_last[s]`` votes (the examples after its last update).

    vote: sum of votes times the sign of each model, over the total vote count.
    average: survival-weighted mean score (the averaged perceptron's score).
    last: the score of the stage's final model. random: the score of model ``k``
    drawn with probability proportional to its votes, ``draws[i]`` being a uniform
    number in [0, 1).
    """
    n_rows, n_stages = gram.shape[0], stage_updates.shape[0]
    n_models = stage_updates[n_stages - 1] + 1 if n_stages else 0
    cumulative, totals = stage_totals(votes, stage_updates, stage_last)
    chosen = np.empty(n_stages, dtype=np.int64)
    by_model = np.empty(n_stages, dtype=np.int64)
    for i in range(n_rows):
        if rule == RULE_RANDOM:
            _random_models(cumulative, stage_updates, totals, draws[i], chosen, by_model)
        score = 0.0
        voted = 0.0
        averaged = 0.0
        stage = 0
        picked = 0
        for k in range(n_models):
            # score is model k's. Close the stages whose last model it is, then count
            # its votes in the running sums of the later stages.
            while stage < n_stages and stage_updates[stage] == k:
                total = totals[stage]
                if rule == RULE_VOTE:
                    value = voted + stage_last[stage] * _sign(score)
                    out[stage, i] = value / total if total > 0 else -1.0
                elif rule == RULE_AVERAGE:
                    value = averaged + stage_last[stage] * score
                    out[stage, i] = value / total if total > 0 else 0.0
                elif rule == RULE_LAST:
                    out[stage, i] = score
                stage += 1
            if rule == RULE_RANDOM:
                while picked < n_stages and chosen[by_model[picked]] == k:
                    out[by_model[picked], i] = score
                    picked += 1
            if k + 1 == n_models:
                break
            voted += votes[k] * _sign(score)
            averaged += votes[k] * score
            score += signs[k] * (gram[i, support[k]] + bias_sq)


@_jit
def staged_scores_native(
    gram,
    support,
    gold,
    predicted,
    steps,
    votes,
    bias_sq,
    rule,
    stage_updates,
    stage_last,
    draws,
    out,
):
    """The native multiclass sequence, every stage in one pass: ``out[s, i, c]`` is
    class ``c``'s decision value for the model of stage ``s`` (stages and votes as in
    :func:`staged_scores_binary`).

    vote: the share of votes of the models whose argmax is ``c`` (ties to the lowest
    class). average: the survival-weighted mean score of class ``c``. last / random:
    the scores of the stage's final model / of one model drawn with probability
    proportional to its votes.
    """
    n_rows, n_stages = gram.shape[0], stage_updates.shape[0]
    n_classes = out.shape[2]
    weighted = steps.shape[0] != 0
    n_models = stage_updates[n_stages - 1] + 1 if n_stages else 0
    cumulative, totals = stage_totals(votes, stage_updates, stage_last)
    chosen = np.empty(n_stages, dtype=np.int64)
    by_model = np.empty(n_stages, dtype=np.int64)
    scores = np.zeros(n_classes)
    # vote: the votes so far of each class; average: the votes so far times each
    # class's score, kept as sum_j step_j * (votes of the models from j on) -- two
    # classes per update, whatever the number of classes.
    running = np.zeros(n_classes)
    for i in range(n_rows):
        if rule == RULE_RANDOM:
            _random_models(cumulative, stage_updates, totals, draws[i], chosen, by_model)
        scores[:] = 0.0
        running[:] = 0.0
        best = 0
        stage = 0
        picked = 0
        for k in range(n_models):
            while stage < n_stages and stage_updates[stage] == k:
                total = totals[stage]
                last_votes = stage_last[stage]
                for c in range(n_classes):
                    if rule == RULE_VOTE:
                        value = running[c] + (last_votes if c == best else 0.0)
                        out[stage, i, c] = value / total if total > 0 else 0.0
                    elif rule == RULE_AVERAGE:
                        # running[c] holds sum_j delta_jc * cumulative[j] over the
                        # updates so far: the mean is scores - that / total.
                        out[stage, i, c] = scores[c] - running[c] / total if total > 0 else 0.0
                    elif rule == RULE_LAST:
                        out[stage, i, c] = scores[c]
                stage += 1
            if rule == RULE_RANDOM:
                while picked < n_stages and chosen[by_model[picked]] == k:
                    for c in range(n_classes):
                        out[by_model[picked], i, c] = scores[c]
                    picked += 1
            if k + 1 == n_models:
                break
            if rule == RULE_VOTE:
                running[best] += votes[k]
            value = gram[i, support[k]] + bias_sq
            if weighted:
                value *= steps[k]
            g, p = gold[k], predicted[k]
            scores[g] += value
            scores[p] -= value
            if rule == RULE_AVERAGE:
                # Model k+1 on carry this update: its weight in the mean is the votes
                # of models k+1..last, total - cumulative[k].
                running[g] += value * cumulative[k]
                running[p] -= value * cumulative[k]
            elif rule == RULE_VOTE:
                # Only two classes moved, one up and one down (which is which depends
                # on the sign of the kernel value). If the leader went down, any class
                # may lead now; otherwise only the class that went up can overtake it.
                up, down = (g, p) if value >= 0.0 else (p, g)
                if best == down:
                    best = argmax_lowest(scores)
                elif scores[up] > scores[best] or (scores[up] == scores[best] and up < best):
                    best = up
