"""The structured perceptron for sequence labelling (Collins 2002), and 1-best MIRA.

A sentence of ``n`` tokens is labelled with tags ``y_0 .. y_{n-1}`` in ``0 .. K - 1``;
token ``t`` has a list of observation feature columns in ``0 .. F - 1`` (a column may
repeat, which counts it twice). One weight matrix ``W`` of shape ``(F + K + 1, K)``
holds every weight:

* row ``f < F``: the weight of observation feature ``f`` for each tag;
* row ``F + p``: the transition from the previous tag ``p`` to each tag;
* row ``F + K``: the transition from the start of the sentence to each tag.

The score of a tag sequence is summed in one fixed floating-point order, the order in
which first-order Viterbi adds along a path, so that the brute-force decoder here and a
compiled Viterbi give bit-identical scores on the same weights::

    e(t, j) = 0.0 + W[f_1, j] + W[f_2, j] + ...    (token t's columns, in stored order)
    s = W[F + K, y_0] + e(0, y_0)
    s = (s + W[F + y_{t-1}, y_t]) + e(t, y_t)      for t = 1 .. n - 1

There is no transition to an end state. Among tag sequences of equal best score, the
one chosen is the smallest in reverse-lexicographic order (the last tag compared first,
the lowest code wins): what Viterbi gives when its backpointers and its final argmax
take the lowest index on ties. Rounding can make two sequences tie on the score although
at an earlier token one was ahead by a rounding error (the later additions rounded it
away); Viterbi then keeps that one, and so does
:func:`~perceptrons.reference.sequence.brute_force_decode`, which
compares the same partial sums as Viterbi's backpointers, so that the two agree to the
last bit on any weights.

Training (Collins 2002) visits one sentence at a time; when the decoded ``ŷ`` differs
from the gold ``y`` the weights move by ``Δ = φ(y) - φ(ŷ)``, where ``φ`` counts one for
``(f, y_t)`` for every feature ``f`` of token ``t`` and one for ``(F + prev, y_t)``, with
``prev = K`` (the start) for ``t = 0`` and ``y_{t-1}`` after. The perceptron adds ``Δ``;
1-best MIRA (Crammer & Singer 2003; McDonald, Crammer & Pereira 2005) adds ``τ Δ``
with ``τ = min(C, (loss - margin) / ||Δ||²)``, ``loss`` the number of wrong tags and
``margin = s(y) - s(ŷ)``: the smallest step after which the gold sequence outscores
``ŷ`` by ``loss``, but never more than ``C``.

Everything is plain Python over nested lists, one loop per line of the algorithm, and
slow on purpose: decoding enumerates all ``K**n`` tag sequences.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

from perceptrons.reference._common import (
    _as_orders,
    _n_examples,
    _require_examples,
    epoch_orders,  # noqa: F401  (the doctests build their orders with it)
)

__all__ = ["brute_force_decode", "sequence_score", "structured_perceptron"]

# The largest number of tag sequences brute_force_decode enumerates.
MAX_SEQUENCES = 10**5

# One sentence: a list of tokens, each a list of feature columns.
Sentence = Sequence[Sequence[int]]


def _check_sizes(n_features: int, n_tags: int) -> None:
    if n_features < 0 or n_tags < 1:
        raise ValueError(f"need n_features >= 0 and n_tags >= 1, got {n_features}, {n_tags}")


def _check_weights(W: np.ndarray, n_features: int, n_tags: int) -> np.ndarray:
    _check_sizes(n_features, n_tags)
    W = np.asarray(W, dtype=np.float64)
    shape = (n_features + n_tags + 1, n_tags)
    if W.shape != shape:
        raise ValueError(f"W must have shape {shape} (F + K + 1, K), got {W.shape}")
    return W


def _check_sentence(token_features: Sentence, n_features: int) -> list[list[int]]:
    sentence = [[int(f) for f in token] for token in token_features]
    for token in sentence:
        for f in token:
            if not 0 <= f < n_features:
                raise ValueError(f"feature column {f} is not in [0, {n_features})")
    return sentence


def _check_tags(tags: Sequence[int], n_tokens: int, n_tags: int) -> list[int]:
    codes = [int(tag) for tag in tags]
    if len(codes) != n_tokens:
        raise ValueError(f"{len(codes)} tags for a sentence of {n_tokens} tokens")
    for tag in codes:
        if not 0 <= tag < n_tags:
            raise ValueError(f"tag code {tag} is not in [0, {n_tags})")
    return codes


def _partial_scores(
    sentence: list[list[int]], tags: Sequence[int], W: np.ndarray, F: int, K: int
) -> tuple[list[float], list[float]]:
    """``S[t]``: the score of ``tags[:t + 1]``; ``P[t]`` (``t >= 1``): ``S[t - 1]`` plus
    the transition into ``tags[t]``, before token ``t``'s emission is added."""
    S: list[float] = []
    P: list[float] = [0.0]  # P[0] is unused: the start transition is not compared
    for t, tag in enumerate(tags):
        emission = 0.0
        for f in sentence[t]:
            emission = emission + float(W[f, tag])
        if t == 0:
            S.append(float(W[F + K, tag]) + emission)
        else:
            P.append(S[t - 1] + float(W[F + tags[t - 1], tag]))
            S.append(P[t] + emission)
    return S, P


