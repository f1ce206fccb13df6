"""Compiled epochs of the adagrad family, binary and multiclass: AdaGrad in its
composite mirror descent (FOBOS) and regularized dual averaging (RDA) forms (Duchi,
Hazan & Singer 2011), and the normalized adaptive gradient NAG (Ross, Mineiro &
Langford 2013), all on the hinge loss.

Every rule steps each weight by its own rate, from the history of its feature's
gradients. On the hinge loss ``l = max(0, 1 - y w·x̃)`` (``x̃ = [x, bias_feature]``),
the gradient of an example with ``l > 0`` is ``g = -s y x̃`` (``s`` its sample weight),
and 0 otherwise.

``"ada-fobos"`` (Duchi et al. 2011, the diagonal composite mirror descent update)
    ``G_j += g_j²``, ``H_j = delta + sqrt(G_j)``, ``w_j <- w_j - eta g_j / H_j``, then
    with ``l1 = λ > 0`` every feature weight is shrunk towards 0 by ``eta λ s / H_j``
    (the round's proximal step). A feature absent from ``x`` has ``g_j = 0`` and an
    unchanged ``H_j``, so its shrinking over the rounds it is absent adds up: it is
    applied lazily, when the feature is next scored (``eta λ (t - t_j) / H_j``, ``t_j``
    the round it was last brought up to date), and to every weight at the end of the
    epoch, so that the stored weights are the model. The intercept is not penalized.
``"ada-rda"`` (Duchi et al. 2011, the diagonal regularized dual averaging update)
    ``u_j += g_j``, ``G_j += g_j²``, ``w_j = -eta sign(u_j) max(0, |u_j| - λ t) / H_j``:
    a function of the sum of gradients ``u``, of ``G`` and of the rounds' weight ``t``
    for every feature. With ``λ = 0`` it depends on ``u_j`` and ``G_j`` only, which
    change on the features of ``x``: it is recomputed there after each update. With
    ``λ > 0`` its threshold grows every round: the weights of the features of ``x`` are
    recomputed when they are scored (O(nnz)) and every weight at the end of the epoch,
    so that the stored weights are the model. The intercept is not penalized.
``"ada-fobos-l1"``, ``"ada-rda-l1"``
    SOL's names for the two above with an L1 strength by default: the rule table's
    entries name ``ada-fobos`` and ``ada-rda`` as the kernels they are (``same_as``).
``"nag"`` (Ross et al. 2013, Algorithm 2)
    Per feature its scale ``s_j`` (the largest ``|x_j|`` seen) and its squared
    gradients ``G_j``; a global ``N``. Each round: where ``|x_j| > s_j``, ``w_j <- w_j
    s_j / |x_j|`` and ``s_j <- |x_j|``; predict; ``t += s``, ``N += s Σ_j x_j² /
    s_j²``; then ``G_j += g_j²`` and ``w_j <- w_j - eta sqrt(t / N) g_j / (s_j
    sqrt(G_j))``. Its predictions do not depend on a per-feature scaling of the input.

Multiclass (the single constraint against the best other class, as the multiclass
hinge loss of Crammer & Singer 2001 restricted to one constraint): ``l = max(0, 1 -
(w_gold·x̃ - w_other·x̃))`` with ``other`` the highest-scoring class but the gold one
(ties to the lowest); its gradient is ``-s x̃`` on the gold class's weights and ``+s
x̃`` on the other's. Every weight has its own statistics (``G``, ``u``); NAG's scales and
``N`` describe the input, and are shared by the classes.

``weights``, ``aux``, ``mistake_log``, ``count``
    As in :mod:`perceptrons._kernels.perceptron`; the intercept is the weight of a
    constant feature of value ``bias_feature`` with statistics of its own (the last
    row). A binary model's arrays are worked on as one-column 2-D views.
``stats``
    ``"ada-fobos"``: ``stats[0]`` is ``G``. ``"ada-rda"``: ``stats[0]`` is ``G``,
    ``stats[1]`` is ``u``. ``"nag"``: ``stats[0]`` is ``G``, ``stats[1]`` the scales
    ``s`` (the same in every class's column). Each the shape of ``weights``.
``scalars``
    ``scalars[0]``: ``t``, the total weight of the rounds seen; NAG's ``scalars[1]``:
    ``N``; RDA's ``scalars[1:4]``: the ``eta``, ``delta`` and ``l1`` its weights were
    computed with (0 before the first epoch): a call with other constants recomputes
    every weight first, so that the weights are always the function of the statistics.
``rule``
    Float64 array ``(kind, bias_feature, eta, delta, l1)`` (:func:`adagrad_rule`).
``sample_weight``
    As in :mod:`perceptrons._kernels.perceptron` (or empty). A weight ``s`` multiplies
    the round's gradient (and, for the L1 penalty and NAG's ``t`` and ``N``, counts the
    round ``s`` times); weight 1 is the unweighted rule; weight 0 skips the example (no
    update, no count, no round).
    For NAG this is the plain weighted gradient, not the importance-weight-invariant
    update of Karampatziakis & Langford (2011) that Vowpal Wabbit also applies (which
    integrates the step of weight ``s`` as ``s`` infinitesimal steps): a weight of 2 is
    one step of twice the gradient, as in the AdaGrad rules.

Averaging and mixing
    Every change to a weight happens on a feature of the example (NAG's rescaling
    included) and is tracked in ``aux``: the averaged model is exact, except with an L1
    penalty, whose shrinking moves every weight every round (applied lazily): averaging
    with ``l1 > 0`` is refused when the estimator checks its parameters. Parameter
    mixing: the shards of ada-fobos and nag keep their own statistics and mix the
    weights; ada-rda is refused (its weights are recomputed from each shard's own sums
    of gradients).

The kernels return ``(n_updates, n_mistakes, count)``, or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score, ``NON_FINITE_STEP`` at the first
non-finite change of a weight (see :mod:`perceptrons._kernels._rows`).
``n_mistakes`` counts the wrong predictions made before the update, as in
:mod:`perceptrons._kernels.perceptron` (binary ``y w·x̃ <= 0``, multiclass the argmax,
ties to the lowest class, not the gold one); the rules also update on correct
predictions of margin below 1 (NAG not before its rate is positive).
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import mispredicted

_jit = cached_njit(**_rows.TRAINING)
# The pieces are compiled into the two kernels that call them (as in _rows).
_piece = register_jitable

FOBOS, RDA, NAG = 0, 1, 2
KINDS = {"ada-fobos": FOBOS, "ada-rda": RDA, "nag": NAG}
# Positions in the ``rule`` array.
KIND, BIAS_FEATURE, ETA, DELTA, L1 = 0, 1, 2, 3, 4


def adagrad_rule(name: str, bias_feature: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    return np.array(
        [
            float(KINDS[name]),
            float(bias_feature),
            float(constants["eta"]),
            float(constants.get("delta", 0.0)),
            float(constants.get("l1", 0.0)),
        ]
    )


@_piece
def _rda_weight(u, g_sq, eta, delta, threshold):
    """``-eta sign(u) max(0, |u| - threshold) / (delta + sqrt(G))`` (+0.0 when the
    threshold zeroes it: a negative zero would make the row look used in a model file)."""
    shrunk = _rows.shrink(u, threshold)
    if shrunk == 0.0:
        return 0.0
    return -eta * shrunk / (delta + np.sqrt(g_sq))


@_piece
def _rda_model(weights, aux, stats, scalars, rule, count, t):
    """RDA's weights recomputed from ``u``, ``G`` and ``t`` with ``rule``'s constants for
    every feature (the intercept unpenalized), the changes tracked in ``aux``, and the
    constants recorded in ``scalars[1:4]``."""
    averaged = aux.shape[0] != 0
    eta, delta, l1 = rule[ETA], rule[DELTA], rule[L1]
    n_features = weights.shape[0] - 1
    for j in range(weights.shape[0]):
        threshold = l1 * t if j < n_features else 0.0
        for k in range(weights.shape[1]):
            new = _rda_weight(stats[1, j, k], stats[0, j, k], eta, delta, threshold)
            if new != weights[j, k]:
                if averaged:
                    aux[j, k] += count * (new - weights[j, k])
                weights[j, k] = new
    scalars[1], scalars[2], scalars[3] = eta, delta, l1


@_piece
def _bring_up_to_date(j, value, weights, aux, stats, last, t, kind, rule, count):
    """Before feature ``j`` (of value ``value`` in ``x``) is scored: its weights as the
    model of round ``t`` has them (FOBOS with L1: the pending shrinking; RDA with L1:
    the threshold of ``t``; NAG: the rescaling to a larger scale). Returns NAG's
    ``(x_j / s_j)²``, the feature's share of ``N`` (0 for the other rules)."""
    averaged = aux.shape[0] != 0
    if kind == NAG:
        magnitude = abs(value)
        scale = stats[1, j, 0]
        if magnitude > scale:
            if scale > 0.0:
                ratio = scale / magnitude
                for k in range(weights.shape[1]):
                    rescaled = weights[j, k] * ratio
                    if averaged:
                        aux[j, k] += count * (rescaled - weights[j, k])
                    weights[j, k] = rescaled
            for k in range(weights.shape[1]):
                stats[1, j, k] = magnitude
            scale = magnitude
        ratio = value / scale
        return ratio * ratio
    l1 = rule[L1]
    if l1 == 0.0:
        return 0.0
    if kind == FOBOS:
        rounds = t - last[j]
        if rounds > 0.0:
            for k in range(weights.shape[1]):
                if weights[j, k] != 0.0:  # (0 stays 0: no square root)
                    h = rule[DELTA] + np.sqrt(stats[0, j, k])
                    weights[j, k] = _rows.shrink(weights[j, k], rule[ETA] * l1 * rounds / h)
            last[j] = t
    else:
        _rda_row(j, weights, stats, rule[ETA], rule[DELTA], l1 * t)
    return 0.0


