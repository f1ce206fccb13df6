"""Compiled epochs of the confidence-weighted family, binary and multiclass, with a
diagonal or a full covariance: AROW (Crammer, Kulesza & Dredze 2009), CW (Dredze,
Crammer & Pereira 2008), exact convex CW (Crammer, Dredze & Pereira 2008), SCW-I and
SCW-II (Wang, Zhao & Hoi 2012), NAROW (Orabona & Crammer 2010) and NHERD (Crammer & Lee
2010).

These rules keep a Gaussian ``N(w, Σ)`` over the weights. An example of margin
``m = y w·x`` and variance ``v = xᵀ Σ x`` whose loss is positive moves the mean by
``α y Σ x`` and shrinks the covariance along ``x``; a feature seen often gets a small
variance and small steps, a rare one large steps. ``α`` and the shrinking are each
rule's (:func:`_coefficients`).

The diagonal form (Dredze, Crammer & Pereira 2008; Crammer et al. 2009, for sparse
high-dimensional data) keeps the diagonal of the *inverse* covariance: where the full
rule adds ``c x xᵀ`` to ``Σ⁻¹``, the diagonal adds ``c x_j²`` to each ``1 / Σ_j``
(:func:`perceptrons._kernels._diagonal.add_precision_column`), O(nnz(x)) per update.

AROW: with the hinge loss ``l = max(0, 1 - m)``, on ``l > 0``: ``β = 1 / (v + r)``,
``α = l β``, ``w <- w + α y Σ x`` and ``Σ⁻¹ <- Σ⁻¹ + x xᵀ / r``. NAROW: AROW with ``r =
v / (b v - 1)`` where ``v > 1 / b``, no update elsewhere. NHERD: ``α = l / (v + 1 / C)``,
``Σ⁻¹ <- Σ⁻¹ + (C² v + 2 C) x xᵀ``; its diagonal form is the paper's own, ``Σ_j <- Σ_j /
(1 + C x_j² Σ_j)²`` (:func:`perceptrons._kernels._diagonal.step_and_herd`). CW (the
variance form): on ``m < φ v``, ``α`` the root of the paper's quadratic, ``Σ⁻¹ <- Σ⁻¹ + 2
α φ x xᵀ``. Exact convex CW (the standard-deviation form), SCW-I and SCW-II: on ``m < φ
√v``, the paper's ``α`` (SCW-I's at most ``C``; exact CW's is SCW-I's without the cap),
``Σ⁻¹ <- Σ⁻¹ + (α φ / √u) x xᵀ`` (the paper's ``Σ - β Σ x xᵀ Σ``). ``φ = Φ⁻¹(eta)``; the
oracles (:mod:`perceptrons.reference.confidence`) hold the formulas line by line.

Multiclass (Crammer, Dredze & Kulesza 2009, "Multi-class confidence weighted
algorithms", with the single constraint against the best other class): one mean and one
diagonal covariance per class (the joint feature space ``Φ(x, c)``, whose covariance is
block-diagonal); the example is ``Φ(x, gold) - Φ(x, other)`` with ``other`` the
highest-scoring class but the gold one (ties to the lowest), its margin ``s_gold -
s_other`` and its variance ``xᵀ Σ_gold x + xᵀ Σ_other x``. The update moves the gold
class's mean by ``+α Σ_gold x`` and the other's by ``-α Σ_other x``, and shrinks both
covariances along ``x``.

What an example costs (the diagonal multiclass epoch, on sparse rows): the score pass
(every class's weights at the example's features, as the perceptron's), which also
prefetches the gold class's variances; then, only where an update is possible, the
variance pass over the two classes (prefetching their ``aux`` entries); then the update,
both classes in one pass. The hinge rules (AROW, NAROW, NHERD) know from the margin
alone that no update is possible (``m ≥ 1``) and skip the variance pass; CW and SCW,
whose test involves the variance, skip it where a bound rules an update out (the
epoch's largest variance of each class times ``||x||²``: variances only shrink). Every
skip and prefetch leaves the arithmetic as the oracle's (bit-identical models with and
without them).

``weights``, ``aux``, ``mistake_log``, ``count``
    As in :mod:`perceptrons._kernels.perceptron`; the intercept is the weight of a
    constant feature of value ``bias_feature`` with a variance of its own (the last row).
``stats``
    ``stats[0]``: the diagonal covariance, the shape of ``weights``.
``scalars``
    Unused (empty).
``rule``
    Float64 array ``(kind, bias_feature, C, constants...)`` (:func:`confidence_rule`; the
    constants by name, ``CONSTANTS``).
``sample_weight``
    As in :mod:`perceptrons._kernels.perceptron` (or empty). A weight ``s`` counts the
    example's loss ``s`` times in the rule's objective: AROW's and NAROW's ``r`` become
    ``r / s`` for that example (``β = 1 / (v + r / s)``, ``Σ⁻¹ += s x xᵀ / r``), and the
    ``C`` of SCW and NHERD becomes ``s C``. CW and exact CW have no loss to weight (a
    constraint, not a loss: the estimators refuse weights for them). Weight 1 is the
    unweighted rule; weight 0 skips the example (no update, no count).

The kernels return ``(n_updates, n_mistakes, count)``, or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score or variance, ``NON_FINITE_STEP`` at
the first non-finite step (see :mod:`perceptrons._kernels._rows`).
``n_mistakes`` counts the wrong predictions of the
mean made before the update, as in :mod:`perceptrons._kernels.perceptron` (binary ``m <=
0``, multiclass the argmax, ties to the lowest class, not the gold one). The rules also
update on correct predictions of too small a margin, so ``n_updates`` is usually the
larger; not always: NAROW leaves examples of small variance (``v <= 1 / b``) alone, and
CW and SCW with a confidence ``eta`` below 1/2 (``φ < 0``) may let a mistake pass.
"""

