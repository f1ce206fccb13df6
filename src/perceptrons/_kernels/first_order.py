"""Compiled epochs of the first-order rules, binary and multiclass: ALMA_2 (Gentile 2001)
and online gradient descent on the hinge loss (Zinkevich 2003), plain and with an L1
penalty: FOBOS (Duchi & Singer 2009) and the truncated gradient (Langford, Li & Zhang
2009).

Both work on the example augmented with its bias feature, ``x̃ = [x, bias_feature]``
(the intercept is the weight of a constant feature, the last row).

ALMA_2, the approximate large margin algorithm with ``p = 2`` (Gentile 2001, JMLR 2,
Figure 1): with ``k`` the number of updates so far plus one and ``x̂ = x̃ / ||x̃||``, an
example of ``y w·x̂ <= (1 - alpha) B / sqrt(k)`` updates ``w <- w + η_k y x̂``, ``η_k =
step / sqrt(k)`` (the paper's ``C``), then projects ``w`` on the unit ball, ``w <- w /
max(1, ||w||)``, and ``k <- k + 1``. An example with ``x̃ = 0`` (no features, no
intercept) has no direction to normalize and does not update.

Online gradient descent (Zinkevich 2003) on the hinge loss ``max(0, 1 - y w·x̃)``,
unconstrained (the feasible set is the whole space, its projection the identity): with
``t`` the number of examples seen, this one included, an example of ``y w·x̃ < 1``
updates ``w <- w + η_t y x̃``, ``η_t = eta / t**power_t``.

FOBOS with L1 (``"fobos-l1"``, Duchi & Singer 2009) and the truncated gradient
(``"stg"``, Langford, Li & Zhang 2009) are OGD's epochs with a penalty ``l1 = λ``. FOBOS
follows each round's gradient step with the proximal step of ``η_t λ ||w||_1``: every
feature weight ``w_j <- sign(w_j) max(0, |w_j| - η_t λ)``. The truncated gradient, in
its simple form (the paper's ``θ = ∞``), truncates every feature weight the same way
every ``K``-th round (``K`` the constant ``k``, counted from its last truncation over
epochs and calls) with the gravity ``α = K η_t λ``, and leaves the other rounds alone
(``K = 1`` is FOBOS). The intercept is never shrunk.

Lazily: shrinking by ``a`` then by ``b`` is shrinking by ``a + b``, so an epoch keeps
``S``, the sum of the amounts of its rounds so far, and per feature the part of ``S``
it has had; a feature of the example is brought up to ``S`` when it is scored (in the
same pass), and every feature at the end of the epoch, so that the stored weights are
the model and an update costs O(nnz(x)) for any ``η_t``. The running totals are the
epoch's own (every epoch ends up to date): the state holds no per-feature statistic.
``penalty="l1"`` in the table: averaging with ``l1 > 0`` is refused (the average would
have to follow every weight every round), and every row counts as written.

Measured (in-memory fit, 10 epochs, against OGD with the same ``eta``, medians of 3 on
2 shared, busy cores, so the ratios varied from run to run): on a9a ``fobos-l1`` at the
default ``l1 = 1e-3`` keeps 91 of OGD's 120 nonzero weights at 84.90% test accuracy
against 84.91%, in 0.8x to 1.4x OGD's time; on 20 Newsgroups TF-IDF (20 classes: each
feature's 20 weights are shrunk whenever it is read, as many operations as its scores)
1.5x to 3x, and the default ``l1`` is far too strong there (41.6% accuracy; ``l1 =
1e-4``: 77.4% against 83.2%, 8x fewer nonzero weights). Skipping rows known to be zero
was slower (the branch keeps the row loops from vectorizing).

Multiclass, both rules (the single constraint against the best other class, as the
"max-score" hinge loss): one weight vector per class; with ``g`` the gold class and
``o`` the highest-scoring other one (ties to the lowest), the margin is ``s_g - s_o``
(ALMA: of the normalized example) and the update adds the step times the example to
``w_g`` and subtracts it from ``w_o``. ALMA projects each of the two classes on the
unit ball on its own (so ``||w_c|| <= 1`` for every class) and counts one update.

``weights``, ``aux``, ``mistake_log``, ``count``
    As in :mod:`perceptrons._kernels.perceptron`. OGD's weights are explicit. ALMA's
    column ``c`` holds ``v_c`` with the true weights ``w_c = scale_c * v_c`` (the
    intercept row included): the projection is the O(1) ``scale_c /= ||w_c||`` and a
    step ``δ x̃`` adds ``δ / scale_c * x̃`` to ``v_c``, so an update costs O(nnz(x)).
    ALMA's averaging is the bookkeeping of :mod:`perceptrons._kernels.romma`, per
    class: with ``P_c`` the sum of ``scale_c`` times the weight of each example seen
    since the last rescale, a change ``δ`` of ``v_c`` adds ``P_c δ`` to ``aux[:, c]``
    (``P_c`` before the example), the (weighted) sum of the weights after every
    example is ``P_c v_c - aux[:, c]`` and their mean that over ``count``. A class whose
    scale falls below ``1 / MAX_SCALE`` is folded (``aux_c <- aux_c - P_c v_c``, ``v_c
    <- scale_c v_c``, ``scale_c = 1``, ``P_c = 0``): O(n_features), once per factor
    ``MAX_SCALE`` of shrinking.
``stats``
    ALMA: shape ``(3, columns)`` (a binary model has one column): per class
    ``[scale, P, ||w||²]``, read and written back. ``||w||²`` is kept without a pass
    over the weights: a step ``δ x̃`` makes it ``||w||² + 2 δ w·x̃ + δ² ||x̃||²`` (``w·x̃``
    is the score just computed), the projection 1. OGD: empty.
``scalars``
    ALMA: ``[k]``, the paper's update counter (1 before the first update). OGD (and
    FOBOS-L1): ``[t]``, the examples seen (of positive weight). STG: ``[t, r, s]``, with
    ``r`` the rounds since its last truncation and ``s`` their total weight. All
    continue over epochs and calls.
``rule``
    Float64 array ``(kind, bias_feature, constants...)`` (:func:`first_order_rule`),
    the constants by name (``CONSTANTS``).
``sample_weight``
    As in :mod:`perceptrons._kernels.perceptron` (or empty): an example of weight
    ``s`` steps ``s`` times as far (ALMA: ``s η_k``, then the projection; OGD: ``s
    η_t``, the gradient of ``s`` times its hinge loss) and counts ``s`` times in the
    average; it advances ``k`` (an ALMA update) and ``t`` (OGD) by one whatever its
    weight. Weight 1 is the unweighted rule; weight 0 skips the example (no update, no
    count, no ``t``). The L1 penalty counts the round ``s`` times too: FOBOS shrinks
    by ``s η_t λ``; STG's ``K`` counts rounds (examples of positive weight) and its
    gravity is ``η_t λ`` times the total weight of the ``K`` rounds since its last
    truncation (``K η_t λ`` unweighted; with ``K = 1`` FOBOS's ``s η_t λ``): a weight
    of 2 counts the example's loss and its share of the penalty twice, as in FOBOS.

The kernels return ``(n_updates, n_mistakes, count)``, or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score or ``||x̃||²``, ``NON_FINITE_STEP``
at the first non-finite step (see :mod:`perceptrons._kernels._rows`).
``n_mistakes`` counts the wrong predictions made
before the update, as in :mod:`perceptrons._kernels.perceptron` (binary ``y w·x̃ <= 0``,
multiclass the argmax, ties to the lowest class, not the gold one); both rules also
update on correct predictions of too small a margin. Nothing is allocated per example
(one score buffer per multiclass call).
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import best_other, mispredicted

_jit = cached_njit(**_rows.TRAINING)
# The pieces are compiled into the kernels that call them (as in _rows).
_piece = register_jitable

ALMA, OGD, FOBOS_L1, STG = 0, 1, 2, 3
KINDS = {"alma": ALMA, "ogd": OGD, "fobos-l1": FOBOS_L1, "stg": STG}
# Positions in the ``rule`` array; the rule's constants follow.
KIND, BIAS_FEATURE, FIRST_CONSTANT = 0, 1, 2
# ALMA's constants (alpha, B, step) and OGD's (eta, power_t; FOBOS-L1 and STG: l1;
# STG: k, the period), from FIRST_CONSTANT on.
ALPHA, MARGIN_SCALE, ALMA_STEP = 2, 3, 4
ETA, POWER_T, L1, PERIOD = 2, 3, 4, 5
# STG's scalars after t: the rounds since its last truncation and their total weight.
ROUNDS, GRAVITY = 1, 2
# A class's scale is folded into its weights when it falls below 1 / MAX_SCALE (the
# projection only shrinks it): P v and aux then stay within about MAX_SCALE times the
# sum they represent, which bounds the mean's rounding error (as ROMMA's).
MAX_SCALE = 1e4
# Row of each statistic of ALMA's ``stats``.
SCALE, SCALE_SUM, SQ_NORM = 0, 1, 2


#: The constants each rule's kernels read, from FIRST_CONSTANT on, by name.
CONSTANTS = {
    "alma": ("alpha", "B", "step"),
    "ogd": ("eta", "power_t"),
    "fobos-l1": ("eta", "power_t", "l1"),
    "stg": ("eta", "power_t", "l1", "k"),
}


def first_order_rule(name: str, bias_feature: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    values = [float(constants[key]) for key in CONSTANTS[name]]
    return np.array([float(KINDS[name]), float(bias_feature), *values])


# ------------------------------------------------------------------------------ ALMA
@_jit
def _fold_column(weights, aux, k, scale_sum, factor):
    """``aux[:, k] -= scale_sum * v[:, k]`` (the running sum into ``aux``), then
    ``v[:, k] *= factor`` (2-D ``weights`` and ``aux``)."""
    if aux.shape[0] != 0:
        for j in range(weights.shape[0]):
            aux[j, k] -= scale_sum * weights[j, k]
    for j in range(weights.shape[0]):
        weights[j, k] *= factor


@_jit
def _add_column(rows, i, step, weights, k, aux, aux_factor):
    """``weights[:, k] += step * x_i`` (feature rows), tracked in ``aux``."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            change = step * data[p]
            weights[indices[p], k] += change
            if averaged:
                aux[indices[p], k] += aux_factor * change
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                change = step * value
                weights[j, k] += change
                if averaged:
                    aux[j, k] += aux_factor * change


