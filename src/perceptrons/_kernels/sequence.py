"""Compiled pieces of the structured perceptron (Collins 2002): Viterbi decoding and
one training epoch over featurized sentences.

The input is the flat arrays of :class:`perceptrons._sequences.TokenFeatures`: token ``t``
has the feature columns ``indices[indptr[t]:indptr[t + 1]]`` and sentence ``s`` is the
tokens ``offsets[s]:offsets[s + 1]``. ``codes`` holds every token's gold tag code.

``weights``
    Shape ``(n_features + n_tags + 1, n_tags)``, C-contiguous: row ``f < n_features`` is
    observation feature ``f``'s weight for each tag, row ``n_features + p`` the
    transition from previous tag ``p``, and the last row the transition from the start
    of the sentence. The score of tags ``y`` is accumulated from the left,
    ``s = W[start, y_0] + e_0(y_0)``, then ``s = (s + W[n_features + y_{t-1}, y_t]) +
    e_t(y_t)``, with ``e_t(j)`` the sum, from 0.0 in stored order, of ``W[f, j]`` over
    token ``t``'s features; :func:`viterbi` computes exactly these sums for the path it
    returns, so the oracle in :mod:`perceptrons.reference.sequence` can match it to
    the last bit.
    Training reads and writes this dense array. A trained model decodes with its
    observation rows in two forms (:func:`split_emissions`): the structured perceptron
    changes only the weights of the (feature, tag) pairs in its mistakes, so most rows
    are zero or nearly so and are kept as their nonzeros, and the few busy ones dense.
``aux``
    The averaging trick's auxiliary array (Daumé 2006), same shape, or empty (shape
    ``(0, 0)``) for a model that is not averaged: every change is also added to it
    multiplied by ``count``, the number of sentences seen before, so that after ``N``
    sentences ``weights - aux / N`` is the exact mean of the weights after each of them.
``mistake_log``
    Int64, shape ``(len(order), 2)`` or ``(0, 2)``: the ``m``-th wrong sentence of the
    call writes its position in ``order`` to ``mistake_log[m, 0]`` (and -1 to
    ``mistake_log[m, 1]``), which :mod:`perceptrons.parallel` reads to find the rows an
    epoch changed.

The caller checks every offset and index first (Numba does no bounds checks). One set
of scratch buffers is allocated per call, sized by the longest sentence; nothing per
sentence.
"""

import numpy as np

from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels._rows import NON_FINITE_SCORE, TRAINING, finite_scores

_jit = cached_njit(**TRAINING)

PERCEPTRON, MIRA = 0, 1


@_jit
def emissions(indptr, indices, weights, first, last, out):
    """``out[t - first, j] = Σ_f W[f, j]`` over the features of tokens ``first:last``."""
    n_tags = weights.shape[1]
    for t in range(first, last):
        # Row views: the compiler then sees two distinct rows and vectorizes the sums.
        total = out[t - first]
        for j in range(n_tags):
            total[j] = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            row = weights[indices[p]]
            for j in range(n_tags):
                total[j] += row[j]


@_jit
def split_emissions(indptr, indices, tables, first, last, out):
    """:func:`emissions` for the observation weights of a trained model, kept by row in
    two forms: ``tables = (starts, tags, values)``, feature ``f``'s entries being
    ``starts[f]:starts[f + 1]``. A row of ``n_tags`` entries is dense (the weights of
    every tag in order: one vectorized add per tag); a shorter one holds the nonzero
    weights ``values[q]`` of the tags ``tags[q]``. The same sums as :func:`emissions`
    over the full rows, in the same order: the zeros left out add nothing. One array
    locates every row, so a feature costs one lookup before its weights."""
    starts, tags, values = tables
    n_tags = out.shape[1]
    for t in range(first, last):
        total = out[t - first]
        for j in range(n_tags):
            total[j] = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            f = indices[p]
            begin, end = starts[f], starts[f + 1]
            if end - begin == n_tags:
                row = values[begin:end]
                for j in range(n_tags):
                    total[j] += row[j]
            else:
                for q in range(begin, end):
                    total[tags[q]] += values[q]