from statistics import NormalDist

import numpy as np

from perceptrons._kernels import _diagonal, _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import best_other, mispredicted

_jit = cached_njit(**_rows.TRAINING)

AROW, CW, SCW_I, SCW_II, NAROW, NHERD, ECCW = 0, 1, 2, 3, 4, 5, 6
KINDS = {
    "arow": AROW,
    "cw": CW,
    "scw-i": SCW_I,
    "scw-ii": SCW_II,
    "narow": NAROW,
    "nherd": NHERD,
    "eccw": ECCW,
}
# Positions in the ``rule`` array; the constants each rule reads follow, by name
# (CONSTANTS), never in the order of the rule table's entry.
KIND, BIAS_FEATURE, C_VALUE, FIRST_CONSTANT = 0, 1, 2, 3
#: The constant each rule's kernels read at FIRST_CONSTANT (``eta`` as ``φ = Φ⁻¹(eta)``);
#: the initial variance ``a`` is the training state's, not the kernels'.
CONSTANTS = {
    "arow": ("r",),
    "narow": ("b",),
    "nherd": (),
    "cw": ("eta",),
    "scw-i": ("eta",),
    "scw-ii": ("eta",),
    "eccw": ("eta",),
}


def confidence_rule(name: str, bias_feature: float, C: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch). The
    confidence ``eta`` of CW and SCW is passed as ``φ = Φ⁻¹(eta)``, the standard normal
    quantile (:class:`statistics.NormalDist`)."""
    values = [
        NormalDist().inv_cdf(constants[key]) if key == "eta" else constants[key]
        for key in CONSTANTS[name]
    ]
    return np.array([float(KINDS[name]), float(bias_feature), float(C), *values])


@_jit
def _sqrt_u(alpha, variance, phi):
    """``√u`` of exact CW and SCW: ``u = (-α v φ + √(α² v² φ² + 4 v))² / 4``."""
    avp = alpha * variance * phi
    return 0.5 * (-avp + np.sqrt(avp * avp + 4.0 * variance))


@_jit
def _coefficients(signed, variance, weight, rule):
    """``(α, c)`` for an example of margin ``signed``, variance ``variance`` and weight
    ``weight``: the mean moves by ``α y Σ x`` and ``Σ⁻¹`` gains ``c x xᵀ`` (the diagonal
    of NHERD instead shrinks by its own rule, :func:`_herded`); ``(0, 0)``: no update.
    Each rule's lines follow its paper (see :mod:`perceptrons.reference.confidence`)."""
    kind = rule[KIND]
    if kind == AROW or kind == NAROW or kind == NHERD:
        loss = 1.0 - signed
        if loss <= 0.0:
            return 0.0, 0.0
        if kind == AROW:
            r = rule[FIRST_CONSTANT] / weight
            beta = 1.0 / (variance + r)
            return loss * beta, 1.0 / r
        if kind == NAROW:
            b = rule[FIRST_CONSTANT]
            if not variance > 1.0 / b:
                return 0.0, 0.0  # r = +inf: no step
            r = variance / (b * variance - 1.0) / weight
            beta = 1.0 / (variance + r)
            return loss * beta, 1.0 / r
        C = rule[C_VALUE] * weight  # NHERD
        beta = 1.0 / (variance + 1.0 / C)
        return loss * beta, C * C * variance + 2.0 * C
    phi = rule[FIRST_CONSTANT]
    if not variance > 0.0:
        return 0.0, 0.0  # Σ x = 0: nothing can move
    if kind == CW:
        if phi * variance - signed <= 0.0:
            return 0.0, 0.0
        b = 1.0 + 2.0 * phi * signed
        gamma = (-b + np.sqrt(b * b - 8.0 * phi * (signed - phi * variance))) / (
            4.0 * phi * variance
        )
        alpha = max(0.0, gamma)
        return alpha, 2.0 * alpha * phi
    if phi * np.sqrt(variance) - signed <= 0.0:
        return 0.0, 0.0
    C = rule[C_VALUE] * weight
    phi2 = phi * phi
    if kind == SCW_I or kind == ECCW:
        # Exact CW's closed form (Crammer, Dredze & Pereira 2008); SCW-I caps it at C.
        psi, zeta = 1.0 + phi2 / 2.0, 1.0 + phi2
        root = np.sqrt(signed * signed * phi2 * phi2 / 4.0 + variance * phi2 * zeta)
        alpha = max(0.0, (-signed * psi + root) / (variance * zeta))
        if kind == SCW_I:
            alpha = min(C, alpha)
    else:  # SCW_II
        n = variance + 1.0 / (2.0 * C)
        gamma = phi * np.sqrt(
            phi2 * signed * signed * variance * variance
            + 4.0 * n * variance * (n + variance * phi2)
        )
        alpha = max(
            0.0,
            (-(2.0 * signed * n + phi2 * signed * variance) + gamma)
            / (2.0 * (n * n + n * variance * phi2)),
        )
    if alpha == 0.0:
        return 0.0, 0.0
    return alpha, alpha * phi / _sqrt_u(alpha, variance, phi)


