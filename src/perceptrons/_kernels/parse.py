"""svmlight text to CSR arrays: the compiled reader behind
:func:`perceptrons.io.formats.read_data` and the streaming reader.

:func:`parse_svmlight` reads lines of raw bytes (a ``uint8`` array) into CSR buffers
allocated by the caller and reused from call to call: feature values, raw feature
indices (as written in the file, no base subtracted), row pointers, labels and each
row's line number. It only writes into those arrays, and checks every write against
their length first: when one is full it stops at the start of the line that does not
fit and says so, and the caller grows the buffers and calls again from there.

What a line must be is the rule of
``perceptrons.io.formats._svmlight_reference._svmlight_line_error`` (scikit-learn's
reader plus finite numbers); the kernel only decides *whether* a line is bad and gives
its number, the caller words the message with that same function.

Numbers are parsed here only when the result is sure to be the float that Python's
``float()`` gives: an optional sign, digits with at most one ``.``, an optional
exponent, whose digits make an integer ``m < 2**53`` and whose value is
``m * 10**e`` with ``|e| <= 22``. ``m`` and ``10**e`` are then exact doubles and one
IEEE multiplication or division rounds correctly (Clinger's fast path). Any other
token (more digits, ``inf``, a malformed token) is left *pending*: its byte range and
destination are recorded and the caller converts it with
:func:`perceptrons._decimal.decimal_number` (ASCII decimal, as C's ``strtod``), which
also decides whether it is a number at all. Indices are ASCII digits with an optional
sign (no ``_``, which Python's ``int()`` would take).
"""

import numpy as np
from numba.extending import register_jitable

from perceptrons._kernels._cache import cached_njit

# state[...] slots, read and written by parse_svmlight (the caller keeps the array).
POS = 0  # next byte to read
LINE = 1  # lines consumed so far (the next line is number LINE + 1)
ROWS = 2  # rows written
NNZ = 3  # values written
PENDING = 4  # pending tokens written
BAD = 5  # bad lines written
STATE_SIZE = 6

# Return codes.
DONE = 0  # max_lines consumed, or no complete line left in buf[pos:end]
FULL = 1  # an output array is full: grow it and call again (state is at a line start)
STOPPED = 2  # stopped after a bad line (stop_at_bad)

INT32_MAX = 2**31 - 1
_MANTISSA_LIMIT = 2**53
_POWERS = np.array([float(10**k) for k in range(23)])  # exact doubles

_SPACE, _TAB, _LF, _VT, _FF, _CR = 32, 9, 10, 11, 12, 13
_HASH, _COLON, _DOT, _PLUS, _MINUS = 35, 58, 46, 43, 45


# Byte classes: token bytes (other, ':'), whitespace as Python's bytes.split() sees it
# (the newline apart: it ends the line), and '#', which ends a line's content.
_C_OTHER, _C_COLON, _C_SPACE, _C_NEWLINE, _C_HASH = 0, 1, 2, 3, 4
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[_SPACE, _TAB, _VT, _FF, _CR]] = _C_SPACE
_CLASS[_LF] = _C_NEWLINE
_CLASS[_HASH] = _C_HASH
_CLASS[_COLON] = _C_COLON


@register_jitable
def _line_end(buf, p, end):
    """The position of the next newline at or after ``p``, or ``end``."""
    while p < end and buf[p] != _LF:
        p += 1
    return p


@register_jitable
def fast_float(buf, start, stop):
    """``(True, float(buf[start:stop]))`` when the token is a simple decimal whose
    correctly rounded value one IEEE operation gives, else ``(False, 0.0)``."""
    p = start
    negative = False
    if p < stop and (buf[p] == _MINUS or buf[p] == _PLUS):
        negative = buf[p] == _MINUS
        p += 1
    mantissa = 0
    digits = 0
    while p < stop and 48 <= buf[p] <= 57:
        mantissa = mantissa * 10 + (buf[p] - 48)
        if mantissa >= _MANTISSA_LIMIT:
            return False, 0.0
        digits += 1
        p += 1
    fraction = 0
    if p < stop and buf[p] == _DOT:
        p += 1
        while p < stop and 48 <= buf[p] <= 57:
            mantissa = mantissa * 10 + (buf[p] - 48)
            if mantissa >= _MANTISSA_LIMIT:
                return False, 0.0
            digits += 1
            fraction += 1
            p += 1
    if digits == 0:
        return False, 0.0
    exponent = 0
    if p < stop and (buf[p] == 101 or buf[p] == 69):  # e, E
        p += 1
        exp_negative = False
        if p < stop and (buf[p] == _MINUS or buf[p] == _PLUS):
            exp_negative = buf[p] == _MINUS
            p += 1
        exp_digits = 0
        while p < stop and 48 <= buf[p] <= 57:
            if exponent < 100_000:  # beyond the fast range either way; no overflow
                exponent = exponent * 10 + (buf[p] - 48)
            exp_digits += 1
            p += 1
        if exp_digits == 0:
            return False, 0.0
        if exp_negative:
            exponent = -exponent
    if p != stop:
        return False, 0.0
    power = exponent - fraction
    if mantissa == 0:
        value = 0.0
    elif 0 <= power <= 22:
        value = mantissa * _POWERS[power]
    elif -22 <= power < 0:
        value = mantissa / _POWERS[-power]
    else:
        return False, 0.0
    return True, -value if negative else value


