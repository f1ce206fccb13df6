"""Compiled training of the seven averaging and voting strategies of the cost table.

Each kernel trains the perceptron (binary: update ``w += y x`` when ``y (w·x + b) <= 0``;
multiclass: ``+x`` to the gold class and ``-x`` to the predicted one, the argmax with
ties to the lowest class) over ``order``, the concatenated visiting orders of every
epoch (``N = T |D|`` positions), and keeps what its strategy keeps. The perceptron's
own step (:func:`_binary_step`, :func:`_multiclass_step`) is shared, and is the
arithmetic of :mod:`perceptrons._kernels.perceptron`, so every strategy makes the same
mistakes as :class:`~perceptrons.Perceptron` and sees the same weights. Only what is
stored around it, and when, differs: that difference is what the strategies cost.

Layouts are the existing kernels' (see :mod:`perceptrons._kernels.perceptron`):
``weights`` has one row per feature and a last row for the intercept, the weight of a
constant feature of value ``bias_feature`` (1.0, or 0.0 without an intercept); binary
weights are 1-D ``(d + 1,)``, multiclass ``(d + 1, K)``. ``rows`` is dense or the CSR
triple (:mod:`perceptrons._kernels._rows`).

Storage that grows with the number of updates ``U`` (the improved schemes' models, the
Δw list) is allocated by the caller. Those kernels are resumable: they start at
position ``start`` of ``order`` and return ``(stop, ...)``; ``stop < N`` means the next
update found its buffer full, and the caller grows the buffer (doubling, so ``O(U)``
copies in all) and calls again from ``stop``, which redoes only that example's score.
No kernel allocates anything but one score buffer per call (multiclass) and the empty
placeholder for the unused averaging array of :mod:`~perceptrons._kernels._rows`.
"""

import numpy as np

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import argmax_lowest

_jit = cached_njit(**_rows.TRAINING)


# ----------------------------------------------------------------- the shared step
@_jit
def _binary_step(rows, i, label, bias_feature, weights, no_aux):
    """One example of the binary perceptron; True when it updated ``weights``."""
    n_features = weights.shape[0] - 1
    score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
    if label * score > 0.0:
        return False
    _rows.add(rows, i, label, weights, no_aux, 0.0)
    weights[n_features] += label * bias_feature
    return True