@_jit
def _alma_step(rows, i, delta, score, sq_norm, weights, aux, stats, k, bias_feature):
    """Class ``k`` of ALMA's 2-D state: ``w_k <- w_k + delta * x̃``, then the projection
    on the unit ball; ``score`` is ``w_k·x̃`` before the step, ``sq_norm`` is ``||x̃||²``."""
    n_features = weights.shape[0] - 1
    scale, scale_sum = stats[SCALE, k], stats[SCALE_SUM, k]
    w_sq = stats[SQ_NORM, k] + 2.0 * delta * score + delta * delta * sq_norm
    w_sq = max(w_sq, 0.0)  # rounding near w = 0
    change = delta / scale
    _add_column(rows, i, change, weights, k, aux, scale_sum)
    weights[n_features, k] += change * bias_feature
    if aux.shape[0] != 0:
        aux[n_features, k] += scale_sum * (change * bias_feature)
    if w_sq > 1.0:
        scale /= np.sqrt(w_sq)
        w_sq = 1.0
        if scale < 1.0 / MAX_SCALE:
            _fold_column(weights, aux, k, scale_sum, scale)
            scale, scale_sum = 1.0, 0.0
    stats[SCALE, k], stats[SCALE_SUM, k], stats[SQ_NORM, k] = scale, scale_sum, w_sq