@_jit
def _finite_step(alpha, shrink, variance, weight, rule):
    """Whether an update's arithmetic stayed finite (see :mod:`perceptrons._kernels._rows`):
    ``α``, ``c``, what the covariance's shrinking multiplies (``c v``, whose overflow would
    leave the variances at 0) and NHERD's ``C s``."""
    herd = rule[C_VALUE] * weight if rule[KIND] == NHERD else 0.0
    return np.isfinite(alpha) and np.isfinite(shrink * variance) and np.isfinite(herd)


@_jit
def _may_update(signed, rule):
    """Whether an example of margin ``signed`` can update: the hinge rules (AROW, NAROW,
    NHERD) update only on ``signed < 1``, whatever the variance, so the kernels skip
    the variance pass of the others (about half the examples, once trained); CW and SCW
    compare the margin with the variance."""
    kind = rule[KIND]
    if kind == AROW or kind == NAROW or kind == NHERD:
        return signed < 1.0  # 1 - signed > 0, exactly (Sterbenz)
    return True


@_jit
def _variance_decides(rule):
    """Whether the rule compares the margin with the variance (CW, exact CW, SCW), so
    that only a bound on the variance can rule an update out before the variance pass."""
    kind = rule[KIND]
    return kind == CW or kind == SCW_I or kind == SCW_II or kind == ECCW


