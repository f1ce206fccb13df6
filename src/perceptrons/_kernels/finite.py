"""The finiteness check the training loops run after every epoch (and every chunk)."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def all_finite(flat):
    """Whether every element of the 1-D float array ``flat`` is finite: one pass on one
    core, stopping at the first inf or NaN. (BLAS's ``x·x``, used before, is as fast on
    one core but starts OpenBLAS's threads, which then compete with training.)"""
    for i in range(flat.shape[0]):
        if not np.isfinite(flat[i]):
            return False
    return True