@_jit
def _finite_step(delta, sq_norm):
    """Whether ALMA's step ``delta`` and the squared norm it adds, ``delta² ||x̃||²``,
    are finite (see :mod:`perceptrons._kernels._rows`): an overflow there would
    project the weights on a ball of radius 0."""
    return np.isfinite(delta * delta * sq_norm)


@_jit
def alma_binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    bias_sq = bias_feature * bias_feature
    alpha, margin_scale, step = rule[ALPHA], rule[MARGIN_SCALE], rule[ALMA_STEP]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    # One column: the 2-D pieces serve the binary model through these views.
    columns = weights.reshape((n_features + 1, 1))
    aux_columns = aux.reshape((aux.shape[0], 1))
    k = scalars[0]
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        raw = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        score = stats[SCALE, 0] * raw
        sq_norm = _rows.sq_norm(rows, i, bias_sq)
        if not (np.isfinite(score) and np.isfinite(sq_norm)):
            scalars[0] = k
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:  # (the scale is positive)
            mistakes += 1
        if sq_norm > 0.0:
            norm = np.sqrt(sq_norm)
            root_k = np.sqrt(k)
            if y[i] * score / norm <= (1.0 - alpha) * margin_scale / root_k:
                if log:
                    mistake_log[updates, 0] = position
                    mistake_log[updates, 1] = -1
                updates += 1
                delta = weight * (step / root_k) * y[i] / norm
                if not _finite_step(delta, sq_norm):
                    scalars[0] = k
                    return _rows.NON_FINITE_STEP, mistakes, count
                _alma_step(
                    rows, i, delta, score, sq_norm, columns, aux_columns, stats, 0, bias_feature
                )
                k += 1.0
        stats[SCALE_SUM, 0] += weight * stats[SCALE, 0]
        count += weight
    scalars[0] = k
    return updates, mistakes, count