@_jit
def _cannot_update(signed, variance_bound, rule):
    """Whether an example of margin ``signed`` and variance at most ``variance_bound``
    cannot update CW, exact CW or SCW (``m ≥ φ v`` for CW, ``m ≥ φ √v`` for the others:
    both grow with ``v``). The bound is widened by a millionth, far above the rounding of
    the sums that give the variance, so that the skip never disagrees with the variance's
    own test."""
    phi = rule[FIRST_CONSTANT]
    bound = variance_bound * (1.0 + 1e-6)
    if not np.isfinite(bound):
        return False
    if rule[KIND] == CW:
        return phi * bound - signed <= 0.0
    return phi * np.sqrt(bound) - signed <= 0.0


@_jit
def _column_maxima(sigma, out):
    """``out[k]``: the largest variance of a feature (not the intercept) of class
    ``k``. The rules only shrink variances, so this bounds them for a whole epoch."""
    out[:] = 0.0
    for j in range(sigma.shape[0] - 1):
        for k in range(sigma.shape[1]):
            if sigma[j, k] > out[k]:
                out[k] = sigma[j, k]


@_jit
def _herded(sigma, herd, x_sq):
    """NHERD's diagonal variance after an update (Crammer & Lee 2010, the "exact"
    diagonal): ``Σ_jj / (1 + C x_j² Σ_jj)²``."""
    shrink = 1.0 + herd * x_sq * sigma
    return sigma / (shrink * shrink)


@_jit
def binary_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    sigma = stats[0]
    herding = rule[KIND] == NHERD  # its own diagonal form
    bounding = _variance_decides(rule)  # as in multiclass_epoch
    ceiling = np.zeros(1)
    if bounding:
        _column_maxima(sigma.reshape((n_features + 1, 1)), ceiling)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:
            mistakes += 1
        if not _may_update(y[i] * score, rule):
            count += weight
            continue
        bias_sq = bias_feature * bias_feature
        if bounding:
            bound = sigma[n_features] * bias_sq + ceiling[0] * _rows.sq_norm(rows, i, 0.0)
            if _cannot_update(y[i] * score, bound, rule):
                count += weight
                continue
        variance = _diagonal.weighted_sq_norm(rows, i, sigma, sigma[n_features] * bias_sq)
        if not np.isfinite(variance):
            return _rows.NON_FINITE_SCORE, mistakes, count
        alpha, shrink = _coefficients(y[i] * score, variance, weight, rule)
        if not _finite_step(alpha, shrink, variance, weight, rule):
            return _rows.NON_FINITE_STEP, mistakes, count
        if alpha != 0.0 or shrink != 0.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = -1
            updates += 1
            step = alpha * y[i]
            bias_sigma = sigma[n_features]
            if herding:
                herd = rule[C_VALUE] * weight
                _diagonal.step_and_herd(rows, i, step, herd, sigma, weights, aux, count)
                sigma[n_features] = _herded(bias_sigma, herd, bias_sq)
            else:
                _diagonal.step_and_precision(rows, i, step, shrink, sigma, weights, aux, count)
                sigma[n_features] = bias_sigma / (1.0 + shrink * bias_sigma * bias_sq)
            change = step * bias_sigma * bias_feature
            weights[n_features] += change
            if averaged:
                aux[n_features] += count * change
        count += weight
    return updates, mistakes, count


