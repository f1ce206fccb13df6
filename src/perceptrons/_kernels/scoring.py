"""Scores of sparse rows under a sparsified model, at the cost of the dense model's."""

from perceptrons._kernels._cache import cached_njit


@cached_njit(nogil=True)
def sparse_rows_times_sparse_weights(
    x_indptr, x_indices, x_data, w_indptr, w_indices, w_data, scores
):
    """``scores += X @ W`` for CSR ``X`` (n_samples x n_features) and CSR ``W``
    (n_features x n_classes: a model's weights by feature), ``scores`` a C-contiguous
    (n_samples, n_classes) float64 array.

    Each score is the sum over the row's nonzeros, in their stored order, of
    ``x_ij * W[j, k]``, the terms and order of scipy's CSR-times-dense product with the
    dense weights; a weight that is not stored is a term ``+-0.0`` there, which changes
    no sum. So the scores equal the dense model's bit for bit, at ``O(nnz(x) * classes)``
    per row, without building a sparse product. The caller checks every index and gives
    ``W`` canonical (sorted, no duplicates).
    """
    n_classes = scores.shape[1]
    for i in range(scores.shape[0]):
        for p in range(x_indptr[i], x_indptr[i + 1]):
            j = x_indices[p]
            x = x_data[p]
            start, end = w_indptr[j], w_indptr[j + 1]
            if end - start == n_classes:
                # A feature with a weight for every class (the common case for the
                # features a text model learned): its classes are 0..n_classes-1 in
                # order (canonical CSR), a contiguous loop the compiler vectorizes.
                for k in range(n_classes):
                    scores[i, k] += x * w_data[start + k]
            else:
                for q in range(start, end):
                    scores[i, w_indices[q]] += x * w_data[q]