@register_jitable
def parse_index(buf, start, stop, max_digits):
    """``int(buf[start:stop])`` when it is an integer in ``[0, 2**31 - 1]``, else -1.

    The rule of :func:`perceptrons._decimal.decimal_index`: an optional sign, ASCII
    decimal digits, at most ``max_digits`` of them (``sys.get_int_max_str_digits()``,
    0: no limit), which Python's ``int()`` also enforces.
    """
    p = start
    negative = False
    if p < stop and (buf[p] == _MINUS or buf[p] == _PLUS):
        negative = buf[p] == _MINUS
        p += 1
    value = 0
    digits = 0
    while p < stop:
        c = buf[p]
        if not 48 <= c <= 57:
            return -1
        if value <= INT32_MAX:
            value = value * 10 + (c - 48)
        digits += 1
        p += 1
    if digits == 0 or (max_digits > 0 and digits > max_digits):
        return -1
    if value > INT32_MAX or (negative and value != 0):
        return -1
    return value


@cached_njit(nogil=True)
def parse_svmlight(buf, end, final, max_lines, label_required, stop_at_bad, max_digits, out, state):
    """Parse complete lines of ``buf[state[POS]:end]`` into ``out``.

    Parameters
    ----------
    buf : ndarray of uint8
        The bytes.
    end : int
        Bytes of ``buf`` that hold data.
    final : bool
        ``buf[:end]`` ends the input: a last line without ``\\n`` is complete.
    max_lines : int
        Stop after this many lines (blank and bad lines count).
    label_required : bool
        A line starting with ``index:value`` is bad; else it is read with label 0.
    stop_at_bad : bool
        Return after the first bad line instead of recording it and going on.
    max_digits : int
        Longest integer Python's ``int()`` accepts (0: any).
    out : tuple of arrays
        ``(data float64, indices int32, indptr int64, labels float64, row_lines int64,
        pending int64 (n, 3), bad int64)``, written from the counts in ``state``.
        ``indptr[rows]`` must hold ``nnz`` on entry. A pending row is ``(start, stop,
        slot)``: the token ``buf[start:stop]`` goes to ``data[slot]`` (``slot >= 0``)
        or to ``labels[-slot - 1]``. ``bad`` gets the number of each bad line.
    state : ndarray of int64
        Counts (see the slot names above), updated in place.

    Returns
    -------
    int
        ``DONE``, ``FULL`` or ``STOPPED``.
    """
    data, indices, indptr, labels, row_lines, pending, bad = out
    pos = state[POS]
    line = state[LINE]
    rows = state[ROWS]
    nnz = state[NNZ]
    n_pending = state[PENDING]
    n_bad = state[BAD]
    consumed = 0
    status = DONE
    # One pass over each line's bytes: tokens are parsed as they are scanned, the
    # common shapes (digits:digits) inline, any other token by the general helpers.
    while consumed < max_lines and pos < end:
        lineno = line + 1
        nnz0, pending0 = nnz, n_pending
        p = pos
        while p < end and _CLASS[buf[p]] == _C_SPACE:
            p += 1
        if p == end or _CLASS[buf[p]] >= _C_NEWLINE:  # blank or comment only
            q = _line_end(buf, p, end)
            if q == end and not final:
                break  # an incomplete last line: wait for more bytes
            pos, line, consumed = min(q + 1, end), lineno, consumed + 1
            continue
        ok = True
        full = False
        # The first token: the label, unless it holds a ':' (an index:value).
        start = p
        colon = -1
        while p < end and _CLASS[buf[p]] <= _C_COLON:
            if colon < 0 and buf[p] == _COLON:
                colon = p
            p += 1
        label = 0.0
        if colon >= 0:
            ok = not label_required
            p = start  # the token is the first feature
        else:
            simple, label = fast_float(buf, start, p)
            if not simple:
                if n_pending >= pending.shape[0]:
                    full = True
                else:
                    pending[n_pending, 0] = start
                    pending[n_pending, 1] = p
                    pending[n_pending, 2] = -rows - 1
                    n_pending += 1
        previous = -1
        first = True
        while ok and not full:
            while p < end and _CLASS[buf[p]] == _C_SPACE:
                p += 1
            if p >= end or _CLASS[buf[p]] >= _C_NEWLINE:
                break
            start = p
            # The index: up to 9 digits then ':' inline (below 2**31 for sure).
            index = 0
            digits = 0
            while p < end and digits < 10 and 48 <= buf[p] <= 57:
                index = index * 10 + (buf[p] - 48)
                digits += 1
                p += 1
            if 0 < digits < 10 and p < end and buf[p] == _COLON:
                colon = p
            else:
                p = start
                colon = -1
                while p < end and _CLASS[buf[p]] <= _C_COLON:
                    if colon < 0 and buf[p] == _COLON:
                        colon = p
                    p += 1
                if (
                    first
                    and p - start >= 3
                    and buf[start] == 113  # q
                    and buf[start + 1] == 105  # i
                    and buf[start + 2] == 100  # d
                ):
                    first = False
                    ok = colon >= 0  # qid:N, N unread (as scikit-learn without query_id)
                    continue
                if colon < 0:
                    ok = False
                    break
                index = parse_index(buf, start, colon, max_digits)
                if index < 0:
                    ok = False
                    break
            first = False
            if index <= previous:
                ok = False
                break
            previous = index
            if nnz >= data.shape[0] or nnz >= indices.shape[0]:
                full = True
                break
            # The value: up to 15 digits with at most one '.', then the token's end,
            # inline: m < 10**15 < 2**53 and at most 15 decimals, so m / 10**f is the
            # one correctly rounded division fast_float would do (m * 1 for none).
            # The same loop as hashing.parse_pairs', written out in both (a shared
            # inline helper slowed the vw kernel by 11%).
            p = colon + 1
            start = p
            mantissa = 0
            digits = 0
            while p < end and digits < 16 and 48 <= buf[p] <= 57:
                mantissa = mantissa * 10 + (buf[p] - 48)
                digits += 1
                p += 1
            fraction = 0
            if p < end and buf[p] == _DOT:
                p += 1
                while p < end and digits < 16 and 48 <= buf[p] <= 57:
                    mantissa = mantissa * 10 + (buf[p] - 48)
                    digits += 1
                    fraction += 1
                    p += 1
            if 0 < digits < 16 and (p == end or _CLASS[buf[p]] >= _C_SPACE):
                if fraction == 0:
                    value = float(mantissa)
                else:
                    value = mantissa / _POWERS[fraction]
            else:
                while p < end and _CLASS[buf[p]] <= _C_COLON:
                    p += 1
                simple, value = fast_float(buf, start, p)
                if not simple:
                    if n_pending >= pending.shape[0]:
                        full = True
                        break
                    pending[n_pending, 0] = start
                    pending[n_pending, 1] = p
                    pending[n_pending, 2] = nnz
                    n_pending += 1
            data[nnz] = value
            indices[nnz] = index
            nnz += 1
        if ok and not full:
            # Every array written below is checked: the kernel never writes past one.
            full = rows >= labels.shape[0] or rows >= row_lines.shape[0]
            full = full or rows + 1 >= indptr.shape[0]
        if full:
            nnz, n_pending = nnz0, pending0
            status = FULL
            break
        q = _line_end(buf, p, end)
        if q == end and not final:
            nnz, n_pending = nnz0, pending0
            break  # an incomplete last line: wait for more bytes
        next_pos = min(q + 1, end)
        if not ok:
            nnz, n_pending = nnz0, pending0
            if n_bad >= bad.shape[0]:
                status = FULL
                break
            bad[n_bad] = lineno
            n_bad += 1
            pos, line, consumed = next_pos, lineno, consumed + 1
            if stop_at_bad:
                status = STOPPED
                break
            continue
        labels[rows] = label
        row_lines[rows] = lineno
        rows += 1
        indptr[rows] = nnz
        pos, line, consumed = next_pos, lineno, consumed + 1
    state[POS] = pos
    state[LINE] = line
    state[ROWS] = rows
    state[NNZ] = nnz
    state[PENDING] = n_pending
    state[BAD] = n_bad
    return status