@_jit
def viterbi(emit, n, transitions, delta, back, path):
    """The best tags of a sentence of ``n`` tokens whose emission scores are
    ``emit[:n]``, written to ``path[:n]``; returns its score. ``transitions`` has a row
    per previous tag and a last row for the start of the sentence.

    Ties go to the lowest tag (strict comparisons over ascending tags), both for each
    back-pointer and for the last tag: among equally good sequences the one chosen is
    the smallest in reverse-lexicographic order.
    """
    n_tags = transitions.shape[1]
    start = transitions[n_tags]
    for j in range(n_tags):
        delta[0, j] = start[j] + emit[0, j]
    for t in range(1, n):
        # Previous tag outermost, so the inner loop runs along a row of the
        # transitions; written as selects on row views, which the compiler vectorizes
        # (about twice as fast as the branch for 44 tags).
        before, now, pointers = delta[t - 1], delta[t], back[t]
        previous, row = before[0], transitions[0]
        for j in range(n_tags):
            now[j] = previous + row[j]
            pointers[j] = 0
        for i in range(1, n_tags):
            previous, row = before[i], transitions[i]
            for j in range(n_tags):
                value = previous + row[j]
                best = now[j]
                better = value > best
                now[j] = value if better else best
                pointers[j] = i if better else pointers[j]
        scores = emit[t]
        for j in range(n_tags):
            now[j] += scores[j]
    best = 0
    for j in range(1, n_tags):
        if delta[n - 1, j] > delta[n - 1, best]:
            best = j
    path[n - 1] = best
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return delta[n - 1, best]


@_jit
def path_score(emit, n, transitions, tags, first):
    """The score of the tags ``tags[first:first + n]``, in :func:`viterbi`'s order."""
    n_tags = transitions.shape[1]
    score = transitions[n_tags, tags[first]] + emit[0, tags[first]]
    for t in range(1, n):
        score = (score + transitions[tags[first + t - 1], tags[first + t]]) + emit[
            t, tags[first + t]
        ]
    return score


@_jit
def _longest(offsets):
    longest = 1
    for s in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    return longest


