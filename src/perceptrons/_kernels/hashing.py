"""Vowpal Wabbit and feature:count text to hashed CSR arrays: the compiled reader
behind the streamed text path (:func:`perceptrons.io.stream.fit_stream` with a hashing
``TextFeaturizer(tokenizer="pairs")``).

:func:`parse_pairs` reads a block of whole lines of raw bytes (a ``uint8`` array) and
does in one pass what the reference path does in three: the line rules of
``perceptrons.io.formats._weighted._parse_vw`` / ``_parse_counts`` (which only decide
*whether* it can go on), the featurizer's lowercasing, and scikit-learn's
``FeatureHasher`` (the column of a name is
``|murmurhash3_x86_32(name, seed=0)| % n_features``, a zero value is dropped, values are
left in token order for the caller to sum exactly as scipy does).  It only writes into
arrays allocated by the caller, and checks every write against their length first.

It gives up (``FALLBACK``) on anything it cannot do exactly, for the caller to read the
block with the reference (Python) reader, which words the error of a bad line: a bad
line, a number not in ``fast_float``'s exact fast path, a non-finite scaled value, a
byte outside ASCII (Unicode whitespace and case rules are Python's), a ``counts``
name holding ``|`` (hashed names are joined by ``|``), a block without rows.

The names of the hashed columns (``names=True``) are kept in a table of every name seen
so far (open addressing on the name's hash; the bytes compared): each name not in it is
added and recorded, so the caller learns the *new* names of a block, few after the first
blocks. ``names=False`` (a featurizer that keeps no names, a transform) leaves the table
alone.

Each row without a repeated column (of at most ``_SORT_MAX`` values) leaves sorted by
column; ``state[SORTED]`` says whether every row did, so that scipy need sort and sum
only the rows with a repeat (their sums in scipy's order, bit for bit).

Over 600 lines: one compiled reader: the line rules, the lowercasing and MurmurHash3 are
helpers Numba inlines into its one loop, which is why they sit beside it.
"""

import warnings

import numpy as np
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import register_jitable

from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.parse import fast_float

# parse_pairs inlines _add_name and murmurhash3_32 at both places it appends a value,
# which trips a pedantic self-check of Numba's SSA pass ("variable ... is not in
# scope", an internal assumption, not an error in the code: the tests check the kernel
# against the reference) printed when the kernel compiles. Only that check is silenced.
warnings.filterwarnings("ignore", category=NumbaIRAssumptionWarning, module=r"numba\.core\.ssa")

# Return codes.
OK = 0
FALLBACK = 1  # read this block with the reference reader
NO_ROOM = 2  # an output array or the name table is full: roll back, grow, call again

# state[...] slots, written by parse_pairs.
ROWS = 0
NNZ = 1
RECORDS = 2  # names added to the table by this block
WEIGHTED = 3  # some row gave an importance (vw)
LINE = 4  # the line the kernel stopped at (FALLBACK, NO_ROOM)
# Every row's columns strictly ascending (no repeat): the matrix is canonical. Either
# way, each row without a repeat (of at most _SORT_MAX values) is sorted.
SORTED = 5
STATE_SIZE = 6
_SORT_MAX = 64  # a row of more values, not in order already, is left to scipy

# Columns of the name table's slots (an int64 array of shape (capacity, 6)): the name's
# hash, column, bytes in the store, and its first 16 bytes packed (zeros after the end)
# so that looking up a short name reads only its slot.
HASH, COLUMN, OFFSET, LENGTH, HEAD0, HEAD1 = 0, 1, 2, 3, 4, 5
SLOT_WIDTH = 6
_PACKED = 16  # bytes of a name kept in its slot
EMPTY = -2  # COLUMN of a free slot
REMOVED = -1  # COLUMN of a slot whose name was rolled back (probing goes past it)
# meta[...] slots of the table.
STORE_USED = 0
ENTRIES = 1  # slots used, removed ones included
META_SIZE = 2

_LF, _PIPE, _COLON, _QUOTE, _CARET, _HASH, _DOT = 10, 124, 58, 39, 94, 35, 46
_MASK32 = 0xFFFFFFFF
_INT32_MIN = -(2**31)