@_jit
def _multiclass_step(rows, i, gold, bias_feature, weights, scores, no_aux):
    """One example of the multiclass perceptron: the predicted class it moved away
    from, or -1 when the prediction was right (no update)."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    for k in range(n_classes):
        scores[k] = weights[n_features, k] * bias_feature
    _rows.add_scores(rows, i, weights, scores)
    predicted = argmax_lowest(scores)
    if predicted == gold:
        return -1
    _rows.move(rows, i, 1.0, gold, predicted, weights, no_aux, 0.0)
    weights[n_features, predicted] -= bias_feature
    weights[n_features, gold] += bias_feature
    return predicted


# ------------------------------------------------------------------ vanilla, O(d)
@_jit
def vanilla_binary(rows, y, order, bias_feature, weights):
    """The vanilla perceptron: ``weights`` only. Returns the number of updates."""
    no_aux = np.empty(0)
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        if _binary_step(rows, i, y[i], bias_feature, weights, no_aux):
            updates += 1
    return updates


@_jit
def vanilla_multiclass(rows, y, order, bias_feature, weights):
    no_aux = np.empty((0, 0))
    scores = np.empty(weights.shape[1])
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        if _multiclass_step(rows, i, y[i], bias_feature, weights, scores, no_aux) >= 0:
            updates += 1
    return updates


# ------------------------------------------------- voted, naive: T|D| models, O(T|D|d)
@_jit
def voted_naive_binary(rows, y, order, bias_feature, weights, models):
    """``models[t]`` is the weights after position ``t`` (``N`` rows, one vote each):
    a full copy after every example, updated or not."""
    no_aux = np.empty(0)
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        if _binary_step(rows, i, y[i], bias_feature, weights, no_aux):
            updates += 1
        models[position, :] = weights
    return updates


@_jit
def voted_naive_multiclass(rows, y, order, bias_feature, weights, models):
    no_aux = np.empty((0, 0))
    scores = np.empty(weights.shape[1])
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        if _multiclass_step(rows, i, y[i], bias_feature, weights, scores, no_aux) >= 0:
            updates += 1
        models[position, :, :] = weights
    return updates


# ----------------------------- voted and averaged, improved: U + 1 models, O(Ud)
@_jit
def models_after_updates_binary(rows, y, order, start, bias_feature, weights, models, votes, k):
    """``models[0] = 0`` and ``models[k]`` the weights after the ``k``-th update, with
    ``votes[k]`` the examples it was current for (counting the one that made it).

    Resumable (see the module's docstring): returns ``(stop, k)``, ``k`` the number of
    updates so far; ``weights`` carries the current model between calls.
    """
    no_aux = np.empty(0)
    for position in range(start, order.shape[0]):
        i = order[position]
        n_features = weights.shape[0] - 1
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if y[i] * score <= 0.0:
            if k + 1 == models.shape[0]:
                return position, k  # no room for the new model
            _rows.add(rows, i, y[i], weights, no_aux, 0.0)
            weights[n_features] += y[i] * bias_feature
            k += 1
            models[k, :] = weights
        votes[k] += 1
    return order.shape[0], k


@_jit
def models_after_updates_multiclass(rows, y, order, start, bias_feature, weights, models, votes, k):
    no_aux = np.empty((0, 0))
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    scores = np.empty(n_classes)
    for position in range(start, order.shape[0]):
        i = order[position]
        for c in range(n_classes):
            scores[c] = weights[n_features, c] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        predicted, gold = argmax_lowest(scores), y[i]
        if predicted != gold:
            if k + 1 == models.shape[0]:
                return position, k
            _rows.move(rows, i, 1.0, gold, predicted, weights, no_aux, 0.0)
            weights[n_features, predicted] -= bias_feature
            weights[n_features, gold] += bias_feature
            k += 1
            models[k, :, :] = weights
        votes[k] += 1
    return order.shape[0], k


@_jit
def vote_weighted_sum(models, votes, n_models, out):
    """``out = Σ_k votes[k] models[k]`` over the first ``n_models`` (flattened to 2-D):
    the improved averaged perceptron's final sum, ``O(U d)``."""
    out[:] = 0.0
    for k in range(n_models):
        v = votes[k]
        if v != 0:
            for j in range(models.shape[1]):
                out[j] += v * models[k, j]


# --------------------------------------- averaged, naive: running sum, O(T|D|d) time
@_jit
def averaged_naive_binary(rows, y, order, bias_feature, weights, total):
    """``total += weights`` after every example, updated or not."""
    no_aux = np.empty(0)
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        if _binary_step(rows, i, y[i], bias_feature, weights, no_aux):
            updates += 1
        for j in range(weights.shape[0]):
            total[j] += weights[j]
    return updates


@_jit
def averaged_naive_multiclass(rows, y, order, bias_feature, weights, total):
    no_aux = np.empty((0, 0))
    scores = np.empty(weights.shape[1])
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        if _multiclass_step(rows, i, y[i], bias_feature, weights, scores, no_aux) >= 0:
            updates += 1
        for j in range(weights.shape[0]):
            for c in range(weights.shape[1]):
                total[j, c] += weights[j, c]
    return updates


# ------------------------------------ averaged, Δw: the sparse updates, O(d + U nnz)
@_jit
def _row_nnz(rows, i):
    """Entries the update on example ``i`` writes: its nonzeros (dense: counted)."""
    if isinstance(rows, tuple):
        _, _, indptr = rows
        return indptr[i + 1] - indptr[i]
    count = 0
    for j in range(rows.shape[1]):
        if rows[i, j] != 0.0:
            count += 1
    return count


@_jit
def _record(rows, i, scale, n_features, bias_value, index, value, end):
    """Append the update ``scale * x_i`` (its nonzeros, then the bias entry) at
    ``index[end:]``, ``value[end:]``; returns the new end."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            index[end] = indices[p]
            value[end] = scale * data[p]
            end += 1
    else:
        for j in range(rows.shape[1]):
            if rows[i, j] != 0.0:
                index[end] = j
                value[end] = scale * rows[i, j]
                end += 1
    index[end] = n_features
    value[end] = bias_value
    return end + 1


@_jit
def delta_updates_binary(rows, y, order, start, u, bias_feature, weights, log, index, value):
    """Store each update ``Δw = y x`` sparsely: update ``u`` holds the entries
    ``index[ptr_u : ptr_{u+1}]``, ``value[...]``, with ``log[u] = (position, ptr_{u+1})``
    (``ptr_0 = 0``); the bias is one more entry, at index ``d``.

    Resumable: from position ``start`` with ``u`` updates stored; returns ``(stop, u)``.
    The caller grows ``log`` (one row per update) or ``index``/``value`` (at most
    ``nnz + 1`` entries per update) when ``stop < N``.
    """
    no_aux = np.empty(0)
    n_features = weights.shape[0] - 1
    position = start
    end = log[u - 1, 1] if u > 0 else 0
    while position < order.shape[0]:
        i = order[position]
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if y[i] * score <= 0.0:
            if u == log.shape[0] or end + _row_nnz(rows, i) + 1 > index.shape[0]:
                return position, u
            _rows.add(rows, i, y[i], weights, no_aux, 0.0)
            weights[n_features] += y[i] * bias_feature
            end = _record(rows, i, y[i], n_features, y[i] * bias_feature, index, value, end)
            log[u, 0] = position
            log[u, 1] = end
            u += 1
        position += 1
    return position, u


@_jit
def delta_updates_multiclass(rows, y, order, start, u, bias_feature, weights, log, index, value):
    """As :func:`delta_updates_binary`; the update moves two classes by ``±x``, so it
    stores ``x`` once and ``log[u] = (position, ptr_{u+1}, gold, predicted)``."""
    no_aux = np.empty((0, 0))
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    scores = np.empty(n_classes)
    position = start
    end = log[u - 1, 1] if u > 0 else 0
    while position < order.shape[0]:
        i = order[position]
        for c in range(n_classes):
            scores[c] = weights[n_features, c] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        predicted, gold = argmax_lowest(scores), y[i]
        if predicted != gold:
            if u == log.shape[0] or end + _row_nnz(rows, i) + 1 > index.shape[0]:
                return position, u
            _rows.move(rows, i, 1.0, gold, predicted, weights, no_aux, 0.0)
            weights[n_features, predicted] -= bias_feature
            weights[n_features, gold] += bias_feature
            end = _record(rows, i, 1.0, n_features, bias_feature, index, value, end)
            log[u, 0] = position
            log[u, 1] = end
            log[u, 2] = gold
            log[u, 3] = predicted
            u += 1
        position += 1
    return position, u


@_jit
def delta_sum_binary(log, n_updates, index, value, n_total, out):
    """``out = Σ_u life_u Δw_u``: an update made at position ``t`` (from 0) lives for
    the ``N - t`` examples from its own on. ``O(U nnz)`` after ``out`` is zeroed."""
    out[:] = 0.0
    begin = 0
    for u in range(n_updates):
        life = n_total - log[u, 0]
        for p in range(begin, log[u, 1]):
            out[index[p]] += life * value[p]
        begin = log[u, 1]


@_jit
def delta_sum_multiclass(log, n_updates, index, value, n_total, out):
    out[:, :] = 0.0
    begin = 0
    for u in range(n_updates):
        life = n_total - log[u, 0]
        gold, predicted = log[u, 2], log[u, 3]
        for p in range(begin, log[u, 1]):
            change = life * value[p]
            out[index[p], gold] += change
            out[index[p], predicted] -= change
        begin = log[u, 1]


# ------------------------------ averaged, fastest: aux vector and counter, O(d)
@_jit
def fastest_binary(rows, y, order, bias_feature, weights, aux):
    """Daumé's trick: ``aux += c Δw`` on an update, ``c`` the examples seen before
    this one; the running sum is then ``N weights - aux``. The arithmetic of
    :func:`perceptrons._kernels.perceptron.binary_epoch` with averaging."""
    n_features = weights.shape[0] - 1
    count = 0.0
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        score = _rows.dot(rows, i, weights, weights[n_features] * bias_feature)
        if y[i] * score <= 0.0:
            updates += 1
            step = y[i]
            _rows.add(rows, i, step, weights, aux, count)
            weights[n_features] += step * bias_feature
            aux[n_features] += count * step * bias_feature
        count += 1
    return updates


@_jit
def fastest_multiclass(rows, y, order, bias_feature, weights, aux):
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    scores = np.empty(n_classes)
    count = 0.0
    updates = 0
    for position in range(order.shape[0]):
        i = order[position]
        for c in range(n_classes):
            scores[c] = weights[n_features, c] * bias_feature
        _rows.add_scores(rows, i, weights, scores)
        predicted, gold = argmax_lowest(scores), y[i]
        if predicted != gold:
            updates += 1
            _rows.move(rows, i, 1.0, gold, predicted, weights, aux, count)
            weights[n_features, predicted] -= bias_feature
            weights[n_features, gold] += bias_feature
            aux[n_features, predicted] -= count * bias_feature
            aux[n_features, gold] += count * bias_feature
        count += 1
    return updates
