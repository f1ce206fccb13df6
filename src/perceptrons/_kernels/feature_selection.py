"""Compiled epochs of the feature-selection family, binary and multiclass: online
learners that keep at most ``B`` features (a budget), each a base rule's update followed
by the truncation of the weights to the ``B`` best features.

``Truncate(W, B)``, for a key per feature: among the features whose weight is nonzero in
some class, keep the ``B`` with the best key and set every other feature's weights (all
classes) to 0; ties go to the lower feature index. The intercept (the last row) is never
truncated, and never counted in ``B``.

``"pet"`` (Wang, Zhao, Hoi & Jin 2014, Algorithm 1, the perceptron with truncation)
    On a mistake (binary ``y w·x̃ <= 0``, multiclass the argmax): ``w <- w + eta s y x̃``,
    then ``Truncate(w, B)`` keyed by ``Σ_c |w_jc|`` (largest kept).
``"fofs"`` (the same paper's Algorithm 2, OFS by sparse projection)
    On ``y w·x̃ < 1``: ``w̃ = (1 - λ eta)^s w + eta s y x̃``, ``ŵ = min(1, 1 / (√λ
    ||w̃||)) w̃``, ``w = Truncate(ŵ, B)`` keyed by ``Σ_c |w_jc|`` (``λ``: the constant
    ``l2``). The shrinking and the projection are the L2 penalty's: they act on the
    feature weights, not on the intercept (which steps by ``eta s y bias_feature``).
    Multiclass: ``W``'s penalty is ``λ/2 ||W||_F²``, so every class shrinks by the same
    factor and the projection is on the Frobenius ball; SOL shrinks and projects each
    updated class on its own (O(dimension) per update). One factor for every class keeps
    the order of the keys: the weights are ``scale * v`` (the intercept row explicit),
    the shrinking and the projection are O(1) (``scale *= factor``), ``||W||²`` is kept
    without a pass (a step's ``2 δ w·x + δ² ||x||²``, an eviction's ``-Σ_c w_jc²``) and
    the keys are ``Σ_c |v_jc|``. Averaging uses ALMA's bookkeeping
    (:mod:`perceptrons._kernels.first_order`), with one ``P`` for every class. The scale
    is folded into ``v`` when it falls below ``1 / MAX_SCALE`` and at the end of every
    call: between calls the stored weights are the model.
``"sofs"`` (Wu, Hoi, Mei & Yu 2017, second-order OFS)
    AROW's diagonal update (as the ``arow`` rule of :mod:`perceptrons._kernels.confidence`,
    ``r`` becoming ``r / s``), then ``Truncate`` keyed by the variance ``Σ_c Σ_jc``
    (smallest kept: the most confident features).
``"adafobos-ofs"``, ``"adarda-ofs"``
    AdaGrad's FOBOS and RDA updates without L1 (as :mod:`perceptrons._kernels.adagrad`),
    then ``Truncate`` keyed by ``Σ_c H_jc``, ``H = delta + sqrt(G)`` (largest kept: the
    features whose gradients were largest). RDA's weights are a function of its
    statistics, ``w = Truncate(-eta u / H, B)`` at every round: its candidates are the
    features with a gradient so far (``G > 0`` in some class; their weight is nonzero
    unless ``u`` cancelled exactly), and a feature evicted earlier comes back with all
    its classes' weights when its key earns it a place.

Lazily, in O(nnz(x) log B) per update: the features outside ``x`` keep their keys (and
fofs's common scale keeps their order), so the kept features are held in a heap whose
root is the worst of them; after an update the keys of ``x``'s kept features are
refreshed (one whose weights all became 0 leaves the heap), then each other feature of
``x`` enters in place of the root if the root is worse, and is evicted otherwise (a
streaming top-``B``: the best ``B`` of the kept and the new). The heap is rebuilt from
the weights and statistics at the start of every call (O(dimension)), also truncating a
model that holds more than ``B`` features (a larger budget before, a model from
elsewhere): nothing of it is stored in the state or a model file, whose contents could
otherwise steer the compiled code's indexing.

``weights``, ``aux``, ``mistake_log``, ``count``
    As in :mod:`perceptrons._kernels.perceptron`; every eviction is a change of the
    weights, tracked in ``aux``: the averaged model is exact.
``stats``
    ``"sofs"``: ``stats[0]`` the diagonal covariance; ``"adafobos-ofs"``: ``stats[0]`` is
    ``G``; ``"adarda-ofs"``: ``stats[0]`` is ``G``, ``stats[1]`` is ``u``; pet and fofs:
    none. Each the shape of ``weights``.
``scalars``
    Unused (empty).
``rule``
    Float64 array ``(kind, bias_feature, B, eta, second)`` (:func:`feature_selection_rule`;
    ``second``: fofs's ``l2``, sofs's ``r``, AdaGrad's ``delta``).
``sample_weight``
    As in :mod:`perceptrons._kernels.perceptron` (or empty). A weight ``s`` multiplies
    the round's gradient step (sofs: ``r / s``, as AROW) and fofs's shrinking counts the
    round ``s`` times (``(1 - λ eta)^s``); weight 0 skips the example.

The kernels return ``(n_updates, n_mistakes, count)``, or ``(NON_FINITE_SCORE,
n_mistakes, count)`` at the first non-finite score, ``NON_FINITE_STEP`` at the first
non-finite step (see :mod:`perceptrons._kernels._rows`). ``n_mistakes`` counts the
wrong predictions made before the update (binary ``y w·x̃ <= 0``, multiclass the argmax,
ties to the lowest class).
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels import _rows
from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.perceptron import best_other, mispredicted

_jit = cached_njit(**_rows.TRAINING)
_piece = register_jitable

PET, FOFS, SOFS, ADA_FOBOS, ADA_RDA = 0, 1, 2, 3, 4
KINDS = {"pet": PET, "fofs": FOFS, "sofs": SOFS, "adafobos-ofs": ADA_FOBOS, "adarda-ofs": ADA_RDA}
# Positions in the ``rule`` array.
KIND, BIAS_FEATURE, BUDGET, ETA, SECOND = 0, 1, 2, 3, 4
#: The constant each rule's kernels read at SECOND.
SECOND_CONSTANT = {"fofs": "l2", "sofs": "r", "adafobos-ofs": "delta", "adarda-ofs": "delta"}
# fofs folds its scale into the weights below 1 / MAX_SCALE (as ALMA).
MAX_SCALE = 1e4


def feature_selection_rule(name: str, bias_feature: float, constants: dict) -> np.ndarray:
    """The ``rule`` argument of the kernels (plain Python: called once per epoch)."""
    eta = float(constants.get("eta", 1.0))
    second = float(constants[SECOND_CONSTANT[name]]) if name in SECOND_CONSTANT else 0.0
    return np.array([float(KINDS[name]), float(bias_feature), float(constants["B"]), eta, second])


# ------------------------------------------------------------------ the heap
# A binary heap of feature indices whose root is the worst kept feature: the smallest
# key, and of equal keys the highest index. ``where[j]`` is j's position, -1 outside.
@_piece
def _worse(key, a, b):
    return key[a] < key[b] or (key[a] == key[b] and a > b)


@_piece
def _sift_up(heap, where, key, at):
    j = heap[at]
    while at > 0:
        parent = (at - 1) >> 1
        q = heap[parent]
        if not _worse(key, j, q):
            break
        heap[at] = q
        where[q] = at
        at = parent
    heap[at] = j
    where[j] = at


@_piece
def _sift_down(heap, where, key, at, size):
    j = heap[at]
    while True:
        child = 2 * at + 1
        if child >= size:
            break
        if child + 1 < size and _worse(key, heap[child + 1], heap[child]):
            child += 1
        q = heap[child]
        if not _worse(key, q, j):
            break
        heap[at] = q
        where[q] = at
        at = child
    heap[at] = j
    where[j] = at


@_piece
def _push(heap, where, key, size, j):
    heap[size] = j
    where[j] = size
    _sift_up(heap, where, key, size)
    return size + 1


@_piece
def _remove(heap, where, key, size, j):
    """Takes ``j`` out of the heap; returns the new size."""
    at = where[j]
    where[j] = -1
    size -= 1
    if at != size:
        last = heap[size]
        heap[at] = last
        where[last] = at
        _sift_up(heap, where, key, at)
        _sift_down(heap, where, key, where[last], size)
    return size


@_piece
def _offer(heap, where, key, size, budget, j):
    """Feature ``j`` (outside the heap) among the kept: pushed while fewer than
    ``budget`` are, else in place of the root if the root is worse. Returns the new size
    and the feature to evict (the old root, or ``j`` itself; -1: none)."""
    if size < budget:
        return _push(heap, where, key, size, j), -1
    root = heap[0]
    if _worse(key, j, root):
        return size, j
    where[root] = -1
    heap[0] = j
    where[j] = 0
    _sift_down(heap, where, key, 0, size)
    return size, root


@_piece
def _moved(heap, where, key, size, j):
    """Restores the heap after ``key[j]`` changed."""
    _sift_up(heap, where, key, where[j])
    _sift_down(heap, where, key, where[j], size)


# ------------------------------------------------------------------ the rules' pieces
@_piece
def _key(j, kind, weights, stats, delta):
    """Feature ``j``'s key, larger is better (sofs's variance negated: exact)."""
    total = 0.0
    for k in range(weights.shape[1]):
        if kind == PET or kind == FOFS:
            total += abs(weights[j, k])
        elif kind == SOFS:
            total += stats[0, j, k]
        else:
            total += delta + np.sqrt(stats[0, j, k])
    return -total if kind == SOFS else total


@_piece
def _candidate(j, kind, weights, stats):
    """Whether feature ``j`` is one ``Truncate`` chooses among (see the module)."""
    for k in range(weights.shape[1]):
        if kind == ADA_RDA:
            if stats[0, j, k] > 0.0:
                return True
        elif weights[j, k] != 0.0:
            return True
    return False


@_piece
def _set(j, k, new, weights, aux, factor):
    """``weights[j, k] = new``, the change tracked in ``aux`` (times ``factor``)."""
    if new != weights[j, k]:
        if aux.shape[0] != 0:
            aux[j, k] += factor * (new - weights[j, k])
        weights[j, k] = new


@_piece
def _rda_weight(j, k, stats, eta, delta):
    u = stats[1, j, k]
    if u == 0.0:
        return 0.0
    return -eta * u / (delta + np.sqrt(stats[0, j, k]))


@_piece
def _evict(j, weights, aux, factor, kind, scale, sq_norm):
    """Every class's weight of ``j`` set to 0; returns fofs's ``||W||²`` after."""
    for k in range(weights.shape[1]):
        if kind == FOFS:
            true = scale * weights[j, k]
            sq_norm -= true * true
        _set(j, k, 0.0, weights, aux, factor)
    return max(sq_norm, 0.0)


@_piece
def _fold(weights, aux, scale, scale_sum):
    """fofs's feature rows ``v <- scale v``, the running sum ``P v`` moved into ``aux``
    (which becomes minus the sum of the weights after each example so far)."""
    averaged = aux.shape[0] != 0
    for j in range(weights.shape[0] - 1):
        for k in range(weights.shape[1]):
            if averaged:
                aux[j, k] -= scale_sum * weights[j, k]
            weights[j, k] *= scale


@_piece
def _gather(rows, i, index, value):
    """The nonzero entries of example ``i`` into ``index`` and ``value``, in the order
    of the features (a canonical CSR row's); returns how many."""
    n = 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            if data[p] != 0.0:
                index[n] = indices[p]
                value[n] = data[p]
                n += 1
    else:
        for j in range(rows.shape[1]):
            if rows[i, j] != 0.0:
                index[n] = j
                value[n] = rows[i, j]
                n += 1
    return n


@_piece
def _widest_row(rows):
    if isinstance(rows, tuple):
        indptr = rows[2]
        widest = 0
        for i in range(indptr.shape[0] - 1):
            widest = max(widest, indptr[i + 1] - indptr[i])
        return widest
    return rows.shape[1]


@_piece
def _epoch(rows, y, order, weights, aux, stats, mistake_log, count, rule, sample_weight):
    """The epoch of both kinds of model: 2-D ``weights`` (a binary model's as one
    column, ``y`` then ±1) and 3-D ``stats``."""
    n_features, n_classes = weights.shape[0] - 1, weights.shape[1]
    binary = n_classes == 1
    kind = int(rule[KIND])
    bias_feature = rule[BIAS_FEATURE]
    budget = int(min(rule[BUDGET], n_features))
    eta, second = rule[ETA], rule[SECOND]
    averaged, log = aux.shape[0] != 0, mistake_log.shape[0] != 0
    weighted = sample_weight.shape[0] != 0
    width = _widest_row(rows)
    index = np.empty(width, dtype=np.int64)
    value = np.empty(width)
    key = np.zeros(n_features)
    where = np.full(n_features, -1, dtype=np.int64)
    heap = np.empty(budget, dtype=np.int64)
    scores = np.empty(n_classes)
    raw = np.empty(n_classes)
    # fofs: W = scale * v on the feature rows; P (scale_sum) the averaging's running
    # factor, starting at count (then P v - aux is count W - aux, the plain bookkeeping).
    scale, scale_sum, sq_norm = 1.0, count, 0.0
    shrink = 1.0 - second * eta
    radius_sq = 1.0 / second if kind == FOFS else 0.0
    if kind == ADA_RDA:
        # The weights as the function of the statistics (constants may have changed).
        for j in range(n_features + 1):
            for k in range(n_classes):
                _set(j, k, _rda_weight(j, k, stats, eta, second), weights, aux, count)
    size = 0
    for j in range(n_features):
        if _candidate(j, kind, weights, stats):
            key[j] = _key(j, kind, weights, stats, second)
            size, evicted = _offer(heap, where, key, size, budget, j)
            if evicted >= 0:
                _evict(evicted, weights, aux, count, kind, 1.0, 0.0)
    if kind == FOFS:
        for j in range(n_features):
            for k in range(n_classes):
                sq_norm += weights[j, k] * weights[j, k]
    updates, mistakes = 0, 0
    status = 0
    for position in range(order.shape[0]):
        i = order[position]
        weight = sample_weight[i] if weighted else 1.0
        if weight == 0.0:
            continue  # as if the example were absent
        nnz = _gather(rows, i, index, value)
        raw[:] = 0.0
        for p in range(nnz):
            j = index[p]
            for k in range(n_classes):
                raw[k] += value[p] * weights[j, k]
        for k in range(n_classes):
            features = scale * raw[k] if kind == FOFS else raw[k]
            scores[k] = features + weights[n_features, k] * bias_feature
        if not _rows.finite_scores(scores):
            status = _rows.NON_FINITE_SCORE
            break
        if binary:
            gold, other = 0, 0
            margin = y[i] * scores[0]
            wrong = margin <= 0.0
        else:
            gold = int(y[i])
            other = best_other(scores, gold)
            margin = scores[gold] - scores[other]
            wrong = mispredicted(scores, gold, other)
        if wrong:
            mistakes += 1
        update = wrong if kind == PET else margin < 1.0
        if update:
            if log:
                mistake_log[updates, 0] = position
                mistake_log[updates, 1] = -1 if binary else other
            updates += 1
            sides = 1 if binary else 2
            if kind == PET or kind == FOFS:
                step = eta * weight
                factor = count
                if kind == FOFS:
                    # W̃ = a W + δ (x e_g - x e_o): ||W̃||² from ||W||², the scores and ||x||².
                    a = shrink**weight
                    x_sq = 0.0
                    for p in range(nnz):
                        x_sq += value[p] * value[p]
                    if binary:
                        cross = y[i] * scale * raw[0]
                    else:
                        cross = scale * (raw[gold] - raw[other])
                    sq_norm = a * a * sq_norm + 2.0 * a * step * cross + sides * step * step * x_sq
                    sq_norm = max(sq_norm, 0.0)
                    scale *= a
                    factor = scale_sum
                feature_step = step / scale if kind == FOFS else step
                if not (np.isfinite(feature_step) and np.isfinite(sq_norm)):
                    status = _rows.NON_FINITE_STEP
                    break
                for side in range(sides):
                    k = gold if side == 0 else other
                    sign = (y[i] if binary else 1.0) if side == 0 else -1.0
                    moved = sign * feature_step
                    for p in range(nnz):
                        j = index[p]
                        _set(j, k, weights[j, k] + moved * value[p], weights, aux, factor)
                    change = sign * step * bias_feature
                    weights[n_features, k] += change
                    if averaged:
                        aux[n_features, k] += count * change
                if kind == FOFS and sq_norm > radius_sq:
                    scale /= np.sqrt(second) * np.sqrt(sq_norm)
                    sq_norm = radius_sq
            elif kind == SOFS:
                variance = 0.0
                bias_sq = bias_feature * bias_feature
                for side in range(sides):
                    k = gold if side == 0 else other
                    variance += stats[0, n_features, k] * bias_sq
                    for p in range(nnz):
                        variance += stats[0, index[p], k] * value[p] * value[p]
                r = second / weight
                alpha = (1.0 - margin) / (variance + r)
                precision = 1.0 / r
                if not (np.isfinite(alpha) and np.isfinite(precision * variance)):
                    status = _rows.NON_FINITE_STEP
                    break
                for side in range(sides):
                    k = gold if side == 0 else other
                    step = alpha * ((y[i] if binary else 1.0) if side == 0 else -1.0)
                    for p in range(nnz):
                        j = index[p]
                        sigma = stats[0, j, k]
                        _set(j, k, weights[j, k] + step * sigma * value[p], weights, aux, count)
                        stats[0, j, k] = sigma / (1.0 + precision * sigma * value[p] * value[p])
                    sigma = stats[0, n_features, k]
                    change = step * sigma * bias_feature
                    weights[n_features, k] += change
                    if averaged:
                        aux[n_features, k] += count * change
                    stats[0, n_features, k] = sigma / (1.0 + precision * sigma * bias_sq)
            else:
                changed = 0.0
                for side in range(sides):
                    k = gold if side == 0 else other
                    coefficient = -weight * (y[i] if binary else 1.0) if side == 0 else weight
                    for p in range(nnz + 1):
                        if p < nnz:
                            j, x_j = index[p], value[p]
                        else:
                            j, x_j = n_features, bias_feature
                        if x_j == 0.0:
                            continue
                        g = coefficient * x_j
                        g_sq = stats[0, j, k] + g * g
                        stats[0, j, k] = g_sq
                        if kind == ADA_FOBOS:
                            change = -eta * (g / (second + np.sqrt(g_sq)))
                            new = weights[j, k] + change
                        else:
                            stats[1, j, k] += g
                            new = _rda_weight(j, k, stats, eta, second)
                            change = new - weights[j, k]
                        changed += change * 0.0
                        _set(j, k, new, weights, aux, count)
                if changed != 0.0:
                    status = _rows.NON_FINITE_STEP
                    break
            # Truncate(W, B): the kept features of x first, so that the root is the worst
            # of their final keys; then each newcomer enters only in place of a worse root.
            factor = scale_sum if kind == FOFS else count
            for p in range(nnz):
                j = index[p]
                if where[j] >= 0:
                    if _candidate(j, kind, weights, stats):
                        key[j] = _key(j, kind, weights, stats, second)
                        _moved(heap, where, key, size, j)
                    else:
                        size = _remove(heap, where, key, size, j)
            for p in range(nnz):
                j = index[p]
                if where[j] < 0 and _candidate(j, kind, weights, stats):
                    key[j] = _key(j, kind, weights, stats, second)
                    size, evicted = _offer(heap, where, key, size, budget, j)
                    if evicted >= 0:
                        sq_norm = _evict(evicted, weights, aux, factor, kind, scale, sq_norm)
                    if kind == ADA_RDA and evicted != j:
                        # Back among the kept: every class's weight from the statistics.
                        for k in range(n_classes):
                            _set(j, k, _rda_weight(j, k, stats, eta, second), weights, aux, count)
            if kind == FOFS and scale < 1.0 / MAX_SCALE:
                _fold(weights, aux, scale, scale_sum)
                scale, scale_sum = 1.0, 0.0
                for q in range(size):
                    key[heap[q]] = _key(heap[q], kind, weights, stats, second)
                # (the common factor keeps the order but for rounding: re-sorted)
                for q in range(size // 2 - 1, -1, -1):
                    _sift_down(heap, where, key, q, size)
        if kind == FOFS:
            scale_sum += weight * scale
        count += weight
    if kind == FOFS and status == 0:
        # The stored weights are the model, and aux the plain bookkeeping again.
        _fold(weights, aux, scale, scale_sum)
        if averaged:
            for j in range(n_features):
                for k in range(n_classes):
                    aux[j, k] += count * weights[j, k]
    if status != 0:
        return status, mistakes, count
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
        rows, y, order, columns, aux_columns, stat_columns, mistake_log, count, rule, sample_weight
    )


@_jit
def multiclass_epoch(
    rows, y, order, weights, aux, stats, scalars, mistake_log, count, rule, sample_weight
):
    return _epoch(rows, y, order, weights, aux, stats, mistake_log, count, rule, sample_weight)
