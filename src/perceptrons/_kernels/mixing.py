"""The compiled piece of parameter mixing: which weight rows a shard's epoch changed.

An epoch of a linear model changes only the weight rows of the features of the examples
it updated on (plus the intercept row), so a shard sends back those rows rather than its
whole weight matrix. :func:`rows_of_examples` lists them from the examples, in
O(nnz of those examples), without scanning the weights.
"""

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def rows_of_examples(rows, examples, marks, out):
    """Write to ``out`` the distinct feature rows of the examples ``examples`` (indices
    into ``rows``, dense or the CSR triple), then the intercept row ``marks.shape[0] - 1``
    when there is any example; return how many were written (in no particular order).

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
    if examples.shape[0] != 0:
        out[n_out] = marks.shape[0] - 1
        n_out += 1
    for k in range(n_out):
        marks[out[k]] = 0
    return n_out


def sorted_rows_of_examples(rows, examples: np.ndarray, marks: np.ndarray) -> np.ndarray:
    """:func:`rows_of_examples` as a new sorted int64 array (plain Python)."""
    out = np.empty(marks.shape[0], dtype=np.int64)
    n = rows_of_examples(rows, np.ascontiguousarray(examples, dtype=np.int64), marks, out)
    return np.sort(out[:n])
