"""The finiteness check the training loops run after every epoch (and every chunk)."""

from perceptrons._kernels._cache import cached_njit


# reassoc lets LLVM vectorize the sum; without nnan/ninf it may not assume the values
# finite, so ``x * 0.0`` stays NaN for an inf or a NaN and NaN survives any reordering.
@cached_njit(nogil=True, fastmath={"reassoc", "nsz"})
def all_finite(flat):
    """Whether every element of the 1-D float array ``flat`` is finite: one vectorized
    pass on one core (``Σ x * 0`` is 0 unless some ``x`` is inf or NaN). BLAS's ``x·x``,
    used before, is faster on two cores but starts OpenBLAS's threads, which then
    compete with training."""
    total = 0.0
    for i in range(flat.shape[0]):
        total += flat[i] * 0.0
    return total == 0.0


@cached_njit(nogil=True)
def largest_magnitude(flat):
    """``max |x|`` over the 1-D float array ``flat`` (0 when empty), in one pass without
    a temporary array: the range of a training input, which the published model must
    score finitely (:func:`perceptrons._validation.check_linear_model`)."""
    largest = 0.0
    for i in range(flat.shape[0]):
        magnitude = abs(flat[i])
        if magnitude > largest:
            largest = magnitude
    return largest
