"""Numba-compiled kernels: pure functions over arrays, no Python objects inside."""

from perceptrons._kernels.perceptron import (
    PLAIN_PERCEPTRON,
    binary_epoch_csr,
    binary_epoch_dense,
    multiclass_epoch_csr,
    multiclass_epoch_dense,
    update_rule,
)

__all__ = [
    "PLAIN_PERCEPTRON",
    "binary_epoch_csr",
    "binary_epoch_dense",
    "multiclass_epoch_csr",
    "multiclass_epoch_dense",
    "update_rule",
]
