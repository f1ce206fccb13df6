"""The per-example pieces of the rules that keep one statistic per weight (a diagonal
covariance, a per-feature step size), for both input layouts.

The companions of :mod:`perceptrons._kernels._rows` (the same dense/CSR pairs, added in
the same order, so that dense and canonical CSR input train bit-identical models), for
updates that scale each coordinate by its own statistic: ``weights[j] += step * s[j] *
x_j`` rather than ``step * x_j``. Binary pieces take 1-D ``weights`` and statistics;
the ``_column`` pieces column ``k`` of 2-D ones (multiclass). Feature rows only: the
intercept row (the last) is the caller's. ``aux`` is the averaging trick's array, or
empty: every change ``c`` written to ``weights`` is written as ``aux_factor * c`` to it.
Nothing here allocates.
"""

from numba.extending import register_jitable

from perceptrons._kernels._prefetch import prefetch

_jit = register_jitable


@_jit
def weighted_sq_norm(rows, i, stat, total):
    """``total + Σ_j stat[j] x_ij²``: ``x``'s variance ``xᵀ Σ x`` under a diagonal
    ``Σ = diag(stat)`` (1-D ``stat``)."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            total += stat[indices[p]] * data[p] * data[p]
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            total += stat[j] * value * value
    return total


@_jit
def weighted_sq_norm_column(rows, i, stat, k, total):
    """:func:`weighted_sq_norm` with column ``k`` of a 2-D ``stat``."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            total += stat[indices[p], k] * data[p] * data[p]
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            total += stat[j, k] * value * value
    return total


@_jit
def scaled_add_column(rows, i, step, stat, k, weights, aux, aux_factor):
    """``weights[j, k] += step * stat[j, k] * x_ij`` (column ``k`` of 2-D ``stat``,
    ``weights`` and ``aux``), tracked in ``aux``."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            change = step * stat[j, k] * data[p]
            weights[j, k] += change
            if averaged:
                aux[j, k] += aux_factor * change
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                change = step * stat[j, k] * value
                weights[j, k] += change
                if averaged:
                    aux[j, k] += aux_factor * change


@_jit
def add_precision_column(rows, i, factor, stat, k):
    """``stat[j, k] <- 1 / (1 / stat[j, k] + factor * x_ij²)``, written ``stat[j, k] /
    (1 + factor * stat[j, k] * x_ij²)`` (exact for a zero variance): the diagonal of the
    inverse covariance of class ``k`` grows by ``factor * x²``."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            stat[j, k] = stat[j, k] / (1.0 + factor * stat[j, k] * data[p] * data[p])
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                stat[j, k] = stat[j, k] / (1.0 + factor * stat[j, k] * value * value)


@_jit
def step_and_precision(rows, i, step, factor, stat, weights, aux, aux_factor):
    """The binary :func:`step_and_precision_two_columns`: ``weights[j] += step * stat[j]
    * x_ij`` then ``stat[j] <- stat[j] / (1 + factor * stat[j] * x_ij²)``, one pass."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            s = stat[j]
            change = step * s * value
            weights[j] += change
            if averaged:
                aux[j] += aux_factor * change
            stat[j] = s / (1.0 + factor * s * value * value)
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                s = stat[j]
                change = step * s * value
                weights[j] += change
                if averaged:
                    aux[j] += aux_factor * change
                stat[j] = s / (1.0 + factor * s * value * value)


@_jit
def step_and_herd(rows, i, step, herd, stat, weights, aux, aux_factor):
    """:func:`step_and_precision` with normal herding's diagonal shrinking (Crammer &
    Lee 2010): ``stat[j] <- stat[j] / (1 + herd * stat[j] * x_ij²)²``."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            s = stat[j]
            change = step * s * value
            weights[j] += change
            if averaged:
                aux[j] += aux_factor * change
            shrink = 1.0 + herd * value * value * s
            stat[j] = s / (shrink * shrink)
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                s = stat[j]
                change = step * s * value
                weights[j] += change
                if averaged:
                    aux[j] += aux_factor * change
                shrink = 1.0 + herd * value * value * s
                stat[j] = s / (shrink * shrink)