def _score(sentence: list[list[int]], tags: Sequence[int], W: np.ndarray, F: int, K: int) -> float:
    S, _ = _partial_scores(sentence, tags, W, F, K)
    return S[-1] if S else 0.0


def _decoding_key(
    sentence: list[list[int]], tags: Sequence[int], W: np.ndarray, F: int, K: int
) -> tuple[float, ...]:
    """What Viterbi compares, from the last token back: the score, then the lower last
    tag, then the larger ``P[n - 1]``, the lower tag before, the larger ``P[n - 2]``...

    In exact arithmetic the sequences that tie on the score also tie on every ``P``, so
    the largest key is the best sequence smallest in reverse-lexicographic order. Under
    rounding, two sequences can tie on the score while one's ``P[t]`` is a few ulps larger
    (adding token ``t``'s emission rounded the difference away): Viterbi's backpointer
    into token ``t``, which compares exactly these ``P[t]``, keeps that one, and so does
    the key.
    """
    S, P = _partial_scores(sentence, tags, W, F, K)
    n = len(tags)
    if n == 0:
        return ()
    key = [S[n - 1], -float(tags[n - 1])]
    for t in range(n - 1, 0, -1):
        key += [P[t], -float(tags[t - 1])]
    return tuple(key)


def _decode(sentence: list[list[int]], W: np.ndarray, F: int, K: int) -> list[int]:
    n = len(sentence)
    if K**n > MAX_SEQUENCES:
        raise ValueError(
            f"brute-force decoding of {n} tokens with {K} tags enumerates {K}**{n} sequences; "
            f"at most {MAX_SEQUENCES} are allowed"
        )
    best: tuple[int, ...] = ()
    best_key: tuple[float, ...] = ()
    for tags in itertools.product(range(K), repeat=n):
        key = _decoding_key(sentence, tags, W, F, K)
        if not best or key > best_key:
            best, best_key = tags, key
    return list(best)


def _features(sentence: list[list[int]], tags: Sequence[int], F: int, K: int) -> dict:
    """φ(y) as counts per (row, column) of W."""
    phi: dict[tuple[int, int], int] = {}
    for t, tag in enumerate(tags):
        for f in sentence[t]:
            phi[f, tag] = phi.get((f, tag), 0) + 1
        prev = K if t == 0 else tags[t - 1]
        phi[F + prev, tag] = phi.get((F + prev, tag), 0) + 1
    return phi


def sequence_score(
    token_features: Sentence,
    tags: Sequence[int],
    W: np.ndarray,
    n_features: int,
    n_tags: int,
) -> float:
    """The score of one tag sequence for one sentence, in Viterbi's summation order.

    Parameters
    ----------
    token_features : sequence of sequences of int
        One list of feature columns (in ``0 .. n_features - 1``) per token.
    tags : sequence of int
        One tag code (in ``0 .. n_tags - 1``) per token.
    W : ndarray of shape (n_features + n_tags + 1, n_tags)
        Observation weights, then transitions from each previous tag, then from the start.
    n_features : int
        Number of observation feature columns ``F``.
    n_tags : int
        Number of tags ``K``.

    Returns
    -------
    score : float
        ``W[F + K, y_0] + e(0, y_0)``, then ``(s + W[F + y_{t-1}, y_t]) + e(t, y_t)``
        for every later token, with ``e(t, j) = 0.0 + Σ_f W[f, j]`` over token ``t``'s
        columns in stored order; 0.0 for an empty sentence.

    Examples
    --------
    >>> W = np.arange(10.0).reshape(5, 2)  # F = 2 features, K = 2 tags
    >>> # W[4, 1] + W[0, 1] = 9 + 1, then + W[3, 0] + W[1, 0] + W[1, 0] = 6 + 2 + 2
    >>> sequence_score([[0], [1, 1]], [1, 0], W, 2, 2)
    20.0
    """
    W = _check_weights(W, n_features, n_tags)
    sentence = _check_sentence(token_features, n_features)
    codes = _check_tags(tags, len(sentence), n_tags)
    return _score(sentence, codes, W, n_features, n_tags)