# scan_svmlight's state[...] slots (POS, LINE and ROWS as above).
MAX_INDEX = 3  # the largest index of the rows read (-1: none yet)
ZERO_INDEX = 4  # 1 once some row has index 0
SCAN_STATE_SIZE = 5

# scan_svmlight's return codes besides DONE and FULL (``labels`` full: empty it, call again).
GIVE_UP = 3  # a line it does not read (state at that line's start): scan it exactly


@cached_njit(nogil=True)
def scan_svmlight(buf, end, final, labels, state):
    """The labels, largest index and whether index 0 occurs, of the complete lines of
    ``buf[state[POS]:end]``, for a pass before training that needs no more.

    A line is read only in its plain shape: a label that :func:`fast_float` reads
    (not ``-0``), then tokens of 1 to 9 ASCII digits, ``:`` and a value. The value is
    skipped, not checked, and so is the order of the indices: a line that
    :func:`parse_svmlight` would refuse for either is counted here, and the pass that
    trains meets it and refuses it. Any other shape (a ``:`` in the first token, a
    ``qid``, a signed or longer index, a label off the fast path) stops the scan at
    that line with ``GIVE_UP``.

    Parameters
    ----------
    buf : ndarray of uint8
        The bytes.
    end : int
        Bytes of ``buf`` that hold data.
    final : bool
        ``buf[:end]`` ends the input: a last line without ``\\n`` is complete.
    labels : ndarray of float64
        Gets the label of each row, from ``state[ROWS]`` on.
    state : ndarray of int64
        ``POS``, ``LINE``, ``ROWS``, ``MAX_INDEX``, ``ZERO_INDEX``, updated in place.

    Returns
    -------
    int
        ``DONE`` (no complete line left), ``FULL`` or ``GIVE_UP``.
    """
    pos = state[POS]
    line = state[LINE]
    rows = state[ROWS]
    max_index = state[MAX_INDEX]
    zero = state[ZERO_INDEX]
    status = DONE
    while pos < end:
        p = pos
        while p < end and _CLASS[buf[p]] == _C_SPACE:
            p += 1
        if p == end or _CLASS[buf[p]] >= _C_NEWLINE:  # blank or comment only
            q = _line_end(buf, p, end)
            if q == end and not final:
                break  # an incomplete last line: wait for more bytes
            pos, line = min(q + 1, end), line + 1
            continue
        if rows >= labels.shape[0]:
            status = FULL
            break
        start = p
        while p < end and _CLASS[buf[p]] == _C_OTHER:
            p += 1
        plain = p == end or buf[p] != _COLON
        label = 0.0
        if plain:
            plain, label = fast_float(buf, start, p)
            # -0 and 0 are one class, which of them kept depends on the grouping.
            plain = plain and not (label == 0.0 and buf[start] == _MINUS)
        line_max = -1
        line_zero = 0
        while plain:
            while p < end and _CLASS[buf[p]] == _C_SPACE:
                p += 1
            if p >= end or _CLASS[buf[p]] >= _C_NEWLINE:
                break
            index = 0
            digits = 0
            while p < end and digits < 10 and 48 <= buf[p] <= 57:
                index = index * 10 + (buf[p] - 48)
                digits += 1
                p += 1
            if not (0 < digits < 10 and p < end and buf[p] == _COLON):
                plain = False
                break
            line_max = max(line_max, index)
            if index == 0:
                line_zero = 1
            p += 1
            while p < end and _CLASS[buf[p]] <= _C_COLON:  # the value, unread
                p += 1
        q = _line_end(buf, p, end)
        if q == end and not final:
            break  # an incomplete last line: wait for more bytes
        if not plain:
            status = GIVE_UP
            break
        labels[rows] = label
        rows += 1
        max_index = max(max_index, line_max)
        zero = max(zero, line_zero)
        pos, line = min(q + 1, end), line + 1
    state[POS] = pos
    state[LINE] = line
    state[ROWS] = rows
    state[MAX_INDEX] = max_index
    state[ZERO_INDEX] = zero
    return status
