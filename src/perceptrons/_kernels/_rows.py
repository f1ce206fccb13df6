"""The per-example pieces every epoch kernel is made of, for both input layouts.

``rows`` is either a 2-D float array (dense input, C or F order) or the CSR triple
``(data, indices, indptr)``. Each piece branches on the layout with ``isinstance``, which
Numba resolves when it compiles: a kernel compiled for dense input holds only the dense
walk, one compiled for CSR only the CSR walk, so one kernel body serves both.

The two walks of each piece are the documented dense/CSR pair. The dense walk visits
every column (skipping zeros where it writes), the CSR walk the stored nonzeros in their
order. For canonical CSR (sorted indices) both add the same products in the same order,
so dense and CSR input train bit-identical models.

``weights`` and ``aux`` follow the kernels' layout (one row per feature, the intercept
last, see :mod:`perceptrons._kernels.perceptron`); the pieces touch feature rows only.
``aux`` is the averaging trick's auxiliary array, or empty for a model that is not
averaged: every change ``c`` written to ``weights`` is written as ``aux_factor * c`` to
``aux``. Nothing here allocates.

Non-finite scores
-----------------
Every training kernel checks each score it computes (``finite_scores``, O(classes) per
example: the cost of reading the scores once), and the rules that step by ``||x||²``
(passive-aggressive, ROMMA) that squared norm, ``x``'s score against itself. Finite
weights and finite features can still give an infinite or NaN score (``1e308 * 2``,
``inf - inf``), and then every comparison the update rules make is meaningless (a NaN
score is never a mistake). So on the first non-finite score a kernel stops and returns
:data:`NON_FINITE_SCORE` as its statistic (mistakes, updates or loss, otherwise never
negative), leaving the state unfinished (a lazy scale not written back): the caller
raises (:func:`perceptrons._engine.check_statistic`) and discards the model.

Non-finite steps
----------------
The kernels are compiled with NumPy's error model (``error_model="numpy"``, see
:data:`TRAINING`): a float division by zero gives inf or NaN, as NumPy's does, rather
than raising Python's ``ZeroDivisionError`` out of the compiled code. A rule's
arithmetic can overflow or divide by zero with finite, accepted inputs (a constant near
the ends of the float range, features of 1e-170 whose squares underflow to 0, a sample
weight of 1e300), and then the step of an update is inf or NaN; so each rule checks the
coefficients of every update it makes (O(1) per update; AdaGrad's every change, as it
divides per coordinate) and on the first that is not finite stops and returns
:data:`NON_FINITE_STEP`, as for a score. The caller names the rule and its constants.
What a coordinate's own division leaves non-finite (a statistic of SOP's or of a
diagonal covariance) is found by the check of the whole state after the epoch.
"""

import math

import numpy as np
from numba.extending import register_jitable

# The pieces are compiled into each kernel that calls them (no dispatcher or cache files
# of their own, which keeps cold compilation short). Numba's own cache of a kernel would
# not notice an edit here; the kernels' cache (perceptrons._kernels._cache) is stamped
# with this module too, so an edit recompiles the kernels of every module importing it.
_jit = register_jitable

#: The statistic a training kernel returns when it met a non-finite score (see above).
NON_FINITE_SCORE = -1
#: The statistic a training kernel returns when an update's step was not finite.
NON_FINITE_STEP = -2

#: The options of every training kernel (see "Non-finite steps" above).
TRAINING = {"nogil": True, "error_model": "numpy"}


@_jit
def finite_scores(scores):
    """Whether every element of the 1-D ``scores`` is finite."""
    for k in range(scores.shape[0]):
        if not np.isfinite(scores[k]):
            return False
    return True


@_jit
def shrink(value, amount):
    """``sign(value) max(0, |value| - amount)``, the L1 penalty's proximal step (the soft
    threshold); +0.0 where it clips, so that a zeroed weight leaves no negative zero
    (which a model file would keep as a used row)."""
    # Without a branch on the sign (a weight's sign is a coin flip to the branch
    # predictor): |v| - a is v - a or -(v + a) exactly; adding +0.0 turns the -0.0 that
    # copysign gives a clipped negative weight into +0.0.
    return math.copysign(max(abs(value) - amount, 0.0), value) + 0.0


@_jit
def dot(rows, i, weights, total):
    """``total + Σ_j x_ij weights[j]``, added in column order (1-D ``weights``)."""
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            total += data[p] * weights[indices[p]]
    else:
        for j in range(rows.shape[1]):
            total += rows[i, j] * weights[j]
    return total


@_jit
def sq_norm(rows, i, total):
    """``total + ||x_i||²``."""
    if isinstance(rows, tuple):
        data, _, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            total += data[p] * data[p]
    else:
        for j in range(rows.shape[1]):
            total += rows[i, j] * rows[i, j]
    return total


@_jit
def add(rows, i, step, weights, aux, aux_factor):
    """``weights += step * x_i`` (1-D ``weights``), tracked in ``aux``."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        # One loop per case rather than a branch per nonzero.
        if averaged:
            for p in range(indptr[i], indptr[i + 1]):
                change = step * data[p]
                weights[indices[p]] += change
                aux[indices[p]] += aux_factor * change
        else:
            for p in range(indptr[i], indptr[i + 1]):
                weights[indices[p]] += step * data[p]
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                change = step * value
                weights[j] += change
                if averaged:
                    aux[j] += aux_factor * change


@_jit
def add_scores(rows, i, weights, scores):
    """``scores[k] += Σ_j x_ij weights[j, k]`` for every class ``k``."""
    n_classes = scores.shape[0]
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            value, row = data[p], indices[p]
            for k in range(n_classes):
                scores[k] += value * weights[row, k]
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                for k in range(n_classes):
                    scores[k] += value * weights[j, k]


@_jit
def move(rows, i, step, gold, other, weights, aux, aux_factor):
    """``weights[:, gold] += step * x_i`` and ``weights[:, other] -= step * x_i``: the
    multiclass perceptron's update, two columns whatever the number of classes."""
    averaged = aux.shape[0] != 0
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        if averaged:
            for p in range(indptr[i], indptr[i + 1]):
                change, row = step * data[p], indices[p]
                weights[row, gold] += change
                weights[row, other] -= change
                aux[row, gold] += aux_factor * change
                aux[row, other] -= aux_factor * change
        else:
            for p in range(indptr[i], indptr[i + 1]):
                change, row = step * data[p], indices[p]
                weights[row, gold] += change
                weights[row, other] -= change
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                change = step * value
                weights[j, gold] += change
                weights[j, other] -= change
                if averaged:
                    aux[j, gold] += aux_factor * change
                    aux[j, other] -= aux_factor * change


@_jit
def add_columns(rows, i, steps, weights, aux, aux_factor):
    """``weights[:, k] += steps[k] * x_i`` for every class ``k`` (softmax's update)."""
    averaged, n_classes = aux.shape[0] != 0, steps.shape[0]
    if isinstance(rows, tuple):
        data, indices, indptr = rows
        for p in range(indptr[i], indptr[i + 1]):
            value, row = data[p], indices[p]
            for k in range(n_classes):
                change = steps[k] * value
                weights[row, k] += change
                if averaged:
                    aux[row, k] += aux_factor * change
    else:
        for j in range(rows.shape[1]):
            value = rows[i, j]
            if value != 0.0:
                for k in range(n_classes):
                    change = steps[k] * value
                    weights[j, k] += change
                    if averaged:
                        aux[j, k] += aux_factor * change