@_jit
def multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    bias_sq = bias_feature * bias_feature
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    sigma = stats[0]
    herding = rule[KIND] == NHERD  # its own diagonal form
    scores = np.empty(n_classes)
    # CW and SCW test the variance itself: a bound from the epoch's largest variances
    # and ||x||² skips the variance pass of most examples that cannot update.
    bounding = _variance_decides(rule)
    ceiling = np.zeros(n_classes)
    if bounding:
        _column_maxima(sigma, ceiling)
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        for k in range(n_classes):
            scores[k] = weights[n_features, k] * bias_feature
        gold = y[i]
        # The update's cache misses, asked for a pass early (_kernels._prefetch).
        _diagonal.add_scores_prefetching(rows, i, weights, scores, sigma, gold)
        if not _rows.finite_scores(scores):
            return _rows.NON_FINITE_SCORE, mistakes, count
        other = best_other(scores, gold)
        if mispredicted(scores, gold, other):
            mistakes += 1
        if not _may_update(scores[gold] - scores[other], rule):
            count += weight
            continue
        variance = sigma[n_features, gold] * bias_sq + sigma[n_features, other] * bias_sq
        if bounding:
            norm = _rows.sq_norm(rows, i, 0.0)
            bound = variance + (ceiling[gold] + ceiling[other]) * norm
            if _cannot_update(scores[gold] - scores[other], bound, rule):
                count += weight
                continue
        variance = _diagonal.weighted_sq_norm_two_columns_prefetching(
            rows, i, sigma, gold, other, variance, aux
        )
        if not np.isfinite(variance):
            return _rows.NON_FINITE_SCORE, mistakes, count
        alpha, shrink = _coefficients(scores[gold] - scores[other], variance, weight, rule)
        if not _finite_step(alpha, shrink, variance, weight, rule):
            return _rows.NON_FINITE_STEP, mistakes, count
        if alpha != 0.0 or shrink != 0.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = other
            updates += 1
            herd = rule[C_VALUE] * weight
            # Both classes in one pass (with the prefetching above, slightly faster
            # than a pass per class; the same arithmetic).
            if herding:
                _diagonal.step_and_herd_two_columns(
                    rows, i, alpha, herd, sigma, gold, other, weights, aux, count
                )
            else:
                _diagonal.step_and_precision_two_columns(
                    rows, i, alpha, shrink, sigma, gold, other, weights, aux, count
                )
            for k, step in ((gold, alpha), (other, -alpha)):
                bias_sigma = sigma[n_features, k]
                change = step * bias_sigma * bias_feature
                weights[n_features, k] += change
                if averaged:
                    aux[n_features, k] += count * change
                if herding:
                    sigma[n_features, k] = _herded(bias_sigma, herd, bias_sq)
                else:
                    sigma[n_features, k] = bias_sigma / (1.0 + shrink * bias_sigma * bias_sq)
        count += weight
    return updates, mistakes, count


# ------------------------------------------------------------------ full covariance
@_jit
def _sigma_x(rows, i, sigma, bias_feature, out):
    """``out = Σ x̃`` for the example ``x̃ = [x_i, bias_feature]`` (``Σ`` symmetric, so
    its rows are read: contiguous), O(nnz(x) d)."""
    last = sigma.shape[0] - 1
    for m in range(sigma.shape[0]):
        out[m] = sigma[last, m] * bias_feature
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            for m in range(sigma.shape[0]):
                out[m] += sigma[j, m] * value
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                for m in range(sigma.shape[0]):
                    out[m] += sigma[j, m] * value


