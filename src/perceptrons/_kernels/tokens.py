"""ASCII documents to hashed term counts: the compiled path of
``TextFeaturizer(vocabulary="hashing")`` with the ``"regex"`` and ``"whitespace"``
tokenizers.

:func:`hash_documents` does for a batch of documents what scikit-learn's
``HashingVectorizer(alternate_sign=False, norm=None)`` does for them, bit for bit:

- ``lowercase``: ``str.lower()``, on ASCII the bytes ``A-Z`` to ``a-z``;
- the ``"regex"`` tokenizer, ``(?u)\\b\\w\\w+\\b``: on ASCII the maximal runs of
  ``[A-Za-z0-9_]`` of two bytes or more; the ``"whitespace"`` tokenizer, ``str.split()``:
  the maximal runs of bytes that are not Python whitespace (``ASCII_WHITESPACE`` of
  :mod:`perceptrons._kernels.hashing`: ``\\t \\n \\v \\f \\r \\x1c-\\x1f`` and the space;
  NUL is not whitespace);
- the word n-grams of every length from ``min_n`` to ``max_n``: the tokens joined by one
  space (none of a length beyond the document's token count);
- each term's column, ``|murmurhash3_32(term, seed=0)| % n_features``
  (:func:`~perceptrons._kernels.hashing.hashed_column`), its value the count of the term's
  column in the document (sums of 1.0, exact in any order), or 1.0 with ``binary``.

The caller sends only documents that are ASCII (Python's Unicode rules for ``\\w``,
``lower`` and whitespace differ beyond it) and gives the others to scikit-learn; the
kernel itself stops with ``NOT_ASCII`` at a byte >= 128 rather than guess.  Rows come out
canonical: columns increasing, no duplicates.

It writes only into arrays the caller allocated, checks every write against their
length, and allocates nothing per document: a document whose row does not fit in the
output stops the call with ``NO_ROOM`` (the rows before it are complete; the caller
grows the output and calls again from that document).
"""

import numpy as np

from perceptrons._kernels._cache import cached_njit
from perceptrons._kernels.hashing import ASCII_WHITESPACE, hashed_column, murmurhash3_32

# Return codes.
OK = 0
NO_ROOM = 1  # the output is full: grow it and call again from state[NEXT_DOC]
NOT_ASCII = 2  # a document holds a byte >= 128: state[NEXT_DOC] is that document
SCRATCH_TOO_SMALL = 3  # the scratch arrays are smaller than scratch_sizes() says

# state[...] slots.
NEXT_DOC = 0  # the first document not done
NNZ = 1  # values written
STATE_SIZE = 2

_SPACE = 32

# [A-Za-z0-9_]: what \w matches among ASCII bytes.
_WORD = np.zeros(128, dtype=np.bool_)
_WORD[ord("0") : ord("9") + 1] = True
_WORD[ord("A") : ord("Z") + 1] = True
_WORD[ord("a") : ord("z") + 1] = True
_WORD[ord("_")] = True


def scratch_sizes(longest: int, min_n: int, max_n: int) -> tuple[int, int, int]:
    """The lengths of the scratch arrays for documents of at most ``longest`` bytes:
    the joined tokens (bytes), the tokens (starts, ends) and the terms of one document."""
    tokens = longest // 2 + 1  # tokens are separated by at least one byte
    return longest + 1, tokens, (max_n - min_n + 1) * tokens


