"""The compiled piece of parameter mixing: which weight rows a shard's epoch changed.

An epoch of a linear model changes only the weight rows of the features of the examples
it updated on (plus the intercept row), so a shard sends back those rows rather than its
whole weight matrix. :func:`rows_of_examples` lists them from the examples, in
O(nnz of those examples), without scanning the weights.
"""

import numpy as np

from perceptrons._kernels._cache import cached_njit

_jit = cached_njit(nogil=True)


@_jit
def rows_of_examples(rows, examples, marks, out, limit, fixed):
    """Write to ``out`` the distinct feature rows of the examples ``examples`` (indices
    into ``rows``, dense or the CSR triple), then the last ``fixed`` rows (the
    intercept's; the sequence tagger's transitions) when there is any example; return
    how many were written (in no particular order), or -1 as soon as there are more
    than ``limit`` (the caller then takes every row).

    ``marks`` (uint8, one per weight row, all 0 on entry) is left all 0 again; ``out``
    must hold ``marks.shape[0]`` entries. The caller checks every index first.
    """
    n_out = 0
    for e in range(examples.shape[0]):
        i = examples[e]
        if isinstance(rows, tuple):
            _, indices, indptr = rows
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                if marks[j] == 0:
                    marks[j] = 1
                    out[n_out] = j
                    n_out += 1
        else:
            for j in range(rows.shape[1]):
                if rows[i, j] != 0.0 and marks[j] == 0:
                    marks[j] = 1
                    out[n_out] = j
                    n_out += 1
        if n_out > limit:
            break
    if examples.shape[0] != 0 and n_out <= limit:
        for r in range(marks.shape[0] - fixed, marks.shape[0]):
            if marks[r] == 0:
                marks[r] = 1
                out[n_out] = r
                n_out += 1
    for k in range(n_out):
        marks[out[k]] = 0
    return n_out if n_out <= limit else -1


def sorted_rows_of_examples(
    rows, examples: np.ndarray, marks: np.ndarray, limit: int | None = None, fixed: int = 1
) -> np.ndarray | None:
    """:func:`rows_of_examples` as a new sorted int64 array (plain Python); None when
    there are more than ``limit``."""
    out = np.empty(marks.shape[0], dtype=np.int64)
    limit = marks.shape[0] if limit is None else int(limit)
    examples = np.ascontiguousarray(examples, dtype=np.int64)
    n = rows_of_examples(rows, examples, marks, out, limit, int(fixed))
    return None if n < 0 else np.sort(out[:n])


@_jit
def union_rows(rows, marks, out, positions):
    """The sorted union of the row indices in ``rows`` (concatenated lists, repeats
    allowed), written to ``out``; ``positions[r]`` becomes the place of row ``r`` in it.
    Returns its length. O(k log k) for k distinct rows, whatever the number of rows.
    ``marks`` (uint8, one per weight row) is all 0 on entry and left so; ``out`` and
    ``positions`` hold one entry per weight row."""
    n = 0
    for k in range(rows.shape[0]):
        r = rows[k]
        if marks[r] == 0:
            marks[r] = 1
            out[n] = r
            n += 1
    out[:n].sort()
    for k in range(n):
        marks[out[k]] = 0
        positions[out[k]] = k
    return n


@_jit
def add_shard(change, sums, weights, union, at, shard_weights, shard_aux, mu, count):
    """Add one shard's epoch to the mix, at the places ``at`` (in ``union``) of its rows:
    ``change += mu * δ`` and, averaged (``sums`` not empty), ``sums += count * δ - A_i``,
    with ``δ = shard_weights - weights[union[at]]`` (2-D arrays: rows × columns)."""
    averaged = sums.shape[0] != 0
    for k in range(at.shape[0]):
        p = at[k]
        r = union[p]
        for c in range(change.shape[1]):
            delta = shard_weights[k, c] - weights[r, c]
            change[p, c] += mu * delta
            if averaged:
                sums[p, c] += count * delta - shard_aux[k, c]


@_jit
def apply_mix(weights, aux, union, change, sums, total):
    """``weights[union] += change`` and, averaged, ``aux[union] += total * change - sums``;
    False (and the state half written, to be discarded) when a value is not finite."""
    averaged = sums.shape[0] != 0
    for p in range(union.shape[0]):
        r = union[p]
        for c in range(change.shape[1]):
            w = weights[r, c] + change[p, c]
            if not np.isfinite(w):
                return False
            weights[r, c] = w
            if averaged:
                a = aux[r, c] + total * change[p, c] - sums[p, c]
                if not np.isfinite(a):
                    return False
                aux[r, c] = a
    return True