@_jit
def alma_multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    bias_sq = bias_feature * bias_feature
    alpha, margin_scale, step = rule[ALPHA], rule[MARGIN_SCALE], rule[ALMA_STEP]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    scores = np.empty(n_classes)
    k = scalars[0]
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        for c in range(n_classes):
            scores[c] = weights[n_features, c] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        for c in range(n_classes):
            scores[c] *= stats[SCALE, c]
        sq_norm = _rows.sq_norm(rows, i, bias_sq)
        if not (_rows.finite_scores(scores) and np.isfinite(sq_norm)):
            scalars[0] = k
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = best_other(scores, gold)
        if mispredicted(scores, gold, other):
            mistakes += 1
        if sq_norm > 0.0:
            norm = np.sqrt(sq_norm)
            root_k = np.sqrt(k)
            if (scores[gold] - scores[other]) / norm <= (1.0 - alpha) * margin_scale / root_k:
                if log:
                    mistake_log[updates, 0] = position
                    mistake_log[updates, 1] = other
                updates += 1
                delta = weight * (step / root_k) / norm
                if not _finite_step(delta, sq_norm):
                    scalars[0] = k
                    return _rows.NON_FINITE_STEP, mistakes, count
                for c, move in ((gold, delta), (other, -delta)):
                    _alma_step(
                        rows, i, move, scores[c], sq_norm, weights, aux, stats, c, bias_feature
                    )
                k += 1.0
        for c in range(n_classes):
            stats[SCALE_SUM, c] += weight * stats[SCALE, c]
        count += weight
    scalars[0] = k
    return updates, mistakes, count


