"""The compiled loop of the kernel perceptrons on a budget (:mod:`perceptrons.budget`).

:func:`budget_block` walks one block of ``B`` examples in stream order, exactly as the
oracles of :mod:`perceptrons.reference.budget` walk them one at a time. The support set
is ``budget`` slots allocated once (``coef`` has one row per slot, one column per class,
or one for a binary model); slots ``0 .. n_occupied - 1`` are in use. The caller has
computed two kernel products: ``cross``, the kernel between the block and the support
vectors as they stood when the block began, and ``block_gram``, the block against
itself. A slot filled inside the block reads ``block_gram`` instead of ``cross``:
``source[s]`` is ``-1`` for a slot whose vector is from before the block, else the
block position of the example now in it (the caller copies those examples into their
slots afterwards and resets ``source``).

Per slot the loop keeps the kernel of its vector with itself (``norms``), when it
joined (``birth``, the stream clock: the Forgetron removes the oldest), and, for the
rules that need them, the Gram matrix of the support set (``gram``: the Forgetron's
``f(x_r)``, BPA-NN's neighbours and projections) or its inverse (``inverse``: the
Projectron's projection). ``counters`` is ``[n_occupied, clock, mistakes M]`` and
``totals`` is ``[Q]`` (the Forgetron's accumulated removal damage). ``uniforms`` holds
one uniform number per example of the block (random removal), drawn by the caller.

The rules (see the oracles for the papers): ``RULE_RANDOM``, the randomized budget
perceptron; ``RULE_FORGETRON``, the self-tuned Forgetron; ``RULE_PROJECTRON``, the
Projectron, projecting every update once the budget is full; ``RULE_BPA``, BPA-S;
``RULE_BPA_NN``, BPA-NN, which also keeps each slot's nearest neighbour in the kernel's
feature space (``nearest``, ``nearest_distance``: the closest other occupied slot, ties
to the lowest, kept up to date as slots change).

Work arrays are allocated once per block, none per example. The kernel returns the
block's prediction mistakes, or ``NON_FINITE_SCORE`` at the first non-finite score.
"""

import numpy as np

from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels._rows import NON_FINITE_SCORE, TRAINING, finite_scores
from perceptrons._kernels.perceptron import argmax_lowest, best_other

_jit = cached_njit(**TRAINING)

RULE_RANDOM, RULE_FORGETRON, RULE_PROJECTRON, RULE_BPA, RULE_BPA_NN = 0, 1, 2, 3, 4


@_jit
def forgetron_phi(sigma, mu, Q, M):
    """The largest ``phi`` in (0, 1] with ``Psi(sigma phi, phi mu) + Q <= 15/32 M``
    (as :func:`perceptrons.reference.budget._forgetron_phi`)."""
    a = sigma * sigma - 2.0 * sigma * mu
    b = 2.0 * sigma
    c = Q - 15.0 / 32.0 * M
    if a + b + c <= 0.0:
        return 1.0
    return -2.0 * c / (b + np.sqrt(max(b * b - 4.0 * a * c, 0.0)))


@_jit
def _place(slot, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth):
    """Put block example ``t`` in ``slot`` with coefficients ``e``; ``kt`` holds its
    kernel values against slots ``0 .. n - 1`` (the slots in use besides it)."""
    for c in range(coef.shape[1]):
        coef[slot, c] = e[c]
    source[slot] = t
    norms[slot] = ktt
    birth[slot] = clock
    if gram.shape[0] > 0:
        for j in range(n):
            gram[slot, j] = kt[j]
            gram[j, slot] = kt[j]
        gram[slot, slot] = ktt


@_jit
def _distance(a, b, norms, gram):
    """Squared feature-space distance between the vectors of slots a and b."""
    return norms[a] + norms[b] - 2.0 * gram[a, b]