# Python's str.isspace() for ASCII: what str.split() splits on inside a line.
_WS = np.zeros(128, dtype=np.bool_)
_WS[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
ASCII_WHITESPACE = _WS  # the same table, for the text tokenizer (perceptrons._kernels.tokens)
_LABEL_MARK = np.frombuffer(b"#label#:", dtype=np.uint8).copy()
# A byte's class in a vw line, one table look-up per byte: the bytes of a name or a
# value (_NAME), the colon ending a name, Python's ASCII whitespace, the bar between
# segments, the end of the line, a byte outside ASCII (a FALLBACK).
_NAME, _C_COLON, _C_SPACE, _C_PIPE, _C_LF, _C_HIGH = 0, 1, 2, 3, 4, 5
_CLASS = np.full(256, _C_HIGH, dtype=np.uint8)
_CLASS[:128] = _NAME
_CLASS[:128][_WS] = _C_SPACE
_CLASS[_COLON] = _C_COLON
_CLASS[_PIPE] = _C_PIPE
_CLASS[_LF] = _C_LF
_POWERS = np.array([float(10**k) for k in range(16)])  # exact doubles


@register_jitable(inline="always")
def _rotl32(x, r):
    return ((x << r) | (x >> (32 - r))) & _MASK32


@register_jitable(inline="always")
def _murmur_block(h, k):
    """MurmurHash3_x86_32's state ``h`` after the 4-byte block ``k`` (int64 arithmetic,
    masked to 32 bits: products wrap modulo 2**64, their low 32 bits exact)."""
    k = (k * 0xCC9E2D51) & _MASK32
    k = _rotl32(k, 15)
    k = (k * 0x1B873593) & _MASK32
    h ^= k
    h = _rotl32(h, 13)
    return (h * 5 + 0xE6546B64) & _MASK32


@register_jitable(inline="always")
def _murmur_finish(h, k, n):
    """The hash of ``n`` bytes from the state ``h`` after their whole blocks and ``k``
    the last ``n % 4`` bytes (little-endian), as a signed 32-bit value."""
    if n & 3:
        k = (k * 0xCC9E2D51) & _MASK32
        k = _rotl32(k, 15)
        k = (k * 0x1B873593) & _MASK32
        h ^= k
    h ^= n & _MASK32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    h ^= h >> 16
    return h - (1 << 32) if h >= (1 << 31) else h


@register_jitable(inline="always")
def murmurhash3_32(buf, start, stop, seed):
    """MurmurHash3_x86_32 of ``buf[start:stop]``, as a signed 32-bit value: what
    ``sklearn.utils.murmurhash3_32(bytes, seed)`` gives."""
    h = seed & _MASK32
    n = stop - start
    body = start + (n // 4) * 4
    p = start
    while p < body:
        k = (
            np.int64(buf[p])
            | (np.int64(buf[p + 1]) << 8)
            | (np.int64(buf[p + 2]) << 16)
            | (np.int64(buf[p + 3]) << 24)
        )
        h = _murmur_block(h, k)
        p += 4
    k = np.int64(0)
    for i in range(stop - body):
        k |= np.int64(buf[body + i]) << (8 * i)
    return _murmur_finish(h, k, n)


@cached_njit(nogil=True)
def murmurhash3_bytes(buf, seed):
    """:func:`murmurhash3_32` of a whole ``uint8`` array (for tests and callers)."""
    return murmurhash3_32(buf, 0, buf.shape[0], seed)


@register_jitable(inline="always")
def hashed_column(h, n_features):
    """``FeatureHasher``'s column of a signed 32-bit hash: ``abs(h) % n_features``, with
    ``abs(-2**31)`` taken as ``2**31`` (scikit-learn's special case)."""
    if h == _INT32_MIN:
        return (2147483647 - (n_features - 1)) % n_features
    if n_features & (n_features - 1) == 0:  # a power of two: a mask, not a division
        return abs(h) & (n_features - 1)
    return abs(h) % n_features


@register_jitable(inline="always")
def _lower(c, lowercase):
    if lowercase and 65 <= c <= 90:
        return c + 32
    return c


@register_jitable(inline="always")
def _add_name(scratch, length, h, column, slots, store, meta, records, state):
    """The table's slot of ``scratch[:length]``, added (and recorded) if new; -1 when
    the table, the store or ``records`` is full."""
    mask = slots.shape[0] - 1
    head0 = np.int64(0)
    head1 = np.int64(0)
    for j in range(min(length, 8)):
        head0 |= np.int64(scratch[j]) << (8 * j)
    for j in range(8, min(length, _PACKED)):
        head1 |= np.int64(scratch[j]) << (8 * (j - 8))
    i = h & mask
    while True:
        col = slots[i, COLUMN]
        if col == EMPTY:
            break
        if (
            col >= 0
            and slots[i, HASH] == h
            and slots[i, LENGTH] == length
            and slots[i, HEAD0] == head0
            and slots[i, HEAD1] == head1
        ):
            offset = slots[i, OFFSET]
            same = True
            for j in range(_PACKED, length):
                if store[offset + j] != scratch[j]:
                    same = False
                    break
            if same:
                return i
        i = (i + 1) & mask
    used = meta[STORE_USED]
    n_records = state[RECORDS]
    if (
        2 * (meta[ENTRIES] + 1) > slots.shape[0]
        or used + length > store.shape[0]
        or n_records >= records.shape[0]
    ):
        return -1
    store[used : used + length] = scratch[:length]
    slots[i, HASH] = h
    slots[i, COLUMN] = column
    slots[i, OFFSET] = used
    slots[i, LENGTH] = length
    slots[i, HEAD0] = head0
    slots[i, HEAD1] = head1
    meta[STORE_USED] = used + length
    meta[ENTRIES] += 1
    records[n_records] = i
    state[RECORDS] = n_records + 1
    return i


@register_jitable
def _sort_row(indices, data, start, stop, sort_columns, sort_values, ranks):
    """Sort the row ``indices[start:stop]`` (and its ``data``) by column when no column
    repeats, and say whether it did; a row with a repeat (or too long to sort here) is
    left as it is, its sum for scipy to do in scipy's order.

    A rank sort: each column's place is the number of columns below it, counted by
    comparing it with all the row's columns (loops without a branch to mispredict,
    which the compiler vectorizes; an insertion sort spent most of its time in the
    mispredicted end of each insertion). The row is written back only once known to
    have no repeat."""
    n = stop - start
    ascending = True
    for k in range(start + 1, stop):
        if indices[k] <= indices[k - 1]:
            ascending = False
            break
    if ascending:
        return True
    if n > sort_columns.shape[0] or n > sort_values.shape[0] or n > ranks.shape[0]:
        return False
    for k in range(n):
        sort_columns[k] = indices[start + k]
        sort_values[k] = data[start + k]
    total = 0
    for i in range(n):
        column = sort_columns[i]
        below = 0
        for j in range(n):
            below += np.int32(sort_columns[j] < column)
        ranks[i] = below
        total += below
    # The ranks are 0..n-1 (summing to n(n-1)/2) when no column repeats; a repeated
    # column's later copies have fewer columns below them than their place: less.
    if total != n * (n - 1) // 2:
        return False  # a repeat: the row is left untouched
    for i in range(n):
        indices[start + ranks[i]] = sort_columns[i]
        data[start + ranks[i]] = sort_values[i]
    return True


@cached_njit(nogil=True)
def parse_pairs(buf, vw, lowercase, n_features, names, out, table, state):
    """Parse every line of ``buf`` (whole lines; the last may lack ``\\n``).

    Parameters
    ----------
    buf : ndarray of uint8
        The block's bytes.
    vw : bool
        Vowpal Wabbit lines (else Blitzer et al.'s ``feature:count ... #label#:L``, a
        negative count a ``FALLBACK``).
    lowercase : bool
        Lowercase the names (ASCII; other bytes are a ``FALLBACK``).
    n_features : int
        Hashed columns, in ``[1, 2**31 - 2]``.
    names : bool
        Keep the names in ``table`` and record the new ones (else ``table`` is left
        alone and ``records`` stays empty).
    out : tuple of arrays
        ``(data float64, indices int32, indptr int64, labels float64, label_spans
        int64 (n, 2), weights float64, records int64, scratch uint8)``: per value its
        column; per row the offsets, the vw label, the byte range of the counts label,
        the vw importance (1.0 when none); the slot of each name added to the table;
        ``scratch`` holds one name (at least a line's length + 2 bytes).
    table : tuple of arrays
        ``(slots int64 (capacity, SLOT_WIDTH), store uint8, meta int64)``: the name table
        (capacity a power of two, kept at most half full), the names' bytes, the
        table's counts. Updated in place.
    state : ndarray of int64
        Counts (see the slot names above), written.

    Returns
    -------
    int
        ``OK``, ``FALLBACK`` or ``NO_ROOM``.
    """
    data, indices, indptr, labels, label_spans, weights, records, scratch = out
    slots, store, meta = table
    # The shapes every write below relies on (the lengths are checked at each write).
    if state.shape[0] < STATE_SIZE or meta.shape[0] < META_SIZE or indptr.shape[0] < 1:
        raise ValueError("parse_pairs: state, meta or indptr too short")
    if slots.shape[1] < SLOT_WIDTH or label_spans.shape[1] < 2 or n_features < 1:
        raise ValueError("parse_pairs: slots or label_spans too narrow, or n_features < 1")
    if slots.shape[0] < 2 or slots.shape[0] & (slots.shape[0] - 1):
        raise ValueError("parse_pairs: the table's capacity must be a power of two")
    if not 0 <= meta[STORE_USED] <= store.shape[0] or 2 * meta[ENTRIES] > slots.shape[0]:
        raise ValueError("parse_pairs: the table's counts do not fit its arrays")
    # One column and no names (the labels-only pass of stream.scan): no hash needed.
    hashed = n_features > 1 or names
    end = buf.shape[0]
    state[:] = 0
    rows = 0
    nnz = 0
    weighted = 0
    line = 0
    in_order = True  # every row so far sorted without a repeated column
    sort_columns = np.empty(_SORT_MAX, dtype=np.int32)
    sort_values = np.empty(_SORT_MAX, dtype=np.float64)
    ranks = np.empty(_SORT_MAX, dtype=np.int32)
    head_start = np.empty(5, dtype=np.int64)
    head_stop = np.empty(5, dtype=np.int64)
    indptr[0] = 0
    pos = 0
    status = OK
    while pos < end:
        # The line's end, whether it is blank, whether it is ASCII: one pass.
        q = pos
        blank = True
        while q < end:
            kind = _CLASS[buf[q]]
            if kind >= _C_LF:
                break
            blank = blank and kind == _C_SPACE
            q += 1
        line += 1
        if q < end and buf[q] >= 128:
            status = FALLBACK
            break
        if blank:
            pos = q + 1
            continue
        if rows >= labels.shape[0] or rows >= weights.shape[0] or rows >= label_spans.shape[0]:
            status = NO_ROOM
            break
        if rows + 1 >= indptr.shape[0] or q - pos + 2 > scratch.shape[0]:
            status = NO_ROOM
            break
        label = 0.0
        weight = 1.0
        if vw:
            bar = pos
            while bar < q and buf[bar] != _PIPE:
                bar += 1
            if bar == q:
                status = FALLBACK
                break
            # The label section: at most 3 numbers and a tag (else the line is bad).
            n_head = 0
            p = pos
            while p < bar and n_head < 5:
                while p < bar and _WS[buf[p]]:
                    p += 1
                if p == bar:
                    break
                head_start[n_head] = p
                while p < bar and not _WS[buf[p]]:
                    p += 1
                head_stop[n_head] = p
                n_head += 1
            if n_head > 0 and (buf[head_start[n_head - 1]] == _QUOTE or not _WS[buf[bar - 1]]):
                n_head -= 1  # the tag
            if n_head == 0 or n_head > 3:  # no label (required), or not a label section
                status = FALLBACK
                break
            ok = True
            for k in range(n_head):
                simple, number = fast_float(buf, head_start[k], head_stop[k])
                ok = ok and simple
                if k == 0:
                    label = number
                elif k == 1:
                    weight = number
            if not ok or weight < 0:
                status = FALLBACK
                break
            if n_head >= 2:
                weighted = 1
            # The segments between bars, each token read in one pass: its name copied
            # to scratch up to the first colon, then its value; a bar ends the token
            # and the segment.
            p = bar + 1
            while True:
                prefix = 0
                prefix_h = np.int64(0)  # the seed, 0
                prefix_k = np.int64(0)
                scale = 1.0
                if p < q and _CLASS[buf[p]] < _C_SPACE:  # |name[:scale] opens a namespace
                    s = p
                    t = s
                    while t < q and _CLASS[buf[t]] < _C_SPACE:
                        t += 1
                    c = s
                    while c < t and buf[c] != _COLON:
                        c += 1
                    if c == s:
                        ok = False
                        break
                    for i in range(s, c):
                        scratch[prefix] = _lower(buf[i], lowercase)
                        prefix += 1
                    scratch[prefix] = _CARET
                    prefix += 1
                    # The hash's state after the prefix, which each name goes on from.
                    for i in range(prefix):
                        prefix_k |= np.int64(scratch[i]) << (8 * (i & 3))
                        if i & 3 == 3:
                            prefix_h = _murmur_block(prefix_h, prefix_k)
                            prefix_k = np.int64(0)
                    if c < t:
                        ok, scale = fast_float(buf, c + 1, t)
                        if not ok:
                            break
                    p = t
                while True:  # the features
                    while p < q and _CLASS[buf[p]] == _C_SPACE:
                        p += 1
                    if p >= q or buf[p] == _PIPE:
                        break
                    start = p
                    # The name copied and hashed as it is read (the hash's 4-byte
                    # blocks mixed in as they fill).
                    length = prefix
                    h = prefix_h
                    k = prefix_k
                    while p < q and _CLASS[buf[p]] == _NAME:
                        byte = _lower(buf[p], lowercase)
                        scratch[length] = byte
                        k |= np.int64(byte) << (8 * (length & 3))
                        if length & 3 == 3:
                            h = _murmur_block(h, k)
                            k = np.int64(0)
                        length += 1
                        p += 1
                    if p == start:  # an empty name (the token starts with a colon)
                        ok = False
                        break
                    number = 1.0
                    if p < q and buf[p] == _COLON:
                        # The value: up to 15 digits with at most one '.', then the
                        # token's end, inline: the mantissa < 10**15 < 2**53 and at
                        # most 15 decimals, so m / 10**f is the one correctly rounded
                        # division fast_float does (m itself for none). Anything else
                        # goes through fast_float. The same loop as parse_svmlight's,
                        # written out in both: a shared inline helper returning a tuple
                        # made this kernel 11% slower (1.27 -> 1.41 us a row of vw).
                        p += 1
                        value_start = p
                        mantissa = 0
                        digits = 0
                        while p < q and digits < 16 and 48 <= buf[p] <= 57:
                            mantissa = mantissa * 10 + (buf[p] - 48)
                            digits += 1
                            p += 1
                        fraction = 0
                        if p < q and buf[p] == _DOT:
                            p += 1
                            while p < q and digits < 16 and 48 <= buf[p] <= 57:
                                mantissa = mantissa * 10 + (buf[p] - 48)
                                digits += 1
                                fraction += 1
                                p += 1
                        if 0 < digits < 16 and (p == q or _CLASS[buf[p]] >= _C_SPACE):
                            number = mantissa / _POWERS[fraction] if fraction else float(mantissa)
                        else:
                            while p < q and _CLASS[buf[p]] < _C_SPACE:
                                p += 1
                            ok, number = fast_float(buf, value_start, p)
                            if not ok:
                                break
                    value = number * scale
                    if not np.isfinite(value):
                        ok = False
                        break
                    h = _murmur_finish(h, k, length) if hashed else 0
                    column = hashed_column(h, n_features)
                    if (
                        names
                        and _add_name(
                            scratch, length, h & _MASK32, column, slots, store, meta, records, state
                        )
                        < 0
                    ):
                        nnz = -1
                        break
                    if value != 0.0:  # FeatureHasher drops zeros
                        if nnz >= data.shape[0] or nnz >= indices.shape[0]:
                            nnz = -1
                            break
                        data[nnz] = value
                        indices[nnz] = column
                        nnz += 1
                if not ok or nnz < 0 or p >= q:
                    break
                p += 1  # past the bar: the next segment
        else:
            # The label: the last token, "#label#:" and at least one byte.
            le = q
            while le > pos and _WS[buf[le - 1]]:
                le -= 1
            ls = le
            while ls > pos and not _WS[buf[ls - 1]]:
                ls -= 1
            ok = le - ls > 8
            if ok:
                for j in range(8):
                    if buf[ls + j] != _LABEL_MARK[j]:
                        ok = False
            if not ok:
                status = FALLBACK
                break
            label_spans[rows, 0] = ls + 8
            label_spans[rows, 1] = le
            p = pos
            while True:
                while p < ls and _WS[buf[p]]:
                    p += 1
                if p >= ls:
                    break
                start = p
                while p < ls and not _WS[buf[p]]:
                    p += 1
                marked = p - start >= 8
                if marked:
                    for j in range(8):
                        if buf[start + j] != _LABEL_MARK[j]:
                            marked = False
                c = p - 1
                while c >= start and buf[c] != _COLON:
                    c -= 1
                if marked or c <= start:
                    ok = False
                    break
                ok, number = fast_float(buf, c + 1, p)
                if not ok or number < 0.0:  # a negative count: the reference reader words it
                    ok = False
                    break
                length = 0
                for i in range(start, c):
                    if buf[i] == _PIPE:
                        ok = False
                        break
                    scratch[length] = _lower(buf[i], lowercase)
                    length += 1
                if not ok:
                    break
                h = murmurhash3_32(scratch, 0, length, 0) if hashed else 0
                column = hashed_column(h, n_features)
                if (
                    names
                    and _add_name(
                        scratch, length, h & _MASK32, column, slots, store, meta, records, state
                    )
                    < 0
                ):
                    nnz = -1
                    break
                if number != 0.0:
                    if nnz >= data.shape[0] or nnz >= indices.shape[0]:
                        nnz = -1
                        break
                    data[nnz] = number
                    indices[nnz] = column
                    nnz += 1
        if nnz < 0:
            status = NO_ROOM
            break
        if not ok:
            status = FALLBACK
            break
        if not _sort_row(indices, data, indptr[rows], nnz, sort_columns, sort_values, ranks):
            in_order = False
        labels[rows] = label
        weights[rows] = weight
        rows += 1
        indptr[rows] = nnz
        pos = q + 1
    if status == OK and rows == 0:
        status = FALLBACK  # no rows: the reference reader says what it is
    state[ROWS] = rows
    state[NNZ] = max(nnz, 0)
    state[WEIGHTED] = weighted
    state[LINE] = line
    state[SORTED] = in_order
    return status


@cached_njit(nogil=True)
def remove_names(slots, records, n_records):
    """Roll back a block: the names it added are marked removed (still probed past)."""
    if not 0 <= n_records <= records.shape[0]:
        raise ValueError("remove_names: more records than the array holds")
    for k in range(n_records):
        if not 0 <= records[k] < slots.shape[0]:
            raise ValueError("remove_names: a record outside the table")
        slots[records[k], COLUMN] = REMOVED


@cached_njit(nogil=True)
def rehash(slots, new_slots):
    """Move the table's names into ``new_slots`` (all ``EMPTY``, a power of two at
    least twice the names), dropping removed ones. Returns the names moved."""
    names = 0
    for i in range(slots.shape[0]):
        names += slots[i, COLUMN] >= 0
    capacity = new_slots.shape[0]
    if capacity < 2 * names or capacity & (capacity - 1) or new_slots.shape[1] != slots.shape[1]:
        raise ValueError("rehash: new_slots must be a power of two at least twice the names")
    for i in range(capacity):
        if new_slots[i, COLUMN] != EMPTY:
            raise ValueError("rehash: new_slots must be empty")
    mask = capacity - 1
    moved = 0
    for i in range(slots.shape[0]):
        if slots[i, COLUMN] >= 0:
            j = slots[i, HASH] & mask
            while new_slots[j, COLUMN] != EMPTY:
                j = (j + 1) & mask
            new_slots[j, :] = slots[i, :]
            moved += 1
    return moved


@cached_njit(nogil=True)
def hash_names(buf, starts, ends, n_features, columns):
    """``columns[i]``: the column of the name ``buf[starts[i]:ends[i]]`` (its UTF-8
    bytes) among ``n_features``, as ``FeatureHasher(alternate_sign=False)`` hashes it
    (:func:`hashed_column` of the MurmurHash3 with seed 0). The caller checks the
    bounds."""
    for i in range(starts.shape[0]):
        columns[i] = hashed_column(murmurhash3_32(buf, starts[i], ends[i], 0), n_features)