# ------------------------------------------------------------------------------- OGD
@_piece
def _caught_up_dot(rows, i, weights, last, total, score):
    """``score + x_i·w`` (1-D ``weights``, the feature rows), each feature of ``x_i``
    first shrunk by the penalty's rounds since it was last, ``total - last[j]`` (one
    shrink by their sum is all of them in turn; by 0, none). One pass with the dot
    product, without a branch: a pass of its own, a call per feature, or a test of
    ``total > last[j]`` (unpredictable for STG) made the a9a epoch twice OGD's."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            caught_up = _rows.shrink(weights[j], total - last[j])
            weights[j] = caught_up
            last[j] = total
            score += data[p] * caught_up
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                weights[j] = _rows.shrink(weights[j], total - last[j])
                last[j] = total
            score += value * weights[j]
    return score


@_piece
def _caught_up_scores(rows, i, weights, last, total, scores):
    """:func:`_caught_up_dot` for every class: ``scores[k] += x_i·w_k`` (2-D
    ``weights``), each feature row of ``x_i`` caught up first."""
    n_classes = scores.shape[0]
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            value, j = data[p], indices[p]
            amount = total - last[j]
            last[j] = total
            for k in range(n_classes):
                weights[j, k] = _rows.shrink(weights[j, k], amount)
            for k in range(n_classes):
                scores[k] += value * weights[j, k]
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                amount = total - last[j]
                last[j] = total
                for k in range(n_classes):
                    caught_up = _rows.shrink(weights[j, k], amount)
                    weights[j, k] = caught_up
                    scores[k] += value * caught_up


@_piece
def _all_caught_up(weights, last, total):
    """Every feature brought up to date: the stored weights are the model."""
    for j in range(last.shape[0]):
        amount = total - last[j]
        if amount > 0.0:
            for k in range(weights.shape[1]):
                weights[j, k] = _rows.shrink(weights[j, k], amount)
            last[j] = total


@_piece
def _step_size(eta, t, power_t):
    """``eta / t**power_t``, the usual decays without a call to ``pow`` (a third of
    FOBOS-L1's epoch on a9a, where every round needs its step)."""
    if power_t == 0.5:
        return eta / np.sqrt(t)
    if power_t == 1.0:
        return eta / t
    if power_t == 0.0:
        return eta
    return eta / t**power_t


@_piece
def _penalty(kind, weight, rate, l1, period, rounds, gravity):
    """The round's L1 shrinking (of weight ``weight``, step ``rate = eta_t``), and STG's
    ``(rounds, gravity)`` after it: FOBOS-L1 shrinks every round by ``s eta_t l1``; STG
    counts the rounds and their weight since its last truncation, and at the
    ``period``-th truncates by ``eta_t l1`` times that weight (``k eta_t l1`` unweighted)."""
    if kind == FOBOS_L1:
        return weight * rate * l1, rounds, gravity
    rounds += 1.0
    gravity += weight
    if rounds >= period:
        return rate * l1 * gravity, 0.0, 0.0
    return 0.0, rounds, gravity


@_jit
def ogd_binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features = weights.shape[0] - 1
    kind = int(rule[KIND])
    bias_feature = rule[BIAS_FEATURE]
    eta, power_t = rule[ETA], rule[POWER_T]
    l1 = rule[L1] if kind != OGD else 0.0
    period = rule[PERIOD] if kind == STG else 1.0
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    # The L1 penalty, lazily: ``total`` sums the shrinking of this epoch's rounds, and
    # ``last[j]`` how much of it feature j has had (all at the start: every epoch ends
    # with the weights up to date). The pieces read the weights as one column.
    lazy = l1 > 0.0
    total, last = 0.0, np.zeros(n_features if lazy else 0)
    columns = weights.reshape((n_features + 1, 1))
    t = scalars[0]
    rounds, gravity = (scalars[ROUNDS], scalars[GRAVITY]) if kind == STG else (0.0, 0.0)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        t += 1.0
        rate = _step_size(eta, t, power_t) if kind != OGD else 0.0  # (OGD's: on updates)
        intercept = weights[n_features] * bias_feature
        if lazy:
            score = _caught_up_dot(rows, i, weights, last, total, intercept)
        else:
            score = _rows.dot(rows, i, weights, intercept)
        if not np.isfinite(score):
            scalars[0] = t
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:
            mistakes += 1
        if y[i] * score < 1.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = -1
            updates += 1
            step = weight * (rate if kind != OGD else _step_size(eta, t, power_t)) * y[i]
            if not np.isfinite(step):
                scalars[0] = t
                return _rows.NON_FINITE_STEP, mistakes, count
            _rows.add(rows, i, step, weights, aux, count)
            change = step * bias_feature
            weights[n_features] += change
            if averaged:
                aux[n_features] += count * change
        if kind != OGD:
            amount, rounds, gravity = _penalty(kind, weight, rate, l1, period, rounds, gravity)
            total += amount
            if not np.isfinite(total):
                scalars[0] = t
                return _rows.NON_FINITE_STEP, mistakes, count
        count += weight
    scalars[0] = t
    if kind == STG:
        scalars[ROUNDS], scalars[GRAVITY] = rounds, gravity
    if lazy:
        _all_caught_up(columns, last, total)
    return updates, mistakes, count


@_jit
def ogd_multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    kind = int(rule[KIND])
    bias_feature = rule[BIAS_FEATURE]
    eta, power_t = rule[ETA], rule[POWER_T]
    l1 = rule[L1] if kind != OGD else 0.0
    period = rule[PERIOD] if kind == STG else 1.0
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    lazy = l1 > 0.0  # (as in the binary epoch)
    total, last = 0.0, np.zeros(n_features if lazy else 0)
    scores = np.empty(n_classes)
    t = scalars[0]
    rounds, gravity = (scalars[ROUNDS], scalars[GRAVITY]) if kind == STG else (0.0, 0.0)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        t += 1.0
        rate = _step_size(eta, t, power_t) if kind != OGD else 0.0
        for c in range(n_classes):
            scores[c] = weights[n_features, c] * bias_feature
        if lazy:
            _caught_up_scores(rows, i, weights, last, total, scores)
        else:
            _rows.add_scores(rows, i, weights, scores)
        if not _rows.finite_scores(scores):
            scalars[0] = t
            return _rows.NON_FINITE_SCORE, mistakes, count
        gold = y[i]
        other = best_other(scores, gold)
        if mispredicted(scores, gold, other):
            mistakes += 1
        if scores[gold] - scores[other] < 1.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = other
            updates += 1
            step = weight * (rate if kind != OGD else _step_size(eta, t, power_t))
            if not np.isfinite(step):
                scalars[0] = t
                return _rows.NON_FINITE_STEP, mistakes, count
            _rows.move(rows, i, step, gold, other, weights, aux, count)
            change = step * bias_feature
            weights[n_features, gold] += change
            weights[n_features, other] -= change
            if averaged:
                aux[n_features, gold] += count * change
                aux[n_features, other] -= count * change
        if kind != OGD:
            amount, rounds, gravity = _penalty(kind, weight, rate, l1, period, rounds, gravity)
            total += amount
            if not np.isfinite(total):
                scalars[0] = t
                return _rows.NON_FINITE_STEP, mistakes, count
        count += weight
    scalars[0] = t
    if kind == STG:
        scalars[ROUNDS], scalars[GRAVITY] = rounds, gravity
    if lazy:
        _all_caught_up(weights, last, total)
    return updates, mistakes, count


#: The kernel of each rule, binary (False) and multiclass (True).
KERNELS = {
    ("alma", False): alma_binary_epoch,
    ("alma", True): alma_multiclass_epoch,
    ("ogd", False): ogd_binary_epoch,
    ("ogd", True): ogd_multiclass_epoch,
    ("fobos-l1", False): ogd_binary_epoch,
    ("fobos-l1", True): ogd_multiclass_epoch,
    ("stg", False): ogd_binary_epoch,
    ("stg", True): ogd_multiclass_epoch,
}