@_piece
def _rda_row(j, weights, stats, eta, delta, threshold):
    """RDA's weights of feature ``j`` under ``threshold``; a weight never stepped (``G =
    0``, so ``u = 0``) is 0 and stays 0: skipped, which halves the end of a 20 Newsgroups
    epoch (most of its 130,107 x 20 weights were never stepped)."""
    for k in range(weights.shape[1]):
        if stats[0, j, k] != 0.0:
            weights[j, k] = _rda_weight(stats[1, j, k], stats[0, j, k], eta, delta, threshold)


@_piece
def _step(j, k, g, weights, aux, stats, t, rate, kind, rule, count, penalized):
    """Weight ``(j, k)`` after its gradient ``g`` (nonzero) of round ``t`` (NAG: its
    global rate ``eta sqrt(t / N)``)."""
    g_sq = stats[0, j, k] + g * g
    stats[0, j, k] = g_sq
    if kind == FOBOS:
        # |g / H| < 1: divided first, so that a large eta or g cannot overflow
        change = -rule[ETA] * (g / (rule[DELTA] + np.sqrt(g_sq)))
    elif kind == RDA:
        u = stats[1, j, k] + g
        stats[1, j, k] = u
        threshold = rule[L1] * t if penalized else 0.0
        change = _rda_weight(u, g_sq, rule[ETA], rule[DELTA], threshold) - weights[j, k]
    else:
        change = -rate * (g / (stats[1, j, k] * np.sqrt(g_sq)))  # |g / sqrt(G)| <= 1
    weights[j, k] += change
    if aux.shape[0] != 0:
        aux[j, k] += count * change
    return change


