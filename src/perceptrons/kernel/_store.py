"""The voted perceptron's stores: growable arrays, the support set and what one
training call keeps (see :mod:`perceptrons.voted`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons.kernel._gram import NUMPY, Backend

__all__ = ["NO_WEIGHTS", "BackendRows", "CallState", "Growable", "SupportStore"]

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

    def saved(self, rows: bool = False) -> Callable[[], None]:
        """What puts the array back as it is now: the rows appended later dropped and,
        with ``rows``, the rows it holds as they are (for an array written in place)."""
        size = self.size
        kept = self.view.copy() if rows else None

        def undo() -> None:
            self.size = size
            if kept is not None:
                self._data[:size] = kept

        return undo


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

    def saved(self) -> Callable[[], None]:
        """What puts the store back as it is now: the vectors appended later dropped."""
        size, chunks = self.size, list(self._chunks)
        undo = [store.saved() for store in (self._dense, self._indices) if store is not None]

        def restore() -> None:
            for step in undo:
                step()
            self.size, self._chunks = size, chunks

        return restore

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


class BackendRows:
    """Rows of a backend's 2-D float64 array that grows along its first axis by
    doubling: the support vectors on a device, kept beside the host's store so that
    each block's kernel product finds them there."""

    def __init__(self, backend: Backend, n_columns: int) -> None:
        self.backend = backend
        self._data = backend.zeros((16, n_columns))
        self.size = 0

    def append(self, rows: Any) -> None:
        needed = self.size + rows.shape[0]
        if needed > self._data.shape[0]:
            grown = self.backend.zeros((max(needed, 2 * self._data.shape[0]), self._data.shape[1]))
            grown[: self.size, :] = self._data[: self.size, :]
            self._data = grown
        self._data[self.size : needed, :] = rows
        self.size = needed

    def view(self, start: int = 0) -> Any:
        return self._data[start : self.size, :]


class KernelColumns:
    """Kernel values between a call's examples and its first support vectors, one
    column per support vector, on the call's backend: an ``(n_examples, capacity)``
    buffer filled from the left, its capacity doubling up to ``max_columns``."""

    def __init__(self, backend: Backend, n_rows: int, max_columns: int) -> None:
        self.backend, self.max_columns = backend, max_columns
        self._data = backend.zeros((n_rows, 0))
        self.size = 0

    @property
    def room(self) -> int:
        return self.max_columns - self.size

    def append(self, columns: Any) -> None:
        needed = self.size + columns.shape[1]
        if needed > self._data.shape[1]:
            capacity = min(self.max_columns, max(needed, 2 * self._data.shape[1]))
            grown = self.backend.zeros((self._data.shape[0], capacity))
            grown[:, : self.size] = self._data[:, : self.size]
            self._data = grown
        self._data[:, self.size : needed] = columns
        self.size = needed

    def rows(self, rows: Any) -> Any:
        """The filled columns of ``rows`` (the backend's int64 array)."""
        return self.backend.take_rows(self._data[:, : self.size], rows)


@dataclass
class CallState:
    """What one ``fit`` (over all its epochs) or one ``partial_fit`` call keeps.

    ``example_support`` maps the call's example indices to support ids (-1: none yet);
    ``slack`` is the Δ trick's per-example term (size 0 when ``delta == 0``);
    ``backend`` computes the kernel products: ``data`` is the call's ``X`` there (``X``
    itself on NumPy) and ``support`` the support vectors there (None on NumPy, which
    reads the host's store); ``cache`` holds kernel columns of support vectors over the
    call's examples (None: no cache).
    """

    example_support: np.ndarray
    slack: np.ndarray
    backend: Backend = NUMPY
    data: Any = None
    support: BackendRows | None = None
    cache: KernelColumns | None = None
