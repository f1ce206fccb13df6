"""Compiled feature extraction for the sequence tagger: template fingerprints to columns.

The Python side (:mod:`perceptrons.sequence_features`) reduces every token to a few
integers: ``rows[t, k]`` is the row, in the table of distinct strings ``values``, of
token ``t``'s column ``k`` (0 the word, ``k >= 1`` the extra column ``ck``), and
``values[r, a]`` is the 64-bit fingerprint of attribute ``a`` (the word itself, its
lower case, a suffix, ...) of that string. These kernels then combine, for every token
and template, the fingerprints of the (column, attribute, offset) items the template
names into the template's fingerprint, with no Python per token.

``templates`` is the tuple ``(template_fp, item_ptr, item_column, item_attribute,
item_offset)``: template ``j`` starts from ``template_fp[j]`` (uint64, the template's
identity) and folds in its items ``item_ptr[j]:item_ptr[j + 1]``; an item whose
position falls before the sentence gives ``edge_values[0]`` (BOS), after it
``edge_values[1]`` (EOS).

A template of one item (``lower[-1]``) has a column that depends only on the row of the
string at one position, and one of no item (``bias``) a constant column: the caller
keeps their columns by row (``singles``, see :func:`single_columns`, filled once per
distinct string), so that per token only the conjunctions are fingerprinted and looked
up.

The caller checks every index these kernels read (``rows`` within ``values``, items'
columns and attributes within the arrays' widths); they only write into arrays the
caller allocated (and :func:`columns` into one scratch row of its own per call).
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels._cache import cached_njit

# SplitMix64's finalizer (Steele et al. 2014): a bijection of uint64 whose every output
# bit depends on every input bit, so fingerprints can be bucketed by their low bits.
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)


@register_jitable(inline="always")
def mix64(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@register_jitable(inline="always")
def combine(h, v):
    """The fingerprint after folding the value ``v`` into ``h`` (order matters)."""
    return mix64(h * _GOLDEN + v)


@register_jitable(inline="always")
def _fingerprint(rows, values, templates, edge_values, start, end, t, j):
    template_fp, item_ptr, item_column, item_attribute, item_offset = templates
    h = template_fp[j]
    for k in range(item_ptr[j], item_ptr[j + 1]):
        p = t + item_offset[k]
        if p < start:
            v = edge_values[0]
        elif p >= end:
            v = edge_values[1]
        else:
            v = values[rows[p, item_column[k]], item_attribute[k]]
        h = combine(h, v)
    return h


@cached_njit(nogil=True)
def fingerprints(offsets, rows, values, templates, edge_values, out):
    """Write into ``out[t, j]`` (uint64, shape ``(n_tokens, n_templates)``) the
    fingerprint of template ``j`` at token ``t``."""
    n_templates = templates[0].shape[0]
    for s in range(offsets.shape[0] - 1):
        start, end = offsets[s], offsets[s + 1]
        for t in range(start, end):
            for j in range(n_templates):
                out[t, j] = _fingerprint(rows, values, templates, edge_values, start, end, t, j)


@cached_njit(nogil=True)
def build_table(keys, slots):
    """Fill the open-addressing table ``slots`` (uint64, shape ``(capacity, 2)``, all
    zero, capacity a power of two above ``len(keys)``) with ``keys[i] -> i``: a slot
    holds a key and its column plus one (0: free), side by side so that a lookup reads
    one cache line."""
    mask = np.uint64(slots.shape[0] - 1)
    for i in range(keys.shape[0]):
        slot = keys[i] & mask
        while slots[slot, 1] != 0:
            slot = (slot + np.uint64(1)) & mask
        slots[slot, 0] = keys[i]
        slots[slot, 1] = np.uint64(i + 1)


@register_jitable(inline="always")
def _lookup(key, slots):
    """The column of ``key`` in the table, or -1."""
    mask = np.uint64(slots.shape[0] - 1)
    slot = key & mask
    while True:
        stored = slots[slot, 1]
        if stored == 0:
            return -1
        if slots[slot, 0] == key:
            return np.int64(stored) - 1
        slot = (slot + np.uint64(1)) & mask


@register_jitable(inline="always")
def _column(h, slots, n_features):
    """The column of fingerprint ``h``: hashed (``n_features > 0``) or from the
    vocabulary table (-1: not in it)."""
    if n_features > 0:
        return np.int64(h % np.uint64(n_features))
    return _lookup(h, slots)


@cached_njit(nogil=True)
def single_columns(values, templates, slots, n_features, out):
    """Write into ``out[r, j]`` (int64, shape ``(len(values), n_templates)``) the column
    (-1: none) of template ``j`` when its item reads row ``r`` of ``values``, for the
    templates of at most one item; the other templates' entries are left alone.
    (The rows ``[BOS] * width`` and ``[EOS] * width`` give the columns outside the
    sentence.)"""
    template_fp, item_ptr, _, item_attribute, _ = templates
    for j in range(template_fp.shape[0]):
        first, n_items = item_ptr[j], item_ptr[j + 1] - item_ptr[j]
        if n_items > 1:
            continue
        for r in range(values.shape[0]):
            h = template_fp[j]
            if n_items == 1:
                h = combine(h, values[r, item_attribute[first]])
            out[r, j] = _column(h, slots, n_features)


@cached_njit(nogil=True)
def columns(
    offsets, rows, values, templates, edge_values, singles, slots, n_features, indptr, indices
):
    """The feature columns of every token, in template order; returns their number.

    ``n_features > 0``: hashing, the column of a fingerprint is ``fingerprint %
    n_features``. Otherwise the vocabulary table ``slots`` (see :func:`build_table`)
    gives it, and a fingerprint not in it is dropped. Templates of at most one item
    read their column from ``singles`` (int64, shape ``(2 + len(values),
    n_templates)``: row 0 outside the sentence before it, row 1 after it, row ``2 + r``
    for row ``r`` of ``values``). Writes ``indptr`` (int64, ``n_tokens + 1``) and
    ``indices[:nnz]`` (int64, room for ``n_tokens * n_templates``).
    """
    template_fp, item_ptr, item_column, _, item_offset = templates
    n_templates = template_fp.shape[0]
    # A token's fingerprints first, then their lookups: independent lookups in one loop
    # overlap their cache misses (interleaved with the hashing they run twice as slow).
    buffer = np.empty(n_templates, dtype=np.uint64)
    nnz = 0
    indptr[0] = 0
    for s in range(offsets.shape[0] - 1):
        start, end = offsets[s], offsets[s + 1]
        for t in range(start, end):
            for j in range(n_templates):
                if item_ptr[j + 1] - item_ptr[j] > 1:
                    buffer[j] = _fingerprint(rows, values, templates, edge_values, start, end, t, j)
            for j in range(n_templates):
                first, n_items = item_ptr[j], item_ptr[j + 1] - item_ptr[j]
                if n_items > 1:
                    column = _column(buffer[j], slots, n_features)
                elif n_items == 0:
                    column = singles[0, j]
                else:
                    p = t + item_offset[first]
                    if p < start:
                        column = singles[0, j]
                    elif p >= end:
                        column = singles[1, j]
                    else:
                        column = singles[2 + rows[p, item_column[first]], j]
                if column >= 0:
                    indices[nnz] = column
                    nnz += 1
            indptr[t + 1] = nnz
    return nnz