def brute_force_decode(
    token_features: Sentence, W: np.ndarray, n_features: int, n_tags: int
) -> list[int]:
    """The best tag sequence of one sentence, found by trying every sequence.

    Parameters
    ----------
    token_features : sequence of sequences of int
        One list of feature columns (in ``0 .. n_features - 1``) per token.
    W : ndarray of shape (n_features + n_tags + 1, n_tags)
        The weights, laid out as in :func:`~perceptrons.reference.sequence.sequence_score`.
    n_features : int
        Number of observation feature columns ``F``.
    n_tags : int
        Number of tags ``K``.

    Returns
    -------
    tags : list of int
        The sequence of highest :func:`~perceptrons.reference.sequence.sequence_score`; among equal
        scores, the
        smallest when compared from the last tag backwards (the last tag first, the
        lowest code wins), which is what Viterbi with lowest-index ties returns. When
        rounding alone makes two scores equal, the sequence whose prefix scored
        higher, as Viterbi's backpointers choose (see the module).

    Raises
    ------
    ValueError
        If ``n_tags ** len(token_features)`` exceeds ``MAX_SEQUENCES`` (100,000), or
        the weights, columns or sizes do not fit together.

    Examples
    --------
    >>> W = np.zeros((4, 2))  # F = 1 feature, K = 2 tags
    >>> brute_force_decode([[0], [0]], W, 1, 2)  # all scores tie: all zeros
    [0, 0]
    >>> W[0, 1] = 1.0  # feature 0 favours tag 1
    >>> W[2, 0] = 5.0  # ... but after tag 1 comes tag 0
    >>> brute_force_decode([[0], [0]], W, 1, 2)  # scores 0, 1, 6, 2 for 00, 01, 10, 11
    [1, 0]
    """
    W = _check_weights(W, n_features, n_tags)
    sentence = _check_sentence(token_features, n_features)
    return _decode(sentence, W, n_features, n_tags)


@overload
def structured_perceptron(
    token_features: Sequence[Sentence],
    tags: Sequence[Sequence[int]],
    n_features: int,
    n_tags: int,
    orders: Sequence[np.ndarray],
    *,
    average: bool = ...,
    update: str = ...,
    C: float = ...,
    return_mistakes: Literal[False] = ...,
) -> np.ndarray: ...


@overload
def structured_perceptron(
    token_features: Sequence[Sentence],
    tags: Sequence[Sequence[int]],
    n_features: int,
    n_tags: int,
    orders: Sequence[np.ndarray],
    *,
    average: bool = ...,
    update: str = ...,
    C: float = ...,
    return_mistakes: Literal[True],
) -> tuple[np.ndarray, list[int]]: ...