@_piece
def _fobos_column(rows, i, k, coefficient, eta, delta, weights, aux, stats, count):
    """:func:`_step` of FOBOS on column ``k`` for every nonzero ``x_j`` of example ``i``
    (the gradient ``coefficient * x_j``), written out in one loop: the generic step,
    choosing the rule and reading its constants from ``rule`` per weight, made the FOBOS
    epoch 2.6x slower (measured on a9a: 0.122 s against 0.047 s, the same model).
    Returns ``Σ change * 0``: 0 unless a change was inf or NaN (see :mod:`._rows`)."""
    averaged = aux.shape[0] != 0
    changed = 0.0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            value = data[p]
            if value != 0.0:
                j = indices[p]
                g = coefficient * value
                g_sq = stats[0, j, k] + g * g
                stats[0, j, k] = g_sq
                change = -eta * (g / (delta + np.sqrt(g_sq)))
                changed += change * 0.0
                weights[j, k] += change
                if averaged:
                    aux[j, k] += count * change
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                g = coefficient * value
                g_sq = stats[0, j, k] + g * g
                stats[0, j, k] = g_sq
                change = -eta * (g / (delta + np.sqrt(g_sq)))
                changed += change * 0.0
                weights[j, k] += change
                if averaged:
                    aux[j, k] += count * change
    return changed