@cached_njit(nogil=True)
def hash_documents(
    buf,
    starts,
    ends,
    regex,
    lowercase,
    min_n,
    max_n,
    n_features,
    binary,
    joined,
    token_starts,
    token_ends,
    columns,
    indptr,
    indices,
    data,
    state,
):
    """The hashed term counts of documents ``state[NEXT_DOC]`` onwards.

    Parameters
    ----------
    buf : ndarray of uint8
        The documents' bytes.
    starts, ends : ndarray of int64
        Document ``d`` is ``buf[starts[d]:ends[d]]``.
    regex : bool
        The ``"regex"`` tokenizer, else ``"whitespace"``.
    lowercase : bool
        Lower-case ``A-Z``.
    min_n, max_n : int
        The n-gram lengths, ``1 <= min_n <= max_n``.
    n_features : int
        Hashed columns, ``>= 1``.
    binary : bool
        Every term present worth 1.0 instead of its count.
    joined, token_starts, token_ends, columns : ndarray
        Scratch (uint8, int64, int64, int64) of at least the lengths
        :func:`scratch_sizes` gives for the longest document.
    indptr : ndarray of int64
        Row offsets, one more than the documents; ``indptr[state[NEXT_DOC]]`` must be
        ``state[NNZ]``.  Written for each document done.
    indices, data : ndarray of int32, float64
        The columns and values of the rows, written from ``state[NNZ]``.
    state : ndarray of int64
        ``(NEXT_DOC, NNZ)``, read and written.

    Returns
    -------
    int
        ``OK``, ``NO_ROOM``, ``NOT_ASCII`` or ``SCRATCH_TOO_SMALL``.
    """
    n_docs = starts.shape[0]
    if state.shape[0] < STATE_SIZE or ends.shape[0] != n_docs or indptr.shape[0] != n_docs + 1:
        raise ValueError("hash_documents: state, ends or indptr of the wrong length")
    if n_features < 1 or min_n < 1 or max_n < min_n:
        raise ValueError("hash_documents: bad n_features or n-gram range")
    nnz = state[NNZ]
    doc = state[NEXT_DOC]
    if doc < 0 or nnz < 0 or nnz > indices.shape[0] or indices.shape[0] != data.shape[0]:
        raise ValueError("hash_documents: bad state or output lengths")
    while doc < n_docs:
        start, end = starts[doc], ends[doc]
        if start < 0 or end < start or end > buf.shape[0]:
            raise ValueError("hash_documents: a document outside the buffer")
        # The tokens, lowercased, written to `joined` one space apart: every n-gram is
        # then one run of it, hashed in place.
        n_tokens = 0
        used = 0
        p = start
        while p < end:
            c = buf[p]
            if c >= 128:
                state[NEXT_DOC] = doc
                state[NNZ] = nnz
                return NOT_ASCII
            inside = _WORD[c] if regex else not ASCII_WHITESPACE[c]
            if not inside:
                p += 1
                continue
            q = p
            while (
                q < end
                and buf[q] < 128
                and (_WORD[buf[q]] if regex else not ASCII_WHITESPACE[buf[q]])
            ):
                q += 1
            if q < end and buf[q] >= 128:
                state[NEXT_DOC] = doc
                state[NNZ] = nnz
                return NOT_ASCII
            if not regex or q - p >= 2:
                if (
                    n_tokens >= token_starts.shape[0]
                    or n_tokens >= token_ends.shape[0]
                    or used + (q - p) + 1 > joined.shape[0]
                ):
                    return SCRATCH_TOO_SMALL
                if n_tokens > 0:
                    joined[used] = _SPACE
                    used += 1
                token_starts[n_tokens] = used
                for r in range(p, q):
                    b = buf[r]
                    if lowercase and 65 <= b <= 90:
                        b += 32
                    joined[used] = b
                    used += 1
                token_ends[n_tokens] = used
                n_tokens += 1
            p = q
        # The columns of every term.
        n_terms = 0
        for n in range(min_n, max_n + 1):
            if n > n_tokens:
                break
            for i in range(n_tokens - n + 1):
                if n_terms >= columns.shape[0]:
                    return SCRATCH_TOO_SMALL
                h = murmurhash3_32(joined, token_starts[i], token_ends[i + n - 1], 0)
                columns[n_terms] = hashed_column(h, n_features)
                n_terms += 1
        terms = columns[:n_terms]
        terms.sort()
        # Count the runs of equal columns: the row's length first, to check the room.
        distinct = 0
        for i in range(n_terms):
            if i == 0 or terms[i] != terms[i - 1]:
                distinct += 1
        if nnz + distinct > indices.shape[0]:
            state[NEXT_DOC] = doc
            state[NNZ] = nnz
            return NO_ROOM
        i = 0
        while i < n_terms:
            j = i + 1
            while j < n_terms and terms[j] == terms[i]:
                j += 1
            indices[nnz] = terms[i]
            data[nnz] = 1.0 if binary else float(j - i)
            nnz += 1
            i = j
        indptr[doc + 1] = nnz
        doc += 1
    state[NEXT_DOC] = doc
    state[NNZ] = nnz
    return OK