def structured_perceptron(
    token_features: Sequence[Sentence],
    tags: Sequence[Sequence[int]],
    n_features: int,
    n_tags: int,
    orders: Sequence[np.ndarray],
    *,
    average: bool = True,
    update: str = "perceptron",
    C: float = 1.0,
    return_mistakes: bool = False,
) -> np.ndarray | tuple[np.ndarray, list[int]]:
    """Train the structured perceptron (Collins 2002) or 1-best MIRA on tagged sentences.

    For each sentence ``i`` in the run's order: ``ŷ <- brute_force_decode(x_i, W)``;
    if ``ŷ != y_i``, ``Δ <- φ(y_i) - φ(ŷ)`` (summed per entry of ``W``) and

    * ``update="perceptron"``: ``W <- W + Δ``;
    * ``update="mira"``: ``loss <- #{t : ŷ_t != y_t}``, ``margin <- s(y_i) - s(ŷ)``
      (under the current ``W``), ``q <- ||Δ||²``; if ``q > 0``:
      ``τ <- min(C, (loss - margin) / q)`` and ``W <- W + τ Δ``.

    With ``average=True``, ``W_sum <- W_sum + W`` after EVERY sentence (updated or not,
    all epochs), and the result is ``W_sum / N``.

    Parameters
    ----------
    token_features : sequence of sentences
        Sentence ``i`` is a list of tokens, each a list of feature columns in
        ``0 .. n_features - 1``.
    tags : sequence of sequences of int
        The gold tag codes of every sentence, one per token, in ``0 .. n_tags - 1``.
    n_features : int
        Number of observation feature columns ``F``.
    n_tags : int
        Number of tags ``K``.
    orders : sequence of 1-D int arrays
        One visiting order per epoch, see :func:`~perceptrons.reference.epoch_orders`;
        ``N = sum(len(o) for o in orders)``.
    average : bool, default=True
        Return the mean of the weights after every sentence instead of the last ones.
    update : {"perceptron", "mira"}, default="perceptron"
        The step taken on a wrong sequence.
    C : float, default=1.0
        MIRA's largest step ``τ``; unused by the perceptron.
    return_mistakes : bool, default=False
        Also return the number of wrongly tagged sentences of every epoch.

    Returns
    -------
    W : ndarray of shape (n_features + n_tags + 1, n_tags)
        The predicting weights, laid out as in
        :func:`~perceptrons.reference.sequence.sequence_score`: the last ones,
        or with ``average=True`` the exact mean ``(W_1 + ... + W_N) / N``.
    mistakes : list of int
        With ``return_mistakes``: the number of sentences whose decoded tags were wrong
        (= updates, or steps for MIRA) in each epoch.

    Notes
    -----
    The naive running sum is kept on purpose: it is the definition that the compiled
    tagger's auxiliary-array average (``W - aux / N``) is tested against.

    Examples
    --------
    >>> X = [[[0], [1]], [[1], [0]]]  # two sentences of two tokens, F = 2 features
    >>> y = [[0, 1], [1, 0]]  # feature 0 means tag 0, feature 1 tag 1
    >>> W = structured_perceptron(X, y, 2, 2, epoch_orders(2, 2), average=False)
    >>> [brute_force_decode(x, W, 2, 2) for x in X]
    [[0, 1], [1, 0]]
    >>> W[:2].tolist()  # the observation weights: feature 1 alone tells the tags apart
    [[0.0, 0.0], [-1.0, 1.0]]
    >>> structured_perceptron(X, y, 2, 2, epoch_orders(2, 2), return_mistakes=True)[1]
    [1, 0]
    """
    if update not in ("perceptron", "mira"):
        raise ValueError(f"update must be 'perceptron' or 'mira', got {update!r}")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0, got {C}")
    if len(token_features) != len(tags):
        raise ValueError(f"{len(token_features)} sentences but {len(tags)} tag sequences")
    F, K = n_features, n_tags
    _check_sizes(F, K)
    W = np.zeros((F + K + 1, K))
    sentences = [_check_sentence(sentence, F) for sentence in token_features]
    gold = [_check_tags(y, len(x), K) for x, y in zip(sentences, tags, strict=True)]
    orders = _as_orders(orders)
    n_total = _n_examples(orders)
    if average:
        _require_examples(n_total)
    W_sum = np.zeros_like(W)
    mistakes = []
    for order in orders:
        n_mistakes = 0
        for i in order:
            x, y = sentences[i], gold[i]
            y_hat = _decode(x, W, F, K)
            if y_hat != y:
                n_mistakes += 1
                phi_gold, phi_hat = _features(x, y, F, K), _features(x, y_hat, F, K)
                delta = {
                    key: phi_gold.get(key, 0) - phi_hat.get(key, 0)
                    for key in phi_gold.keys() | phi_hat.keys()
                }
                if update == "perceptron":
                    for (row, col), d in delta.items():
                        W[row, col] = W[row, col] + d
                else:
                    loss = sum(1 for a, b in zip(y_hat, y, strict=True) if a != b)
                    margin = _score(x, y, W, F, K) - _score(x, y_hat, W, F, K)
                    q = sum(d * d for d in delta.values())
                    if q > 0:
                        tau = min(C, (loss - margin) / q)
                        for (row, col), d in delta.items():
                            W[row, col] = W[row, col] + tau * d
            # after EVERY sentence, updated or not
            W_sum = W_sum + W
        mistakes.append(n_mistakes)
    result = W_sum / n_total if average else W
    return (result, mistakes) if return_mistakes else result