@_jit
def _nearest_of(j, n, norms, gram, nearest, nearest_distance):
    """Slot j's nearest other slot among 0 .. n - 1 (ties to the lowest; -1: none)."""
    best, least = -1, np.inf
    for k in range(n):
        if k != j:
            d = _distance(j, k, norms, gram)
            if d < least:
                best, least = k, d
    nearest[j] = best
    nearest_distance[j] = least


@_jit
def nearest_neighbours(n, norms, gram, nearest, nearest_distance):
    """Every occupied slot's nearest other slot, from scratch (a loaded model)."""
    for j in range(n):
        _nearest_of(j, n, norms, gram, nearest, nearest_distance)


@_jit
def _refresh_nearest(p, n, norms, gram, nearest, nearest_distance):
    """Slot p holds a new vector: its own nearest slot, and the slots it is now
    nearest to, or that had the old vector of p as theirs (searched again)."""
    for j in range(n):
        if j == p:
            continue
        if nearest[j] == p:
            _nearest_of(j, n, norms, gram, nearest, nearest_distance)
            continue
        d = _distance(j, p, norms, gram)
        if d < nearest_distance[j] or (d == nearest_distance[j] and p < nearest[j]):
            nearest[j] = p
            nearest_distance[j] = d
    _nearest_of(p, n, norms, gram, nearest, nearest_distance)