@_jit
def add_scores_prefetching(rows, i, weights, scores, stat, column):
    """:func:`perceptrons._kernels._rows.add_scores` (the same sums, in the same order)
    that also prefetches ``stat[j, column]`` at each feature ``j`` of a CSR row: the
    variances the update will read (:mod:`perceptrons._kernels._prefetch`)."""
    n_classes = scores.shape[0]
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            value, row = data[p], indices[p]
            prefetch(stat, row, column)
            for k in range(n_classes):
                scores[k] += value * weights[row, k]
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                for k in range(n_classes):
                    scores[k] += value * weights[j, k]


@_jit
def weighted_sq_norm_two_columns_prefetching(rows, i, stat, first, second, total, ahead):
    """``total + Σ_j (stat[j, first] + stat[j, second]) x_ij²`` (``x``'s variance under
    two classes' diagonal covariances, in one pass) that also prefetches
    ``ahead[j, first]`` and ``ahead[j, second]`` (``ahead`` 2-D, or empty: nothing) at
    each feature ``j`` of a CSR row: the ``aux`` entries the update will write."""
    prefetching = ahead.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            if prefetching:
                prefetch(ahead, j, first)
                prefetch(ahead, j, second)
            total += stat[j, first] * value * value + stat[j, second] * value * value
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            total += stat[j, first] * value * value + stat[j, second] * value * value
    return total


@_jit
def step_and_precision_two_columns(
    rows, i, step, factor, stat, first, second, weights, aux, aux_factor
):
    """:func:`step_and_precision_column` on columns ``first`` (by ``+step``) and
    ``second`` (by ``-step``) in one pass, the same arithmetic."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            s = stat[j, first]
            t = stat[j, second]
            change = step * s * value
            other_change = -step * t * value
            weights[j, first] += change
            weights[j, second] += other_change
            if averaged:
                aux[j, first] += aux_factor * change
                aux[j, second] += aux_factor * other_change
            stat[j, first] = s / (1.0 + factor * s * value * value)
            stat[j, second] = t / (1.0 + factor * t * value * value)
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                s = stat[j, first]
                t = stat[j, second]
                change = step * s * value
                other_change = -step * t * value
                weights[j, first] += change
                weights[j, second] += other_change
                if averaged:
                    aux[j, first] += aux_factor * change
                    aux[j, second] += aux_factor * other_change
                stat[j, first] = s / (1.0 + factor * s * value * value)
                stat[j, second] = t / (1.0 + factor * t * value * value)


@_jit
def step_and_herd_two_columns(rows, i, step, herd, stat, first, second, weights, aux, aux_factor):
    """:func:`step_and_precision_two_columns` with normal herding's shrinking
    (:func:`step_and_herd`)."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            j, value = indices[p], data[p]
            s = stat[j, first]
            t = stat[j, second]
            change = step * s * value
            other_change = -step * t * value
            weights[j, first] += change
            weights[j, second] += other_change
            if averaged:
                aux[j, first] += aux_factor * change
                aux[j, second] += aux_factor * other_change
            shrink = 1.0 + herd * value * value * s
            stat[j, first] = s / (shrink * shrink)
            shrink = 1.0 + herd * value * value * t
            stat[j, second] = t / (shrink * shrink)
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                s = stat[j, first]
                t = stat[j, second]
                change = step * s * value
                other_change = -step * t * value
                weights[j, first] += change
                weights[j, second] += other_change
                if averaged:
                    aux[j, first] += aux_factor * change
                    aux[j, second] += aux_factor * other_change
                shrink = 1.0 + herd * value * value * s
                stat[j, first] = s / (shrink * shrink)
                shrink = 1.0 + herd * value * value * t
                stat[j, second] = t / (shrink * shrink)
