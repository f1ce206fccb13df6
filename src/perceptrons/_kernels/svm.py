"""One pass of dual coordinate descent for the linear SVM with the hinge loss.

The solver of Hsieh, Chang, Lin, Keerthi & Sundararajan (2008, Algorithm 1 with
shrinking, section 3.2), which liblinear runs for ``L2R_L1LOSS_SVC_DUAL`` and
scikit-learn's ``LinearSVC(loss="hinge", dual=True)`` with it. The dual problem is

    min_α ½ αᵀ Q α - Σ_i α_i   subject to   0 <= α_i <= C,   Q_ij = y_i y_j x_i·x_j,

and the weights are kept as ``w = Σ_i α_i y_i x_i``, so that the gradient of
coordinate ``i``, ``G = y_i w·x_i - 1``, costs one sparse or dense dot product. Each
coordinate is minimized exactly (``α_i - G / Q_ii``, clipped to ``[0, C]``) and ``w``
moved by the change. Shrinking: a coordinate at a bound whose gradient pushes it
further out than any projected gradient of the last pass (``bounds``) leaves the
active set (the prefix ``order[:n_active]``) until the caller restores it.

Example ``i`` is ``(row i of rows, extra)``: ``rows`` dense or CSR (see
:mod:`perceptrons._kernels._rows`), ``extra`` a constant last feature (0 for none),
whose weight is ``weights[-1]``. The caller checks the inputs, shuffles the active
prefix of ``order`` before each pass (:func:`shuffle_prefix`: liblinear's random
permutation, from a generator state the caller seeds) and owns the stopping rule.

C.-J. Hsieh, K.-W. Chang, C.-J. Lin, S. S. Keerthi and S. Sundararajan, "A dual
coordinate descent method for large-scale linear SVM", ICML 2008.
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels._rows import add, dot

# liblinear's threshold under which a projected gradient is treated as zero (no step).
_NO_STEP = 1.0e-12


@register_jitable
def _splitmix64(state):
    """The next 64 random bits of the splitmix64 generator (Steele, Lea & Flood 2014)
    whose state is ``state[0]`` (uint64), advanced in place."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@cached_njit(nogil=True)
def shuffle_prefix(order, n, state):
    """Shuffle ``order[:n]`` in place, as liblinear does before each pass (each
    position swapped with a later one, or itself, drawn uniformly), from the generator
    state ``state`` (a uint64 array of one element, advanced in place). In the kernel
    rather than with NumPy's generator: a tenth of the time, which on a large problem
    was a fifth of the pass's."""
    for i in range(n - 1):
        j = i + np.int64(_splitmix64(state) % np.uint64(n - i))
        order[i], order[j] = order[j], order[i]


@cached_njit(nogil=True)
def hinge_dual_pass(rows, signs, extra, diag, C, alpha, weights, order, n_active, bounds):
    """One pass over the active examples ``order[:n_active]``, in that order.

    ``signs`` are the labels as ±1.0, ``diag`` the ``Q_ii = ||x_i||² + extra²``,
    ``alpha`` the dual variables and ``weights`` (``n_features + 1``) their primal
    weights, both updated in place; ``bounds`` holds the largest and the smallest
    projected gradient of the last pass (``inf`` and ``-inf``: shrink nothing).
    Shrunk examples are swapped to the end of the active prefix.

    Returns ``(n_active, largest, smallest)``: the new size of the active prefix and
    the extreme projected gradients of this pass (``-inf`` and ``inf`` if none was
    seen), whose difference is the stopping criterion. Allocates nothing but an empty
    averaging array, once.
    """
    largest_before, smallest_before = bounds[0], bounds[1]
    largest, smallest = -np.inf, np.inf
    last = weights.shape[0] - 1
    no_average = np.empty(0, dtype=weights.dtype)
    s = 0
    while s < n_active:
        i = order[s]
        gradient = signs[i] * (dot(rows, i, weights, 0.0) + extra * weights[last]) - 1.0
        projected = 0.0
        if alpha[i] == 0.0:
            if gradient > largest_before:  # pushed below 0 again: shrink
                n_active -= 1
                order[s], order[n_active] = order[n_active], order[s]
                continue
            if gradient < 0.0:
                projected = gradient
        elif alpha[i] == C:
            if gradient < smallest_before:  # pushed above C again: shrink
                n_active -= 1
                order[s], order[n_active] = order[n_active], order[s]
                continue
            if gradient > 0.0:
                projected = gradient
        else:
            projected = gradient
        largest = max(largest, projected)
        smallest = min(smallest, projected)
        if abs(projected) > _NO_STEP:
            before = alpha[i]
            if diag[i] > 0.0:
                alpha[i] = min(max(before - gradient / diag[i], 0.0), C)
            else:  # x_i = 0: the objective falls linearly in α_i (G = -1), up to C
                alpha[i] = C if gradient < 0.0 else 0.0
            step = (alpha[i] - before) * signs[i]
            add(rows, i, step, weights, no_average, 0.0)
            weights[last] += step * extra
        s += 1
    return n_active, largest, smallest
