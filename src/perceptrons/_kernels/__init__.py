"""Numba-compiled kernels: pure functions over arrays, no Python objects inside."""

from perceptrons._kernels.linear import (
    binary_epoch_csr,
    binary_epoch_dense,
    multiclass_epoch_csr,
    multiclass_epoch_dense,
)

__all__ = [
    "binary_epoch_csr",
    "binary_epoch_dense",
    "multiclass_epoch_csr",
    "multiclass_epoch_dense",
]