@_jit
def budget_block(
    rule, cross, block_gram, codes, uniforms, coef, source, norms, gram, inverse, birth,
    nearest, nearest_distance, counters, totals, eta, C,
):  # fmt: skip
    n_block = block_gram.shape[0]
    budget, n_columns = coef.shape
    multiclass = n_columns > 1
    kt = np.zeros(budget)
    d = np.zeros(budget)
    scores = np.zeros(n_columns)
    e = np.zeros(n_columns)
    f_prime = np.zeros(n_columns)
    mistakes = 0
    for t in range(n_block):
        n = counters[0]
        counters[1] += 1
        clock = counters[1]
        ktt = block_gram[t, t]
        for j in range(n):
            kt[j] = cross[t, j] if source[j] < 0 else block_gram[source[j], t]
        for c in range(n_columns):
            scores[c] = 0.0
        for j in range(n):
            for c in range(n_columns):
                scores[c] += coef[j, c] * kt[j]
        if not finite_scores(scores):
            return NON_FINITE_SCORE
        gold = codes[t]
        y = 1.0 if gold == 1 else -1.0
        predicted = argmax_lowest(scores) if multiclass else 0
        mistake = predicted != gold if multiclass else y * scores[0] <= 0.0
        if mistake:
            mistakes += 1
            counters[2] += 1
        for c in range(n_columns):
            e[c] = 0.0
        if rule == RULE_BPA or rule == RULE_BPA_NN:
            # PA-I's step on a positive hinge loss, mistake or not.
            if multiclass:
                other = best_other(scores, gold)
                loss = max(0.0, 1.0 - (scores[gold] - scores[other]))
                if loss <= 0.0 or ktt <= 0.0:
                    continue
                tau = min(C, loss / (2.0 * ktt))
                e[gold] = tau * 1.0
                e[other] = tau * -1.0
            else:
                loss = max(0.0, 1.0 - y * scores[0])
                if loss <= 0.0 or ktt <= 0.0:
                    continue
                tau = min(C, loss / ktt)
                e[0] = tau * y
            if n < budget:
                _place(n, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth)
                counters[0] = n + 1
                if rule == RULE_BPA_NN:
                    _refresh_nearest(n, n + 1, norms, gram, nearest, nearest_distance)
                continue
            # Remove the slot whose coefficient, projected onto x_t (BPA-S), or onto x_t
            # and its nearest neighbour (BPA-NN), changes the model least; x_t takes
            # its slot.
            r = 0
            least = np.inf
            keep_t, keep_n, onto_nearest = 0.0, 0.0, False
            for j in range(n):
                size = 0.0
                for c in range(n_columns):
                    size += coef[j, c] ** 2
                g_t = kt[j]
                p_t, p_n, pair = g_t / ktt, 0.0, False
                residual = norms[j] - kt[j] ** 2 / ktt
                if rule == RULE_BPA_NN and nearest[j] >= 0:
                    m = nearest[j]
                    g_n = gram[j, m]
                    det = ktt * norms[m] - kt[m] * kt[m]
                    if det > 0.0:
                        p_t = (norms[m] * g_t - kt[m] * g_n) / det
                        p_n = (ktt * g_n - kt[m] * g_t) / det
                        residual = norms[j] - (g_t * p_t + g_n * p_n)
                        pair = True
                change = size * residual
                if change < least:
                    least, r = change, j
                    keep_t, keep_n, onto_nearest = p_t, p_n, pair
            if rule == RULE_BPA:
                for c in range(n_columns):
                    e[c] = coef[r, c] * kt[r] / ktt + e[c]
            else:
                if onto_nearest:
                    m = nearest[r]
                    for c in range(n_columns):
                        coef[m, c] = coef[m, c] + coef[r, c] * keep_n
                for c in range(n_columns):
                    e[c] = coef[r, c] * keep_t + e[c]
            _place(r, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth)
            if rule == RULE_BPA_NN:
                _refresh_nearest(r, n, norms, gram, nearest, nearest_distance)
            continue
        if not mistake:
            continue
        if multiclass:
            e[gold] += 1.0
            e[predicted] -= 1.0
        else:
            e[0] = y
        if rule == RULE_PROJECTRON:
            # d* = K_S^{-1} k_t, delta^2 = K(x_t, x_t) - k_t . d*.
            projection = 0.0
            for i in range(n):
                total = 0.0
                for j in range(n):
                    total += inverse[i, j] * kt[j]
                d[i] = total
                projection += kt[i] * total
            delta = np.sqrt(max(ktt - projection, 0.0))
            if delta <= eta or n == budget:
                for j in range(n):
                    for c in range(n_columns):
                        coef[j, c] = coef[j, c] + d[j] * e[c]
                continue
            delta_sq = delta * delta
            for i in range(n):
                for j in range(n):
                    inverse[i, j] = inverse[i, j] + d[i] * d[j] / delta_sq
                inverse[i, n] = d[i] * -1.0 / delta_sq
                inverse[n, i] = -1.0 * d[i] / delta_sq
            inverse[n, n] = 1.0 / delta_sq
            _place(n, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth)
            counters[0] = n + 1
            continue
        if n < budget:
            _place(n, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth)
            counters[0] = n + 1
            continue
        if rule == RULE_RANDOM:
            r = min(int(uniforms[t] * budget), budget - 1)
            _place(r, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth)
            continue
        # The self-tuned Forgetron: shrink everything by phi, then drop the oldest.
        r = 0
        for j in range(1, n):
            if birth[j] < birth[r]:
                r = j
        sigma = 0.0
        for c in range(n_columns):
            f_prime[c] = 0.0
            sigma = max(sigma, abs(coef[r, c]))
        for j in range(n):
            for c in range(n_columns):
                f_prime[c] += coef[j, c] * gram[r, j]  # symmetric: read along a row
        mu = 0.0
        for c in range(n_columns):
            f_prime[c] += e[c] * kt[r]
            mu += coef[r, c] * f_prime[c]
        mu = mu / sigma if sigma > 0.0 else 0.0  # a slot shrunk to nothing (phi = 0)
        phi = forgetron_phi(sigma, mu, totals[0], counters[2])
        for j in range(n):
            for c in range(n_columns):
                coef[j, c] = coef[j, c] * phi
        lam = sigma * phi
        totals[0] = totals[0] + lam * lam + 2.0 * lam - 2.0 * lam * (phi * mu)
        for c in range(n_columns):
            e[c] = phi * e[c]
        _place(r, t, n, e, kt, ktt, clock, coef, source, norms, gram, birth)
    return mistakes
