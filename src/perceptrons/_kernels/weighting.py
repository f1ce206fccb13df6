"""Row norms of tf-idf features: scikit-learn's ``normalize(X, norm="l2")`` on CSR."""

import math

from perceptrons._kernels._cache import cached_njit


@cached_njit(nogil=True)
def normalize_rows_l2(data, indptr):
    """Divide each CSR row's stored values by the row's Euclidean norm, in place (rows
    of norm 0 stay as they are).

    scikit-learn's ``inplace_csr_row_normalize_l2`` to the bit: the squares summed in
    stored order, one square root, one division per value (no reassociation: Numba's
    default arithmetic). The caller checks ``indptr`` against ``data``.
    """
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            total += data[j] * data[j]
        if total == 0.0:
            continue
        norm = math.sqrt(total)
        for j in range(indptr[i], indptr[i + 1]):
            data[j] /= norm