@_jit
def _full_update(sigma, sx, step, factor, weights, aux, k, count):
    """``μ_k += step Σ x̃`` (tracked in ``aux``) and ``Σ -= factor (Σ x̃)(Σ x̃)ᵀ`` (a
    rank-one update of the precision, by Sherman-Morrison); 2-D ``weights`` and
    ``aux`` (a binary model's as one-column views)."""
    averaged = aux.shape[0] != 0
    for j in range(sx.shape[0]):
        change = step * sx[j]
        weights[j, k] += change
        if averaged:
            aux[j, k] += count * change
    for j in range(sx.shape[0]):
        scaled = factor * sx[j]
        for m in range(sx.shape[0]):
            sigma[j, m] -= scaled * sx[m]


@_jit
def binary_epoch_full(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    """:func:`binary_epoch` with a full covariance: ``stats[0, 0]`` is ``Σ``, of shape
    ``(n_features + 1, n_features + 1)`` (the intercept last), O(nnz(x) d) per example
    and O(d²) per update."""
    n_features = weights.shape[0] - 1
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    sigma = stats[0, 0]
    sx = np.empty(n_features + 1)
    columns = weights.reshape((n_features + 1, 1))
    aux_columns = aux.reshape((aux.shape[0], 1))
    updates, mistakes = 0, 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if not np.isfinite(score):
            return _rows.NON_FINITE_SCORE, mistakes, count
        if y[i] * score <= 0.0:
            mistakes += 1
        if not _may_update(y[i] * score, rule):
            count += weight
            continue  # (Σ x, O(nnz(x) d), only where it can be used)
        _sigma_x(rows, i, sigma, bias_feature, sx)
        variance = _rows.dot(rows, i, sx, sx[n_features] * bias_feature)
        if not np.isfinite(variance):
            return _rows.NON_FINITE_SCORE, mistakes, count
        alpha, shrink = _coefficients(y[i] * score, variance, weight, rule)
        if not _finite_step(alpha, shrink, variance, weight, rule):
            return _rows.NON_FINITE_STEP, mistakes, count
        if alpha != 0.0 or shrink != 0.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = -1
            updates += 1
            factor = shrink / (1.0 + shrink * variance)
            _full_update(sigma, sx, alpha * y[i], factor, columns, aux_columns, 0, count)
        count += weight
    return updates, mistakes, count


@_jit
def multiclass_epoch_full(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    """:func:`multiclass_epoch` with a full covariance per class: ``stats[0, k]`` is
    ``Σ_k``."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    bias_feature = rule[BIAS_FEATURE]
    log, weighted = mistake_log.shape[0] != 0, sample_weight.shape[0] != 0
    scores = np.empty(n_classes)
    sx_gold = np.empty(n_features + 1)
    sx_other = np.empty(n_features + 1)
    updates, mistakes = 0, 0
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
        other = best_other(scores, gold)
        if mispredicted(scores, gold, other):
            mistakes += 1
        if not _may_update(scores[gold] - scores[other], rule):
            count += weight
            continue
        _sigma_x(rows, i, stats[0, gold], bias_feature, sx_gold)
        _sigma_x(rows, i, stats[0, other], bias_feature, sx_other)
        v_gold = _rows.dot(rows, i, sx_gold, sx_gold[n_features] * bias_feature)
        v_other = _rows.dot(rows, i, sx_other, sx_other[n_features] * bias_feature)
        variance = v_gold + v_other
        if not np.isfinite(variance):
            return _rows.NON_FINITE_SCORE, mistakes, count
        alpha, shrink = _coefficients(scores[gold] - scores[other], variance, weight, rule)
        if not _finite_step(alpha, shrink, variance, weight, rule):
            return _rows.NON_FINITE_STEP, mistakes, count
        if alpha != 0.0 or shrink != 0.0:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = other
            updates += 1
            factor = shrink / (1.0 + shrink * v_gold)
            _full_update(stats[0, gold], sx_gold, alpha, factor, weights, aux, gold, count)
            factor = shrink / (1.0 + shrink * v_other)
            _full_update(stats[0, other], sx_other, -alpha, factor, weights, aux, other, count)
        count += weight
    return updates, mistakes, count