@_jit
def decode(indptr, indices, offsets, tables, transitions, out):
    """The Viterbi tags of every sentence, written to ``out`` (one code per token), for
    the observation weights ``tables`` of :func:`split_emissions`."""
    n_tags = transitions.shape[1]
    longest = _longest(offsets)
    emit = np.empty((longest, n_tags))
    delta = np.empty((longest, n_tags))
    back = np.empty((longest, n_tags), dtype=np.int64)
    path = np.empty(longest, dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        first, last = offsets[s], offsets[s + 1]
        n = last - first
        if n == 0:
            continue
        split_emissions(indptr, indices, tables, first, last, emit)
        viterbi(emit, n, transitions, delta, back, path)
        for t in range(n):
            out[first + t] = path[t]


@_jit
def _push(entries, m, row, column, n_tags, sign):
    """Record a change of ``sign`` (+1 or -1) at ``(row, column)`` as one sortable key."""
    entries[m] = (row * n_tags + column) * 2 + (1 if sign > 0 else 0)
    return m + 1


@_jit
def _net_changes(entries, m, nets):
    """Aggregate the ``m`` changes recorded by :func:`_push` by weight entry: the
    distinct entries with a nonzero net change go to ``entries[:n]`` (as ``row * n_tags
    + column``, sorted) and their net changes to ``nets[:n]``. Returns ``n`` and
    ``||Δ||²``, the sum of the squared net changes."""
    keys = entries[:m]
    keys.sort()
    n, k, sq_norm = 0, 0, 0.0
    while k < m:
        entry = keys[k] >> 1
        net = 0
        while k < m and keys[k] >> 1 == entry:
            net += 1 if keys[k] & 1 else -1
            k += 1
        if net != 0:  # n <= k: the compacted part never overtakes the keys still read
            entries[n] = entry
            nets[n] = net
            n += 1
            sq_norm += float(net * net)
    return n, sq_norm


@_jit
def epoch(
    indptr,
    indices,
    offsets,
    codes,
    order,
    weights,
    aux,
    count,
    kind,
    C,
    mistake_log,
):
    """One pass over the sentences ``order``: decode each with the current weights and,
    when any tag is wrong, move the weights towards the gold tags and away from the
    predicted ones (``kind`` PERCEPTRON: by 1; MIRA: by the 1-best MIRA step
    ``min(C, (loss - margin) / ||Δ||²)``, with the Hamming loss and ``Δ`` the
    difference of the two feature vectors, aggregated by weight entry).

    Returns ``(n_wrong_sentences, count)``, ``count`` advanced by ``len(order)``; or
    ``(NON_FINITE_SCORE, count)`` at the first non-finite score (see
    :mod:`perceptrons._kernels._rows`).
    """
    n_tags = weights.shape[1]
    n_features = weights.shape[0] - n_tags - 1
    start = n_features + n_tags
    transitions = weights[n_features:]
    averaged = aux.shape[0] != 0
    log = mistake_log.shape[0] != 0
    longest = _longest(offsets)
    emit = np.empty((longest, n_tags))
    delta = np.empty((longest, n_tags))
    back = np.empty((longest, n_tags), dtype=np.int64)
    path = np.empty(longest, dtype=np.int64)
    # MIRA's changes as sortable keys: two per feature of a wrong token and per transition.
    most_features = 0
    for t in range(indptr.shape[0] - 1):
        most_features = max(most_features, indptr[t + 1] - indptr[t])
    entries = np.empty(2 * longest * (most_features + 1) if kind == MIRA else 0, dtype=np.int64)
    nets = np.empty(entries.shape[0], dtype=np.int64)
    mistakes = 0
    for position in range(order.shape[0]):
        s = order[position]
        first, last = offsets[s], offsets[s + 1]
        n = last - first
        if n == 0:
            count += 1.0
            continue
        emissions(indptr, indices, weights, first, last, emit)
        predicted_score = viterbi(emit, n, transitions, delta, back, path)
        # The best path's score finite and every emission finite: then no comparison
        # Viterbi made read a NaN or an infinity.
        if not np.isfinite(predicted_score):
            return NON_FINITE_SCORE, count
        for t in range(n):
            if not finite_scores(emit[t]):
                return NON_FINITE_SCORE, count
        wrong = 0
        for t in range(n):
            if path[t] != codes[first + t]:
                wrong += 1
        if wrong == 0:
            count += 1.0
            continue
        if log:
            mistake_log[mistakes, 0] = position
            mistake_log[mistakes, 1] = -1
        mistakes += 1
        if kind == PERCEPTRON:
            factor = count
            for t in range(n):
                gold, guess = codes[first + t], path[t]
                gold_before = start if t == 0 else n_features + codes[first + t - 1]
                guess_before = start if t == 0 else n_features + path[t - 1]
                if gold != guess:
                    for p in range(indptr[first + t], indptr[first + t + 1]):
                        f = indices[p]
                        weights[f, gold] += 1.0
                        weights[f, guess] -= 1.0
                        if averaged:
                            aux[f, gold] += factor
                            aux[f, guess] -= factor
                if gold != guess or gold_before != guess_before:
                    weights[gold_before, gold] += 1.0
                    weights[guess_before, guess] -= 1.0
                    if averaged:
                        aux[gold_before, gold] += factor
                        aux[guess_before, guess] -= factor
        else:
            gold_score = path_score(emit, n, transitions, codes, first)
            if not np.isfinite(gold_score):
                return NON_FINITE_SCORE, count
            m = 0
            for t in range(n):
                gold, guess = codes[first + t], path[t]
                gold_before = start if t == 0 else n_features + codes[first + t - 1]
                guess_before = start if t == 0 else n_features + path[t - 1]
                if gold != guess:
                    for p in range(indptr[first + t], indptr[first + t + 1]):
                        m = _push(entries, m, indices[p], gold, n_tags, 1)
                        m = _push(entries, m, indices[p], guess, n_tags, -1)
                if gold != guess or gold_before != guess_before:
                    m = _push(entries, m, gold_before, gold, n_tags, 1)
                    m = _push(entries, m, guess_before, guess, n_tags, -1)
            n_changes, sq_norm = _net_changes(entries, m, nets)
            if sq_norm > 0.0:
                step = min(C, (wrong - (gold_score - predicted_score)) / sq_norm)
                for k in range(n_changes):
                    row, column = entries[k] // n_tags, entries[k] % n_tags
                    change = step * nets[k]
                    weights[row, column] += change
                    if averaged:
                        aux[row, column] += count * change
        count += 1.0
    return mistakes, count
