"""The voted perceptron's stores: growable arrays, the support set and what one
training call keeps (see :mod:`perceptrons.voted`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["NO_WEIGHTS", "CallState", "Growable", "SupportStore"]

# The kernels' sample weights when every weight is 1.
NO_WEIGHTS = np.empty(0)


class Growable:
    """A 2-D float or int array that grows along its first axis by doubling."""

    def __init__(self, n_columns: int, dtype: Any) -> None:
        self._data = np.zeros((16, n_columns), dtype=dtype)
        self.size = 0

    def append(self, rows: np.ndarray) -> None:
        needed = self.size + rows.shape[0]
        if needed > self._data.shape[0]:
            capacity = max(needed, 2 * self._data.shape[0])
            grown = np.zeros((capacity, *self._data.shape[1:]), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : needed] = rows
        self.size = needed

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.size]


class SupportStore:
    """The support vectors: rows of X (dense or CSR), or training indices (precomputed)."""

    def __init__(self, sparse: bool, n_features: int, precomputed: bool) -> None:
        self.sparse, self.precomputed = sparse, precomputed
        self._dense: Growable | None = (
            None if (sparse or precomputed) else Growable(n_features, np.float64)
        )
        self._indices: Growable | None = Growable(1, np.int64) if precomputed else None
        self._chunks: list[sp.csr_matrix] = []
        self._n_features = n_features
        self.size = 0

    def append(self, rows: Any, indices: np.ndarray) -> None:
        if self.precomputed:
            assert self._indices is not None
            self._indices.append(indices[:, np.newaxis])
        elif self.sparse:
            self._chunks.append(sp.csr_matrix(rows, dtype=np.float64))
        else:
            assert self._dense is not None
            self._dense.append(np.asarray(rows, dtype=np.float64))
        self.size += len(indices)

    def matrix(self, start: int = 0) -> Any:
        """Support vectors ``start:`` as a matrix (or their training indices)."""
        if self.precomputed:
            assert self._indices is not None
            return self._indices.view[start:, 0]
        if not self.sparse:
            assert self._dense is not None
            return self._dense.view[start:]
        if len(self._chunks) > 1:  # consolidate, so later calls slice one matrix
            self._chunks = [sp.vstack(self._chunks, format="csr")]
        if not self._chunks:
            return sp.csr_matrix((0, self._n_features))
        return self._chunks[0][start:]


@dataclass
class CallState:
    """What one ``fit`` (over all its epochs) or one ``partial_fit`` call keeps.

    ``example_support`` maps the call's example indices to support ids (-1: none yet);
    ``slack`` is the Δ trick's per-example term (size 0 when ``delta == 0``);
    ``cache`` holds kernel columns of support vectors over the call's examples.
    """

    example_support: np.ndarray
    slack: np.ndarray
    cache: np.ndarray | None = None
    max_cached: int = 0
