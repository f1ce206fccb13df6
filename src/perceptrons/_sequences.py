"""Featurized sentences and their tags as flat integer arrays (ragged by sentence).

What the sequence tagger's kernels read: no Python object per token. Both classes are
indexed by an array of sentence numbers (``data[rows]``), which is how
:mod:`perceptrons.parallel` deals examples out to shards, and report
``shape[0]`` = the number of sentences.

:class:`TokenFeatures`
    Token ``t`` (numbered over the whole batch) has the feature columns
    ``indices[indptr[t]:indptr[t + 1]]`` (each of value 1; a column may repeat, which
    counts it twice); sentence ``s`` is the tokens ``offsets[s]:offsets[s + 1]``.
:class:`TagCodes`
    The gold tag code of every token, with the same ``offsets``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TagCodes", "TokenFeatures", "ragged_take"]


def ragged_take(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The new offsets of the pieces ``rows`` (in that order) of a ragged array, and the
    positions of their elements in the old one."""
    rows = np.asarray(rows, dtype=np.int64)
    starts, stops = offsets[rows], offsets[rows + 1]
    lengths = stops - starts
    new_offsets = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    # Position k of the result belongs to piece p: starts[p] + (k - new_offsets[p]).
    shift = np.repeat(starts - new_offsets[:-1], lengths)
    return new_offsets, np.arange(new_offsets[-1], dtype=np.int64) + shift


def _check_offsets(offsets: np.ndarray, n_items: int, name: str) -> None:
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets.dtype != np.int64:
        raise ValueError(f"{name} must be a 1-D int64 array with at least one entry")
    if offsets[0] != 0 or offsets[-1] != n_items or np.any(np.diff(offsets) < 0):
        raise ValueError(f"{name} must rise from 0 to {n_items}")


@dataclass(frozen=True)
class TokenFeatures:
    """The feature columns of every token of a batch of sentences (see the module)."""

    offsets: np.ndarray  # int64, (n_sentences + 1,): tokens of each sentence
    indptr: np.ndarray  # int64, (n_tokens + 1,): features of each token
    indices: np.ndarray  # int64, (nnz,): columns in [0, n_features)
    n_features: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.offsets.shape[0] - 1, self.n_features)

    @property
    def n_tokens(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def nbytes(self) -> int:
        return int(self.offsets.nbytes + self.indptr.nbytes + self.indices.nbytes)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray) -> TokenFeatures:
        offsets, tokens = ragged_take(self.offsets, rows)
        indptr, positions = ragged_take(self.indptr, tokens)
        return TokenFeatures(offsets, indptr, self.indices[positions], self.n_features)

    def check(self) -> None:
        """Raise a ValueError unless every offset and column is in range: what the
        compiled kernels, which do no bounds checks, need (O(nnz))."""
        _check_offsets(self.indptr, self.indices.shape[0], "indptr")
        _check_offsets(self.offsets, self.n_tokens, "offsets")
        if self.indices.ndim != 1 or self.indices.dtype != np.int64:
            raise ValueError("indices must be a 1-D int64 array")
        if self.indices.shape[0] and (
            self.indices.min() < 0 or self.indices.max() >= self.n_features
        ):
            raise ValueError(f"feature columns must lie in [0, {self.n_features})")


@dataclass(frozen=True)
class TagCodes:
    """The tag code of every token of a batch of sentences (see the module)."""

    offsets: np.ndarray  # int64, (n_sentences + 1,)
    codes: np.ndarray  # int64, (n_tokens,)

    @property
    def shape(self) -> tuple[int]:
        return (self.offsets.shape[0] - 1,)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray) -> TagCodes:
        offsets, positions = ragged_take(self.offsets, rows)
        return TagCodes(offsets, self.codes[positions])

    def check(self, n_tags: int) -> None:
        """Raise a ValueError unless the offsets rise and every code is a tag's."""
        _check_offsets(self.offsets, self.codes.shape[0], "offsets")
        if self.codes.ndim != 1 or self.codes.dtype != np.int64:
            raise ValueError("tag codes must be a 1-D int64 array")
        if self.codes.shape[0] and (self.codes.min() < 0 or self.codes.max() >= n_tags):
            raise ValueError(f"tag codes must lie in [0, {n_tags})")