@_piece
def _fobos_catch_up(rows, i, weights, stats, last, t, eta_l1, delta):
    """FOBOS's pending L1 shrinking of example ``i``'s features brought up to round ``t``
    (:func:`_bring_up_to_date` written out over the example: one call per feature made
    the epoch with ``l1 > 0`` 8x slower than without on a9a, 0.50 s against 0.064 s)."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            if data[p] != 0.0:
                j = indices[p]
                rounds = t - last[j]
                if rounds > 0.0:
                    for k in range(weights.shape[1]):
                        if weights[j, k] != 0.0:  # (0 stays 0: no square root)
                            h = delta + np.sqrt(stats[0, j, k])
                            weights[j, k] = _rows.shrink(weights[j, k], eta_l1 * rounds / h)
                    last[j] = t
    else:
        for j in range(rows.shape[1]):
            if rows[i, j] != 0.0:
                rounds = t - last[j]
                if rounds > 0.0:
                    for k in range(weights.shape[1]):
                        if weights[j, k] != 0.0:  # (0 stays 0: no square root)
                            h = delta + np.sqrt(stats[0, j, k])
                            weights[j, k] = _rows.shrink(weights[j, k], eta_l1 * rounds / h)
                    last[j] = t


@_piece
def _epoch(rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight):
    """The epoch of both kinds of model: 2-D ``weights`` (a binary model's as one
    column, ``y`` then ±1) and 3-D ``stats``."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    binary = n_classes == 1
    kind = int(rule[KIND])
    bias_feature = rule[BIAS_FEATURE]
    eta, delta = rule[ETA], rule[DELTA]
    l1 = rule[L1]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    lazy = kind != NAG and l1 > 0.0
    t = scalars[0]
    if kind == RDA and (
        scalars[1] != rule[ETA] or scalars[2] != rule[DELTA] or scalars[3] != rule[L1]
    ):
        # Every RDA weight is a function of the statistics and of the constants: new
        # constants (a later call's update_params) give every weight anew.
        _rda_model(weights, aux, stats, scalars, rule, count, t)
    # FOBOS with L1: the round each feature's weights were last shrunk to (all of them
    # at the start: every epoch ends with the weights up to date).
    last = np.full(n_features if (lazy and kind == FOBOS) else 0, t)
    scores = np.empty(n_classes)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        # The model of this round, then its scores; NAG's N gains the example's squared
        # norm in the features' own scales (the scales of this round).
        normalized = 0.0
        if lazy and kind == FOBOS:
            _fobos_catch_up(rows, i, weights, stats, last, t, eta * l1, delta)
        elif lazy and kind == RDA:
            # (written out over the example, as FOBOS's catch-up, for the same reason)
            if isinstance(rows, tuple):
                data, indices, indptr = rows
                for p in range(indptr[i], indptr[i + 1]):
                    if data[p] != 0.0:
                        _rda_row(indices[p], weights, stats, eta, delta, l1 * t)
            else:
                for j in range(n_features):
                    if rows[i, j] != 0.0:
                        _rda_row(j, weights, stats, eta, delta, l1 * t)
        elif kind == NAG or lazy:
            if isinstance(rows, tuple):
                data, indices, indptr = rows
                for p in range(indptr[i], indptr[i + 1]):
                    if data[p] != 0.0:
                        normalized += _bring_up_to_date(
                            indices[p], data[p], weights, aux, stats, last, t, kind, rule, count
                        )
            else:
                for j in range(n_features):
                    if rows[i, j] != 0.0:
                        normalized += _bring_up_to_date(
                            j, rows[i, j], weights, aux, stats, last, t, kind, rule, count
                        )
            if kind == NAG and bias_feature != 0.0:
                normalized += _bring_up_to_date(
                    n_features, bias_feature, weights, aux, stats, last, t, kind, rule, count
                )
        # The features' terms, then the intercept's: NAG's scores tie exactly in theory
        # (after its first update, an example at every feature's scale scores a sum of
        # ±1 terms), so the order of the sum is the oracle's, to break ties alike.
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
            scores[k] += weights[n_features, k] * bias_feature
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        t += weight
        rate = 0.0
        if kind == NAG:
            scalars[1] += weight * normalized
            if scalars[1] > 0.0:
                rate = rule[ETA] * np.sqrt(t / scalars[1])
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
        if margin < 1.0 and (kind != NAG or rate > 0.0):
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = other
            updates += 1
            # The gradient on column k is coefficient * x̃.
            for side in range(1 if binary else 2):
                k = gold if side == 0 else other
                coefficient = -weight * (y[i] if binary else 1.0) if side == 0 else weight
                changed = 0.0
                if kind == FOBOS:
                    changed = _fobos_column(
                        rows, i, k, coefficient, eta, delta, weights, aux, stats, count
                    )
                elif isinstance(rows, tuple):
                    data, indices, indptr = rows
                    for p in range(indptr[i], indptr[i + 1]):
                        if data[p] != 0.0:
                            changed += 0.0 * _step(
                                indices[p],
                                k,
                                coefficient * data[p],
                                weights,
                                aux,
                                stats,
                                t,
                                rate,
                                kind,
                                rule,
                                count,
                                True,
                            )
                else:
                    for j in range(n_features):
                        if rows[i, j] != 0.0:
                            changed += 0.0 * _step(
                                j,
                                k,
                                coefficient * rows[i, j],
                                weights,
                                aux,
                                stats,
                                t,
                                rate,
                                kind,
                                rule,
                                count,
                                True,
                            )
                if bias_feature != 0.0:
                    changed += 0.0 * _step(
                        n_features,
                        k,
                        coefficient * bias_feature,
                        weights,
                        aux,
                        stats,
                        t,
                        rate,
                        kind,
                        rule,
                        count,
                        False,
                    )
                if changed != 0.0:  # inf or NaN: e.g. a step divided by a G that underflowed
                    scalars[0] = t
                    return _rows.NON_FINITE_STEP, mistakes, count
        count += weight
    scalars[0] = t
    if lazy:
        # The stored weights are the model: every feature brought up to round t.
        for j in range(n_features):
            _bring_up_to_date(j, 1.0, weights, aux, stats, last, t, kind, rule, count)
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
